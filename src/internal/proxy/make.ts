/**
 * The proxy: one `McpServer` whose definitions mirror several backends (documented on
 * `McpProxy.make`; docs/architecture.md, "proxy"). `make` checks the prefixes, builds the server
 * and the shared state (backends.ts), then starts: opens the listens (changes.ts), lists every
 * backend, refuses collisions, serves the listings and starts the pings.
 * @internal
 */
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as McpServer from "../../McpServer.js"
import { ALL_GROUPS, apply, type Backend, health, list, makeLink, makeState, type State } from "./backends.js"
import { listenFilter, watch } from "./changes.js"
import { claimId, type Item, type Link } from "./definitions.js"
import { type Collision, ProxyError } from "./error.js"

export type { Backend } from "./backends.js"

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

const PREFIX = /^[A-Za-z0-9_.-]+$/

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

/**
 * The proxy's server: no definitions yet (so it cannot be refused), `validate: false`, logging and
 * `listChanged` on unless the options say otherwise, the backends' instructions by default.
 */
const makeServer = (
  backends: ReadonlyArray<Backend>,
  options: Options
): Effect.Effect<McpServer.McpServer, never, Scope.Scope> => {
  const { name, pingInterval: _, version, ...serverOptions } = options
  const joined = backends.flatMap((b) =>
    b.client.info.instructions === undefined ? [] : [`${b.prefix}: ${b.client.info.instructions}`]
  ).join("\n\n")
  const instructions = options.instructions ?? (joined.length > 0 ? joined : undefined)
  // A server without definitions cannot be refused.
  return McpServer.make({
    ...serverOptions,
    name: name ?? "presa-mcp-proxy",
    version: version ?? "0.1.0",
    validate: false,
    logging: options.logging ?? true,
    listChanged: options.listChanged ?? true,
    ...(instructions === undefined ? {} : { instructions })
  }).pipe(Effect.orDie)
}

/**
 * Opens a listen for every backend that announces list changes (a `watch` fiber in `scope`) and
 * waits until each is open or has failed; the watchers re-list nothing before `ready`.
 */
const listenAll = (
  state: State,
  links: ReadonlyArray<Link>,
  ready: Deferred.Deferred<void>,
  scope: Scope.Scope
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const listening: Array<Deferred.Deferred<void>> = []
    for (const link of links) {
      const filter = listenFilter(link.client.info.capabilities)
      if (Object.keys(filter).length === 0) continue
      const latch = yield* Deferred.make<void>()
      listening.push(latch)
      yield* Effect.forkIn(watch(state, link, filter, latch, ready), scope)
    }
    yield* Effect.forEach(listening, Deferred.await, { discard: true })
  })

/** Lists every backend (concurrently); one that cannot be listed fails with `ProxyError` "Backend". */
const listAll = (
  state: State,
  links: ReadonlyArray<Link>
): Effect.Effect<ReadonlyArray<readonly [string, ReadonlyArray<Item>]>, ProxyError> =>
  Effect.forEach(
    links,
    (link) =>
      list(state, link, ALL_GROUPS).pipe(
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

/** Fails with `ProxyError` "Collision" naming every identity more than one backend claims. */
const refuseCollisions = (
  listed: ReadonlyArray<readonly [string, ReadonlyArray<Item>]>
): Effect.Effect<void, ProxyError> => {
  const collisions = findCollisions(listed)
  return collisions.length === 0 ? Effect.void : Effect.fail(
    new ProxyError({
      reason: "Collision",
      message: `backends collide: ${
        collisions.map((c) => `${c.kind} ${c.name} (${c.backends.join(", ")})`).join("; ")
      }`,
      collisions
    })
  )
}

/**
 * Starts the proxy over `state`: listens, lists, refuses collisions, serves every listing, then
 * lets the watchers re-list and (with `pingInterval`) pings each backend. Its fibers live in
 * `scope`.
 */
const start = (
  state: State,
  links: ReadonlyArray<Link>,
  pingInterval: Duration.DurationInput | undefined,
  scope: Scope.Scope
): Effect.Effect<void, ProxyError> =>
  Effect.gen(function*() {
    const ready = yield* Deferred.make<void>()
    // Listen first, then list: a change in between is not lost (it is applied after the listing).
    yield* listenAll(state, links, ready, scope)
    const listed = yield* listAll(state, links)
    yield* refuseCollisions(listed)
    for (const [i, link] of links.entries()) {
      const items = listed[i]
      if (items !== undefined) yield* apply(state, link, ALL_GROUPS, items[1])
    }
    yield* Deferred.succeed(ready, undefined)
    if (pingInterval !== undefined) {
      for (const link of links) yield* Effect.forkIn(health(link, pingInterval), scope)
    }
  })

export const make = (
  backends: ReadonlyArray<Backend>,
  options: Options = {}
): Effect.Effect<McpServer.McpServer, ProxyError, Scope.Scope> =>
  Effect.gen(function*() {
    yield* checkPrefixes(backends)
    const server = yield* makeServer(backends, options)
    const state = yield* makeState(server, backends)
    const links = backends.map((b) => makeLink(state, b))
    // Background work lives in a child of the caller's scope, closed at once if building fails.
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    yield* start(state, links, options.pingInterval, scope).pipe(
      Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
    )
    return server
  })
