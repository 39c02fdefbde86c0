/**
 * The stdio transport (MCP spec: Basic › Transports › stdio; protocol.md §19.1): one JSON-RPC
 * message per line, UTF-8, `\n`-terminated, in both directions.
 *
 * - Server: {@link serve} reads a byte `Stream` and writes to a byte `Sink`, so it runs over
 *   `process.stdin`/`process.stdout` ({@link run}), a socket, or in-memory streams in tests.
 * - Client: {@link spawn} starts a server process and returns a `ClientTransport` whose
 *   lifetime is the caller's `Scope`.
 *
 * Framing, both sides: `\r\n` is accepted, blank lines are skipped, a line is bounded
 * (`maxLineBytes`) and an over-long line is skipped without being buffered. Only protocol messages
 * are written to the wire; logs go through Effect's logger, which must not write to stdout in a
 * server process ({@link layerLogger}, installed by {@link run}).
 *
 * @since 0.1.0
 */
import * as NodeSink from "@effect/platform-node/NodeSink"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Cause from "effect/Cause"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as Scope from "effect/Scope"
import type * as Sink from "effect/Sink"
import type * as Stream from "effect/Stream"
import type * as client from "../internal/transport/stdio/client.js"
import * as Frame from "../internal/transport/stdio/frame.js"
import * as internal from "../internal/transport/stdio/server.js"
import * as McpServer from "../McpServer.js"
import type { TransportError } from "../Transport.js"

// ---------------------------------------------------------------------------------------------
// server
// ---------------------------------------------------------------------------------------------

/**
 * Options of {@link serve}.
 *
 * - `stdin`: the incoming bytes; the server runs until this stream ends.
 * - `stdout`: where outgoing bytes go, each message one whole line (`JSON + "\n"`); a sink of
 *   `string | Uint8Array` such as `NodeSink.stdout` fits. Consecutive lines may arrive in one
 *   chunk, a line is never split across writes by the server.
 * - `maxLineBytes`: bytes, default 4 MiB (4 194 304): the longest incoming line accepted,
 *   counted without its `\n`. A longer line is dropped as it streams in (never buffered whole)
 *   and answered with a -32600 error without `id`; serving continues.
 * - `drainTimeout`: `DurationInput`, default 5 seconds: after `stdin` ends, how long requests in
 *   flight may still run before they are interrupted (interrupted requests get no reply).
 *
 * When `stdin` ends, this pipe's open `subscriptions/listen` requests end first with their
 * graceful result (protocol.md §14); listens on other transports of the same server go on.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServeOptions<E = never, E2 = never, R = never, R2 = never> {
  readonly stdin: Stream.Stream<Uint8Array, E, R>
  readonly stdout: Sink.Sink<unknown, Uint8Array, unknown, E2, R2>
  readonly maxLineBytes?: number | undefined
  readonly drainTimeout?: Duration.DurationInput | undefined
}

/**
 * The default `maxLineBytes` of {@link serve}: 4 MiB.
 *
 * @since 0.1.0
 * @category symbols
 */
export const DEFAULT_MAX_LINE_BYTES: number = Frame.DEFAULT_MAX_LINE_BYTES

/**
 * Serves `server` over newline-delimited JSON-RPC until `stdin` ends.
 *
 * Per line:
 * - not JSON → `{"jsonrpc":"2.0","error":{"code":-32700,…}}` (no `id`: it cannot be read);
 * - JSON but not a valid message (a batch, `"id": null`, a bad envelope) → -32600, with the id
 *   when it is readable;
 * - an error whose id cannot be read carries no `id`, except in a 2025-06-18 session, whose
 *   schema requires one: there it is `"id": null` (EC-28);
 * - a request → dispatched in its own fiber (tracked by its exact id), so a slow
 *   tool never holds up the next request; its reply is written whole when it completes, and
 *   request-scoped notifications (progress, log messages) are written before it. A request
 *   reusing the id of one still in flight is ignored (logged). `initialize` runs inline, so
 *   what follows it sees the session it creates;
 * - `notifications/cancelled {requestId}` → interrupts that request (its finalizers and
 *   `onInterrupt` run) and nothing more is written for it; unknown or finished ids are ignored.
 *   Ids compare by exact JSON type: `0` is an id, and `"0"` is a different one (EC-01, EC-11);
 * - any other notification → dispatched; never answered, not even with an error (EC-27);
 * - a response → ignored (this server sends no requests).
 *
 * One legacy session (`McpServer.makeSession`) serves the whole stream: stdio process = session.
 * Each message is still routed by its own shape, so a 2026-07-28 request after a legacy
 * `initialize` stays modern (protocol.md §1.1). The session's unsolicited notifications
 * (`McpServer.sessionNotifications`: legacy list changes, resource updates) are written too.
 *
 * When `stdin` ends: requests in flight get `drainTimeout` to finish, then are interrupted;
 * everything queued is written and the sink is completed before the Effect returns.
 *
 * Logging: the server logs through Effect's logger. In a process whose stdout is the wire,
 * provide a logger that writes to stderr ({@link layerLogger}); Effect's default logger writes
 * to stdout.
 *
 * Fails with `TransportError` (`reason: "Closed"`) when reading `stdin` or writing `stdout`
 * fails; a bad message is never an error.
 *
 * @example
 * ```ts
 * import * as NodeSink from "@effect/platform-node/NodeSink"
 * import * as NodeStream from "@effect/platform-node/NodeStream"
 * import * as Effect from "effect/Effect"
 * import * as McpServer from "presa-mcp/McpServer"
 * import * as Stdio from "presa-mcp/transport/Stdio"
 *
 * const program = Effect.gen(function*() {
 *   const server = yield* McpServer.make({ name: "demo", version: "1.0.0" })
 *   yield* Stdio.serve(server, { stdin: NodeStream.stdin, stdout: NodeSink.stdout })
 * }).pipe(Effect.provide(Stdio.layerLogger))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const serve: <E, E2, R, R2>(
  server: McpServer.McpServer,
  options: ServeOptions<E, E2, R, R2>
) => Effect.Effect<void, TransportError, R | R2> = internal.serve

/**
 * Replaces the loggers that write to stdout — Effect's default logger, and the pretty logger
 * `NodeRuntime.runMain` installs in its place — with a logfmt logger on stderr. Other loggers
 * (e.g. tracing) are kept. Use it in every process whose stdout is an MCP wire.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerLogger: Layer.Layer<never> = Layer.scopedDiscard(
  Effect.locallyScopedWith(
    FiberRef.currentLoggers,
    (loggers) =>
      loggers.pipe(
        HashSet.remove(Logger.defaultLogger),
        HashSet.remove(Logger.prettyLoggerDefault),
        HashSet.add(Logger.withConsoleError(Logger.logfmtLogger))
      )
  )
)

/**
 * Options of {@link run}: `maxLineBytes` (bytes, default 4 MiB) and `drainTimeout`
 * (`DurationInput`, default 5 seconds), as in {@link ServeOptions}.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions {
  readonly maxLineBytes?: number | undefined
  readonly drainTimeout?: Duration.DurationInput | undefined
}

/**
 * Serves `server` on this process's stdin and stdout with {@link layerLogger} installed, and
 * returns once stdin has ended and every reply has been flushed. Behaves as {@link serve}; it
 * reads `process.stdin` (`data` events, paused while many lines wait) and writes
 * `process.stdout` directly, without a `Stream` or `Sink` in between, which costs less CPU per
 * message. The process then exits by itself; run it with
 * `NodeRuntime.runMain` (as `bin/` and examples do), which also interrupts it on SIGINT/SIGTERM.
 *
 * Never fails: a `TransportError` (stdin or stdout broke, e.g. EPIPE when the client went away)
 * or a defect is logged on stderr and sets `process.exitCode = 1`, because `runMain` would
 * report a failure with its own logger, on stdout. Code that runs before `run` in the same
 * program should be given {@link layerLogger} too (see the example); a failure of that code is
 * still reported by `runMain` on stdout unless it runs with `{ disableErrorReporting: true }`.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as McpServer from "presa-mcp/McpServer"
 * import * as Stdio from "presa-mcp/transport/Stdio"
 *
 * const main = McpServer.make({ name: "demo", version: "1.0.0" }).pipe(
 *   Effect.flatMap((server) => Stdio.run(server)),
 *   Effect.provide(Stdio.layerLogger)
 * )
 * // the process's entry point: NodeRuntime.runMain(main) (from "@effect/platform-node/NodeRuntime")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = (server: McpServer.McpServer, options: RunOptions = {}): Effect.Effect<void> =>
  internal.serve(server, {
    stdin: NodeStream.stdin,
    stdout: NodeSink.stdout,
    writable: process.stdout,
    readable: process.stdin,
    maxLineBytes: options.maxLineBytes,
    drainTimeout: options.drainTimeout
  }).pipe(
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.interrupt
        : Effect.logError("the stdio server failed", cause).pipe(
          Effect.zipRight(Effect.sync(() => {
            process.exitCode = 1
          }))
        )
    ),
    Effect.provide(layerLogger)
  )

/**
 * A layer that serves the `McpServerService` over the given streams in the background, for apps
 * composed of layers. The serving fiber lives in the layer's scope: it stops when the layer is
 * released, and a `TransportError` is logged. It does **not** end the program when `stdin`
 * ends: a process that should exit at EOF (an MCP server spawned by a client, protocol.md §19.1)
 * uses {@link serve} or {@link run} as its main Effect instead of `Layer.launch`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerServer = <E, E2, R, R2>(
  options: ServeOptions<E, E2, R, R2>
): Layer.Layer<never, never, McpServer.McpServerService | R | R2> =>
  Layer.scopedDiscard(
    Effect.flatMap(McpServer.McpServerService, (server) =>
      internal.serve(server, options).pipe(
        Effect.catchTag("TransportError", (e) => Effect.logError("the stdio server stopped", e)),
        Effect.forkScoped
      ))
  )

// ---------------------------------------------------------------------------------------------
// client
// ---------------------------------------------------------------------------------------------

/**
 * Options of {@link spawn}.
 *
 * - `command`, `args`: the program and its arguments (no shell).
 * - `env`: variables added to this process's environment for the child.
 * - `cwd`: the child's working directory.
 * - `stderr`: `"inherit"` (default: the child writes to our stderr) or a function called with
 *   each line the child writes there (lines over 1 MiB are dropped). stderr is free-form logging,
 *   never an error signal.
 * - `closeTimeout`: `DurationInput`, default 2 seconds: how long {@link StdioClientTransport.close}
 *   waits after closing stdin before SIGTERM, and again after SIGTERM before SIGKILL.
 * - `maxLineBytes`: bytes, default 64 MiB: the longest line read from the server; a longer line
 *   is dropped (logged), so the request it answered fails only when the transport closes.
 * - `onNotification`: receives server notifications that belong to no request in flight
 *   (legacy `notifications/*_list_changed`, `notifications/resources/updated`, log messages when
 *   nothing is in flight). Default: logged at debug level and dropped. They also reach every
 *   open {@link StdioClientTransport.sessionNotifications} subscription.
 * - `onRequest`: answers server→client requests (legacy sessions: `elicitation/create`,
 *   `sampling/createMessage`, `roots/list`, `ping`, …); replaceable later with
 *   `setRequestHandler`. Default: `ping` → `{}`, anything else -32601.
 * - `restart`: a `Schedule` fed with the `TransportError` that ended the process (protocol.md
 *   §19.1: "client SHOULD restart"). Default: none — when the process exits or closes its stdout,
 *   the transport is closed for good. With a schedule, an unexpected exit fails the requests in
 *   flight with `TransportError` `"Closed"` (they are lost, as the spec says), ends the open
 *   `sessionNotifications` streams with that error, and starts the program again after the
 *   schedule's delay; each failed start (spawn failure, refused replay) is fed to the schedule
 *   again, and when the schedule is done the transport is closed for good. Requests and
 *   notifications sent meanwhile wait for the new process. A legacy handshake seen on the first
 *   process (a successful `initialize`, then `notifications/initialized`) is replayed on each new
 *   one before anything else is sent (10 s bound); modern servers need no replay. `close` stops
 *   restarting. E.g. `Schedule.exponential("100 millis").pipe(Schedule.intersect(Schedule.recurs(5)))`.
 *
 * @since 0.1.0
 * @category models
 */
export type SpawnOptions = client.SpawnOptions

/**
 * A `ClientTransport` over a child process, plus the current child's `pid` (it changes when
 * `SpawnOptions.restart` starts a new process).
 *
 * - `request(message, {onNotification})`: writes the request and awaits the response with the
 *   same id (compared by exact JSON type). A JSON-RPC error response is a value, not a failure.
 *   Interrupting it forgets the request and sends `notifications/cancelled {requestId}` (never for
 *   `initialize`); a late response is dropped. Notifications are routed to `onNotification`
 *   while the request is in flight: `notifications/progress` by `params.progressToken` (when the
 *   request set `params._meta.progressToken`), listen-stream notifications by
 *   `_meta["io.modelcontextprotocol/subscriptionId"]`, `notifications/cancelled` by `requestId`,
 *   and `notifications/message` to every request in flight (stdio gives log messages no
 *   correlation field). Fails with `TransportError` `"Closed"` when the process exits, its stdout
 *   ends or the transport is closed, and `"Protocol"` when the id is already in flight.
 * - `notify(message)`: writes a notification; `TransportError` `"Closed"` once closed.
 * - `close`: closes the child's stdin, waits `closeTimeout` for it to exit, then SIGTERM, then
 *   SIGKILL (to its process group); then fails what is still pending with `"Closed"`. Idempotent;
 *   it also runs when the Scope closes.
 *
 * - `setRequestHandler(handler)`: the handler of server→client requests (see
 *   `SpawnOptions.onRequest`). Each server request is answered in its own fiber (the reader goes
 *   on meanwhile) and the response is written as one line; the server's `notifications/cancelled`
 *   for its request interrupts the handler (nothing is written then). stdio has no per-request
 *   channel, so a request's own `onRequest` option is not used.
 * - `sessionNotifications`: a subscription to the notifications that belong to no request in
 *   flight (the legacy session's list changes and resource updates) of the current process; the
 *   stream fails with `TransportError` `"Closed"` when that process is gone (exit, stdout closed,
 *   transport closed). Subscribing while a restart is under way waits for the new process.
 *
 * Lines that are not JSON, and responses to unknown ids, are logged and skipped, never fatal.
 *
 * @since 0.1.0
 * @category models
 */
export type StdioClientTransport = client.StdioClientTransport

// The spawning half (the client, and `node:child_process`) is loaded on the first `spawn`, so that
// a server process serving `run` does not load it.
let spawnLoaded:
  | Promise<(options: SpawnOptions) => Effect.Effect<StdioClientTransport, TransportError, Scope.Scope>>
  | undefined
const loadSpawn = Effect.promise(() =>
  spawnLoaded ??= Promise.all([import("../internal/transport/stdio/client.js"), import("node:child_process")]).then(
    ([client, ChildProcess]) => (options: SpawnOptions) => client.spawn(options, ChildProcess.spawn)
  )
)

/**
 * Starts an MCP server process and connects to it over its stdin/stdout.
 *
 * The process belongs to the Scope: closing the Scope (including when the fiber using the
 * transport is interrupted) runs `close`, so no child outlives it. The process is started with
 * Node's `child_process` in a process group of its own; only `Scope` is required.
 *
 * Fails with `TransportError` `"Spawn"` when the program cannot be started (not found, bad
 * `cwd`).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as JsonRpc from "presa-mcp/JsonRpc"
 * import * as Stdio from "presa-mcp/transport/Stdio"
 *
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const transport = yield* Stdio.spawn({ command: "node", args: ["server.js"] })
 *   return yield* transport.request(JsonRpc.request(1, "ping"))
 * }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const spawn = (options: SpawnOptions): Effect.Effect<StdioClientTransport, TransportError, Scope.Scope> =>
  Effect.flatMap(loadSpawn, (spawnWith) => spawnWith(options))
