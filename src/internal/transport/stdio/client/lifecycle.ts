/**
 * The stdio client's process lifecycle: starting a server process with its reader, stderr reader,
 * stdin and exit watchers; noticing that it is gone; restarting it per `SpawnOptions.restart`
 * with the legacy handshake replayed (MCP 2026-07-28, Transports › stdio: the client SHOULD
 * restart a crashed server); and the graceful shutdown, stdin closed → SIGTERM → SIGKILL (MCP
 * 2025-11-25, Lifecycle › Shutdown).
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as JsonRpc from "../../../../JsonRpc.js"
import * as McpSchema from "../../../../McpSchema.js"
import { TransportError } from "../../../../Transport.js"
import * as Core from "../../../client/connection.js"
import * as ChildProcess from "../../../node/childProcess.js"
import { rootFork } from "../../../runtime.js"
import { sendOn, writeTo } from "./protocol.js"
import { readStderr, readStdout } from "./reading.js"
import { type Client, closedError, type Connection, EXIT_GRACE, type Lifecycle, REPLAY_TIMEOUT } from "./state.js"

/** The lifecycle, read in one step. */
const lifecycleOf = (client: Client): Effect.Effect<Lifecycle> => Effect.sync(() => MutableRef.get(client.lifecycle))

/** Closes the lifecycle with `error` (unless closed already) in one step; the lifecycle before. */
const markClosed = (client: Client, error: TransportError): Effect.Effect<Lifecycle> =>
  Effect.sync(() =>
    MutableRef.getAndUpdate(
      client.lifecycle,
      (s): Lifecycle => ({ ...s, closed: s.closed ?? error, running: undefined })
    )
  )

/** `connection` done with the process `running`, which becomes current unless the transport moved on meanwhile. */
const becomeCurrent = (
  client: Client,
  connection: Deferred.Deferred<Connection, TransportError>,
  running: Connection
): Effect.Effect<void> =>
  Effect.sync(() => {
    Deferred.unsafeDone(connection, Exit.succeed(running))
    const s = MutableRef.get(client.lifecycle)
    if (s.connection === connection && s.closed === undefined) MutableRef.set(client.lifecycle, { ...s, running })
  })

/** The end for good: every waiter and every later call fails with `error`. */
const closeForGood = (client: Client, error: TransportError): Effect.Effect<void> =>
  Effect.gen(function*() {
    const previous = yield* markClosed(client, error)
    yield* Deferred.fail(previous.connection, previous.closed ?? error)
    yield* Core.end(client.connection, previous.closed ?? error)
  })

/** One process, as {@link lost} needs it. */
interface Running {
  readonly scope: Scope.CloseableScope
  readonly ended: Deferred.Deferred<never, TransportError>
  readonly writer: ChildProcess.LineWriter
}

/** This process is gone: fail what waits on it, then restart or close for good. */
const lost = (client: Client, running: Running, error: TransportError): Effect.Effect<void> =>
  Effect.gen(function*() {
    if (!(yield* Deferred.fail(running.ended, error))) return
    running.writer.stop()
    const st = yield* lifecycleOf(client)
    if (st.closed !== undefined || client.options.restart === undefined) return yield* closeForGood(client, error)
    const next = yield* Deferred.make<Connection, TransportError>()
    yield* Effect.sync(() =>
      MutableRef.update(
        client.lifecycle,
        (s): Lifecycle => s.closed === undefined ? { ...s, connection: next, running: undefined } : s
      )
    )
    // after the lifecycle moved on: a session stream subscribing now waits for the next process
    yield* Core.lost(client.connection, error)
    yield* Effect.forkIn(Effect.interruptible(restart(client, error, running.scope, next)), client.scope)
  }).pipe(Effect.uninterruptible)

/**
 * The graceful stop of one process: close stdin → wait → SIGTERM → wait → SIGKILL, each wait
 * `closeTimeout`; then up to `EXIT_GRACE` for the reader to drain the pipe. Uninterruptible.
 */
const shutdownOf = (
  closeTimeout: Duration.DurationInput,
  child: ChildProcess.Child,
  writer: ChildProcess.LineWriter,
  reader: Fiber.Fiber<void>
): Effect.Effect<void> => {
  // Waits inside `shutdown` run uninterruptibly (it is also a finalizer): a timeout can only
  // cut a wait short when the wait itself is interruptible.
  const bounded = <A>(wait: Effect.Effect<A>, limit: Duration.DurationInput): Effect.Effect<Option.Option<A>> =>
    Effect.interruptible(wait).pipe(Effect.timeoutOption(limit))
  const exitedWithin = (step: Effect.Effect<unknown>): Effect.Effect<boolean> =>
    bounded(Effect.zipRight(step, child.exited), closeTimeout).pipe(Effect.map(Option.isSome))
  return Effect.gen(function*() {
    let exited = yield* exitedWithin(Effect.sync(writer.end))
    if (!exited) {
      yield* Effect.logDebug(`the server did not exit within ${Duration.format(closeTimeout)} of stdin closing`)
      exited = yield* exitedWithin(child.kill("SIGTERM"))
    }
    if (!exited) {
      yield* Effect.logWarning("the server ignored SIGTERM; sending SIGKILL")
      exited = yield* exitedWithin(child.kill("SIGKILL"))
    }
    if (!exited) {
      yield* Effect.logError(`the server process ${child.pid} did not exit after SIGKILL`)
    }
    yield* bounded(Fiber.await(reader), EXIT_GRACE)
  }).pipe(Effect.uninterruptible)
}

/** Starts one server process with its reader, stderr reader and exit watcher. */
const start = (client: Client): Effect.Effect<Connection, TransportError> =>
  Effect.gen(function*() {
    const scope = yield* Scope.fork(client.processes, ExecutionStrategy.sequential)
    const child = yield* ChildProcess.spawn(client.spawnProcess, client.spec).pipe(
      Scope.extend(scope),
      Effect.mapError((cause) =>
        new TransportError({
          reason: "Spawn",
          message: `could not start ${client.options.command}: ${cause.message}`,
          cause
        })
      ),
      Effect.onError(() => Scope.close(scope, Exit.void))
    )
    const ended = yield* Deferred.make<never, TransportError>()
    const fork = <A, E>(effect: Effect.Effect<A, E>) => Effect.forkIn(effect, scope)
    // Writes go straight to the pipe from the calling fiber, one write per tick.
    const writer = ChildProcess.lineWriter(child.stdin)
    const self: Running = { scope, ended, writer }

    // A write that fails (EPIPE: the process is gone) ends this connection.
    const stdinFailed = yield* Deferred.make<void>()
    const onStdinError = (): void => {
      writer.stop()
      Deferred.unsafeDone(stdinFailed, Exit.void)
    }
    child.stdin.on("error", onStdinError)
    yield* Scope.addFinalizer(scope, Effect.sync(() => child.stdin.off("error", onStdinError)))
    yield* Deferred.await(stdinFailed).pipe(
      Effect.zipRight(Effect.logDebug("writing to the server's stdin failed")),
      Effect.zipRight(lost(client, self, closedError("writing to the server's stdin failed"))),
      fork
    )

    const runFork = rootFork(yield* Effect.runtime<never>())
    const reader = yield* readStdout(client, child.stdout, runFork).pipe(
      Effect.catchAll((cause) => Effect.logDebug("reading the server's stdout failed", cause)),
      Effect.ensuring(lost(client, self, closedError("the server closed its stdout"))),
      fork
    )
    if (client.onStderr !== undefined && child.stderr !== undefined) {
      yield* readStderr(child.stderr, client.onStderr, runFork).pipe(
        Effect.catchAll((cause) => Effect.logDebug("reading the server's stderr failed", cause)),
        fork
      )
    }

    // When the process exits, let the reader drain what is left in the pipe, then close.
    yield* child.exited.pipe(
      Effect.flatMap((status) =>
        Fiber.await(reader).pipe(
          Effect.timeoutOption(EXIT_GRACE),
          Effect.zipRight(lost(
            client,
            self,
            closedError(
              status.code !== null
                ? `the server process exited with code ${status.code}`
                : "the server process was terminated by a signal"
            )
          ))
        )
      ),
      fork
    )

    const shutdown = shutdownOf(client.closeTimeout, child, writer, reader)
    return { pid: child.pid, scope, send: writer.send, ended, shutdown }
  })

/** The first process: current once started. */
export const startFirst = (client: Client): Effect.Effect<void, TransportError> =>
  Effect.gen(function*() {
    const first = yield* start(client)
    client.pid = first.pid
    yield* becomeCurrent(client, (yield* lifecycleOf(client)).connection, first)
  })

/** A new process, with the legacy handshake replayed when the first one had one. */
const startAndReplay = (client: Client): Effect.Effect<Connection, TransportError> =>
  Effect.gen(function*() {
    const connection = yield* start(client)
    const { init, initialized } = yield* Ref.get(client.handshake)
    if (init === undefined) {
      return connection
    }
    const replay = Effect.gen(function*() {
      const response = yield* Core.request(client.connection, init, undefined, writeTo(connection)).pipe(
        Effect.timeoutFail({
          duration: REPLAY_TIMEOUT,
          onTimeout: () => closedError("the restarted server did not answer initialize")
        })
      )
      if (JsonRpc.isErrorResponse(response)) {
        return yield* new TransportError({
          reason: "Protocol",
          message: `the restarted server refused initialize: ${response.error.message}`
        })
      }
      if (initialized) {
        yield* sendOn(connection.send, JsonRpc.notification(McpSchema.Method.initialized))
      }
    })
    yield* replay.pipe(Effect.onError(() => Scope.close(connection.scope, Exit.void)))
    return connection
  })

/** After a process was lost: start another per the `restart` schedule, or close for good. */
const restart = (
  client: Client,
  cause: TransportError,
  previous: Scope.CloseableScope,
  next: Deferred.Deferred<Connection, TransportError>
): Effect.Effect<void> =>
  Effect.gen(function*() {
    yield* Scope.close(previous, Exit.void)
    if (client.options.restart === undefined) return yield* closeForGood(client, cause)
    const driver = yield* Schedule.driver(client.options.restart)
    let error = cause
    for (;;) {
      const go = yield* Effect.isSuccess(driver.next(error))
      if (!go || (yield* lifecycleOf(client)).closed !== undefined) return yield* closeForGood(client, error)
      const attempt = yield* Effect.either(startAndReplay(client))
      if (attempt._tag === "Right" && (yield* lifecycleOf(client)).closed !== undefined) {
        // closed while this process was starting: it never becomes current
        yield* attempt.right.shutdown
        return yield* Scope.close(attempt.right.scope, Exit.void)
      }
      if (attempt._tag === "Right") {
        client.pid = attempt.right.pid
        yield* Effect.logInfo(`restarted the server process (pid ${attempt.right.pid})`)
        yield* becomeCurrent(client, next, attempt.right)
        return
      }
      error = attempt.left
      yield* Effect.logWarning(`restarting the server process failed: ${error.message}`)
    }
  })

/**
 * The transport's `close` (to run once): no more restarts; the current process gets stdin
 * closed → SIGTERM → SIGKILL; then everything pending fails with `"Closed"`.
 */
export const close = (client: Client): Effect.Effect<void> =>
  Effect.gen(function*() {
    const error = closedError("the transport was closed")
    const previous = yield* markClosed(client, error)
    const connection = yield* Deferred.poll(previous.connection)
    if (Option.isSome(connection)) {
      const settled = yield* Effect.either(connection.value)
      if (settled._tag === "Right") {
        yield* settled.right.shutdown
        yield* Scope.close(settled.right.scope, Exit.void)
      }
    }
    yield* closeForGood(client, error)
  }).pipe(Effect.uninterruptible)
