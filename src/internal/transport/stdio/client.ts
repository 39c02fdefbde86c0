/**
 * The stdio client: spawns a server process and speaks newline-delimited JSON-RPC over its
 * stdin/stdout. Documented on `Stdio.spawn`.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberMap from "effect/FiberMap"
import { identity } from "effect/Function"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../../JsonRpc.js"
import * as McpSchema from "../../../McpSchema.js"
import { type ClientTransport, type RequestHandler, type RequestOptions, TransportError } from "../../../Transport.js"
import { MAX_TIMER_MILLIS, timeoutError } from "../../client/deadline.js"
import { makeRequestHandlers } from "../../client/requestHandlers.js"
import * as ChildProcess from "./childProcess.js"
import * as Frame from "./frame.js"

/** Options of `spawn` (documented on `Stdio.SpawnOptions`). */
export interface SpawnOptions {
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  readonly env?: Readonly<Record<string, string>> | undefined
  readonly cwd?: string | undefined
  readonly stderr?: "inherit" | ((line: string) => Effect.Effect<void>) | undefined
  readonly closeTimeout?: Duration.DurationInput | undefined
  readonly maxLineBytes?: number | undefined
  readonly onNotification?: ((notification: JsonRpc.Notification) => Effect.Effect<void>) | undefined
  readonly onRequest?: RequestHandler | undefined
  readonly restart?: Schedule.Schedule<unknown, TransportError> | undefined
}

/** A client transport over a child process (documented on `Stdio.StdioClientTransport`). */
export interface StdioClientTransport extends ClientTransport {
  /** The process id of the current child. */
  readonly pid: number
  readonly setRequestHandler: (handler: RequestHandler | undefined) => Effect.Effect<void>
  readonly sessionNotifications: Effect.Effect<
    Stream.Stream<JsonRpc.Notification, TransportError>,
    TransportError,
    Scope.Scope
  >
}

/** Default bound of one line read from the server: 64 MiB. */
export const DEFAULT_CLIENT_MAX_LINE_BYTES = 64 * 1024 * 1024
const STDERR_MAX_LINE_BYTES = 1024 * 1024
const DEFAULT_CLOSE_TIMEOUT: Duration.DurationInput = "2 seconds"
/** How long to keep reading stdout after the process exited, for replies still in the pipe. */
const EXIT_GRACE: Duration.DurationInput = "1 second"

interface Pending {
  readonly deferred: Deferred.Deferred<JsonRpc.Response, TransportError>
  readonly progressToken: JsonRpc.RequestId | undefined
  readonly onNotification: ((notification: JsonRpc.Notification) => Effect.Effect<void>) | undefined
}

interface State {
  /** Set once the transport is closed for good; every later call fails with it. */
  readonly closed: TransportError | undefined
  /** The current process, or the next one while the transport restarts it. */
  readonly connection: Deferred.Deferred<Connection, TransportError>
}

/** One server process and the fibers that read and write it. */
interface Connection {
  readonly pid: number
  /** Owns the process and its fibers; closed when the process is gone. */
  readonly scope: Scope.CloseableScope
  /**
   * Writes one line to the process's stdin (lines sent in the same tick go out in one write);
   * `false` once the process is gone or its stdin is closed.
   */
  readonly send: (line: string) => boolean
  /** Fails (with why) when this process's stdout ended or the process exited. */
  readonly ended: Deferred.Deferred<never, TransportError>
  /** Closes stdin, then SIGTERM, then SIGKILL; waits for the exit. */
  readonly shutdown: Effect.Effect<void>
}

/** How long a replayed `initialize` (after a restart) may take. */
const REPLAY_TIMEOUT: Duration.DurationInput = "10 seconds"

const closedError = (message: string): TransportError => new TransportError({ reason: "Closed", message })

const progressTokenOf = (message: JsonRpc.Request): JsonRpc.RequestId | undefined => {
  const meta = message.params?._meta
  if (!JsonRpc.isObject(meta)) return undefined
  const token = meta[McpSchema.MetaKey.progressToken]
  return JsonRpc.isRequestId(token) ? token : undefined
}

/** `RequestOptions.timeout` in milliseconds; `undefined`: no bound (absent, infinite, or beyond a timer's range). */
const timeoutMillis = (timeout: Duration.DurationInput | undefined): number | undefined => {
  if (timeout === undefined) return undefined
  const duration = Duration.decode(timeout)
  if (!Duration.isFinite(duration)) return undefined
  const millis = Duration.toMillis(duration)
  return millis > MAX_TIMER_MILLIS ? undefined : millis
}

const preview = (text: string): string => text.length > 200 ? `${text.slice(0, 200)}…` : text

export const spawn = (
  options: SpawnOptions,
  spawnProcess: ChildProcess.SpawnProcess
): Effect.Effect<StdioClientTransport, TransportError, Scope.Scope> =>
  Effect.gen(function*() {
    const closeTimeout = options.closeTimeout ?? DEFAULT_CLOSE_TIMEOUT
    const maxLineBytes = Math.max(1, Math.floor(options.maxLineBytes ?? DEFAULT_CLIENT_MAX_LINE_BYTES))
    const onStderr = options.stderr === undefined || options.stderr === "inherit" ? undefined : options.stderr
    const transportScope = yield* Effect.scope
    // Each process lives in a child of this scope, made before `close` is registered, so `close`
    // (the graceful stdin → SIGTERM → SIGKILL sequence) runs before any process scope closes.
    const processes = yield* Scope.fork(transportScope, ExecutionStrategy.sequential)
    const spec: ChildProcess.Spec = {
      command: options.command,
      args: options.args ?? [],
      env: options.env,
      cwd: options.cwd,
      stderr: onStderr === undefined ? "inherit" : "pipe"
    }

    const state = yield* Ref.make<State>({
      closed: undefined,
      connection: yield* Deferred.make<Connection, TransportError>()
    })
    // Server→client requests (legacy) run in their own fibers, keyed by the server's id, so a
    // slow answer (a user filling a form) never holds up the reader, and the server's
    // `notifications/cancelled` can interrupt it.
    const handlers = yield* makeRequestHandlers(options.onRequest)
    const serverRequests = yield* FiberMap.make<JsonRpc.RequestId>()
    // Notifications that belong to no request in flight, for `sessionNotifications`.
    const unsolicited = yield* PubSub.unbounded<JsonRpc.Notification>()
    /** The legacy handshake seen so far, replayed on a restarted process. */
    const handshake = yield* Ref.make<{ readonly init: JsonRpc.Request | undefined; readonly initialized: boolean }>(
      { init: undefined, initialized: false }
    )
    let currentPid = -1
    /**
     * The requests in flight, by id. A plain Map: every access is one synchronous step, and the
     * reader resolves a waiter's Deferred straight from it (no fiber or queue per request).
     */
    const pending = new Map<JsonRpc.RequestId, Pending>()

    const failPending = (error: TransportError): Effect.Effect<void> =>
      Effect.gen(function*() {
        const entries = Array.from(pending.values())
        pending.clear()
        for (const entry of entries) yield* Deferred.fail(entry.deferred, error)
      })

    /** The end for good: every waiter and every later call fails with `error`. */
    const closeForGood = (error: TransportError): Effect.Effect<void> =>
      Effect.gen(function*() {
        const previous = yield* Ref.getAndUpdate(state, (s): State => ({ ...s, closed: s.closed ?? error }))
        yield* Deferred.fail(previous.connection, previous.closed ?? error)
        yield* failPending(previous.closed ?? error)
      })

    /** Removes and returns the entry of `id` (synchronous). */
    const unsafeTake = (id: JsonRpc.RequestId): Pending | undefined => {
      const entry = pending.get(id)
      if (entry !== undefined) pending.delete(id)
      return entry
    }

    const safely = (handler: Effect.Effect<void>): Effect.Effect<void> =>
      handler.pipe(Effect.catchAllDefect((defect) => Effect.logWarning("an onNotification handler died", defect)))

    const unrouted = (notification: JsonRpc.Notification): Effect.Effect<void> =>
      Effect.zipRight(
        PubSub.publish(unsolicited, notification),
        options.onNotification === undefined
          ? Effect.logDebug(`dropped a server notification: ${notification.method}`)
          : safely(options.onNotification(notification))
      )

    const route = (notification: JsonRpc.Notification): Effect.Effect<void> =>
      Effect.gen(function*() {
        const params = notification.params ?? {}
        const meta = JsonRpc.isObject(params._meta) ? params._meta : {}
        const subscriptionId = meta[McpSchema.MetaKey.subscriptionId]
        let targets: Array<Pending> = []
        if (JsonRpc.isRequestId(subscriptionId)) {
          // a subscriptions/listen stream; ids compared leniently (protocol.md §14)
          for (const [id, entry] of pending) {
            if (String(id) === String(subscriptionId)) targets.push(entry)
          }
        } else if (notification.method === McpSchema.Method.progress) {
          const token = params.progressToken
          for (const entry of pending.values()) {
            if (entry.progressToken !== undefined && entry.progressToken === token) targets.push(entry)
          }
          if (targets.length === 0) {
            return yield* Effect.logDebug("dropped a progress notification for an unknown token").pipe(
              Effect.annotateLogs("progressToken", String(token))
            )
          }
        } else if (notification.method === McpSchema.Method.cancelled) {
          const requestId = params.requestId
          // the server gave up one of its own requests (legacy): stop answering it
          if (JsonRpc.isRequestId(requestId) && (yield* FiberMap.has(serverRequests, requestId))) {
            yield* FiberMap.remove(serverRequests, requestId)
          }
          const entry = JsonRpc.isRequestId(requestId) ? pending.get(requestId) : undefined
          if (entry === undefined) return yield* Effect.logDebug("ignored notifications/cancelled from the server")
          targets = [entry]
        } else if (notification.method === McpSchema.Method.message) {
          // stdio has no correlation field for log messages: every request in flight gets them
          targets = Array.from(pending.values())
        }
        const handlers = targets.flatMap((t) => t.onNotification === undefined ? [] : [t.onNotification])
        if (handlers.length === 0) return yield* unrouted(notification)
        for (const handler of handlers) yield* safely(handler(notification))
      })

    type Send = (line: string) => boolean
    const sendOn = (send: Send, message: JsonRpc.Message): Effect.Effect<boolean> =>
      Effect.sync(() => send(JsonRpc.encode(message) + "\n"))

    /** A line from the server, parsed once. */
    type Incoming =
      | JsonRpc.Classified
      | { readonly _tag: "Oversized"; readonly bytes: number }
      | { readonly _tag: "NotJson"; readonly text: string }

    const decode = (frame: Frame.Frame): Incoming => {
      if (frame._tag === "Oversized") return frame
      const value = Frame.parseJson(frame.text)
      if (Option.isNone(value)) return { _tag: "NotJson", text: frame.text }
      return JsonRpc.classify(value.value)
    }

    /** A response whose caller waits, settled synchronously from the read callback. */
    const settle = (incoming: Incoming): boolean => {
      if (incoming._tag !== "Response") return false
      const id = incoming.message.id
      if (id === undefined || id === null) return false
      const entry = unsafeTake(id)
      if (entry === undefined) return false
      Deferred.unsafeDone(entry.deferred, Exit.succeed(incoming.message))
      return true
    }

    const handle = (send: Send) => (incoming: Incoming): Effect.Effect<void> => {
      switch (incoming._tag) {
        case "Oversized":
          return Effect.logWarning(`dropped a line of ${incoming.bytes} bytes from the server (limit ${maxLineBytes})`)
        case "NotJson":
          return Effect.logWarning(`skipped a line from the server that is not JSON: ${preview(incoming.text)}`)
        case "Response": {
          // not settled (onStdout tried first): no caller waits for it
          const response = incoming.message
          if (response.id === undefined || response.id === null) {
            return Effect.logWarning("the server sent an error not tied to a request").pipe(
              Effect.annotateLogs("error", JsonRpc.encode(response))
            )
          }
          return Effect.logDebug("a response for a request that is not pending (unknown, or cancelled)").pipe(
            Effect.annotateLogs("requestId", response.id)
          )
        }
        case "Notification":
          return route(incoming.message)
        case "Request": {
          const request = incoming.message
          return FiberMap.run(
            serverRequests,
            request.id,
            Effect.flatMap(handlers.answer(request), (response) => sendOn(send, response)),
            { onlyIfMissing: true }
          ).pipe(Effect.asVoid)
        }
        case "Invalid":
          return Effect.logWarning(`skipped an invalid message from the server: ${incoming.error.message}`)
      }
    }

    /** Starts one server process with its reader, stderr reader and exit watcher. */
    const start: Effect.Effect<Connection, TransportError> = Effect.gen(function*() {
      const scope = yield* Scope.fork(processes, ExecutionStrategy.sequential)
      const child = yield* ChildProcess.spawn(spawnProcess, spec).pipe(
        Scope.extend(scope),
        Effect.mapError((cause) =>
          new TransportError({
            reason: "Spawn",
            message: `could not start ${options.command}: ${cause.message}`,
            cause
          })
        ),
        Effect.onError(() => Scope.close(scope, Exit.void))
      )
      const ended = yield* Deferred.make<never, TransportError>()
      const fork = <A, E>(effect: Effect.Effect<A, E>) => Effect.forkIn(effect, scope)

      // Writes go straight to the pipe from the calling fiber. Unbounded: callers are bounded by
      // awaiting their replies, and a cancel notification sent by an interrupted caller must never
      // wait. The first line of a tick is written at once (no added latency when sequential);
      // lines sent later in the same tick join one write on the next tick.
      let writable = true
      let batch: Array<string> | undefined
      const flushBatch = (): void => {
        const lines = batch
        batch = undefined
        if (lines !== undefined && lines.length > 0 && writable) child.stdin.write(lines.join(""))
      }
      const send: Send = (line) => {
        if (!writable) return false
        if (batch !== undefined) {
          batch.push(line)
          return true
        }
        batch = []
        process.nextTick(flushBatch)
        child.stdin.write(line)
        return true
      }
      const closeStdin = (): void => {
        if (!writable) return
        flushBatch()
        writable = false
        child.stdin.end()
      }

      /** This process is gone: fail what waits on it, then restart or close for good. */
      const lost = (error: TransportError): Effect.Effect<void> =>
        Effect.gen(function*() {
          if (!(yield* Deferred.fail(ended, error))) return
          writable = false
          yield* FiberMap.clear(serverRequests)
          const st = yield* Ref.get(state)
          if (st.closed !== undefined || options.restart === undefined) return yield* closeForGood(error)
          const next = yield* Deferred.make<Connection, TransportError>()
          yield* Ref.update(state, (s): State => s.closed === undefined ? { ...s, connection: next } : s)
          yield* failPending(error)
          yield* Effect.forkIn(Effect.interruptible(restart(error, scope, next)), transportScope)
        }).pipe(Effect.uninterruptible)

      // A write that fails (EPIPE: the process is gone) ends this connection.
      const stdinFailed = yield* Deferred.make<void>()
      const onStdinError = (): void => {
        writable = false
        Deferred.unsafeDone(stdinFailed, Exit.void)
      }
      child.stdin.on("error", onStdinError)
      yield* Scope.addFinalizer(scope, Effect.sync(() => child.stdin.off("error", onStdinError)))
      yield* Deferred.await(stdinFailed).pipe(
        Effect.zipRight(Effect.logDebug("writing to the server's stdin failed")),
        Effect.zipRight(lost(closedError("writing to the server's stdin failed"))),
        fork
      )

      // A response whose caller waits is settled right in the read callback; anything else runs
      // in a fiber before the next line is handled.
      const runFork = Runtime.runFork(yield* Effect.runtime<never>())
      const onStdout = (frame: Frame.Frame): Effect.Effect<void> | undefined => {
        const incoming = decode(frame)
        return settle(incoming) ? undefined : handle(send)(incoming)
      }
      const reader = yield* Frame.readFrom(child.stdout, maxLineBytes, onStdout, runFork, identity).pipe(
        Effect.catchAll((cause) => Effect.logDebug("reading the server's stdout failed", cause)),
        Effect.ensuring(lost(closedError("the server closed its stdout"))),
        fork
      )

      if (onStderr !== undefined && child.stderr !== undefined) {
        const onStderrLine = (frame: Frame.Frame): Effect.Effect<void> =>
          frame._tag === "Line"
            ? safely(onStderr(frame.text))
            : Effect.logDebug(`dropped a stderr line of ${frame.bytes} bytes`)
        yield* Frame.readFrom(child.stderr, STDERR_MAX_LINE_BYTES, onStderrLine, runFork, identity).pipe(
          Effect.catchAll((cause) => Effect.logDebug("reading the server's stderr failed", cause)),
          fork
        )
      }

      // When the process exits, let the reader drain what is left in the pipe, then close.
      yield* child.exited.pipe(
        Effect.flatMap((status) =>
          Fiber.await(reader).pipe(
            Effect.timeoutOption(EXIT_GRACE),
            Effect.zipRight(lost(closedError(
              status.code !== null
                ? `the server process exited with code ${status.code}`
                : "the server process was terminated by a signal"
            )))
          )
        ),
        fork
      )

      // Waits inside `shutdown` run uninterruptibly (it is also a finalizer): a timeout can only
      // cut a wait short when the wait itself is interruptible.
      const bounded = <A>(wait: Effect.Effect<A>, limit: Duration.DurationInput): Effect.Effect<Option.Option<A>> =>
        Effect.interruptible(wait).pipe(Effect.timeoutOption(limit))
      const exitedWithin = (step: Effect.Effect<unknown>): Effect.Effect<boolean> =>
        bounded(Effect.zipRight(step, child.exited), closeTimeout).pipe(Effect.map(Option.isSome))

      // close stdin → wait → SIGTERM → wait → SIGKILL (protocol.md §19.1).
      const shutdown = Effect.gen(function*() {
        let exited = yield* exitedWithin(Effect.sync(closeStdin))
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

      return { pid: child.pid, scope, send, ended, shutdown }
    })

    /** A request on one given process (the current one, or a restarted one being set up). */
    const requestOn = (
      connection: Connection,
      message: JsonRpc.Request,
      requestOptions?: RequestOptions
    ): Effect.Effect<JsonRpc.Response, TransportError> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(Ref.get(state), (s) => {
          if (s.closed !== undefined) {
            return Effect.fail(s.closed)
          }
          if (pending.has(message.id)) {
            return Effect.fail(
              new TransportError({
                reason: "Protocol",
                message: `a request with id ${JSON.stringify(message.id)} is already in flight`
              })
            )
          }
          const deferred = Deferred.unsafeMake<JsonRpc.Response, TransportError>(FiberId.none)
          pending.set(message.id, {
            deferred,
            progressToken: progressTokenOf(message),
            onNotification: requestOptions?.onNotification
          })
          if (!connection.send(JsonRpc.encode(message) + "\n")) {
            pending.delete(message.id)
            return Effect.fail(closedError("the server process is gone"))
          }
          // The deadline fails the waiter directly; `cancel` then tells the server, as for an
          // interruption (the entry is still pending, unless the response won the race).
          const millis = timeoutMillis(requestOptions?.timeout)
          const timer = millis === undefined ? undefined : setTimeout(() => {
            Deferred.unsafeDone(deferred, Exit.fail(timeoutError(message.method)))
          }, millis)
          return restore(Deferred.await(deferred)).pipe(
            Effect.onExit((exit) => {
              if (timer !== undefined) {
                clearTimeout(timer)
              }
              return Exit.isSuccess(exit) ? Effect.void : cancel(connection, message)
            })
          )
        })
      )

    // The caller gave up: forget the request and tell the server (never for `initialize`).
    const cancel = (connection: Connection, message: JsonRpc.Request): Effect.Effect<void> =>
      Effect.suspend(() =>
        unsafeTake(message.id) === undefined || message.method === McpSchema.Method.initialize
          ? Effect.void
          : Effect.asVoid(sendOn(
            connection.send,
            JsonRpc.notification(McpSchema.Method.cancelled, {
              requestId: message.id,
              reason: "The client cancelled the request"
            })
          ))
      )

    /** The current process; waits while the transport restarts one. */
    const current: Effect.Effect<Connection, TransportError> = Effect.flatMap(
      Ref.get(state),
      (s) => s.closed !== undefined ? Effect.fail(s.closed) : Deferred.await(s.connection)
    )

    /** A new process, with the legacy handshake replayed when the first one had one (EC-15 on stdio). */
    const startAndReplay: Effect.Effect<Connection, TransportError> = Effect.gen(function*() {
      const connection = yield* start
      const { init, initialized } = yield* Ref.get(handshake)
      if (init === undefined) {
        return connection
      }
      const replay = Effect.gen(function*() {
        const response = yield* requestOn(connection, init).pipe(
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
      cause: TransportError,
      previous: Scope.CloseableScope,
      next: Deferred.Deferred<Connection, TransportError>
    ): Effect.Effect<void> =>
      Effect.gen(function*() {
        yield* Scope.close(previous, Exit.void)
        if (options.restart === undefined) return yield* closeForGood(cause)
        const driver = yield* Schedule.driver(options.restart)
        let error = cause
        for (;;) {
          const go = yield* Effect.isSuccess(driver.next(error))
          if (!go || (yield* Ref.get(state)).closed !== undefined) return yield* closeForGood(error)
          const attempt = yield* Effect.either(startAndReplay)
          if (attempt._tag === "Right" && (yield* Ref.get(state)).closed !== undefined) {
            // closed while this process was starting: it never becomes current
            yield* attempt.right.shutdown
            return yield* Scope.close(attempt.right.scope, Exit.void)
          }
          if (attempt._tag === "Right") {
            currentPid = attempt.right.pid
            yield* Effect.logInfo(`restarted the server process (pid ${attempt.right.pid})`)
            yield* Deferred.succeed(next, attempt.right)
            return
          }
          error = attempt.left
          yield* Effect.logWarning(`restarting the server process failed: ${error.message}`)
        }
      })

    const first = yield* start
    currentPid = first.pid
    yield* Deferred.succeed((yield* Ref.get(state)).connection, first)

    // close: no more restarts; the current process gets stdin closed → SIGTERM → SIGKILL. Runs once.
    const close = yield* Effect.cached(
      Effect.gen(function*() {
        const error = closedError("the transport was closed")
        const previous = yield* Ref.getAndUpdate(state, (s): State => ({ ...s, closed: s.closed ?? error }))
        const connection = yield* Deferred.poll(previous.connection)
        if (Option.isSome(connection)) {
          const settled = yield* Effect.either(connection.value)
          if (settled._tag === "Right") {
            yield* settled.right.shutdown
            yield* Scope.close(settled.right.scope, Exit.void)
          }
        }
        yield* closeForGood(error)
      }).pipe(Effect.uninterruptible)
    )
    // Registered last, so it runs first when the scope closes: the fibers above are still alive.
    yield* Effect.addFinalizer(() => close)

    /**
     * The current process for a request with `timeout`: at once when it is running; while the
     * transport restarts one, the wait counts against the request's timeout (the rest is left
     * for the request itself).
     */
    const currentFor = (
      message: JsonRpc.Request,
      requestOptions: RequestOptions | undefined
    ): Effect.Effect<readonly [Connection, RequestOptions | undefined], TransportError> =>
      Effect.flatMap(Ref.get(state), (s) => {
        if (s.closed !== undefined) return Effect.fail(s.closed)
        return Effect.flatMap(Deferred.poll(s.connection), (ready) => {
          if (Option.isSome(ready)) return Effect.map(ready.value, (c) => [c, requestOptions] as const)
          const millis = timeoutMillis(requestOptions?.timeout)
          if (millis === undefined) return Effect.map(Deferred.await(s.connection), (c) => [c, requestOptions] as const)
          const startedAt = Date.now()
          return Deferred.await(s.connection).pipe(
            Effect.timeoutFail({ duration: millis, onTimeout: () => timeoutError(message.method) }),
            Effect.map((c) =>
              [c, { ...requestOptions, timeout: Math.max(1, millis - (Date.now() - startedAt)) }] as const
            )
          )
        })
      })

    const request = (
      message: JsonRpc.Request,
      requestOptions?: RequestOptions
    ): Effect.Effect<JsonRpc.Response, TransportError> =>
      Effect.flatMap(
        currentFor(message, requestOptions),
        ([connection, rest]) =>
          message.method === McpSchema.Method.initialize && options.restart !== undefined
            ? Effect.tap(
              requestOn(connection, message, rest),
              (response) =>
                JsonRpc.isErrorResponse(response)
                  ? Effect.void
                  : Ref.update(handshake, (h) => ({ ...h, init: message }))
            )
            : requestOn(connection, message, rest)
      )

    const notify = (message: JsonRpc.Notification): Effect.Effect<void, TransportError> =>
      Effect.gen(function*() {
        const connection = yield* current
        if (!(yield* sendOn(connection.send, message))) return yield* closedError("the server process is gone")
        if (message.method === McpSchema.Method.initialized) {
          yield* Ref.update(handshake, (h) => ({ ...h, initialized: true }))
        }
      })

    const sessionNotifications: Effect.Effect<
      Stream.Stream<JsonRpc.Notification, TransportError>,
      TransportError,
      Scope.Scope
    > = Effect.gen(function*() {
      const connection = yield* current
      const subscription = yield* PubSub.subscribe(unsolicited)
      const { closed } = yield* Ref.get(state)
      if (closed !== undefined) return yield* closed
      return Stream.fromQueue(subscription).pipe(Stream.interruptWhen(Deferred.await(connection.ended)))
    })

    return {
      request,
      notify,
      close,
      get pid() {
        return currentPid
      },
      setRequestHandler: handlers.set,
      sessionNotifications
    }
  })
