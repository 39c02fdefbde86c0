/**
 * The connection seam: what every transport of the library is built on, public so that a transport
 * of your own (a WebSocket, a worker's message port, a message queue) gets the same guarantees,
 * the way `@effect/rpc`'s `RpcServer.Protocol` gives them to an rpc transport. A transport frames
 * bytes into messages and hands each to {@link Connection.receive}; the connection owns the rest:
 *
 * - the requests in flight, keyed by their exact id, each in its own fiber, at most `maxInFlight`
 *   at once, with a queue of at most `maxQueued` behind them; the reader goes on while requests
 *   wait, so a `notifications/cancelled` (MCP 2025-11-25, Utilities, Cancellation) or a client's
 *   response is handled as it arrives; beyond the queue `receive` waits (backpressure) or, with
 *   `overflow: "reject"`, answers -32603 with HTTP status `503`;
 * - cancellation: a running request is interrupted, a waiting one is dropped unstarted; neither
 *   sends a response;
 * - the server→client requests of a legacy session (`elicitation/create`, `sampling/createMessage`,
 *   `roots/list`; MCP 2025-11-25, Client Features) and the client's responses that settle them;
 * - the session's unsolicited notifications (`list_changed`, `resources/updated`), written to `send`;
 * - exactly one response per request: a result JSON cannot carry is logged and replaced (-32603, or
 *   an `isError` result for `tools/call`); a notification never gets one;
 * - the end: {@link Connection.stop} ends open `subscriptions/listen` requests, drains, interrupts.
 *
 * stdio, Streamable HTTP (one connection per legacy session, one bounded connection for every
 * request without a session), the in-process transport, the web handler and `McpServer.dispatch`
 * (a one-shot connection) all run on it. Guide: docs/transports.md.
 *
 * Guide: [Writing your own transport](https://github.com/presa-mcp/presa-mcp/blob/main/docs/transports.md#writing-your-own-transport).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Stream from "effect/Stream"
 * import { Connection, McpServer } from "presa-mcp"
 *
 * // one peer's messages as JSON text in, JSON text out
 * const serveLines = (server: McpServer.McpServer, lines: Stream.Stream<string>, write: (text: string) => Effect.Effect<void>) =>
 *   Connection.serve(server, { incoming: lines, send: write })
 * ```
 *
 * @since 0.2.0
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as internal from "./internal/server/connection.js"
import * as Service from "./internal/server/service.js"
import * as JsonRpc from "./JsonRpc.js"
import * as McpServer from "./McpServer.js"
import type * as Telemetry from "./Telemetry.js"

/**
 * One incoming message, classified once by the transport (`JsonRpc.parse` of its text, or
 * {@link parse}), with what the transport knows of it: `headers` (HTTP request headers: the
 * 2026-07-28 header checks), `auth` (the caller a verified bearer token established), `peer` (the
 * other end, for spans and metrics; default the connection's).
 *
 * @since 0.2.0
 * @category models
 */
export type Incoming = internal.Incoming

/**
 * Where one request's messages go, for a transport whose requests each have a channel of their own
 * (an HTTP response): `reply` writes the one response (`text` is its JSON; `reply.status` the HTTP
 * status the spec gives it), `send` the request-scoped notifications and server→client requests
 * (`undefined`: the channel cannot carry them), `done` hears the end of the request (also when it
 * was cancelled and sends nothing), `inline: true` runs the request in the fiber that calls
 * `receive` (interrupting it cancels the request). Without an outlet, `receive` writes to the
 * connection's `send`.
 *
 * @since 0.2.0
 * @category models
 */
export type Outlet = internal.Outlet

/**
 * Options of {@link make}.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /**
   * Writes one message to the peer: its JSON text (one JSON-RPC message, no trailing newline).
   * Replies, request-scoped notifications, server→client requests and the session's unsolicited
   * notifications all go here (unless `receive` is given an outlet). It may wait while the peer
   * does not read (backpressure); it should not fail: a transport that cannot write any more ends
   * the connection (close its Scope, or return `false` from `isOpen`).
   */
  readonly send: (text: string) => Effect.Effect<void>
  /**
   * The connection's legacy session (what `initialize` negotiates for 2025-11-25 / 2025-06-18
   * clients); default a new one (`McpServer.makeSession`). 2026-07-28 requests carry their
   * version in `_meta` and need none.
   */
  readonly session?: McpServer.Session | undefined
  /** The other end, for spans and metrics (`network.transport`, `client.address`); default none. */
  readonly peer?: Telemetry.Peer | undefined
  /** Requests running at once, at most; default 1,024. */
  readonly maxInFlight?: number | undefined
  /** Requests waiting for a slot behind `maxInFlight`, at most, in arrival order; default 256. */
  readonly maxQueued?: number | undefined
  /**
   * A request that finds the slots and the queue full: `"wait"` (default) makes `receive` wait
   * until the queue has room, so the reader applies backpressure to the peer; `"reject"` answers it
   * at once with -32603 "Server busy" (HTTP status `503`, `Retry-After: 1`).
   */
  readonly overflow?: "wait" | "reject" | undefined
  /**
   * A request whose id is in flight: `"ignore"` it (default; logged), `"reject"` it with -32600, or
   * `"allow"` it (no message can name a request then: `notifications/cancelled` finds none).
   */
  readonly duplicateIds?: "ignore" | "reject" | "allow" | undefined
  /** How long a server→client request waits for the client's answer; default 60 seconds, then -32603. */
  readonly clientRequestTimeout?: Duration.DurationInput | undefined
  /**
   * `false` once the peer is gone for good: a request waiting for a slot is then dropped instead of
   * started. Default: always open.
   */
  readonly isOpen?: (() => boolean) | undefined
}

/**
 * One connection of a server to one peer.
 *
 * @since 0.2.0
 * @category models
 */
export interface Connection {
  /** The connection's legacy session. */
  readonly session: McpServer.Session | undefined
  /**
   * Handles one message, in arrival order: call it for each message before the next. A request
   * starts in its own fiber (or waits in the queue) and the Effect ends at once; an `initialize`,
   * a notification and a response are handled before it ends; when the slots and the queue are
   * full it waits for room (`overflow: "wait"`). Never fails.
   */
  readonly receive: (incoming: Incoming, outlet?: Outlet) => Effect.Effect<void>
  /** Cancels the request with this id, as `notifications/cancelled` does; `false` when there is none. */
  readonly cancel: (id: JsonRpc.RequestId) => Effect.Effect<boolean>
  /** Requests running or waiting for a slot. */
  readonly inFlight: () => number
  /**
   * Ends the connection once the peer has sent its last message: open `subscriptions/listen`
   * requests end with their result, requests still running or waiting get `drainTimeout` (default
   * 5 seconds) to finish, then are interrupted (and send nothing). Closing the Scope interrupts
   * whatever still runs without the drain.
   */
  readonly stop: (drainTimeout?: Duration.DurationInput) => Effect.Effect<void>
}

/**
 * Builds a connection of `server` to one peer. The Scope owns it: closing it interrupts the
 * requests still running and stops the session's notifications. While the Scope is open, the
 * session's unsolicited notifications go to `send`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (
  server: McpServer.McpServer,
  options: Options
): Effect.Effect<Connection, never, Scope.Scope> =>
  Effect.flatMap(
    options.session === undefined ? McpServer.makeSession : Effect.succeed(options.session),
    (session) =>
      internal.make(Service.internal(server), {
        session,
        send: options.send,
        peer: options.peer,
        maxInFlight: options.maxInFlight,
        maxQueued: options.maxQueued,
        overflow: options.overflow,
        duplicateIds: options.duplicateIds ?? "ignore",
        clientRequestTimeout: options.clientRequestTimeout,
        isOpen: options.isOpen
      })
  )

/**
 * One message's text as the connection takes it: parsed (keys `__proto__` dropped) and classified.
 * Text that is not JSON becomes a message the connection answers with -32700; a JSON value that is
 * not a JSON-RPC message one it answers with -32600.
 *
 * @since 0.2.0
 * @category decoding
 */
export const parse = (text: string): Incoming => ({ message: JsonRpc.parse(text) })

/**
 * Options of {@link serve}: those of {@link make}, the peer's messages and the drain.
 *
 * @since 0.2.0
 * @category models
 */
export interface ServeOptions<E, R> extends Options {
  /** The peer's messages, one JSON-RPC message's text each, in order; its end is the peer's end. */
  readonly incoming: Stream.Stream<string, E, R>
  /** After `incoming` ends, how long requests may still run before they are interrupted; default 5 seconds. */
  readonly drainTimeout?: Duration.DurationInput | undefined
}

/**
 * Serves one peer: each message of `incoming` goes to a new connection's `receive`, replies and
 * notifications to `send`. Once `incoming` ends, the connection stops (listen streams end, a drain
 * of `drainTimeout`, then the rest is interrupted) and the Effect succeeds; it fails with the
 * stream's error `E` (the requests still running are interrupted). Interrupting it ends the
 * connection at once.
 *
 * @since 0.2.0
 * @category combinators
 */
export const serve = <E, R>(server: McpServer.McpServer, options: ServeOptions<E, R>): Effect.Effect<void, E, R> =>
  Effect.scoped(
    Effect.gen(function*() {
      const connection = yield* make(server, options)
      yield* Stream.runForEach(options.incoming, (text) => connection.receive(parse(text)))
      yield* connection.stop(options.drainTimeout)
    })
  )
