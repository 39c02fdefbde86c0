/**
 * What a client transport is: something that carries one JSON-RPC request to a server and brings
 * back its response. stdio, Streamable HTTP and in-process transports implement it; `McpClient`
 * speaks MCP over any of them.
 *
 * Guide: [Transports](https://github.com/presa-mcp/presa-mcp/blob/main/docs/transports.md).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as JsonRpc from "./JsonRpc.js"
import type * as Telemetry from "./Telemetry.js"

/**
 * A local transport failure: the process could not be spawned or exited, the connection closed,
 * an HTTP exchange failed, no response came within the request's `timeout` (reason `"Timeout"`), an
 * SSE stream cut before its end could not be resumed (reason `"Resume"`: the server refused the
 * GET with `Last-Event-ID`, `status` 405; the session is gone, `status` 404; or the tries ran out;
 * MCP 2025-11-25, Transports › Streamable HTTP › Resumability and Redelivery). Never a JSON-RPC
 * error from the peer (that is `McpError`), and never put on the wire.
 *
 * @since 0.1.0
 * @category errors
 */
export class TransportError extends Data.TaggedError("TransportError")<{
  readonly reason: "Closed" | "Spawn" | "Http" | "Protocol" | "Unauthorized" | "Timeout" | "Resume"
  readonly message: string
  readonly cause?: unknown
  /** HTTP status, when the failure is an HTTP response. */
  readonly status?: number
  /**
   * reason `"Unauthorized"` (HTTP 401 / 403 with a `WWW-Authenticate: Bearer` or `DPoP` challenge, MCP 2025-11-25, Basic,
   * §20): the Protected Resource Metadata URL, the scopes the server asked for, the OAuth
   * error (`invalid_token`, `insufficient_scope`, `use_dpop_nonce`) and the `DPoP-Nonce` header
   * (RFC 9449 §9), when present. With `StreamableHttp.ClientOptions.auth` (e.g.
   * `OAuth.make`) the transport obtains a token itself and fails only when that fails (the
   * `OAuthError` in `cause`) or the server keeps refusing; without it, obtaining a token is up to
   * the caller.
   */
  readonly challenge?: {
    readonly resourceMetadata: string | undefined
    readonly scopes: ReadonlyArray<string>
    readonly error: string | undefined
    readonly nonce?: string | undefined
  }
}> {}

/**
 * Answers a server→client request (legacy sessions only, MCP 2025-11-25, Client Features: `ping`,
 * `elicitation/create`, `sampling/createMessage`, `roots/list`, …) with the JSON-RPC response to
 * send back (a result or an error, with the request's id). Never fails: a problem is an error
 * response.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestHandler = (request: JsonRpc.Request) => Effect.Effect<JsonRpc.Response>

/**
 * Options of one request.
 *
 * - `onNotification` receives the server's request-scoped notifications (progress, log messages,
 *   a listen stream's notifications) that arrive while the request is in flight;
 * - `onRequest` answers server→client requests that arrive on this request's own channel
 *   (Streamable HTTP: its SSE response stream). Transports without such a channel (stdio,
 *   in-process) use their transport-level handler ({@link ClientTransport.setRequestHandler})
 *   instead. Default: the transport-level handler, else `ping` → `{}` and anything else -32601.
 * - `timeout` bounds the wait for the response (no bound when absent or infinite): past it the
 *   transport gives the request up as if interrupted (stdio and in-process:
 *   `notifications/cancelled` / the handler is interrupted; HTTP: the request is aborted) and
 *   fails with `TransportError` reason `"Timeout"`. `McpClient` passes its `requestTimeout` here
 *   and reports it as `ClientError` `"Timeout"`; a transport of your own must honour it.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestOptions {
  readonly onNotification?: ((notification: JsonRpc.Notification) => Effect.Effect<void>) | undefined
  readonly onRequest?: RequestHandler | undefined
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * A client transport.
 *
 * - `request`: sends one request and yields its response (a JSON-RPC error response is a value,
 *   not a failure). Interrupting it cancels the request the transport's way (stdio:
 *   `notifications/cancelled`; HTTP: the request is aborted).
 * - `notify`: sends a notification.
 * - A transport has no `close`: the Scope it was made in owns it (closing the Scope closes stdin
 *   and ends the process; ends an HTTP session).
 * - `setRequestHandler` (optional): installs the handler of server→client requests that belong
 *   to no request option (stdio: every server request; in-process: the session's requests; HTTP:
 *   requests on the standalone GET stream, and on request streams whose request has no
 *   `onRequest`). `undefined` restores the default (`ping` → `{}`, anything else -32601).
 * - `sessionNotifications` (optional, legacy): subscribes to the session's unsolicited
 *   notifications (`notifications/{tools,prompts,resources}/list_changed`,
 *   `notifications/resources/updated`, and any other notification that belongs to no request in
 *   flight). The subscription is live once the Effect succeeds and lasts while its Scope is
 *   open; the stream fails with `TransportError` when the transport closes or the channel breaks
 *   (stdio: the process's notifications; HTTP: the legacy GET SSE stream of the session, shared by
 *   all subscribers; in-process: `McpServer.sessionNotifications`).
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
  readonly setRequestHandler?: ((handler: RequestHandler | undefined) => Effect.Effect<void>) | undefined
  readonly sessionNotifications?:
    | Effect.Effect<Stream.Stream<JsonRpc.Notification, TransportError>, TransportError, Scope.Scope>
    | undefined
  /**
   * The server end as spans and metrics record it (`network.transport`, `server.address` /
   * `server.port`; see `Telemetry.Peer`): stdio `pipe`, HTTP `tcp` with the URL's host and port.
   * Optional (since 0.2.0); the in-process transport has none.
   */
  readonly peer?: Telemetry.Peer | undefined
}

/**
 * The service Tag of a {@link ClientTransport}: what `McpClient.layer` connects over. The
 * transports provide it as Layers (`Stdio.layerClient`, `StreamableHttp.layerClient`,
 * `InProcess.layerClient`), each owning the transport for the Layer's Scope; a transport of your
 * own is `Layer.scoped(Transport.ClientTransport, acquire)` (or `Layer.succeed`).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import { McpClient } from "presa-mcp"
 * import * as Stdio from "presa-mcp/transport/Stdio"
 *
 * const ClientLive = McpClient.layer({ name: "my-app" }).pipe(
 *   Layer.provide(Stdio.layerClient({ command: "node", args: ["server.js"] }))
 * )
 * const program = Effect.gen(function*() {
 *   const client = yield* McpClient.McpClient
 *   return yield* client.listAllTools
 * }).pipe(Effect.provide(ClientLive))
 * ```
 *
 * @since 0.2.0
 * @category tags
 */
export const ClientTransport: Context.Tag<ClientTransport, ClientTransport> = Context.GenericTag<ClientTransport>(
  "presa-mcp/Transport/ClientTransport"
)
