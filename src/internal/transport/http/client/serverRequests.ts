/**
 * Server→client requests in a legacy session (MCP 2025-11-25: `sampling/createMessage`,
 * `elicitation/create`, `roots/list`, `ping`), as they arrive on a request's SSE response or the
 * standalone GET stream: each is answered in its own fiber (the stream is read on meanwhile) and
 * the response POSTed with the session headers; the server's `notifications/cancelled` for its
 * request interrupts the answer.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as Ref from "effect/Ref"
import * as JsonRpc from "../../../../JsonRpc.js"
import * as McpSchema from "../../../../McpSchema.js"
import type { RequestHandler } from "../../../../Transport.js"
import { sessionHeaders } from "./headers.js"
import { type Client, drain, post } from "./state.js"

/** Answers `request` with `preferred` (a request's own `onRequest`), else the transport's handler. */
export const answerServer = (
  client: Client,
  request: JsonRpc.Request,
  preferred: RequestHandler | undefined
): Effect.Effect<void> =>
  FiberMap.run(
    client.serverRequests,
    request.id,
    Effect.gen(function*() {
      const response = yield* client.handlers.answer(request, preferred)
      const st = yield* Ref.get(client.state)
      if (st.closed) return
      const reply = yield* post(client, response, sessionHeaders(st))
      yield* drain(client, reply)
      if (reply.status < 200 || reply.status >= 300) {
        yield* Effect.logWarning(
          `Streamable HTTP: the server refused our answer to ${request.method} with HTTP ${reply.status}`
        )
      }
    }).pipe(
      Effect.catchAll((e) => Effect.logWarning(`Streamable HTTP: could not answer ${request.method}: ${e.message}`))
    ),
    { onlyIfMissing: true }
  ).pipe(Effect.asVoid)

/** The server's `notifications/cancelled` for one of its own requests stops our answer. */
export const serverCancelled = (client: Client, notification: JsonRpc.Notification): Effect.Effect<void> => {
  const requestId = notification.params?.requestId
  return notification.method === McpSchema.Method.cancelled && JsonRpc.isRequestId(requestId)
    ? FiberMap.remove(client.serverRequests, requestId)
    : Effect.void
}
