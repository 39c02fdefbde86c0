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
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as JsonRpc from "../../JsonRpc.js"
import type * as McpClient from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import * as McpServer from "../../McpServer.js"
import type * as Middleware from "../../Middleware.js"
import { type Aliases, ambiguousViewTools, makeAliases } from "./apps.js"
import {
  ALL_GROUPS,
  apply,
  type Backend,
  type BackendState,
  goneOwner,
  health,
  list,
  makeBackends,
  makeLink,
  makeState,
  markUp,
  type State
} from "./backends.js"
import { listenFilter, watch } from "./changes.js"
import { claimId, type Item, type Link } from "./definitions.js"
import { type Collision, ProxyError } from "./error.js"
import * as ProxyHealth from "./health.js"
import type * as ProxyInput from "./input.js"
import { limitsOf } from "./listing.js"
import * as Names from "./names.js"
import { type Connection, type Connector, linkOf, open, supervise } from "./reconnect.js"
import { countInterest, followUpdates, type Interest, makeInterest } from "./updates.js"

export type { Backend } from "./backends.js"
export type { Connector } from "./reconnect.js"

/** A backend given connected, or one the proxy connects (and reconnects) itself. */
export type Source = Backend | Connector

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
  readonly maxListPages?: number
  readonly maxListItems?: number
  readonly maxListBytes?: number
  readonly health?: ProxyHealth.Health | undefined
}

const PREFIX = /^[A-Za-z0-9_.-]+$/

const checkPrefixes = (backends: ReadonlyArray<Source>): Effect.Effect<void, ProxyError> => {
  // the empty prefix serves names unchanged: only a proxy's one backend may have it
  const bad = backends.filter((b) => !PREFIX.test(b.prefix) && !(b.prefix === "" && backends.length === 1))
    .map((b) => JSON.stringify(b.prefix))
  const seen = new Set<string>()
  const dup = new Set<string>()
  for (const b of backends) {
    if (seen.has(b.prefix)) dup.add(b.prefix)
    seen.add(b.prefix)
  }
  const problems = [
    ...(bad.length > 0
      ? [
        `invalid prefixes (1 or more of A-Z a-z 0-9 _ . -; the empty prefix only for a proxy's one backend): ${
          bad.join(", ")
        }`
      ]
      : []),
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

const str = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

/**
 * Answers a call that names what a backend served before it went down, while the proxy
 * reconnects it: the name is known, the backend is not there. MCP 2025-11-25, Server Features ›
 * Tools › Error Handling keeps -32602 for unknown tools and reports failures of a tool's
 * execution (an API failure among them) in the result with `isError: true`, so the model can
 * act on them (try again later): a tool call gets such a result. Prompts and resources have no
 * such result: `prompts/get` and `resources/read` get -32603 naming the backend, the error a call
 * gets when its backend fails under it. Names no backend served stay unknown (-32602).
 */
const unavailableWhileDown =
  (backends: Ref.Ref<ReadonlyMap<string, BackendState>>): Middleware.Middleware => (request, next) => {
    const id = request.method === McpSchema.Method.toolsCall
      ? `tool ${str(request.params.name)}`
      : request.method === McpSchema.Method.promptsGet
      ? `prompt ${str(request.params.name)}`
      : request.method === McpSchema.Method.resourcesRead
      ? `resource ${str(request.params.uri)}`
      : undefined
    if (id === undefined) return next
    return Effect.flatMap(goneOwner(backends, id), (owner): typeof next => {
      if (owner === undefined) return next
      const message = `${Names.backend(owner)} is unavailable (the proxy is reconnecting it); try again later`
      return request.method === McpSchema.Method.toolsCall
        ? Effect.succeed({ content: [{ type: "text", text: message }], isError: true })
        : Effect.fail(JsonRpc.McpError.internalError(`${Names.backend(owner)} is unavailable`))
    })
  }

/**
 * The proxy's server: no definitions yet (so it cannot be refused), `validate: false`, logging and
 * `listChanged` on unless the options say otherwise, the backends' instructions by default (of
 * those connected at start); its middlewares answer for reconnecting backends, count resource
 * subscriptions and name the offers of an ambiguous MCP Apps tool name.
 */
const makeServer = (
  clients: ReadonlyArray<{ readonly prefix: string; readonly client: McpClient.McpClient }>,
  backends: Ref.Ref<ReadonlyMap<string, BackendState>>,
  interest: Interest,
  aliases: Aliases,
  options: Options,
  outer: ReadonlyArray<Middleware.Middleware>
): Effect.Effect<McpServer.McpServer, never, Scope.Scope> => {
  const {
    health: _health,
    maxListBytes: _maxListBytes,
    maxListItems: _maxListItems,
    maxListPages: _maxListPages,
    middleware,
    name,
    pingInterval: _,
    version,
    ...serverOptions
  } = options
  const joined = clients.flatMap((b) =>
    b.client.info.instructions === undefined
      ? []
      : [b.prefix === "" ? b.client.info.instructions : `${b.prefix}: ${b.client.info.instructions}`]
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
    subscribe: true,
    middleware: [
      ...outer,
      unavailableWhileDown(backends),
      countInterest(interest),
      ambiguousViewTools(aliases),
      ...(middleware ?? [])
    ],
    ...(instructions === undefined ? {} : { instructions })
  }).pipe(Effect.orDie)
}

/**
 * Opens a listen for every backend that announces list changes (a `watch` fiber in its scope) and
 * waits until each is open or has failed; the watchers re-list nothing before `ready`.
 */
const listenAll = (
  state: State,
  links: ReadonlyArray<Link>,
  ready: Deferred.Deferred<void>,
  scopeOf: (link: Link) => Scope.Scope
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const listening: Array<Deferred.Deferred<void>> = []
    for (const link of links) {
      const filter = listenFilter(link.client.info.capabilities)
      if (Object.keys(filter).length === 0) continue
      const latch = yield* Deferred.make<void>()
      listening.push(latch)
      yield* Effect.forkIn(watch(state, link, filter, latch, ready), scopeOf(link))
    }
    yield* Effect.forEach(listening, Deferred.await, { discard: true })
  })

/**
 * Lists every backend (concurrently). A backend given connected that cannot be listed fails with
 * `ProxyError` "Backend"; one the proxy reconnects (`retrying`) is marked down instead (and left
 * out: its supervisor connects it again).
 */
const listAll = (
  state: State,
  links: ReadonlyArray<Link>,
  retrying: (link: Link) => boolean
): Effect.Effect<ReadonlyArray<readonly [Link, ReadonlyArray<Item>]>, ProxyError> =>
  Effect.forEach(
    links,
    (link) =>
      list(state, link, ALL_GROUPS).pipe(
        Effect.map((items) => [[link, items] as const]),
        Effect.catchAll((e) =>
          retrying(link) ? Effect.as(link.down(`listing failed: ${e.message}`), []) : Effect.fail(
            new ProxyError({
              reason: "Backend",
              message: `${Names.logged(link.prefix)} could not be listed: ${e.message}`,
              backend: link.prefix,
              collisions: [],
              cause: e
            })
          )
        )
      ),
    { concurrency: "unbounded" }
  ).pipe(Effect.map((all) => all.flat()))

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
 * lets the watchers re-list, follows resource updates and (with `pingInterval`) pings each backend. Its fibers live in
 * `scope` (a reconnected backend's in its connection's scope).
 */
const start = (
  state: State,
  links: ReadonlyArray<Link>,
  retrying: (link: Link) => boolean,
  pingInterval: Duration.DurationInput | undefined,
  scopeOf: (link: Link) => Scope.Scope
): Effect.Effect<void, ProxyError> =>
  Effect.gen(function*() {
    const ready = yield* Deferred.make<void>()
    // Listen first, then list: a change in between is not lost (it is applied after the listing).
    yield* listenAll(state, links, ready, scopeOf)
    const listed = yield* listAll(state, links, retrying)
    // Backends given connected are the app's own wiring: a collision among them is refused. A
    // connector's entries go through `apply`'s rule like any later change (the proxy starts).
    yield* refuseCollisions(
      listed.filter(([link]) => !retrying(link)).map(([link, items]) => [link.prefix, items] as const)
    )
    for (const [link, items] of listed) yield* apply(state, link, ALL_GROUPS, items)
    yield* Deferred.succeed(ready, undefined)
    for (const [link] of listed) {
      yield* Effect.forkIn(followUpdates(state, link, state.interest), scopeOf(link))
      if (pingInterval !== undefined) yield* Effect.forkIn(health(link, pingInterval), scopeOf(link))
    }
  })

/** A backend the proxy connects itself (no client given). */
const isConnector = (source: Source): source is Connector => !("client" in source)

/** A backend given connected that the proxy re-creates with its `connect` when it fails. */
const recreatable = (source: Source): Connector | undefined =>
  "client" in source && source.connect !== undefined ? { ...source, connect: source.connect } : undefined

/**
 * The first connection of each backend the proxy reconnects: the connectors connect
 * (concurrently; one that fails is left to its supervisor, its error kept for the health view),
 * and a backend given connected with a `connect` gets a Scope of its own for its client.
 */
const connectAll = (
  sources: ReadonlyArray<Source>,
  callersOf: (prefix: string) => Ref.Ref<ReadonlyArray<ProxyInput.Caller>>,
  scope: Scope.Scope
) =>
  Effect.gen(function*() {
    const connected = new Map<string, Connection>()
    const failures = new Map<string, string>()
    yield* Effect.forEach(sources.filter(isConnector), (connector) =>
      Effect.either(open(connector, callersOf(connector.prefix), scope)).pipe(
        Effect.flatMap(Either.match({
          onLeft: (e) =>
            Effect.zipRight(
              Effect.sync(() =>
                failures.set(connector.prefix, e.message)
              ),
              Effect.logWarning(`${Names.logged(connector.prefix)} could not be connected: ${e.message}`)
            ),
          onRight: (c) => Effect.sync(() => connected.set(connector.prefix, c))
        }))
      ), { concurrency: "unbounded", discard: true })
    for (const source of sources) {
      if ("client" in source && recreatable(source) !== undefined) {
        connected.set(source.prefix, {
          client: source.client,
          scope: yield* Scope.fork(scope, ExecutionStrategy.sequential)
        })
      }
    }
    return { connected, failures }
  })

/**
 * `outer` (internal, not on `McpProxy.make`): middlewares that run before the proxy's own (which
 * answer for a backend that is down): `presa-mcp dev` answers with why its server is down.
 */
export const make = (
  sources: ReadonlyArray<Source>,
  options: Options = {},
  outer: ReadonlyArray<Middleware.Middleware> = []
): Effect.Effect<McpServer.McpServer, ProxyError, Scope.Scope> =>
  Effect.gen(function*() {
    yield* checkPrefixes(sources)
    // Background work lives in a child of the caller's scope, closed at once if building fails.
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    return yield* Effect.gen(function*() {
      const callers = new Map<string, Ref.Ref<ReadonlyArray<ProxyInput.Caller>>>()
      for (const source of sources) callers.set(source.prefix, yield* Ref.make<ReadonlyArray<ProxyInput.Caller>>([]))
      const callersOf = (prefix: string) => callers.get(prefix) ?? Ref.unsafeMake<ReadonlyArray<ProxyInput.Caller>>([])
      const { connected, failures } = yield* connectAll(sources, callersOf, scope)
      const backends = yield* makeBackends(sources.map((s) => ({
        prefix: s.prefix,
        up: !isConnector(s) || connected.has(s.prefix),
        retrying: isConnector(s) || recreatable(s) !== undefined
      })))
      const health = options.health ?? (yield* ProxyHealth.makeHealth)
      yield* ProxyHealth.reset(
        health,
        sources.map((s) => ({
          prefix: s.prefix,
          up: !isConnector(s) || connected.has(s.prefix),
          lastError: failures.get(s.prefix)
        }))
      )
      const clients = sources.flatMap((s) => {
        const client = isConnector(s) ? connected.get(s.prefix)?.client : s.client
        return client === undefined ? [] : [{ prefix: s.prefix, client }]
      })
      const interest = yield* makeInterest
      const aliases = yield* makeAliases
      const server = yield* makeServer(clients, backends, interest, aliases, options, outer)
      const state = yield* makeState(server, backends, interest, limitsOf(options), health, aliases)
      const links: Array<Link> = []
      const initial = new Map<string, { readonly link: Link; readonly connection: Connection }>()
      for (const source of sources) {
        const again = isConnector(source) ? source : recreatable(source)
        if (again !== undefined) {
          const connection = connected.get(source.prefix)
          if (connection === undefined) {
            continue
          }
          const link = yield* linkOf(state, again, callersOf(source.prefix), connection, 0)
          yield* markUp(state, source.prefix, 0)
          initial.set(source.prefix, { link, connection })
          links.push(link)
        } else if ("client" in source) {
          links.push(
            yield* makeLink(state, {
              prefix: source.prefix,
              client: source.client,
              generation: 0,
              retrying: false,
              tools: source,
              callers: callersOf(source.prefix)
            })
          )
        }
      }
      const connectors = new Set(
        sources.filter(isConnector).map((s) => s.prefix)
      )
      yield* start(
        state,
        links,
        (link) => connectors.has(link.prefix),
        options.pingInterval,
        (link) => initial.get(link.prefix)?.connection.scope ?? scope
      )
      for (const source of sources) {
        const again = isConnector(source) ? source : recreatable(source)
        if (again === undefined) continue
        yield* Effect.forkIn(
          supervise(state, again, callersOf(source.prefix), initial.get(source.prefix), options.pingInterval, scope),
          scope
        )
      }
      return server
    }).pipe(Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause))))
  })
