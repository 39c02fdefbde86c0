/**
 * The server core: one message in, at most one out.
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Content from "../Content.js"
import { lift } from "../Handler.js"
import type { InputRequired } from "../Input.js"
import * as JsonRpc from "../JsonRpc.js"
import * as JsonSchema from "../JsonSchema.js"
import * as McpSchema from "../McpSchema.js"
import type * as Prompt from "../Prompt.js"
import { RequestContext, type RequestContextShape } from "../RequestContext.js"
import type * as Resource from "../Resource.js"
import type * as Tool from "../Tool.js"
import * as UriTemplate from "../UriTemplate.js"
import * as Defs from "./definitions.js"
import * as Headers from "./headers.js"
import * as InputState from "./inputState.js"

const { McpError } = JsonRpc
type McpError = JsonRpc.McpError

/** Server options (documented on `McpServer.Options`). */
export interface Options {
  readonly name: string
  readonly version: string
  readonly title?: string
  readonly description?: string
  readonly websiteUrl?: string
  readonly icons?: ReadonlyArray<McpSchema.Icon>
  readonly instructions?: string
  readonly tools?: ReadonlyArray<Tool.Tool>
  readonly resources?: ReadonlyArray<Resource.Resource>
  readonly resourceTemplates?: ReadonlyArray<Resource.ResourceTemplate>
  readonly prompts?: ReadonlyArray<Prompt.Prompt>
  readonly pageSize?: number
  readonly cache?: { readonly ttlMs?: number; readonly scope?: McpSchema.CacheScope }
  readonly versions?: ReadonlyArray<McpSchema.ProtocolVersion>
  readonly logging?: boolean
  readonly listChanged?: boolean
  readonly subscribe?: boolean
  readonly exposeErrorMessages?: boolean
  readonly validate?: boolean
  readonly validator?: JsonSchema.Validator
  readonly inputState?: { readonly keys?: ReadonlyArray<string>; readonly ttl?: Duration.DurationInput }
}

/** A change to what the server serves. */
export type ChangeEvent =
  | { readonly _tag: "ListChanged"; readonly kind: "tools" | "prompts" | "resources" }
  | { readonly _tag: "ResourceUpdated"; readonly uri: string }

/** A server value: its options and the `SubscriptionRef` of definition snapshots. */
export interface Server {
  readonly info: McpSchema.Implementation
  readonly options: Options
  readonly versions: ReadonlyArray<McpSchema.ProtocolVersion>
  readonly state: SubscriptionRef.SubscriptionRef<Defs.Snapshot>
  readonly events: PubSub.PubSub<ChangeEvent>
  readonly shutdown: Deferred.Deferred<void>
  /** HMAC keys for `requestState` (the first signs, all verify). */
  readonly stateKeys: ReadonlyArray<string>
}

/** What a legacy session knows once `initialize` was answered. */
export interface SessionState {
  readonly protocolVersion: McpSchema.ProtocolVersion
  readonly clientInfo: McpSchema.Implementation | undefined
  readonly clientCapabilities: McpSchema.ClientCapabilities
  readonly initialized: boolean
  readonly logLevel: McpSchema.LoggingLevel | undefined
  readonly subscriptions: ReadonlySet<string>
}

/** A legacy session: one stdio process, or one HTTP `Mcp-Session-Id`. */
export interface Session {
  readonly state: Ref.Ref<SessionState | undefined>
}

export const makeSession: Effect.Effect<Session> = Effect.map(
  Ref.make<SessionState | undefined>(undefined),
  (state) => ({ state })
)

/** Options of one dispatch. */
export interface DispatchOptions {
  /** The legacy session of this connection, if the transport has one. */
  readonly session?: Session | undefined
  /** HTTP request headers: enables the 2026-07-28 header checks and header-based era routing. */
  readonly headers?: Readonly<Record<string, string | ReadonlyArray<string> | undefined>> | undefined
  /** Where request-scoped notifications (progress, log messages) go. */
  readonly notify?: ((notification: JsonRpc.Notification) => Effect.Effect<void>) | undefined
  /**
   * Legacy sessions: sends a server→client request (`elicitation/create`, `sampling/createMessage`,
   * `roots/list`) on the session and yields its result.
   */
  readonly sendRequest?:
    | ((method: string, params: JsonRpc.JsonObject | undefined) => Effect.Effect<JsonRpc.JsonObject, McpError>)
    | undefined
}

/** A response and the HTTP status the spec gives it. */
export interface Reply {
  readonly message: JsonRpc.Response
  readonly status: number
}

export const make = (options: Options): Effect.Effect<Server, Defs.DefinitionError> =>
  Effect.gen(function*() {
    const snapshot = yield* Defs.build(options, 1)
    const state = yield* SubscriptionRef.make(snapshot)
    const events = yield* PubSub.unbounded<ChangeEvent>()
    const shutdown = yield* Deferred.make<void>()
    const versions = McpSchema.ALL_VERSIONS.filter((v) => (options.versions ?? McpSchema.ALL_VERSIONS).includes(v))
    const info: McpSchema.Implementation = {
      name: options.name,
      version: options.version,
      ...(options.title === undefined ? {} : { title: options.title }),
      ...(options.description === undefined ? {} : { description: options.description }),
      ...(options.websiteUrl === undefined ? {} : { websiteUrl: options.websiteUrl }),
      ...(options.icons === undefined ? {} : { icons: options.icons })
    }
    const stateKeys = options.inputState?.keys !== undefined && options.inputState.keys.length > 0
      ? options.inputState.keys
      : [InputState.randomSecret()]
    return { info, options, versions, state, events, shutdown, stateKeys }
  })

// ---------------------------------------------------------------------------------------------
// capabilities
// ---------------------------------------------------------------------------------------------

export const capabilities = (server: Server, snapshot: Defs.Snapshot): McpSchema.ServerCapabilities => {
  const caps: Record<string, Record<string, unknown>> = {}
  const listChanged = server.options.listChanged === true ? { listChanged: true } : {}
  if (snapshot.tools.length > 0) caps.tools = { ...listChanged }
  if (snapshot.resources.length > 0 || snapshot.templates.length > 0) {
    caps.resources = { ...(server.options.subscribe === true ? { subscribe: true } : {}), ...listChanged }
  }
  if (snapshot.prompts.length > 0) caps.prompts = { ...listChanged }
  const completes = snapshot.prompts.some((p) => p.def.complete !== undefined) ||
    snapshot.templates.some((t) => t.def.complete !== undefined)
  if (completes) caps.completions = {}
  if (server.options.logging === true) caps.logging = {}
  return caps
}

// ---------------------------------------------------------------------------------------------
// eras and request metadata
// ---------------------------------------------------------------------------------------------

interface Era {
  readonly era: "modern" | "legacy"
  readonly protocolVersion: string
  readonly clientInfo: McpSchema.Implementation | undefined
  readonly clientCapabilities: McpSchema.ClientCapabilities
}

class Failure {
  constructor(readonly error: McpError, readonly status: number) {}
}

const fail = (error: McpError, status?: number) => Effect.fail(new Failure(error, status ?? statusOf(error)))

const statusOf = (error: McpError): number => {
  switch (error.code) {
    case JsonRpc.ErrorCode.ParseError:
    case JsonRpc.ErrorCode.InvalidRequest:
    case JsonRpc.ErrorCode.HeaderMismatch:
    case JsonRpc.ErrorCode.MissingRequiredClientCapability:
    case JsonRpc.ErrorCode.UnsupportedProtocolVersion:
      return 400
    case JsonRpc.ErrorCode.MethodNotFound:
      return 404
    default:
      return 200
  }
}

const decodeImplementation = Schema.decodeUnknownOption(McpSchema.Implementation)
const decodeClientCapabilities = Schema.decodeUnknownOption(McpSchema.ClientCapabilities, {
  onExcessProperty: "preserve"
})

const modernEra = (
  server: Server,
  meta: JsonRpc.JsonObject | undefined
): Effect.Effect<Era, Failure> => {
  if (meta === undefined) {
    return fail(
      McpError.invalidParams(
        "Missing params._meta: 2026-07-28 requests carry their protocol version and client capabilities in _meta",
        { supported: server.versions }
      ),
      400
    )
  }
  const version = meta[McpSchema.MetaKey.protocolVersion]
  if (typeof version !== "string") {
    return fail(McpError.invalidParams(`Missing required _meta field ${McpSchema.MetaKey.protocolVersion}`), 400)
  }
  const caps = decodeClientCapabilities(meta[McpSchema.MetaKey.clientCapabilities])
  if (Option.isNone(caps)) {
    return fail(McpError.invalidParams(`Missing required _meta field ${McpSchema.MetaKey.clientCapabilities}`), 400)
  }
  const rawInfo = meta[McpSchema.MetaKey.clientInfo]
  const info = rawInfo === undefined ? Option.some(undefined) : decodeImplementation(rawInfo)
  if (Option.isNone(info)) {
    return fail(
      McpError.invalidParams(`Invalid _meta field ${McpSchema.MetaKey.clientInfo}: name and version are required`),
      400
    )
  }
  const level = meta[McpSchema.MetaKey.logLevel]
  if (level !== undefined && !McpSchema.LOGGING_LEVELS.some((l) => l === level)) {
    return fail(McpError.invalidParams(`Invalid _meta field ${McpSchema.MetaKey.logLevel}: ${String(level)}`), 400)
  }
  return Effect.succeed({
    era: "modern",
    protocolVersion: version,
    clientInfo: info.value,
    clientCapabilities: caps.value
  })
}

const checkModernVersion = (server: Server, version: string): Effect.Effect<void, Failure> =>
  McpSchema.isProtocolVersion(version) && McpSchema.isModernVersion(version) && server.versions.includes(version)
    ? Effect.void
    : fail(McpError.unsupportedVersion(server.versions, version), 400)

// ---------------------------------------------------------------------------------------------
// dispatch
// ---------------------------------------------------------------------------------------------

/** Handles one decoded JSON value. Never fails: every problem becomes a reply. */
export const dispatch = (
  server: Server,
  message: unknown,
  options: DispatchOptions = {}
): Effect.Effect<Option.Option<Reply>> => {
  const classified = JsonRpc.classify(message)
  switch (classified._tag) {
    case "Invalid":
      return Effect.map(
        options.session === undefined ? Effect.succeed(undefined) : Ref.get(options.session.state),
        (s) =>
          Option.some({
            // 2025-06-18 requires an id on error responses (JSON-RPC: null when unreadable); later
            // revisions make it optional and do not admit null, so there it is omitted.
            message: classified.id === undefined && s?.protocolVersion === "2025-06-18"
              ? JsonRpc.failureWithNullId(classified.error)
              : JsonRpc.failure(classified.id, classified.error),
            status: 400
          })
      )
    case "Response":
      return Effect.succeedNone
    case "Notification":
      return handleNotification(classified.message, options).pipe(Effect.as(Option.none()))
    case "Request": {
      const request = classified.message
      return handleRequest(server, request, options).pipe(
        Effect.map((result) => ({ message: JsonRpc.success(request.id, result), status: 200 })),
        Effect.catchAll((f) => Effect.succeed({ message: JsonRpc.failure(request.id, f.error), status: f.status })),
        Effect.catchAllDefect((defect) =>
          Effect.logError(`${request.method} failed with a defect`, Cause.die(defect)).pipe(
            Effect.as({ message: JsonRpc.failure(request.id, McpError.internalError()), status: 200 })
          )
        ),
        Effect.map(Option.some)
      )
    }
  }
}

const handleNotification = (
  notification: JsonRpc.Notification,
  options: DispatchOptions
): Effect.Effect<void> => {
  if (notification.method === McpSchema.Method.initialized && options.session !== undefined) {
    return Ref.update(options.session.state, (s) => s === undefined ? s : { ...s, initialized: true })
  }
  return Effect.void
}

const handleRequest = (
  server: Server,
  request: JsonRpc.Request,
  options: DispatchOptions
): Effect.Effect<JsonRpc.JsonObject, Failure> =>
  Effect.gen(function*() {
    const params = request.params ?? {}
    const meta = JsonRpc.isObject(params._meta) ? params._meta : undefined
    const headerVersion = options.headers === undefined
      ? undefined
      : Headers.getHeader(options.headers, Headers.Header.protocolVersion)
    const isModern = (meta !== undefined && McpSchema.MetaKey.protocolVersion in meta) ||
      (headerVersion !== undefined && McpSchema.isModernVersion(headerVersion) &&
        request.method !== McpSchema.Method.initialize)
    const snapshot = yield* SubscriptionRef.get(server.state)
    if (isModern) {
      const era = yield* modernEra(server, meta)
      if (options.headers !== undefined) {
        const tool = request.method === McpSchema.Method.toolsCall && typeof params.name === "string"
          ? snapshot.tools.find((t) => t.def.name === params.name)
          : undefined
        const mismatch = Headers.check(request, options.headers, tool?.inputSchema)
        if (Option.isSome(mismatch)) return yield* fail(mismatch.value, 400)
      }
      yield* checkModernVersion(server, era.protocolVersion)
      if (McpSchema.LEGACY_ONLY_METHODS.has(request.method)) {
        return yield* fail(McpError.methodNotFound(request.method), 404)
      }
      const result = yield* route(server, snapshot, request, era, options)
      return modernResult(server, request.method, result)
    }
    if (request.method === McpSchema.Method.initialize) {
      return yield* initialize(server, snapshot, params, options)
    }
    const session = options.session === undefined ? undefined : yield* Ref.get(options.session.state)
    if (session === undefined) {
      if (request.method === McpSchema.Method.ping) return {}
      const legacy = server.versions.filter((v) => !McpSchema.isModernVersion(v))
      return yield* fail(
        McpError.invalidParams(
          legacy.length > 0
            ? "No session: send initialize first, or send a 2026-07-28 request with params._meta"
            : "Missing params._meta: this server speaks 2026-07-28 only",
          { supported: server.versions }
        ),
        400
      )
    }
    if (McpSchema.MODERN_ONLY_METHODS.has(request.method)) {
      return yield* fail(McpError.methodNotFound(request.method), 404)
    }
    const era: Era = {
      era: "legacy",
      protocolVersion: session.protocolVersion,
      clientInfo: session.clientInfo,
      clientCapabilities: session.clientCapabilities
    }
    return yield* route(server, snapshot, request, era, options)
  })

const initialize = (
  server: Server,
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject,
  options: DispatchOptions
): Effect.Effect<JsonRpc.JsonObject, Failure> =>
  Effect.gen(function*() {
    const legacy = server.versions.filter((v) => !McpSchema.isModernVersion(v))
    const newest = legacy[0]
    if (newest === undefined) {
      return yield* fail(
        McpError.invalidParams("This server speaks 2026-07-28 only; send requests with params._meta", {
          supported: server.versions
        }),
        400
      )
    }
    const decoded = yield* Schema.decodeUnknown(McpSchema.InitializeParams, { onExcessProperty: "preserve" })(params)
      .pipe(Effect.mapError((e) => new Failure(invalidParamsFrom(e), 200)))
    const requested = decoded.protocolVersion
    const protocolVersion = legacy.find((v) => v === requested) ?? newest
    if (options.session !== undefined) {
      yield* Ref.set(options.session.state, {
        protocolVersion,
        clientInfo: decoded.clientInfo,
        clientCapabilities: decoded.capabilities,
        initialized: false,
        logLevel: undefined,
        subscriptions: new Set<string>()
      })
    }
    return {
      protocolVersion,
      capabilities: capabilities(server, snapshot),
      serverInfo: server.info,
      ...(server.options.instructions === undefined ? {} : { instructions: server.options.instructions })
    }
  })

const invalidParamsFrom = (e: ParseResult.ParseError): McpError =>
  McpError.invalidParams(`Invalid params: ${ParseResult.TreeFormatter.formatErrorSync(e).split("\n").join(" ")}`, {
    issues: ParseResult.ArrayFormatter.formatErrorSync(e).map((i) => ({ path: i.path.map(String), message: i.message }))
  })

const decodeParams = <A, I>(schema: Schema.Schema<A, I>, params: JsonRpc.JsonObject): Effect.Effect<A, Failure> =>
  Schema.decodeUnknown(schema)(params).pipe(Effect.mapError((e) => new Failure(invalidParamsFrom(e), 200)))

const CACHEABLE: ReadonlySet<string> = new Set([
  McpSchema.Method.discover,
  McpSchema.Method.toolsList,
  McpSchema.Method.promptsList,
  McpSchema.Method.resourcesList,
  McpSchema.Method.resourcesTemplatesList,
  McpSchema.Method.resourcesRead
])

const modernResult = (server: Server, method: string, result: JsonRpc.JsonObject): JsonRpc.JsonObject => {
  const meta = JsonRpc.isObject(result._meta) ? result._meta : {}
  const out: Record<string, unknown> = {
    resultType: "complete",
    ...result,
    _meta: { ...meta, [McpSchema.MetaKey.serverInfo]: server.info }
  }
  if (CACHEABLE.has(method) && out.resultType === "complete") {
    out.ttlMs = Math.max(0, Math.floor(server.options.cache?.ttlMs ?? 0))
    out.cacheScope = server.options.cache?.scope ?? "private"
  }
  return out
}

/** Bounds on request-scoped notifications: count per request and size of one log message. */
const MAX_NOTIFICATIONS = 1000
const MAX_LOG_BYTES = 64 * 1024

interface MrtrInput {
  readonly responses: Readonly<Record<string, unknown>>
  readonly state: unknown
  readonly target: string
  readonly argsDigest: string
}

const makeContext = (
  server: Server,
  request: JsonRpc.Request,
  era: Era,
  options: DispatchOptions,
  mrtr: MrtrInput | undefined
): Effect.Effect<RequestContextShape> =>
  Effect.gen(function*() {
    const stateRef = yield* Ref.make<unknown>(mrtr?.state)
    const params = request.params ?? {}
    const meta = JsonRpc.isObject(params._meta) ? params._meta : {}
    const token = meta[McpSchema.MetaKey.progressToken]
    const progressToken = typeof token === "string" || (typeof token === "number" && Number.isInteger(token))
      ? token
      : undefined
    const notify = options.notify ?? (() => Effect.void)
    const sent = yield* Ref.make({ count: 0, lastProgress: Number.NEGATIVE_INFINITY })
    const threshold: Effect.Effect<McpSchema.LoggingLevel | undefined> = era.era === "modern"
      ? Effect.succeed(
        McpSchema.LOGGING_LEVELS.find((l) => l === meta[McpSchema.MetaKey.logLevel])
      )
      : options.session === undefined
      ? Effect.succeed("debug")
      : Effect.map(Ref.get(options.session.state), (s) => s?.logLevel ?? "debug")
    const budget = (progress?: number) =>
      Ref.modify(sent, (s) => {
        if (s.count >= MAX_NOTIFICATIONS) return [false, s]
        if (progress !== undefined && !(progress > s.lastProgress)) return [false, s]
        return [true, { count: s.count + 1, lastProgress: progress ?? s.lastProgress }]
      })
    return {
      ...era,
      requestId: request.id,
      method: request.method,
      meta,
      progressToken,
      notify,
      input: {
        responses: mrtr?.responses ?? {},
        state: stateRef,
        sendRequest: era.era === "legacy" ? options.sendRequest : undefined
      },
      progress: (progress, opts) =>
        progressToken === undefined || !Number.isFinite(progress)
          ? Effect.succeed(false)
          : Effect.flatMap(budget(progress), (ok) =>
            ok
              ? Effect.as(
                notify(JsonRpc.notification(McpSchema.Method.progress, {
                  progressToken,
                  progress,
                  ...(opts?.total === undefined ? {} : { total: opts.total }),
                  ...(opts?.message === undefined ? {} : { message: opts.message })
                })),
                true
              )
              : Effect.succeed(false)),
      log: (level, data, logger) =>
        Effect.gen(function*() {
          if (server.options.logging !== true) return false
          const min = yield* threshold
          if (min === undefined) return false
          if (McpSchema.LOGGING_LEVELS.indexOf(level) < McpSchema.LOGGING_LEVELS.indexOf(min)) return false
          const size = JSON.stringify(data ?? null).length
          if (size > MAX_LOG_BYTES) return false
          if (!(yield* budget())) return false
          yield* notify(JsonRpc.notification(McpSchema.Method.message, {
            level,
            data: data ?? null,
            ...(logger === undefined ? {} : { logger })
          }))
          return true
        })
    }
  })

const route = (
  server: Server,
  snapshot: Defs.Snapshot,
  request: JsonRpc.Request,
  era: Era,
  options: DispatchOptions
): Effect.Effect<JsonRpc.JsonObject, Failure> =>
  Effect.gen(function*() {
    const mrtr = era.era === "modern" && MRTR_METHODS.has(request.method)
      ? yield* mrtrInput(server, request)
      : undefined
    const ctx = yield* makeContext(server, request, era, options, mrtr)
    return yield* routeWith(server, snapshot, request, options, ctx).pipe(
      Effect.catchTag("InputRequired", (e) =>
        mrtr === undefined
          ? fail(McpError.internalError(`input_required is not allowed on ${request.method}`))
          : inputRequiredResult(server, request, mrtr, ctx, e))
    )
  })

const routeWith = (
  server: Server,
  snapshot: Defs.Snapshot,
  request: JsonRpc.Request,
  options: DispatchOptions,
  ctx: RequestContextShape
): Effect.Effect<JsonRpc.JsonObject, Failure | InputRequired> => {
  const params = request.params ?? {}
  const caps = capabilities(server, snapshot)
  const gated = (
    capability: keyof McpSchema.ServerCapabilities,
    run: () => Effect.Effect<JsonRpc.JsonObject, Failure | InputRequired>
  ) => caps[capability] === undefined ? fail(McpError.methodNotFound(request.method), 404) : run()
  switch (request.method) {
    case McpSchema.Method.discover:
      return Effect.succeed({
        supportedVersions: server.versions,
        capabilities: caps,
        ...(server.options.instructions === undefined ? {} : { instructions: server.options.instructions })
      })
    case McpSchema.Method.ping:
      return Effect.succeed({})
    case McpSchema.Method.toolsList:
      return gated(
        "tools",
        () =>
          page(
            server,
            snapshot,
            params,
            snapshot.tools,
            "tools",
            (t) => ctx.era === "legacy" ? legacyTool(t.wire) : t.wire
          )
      )
    case McpSchema.Method.toolsCall:
      return gated("tools", () => callTool(server, snapshot, params, ctx))
    case McpSchema.Method.resourcesList:
      return gated("resources", () => page(server, snapshot, params, snapshot.resources, "resources", (r) => r.wire))
    case McpSchema.Method.resourcesTemplatesList:
      return gated(
        "resources",
        () => page(server, snapshot, params, snapshot.templates, "resourceTemplates", (t) => t.wire)
      )
    case McpSchema.Method.resourcesRead:
      return gated("resources", () => readResource(snapshot, params, ctx))
    case McpSchema.Method.promptsList:
      return gated("prompts", () => page(server, snapshot, params, snapshot.prompts, "prompts", (p) => p.wire))
    case McpSchema.Method.promptsGet:
      return gated("prompts", () => getPrompt(snapshot, params, ctx))
    case McpSchema.Method.complete:
      return gated("completions", () => complete(snapshot, params, ctx))
    case McpSchema.Method.loggingSetLevel:
      return gated("logging", () =>
        decodeParams(McpSchema.SetLevelParams, params).pipe(
          Effect.tap(({ level }) =>
            options.session === undefined
              ? Effect.void
              : Ref.update(options.session.state, (s) => s === undefined ? s : { ...s, logLevel: level })
          ),
          Effect.as({})
        ))
    case McpSchema.Method.subscriptionsListen:
      return caps.tools?.listChanged === true || caps.prompts?.listChanged === true ||
          caps.resources?.listChanged === true || caps.resources?.subscribe === true
        ? listen(server, caps, request, ctx)
        : fail(McpError.methodNotFound(request.method), 404)
    case McpSchema.Method.resourcesSubscribe:
    case McpSchema.Method.resourcesUnsubscribe:
      return caps.resources?.subscribe === true
        ? subscribe(options, params, request.method === McpSchema.Method.resourcesSubscribe)
        : fail(McpError.methodNotFound(request.method), 404)
    default:
      return fail(McpError.methodNotFound(request.method), 404)
  }
}

// ---------------------------------------------------------------------------------------------
// subscriptions
// ---------------------------------------------------------------------------------------------

const Filter = Schema.Struct({
  notifications: Schema.Struct({
    toolsListChanged: Schema.optional(Schema.Boolean),
    promptsListChanged: Schema.optional(Schema.Boolean),
    resourcesListChanged: Schema.optional(Schema.Boolean),
    resourceSubscriptions: Schema.optional(Schema.Array(Schema.String))
  })
})

const LIST_CHANGED_METHOD = {
  tools: "notifications/tools/list_changed",
  prompts: "notifications/prompts/list_changed",
  resources: "notifications/resources/list_changed"
} as const

const RESOURCE_UPDATED = "notifications/resources/updated"
const ACKNOWLEDGED = "notifications/subscriptions/acknowledged"

/** `subscriptions/listen` (2026-07-28): ack first, then matching changes, until cancel or shutdown. */
const listen = (
  server: Server,
  caps: McpSchema.ServerCapabilities,
  request: JsonRpc.Request,
  ctx: RequestContextShape
): Effect.Effect<JsonRpc.JsonObject, Failure> =>
  Effect.gen(function*() {
    const { notifications: wanted } = yield* decodeParams(Filter, request.params ?? {})
    const honoured: {
      toolsListChanged?: true
      promptsListChanged?: true
      resourcesListChanged?: true
      resourceSubscriptions?: ReadonlyArray<string>
    } = {
      ...(wanted.toolsListChanged === true && caps.tools?.listChanged === true ? { toolsListChanged: true } : {}),
      ...(wanted.promptsListChanged === true && caps.prompts?.listChanged === true
        ? { promptsListChanged: true }
        : {}),
      ...(wanted.resourcesListChanged === true && caps.resources?.listChanged === true
        ? { resourcesListChanged: true }
        : {}),
      ...(wanted.resourceSubscriptions !== undefined && caps.resources?.subscribe === true
        ? { resourceSubscriptions: wanted.resourceSubscriptions }
        : {})
    }
    const meta = { [McpSchema.MetaKey.subscriptionId]: request.id }
    const uris = new Set(honoured.resourceSubscriptions ?? [])
    const wants = (e: ChangeEvent): boolean =>
      e._tag === "ResourceUpdated"
        ? uris.has(e.uri)
        : e.kind === "tools"
        ? honoured.toolsListChanged === true
        : e.kind === "prompts"
        ? honoured.promptsListChanged === true
        : honoured.resourcesListChanged === true
    yield* Effect.scoped(Effect.gen(function*() {
      const queue = yield* PubSub.subscribe(server.events)
      yield* ctx.notify(JsonRpc.notification(ACKNOWLEDGED, { _meta: meta, notifications: honoured }))
      const forward = Queue.take(queue).pipe(
        Effect.flatMap((e) => wants(e) ? ctx.notify(toNotification(e, meta)) : Effect.void),
        Effect.forever
      )
      yield* Effect.raceFirst(forward, Deferred.await(server.shutdown))
    }))
    return { _meta: meta }
  })

const toNotification = (e: ChangeEvent, meta?: JsonRpc.JsonObject): JsonRpc.Notification =>
  e._tag === "ResourceUpdated"
    ? JsonRpc.notification(RESOURCE_UPDATED, meta === undefined ? { uri: e.uri } : { uri: e.uri, _meta: meta })
    : JsonRpc.notification(LIST_CHANGED_METHOD[e.kind], meta === undefined ? undefined : { _meta: meta })

/** Legacy `resources/subscribe` / `resources/unsubscribe`: per-session URI set. */
const subscribe = (
  options: DispatchOptions,
  params: JsonRpc.JsonObject,
  on: boolean
): Effect.Effect<JsonRpc.JsonObject, Failure> =>
  Effect.gen(function*() {
    const { uri } = yield* decodeParams(McpSchema.ReadResourceParams, params)
    if (options.session !== undefined) {
      yield* Ref.update(options.session.state, (s) => {
        if (s === undefined) return s
        const next = new Set(s.subscriptions)
        if (on) next.add(uri)
        else next.delete(uri)
        return { ...s, subscriptions: next }
      })
    }
    return {}
  })

/**
 * The unsolicited notifications of a legacy session: `notifications/{tools,prompts,resources}/list_changed`
 * (when `listChanged` is on, after `notifications/initialized`) and `notifications/resources/updated`
 * for the session's subscribed URIs. Modern clients get changes only through `subscriptions/listen`.
 */
export const sessionNotifications = (server: Server, session: Session): Stream.Stream<JsonRpc.Notification> =>
  Stream.fromPubSub(server.events).pipe(
    Stream.filterEffect((e) =>
      Effect.map(Ref.get(session.state), (s) =>
        s !== undefined && s.initialized &&
        (e._tag === "ResourceUpdated" ? s.subscriptions.has(e.uri) : server.options.listChanged === true))
    ),
    Stream.map((e) => toNotification(e))
  )

/** Announces a list change (e.g. after the app changed what a list returns). */
export const listChanged = (server: Server, kind: "tools" | "prompts" | "resources"): Effect.Effect<void> =>
  PubSub.publish(server.events, { _tag: "ListChanged", kind })

/** Announces that a resource's contents changed. */
export const resourceUpdated = (server: Server, uri: string): Effect.Effect<void> =>
  PubSub.publish(server.events, { _tag: "ResourceUpdated", uri })

/** Ends every `subscriptions/listen` gracefully (their result is sent). */
export const shutdown = (server: Server): Effect.Effect<void> => Deferred.succeed(server.shutdown, undefined)

// ---------------------------------------------------------------------------------------------
// pagination
// ---------------------------------------------------------------------------------------------

const encodeCursor = (key: string, revision: number, offset: number): string =>
  btoa(JSON.stringify({ k: key, r: revision, o: offset })).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")

const CursorJson = Schema.parseJson(Schema.Struct({ k: Schema.String, r: Schema.Int, o: Schema.NonNegativeInt }))

const decodeCursor = (
  cursor: string
): Option.Option<{ readonly k: string; readonly r: number; readonly o: number }> => {
  try {
    return Schema.decodeUnknownOption(CursorJson)(atob(cursor.replace(/-/g, "+").replace(/_/g, "/")))
  } catch {
    return Option.none()
  }
}

const page = <A>(
  server: Server,
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject,
  items: ReadonlyArray<A>,
  key: string,
  wire: (a: A) => unknown
): Effect.Effect<JsonRpc.JsonObject, Failure> =>
  Effect.gen(function*() {
    const { cursor } = yield* decodeParams(McpSchema.PaginatedParams, params)
    let offset = 0
    if (cursor !== undefined) {
      const decoded = decodeCursor(cursor)
      if (
        Option.isNone(decoded) || decoded.value.k !== key || decoded.value.r !== snapshot.revision ||
        decoded.value.o > items.length
      ) {
        return yield* fail(McpError.invalidParams("Invalid cursor", { cursor }))
      }
      offset = decoded.value.o
    }
    const size = Math.max(1, server.options.pageSize ?? 100)
    const slice = items.slice(offset, offset + size).map(wire)
    const next = offset + size
    return next < items.length
      ? { [key]: slice, nextCursor: encodeCursor(key, snapshot.revision, next) }
      : { [key]: slice }
  })

// ---------------------------------------------------------------------------------------------
// tools
// ---------------------------------------------------------------------------------------------

const errorResult = (text: string): McpSchema.CallToolResult => ({ content: [Content.text(text)], isError: true })

const validatorOf = (server: Server): JsonSchema.Validator | undefined =>
  server.options.validate === false ? undefined : server.options.validator ?? JsonSchema.validate

const callTool = (
  server: Server,
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject,
  ctx: RequestContextShape
): Effect.Effect<JsonRpc.JsonObject, Failure | InputRequired> =>
  Effect.gen(function*() {
    const { name, arguments: rawArgs } = yield* decodeParams(McpSchema.CallToolParams, params)
    const tool = snapshot.tools.find((t) => t.def.name === name)
    if (tool === undefined) return yield* fail(McpError.invalidParams(`Unknown tool: ${name}`, { name }))
    if (rawArgs !== undefined && rawArgs !== null && !JsonRpc.isObject(rawArgs)) {
      return yield* fail(McpError.invalidParams("Invalid params: arguments must be an object"))
    }
    const args: JsonRpc.JsonObject = JsonRpc.isObject(rawArgs) ? rawArgs : {}
    const validator = validatorOf(server)
    if (validator !== undefined) {
      const issues = validator(tool.inputSchema, args)
      if (issues.length > 0) return errorResult(JsonSchema.formatIssues("Invalid arguments", issues))
    }
    const result = yield* lift(() => tool.def.handler(args, ctx)).pipe(
      Effect.provideService(RequestContext, ctx),
      Effect.map(toCallToolResult),
      Effect.catchTag("ToolError", (e): Effect.Effect<McpSchema.CallToolResult> =>
        Effect.succeed({
          content: e.content === undefined ? [Content.text(e.message)] : toBlocks(e.content),
          ...(e.structuredContent === undefined ? {} : { structuredContent: e.structuredContent }),
          isError: true
        })),
      Effect.catchTag("McpError", (e) => fail(e)),
      Effect.catchAllDefect((defect) =>
        Effect.logError(`tool ${name} failed with a defect`, Cause.die(defect)).pipe(
          Effect.as(errorResult(describeDefect(defect, server.options.exposeErrorMessages === true)))
        )
      )
    )
    if (validator !== undefined && tool.def.outputSchema !== undefined && result.isError !== true) {
      const issues = result.structuredContent === undefined
        ? [{ path: "", message: "structuredContent is missing" }]
        : validator(tool.def.outputSchema, result.structuredContent)
      if (issues.length > 0) {
        yield* Effect.logError(`tool ${name}: ${JsonSchema.formatIssues("result does not match outputSchema", issues)}`)
        return errorResult(JsonSchema.formatIssues("Tool result does not match its outputSchema", issues))
      }
    }
    // Legacy revisions require an object `structuredContent` (protocol.md §24.5).
    if (ctx.era === "legacy" && result.structuredContent !== undefined && !JsonRpc.isObject(result.structuredContent)) {
      const { structuredContent: _dropped, ...rest } = result
      return rest
    }
    return result
  })

/** Legacy revisions require an object root `outputSchema`: a non-object one is not advertised. */
const legacyTool = (tool: McpSchema.Tool): McpSchema.Tool => {
  if (tool.outputSchema === undefined || tool.outputSchema.type === "object") return tool
  const { outputSchema: _dropped, ...rest } = tool
  return rest
}

const describeDefect = (defect: unknown, expose: boolean): string => {
  const name = defect instanceof Error ? defect.name : "Error"
  if (!expose) return name
  const message = defect instanceof Error ? defect.message : String(defect)
  return message.length > 0 ? `${name}: ${message}` : name
}

const decodeBlocks = Schema.decodeUnknownOption(Schema.Array(McpSchema.ContentBlock), { onExcessProperty: "preserve" })

const toBlocks = (u: ReadonlyArray<unknown>): ReadonlyArray<McpSchema.ContentBlock> =>
  Option.getOrElse(decodeBlocks(u), () => [Content.text(JSON.stringify(u))])

const toCallToolResult = (out: Tool.ToolReturn): McpSchema.CallToolResult => {
  if (out === undefined || out === null) return { content: [] }
  if (typeof out === "string") return { content: [Content.text(out)] }
  if (out instanceof Content.Blocks) return { content: out.blocks }
  if (Array.isArray(out.content)) {
    const { content, ...rest } = out
    return { ...rest, content: toBlocks(content) }
  }
  return { content: [Content.text(JSON.stringify(out))], structuredContent: out }
}

// ---------------------------------------------------------------------------------------------
// resources
// ---------------------------------------------------------------------------------------------

const DecodeContents = Schema.decodeUnknownOption(Schema.Array(McpSchema.ResourceContents), {
  onExcessProperty: "preserve"
})

const toContents = (
  uri: string,
  mimeType: string | undefined,
  out: Resource.ResourceReturn
): Effect.Effect<Option.Option<ReadonlyArray<McpSchema.ResourceContents>>> => {
  if (out === undefined || out === null) return Effect.succeedNone
  if (typeof out === "string" || out instanceof Uint8Array) {
    return Effect.succeed(Option.some([Content.resourceContents(uri, out, mimeType)]))
  }
  const list: unknown = Array.isArray(out) ? out : "contents" in out ? out.contents : undefined
  const decoded = DecodeContents(list)
  return Option.isSome(decoded)
    ? Effect.succeed(decoded)
    : Effect.dieMessage("resource handler returned contents that are not {uri, text} or {uri, blob}")
}

const readResource = (
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject,
  ctx: RequestContextShape
): Effect.Effect<JsonRpc.JsonObject, Failure | InputRequired> =>
  Effect.gen(function*() {
    const { uri } = yield* decodeParams(McpSchema.ReadResourceParams, params)
    const run = (
      handler: () => ReturnType<Resource.Resource["handler"]>,
      mimeType: string | undefined
    ) =>
      lift(handler).pipe(
        Effect.provideService(RequestContext, ctx),
        Effect.flatMap((out) => toContents(uri, mimeType, out)),
        Effect.catchTag("McpError", (e) => fail(e))
      )
    const resource = snapshot.resources.find((r) => r.def.uri === uri)
    if (resource !== undefined) {
      const contents = yield* run(() => resource.def.handler(uri, ctx), resource.def.mimeType)
      if (Option.isSome(contents)) return { contents: contents.value }
      return yield* fail(McpError.resourceNotFound(uri))
    }
    for (const template of snapshot.templates) {
      const vars = UriTemplate.match(template.parsed, uri)
      if (Option.isNone(vars)) continue
      const contents = yield* run(() => template.def.handler(vars.value, { ...ctx, uri }), template.def.mimeType)
      if (Option.isSome(contents)) return { contents: contents.value }
      return yield* fail(McpError.resourceNotFound(uri))
    }
    return yield* fail(McpError.resourceNotFound(uri))
  })

// ---------------------------------------------------------------------------------------------
// prompts
// ---------------------------------------------------------------------------------------------

const toMessage = (m: Prompt.MessageInput): McpSchema.PromptMessage =>
  typeof m === "string"
    ? { role: "user", content: Content.text(m) }
    : { role: m.role, content: typeof m.content === "string" ? Content.text(m.content) : m.content }

const getPrompt = (
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject,
  ctx: RequestContextShape
): Effect.Effect<JsonRpc.JsonObject, Failure | InputRequired> =>
  Effect.gen(function*() {
    const decoded = yield* decodeParams(McpSchema.GetPromptParams, params)
    const prompt = snapshot.prompts.find((p) => p.def.name === decoded.name)
    if (prompt === undefined) {
      return yield* fail(McpError.invalidParams(`Unknown prompt: ${decoded.name}`, { name: decoded.name }))
    }
    const args = decoded.arguments ?? {}
    for (const a of prompt.def.arguments ?? []) {
      if (a.required === true && args[a.name] === undefined) {
        return yield* fail(McpError.invalidParams(`Missing required argument: ${a.name}`, { argument: a.name }))
      }
    }
    const out = yield* lift(() => prompt.def.handler(args, ctx)).pipe(
      Effect.provideService(RequestContext, ctx),
      Effect.catchTag("McpError", (e) => fail(e))
    )
    if (typeof out === "string") return { messages: [toMessage(out)] }
    if (Array.isArray(out)) return { messages: out.map(toMessage) }
    const { description, messages } = out as Exclude<Prompt.PromptReturn, string | ReadonlyArray<unknown>>
    return {
      ...(description === undefined ? {} : { description }),
      messages: messages.map(toMessage)
    }
  })

// ---------------------------------------------------------------------------------------------
// completions
// ---------------------------------------------------------------------------------------------

const MAX_COMPLETIONS = 100

const complete = (
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject,
  ctx: RequestContextShape
): Effect.Effect<JsonRpc.JsonObject, Failure | InputRequired> =>
  Effect.gen(function*() {
    const { argument, context, ref } = yield* decodeParams(McpSchema.CompleteParams, params)
    let completers: Readonly<Record<string, Resource.Complete>> | undefined
    if (ref.type === "ref/prompt") {
      const prompt = snapshot.prompts.find((p) => p.def.name === ref.name)
      if (prompt === undefined) {
        return yield* fail(McpError.invalidParams(`Unknown prompt: ${ref.name}`, { name: ref.name }))
      }
      completers = prompt.def.complete
    } else {
      const template = snapshot.templates.find((t) => t.def.uriTemplate === ref.uri)
      if (template === undefined && !snapshot.resources.some((r) => r.def.uri === ref.uri)) {
        return yield* fail(McpError.invalidParams(`Unknown resource or template: ${ref.uri}`, { uri: ref.uri }))
      }
      completers = template?.def.complete
    }
    const fn = completers?.[argument.name]
    if (fn === undefined) return { completion: { values: [] } }
    const out = yield* lift(() => fn(argument.value, context?.arguments ?? {}, ctx)).pipe(
      Effect.provideService(RequestContext, ctx),
      Effect.catchTag("McpError", (e) => fail(e))
    )
    const values = Array.isArray(out) ? out : (out as { readonly values: ReadonlyArray<string> }).values
    const total = Array.isArray(out) ? undefined : (out as { readonly total?: number }).total
    const hasMore = Array.isArray(out) ? undefined : (out as { readonly hasMore?: boolean }).hasMore
    if (values.length > MAX_COMPLETIONS) {
      return {
        completion: {
          values: values.slice(0, MAX_COMPLETIONS),
          total: Math.max(total ?? 0, values.length),
          hasMore: true
        }
      }
    }
    return {
      completion: {
        values,
        ...(total === undefined ? {} : { total }),
        ...(hasMore === undefined ? {} : { hasMore })
      }
    }
  })

// ---------------------------------------------------------------------------------------------
// live changes
// ---------------------------------------------------------------------------------------------

const change = (
  server: Server,
  kind: "tools" | "prompts" | "resources",
  f: (s: Defs.Snapshot) => Either.Either<Defs.Snapshot, Defs.DefinitionError>
): Effect.Effect<void, Defs.DefinitionError> =>
  SubscriptionRef.modifyEffect(server.state, (s) =>
    Either.match(f(s), {
      onLeft: (e) => Effect.fail(e),
      onRight: (next) => Effect.succeed([undefined, { ...next, revision: s.revision + 1 }] as const)
    })).pipe(Effect.zipRight(listChanged(server, kind)))

const rebuild = (s: Defs.Snapshot, patch: {
  readonly tools?: ReadonlyArray<Tool.Tool>
  readonly resources?: ReadonlyArray<Resource.Resource>
  readonly resourceTemplates?: ReadonlyArray<Resource.ResourceTemplate>
  readonly prompts?: ReadonlyArray<Prompt.Prompt>
}) =>
  Defs.build({
    tools: patch.tools ?? s.tools.map((t) => t.def),
    resources: patch.resources ?? s.resources.map((r) => r.def),
    resourceTemplates: patch.resourceTemplates ?? s.templates.map((t) => t.def),
    prompts: patch.prompts ?? s.prompts.map((p) => p.def)
  }, s.revision)

export const addTool = (server: Server, tool: Tool.Tool) =>
  change(server, "tools", (s) => rebuild(s, { tools: [...s.tools.map((t) => t.def), tool] }))
export const removeTool = (server: Server, name: string) =>
  change(server, "tools", (s) => rebuild(s, { tools: s.tools.map((t) => t.def).filter((t) => t.name !== name) }))
export const addResource = (server: Server, resource: Resource.Resource) =>
  change(server, "resources", (s) => rebuild(s, { resources: [...s.resources.map((r) => r.def), resource] }))
export const removeResource = (server: Server, uri: string) =>
  change(
    server,
    "resources",
    (s) => rebuild(s, { resources: s.resources.map((r) => r.def).filter((r) => r.uri !== uri) })
  )
export const addResourceTemplate = (server: Server, template: Resource.ResourceTemplate) =>
  change(server, "resources", (s) => rebuild(s, { resourceTemplates: [...s.templates.map((t) => t.def), template] }))
export const removeResourceTemplate = (server: Server, uriTemplate: string) =>
  change(
    server,
    "resources",
    (s) => rebuild(s, { resourceTemplates: s.templates.map((t) => t.def).filter((t) => t.uriTemplate !== uriTemplate) })
  )
export const addPrompt = (server: Server, prompt: Prompt.Prompt) =>
  change(server, "prompts", (s) => rebuild(s, { prompts: [...s.prompts.map((p) => p.def), prompt] }))
export const removePrompt = (server: Server, name: string) =>
  change(server, "prompts", (s) => rebuild(s, { prompts: s.prompts.map((p) => p.def).filter((p) => p.name !== name) }))

export { statusOf }

// ---------------------------------------------------------------------------------------------
// multi round-trip requests (2026-07-28 input_required)
// ---------------------------------------------------------------------------------------------

const MRTR_METHODS: ReadonlySet<string> = new Set([
  McpSchema.Method.toolsCall,
  McpSchema.Method.promptsGet,
  McpSchema.Method.resourcesRead
])

const targetOf = (request: JsonRpc.Request): { readonly target: string; readonly args: unknown } => {
  const params = request.params ?? {}
  if (request.method === McpSchema.Method.resourcesRead) {
    return { target: typeof params.uri === "string" ? params.uri : "", args: {} }
  }
  return {
    target: typeof params.name === "string" ? params.name : "",
    args: JsonRpc.isObject(params.arguments) ? params.arguments : {}
  }
}

/** Reads `inputResponses` and verifies `requestState` of a modern MRTR-capable request. */
const mrtrInput = (server: Server, request: JsonRpc.Request): Effect.Effect<MrtrInput, Failure> =>
  Effect.gen(function*() {
    const params = request.params ?? {}
    const { args, target } = targetOf(request)
    const argsDigest = yield* InputState.digest(args)
    const raw = params.inputResponses
    if (raw !== undefined && !JsonRpc.isObject(raw)) {
      return yield* fail(McpError.invalidParams("Invalid params: inputResponses must be an object"))
    }
    const fresh: Readonly<Record<string, unknown>> = raw ?? {}
    const rawState = params.requestState
    if (rawState === undefined) return { responses: fresh, state: undefined, target, argsDigest }
    const invalid = McpError.invalidParams("Invalid requestState")
    if (typeof rawState !== "string") return yield* fail(invalid)
    const payload = yield* InputState.verify(server.stateKeys, rawState)
    if (Option.isNone(payload)) return yield* fail(invalid)
    const now = yield* Clock.currentTimeMillis
    const p = payload.value
    if (p.m !== request.method || p.n !== target || p.a !== argsDigest || p.e < now) return yield* fail(invalid)
    return { responses: { ...p.r, ...fresh }, state: p.s, target, argsDigest }
  })

const inputRequiredResult = (
  server: Server,
  request: JsonRpc.Request,
  mrtr: MrtrInput,
  ctx: RequestContextShape,
  e: InputRequired
): Effect.Effect<JsonRpc.JsonObject> =>
  Effect.gen(function*() {
    const appState = yield* Ref.get(ctx.input.state)
    const answered = Object.fromEntries(Object.entries(mrtr.responses).filter(([k]) => !(k in e.requests)))
    const needsState = Object.keys(answered).length > 0 || appState !== undefined
    const now = yield* Clock.currentTimeMillis
    const ttl = Duration.toMillis(Duration.decode(server.options.inputState?.ttl ?? "10 minutes"))
    const requestState = needsState
      ? yield* InputState.sign(server.stateKeys, {
        m: request.method,
        n: mrtr.target,
        a: mrtr.argsDigest,
        r: answered,
        ...(appState === undefined ? {} : { s: appState }),
        e: now + ttl
      })
      : undefined
    return {
      resultType: "input_required",
      inputRequests: e.requests,
      ...(requestState === undefined ? {} : { requestState })
    }
  })
