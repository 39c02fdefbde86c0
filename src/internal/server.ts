/**
 * The server core: one message in, at most one out.
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type { InputRequired } from "../Input.js"
import * as JsonRpc from "../JsonRpc.js"
import * as McpSchema from "../McpSchema.js"
import { type RequestContextShape } from "../RequestContext.js"
import * as Defs from "./definitions.js"
import * as Headers from "./headers.js"
import * as InputState from "./inputState.js"

import * as Skill from "../Skill.js"
import * as Task from "../Task.js"
import { inputRequiredResult, makeContext, MRTR_METHODS, mrtrInput } from "./context.js"
import { decodeParams, fail, Failure, invalidParamsFrom } from "./failure.js"
import { callTool, complete, getPrompt, getSkill, legacyTool, page, readDirectory, readResource } from "./handlers.js"
import { listen, subscribe } from "./subscriptions.js"
import * as Tasks from "./tasks.js"
import type { AnyOptions, ChangeEvent, DispatchOptions, Options, Reply, Server } from "./types.js"
import * as Visibility from "./visibility.js"
export { statusOf } from "./failure.js"
export {
  addPrompt,
  addResource,
  addResourceTemplate,
  addSkill,
  addTool,
  removePrompt,
  removeResource,
  removeResourceTemplate,
  removeSkill,
  removeTool
} from "./live.js"
export { listChanged, resourceUpdated, sessionNotifications, shutdown } from "./subscriptions.js"
export * from "./types.js"
const { McpError } = JsonRpc
type McpError = JsonRpc.McpError

/**
 * Builds a server and captures its environment (`Effect.context`): dispatch provides it to every
 * request, beneath the request's own environment and what the middlewares provide. `McpServer.make` types what that environment must hold; here the
 * definitions' service types are erased.
 */
export const make = <S = never>(typed: AnyOptions): Effect.Effect<Server<S>, Defs.DefinitionError> =>
  Effect.gen(function*() {
    const options = typed as Options
    const context = yield* Effect.context<never>()
    const skills = yield* Effect.forEach(options.skills ?? [], Defs.compileSkill)
    const snapshot = yield* Defs.build({ ...options, skills }, 1)
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
    const tasks = options.tasks === undefined ? undefined : yield* Tasks.makeRuntime(options.tasks, shutdown)
    return { info, options, context, versions, state, events, shutdown, stateKeys, tasks }
  })

// ---------------------------------------------------------------------------------------------
// capabilities
// ---------------------------------------------------------------------------------------------

export const capabilities = (server: Server, snapshot: Defs.Snapshot): McpSchema.ServerCapabilities => {
  const caps: Record<string, Record<string, unknown>> = {}
  const listChanged = server.options.listChanged === true ? { listChanged: true } : {}
  if (snapshot.tools.length > 0) caps.tools = { ...listChanged }
  if (snapshot.resources.length > 0 || snapshot.templates.length > 0 || snapshot.skills.length > 0) {
    caps.resources = { ...(server.options.subscribe === true ? { subscribe: true } : {}), ...listChanged }
  }
  if (snapshot.prompts.length > 0) caps.prompts = { ...listChanged }
  const completes = snapshot.prompts.some((p) => p.def.complete !== undefined) ||
    snapshot.templates.some((t) => t.def.complete !== undefined)
  if (completes) caps.completions = {}
  if (server.options.logging === true) caps.logging = {}
  // Skills extension (SEP-2640): declared only when skills are served; settings inline.
  if (snapshot.skills.length > 0) caps.extensions = { [Skill.EXTENSION_ID]: { directoryRead: true } }
  // Tasks extension (SEP-2663): declared when the `tasks` option is set; no settings.
  if (server.tasks !== undefined) caps.extensions = { ...caps.extensions, [Task.EXTENSION_ID]: {} }
  return caps
}

// ---------------------------------------------------------------------------------------------
// eras and request metadata
// ---------------------------------------------------------------------------------------------

export interface Era {
  readonly era: "modern" | "legacy"
  readonly protocolVersion: string
  readonly clientInfo: McpSchema.Implementation | undefined
  readonly clientCapabilities: McpSchema.ClientCapabilities
}

// Hot path: the capability and client-info objects are open objects; a guard is enough (and far
// cheaper than a Schema decode on every request).
const KNOWN_CLIENT_CAPABILITIES = ["roots", "sampling", "elicitation", "experimental", "extensions"] as const
const decodeClientCapabilities = (u: unknown): Option.Option<McpSchema.ClientCapabilities> =>
  JsonRpc.isObject(u) && KNOWN_CLIENT_CAPABILITIES.every((k) => u[k] === undefined || JsonRpc.isObject(u[k]))
    ? Option.some(u)
    : Option.none()
const decodeImplementation = (u: unknown): Option.Option<McpSchema.Implementation> =>
  JsonRpc.isObject(u) && typeof u.name === "string" && typeof u.version === "string"
    ? Option.some({ ...u, name: u.name, version: u.version })
    : Option.none()

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
        Effect.tap((reply) =>
          Effect.annotateCurrentSpan(
            JsonRpc.isErrorResponse(reply.message)
              ? { "mcp.outcome": "error", "mcp.error.code": reply.message.error.code }
              : { "mcp.outcome": reply.message.result.isError === true ? "tool_error" : "ok" }
          )
        ),
        Effect.withSpan(request.method, {
          kind: "server",
          captureStackTrace: false,
          attributes: {
            "mcp.method": request.method,
            "jsonrpc.request.id": String(request.id),
            ...spanName(request)
          }
        }),
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

const CACHEABLE: ReadonlySet<string> = new Set([
  McpSchema.Method.discover,
  McpSchema.Method.toolsList,
  McpSchema.Method.promptsList,
  McpSchema.Method.resourcesList,
  Skill.Method.list,
  Skill.Method.get,
  Skill.Method.directoryRead,
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
    yield* Effect.annotateCurrentSpan({ "mcp.era": era.era, "mcp.protocol_version": era.protocolVersion })
    const ctx = yield* makeContext(server, request, era, options, mrtr)
    const view = yield* Visibility.view(snapshot, ctx)
    const handled = routeWith(server, snapshot, view, request, options, ctx)
    const chain = (server.options.middleware ?? []).reduceRight<
      Effect.Effect<JsonRpc.JsonObject, McpError | InputRequired>
    >(
      (next, mw) => mw({ method: request.method, params: request.params ?? {}, ctx }, next),
      handled.pipe(Effect.catchIf((e): e is Failure => e instanceof Failure, (f) => Effect.fail(f.error)))
    )
    // The environment captured by `make` (what the handlers and middlewares need) as a fallback
    // beneath the request's own (its span, the transport's services) and what the middlewares
    // provide; skipped when it is empty.
    const provided = server.context.unsafeMap.size === 0
      ? chain
      : Effect.mapInputContext(chain, (current: Context.Context<never>) => Context.merge(server.context, current))
    return yield* provided.pipe(
      Effect.catchTag("McpError", (e) => fail(e)),
      Effect.catchTag("InputRequired", (e) =>
        mrtr === undefined
          ? fail(McpError.internalError(`input_required is not allowed on ${request.method}`))
          : inputRequiredResult(server, request, mrtr, ctx, e))
    )
  })

/**
 * Routes by method. `full` is the whole snapshot (capabilities are derived from it); `snapshot` is
 * the caller's view (hidden definitions filtered out), which every handler works on, so a hidden
 * definition is absent from lists and unknown when named.
 */
const routeWith = (
  server: Server,
  full: Defs.Snapshot,
  snapshot: Defs.Snapshot,
  request: JsonRpc.Request,
  options: DispatchOptions,
  ctx: RequestContextShape
): Effect.Effect<JsonRpc.JsonObject, Failure | InputRequired> => {
  const params = request.params ?? {}
  const caps = capabilities(server, full)
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
      return gated("resources", () =>
        page(
          server,
          snapshot,
          params,
          [
            ...snapshot.resources.map((r) => r.wire),
            ...snapshot.skills.filter((s) => !s.skill.unlisted).map((s) => s.wire)
          ],
          "resources",
          (r) => r
        ))
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
    case Skill.Method.list:
      return gated(
        "extensions",
        () => page(server, snapshot, params, snapshot.skills.filter((s) => !s.skill.unlisted), "skills", (s) => s.entry)
      )
    case Skill.Method.get:
      return gated("extensions", () => getSkill(snapshot, params))
    case Skill.Method.directoryRead:
      return gated("extensions", () => readDirectory(server, snapshot, params))
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
        ? Effect.zipRight(
          Tasks.checkListen(server.tasks, params, ctx),
          listen(server, caps, request, ctx, options.shutdown)
        )
        : fail(McpError.methodNotFound(request.method), 404)
    case Task.Method.get:
    case Task.Method.update:
    case Task.Method.cancel:
      return server.tasks === undefined || ctx.era === "legacy"
        ? fail(McpError.methodNotFound(request.method), 404)
        : Tasks.handle(server.tasks, request.method, params, ctx)
    case McpSchema.Method.resourcesSubscribe:
    case McpSchema.Method.resourcesUnsubscribe:
      return caps.resources?.subscribe === true
        ? subscribe(options, params, request.method === McpSchema.Method.resourcesSubscribe)
        : fail(McpError.methodNotFound(request.method), 404)
    default:
      return fail(McpError.methodNotFound(request.method), 404)
  }
}

/** Span attributes naming what a request targets (tool / prompt name, resource URI). */
const spanName = (request: JsonRpc.Request): Record<string, string> => {
  const name = Headers.nameOf(request.method, request.params)
  if (name === undefined) return {}
  return request.method === McpSchema.Method.resourcesRead ? { "mcp.resource.uri": name } : { "mcp.name": name }
}
