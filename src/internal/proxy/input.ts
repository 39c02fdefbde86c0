/**
 * Input forwarding through the proxy (MCP 2026-07-28 multi round-trip requests; MCP 2025-11-25, Client Features): a backend's question
 * (elicitation, sampling, roots) is asked of the proxy's own caller with `Input.ask`.
 *
 * - A legacy caller gets a real server→client request and the answer goes back to the backend.
 * - A modern caller has no answer yet on the first run: the question is recorded in the call's
 *   `pending` record, the backend gets an error, and the proxy's handler ends with `InputRequired`
 *   (so the caller gets `input_required`). On the caller's retry the handler calls the backend
 *   again from the start; the backend asks the same question (same key, derived from its params)
 *   and this time `Input.ask` finds the answer among the caller's `inputResponses`.
 *
 * Backend questions arrive two ways: a modern backend's `input_required` rounds are answered by the
 * client's input handlers inside the calling fiber (found through {@link currentCaller}); a legacy
 * backend's server→client requests come to the call's own `onRequest` (in-process and HTTP; stdio
 * has no per-request channel).
 * @internal
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Input from "../../Input.js"
import * as JsonRpc from "../../JsonRpc.js"
import type * as McpClient from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import { RequestContext, type RequestContextShape } from "../../RequestContext.js"
import type { RequestHandler } from "../../Transport.js"

/**
 * The proxied request a backend call belongs to: its context, the questions still open, and the
 * prefix of the backend called (named in every question relayed to the caller).
 */
export interface Caller {
  readonly ctx: RequestContextShape
  readonly pending: Ref.Ref<Readonly<Record<string, Input.InputRequest>>>
  readonly backend: string
}

/** The `_meta` key naming the backend a relayed question comes from (documented on `McpProxy.BACKEND`). */
export const BACKEND_META_KEY = "presa-mcp/backend" as const

/**
 * A backend's question as the proxy relays it: `_meta["presa-mcp/backend"]` is the backend's
 * prefix (whatever the backend put there), and an elicitation's `message`, which the user reads,
 * starts with `[<prefix>] ` — so a backend cannot pass its question off as another's (unchanged for
 * the empty prefix: the proxy's only backend has no other to pass for). Sampling
 * and roots keep their params otherwise (their messages are the model's input).
 */
export const labelled = (backend: string, request: Input.InputRequest): Input.InputRequest => {
  const params = request.params ?? {}
  const meta = JsonRpc.isObject(params._meta) ? params._meta : {}
  const message = request.method === "elicitation/create" && typeof params.message === "string" && backend !== ""
    ? { message: `[${backend}] ${params.message}` }
    : {}
  return { method: request.method, params: { ...params, ...message, _meta: { ...meta, [BACKEND_META_KEY]: backend } } }
}

/** The caller of the backend call running in this fiber (set by the proxy around each call). */
export const currentCaller: FiberRef.FiberRef<Option.Option<Caller>> = FiberRef.unsafeMake<Option.Option<Caller>>(
  Option.none()
)

/** The message of the error a backend gets while the proxy's modern caller has not answered yet. */
export const NOT_ANSWERED_YET = "The proxy's caller has not answered this question yet"

const AnyObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** Asks the caller (the question {@link labelled}); an open question (modern) is recorded and fails with -32603. */
export const ask = <A, I>(
  caller: Caller,
  request: Input.InputRequest,
  schema: Schema.Schema<A, I>
): Effect.Effect<A, JsonRpc.McpError> =>
  Input.ask(labelled(caller.backend, request), schema).pipe(
    Effect.provideService(RequestContext, caller.ctx),
    Effect.catchTag("InputRequired", (e) =>
      Ref.update(caller.pending, (p) => ({ ...p, ...e.requests })).pipe(
        Effect.zipRight(Effect.fail(JsonRpc.McpError.internalError(NOT_ANSWERED_YET)))
      ))
  )

const noCaller = JsonRpc.McpError.internalError("No proxied request to ask for input")

const fromFiber = <A>(f: (caller: Caller) => Effect.Effect<A, JsonRpc.McpError>): Effect.Effect<A, JsonRpc.McpError> =>
  Effect.flatMap(
    FiberRef.get(currentCaller),
    Option.match({ onNone: () => Effect.fail(noCaller), onSome: f })
  )

/**
 * The caller of a question that arrived outside any call (a legacy stdio backend, or a legacy HTTP
 * backend's standalone GET stream: MCP 2025-11-25 gives such a request nothing that names the
 * call it belongs to): the one proxied call in flight to that backend. With none, or several,
 * the proxy cannot tell whom to ask and the backend gets -32603 saying so (asking the wrong
 * caller could show one user's question to another).
 */
const fromCallers = <A>(
  callers: Ref.Ref<ReadonlyArray<Caller>>,
  f: (caller: Caller) => Effect.Effect<A, JsonRpc.McpError>
): Effect.Effect<A, JsonRpc.McpError> =>
  Effect.flatMap(FiberRef.get(currentCaller), (inFiber) => {
    if (Option.isSome(inFiber)) return f(inFiber.value)
    return Effect.flatMap(Ref.get(callers), (cs) => {
      const only = cs.length === 1 ? cs[0] : undefined
      if (only !== undefined) return f(only)
      return Effect.fail(
        cs.length === 0 ? noCaller : JsonRpc.McpError.internalError(
          `The proxy has ${cs.length} calls in flight to this server and cannot tell which one asks for input`
        )
      )
    })
  })

/**
 * The input handlers the proxy gives a backend it connects itself: like {@link inputHandlers},
 * and a question that arrives outside any call goes to the one proxied call in flight to that
 * backend (`callers`).
 */
export const backendHandlers = (
  callers: Ref.Ref<ReadonlyArray<Caller>>
): Pick<McpClient.Options, "onElicit" | "onSample" | "onRoots" | "elicitUrl"> => ({
  onElicit: (params) =>
    fromCallers(
      callers,
      (c) => ask(c, { method: McpSchema.ClientMethod.elicitationCreate, params }, Input.ElicitResult)
    ),
  onSample: (params) =>
    fromCallers(
      callers,
      (c) => ask(c, { method: McpSchema.ClientMethod.samplingCreateMessage, params }, Input.CreateMessageResult)
    ),
  onRoots: () =>
    fromCallers(
      callers,
      (c) => ask(c, { method: McpSchema.ClientMethod.rootsList, params: {} }, Input.ListRootsResult)
    ),
  elicitUrl: true
})

/** The client input handlers that forward to the caller in this fiber. */
export const inputHandlers: Pick<McpClient.Options, "onElicit" | "onSample" | "onRoots" | "elicitUrl"> = {
  onElicit: (params) =>
    fromFiber((c) => ask(c, { method: McpSchema.ClientMethod.elicitationCreate, params }, Input.ElicitResult)),
  onSample: (params) =>
    fromFiber((c) =>
      ask(c, { method: McpSchema.ClientMethod.samplingCreateMessage, params }, Input.CreateMessageResult)
    ),
  onRoots: () =>
    fromFiber((c) => ask(c, { method: McpSchema.ClientMethod.rootsList, params: {} }, Input.ListRootsResult)),
  elicitUrl: true
}

const INPUT_METHODS = [
  McpSchema.ClientMethod.elicitationCreate,
  McpSchema.ClientMethod.samplingCreateMessage,
  McpSchema.ClientMethod.rootsList
] as const

/** Answers a legacy backend's server→client request of one call by asking that call's caller. */
export const requestHandler = (caller: Caller): RequestHandler => (request) => {
  if (request.method === McpSchema.Method.ping) return Effect.succeed(JsonRpc.success(request.id, {}))
  const method = INPUT_METHODS.find((m) => m === request.method)
  if (method === undefined) {
    return Effect.succeed(JsonRpc.failure(request.id, JsonRpc.McpError.methodNotFound(request.method)))
  }
  return ask(caller, { method, params: request.params ?? {} }, AnyObject).pipe(
    Effect.map((result): JsonRpc.Response => JsonRpc.success(request.id, result)),
    Effect.catchTag("McpError", (e) => Effect.succeed(JsonRpc.failure(request.id, e)))
  )
}
