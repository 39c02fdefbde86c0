/**
 * The proxy: one `McpServer` whose definitions mirror several backends (documented on
 * `McpProxy.make`).
 *
 * State: per backend its status and the items it serves (by id), in one `Ref`; every change of
 * the proxy's definitions happens under one lock, so collision checks see a consistent picture.
 * Listing a backend happens outside the lock.
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as McpClient from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import * as McpServer from "../../McpServer.js"
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
import { type Collision, ProxyError } from "./error.js"
import { listSkills } from "./skills.js"

/** A backend: its prefix and a connected client. */
export interface Backend {
  readonly prefix: string
  readonly client: McpClient.McpClient
}

/** Proxy options (documented on `McpProxy.Options`). */
export interface Options extends
  Omit<
    McpServer.Options,
    | "name"
    | "version"
    | "tools"
    | "resources"
    | "resourceTemplates"
    | "prompts"
    | "skills"
    | "validate"
    | "validator"
    | "subscribe"
  >
{
  readonly name?: string
  readonly version?: string
  readonly pingInterval?: Duration.DurationInput
}

interface BackendState {
  readonly status: "up" | "down"
  readonly served: ReadonlyMap<string, Item>
}

const ALL_GROUPS: ReadonlyArray<Group> = ["tools", "prompts", "resources"]
const PREFIX = /^[A-Za-z0-9_.-]+$/
const FIRST_RETRY_MS = 1_000
const MAX_RETRY_MS = 30_000

const GROUP_OF_METHOD: Readonly<Record<string, Group>> = {
  "notifications/tools/list_changed": "tools",
  "notifications/prompts/list_changed": "prompts",
  "notifications/resources/list_changed": "resources"
}

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

const checkPrefixes = (backends: ReadonlyArray<Backend>): Effect.Effect<void, ProxyError> => {
  const bad = backends.filter((b) => !PREFIX.test(b.prefix)).map((b) => JSON.stringify(b.prefix))
  const seen = new Set<string>()
  const dup = new Set<string>()
  for (const b of backends) {
    if (seen.has(b.prefix)) dup.add(b.prefix)
    seen.add(b.prefix)
  }
  const problems = [
    ...(bad.length > 0 ? [`invalid prefixes (1 or more of A-Z a-z 0-9 _ . -): ${bad.join(", ")}`] : []),
    ...(dup.size > 0 ? [`prefixes used twice: ${[...dup].join(", ")}`] : [])
  ]
  return problems.length === 0
    ? Effect.void
    : Effect.fail(new ProxyError({ reason: "Prefix", message: problems.join("; "), collisions: [] }))
}

/** Every identity claimed by more than one backend. */
export const findCollisions = (
  listed: ReadonlyArray<readonly [string, ReadonlyArray<Item>]>
): ReadonlyArray<Collision> => {
  const owners = new Map<string, { readonly kind: Collision["kind"]; readonly name: string; backends: Set<string> }>()
  for (const [prefix, items] of listed) {
    for (const it of items) {
      for (const claim of it.claims) {
        const id = claimId(claim)
        const owner = owners.get(id) ?? { kind: claim.kind, name: claim.key, backends: new Set<string>() }
        owner.backends.add(prefix)
        owners.set(id, owner)
      }
    }
  }
  return [...owners.values()].filter((o) => o.backends.size > 1).map((o) => ({
    kind: o.kind,
    name: o.name,
    backends: [...o.backends]
  }))
}

const listenFilter = (caps: McpSchema.ServerCapabilities): McpClient.ListenFilter => ({
  ...(caps.tools?.listChanged === true ? { toolsListChanged: true } : {}),
  ...(caps.prompts?.listChanged === true ? { promptsListChanged: true } : {}),
  ...(caps.resources?.listChanged === true ? { resourcesListChanged: true } : {})
})

export const make = (
  backends: ReadonlyArray<Backend>,
  options: Options = {}
): Effect.Effect<McpServer.McpServer, ProxyError, Scope.Scope> =>
  Effect.gen(function*() {
    yield* checkPrefixes(backends)
    const { name, pingInterval, version, ...serverOptions } = options
    const joined = backends.flatMap((b) =>
      b.client.info.instructions === undefined ? [] : [`${b.prefix}: ${b.client.info.instructions}`]
    ).join("\n\n")
    const instructions = options.instructions ?? (joined.length > 0 ? joined : undefined)
    // A server without definitions cannot be refused.
    const server = yield* McpServer.make({
      ...serverOptions,
      name: name ?? "presa-mcp-proxy",
      version: version ?? "0.1.0",
      validate: false,
      logging: options.logging ?? true,
      listChanged: options.listChanged ?? true,
      ...(instructions === undefined ? {} : { instructions })
    }).pipe(Effect.orDie)

    const state = yield* Ref.make<ReadonlyMap<string, BackendState>>(
      new Map(backends.map((b) => [b.prefix, { status: "up", served: new Map() }]))
    )
    const lock = yield* Effect.makeSemaphore(1)

    const markDown = (prefix: string) => (reason: string): Effect.Effect<void> =>
      lock.withPermits(1)(Effect.gen(function*() {
        const current = (yield* Ref.get(state)).get(prefix)
        if (current === undefined || current.status === "down") return
        yield* Ref.update(state, (m) => new Map(m).set(prefix, { status: "down", served: new Map() }))
        for (const it of current.served.values()) {
          yield* removeDefinition(server, it.definition).pipe(
            Effect.catchAll((e) => Effect.logWarning(`proxy: could not remove ${it.id}: ${e.message}`))
          )
        }
        yield* Effect.logWarning(
          `backend ${prefix} is down (${reason}); its ${current.served.size} entries were removed`
        )
      }))

    const links: ReadonlyArray<Link> = backends.map((b) => ({
      prefix: b.prefix,
      client: b.client,
      isDown: Effect.map(Ref.get(state), (m) => m.get(b.prefix)?.status === "down"),
      down: markDown(b.prefix)
    }))

    /** The backend's items of `groups` (outside the lock). */
    const list = (link: Link, groups: ReadonlyArray<Group>) =>
      Effect.gen(function*() {
        const current = (yield* Ref.get(state)).get(link.prefix)?.served ?? new Map<string, Item>()
        const out: Array<Item> = []
        if (groups.includes("tools")) out.push(...(yield* listTools(link)))
        if (groups.includes("prompts")) out.push(...(yield* listPrompts(link)))
        if (groups.includes("resources")) {
          const skills = yield* listSkills(link, current)
          out.push(...(yield* listResources(link, skills.covers)), ...skills.items)
        }
        return out
      })

    /**
     * Makes the proxy serve `items` for the backend's `groups` (under the lock): removes what is
     * gone or changed, adds what is new or changed; an item that claims an identity another
     * backend serves is left out and logged.
     */
    const apply = (link: Link, groups: ReadonlyArray<Group>, items: ReadonlyArray<Item>) =>
      lock.withPermits(1)(Effect.gen(function*() {
        const all = yield* Ref.get(state)
        const mine = all.get(link.prefix)
        if (mine === undefined || mine.status === "down") return
        const kinds = new Set(groups.flatMap((g) => GROUP_KINDS[g]))
        const taken = new Map<string, string>()
        for (const [prefix, s] of all) {
          if (prefix === link.prefix) continue
          for (const it of s.served.values()) for (const c of it.claims) taken.set(claimId(c), prefix)
        }
        const next = new Map<string, Item>()
        for (const it of items) {
          if (next.has(it.id)) {
            yield* Effect.logWarning(`backend ${link.prefix}: ${it.id} is listed twice; the first is served`)
            continue
          }
          const clash = it.claims.map(claimId).find((id) => taken.has(id))
          if (clash !== undefined) {
            yield* Effect.logWarning(
              `backend ${link.prefix}: ${it.id} left out: ${clash} is already served by backend ${taken.get(clash)}`
            )
            continue
          }
          next.set(it.id, it)
        }
        const kept = new Map([...mine.served].filter(([, it]) => !kinds.has(it.kind)))
        for (const current of mine.served.values()) {
          if (!kinds.has(current.kind)) continue
          if (next.get(current.id)?.fingerprint === current.fingerprint) continue
          yield* removeDefinition(server, current.definition).pipe(
            Effect.catchAll((e) =>
              Effect.logWarning(`backend ${link.prefix}: could not remove ${current.id}: ${e.message}`)
            )
          )
        }
        for (const it of next.values()) {
          const current = mine.served.get(it.id)
          if (current !== undefined && kinds.has(current.kind) && current.fingerprint === it.fingerprint) {
            kept.set(it.id, current)
            continue
          }
          const added = yield* Effect.either(addDefinition(server, it.definition))
          if (Either.isRight(added)) kept.set(it.id, it)
          else yield* Effect.logWarning(`backend ${link.prefix}: ${it.id} left out: ${added.left.message}`)
        }
        yield* Ref.update(state, (m) => new Map(m).set(link.prefix, { status: "up", served: kept }))
      }))

    /** Re-lists `groups` of a backend and serves the result; a fatal failure marks it down. */
    const sync = (link: Link, groups: ReadonlyArray<Group>) =>
      Effect.gen(function*() {
        if (yield* link.isDown) return
        const listed = yield* Effect.either(list(link, groups))
        if (Either.isRight(listed)) return yield* apply(link, groups, listed.right)
        const e = listed.left
        if (e._tag === "TransportError" && isFatal(e)) return yield* link.down(`${e.reason}: ${e.message}`)
        yield* Effect.logWarning(`backend ${link.prefix}: re-listing ${groups.join(", ")} failed: ${e.message}`)
      })

    /**
     * Follows a backend's list changes: listens (modern `subscriptions/listen`, legacy session
     * notifications) and re-lists what changed. A graceful end of the stream re-listens (and
     * re-lists everything) with a backoff of 1 s doubling to 30 s; a fatal transport failure
     * marks the backend down; a refusal stops following.
     */
    const watch = (
      link: Link,
      filter: McpClient.ListenFilter,
      listening: Deferred.Deferred<void>,
      ready: Deferred.Deferred<void>
    ) =>
      Effect.gen(function*() {
        let delay = FIRST_RETRY_MS
        for (let round = 0;; round++) {
          const outcome = yield* Effect.either(Effect.scoped(Effect.gen(function*() {
            const subscription = yield* link.client.listen(filter)
            yield* Deferred.succeed(listening, undefined)
            yield* Deferred.await(ready)
            if (round > 0) yield* sync(link, ALL_GROUPS)
            yield* subscription.notifications.pipe(
              Stream.groupedWithin(64, "20 millis"),
              Stream.runForEach((chunk) => {
                delay = FIRST_RETRY_MS
                const groups = ALL_GROUPS.filter((g) => Chunk.some(chunk, (n) => GROUP_OF_METHOD[n.method] === g))
                return groups.length === 0 ? Effect.void : sync(link, groups)
              })
            )
          })))
          yield* Deferred.succeed(listening, undefined)
          if (yield* link.isDown) return
          if (Either.isLeft(outcome)) {
            const e = outcome.left
            if (e._tag === "TransportError" && isFatal(e)) return yield* link.down(`${e.reason}: ${e.message}`)
            if (
              e._tag === "McpError" || (e._tag === "ClientError" && e.reason === "Unsupported") ||
              (e._tag === "TransportError" && e.status !== undefined)
            ) {
              return yield* Effect.logWarning(
                `backend ${link.prefix}: change notifications refused (${e.message}); its lists are not followed`
              )
            }
            yield* Effect.logWarning(`backend ${link.prefix}: change notifications failed (${e.message}); retrying`)
          } else {
            yield* Effect.logInfo(`backend ${link.prefix}: change notifications ended; listening again`)
          }
          yield* Deferred.await(ready)
          yield* Effect.sleep(Duration.millis(delay))
          delay = Math.min(delay * 2, MAX_RETRY_MS)
        }
      })

    /** Pings a backend every `interval`; no answer (transport failure, timeout) marks it down. */
    const health = (link: Link, interval: Duration.DurationInput) =>
      Effect.gen(function*() {
        for (;;) {
          yield* Effect.sleep(interval)
          if (yield* link.isDown) return
          const pinged = yield* Effect.either(link.client.request(McpSchema.Method.ping))
          if (Either.isRight(pinged) || pinged.left._tag === "McpError") continue // any answer is alive
          const e = pinged.left
          if (e._tag === "ClientError" && e.reason !== "Timeout") continue
          if (e._tag === "TransportError" && !isFatal(e)) {
            yield* Effect.logWarning(`backend ${link.prefix}: ping failed: ${e.message}`)
            continue
          }
          return yield* link.down(`no answer to ping: ${e.message}`)
        }
      })

    // Background work lives in a child of the caller's scope, closed at once if building fails.
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    return yield* Effect.gen(function*() {
      const ready = yield* Deferred.make<void>()
      const listening: Array<Deferred.Deferred<void>> = []
      for (const link of links) {
        const filter = listenFilter(link.client.info.capabilities)
        if (Object.keys(filter).length === 0) continue
        const latch = yield* Deferred.make<void>()
        listening.push(latch)
        yield* Effect.forkIn(watch(link, filter, latch, ready), scope)
      }
      // Listen first, then list: a change in between is not lost (it is applied after the listing).
      yield* Effect.forEach(listening, Deferred.await, { discard: true })
      const listed = yield* Effect.forEach(
        links,
        (link) =>
          list(link, ALL_GROUPS).pipe(
            Effect.map((items) => [link.prefix, items] as const),
            Effect.mapError((e) =>
              new ProxyError({
                reason: "Backend",
                message: `backend ${link.prefix} could not be listed: ${e.message}`,
                backend: link.prefix,
                collisions: [],
                cause: e
              })
            )
          ),
        { concurrency: "unbounded" }
      )
      const collisions = findCollisions(listed)
      if (collisions.length > 0) {
        return yield* new ProxyError({
          reason: "Collision",
          message: `backends collide: ${
            collisions.map((c) => `${c.kind} ${c.name} (${c.backends.join(", ")})`).join("; ")
          }`,
          collisions
        })
      }
      for (const [i, link] of links.entries()) {
        const items = listed[i]
        if (items !== undefined) yield* apply(link, ALL_GROUPS, items[1])
      }
      yield* Deferred.succeed(ready, undefined)
      if (pingInterval !== undefined) {
        for (const link of links) yield* Effect.forkIn(health(link, pingInterval), scope)
      }
      return server
    }).pipe(Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause))))
  })
