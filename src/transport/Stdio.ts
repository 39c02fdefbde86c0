/**
 * The stdio transport (MCP 2025-11-25 and 2026-07-28: Basic › Transports › stdio): one JSON-RPC
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
 * server process ({@link layerLogger}, installed by {@link run}, {@link runLayer}, {@link serve}
 * and {@link layerServer}).
 *
 * Guide: [Transports, stdio](https://github.com/presa-mcp/presa-mcp/blob/main/docs/transports.md#serving-over-stdio).
 *
 * @since 0.1.0
 */
import * as NodeSink from "@effect/platform-node/NodeSink"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import type * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type * as Sink from "effect/Sink"
import type * as Stream from "effect/Stream"
import * as Frame from "../internal/transport/stdio/frame.js"
import * as internal from "../internal/transport/stdio/server.js"
import type * as JsonRpc from "../JsonRpc.js"
import * as McpServer from "../McpServer.js"
import { ClientTransport, type RequestHandler, type TransportError } from "../Transport.js"

// ---------------------------------------------------------------------------------------------
// server
// ---------------------------------------------------------------------------------------------

/**
 * Options of {@link run} (and, with the streams, of {@link serve}).
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions {
  /**
   * The longest incoming line accepted, in bytes, counted without its `\n`; default 4 MiB
   * (4 194 304). A longer line is dropped as it streams in (never buffered whole) and answered
   * with a -32600 error without `id`; serving continues.
   */
  readonly maxLineBytes?: number | undefined
  /**
   * After `stdin` ends, how long requests in flight may still run before they are interrupted
   * (interrupted requests get no reply); default 5 seconds.
   */
  readonly drainTimeout?: Duration.DurationInput | undefined
  /**
   * At most this many requests run at once; default 1,024. A request beyond it waits for a slot
   * in a queue of at most `maxQueued`, while reading `stdin` goes on (a `notifications/cancelled`
   * for a waiting request drops it unstarted, without a reply).
   */
  readonly maxInFlight?: number | undefined
  /**
   * At most this many requests wait for a slot behind `maxInFlight`, in arrival order; default
   * 256. Beyond it reading `stdin` waits until the queue has room, so a client that floods the
   * server is slowed down (the pipe fills), never buffered without bound.
   */
  readonly maxQueued?: number | undefined
  /**
   * How long one line may wait to be written while the client does not read `stdout` (the pipe
   * is full); default 60 seconds. Past it the connection is closed: requests in flight are
   * interrupted and the serve fails with `TransportError` (`reason: "Closed"`).
   */
  readonly writeTimeout?: Duration.DurationInput | undefined
}

/**
 * Options of {@link serve}: the streams and every {@link RunOptions} field.
 *
 * - `stdin`: the incoming bytes; the server runs until this stream ends.
 * - `stdout`: where outgoing bytes go, each message one whole line (`JSON + "\n"`); a sink of
 *   `string | Uint8Array` such as `NodeSink.stdout` fits. Consecutive lines may arrive in one
 *   chunk, a line is never split across writes by the server.
 *
 * When `stdin` ends, this pipe's open `subscriptions/listen` requests end first with their
 * graceful result (MCP 2026-07-28, Server Features, Subscriptions); listens on other transports of
 * the same server go on.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServeOptions<E = never, E2 = never, R = never, R2 = never> extends RunOptions {
  readonly stdin: Stream.Stream<Uint8Array, E, R>
  readonly stdout: Sink.Sink<unknown, Uint8Array, unknown, E2, R2>
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
 *   schema requires one: there it is `"id": null`;
 * - a request → dispatched in its own fiber (tracked by its exact id), so a slow
 *   tool never holds up the next request; its reply is written whole when it completes, and
 *   request-scoped notifications (progress, log messages) are written before it. A request
 *   reusing the id of one still in flight is ignored (logged). `initialize` runs inline, so
 *   what follows it sees the session it creates;
 * - `notifications/cancelled {requestId}` → interrupts that request (its finalizers and
 *   `onInterrupt` run) and nothing more is written for it; unknown or finished ids are ignored.
 *   Ids compare by exact JSON type: `0` is an id, and `"0"` is a different one;
 * - any other notification → dispatched; never answered, not even with an error (JSON-RPC 2.0: a notification is never answered);
 * - a response → ignored (this server sends no requests).
 *
 * One legacy session (`McpServer.makeSession`) serves the whole stream: stdio process = session.
 * Each message is still routed by its own shape, so a 2026-07-28 request after a legacy
 * `initialize` stays modern (MCP 2026-07-28, Basic, Versioning). The session's unsolicited notifications
 * (`McpServer.sessionNotifications`: legacy list changes, resource updates) are written too.
 *
 * When `stdin` ends: requests in flight get `drainTimeout` to finish, then are interrupted;
 * everything queued is written and the sink is completed before the Effect returns.
 *
 * Logging: while it serves, Effect's loggers that write to stdout are replaced with one on
 * stderr ({@link layerLogger}), so nothing but MCP messages reaches the wire. Code that runs
 * before `serve` (building the server, Layers) logs with the program's loggers: provide
 * {@link layerLogger} to the whole program, or build the server with {@link runLayer}.
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
export const serve = <E, E2, R, R2>(
  server: McpServer.McpServer,
  options: ServeOptions<E, E2, R, R2>
): Effect.Effect<void, TransportError, R | R2> => internal.serve(server, options).pipe(Effect.provide(layerLogger))

// One instance, so that installing `layerLogger` twice (a command line that serves stdio) logs once.
const stderrLogger = Logger.withConsoleError(Logger.logfmtLogger)

/**
 * Replaces the loggers that write to stdout — Effect's default logger, and the pretty logger
 * `NodeRuntime.runMain` installs in its place — with a logfmt logger on stderr. Other loggers
 * (e.g. tracing, or a logger of your own on stderr) are kept; when neither stdout logger is
 * installed nothing changes, so a program that already logs to stderr its own way keeps exactly
 * its loggers. A logger of your own must not write to stdout: it is not detected.
 *
 * {@link run}, {@link runLayer}, {@link serve} and {@link layerServer} install it themselves;
 * provide it to the whole program when code runs before them (see {@link runLayer}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerLogger: Layer.Layer<never> = Layer.scopedDiscard(
  // the stdout loggers swapped for `stderrLogger`; unchanged when neither is installed
  Effect.locallyScopedWith(FiberRef.currentLoggers, (loggers) => {
    const kept = loggers.pipe(HashSet.remove(Logger.defaultLogger), HashSet.remove(Logger.prettyLoggerDefault))
    return HashSet.size(kept) === HashSet.size(loggers) ? loggers : HashSet.add(kept, stderrLogger)
  })
)

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
 * report a failure with its own logger, on stdout. `run` cannot reach code that ran before it:
 * a server built by Layers that log is served with {@link runLayer}, which routes their logs too;
 * otherwise give that code {@link layerLogger} (see the example). A failure of that code is
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
    ...options
  }).pipe(exitOnFailure("the stdio server failed"), Effect.provide(layerLogger))

/**
 * A failure or defect of a stdio entry point, logged on stderr with `message`, sets
 * `process.exitCode = 1` instead of failing; an interruption stays one.
 */
const exitOnFailure = (message: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<void, never, R> =>
  Effect.catchAllCause(Effect.asVoid(self), (cause) =>
    Cause.isInterruptedOnly(cause)
      ? Effect.interrupt
      : Effect.logError(message, cause).pipe(
        Effect.zipRight(Effect.sync(() => {
          process.exitCode = 1
        }))
      ))

/**
 * Serves the `McpServer.McpServer` that `layer` builds on this process's stdin and stdout, as
 * {@link run} does, and releases the layer once stdin has ended and every reply is flushed: the
 * entry point of a stdio server made of Layers (MCP 2025-11-25, Transports › stdio: the process
 * ends at EOF). {@link layerLogger} is installed before the layer is built, so what the Layers
 * log while they are built, and everything logged while serving, goes to stderr: stdout carries
 * MCP messages only.
 *
 * Never fails: a failure or defect while building the layer, like one of {@link run}, is logged
 * on stderr and sets `process.exitCode = 1` (nothing is served then).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import * as McpServer from "presa-mcp/McpServer"
 * import * as Tool from "presa-mcp/Tool"
 * import * as Stdio from "presa-mcp/transport/Stdio"
 *
 * const Ping = Layer.effectDiscard(Effect.log("registering ping")).pipe(   // logged on stderr
 *   Layer.merge(McpServer.tool(Tool.make({ name: "ping", handler: () => Effect.succeed("pong") })))
 * )
 * const ServerLive = Ping.pipe(Layer.provideMerge(McpServer.layer({ name: "demo", version: "1.0.0" })))
 * const main = Stdio.runLayer(ServerLive)
 * // the process's entry point (it serves stdin until EOF):
 * // NodeRuntime.runMain(main, { disablePrettyLogger: true }) (from "@effect/platform-node/NodeRuntime")
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const runLayer = <E, R>(
  layer: Layer.Layer<McpServer.McpServer, E, R>,
  options: RunOptions = {}
): Effect.Effect<void, never, R> =>
  Effect.scoped(
    Effect.flatMap(Layer.build(layer), (context) => run(Context.get(context, McpServer.McpServer), options))
  )
    .pipe(exitOnFailure("the stdio server could not start"), Effect.provide(layerLogger))

/**
 * A layer that serves the `McpServer.McpServer` service over the given streams in the background, for apps
 * composed of layers. The serving fiber lives in the layer's scope: it stops when the layer is
 * released, and a `TransportError` is logged. It does **not** end the program when `stdin`
 * ends: a process that should exit at EOF (an MCP server spawned by a client, MCP 2025-11-25, Transports, stdio)
 * uses {@link runLayer}, {@link serve} or {@link run} as its main Effect instead of `Layer.launch`.
 *
 * Logging: it installs {@link layerLogger}, for the serving fiber (handlers' logs) and for what
 * is built after it; Layers built before it (its dependencies, or its siblings in a
 * `Layer.mergeAll`, built at the same time) log with the program's loggers, so a process whose
 * stdout is the wire builds them under {@link layerLogger} too, or uses {@link runLayer}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerServer = <E, E2, R, R2>(
  options: ServeOptions<E, E2, R, R2>
): Layer.Layer<never, never, McpServer.McpServer | R | R2> =>
  Layer.scopedDiscard(
    Effect.flatMap(McpServer.McpServer, (server) =>
      internal.serve(server, options).pipe(
        Effect.catchTag("TransportError", (e) => Effect.logError("the stdio server stopped", e)),
        Effect.forkScoped
      ))
  ).pipe(Layer.provide(layerLogger))

// ---------------------------------------------------------------------------------------------
// client
// ---------------------------------------------------------------------------------------------

/**
 * Options of {@link spawn}. Only `command` is required.
 *
 * @since 0.1.0
 * @category models
 */
export interface SpawnOptions {
  /** The program to start, looked up on `PATH` (no shell). Not found → `spawn` fails with `TransportError` `"Spawn"`. */
  readonly command: string
  /** The program's arguments, passed as they are (no shell expansion). Default: none. */
  readonly args?: ReadonlyArray<string> | undefined
  /** Variables added to this process's environment for the child (they override ones of the same name). Default: none. */
  readonly env?: Readonly<Record<string, string>> | undefined
  /**
   * The child's working directory. Default: this process's. A directory that does not exist →
   * `spawn` fails with `TransportError` `"Spawn"`.
   */
  readonly cwd?: string | undefined
  /**
   * Where the child's stderr goes: `"inherit"` (default: it writes to our stderr), or a function
   * called with each line it writes there, without the line end (lines over 1 MiB are dropped and
   * logged at debug level; a defect of the function is logged as a warning). stderr is free-form
   * logging, never an error signal (MCP 2025-11-25, Transports › stdio).
   */
  readonly stderr?: "inherit" | ((line: string) => Effect.Effect<void>) | undefined
  /**
   * `DurationInput`, default 2 seconds: when the transport's Scope closes, how long it waits for
   * the child to exit after closing its stdin before sending SIGTERM, and again after SIGTERM
   * before SIGKILL.
   */
  readonly closeTimeout?: Duration.DurationInput | undefined
  /**
   * Bytes, default 64 MiB: the longest line read from the server, counted without its `\n`. A
   * longer line is dropped (logged) without being buffered, so the request it answered fails
   * only when the transport closes or the request's `timeout` passes.
   */
  readonly maxLineBytes?: number | undefined
  /**
   * Receives the server notifications that belong to no request in flight (legacy
   * `notifications/*_list_changed`, `notifications/resources/updated`, log messages when nothing
   * is in flight). Default: logged at debug level and dropped. A defect of the handler is logged
   * as a warning. These notifications also reach every open
   * {@link StdioClientTransport.sessionNotifications} subscription.
   */
  readonly onNotification?: ((notification: JsonRpc.Notification) => Effect.Effect<void>) | undefined
  /**
   * Answers server→client requests (legacy sessions: `elicitation/create`,
   * `sampling/createMessage`, `roots/list`, `ping`, …); replaceable later with
   * {@link StdioClientTransport.setRequestHandler}. Default: `ping` → `{}`, anything else -32601.
   */
  readonly onRequest?: RequestHandler | undefined
  /**
   * Restarts the server after a crash (MCP 2026-07-28, Transports › stdio: the client SHOULD
   * restart it): a `Schedule` fed with the `TransportError` that ended the process. Default: none
   * — when the process exits or closes its stdout, the transport is closed for good.
   *
   * With a schedule, an unexpected exit fails the requests in flight with `TransportError`
   * `"Closed"` (they are lost, as the spec says), ends the open `sessionNotifications` streams
   * with that error, and starts the program again after the schedule's delay; each failed start
   * (spawn failure, refused replay) is fed to the schedule again, and when the schedule is done
   * the transport is closed for good. Requests and notifications sent meanwhile wait for the new
   * process. A legacy handshake seen on the first process (a successful `initialize`, then
   * `notifications/initialized`) is replayed on each new one before anything else is sent (10 s
   * bound); modern servers need no replay. Closing the transport's Scope stops restarting. E.g.
   * `Schedule.exponential("100 millis").pipe(Schedule.intersect(Schedule.recurs(5)))`.
   */
  readonly restart?: Schedule.Schedule<unknown, TransportError> | undefined
}

/**
 * A `ClientTransport` over a child process, plus the current child's `pid`. Lines from the
 * server that are not JSON, and responses to unknown ids, are logged and skipped, never fatal.
 *
 * @since 0.1.0
 * @category models
 */
export interface StdioClientTransport extends ClientTransport {
  /**
   * Writes the request and awaits the response with the same id (compared by exact JSON type). A
   * JSON-RPC error response is a value, not a failure. Interrupting it (or its `timeout` passing)
   * forgets the request and sends `notifications/cancelled {requestId}` (never for `initialize`);
   * a late response is dropped. Notifications are routed to `options.onNotification` while the
   * request is in flight: `notifications/progress` by `params.progressToken` (when the request set
   * `params._meta.progressToken`), listen-stream notifications by
   * `_meta["io.modelcontextprotocol/subscriptionId"]`, `notifications/cancelled` by `requestId`,
   * and `notifications/message` to every request in flight (stdio gives log messages no
   * correlation field). `options.onRequest` is not used: stdio has no per-request channel.
   *
   * Fails with `TransportError`: `"Closed"` when the process exits, its stdout ends or the
   * transport is closed; `"Protocol"` when the id is already in flight; `"Timeout"` past
   * `options.timeout`.
   */
  readonly request: ClientTransport["request"]
  /** Writes a notification. Fails with `TransportError` `"Closed"` once the process is gone or the transport is closed. */
  readonly notify: ClientTransport["notify"]
  /** The process id of the current child; it changes when `SpawnOptions.restart` starts a new process. */
  readonly pid: number
  /**
   * Installs the handler of server→client requests (see `SpawnOptions.onRequest`); `undefined`
   * restores the default. Each server request is answered in its own fiber (the reader goes on
   * meanwhile) and the response is written as one line; the server's `notifications/cancelled`
   * for its request interrupts the handler (nothing is written then).
   */
  readonly setRequestHandler: (handler: RequestHandler | undefined) => Effect.Effect<void>
  /**
   * A subscription to the notifications that belong to no request in flight (the legacy
   * session's list changes and resource updates) of the current process. The stream fails with
   * `TransportError` `"Closed"` when that process is gone (exit, stdout closed, transport
   * closed). Subscribing while a restart is under way waits for the new process; subscribing
   * once the transport is closed fails with `"Closed"`.
   */
  readonly sessionNotifications: Effect.Effect<
    Stream.Stream<JsonRpc.Notification, TransportError>,
    TransportError,
    Scope.Scope
  >
}

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
 * transport is interrupted) closes the child's stdin, waits `closeTimeout` for it to exit, then
 * sends SIGTERM, then SIGKILL (to its process group), and fails what is still pending with
 * `TransportError` `"Closed"` (MCP 2025-11-25, Lifecycle › Shutdown), so no child outlives it. The process is started with
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

/**
 * {@link spawn} as a Layer providing `Transport.ClientTransport` (what `McpClient.layer` connects
 * over): the process starts when the Layer is built and belongs to the Layer's Scope (closing it
 * closes the child's stdin, then SIGTERM / SIGKILL after `closeTimeout`). Fails to build with
 * `TransportError` `"Spawn"` as {@link spawn} does.
 *
 * @example
 * ```ts
 * import * as Layer from "effect/Layer"
 * import { McpClient } from "presa-mcp"
 * import * as Stdio from "presa-mcp/transport/Stdio"
 *
 * const ClientLive = McpClient.layer().pipe(
 *   Layer.provide(Stdio.layerClient({ command: "node", args: ["server.js"] }))
 * )
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layerClient = (options: SpawnOptions): Layer.Layer<ClientTransport, TransportError> =>
  Layer.scoped(ClientTransport, spawn(options))
