/**
 * Routing once a request's era is known: its multi round-trip input, its request context, the
 * caller's view of the snapshot, the middlewares, then the method table (eras, capability gate,
 * client requirement, params, handler); and the fields a modern result carries.
 * @internal
 */
import * as Effect from "effect/Effect"
import type { InputRequired } from "../../Input.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import * as Telemetry from "../telemetry.js"
import type { Era } from "./classify.js"
import { fail, Failure } from "./failure.js"
import * as Methods from "./methods.js"
import type { DispatchOptions, Server } from "./model.js"
import { FIRST_ROUND, inputRequiredResult, type MrtrInput, mrtrInput } from "./mrtr.js"
import { makeContext } from "./requestContext.js"
import type * as Defs from "./snapshot.js"
import * as Visibility from "./visibility.js"

const { McpError } = JsonRpc
type McpError = JsonRpc.McpError

/**
 * Answers a request of a known era from `snapshot`. `entry`: the method's row, found when the
 * request was classified. `tool`: for `tools/call`, the tool the request names, found once in
 * `snapshot` (the header check used it already). `finish`: applied to the result in the step that
 * settles the handler's outcome (a modern result's fields: one step fewer than a `map` after it).
 */
export const route = (
  server: Server,
  snapshot: Defs.Snapshot,
  request: JsonRpc.Request,
  era: Era,
  entry: Methods.Entry<JsonRpc.JsonObject> | undefined,
  options: DispatchOptions,
  operation: Telemetry.Operation,
  tool: Defs.CompiledTool | undefined,
  finish?: (result: JsonRpc.JsonObject) => JsonRpc.JsonObject
): Effect.Effect<JsonRpc.JsonObject, Failure> => {
  const params = request.params
  const mrtr = era.era !== "modern" || entry?.mrtr !== true
    ? undefined
    : params?.inputResponses === undefined && params?.requestState === undefined
    ? FIRST_ROUND
    : mrtrInput(server, request)
  if (mrtr instanceof Failure) return Effect.fail(mrtr)
  if (Effect.isEffect(mrtr)) {
    return Effect.flatMap(
      mrtr,
      (input) => routeIn(server, snapshot, request, era, options, operation, entry, tool, input, finish)
    )
  }
  return routeIn(server, snapshot, request, era, options, operation, entry, tool, mrtr, finish)
}

const routeIn = (
  server: Server,
  full: Defs.Snapshot,
  request: JsonRpc.Request,
  era: Era,
  options: DispatchOptions,
  operation: Telemetry.Operation,
  entry: Methods.Entry<JsonRpc.JsonObject> | undefined,
  tool: Defs.CompiledTool | undefined,
  mrtr: MrtrInput | undefined,
  finish: ((result: JsonRpc.JsonObject) => JsonRpc.JsonObject) | undefined
): Effect.Effect<JsonRpc.JsonObject, Failure> => {
  Telemetry.setProtocolVersion(operation, era.protocolVersion)
  const ctx = makeContext(server, request, era, options, mrtr)
  // Capabilities come from the whole snapshot; handlers work on the caller's view, so a hidden
  // definition is absent from lists and unknown when named. `tools/call` needs no view: its
  // target's own predicate decides (a hidden tool is unknown).
  const caps = Methods.capabilities(server, full)
  if (!full.hasVisibility) {
    return runRoute({ server, snapshot: full, caps, request, options, ctx, tool }, entry, mrtr, finish)
  }
  if (request.method === McpSchema.Method.toolsCall) {
    return Effect.flatMap(
      Visibility.visible(tool, ctx),
      (shown) =>
        runRoute(
          { server, snapshot: full, caps, request, options, ctx, tool: shown ? tool : undefined },
          entry,
          mrtr,
          finish
        )
    )
  }
  return Effect.flatMap(
    Visibility.view(full, ctx),
    (view) => runRoute({ server, snapshot: view, caps, request, options, ctx, tool: undefined }, entry, mrtr, finish)
  )
}

/** The middlewares around the method's handler; then how the outcome leaves (`settle`, `finish`). */
const runRoute = (
  call: Methods.Call,
  entry: Methods.Entry<JsonRpc.JsonObject> | undefined,
  mrtr: MrtrInput | undefined,
  finish: ((result: JsonRpc.JsonObject) => JsonRpc.JsonObject) | undefined
): Effect.Effect<JsonRpc.JsonObject, Failure> => {
  const handled = handle(call, entry)
  const middleware = call.server.options.middleware ?? []
  const chain: Effect.Effect<JsonRpc.JsonObject, Failure | McpError | InputRequired> = middleware.length === 0
    ? handled
    : middleware.reduceRight<
      Effect.Effect<JsonRpc.JsonObject, McpError | InputRequired>
    >(
      (next, mw) => mw({ method: call.request.method, params: call.request.params ?? {}, ctx: call.ctx }, next),
      handled.pipe(Effect.catchTag("Failure", (f) => Effect.fail(f.error)))
    )
  if (finish === undefined) return Effect.catchAll(chain, (e) => settle(call, mrtr, e))
  return Effect.matchEffect(chain, {
    onFailure: (e) => Effect.map(settle(call, mrtr, e), finish),
    onSuccess: (result) => Effect.succeed(finish(result))
  })
}

/**
 * The method's row in the table decides: unknown or not served with these capabilities is -32601
 * (HTTP 404; a method of another era was refused when dispatched, `Classify.refusedIn`); then the
 * client capability it requires, then its params, then its handler.
 */
const handle = (
  call: Methods.Call,
  entry: Methods.Entry<JsonRpc.JsonObject> | undefined
): Effect.Effect<JsonRpc.JsonObject, Failure | InputRequired> => {
  if (entry === undefined || !entry.gate(call.caps)) return fail(McpError.methodNotFound(call.request.method), 404)
  const missing = entry.requires?.(call)
  return missing === undefined ? entry.handle(call) : fail(missing)
}

/**
 * How a routed request's error leaves: a `Failure` with its error's own status (as an `McpError`
 * through the middleware would); `input_required` becomes the result that asks for input. A
 * failure of any other type (untyped code despite the declared error types) is a defect: -32603
 * without details, never an `input_required` result.
 */
const settle = (
  call: Methods.Call,
  mrtr: MrtrInput | undefined,
  e: Failure | McpError | InputRequired
): Effect.Effect<JsonRpc.JsonObject, Failure> =>
  e._tag === "Failure"
    ? fail(e.error)
    : e._tag === "McpError"
    ? fail(e)
    : e._tag !== "InputRequired"
    ? Effect.die(e)
    : mrtr === undefined
    ? fail(McpError.internalError(`input_required is not allowed on ${call.request.method}`))
    : inputRequiredResult(call.server, call.request, mrtr, call.ctx, e)

/**
 * A modern result (MCP 2026-07-28, Overview › ResultType; Caching): `resultType` (`"complete"` unless the
 * handler set one), the server's info under its `_meta` key, and, for a cacheable method's complete
 * result, the caching hints `ttlMs` and `cacheScope`.
 */
export const modernResult = (
  server: Server,
  entry: Methods.Entry<JsonRpc.JsonObject> | undefined,
  result: JsonRpc.JsonObject
): JsonRpc.JsonObject => {
  const meta = JsonRpc.isObject(result._meta) ? result._meta : {}
  const out: Record<string, unknown> = {
    resultType: "complete",
    ...result,
    _meta: { ...meta, [McpSchema.MetaKey.serverInfo]: server.info }
  }
  if (out.resultType === "complete" && entry?.cacheable === true) {
    out.ttlMs = Math.max(0, Math.floor(server.options.cache?.ttlMs ?? 0))
    out.cacheScope = server.options.cache?.scope ?? "private"
  }
  return out
}
