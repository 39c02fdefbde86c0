/**
 * The stdio client's message-level protocol under the connection core
 * (`internal/client/connection`): a message is one line on the current process's stdin (MCP
 * 2025-11-25, Transports › stdio); a request sent while a process is being restarted waits for
 * it; an abandoned request is told with `notifications/cancelled` (never for `initialize`: MCP
 * 2025-11-25, Utilities › Cancellation, and the schema's `CancelledNotification`); the session's
 * notifications come from the current process. Also the transport's `request` and `notify`,
 * which keep the legacy handshake that a restart replays (`lifecycle`).
 *
 * The request path is the hot one (bench/README.md, "Issue #24: client, session 8"): a request
 * is written in the step that enters it in the core's table, with no fiber, queue, Deferred or
 * Ref read per request beyond the caller's own wait.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as MutableRef from "effect/MutableRef"
import * as Ref from "effect/Ref"
import * as JsonRpc from "../../../../JsonRpc.js"
import * as McpSchema from "../../../../McpSchema.js"
import type { RequestOptions, TransportError } from "../../../../Transport.js"
import * as Core from "../../../client/connection.js"
import { type Base, type Client, closedError, type Connection } from "./state.js"

/** Writes one message as a line, now; `false` when the process is gone. */
const writeLine = (send: Connection["send"], message: JsonRpc.Message): boolean => send(JsonRpc.encode(message) + "\n")

/** {@link writeLine} when the Effect runs. */
export const sendOn = (send: Connection["send"], message: JsonRpc.Message): Effect.Effect<boolean> =>
  Effect.sync(() => writeLine(send, message))

/** The core's `write` on one given process (a restarted one being set up). */
export const writeTo = (connection: Connection): Core.Protocol["write"] => (request) =>
  writeLine(connection.send, request) ? undefined : closedError("the server process is gone")

/** The current process; waits while the transport restarts one. */
export const current = (client: Base): Effect.Effect<Connection, TransportError> =>
  Effect.suspend(() => {
    const s = MutableRef.get(client.lifecycle)
    return s.closed !== undefined ? Effect.fail(s.closed) : Deferred.await(s.connection)
  })

/** The protocol of the connection core over the current process. */
export const make = (client: Base): Core.Protocol => ({
  write: (request) => {
    const s = MutableRef.get(client.lifecycle)
    if (s.closed !== undefined) return s.closed
    // no process running (one is starting): the core waits for it, then writes again
    if (s.running === undefined) return Effect.asVoid(Deferred.await(s.connection))
    return writeLine(s.running.send, request) ? undefined : closedError("the server process is gone")
  },
  send: (message) =>
    Effect.flatMap(
      current(client),
      (connection) =>
        writeLine(connection.send, message) ? Effect.void : Effect.fail(closedError("the server process is gone"))
    ),
  abandon: (request) => {
    const running = MutableRef.get(client.lifecycle).running
    if (request.method === McpSchema.Method.initialize || running === undefined) return
    writeLine(
      running.send,
      JsonRpc.notification(McpSchema.Method.cancelled, {
        requestId: request.id,
        reason: "The client cancelled the request"
      })
    )
  },
  // the session's notifications are those of the current process: the stream fails when it is lost
  listen: Effect.asVoid(current(client))
})

/** The transport's `request`: through the core; a successful `initialize` is kept for a restart's replay. */
export const request = (
  client: Client,
  message: JsonRpc.Request,
  requestOptions?: RequestOptions
): Effect.Effect<JsonRpc.Response, TransportError> =>
  message.method !== McpSchema.Method.initialize || client.options.restart === undefined
    ? Core.request(client.connection, message, requestOptions)
    : Effect.tap(
      Core.request(client.connection, message, requestOptions),
      (response) =>
        JsonRpc.isErrorResponse(response) ? Effect.void : Ref.update(client.handshake, (h) => ({ ...h, init: message }))
    )

/** The transport's `notify`: on the current process; `notifications/initialized` is kept for a restart's replay. */
export const notify = (client: Client, message: JsonRpc.Notification): Effect.Effect<void, TransportError> =>
  Effect.gen(function*() {
    const connection = yield* current(client)
    if (!(yield* sendOn(connection.send, message))) return yield* closedError("the server process is gone")
    if (message.method === McpSchema.Method.initialized) {
      yield* Ref.update(client.handshake, (h) => ({ ...h, initialized: true }))
    }
  })
