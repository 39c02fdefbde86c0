/**
 * Pieces the client transports share: answering server→client requests (legacy sessions: MCP
 * 2025-11-25, Elicitation, Sampling, Roots, and Basic › Utilities › Ping) with a per-request
 * handler, a transport-level handler or the default.
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type { RequestHandler } from "../../Transport.js"

/** `ping` → `{}`; anything else → -32601. */
export const defaultHandler: RequestHandler = (request) =>
  Effect.succeed(
    request.method === McpSchema.Method.ping
      ? JsonRpc.success(request.id, {})
      : JsonRpc.failure(request.id, JsonRpc.McpError.methodNotFound(request.method))
  )

/** The transport-level handler of server→client requests, replaceable at any time. */
export interface RequestHandlers {
  readonly set: (handler: RequestHandler | undefined) => Effect.Effect<void>
  /**
   * Answers `request` with `preferred` (a request's own `onRequest`), else the transport-level
   * handler, else {@link defaultHandler}. A handler's defect is logged and answered -32603; the
   * response always carries the request's id.
   */
  readonly answer: (request: JsonRpc.Request, preferred?: RequestHandler | undefined) => Effect.Effect<JsonRpc.Response>
}

export const makeRequestHandlers = (initial: RequestHandler | undefined): Effect.Effect<RequestHandlers> =>
  Effect.map(Ref.make(initial), (ref) => ({
    set: (handler) => Ref.set(ref, handler),
    answer: (request, preferred) =>
      Effect.flatMap(Ref.get(ref), (installed) => (preferred ?? installed ?? defaultHandler)(request)).pipe(
        Effect.map((response): JsonRpc.Response =>
          response.id === request.id ? response : JsonRpc.isErrorResponse(response)
            ? { jsonrpc: "2.0", id: request.id, error: response.error }
            : JsonRpc.success(request.id, response.result)
        ),
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logError(`answering the server's ${request.method} request failed`, cause).pipe(
              Effect.as(JsonRpc.failure(request.id, JsonRpc.McpError.internalError()))
            )
        )
      )
  }))
