/**
 * The legacy session of the Streamable HTTP client (MCP 2025-11-25, Transports › Streamable
 * HTTP › Session Management): a `404` for the session re-initializes (the client MUST start a new
 * session), an interrupted request is cancelled with a notification (a disconnect is not a
 * cancellation there), and closing the transport DELETEs the session.
 *
 * @internal
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as JsonRpc from "../../../../JsonRpc.js"
import * as McpSchema from "../../../../McpSchema.js"
import type { TransportError } from "../../../../Transport.js"
import { modernVersionOf, sessionHeaders } from "./headers.js"
import { notify, observe, send } from "./post.js"
import { type Client, drain, http404, type State, userHeaders } from "./state.js"

/**
 * The session `stale` expired: drop it, replay `initialize` + `notifications/initialized` once
 * (one recovery at a time; a later caller with the same stale id finds it done).
 */
export const recover = (client: Client, stale: string): Effect.Effect<void, TransportError> =>
  client.recovering.withPermits(1)(Effect.gen(function*() {
    const st = yield* Ref.get(client.state)
    if (st.sessionId !== stale) return
    if (st.init === undefined) return yield* http404("the session expired and there is no initialize to replay")
    const cleared = yield* Ref.updateAndGet(
      client.state,
      (s) => ({ ...s, sessionId: undefined, protocolVersion: undefined })
    )
    const outcome = yield* send(client, st.init, cleared)
    if (outcome._tag !== "Response" || JsonRpc.isErrorResponse(outcome.response)) {
      return yield* http404("the session expired and re-initialization failed")
    }
    yield* observe(client, st.init, outcome)
    yield* notify(client, JsonRpc.notification(McpSchema.Method.initialized))
  }))

/** An interrupted legacy request is cancelled with `notifications/cancelled`, in the background. */
export const cancelLegacy = (client: Client, message: JsonRpc.Request, st: State): Effect.Effect<void> =>
  st.sessionId === undefined || message.method === McpSchema.Method.initialize ||
    modernVersionOf(message) !== undefined
    ? Effect.void
    : notify(client, JsonRpc.notification(McpSchema.Method.cancelled, { requestId: message.id, reason: "interrupted" }))
      .pipe(
        Effect.timeout(client.closeTimeout),
        Effect.catchAll((e) => Effect.logDebug(`Streamable HTTP: could not send notifications/cancelled: ${e}`)),
        Effect.forkIn(client.scope),
        Effect.asVoid
      )

/** The transport's `close`: closed for good; a legacy session is DELETEd, best effort. */
export const close = (client: Client): Effect.Effect<void> =>
  Effect.gen(function*() {
    const st = yield* Ref.getAndUpdate(client.state, (s) => ({ ...s, closed: true }))
    if (st.closed || st.sessionId === undefined) return
    const headers: Record<string, string> = { ...(yield* userHeaders(client, "DELETE")), ...sessionHeaders(st) }
    yield* client.http.execute(HttpClientRequest.del(client.url).pipe(HttpClientRequest.setHeaders(headers))).pipe(
      Effect.flatMap((response) => drain(client, response)),
      Effect.timeout(client.closeTimeout),
      Effect.catchAll((e) => Effect.logDebug(`Streamable HTTP: DELETE of the session failed: ${e}`))
    )
  })
