/**
 * The proxy's backends and what it serves of them (docs/architecture.md, "proxy"): the state
 * record the proxy's functions share (`State`), a backend's `Link`, listing a backend, serving a
 * listing, marking a backend down, and the optional `ping` that notices a dead backend (MCP
 * 2025-11-25, Basic › Utilities › Ping).
 *
 * State: per backend its status and the items it serves (by id), in one `Ref`; every change of
 * the proxy's definitions happens under one lock, so collision checks see a consistent picture.
 * Listing a backend happens outside the lock.
 * @internal
 */
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Ref from "effect/Ref"
import type * as McpClient from "../../McpClient.js"
import type { Policy } from "../../McpProxy.js"
import * as McpSchema from "../../McpSchema.js"
import * as McpServer from "../../McpServer.js"
import { type Aliases, syncAliases } from "./apps.js"
import {
  claimId,
  type Definition,
  type Group,
  GROUP_KINDS,
  isFatal,
  type Item,
  type Link,
  listPrompts,
  listResources,
  listTools
} from "./definitions.js"
import * as ProxyHealth from "./health.js"
import type * as ProxyInput from "./input.js"
import type { Limits } from "./listing.js"
import * as Names from "./names.js"
import { listSkills } from "./skills.js"
import type { Interest } from "./updates.js"
import { mapping } from "./uris.js"

/** The backend and tool-policy shapes are the public ones (documented on `McpProxy`). */
export type { Backend, Policy, ToolPolicy } from "../../McpProxy.js"

/**
 * One backend's status and the items the proxy serves for it (by item id; none while down).
 * `generation` counts its connections (a link of an older one is down); `retrying`: down but
 * being reconnected, `gone` then holds the identities (claim ids) it held before it went down.
 */
export interface BackendState {
  readonly status: "up" | "down"
  readonly served: ReadonlyMap<string, Item>
  readonly generation: number
  readonly retrying: boolean
  readonly gone: ReadonlySet<string>
}

/** What the proxy's functions share. */
export interface State {
  /** The proxy's server: its definitions mirror the backends' items. */
  readonly server: McpServer.McpServer
  /** Per backend (by prefix) its `BackendState`. */
  readonly backends: Ref.Ref<ReadonlyMap<string, BackendState>>
  /** Held by every change of `server`'s definitions and `backends`' items (one permit). */
  readonly lock: Effect.Semaphore
  /** The callers' resource subscriptions (URI → count). */
  readonly interest: Interest
  /** The bounds on each backend's lists. */
  readonly limits: Limits
  /** The backends' health view. */
  readonly health: ProxyHealth.Health
  /** The MCP Apps aliases served (apps.ts). */
  readonly aliases: Aliases
}

/** The three groups, in the order a full listing takes them. */
export const ALL_GROUPS: ReadonlyArray<Group> = ["tools", "prompts", "resources"]

/**
 * The backends' states: those `up` are up (generation 0), the rest down; `retrying` for those the
 * proxy reconnects; nothing served yet.
 */
export const makeBackends = (
  prefixes: ReadonlyArray<{ readonly prefix: string; readonly up: boolean; readonly retrying: boolean }>
): Effect.Effect<Ref.Ref<ReadonlyMap<string, BackendState>>> =>
  Ref.make<ReadonlyMap<string, BackendState>>(
    new Map(prefixes.map((b) => [b.prefix, {
      status: b.up ? "up" : "down",
      served: new Map(),
      generation: 0,
      retrying: b.retrying,
      gone: new Set()
    }]))
  )

/** The shared state over `backends`. */
export const makeState = (
  server: McpServer.McpServer,
  backends: Ref.Ref<ReadonlyMap<string, BackendState>>,
  interest: Interest,
  limits: Limits,
  health: ProxyHealth.Health,
  aliases: Aliases
): Effect.Effect<State> =>
  Effect.map(Effect.makeSemaphore(1), (lock) => ({ server, backends, lock, interest, limits, health, aliases }))

/** What a link is made of besides the state. */
export interface LinkOptions {
  readonly prefix: string
  readonly client: McpClient.McpClient
  /** The connection this link belongs to (see `BackendState.generation`). */
  readonly generation: number
  /** Is the backend reconnected after it goes down (its ids are then kept in `gone`)? */
  readonly retrying: boolean
  /** Its tool policy, filters and URI mapping (`McpProxy.Policy`). */
  readonly tools: Policy
  /** The proxied calls in flight to this backend (shared by all its connections). */
  readonly callers: Ref.Ref<ReadonlyArray<ProxyInput.Caller>>
}

/**
 * A backend connection as the definitions see it: `isDown` and `down` read and change its status
 * in `state`; `lost` is completed (with the reason) when this connection is marked down.
 */
export const makeLink = (state: State, options: LinkOptions): Effect.Effect<Link> =>
  Effect.map(Deferred.make<string>(), (lost) => ({
    prefix: options.prefix,
    client: options.client,
    generation: options.generation,
    tools: options.tools,
    filters: options.tools,
    uris: mapping(options.prefix, options.prefix !== "" && options.tools.prefixUris !== false),
    callers: options.callers,
    lost,
    isDown: Effect.map(Ref.get(state.backends), (m) => {
      const s = m.get(options.prefix)
      return s === undefined || s.status === "down" || s.generation !== options.generation
    }),
    down: markDown(state, options.prefix, options.generation, options.retrying, lost)
  }))

const addDefinition = (server: McpServer.McpServer, d: Definition) => {
  switch (d._tag) {
    case "tool":
      return McpServer.addTool(server, d.def)
    case "prompt":
      return McpServer.addPrompt(server, d.def)
    case "resource":
      return McpServer.addResource(server, d.def)
    case "resourceTemplate":
      return McpServer.addResourceTemplate(server, d.def)
    case "skill":
      return McpServer.addSkill(server, d.def)
  }
}

const removeDefinition = (server: McpServer.McpServer, d: Definition) => {
  switch (d._tag) {
    case "tool":
      return McpServer.removeTool(server, d.def.name)
    case "prompt":
      return McpServer.removePrompt(server, d.def.name)
    case "resource":
      return McpServer.removeResource(server, d.def.uri)
    case "resourceTemplate":
      return McpServer.removeResourceTemplate(server, d.def.uriTemplate)
    case "skill":
      return McpServer.removeSkill(server, d.def.uri)
  }
}

/**
 * Marks the connection `generation` of the backend down (under the lock), removes its entries and
 * completes `lost`; an older connection's failure changes nothing. Without `retrying` it stays
 * down; with it, the ids it served are kept in `gone` until it is back.
 */
const markDown =
  (state: State, prefix: string, generation: number, retrying: boolean, lost: Deferred.Deferred<string>) =>
  (reason: string): Effect.Effect<void> =>
    state.lock.withPermits(1)(Effect.gen(function*() {
      const current = (yield* Ref.get(state.backends)).get(prefix)
      if (current === undefined || current.status === "down" || current.generation !== generation) return
      yield* Ref.update(state.backends, (m) =>
        new Map(m).set(prefix, {
          status: "down",
          served: new Map(),
          generation,
          retrying,
          // every identity it held (a skill's files too), kept for it while it reconnects
          gone: retrying ? new Set([...current.served.values()].flatMap((it) => it.claims.map(claimId))) : new Set()
        }))
      yield* Deferred.succeed(lost, reason)
      yield* ProxyHealth.enter(state.health, prefix, retrying ? "reconnecting" : "givenUp", reason)
      for (const it of current.served.values()) {
        yield* removeDefinition(state.server, it.definition).pipe(
          Effect.catchAll((e) => Effect.logWarning(`proxy: could not remove ${it.id}: ${e.message}`))
        )
      }
      yield* syncAliases(state)
      yield* Effect.logWarning(
        `${Names.logged(prefix)} is down (${reason}); its ${current.served.size} entries were removed${
          retrying ? "; reconnecting" : ""
        }`
      )
    }))

/**
 * Makes a new connection of the backend current (under the lock): up, generation `generation`,
 * serving nothing yet (`gone` is kept until its first listing is served).
 */
export const markUp = (state: State, prefix: string, generation: number): Effect.Effect<void> =>
  state.lock.withPermits(1)(Ref.update(state.backends, (m) => {
    const current = m.get(prefix)
    return new Map(m).set(prefix, {
      status: "up",
      served: new Map(),
      generation,
      retrying: current?.retrying ?? false,
      gone: current?.gone ?? new Set()
    })
  }))

/** The backend is down for good (its reconnection gave up): nothing is remembered of it. */
export const giveUp = (state: State, prefix: string): Effect.Effect<void> =>
  state.lock.withPermits(1)(Ref.update(state.backends, (m) => {
    const current = m.get(prefix)
    return current === undefined ? m : new Map(m).set(prefix, { ...current, retrying: false, gone: new Set() })
  })).pipe(Effect.zipRight(ProxyHealth.enter(state.health, prefix, "givenUp")))

/**
 * The backend that served `id` (`"<kind> <key>"`) before it went down and is being reconnected,
 * if any: a call naming it gets "unavailable" rather than "unknown".
 */
export const goneOwner = (
  backends: Ref.Ref<ReadonlyMap<string, BackendState>>,
  id: string
): Effect.Effect<string | undefined> =>
  Effect.map(Ref.get(backends), (m) => {
    for (const [prefix, s] of m) if (s.retrying && s.gone.has(id)) return prefix
    return undefined
  })

/** The backend's items of `groups`, each list within `state.limits` (outside the lock). */
export const list = (state: State, link: Link, groups: ReadonlyArray<Group>) =>
  Effect.gen(function*() {
    const current = (yield* Ref.get(state.backends)).get(link.prefix)?.served ?? new Map<string, Item>()
    const out: Array<Item> = []
    if (groups.includes("tools")) out.push(...(yield* listTools(link, state.limits)))
    if (groups.includes("prompts")) out.push(...(yield* listPrompts(link, state.limits)))
    if (groups.includes("resources")) {
      const skills = yield* listSkills(link, state.limits, current)
      out.push(...(yield* listResources(link, state.limits, skills.covers)), ...skills.items)
    }
    return out
  })

/**
 * The backend whose namespace the prefixed name `name` is in: the longest of `prefixes` that
 * `name` starts with followed by `_` (`a_b_c` is in `a_b`'s namespace when both `a` and `a_b`
 * are backends; every name is in the namespace of the empty prefix, a proxy's only backend).
 */
export const namespaceOf = (prefixes: Iterable<string>, name: string): string | undefined => {
  let owner: string | undefined
  for (const p of prefixes) {
    if (Names.inNamespace(p, name) && (owner === undefined || p.length > owner.length)) owner = p
  }
  return owner
}

/**
 * The identities other backends hold (claim id → prefix): what they serve, and what a backend
 * being reconnected served before it went down (kept for it until its next listing is served).
 */
const takenByOthers = (all: ReadonlyMap<string, BackendState>, prefix: string): ReadonlyMap<string, string> => {
  const taken = new Map<string, string>()
  for (const [other, s] of all) {
    if (other === prefix) continue
    for (const it of s.served.values()) for (const c of it.claims) taken.set(claimId(c), other)
    for (const id of s.gone) taken.set(id, other)
  }
  return taken
}

/**
 * Why `it` may not be served for backend `prefix`, if so (the collision rule, which no timing
 * changes): a tool or prompt whose prefixed name is in another backend's namespace (see
 * {@link namespaceOf}: backend `a`'s tool `b_c` would be `a_b_c`, a name of backend `a_b`); an
 * identity another backend holds (first served keeps it).
 */
const clashOf = (
  all: ReadonlyMap<string, BackendState>,
  taken: ReadonlyMap<string, string>,
  prefix: string,
  it: Item
): string | undefined => {
  if (it.kind === "tool" || it.kind === "prompt") {
    const owner = namespaceOf(all.keys(), it.key)
    if (owner !== undefined && owner !== prefix) return `its name is in the namespace of backend ${owner} (${owner}_*)`
  }
  const clash = it.claims.map(claimId).find((id) => taken.has(id))
  return clash === undefined ? undefined : `${clash} is already served by backend ${taken.get(clash)}`
}

/**
 * Makes the proxy serve `items` for the backend's `groups` (under the lock): removes what is
 * gone or changed, adds what is new or changed; an item {@link clashOf} refuses is left out and
 * logged, and the other backends' entries are untouched.
 */
export const apply = (state: State, link: Link, groups: ReadonlyArray<Group>, items: ReadonlyArray<Item>) =>
  state.lock.withPermits(1)(Effect.gen(function*() {
    const all = yield* Ref.get(state.backends)
    const mine = all.get(link.prefix)
    if (mine === undefined || mine.status === "down" || mine.generation !== link.generation) return
    const kinds = new Set(groups.flatMap((g) => GROUP_KINDS[g]))
    const taken = takenByOthers(all, link.prefix)
    const next = new Map<string, Item>()
    for (const it of items) {
      if (next.has(it.id)) {
        yield* Effect.logWarning(`${Names.logged(link.prefix)}: ${it.id} is listed twice; the first is served`)
        continue
      }
      const clash = clashOf(all, taken, link.prefix, it)
      if (clash !== undefined) {
        yield* Effect.logWarning(`${Names.logged(link.prefix)}: ${it.id} left out: ${clash}`)
        continue
      }
      next.set(it.id, it)
    }
    const kept = new Map([...mine.served].filter(([, it]) => !kinds.has(it.kind)))
    for (const current of mine.served.values()) {
      if (!kinds.has(current.kind)) continue
      if (next.get(current.id)?.fingerprint === current.fingerprint) continue
      yield* removeDefinition(state.server, current.definition).pipe(
        Effect.catchAll((e) =>
          Effect.logWarning(`${Names.logged(link.prefix)}: could not remove ${current.id}: ${e.message}`)
        )
      )
    }
    for (const it of next.values()) {
      const current = mine.served.get(it.id)
      if (current !== undefined && kinds.has(current.kind) && current.fingerprint === it.fingerprint) {
        kept.set(it.id, current)
        continue
      }
      const added = yield* Effect.either(addDefinition(state.server, it.definition))
      if (Either.isRight(added)) kept.set(it.id, it)
      else yield* Effect.logWarning(`${Names.logged(link.prefix)}: ${it.id} left out: ${added.left.message}`)
    }
    yield* Ref.update(
      state.backends,
      (m) => new Map(m).set(link.prefix, { ...mine, status: "up", served: kept, gone: new Set() })
    )
    yield* syncAliases(state)
  }))

/** Pings a backend every `interval`; no answer (transport failure, timeout) marks it down. */
export const health = (link: Link, interval: Duration.DurationInput) =>
  Effect.gen(function*() {
    for (;;) {
      yield* Effect.sleep(interval)
      if (yield* link.isDown) return
      const pinged = yield* Effect.either(link.client.request(McpSchema.Method.ping))
      if (Either.isRight(pinged) || pinged.left._tag === "McpError") continue // any answer is alive
      const e = pinged.left
      if (e._tag === "ClientError" && e.reason !== "Timeout") continue
      if (e._tag === "TransportError" && !isFatal(e)) {
        yield* Effect.logWarning(`${Names.logged(link.prefix)}: ping failed: ${e.message}`)
        continue
      }
      return yield* link.down(`no answer to ping: ${e.message}`)
    }
  })
