/**
 * The server core: one message in, at most one out.
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Tracer from "effect/Tracer"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import * as Telemetry from "../telemetry.js"
import * as HeaderRules from "./headerAgreement.js"
import type * as Methods from "./methods.js"
import type * as Defs from "./snapshot.js"

import { type Classification, classify, type Era, refusedIn } from "./classify.js"
import { fail, Failure, invalidParamsFrom } from "./failure.js"
import { capabilities } from "./make.js"
import type { DispatchOptions, Reply, Server, Session } from "./model.js"
import { modernResult, route } from "./route.js"
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
} from "./liveChanges.js"
export { capabilities, make } from "./make.js"
export * from "./model.js"
export { listChanged, resourceUpdated, sessionNotifications, shutdown } from "./subscriptions.js"
const { McpError } = JsonRpc
type McpError = JsonRpc.McpError

export type { Era } from "./classify.js"
export { isModern } from "./classify.js"

const isSupportedModern = (server: Server, version: string): boolean =>
  McpSchema.isProtocolVersion(version) && McpSchema.isModernVersion(version) && server.versions.includes(version)

// ---------------------------------------------------------------------------------------------
// dispatch
// ---------------------------------------------------------------------------------------------

/**
 * The error response to a message that is not a valid request (unreadable JSON, a bad envelope),
 * on every transport. Without a readable id: `"id": null` in a 2025-06-18 session, whose schema
 * requires an id (JSON-RPC: null when unreadable); later revisions make it optional and do not
 * admit null, so there (and without a session) it is omitted.
 */
export const invalidResponse = (
  session: Session | undefined,
  id: JsonRpc.RequestId | undefined,
  error: JsonRpc.McpError
): Effect.Effect<JsonRpc.Response> =>
  id !== undefined || session === undefined
    ? Effect.succeed(JsonRpc.failure(id, error))
    : Effect.map(Ref.get(session.state), (s) =>
      s?.protocolVersion === "2025-06-18" ? JsonRpc.failureWithNullId(error) : JsonRpc.failure(undefined, error))

/** Handles one decoded JSON value. Never fails: every problem becomes a reply. */
export const dispatch = (
  server: Server,
  message: unknown,
  options: DispatchOptions = {}
): Effect.Effect<Option.Option<Reply>> => dispatchClassified(server, JsonRpc.classify(message), options)

/** Handles one classified message (classified once, by the transport). Never fails. */
export const dispatchClassified = (
  server: Server,
  classified: JsonRpc.Classified,
  options: DispatchOptions = {}
): Effect.Effect<Option.Option<Reply>> => {
  switch (classified._tag) {
    case "Invalid":
      return Effect.map(
        invalidResponse(options.session, classified.id, classified.error),
        (message) => Option.some({ message, status: 400 })
      )
    case "Response":
      return Effect.succeedNone
    case "Notification":
      return handleNotification(classified.message, options).pipe(Effect.as(Option.none()))
    case "Request":
      return Effect.map(dispatchRequest(server, classified.message, options), Option.some)
  }
}

/**
 * Handles one request to its reply: what a connection runs for each request. `classification`:
 * what the transport made of the request at its edge (`Classify.classify`); classified here when
 * the transport did not. Never fails; an interruption (the request was cancelled) stays one.
 */
export const dispatchRequest = (
  server: Server,
  request: JsonRpc.Request,
  options: DispatchOptions,
  classification?: Classification
): Effect.Effect<Reply> =>
  // The request's telemetry (internal/telemetry.ts): its SERVER span when a tracer is installed or
  // the caller's `_meta.traceparent` is to be continued (named and attributed by the OpenTelemetry
  // MCP conventions, ended with the reply's outcome, the parent of whatever the request traces;
  // the defect log below runs beneath it too), and its duration metric.
  Telemetry.serverRequest(
    request,
    options.peer,
    server.options.telemetry,
    server.context.unsafeMap.has(Tracer.ParentSpan.key),
    (operation, trace) =>
      Effect.matchCauseEffect(
        inEnvironment(
          server,
          handleRequest(
            server,
            request,
            classification ?? classify(server, request, options.headers),
            options,
            operation
          ),
          operation.span,
          trace
        ),
        {
          onSuccess: (result) => Effect.succeed<Reply>({ message: JsonRpc.success(request.id, result), status: 200 }),
          onFailure: (cause) => failureReply(request, operation, cause)
        }
      )
  )

/**
 * The environment a request runs in, provided once (each provision costs a context copy and two
 * fiber-ref writes): the environment captured by `make` (what the handlers and middlewares need)
 * as a fallback beneath the request's own (the transport's services), the request's span if it
 * has one (the parent of whatever the request traces) and the caller's trace context if any.
 * Middlewares provide their services above it. `current` itself when that adds nothing: no span,
 * no trace context, and every captured service already in `current` (a server built in a Layer
 * holds a `Scope`, and so does its transport's or caller's environment; merged beneath `current`
 * they would all be shadowed: bench/README.md, "Issue #24: in-process, session 9").
 */
const requestEnvironment = (
  server: Server,
  current: Context.Context<never>,
  span: Tracer.Span | undefined,
  trace: Telemetry.TraceContext["Type"] | undefined
): Context.Context<never> => {
  const base = covers(current, server.context.unsafeMap) ? current : Context.merge(server.context, current)
  const withSpan = span === undefined ? base : Context.add(base, Tracer.ParentSpan, span)
  return trace === undefined ? withSpan : Context.add(withSpan, Telemetry.TraceContext, trace)
}

/**
 * `effect` in its request's environment ({@link requestEnvironment}); as it is when that is the
 * current one (no context copy, no fiber-ref writes), with no step at all when the server captured
 * nothing and there is no span or trace context (the default without a tracer).
 */
const inEnvironment = <A, E>(
  server: Server,
  effect: Effect.Effect<A, E>,
  span: Tracer.Span | undefined,
  trace: Telemetry.TraceContext["Type"] | undefined
): Effect.Effect<A, E> => {
  if (span === undefined && trace === undefined && server.context.unsafeMap.size === 0) return effect
  return Effect.withFiberRuntime((fiber) => {
    const current = fiber.currentContext
    const environment = requestEnvironment(server, current, span, trace)
    return environment === current ? effect : Effect.locally(effect, FiberRef.currentContext, environment)
  })
}

/** Does `context` hold a service under every key of `keys`? */
const covers = (context: Context.Context<never>, keys: ReadonlyMap<string, unknown>): boolean => {
  const own = context.unsafeMap
  for (const key of keys.keys()) {
    if (!own.has(key)) return false
  }
  return true
}

/**
 * The reply to a request that did not succeed: its `Failure` as an error response (with the
 * failure's HTTP status); a defect logged (beneath the request's span) and answered with -32603;
 * an interruption stays one (the request sends no response). One handler for the three, as
 * `catchAll` then `catchAllDefect` would decide them, in that order.
 */
const failureReply = (
  request: JsonRpc.Request,
  operation: Telemetry.Operation,
  cause: Cause.Cause<Failure>
): Effect.Effect<Reply> => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    return Effect.succeed({ message: JsonRpc.failure(request.id, failure.value.error), status: failure.value.status })
  }
  const defect = Cause.dieOption(cause)
  if (Option.isNone(defect)) return Effect.failCause(Cause.stripFailures(cause))
  const logged = Effect.logError(`${request.method} failed with a defect`, Cause.die(defect.value))
  return (operation.span === undefined ? logged : Effect.withParentSpan(logged, operation.span)).pipe(
    Effect.as<Reply>({ message: JsonRpc.failure(request.id, McpError.internalError()), status: 200 })
  )
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
  classification: Classification,
  options: DispatchOptions,
  operation: Telemetry.Operation
): Effect.Effect<JsonRpc.JsonObject, Failure> => {
  const era = classification.era
  if (era instanceof Failure) return Effect.fail(era)
  return Effect.flatMap(
    SubscriptionRef.get(server.state),
    (snapshot) =>
      era === "legacy"
        ? handleLegacy(server, snapshot, request, classification.entry, options, operation)
        : handleModern(server, snapshot, request, era, classification.entry, options, operation)
  )
}

/** The tool a `tools/call` names, found once in the request's snapshot (the target of every later step). */
const targetOf = (snapshot: Defs.Snapshot, request: JsonRpc.Request): Defs.CompiledTool | undefined => {
  if (request.method !== McpSchema.Method.toolsCall) return undefined
  const name = request.params?.name
  return typeof name === "string" ? snapshot.toolsByName.get(name) : undefined
}

const handleModern = (
  server: Server,
  snapshot: Defs.Snapshot,
  request: JsonRpc.Request,
  era: Era,
  entry: Methods.Entry<JsonRpc.JsonObject> | undefined,
  options: DispatchOptions,
  operation: Telemetry.Operation
): Effect.Effect<JsonRpc.JsonObject, Failure> => {
  const tool = targetOf(snapshot, request)
  if (options.headers !== undefined) {
    const mismatch = HeaderRules.checkClassified(request, era.protocolVersion, options.headers, tool?.headerParams)
    if (Option.isSome(mismatch)) return fail(mismatch.value, 400)
  }
  if (!isSupportedModern(server, era.protocolVersion)) {
    return fail(McpError.unsupportedVersion(server.versions, era.protocolVersion), 400)
  }
  if (refusedIn("modern", request.method, entry)) return fail(McpError.methodNotFound(request.method), 404)
  return route(
    server,
    snapshot,
    request,
    era,
    entry,
    options,
    operation,
    tool,
    (result) => modernResult(server, entry, result)
  )
}

const handleLegacy = (
  server: Server,
  snapshot: Defs.Snapshot,
  request: JsonRpc.Request,
  entry: Methods.Entry<JsonRpc.JsonObject> | undefined,
  options: DispatchOptions,
  operation: Telemetry.Operation
): Effect.Effect<JsonRpc.JsonObject, Failure> => {
  if (request.method === McpSchema.Method.initialize) {
    return initialize(server, snapshot, request.params ?? {}, options)
  }
  return Effect.flatMap(
    options.session === undefined ? Effect.succeed(undefined) : Ref.get(options.session.state),
    (session) => {
      if (session === undefined) {
        if (request.method === McpSchema.Method.ping) return Effect.succeed({})
        const legacy = server.versions.filter((v) => !McpSchema.isModernVersion(v))
        return fail(
          McpError.invalidParams(
            legacy.length > 0
              ? "No session: send initialize first, or send a 2026-07-28 request with params._meta"
              : "Missing params._meta: this server speaks 2026-07-28 only",
            { supported: server.versions }
          ),
          400
        )
      }
      if (refusedIn("legacy", request.method, entry)) return fail(McpError.methodNotFound(request.method), 404)
      const era: Era = {
        era: "legacy",
        protocolVersion: session.protocolVersion,
        clientInfo: session.clientInfo,
        clientCapabilities: session.clientCapabilities
      }
      return route(server, snapshot, request, era, entry, options, operation, targetOf(snapshot, request))
    }
  )
}

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
