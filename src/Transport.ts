/**
 * What a client transport is: something that carries one JSON-RPC request to a server and brings
 * back its response. stdio, Streamable HTTP and in-process transports implement it; `McpClient`
 * speaks MCP over any of them.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type * as JsonRpc from "./JsonRpc.js"

/**
 * A local transport failure: the process could not be spawned or exited, the connection closed,
 * an HTTP exchange failed. Never a JSON-RPC error from the peer (that is `McpError`), and never
 * put on the wire.
 *
 * @since 0.1.0
 * @category errors
 */
export class TransportError extends Data.TaggedError("TransportError")<{
  readonly reason: "Closed" | "Spawn" | "Http" | "Protocol"
  readonly message: string
  readonly cause?: unknown
  /** HTTP status, when the failure is an HTTP response. */
  readonly status?: number
}> {}

/**
 * Options of one request: `onNotification` receives the server's request-scoped notifications
 * (progress, log messages) that arrive while the request is in flight.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestOptions {
  readonly onNotification?: ((notification: JsonRpc.Notification) => Effect.Effect<void>) | undefined
}

/**
 * A client transport.
 *
 * - `request`: sends one request and yields its response (a JSON-RPC error response is a value,
 *   not a failure). Interrupting it cancels the request the transport's way (stdio:
 *   `notifications/cancelled`; HTTP: the request is aborted).
 * - `notify`: sends a notification.
 * - `close`: releases the transport (closes stdin and ends the process; ends an HTTP session).
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientTransport {
  readonly request: (
    message: JsonRpc.Request,
    options?: RequestOptions
  ) => Effect.Effect<JsonRpc.Response, TransportError>
  readonly notify: (message: JsonRpc.Notification) => Effect.Effect<void, TransportError>
  readonly close: Effect.Effect<void>
}
