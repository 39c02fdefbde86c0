/**
 * The stdio server loop: newline-delimited JSON-RPC over a byte stream in and a byte sink out.
 * Documented on `Stdio.serve`.
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import type * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../../JsonRpc.js"
import * as McpSchema from "../../../McpSchema.js"
import * as McpServer from "../../../McpServer.js"
import { TransportError } from "../../../Transport.js"
import * as ServerRequests from "../../server/clientRequests.js"
import * as Core from "../../server/dispatch.js"
import * as Frame from "./frame.js"

/** Options of `serve` (documented on `Stdio.ServeOptions`). */
export interface ServeOptions<E = never, E2 = never, R = never, R2 = never> {
  readonly stdin: Stream.Stream<Uint8Array, E, R>
  readonly stdout: Sink.Sink<unknown, Uint8Array, unknown, E2, R2>
  /**
   * When set, lines are written straight to this stream instead of through `stdout` (`Stdio.run`
   * passes `process.stdout`): no writer fiber and no channel steps per response.
   */
  readonly writable?: Writable | undefined
  /**
   * When set, bytes are read straight from this stream with `data` events instead of from
   * `stdin` (`Stdio.run` passes `process.stdin`): no Stream and no channel steps per chunk.
   */
  readonly readable?: Frame.Readable | undefined
  readonly maxLineBytes?: number | undefined
  readonly drainTimeout?: Duration.DurationInput | undefined
}

/** The part of a Node `Writable` (e.g. `process.stdout`) that `serve` writes lines to. */
export interface Writable {
  readonly write: (chunk: string) => boolean
  readonly end: () => unknown
  readonly writableNeedDrain: boolean
  readonly writableFinished: boolean
  readonly on: (event: string, listener: (...args: Array<unknown>) => void) => unknown
  readonly off: (event: string, listener: (...args: Array<unknown>) => void) => unknown
}

/** Lines waiting for the writer; a slow reader of stdout applies backpressure beyond this. */
const OUTBOX_CAPACITY = 256

const DEFAULT_DRAIN_TIMEOUT: Duration.DurationInput = "5 seconds"

export const serve = <E, E2, R, R2>(
  server: McpServer.McpServer,
  options: ServeOptions<E, E2, R, R2>
): Effect.Effect<void, TransportError, R | R2> =>
  Effect.gen(function*() {
    const maxLineBytes = Math.max(1, Math.floor(options.maxLineBytes ?? Frame.DEFAULT_MAX_LINE_BYTES))
    const drainTimeout = options.drainTimeout ?? DEFAULT_DRAIN_TIMEOUT
    const session = yield* McpServer.makeSession
    const encoder = new TextEncoder()

    const output = options.writable === undefined
      ? yield* sinkOutput(options.stdout, encoder)
      : yield* writableOutput(options.writable)
    const write = (message: JsonRpc.Message): Effect.Effect<void> => output.write(JsonRpc.encode(message) + "\n")
    const notify = (notification: JsonRpc.Notification): Effect.Effect<void> => write(notification)

    const inflight = yield* makeInflight

    // The session's unsolicited notifications (legacy list_changed, resources/updated) share the
    // pipe; subscribed before the first line is read.
    const unsolicited = yield* McpServer.sessionNotifications(server, session)
    yield* unsolicited.pipe(Stream.runForEach(notify), Effect.forkScoped)

    // Legacy server→client requests (Input.* in a legacy session) go out as lines; the client's
    // response lines settle them.
    const pending = yield* ServerRequests.make
    const sendRequest = ServerRequests.send(pending, write)
    // Ends this pipe's open `subscriptions/listen` requests when stdin ends (other transports of
    // the same server are not affected).
    const stopped = yield* Deferred.make<void>()

    const answer = (value: unknown): Effect.Effect<void> =>
      Effect.flatMap(
        McpServer.dispatch(server, value, { session, notify, sendRequest, shutdown: stopped }),
        (reply) => Option.isSome(reply) ? write(reply.value.message) : Effect.void
      )

    // An error for a line whose id cannot be read (non-JSON, too long): the core's rule.
    const unreadable = (error: JsonRpc.McpError): Effect.Effect<void> =>
      Effect.flatMap(Core.invalidResponse(session, undefined, error), write)

    const cancel = (params: JsonRpc.JsonObject | undefined): Effect.Effect<void> =>
      Effect.gen(function*() {
        const requestId = params?.requestId
        if (!JsonRpc.isRequestId(requestId)) return
        const fiber = inflight.fibers.get(requestId)
        if (fiber === undefined) {
          return yield* Effect.logDebug("notifications/cancelled for a request that is not in flight").pipe(
            Effect.annotateLogs("requestId", requestId)
          )
        }
        // Do not wait for the handler's finalizers here: the reader keeps reading meanwhile.
        // The fiber leaves the map by itself once it is done; it never writes its reply.
        const self = yield* Effect.fiberId
        yield* Fiber.interruptAsFork(fiber, self)
      })

    const onRequest = (request: JsonRpc.Request, value: unknown): Effect.Effect<void> | undefined => {
      if (request.method === McpSchema.Method.initialize) {
        // Run inline: it is fast, MUST NOT be cancelled, and requests read after it must see
        // the session it creates.
        return answer(value)
      }
      if (inflight.fibers.has(request.id)) {
        return Effect.logWarning("a request reuses the id of a request still in flight; ignored").pipe(
          Effect.annotateLogs("requestId", request.id)
        )
      }
      inflight.start(request.id, answer(value))
      return undefined
    }

    // Handles one frame, in arrival order: returns what is still to run before the next frame is
    // handled, or `undefined` when the frame is handled already (a request started in its fiber).
    const onFrame = (frame: Frame.Frame): Effect.Effect<void> | undefined => {
      if (frame._tag === "Oversized") {
        return Effect.logWarning(`dropped an incoming line of ${frame.bytes} bytes (limit ${maxLineBytes})`).pipe(
          Effect.zipRight(unreadable(
            JsonRpc.McpError.invalidRequest(`Invalid Request: the message exceeds ${maxLineBytes} bytes`, {
              maxLineBytes
            })
          ))
        )
      }
      const value = Frame.parseJson(frame.text)
      if (Option.isNone(value)) {
        return Effect.logDebug("an incoming line is not JSON").pipe(
          Effect.zipRight(unreadable(JsonRpc.McpError.parseError()))
        )
      }
      const classified = JsonRpc.classify(value.value)
      switch (classified._tag) {
        case "Invalid":
          return answer(value.value)
        case "Response":
          return Effect.flatMap(ServerRequests.resolve(pending, classified.message), (settled) =>
            settled ? Effect.void : Effect.logDebug("ignored a response to no pending request"))
        case "Notification":
          return classified.message.method === McpSchema.Method.cancelled
            ? cancel(classified.message.params)
            : Effect.asVoid(McpServer.dispatch(server, value.value, { session, notify }))
        case "Request":
          return onRequest(classified.message, value.value)
      }
    }

    const reading = options.readable === undefined
      ? options.stdin.pipe(
        Stream.mapError(readFailed),
        Frame.frames(maxLineBytes),
        Stream.runForEach((frame) =>
          onFrame(frame) ?? Effect.void
        )
      )
      : Frame.readFrom(options.readable, maxLineBytes, onFrame, inflight.runFork, readFailed)
    // A writer failure (stdout closed under us) ends the serve at once.
    const writerFailed = output.failed.pipe(Effect.zipRight(Effect.never))
    yield* Effect.raceFirst(reading, writerFailed)

    // stdin ended: drain, then interrupt what is left, then flush.
    yield* Deferred.succeed(stopped, undefined)
    const drained = yield* inflight.awaitEmpty.pipe(Effect.timeoutOption(drainTimeout))
    if (Option.isNone(drained)) {
      yield* Effect.logWarning(
        `stdin closed; interrupting ${inflight.fibers.size} request(s) still running after the drain timeout`
      )
      yield* inflight.interruptAll
    }
    yield* output.flush
  }).pipe(Effect.scoped)

/**
 * The requests in flight, by exact id (a `Map`: `0` and `"0"` are different keys). Each request
 * runs in its own root fiber, started at once (`Runtime.runFork`) with the serving fiber's
 * context and fiber refs (logger, tracer, span) and default runtime flags, as `FiberMap.run`
 * does, at a lower cost per request. A fiber leaves the map when it is done; the map's fibers are
 * interrupted when the serving scope closes.
 */
interface Inflight {
  readonly fibers: ReadonlyMap<JsonRpc.RequestId, Fiber.RuntimeFiber<void>>
  /** Starts a fiber in the runtime the requests run in (not tracked). */
  readonly runFork: (effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>
  /** Starts `effect` for `id` (the caller has checked that `id` is not in flight). */
  readonly start: (id: JsonRpc.RequestId, effect: Effect.Effect<void>) => void
  /** Resumes once no request is in flight. */
  readonly awaitEmpty: Effect.Effect<void>
  /** Interrupts every request in flight and waits for them. */
  readonly interruptAll: Effect.Effect<void>
}

const makeInflight: Effect.Effect<Inflight, never, Scope.Scope> = Effect.gen(function*() {
  const fibers = new Map<JsonRpc.RequestId, Fiber.RuntimeFiber<void>>()
  const empty = new Set<() => void>()
  const runtime = Runtime.make({
    context: yield* Effect.context<never>(),
    fiberRefs: yield* Effect.getFiberRefs,
    runtimeFlags: Runtime.defaultRuntime.runtimeFlags
  })
  const runFork = Runtime.runFork(runtime)
  const interruptAll = Effect.suspend(() => Fiber.interruptAll(fibers.values()))
  yield* Effect.addFinalizer(() => interruptAll)
  const inflight: Inflight = {
    fibers,
    runFork,
    start: (id, effect) => {
      const fiber = runFork(effect)
      if (fiber.unsafePoll() !== null) return
      fibers.set(id, fiber)
      fiber.addObserver(() => {
        fibers.delete(id)
        if (fibers.size > 0) return
        for (const resume of empty) resume()
      })
    },
    awaitEmpty: Effect.async<void>((resume) => {
      if (fibers.size === 0) return resume(Effect.void)
      const done = (): void => {
        empty.delete(done)
        resume(Effect.void)
      }
      empty.add(done)
      return Effect.sync(() => {
        empty.delete(done)
      })
    }),
    interruptAll
  }
  return inflight
})

const readFailed = (cause: unknown): TransportError =>
  new TransportError({ reason: "Closed", message: "reading stdin failed", cause })

/** Where the lines go: `write` queues one whole line, in call order. */
interface Output {
  readonly write: (line: string) => Effect.Effect<void>
  /** Fails when writing failed (stdout closed under us); never succeeds before `flush`. */
  readonly failed: Effect.Effect<void, TransportError>
  /** Waits until every line written so far is handed to the OS (or writing failed). */
  readonly flush: Effect.Effect<void, TransportError>
}

const writeFailed = (cause: unknown): TransportError =>
  new TransportError({ reason: "Closed", message: "writing to stdout failed", cause })

/**
 * Lines through a byte `Sink`, by one writer fiber. Each write is a system call (pipes are
 * synchronous on Linux): the writer yields once before writing, so that responses finishing
 * meanwhile go out in the same write.
 */
const sinkOutput = <E2, R2>(
  sink: Sink.Sink<unknown, Uint8Array, unknown, E2, R2>,
  encoder: TextEncoder
) =>
  Effect.gen(function*() {
    const outbox = yield* Mailbox.make<string>(OUTBOX_CAPACITY)
    const writer = yield* Mailbox.toStream(outbox).pipe(
      Stream.mapChunksEffect((lines) => Effect.as(Effect.yieldNow(), Chunk.of(encoder.encode(Chunk.join(lines, ""))))),
      Stream.run(sink),
      Effect.mapError(writeFailed),
      Effect.forkScoped
    )
    const output: Output = {
      write: (line) => Effect.asVoid(outbox.offer(line)),
      failed: Effect.asVoid(Fiber.join(writer)),
      flush: Effect.zipRight(outbox.end, Fiber.join(writer))
    }
    return output
  })

/**
 * Lines written straight to a Node writable from the fiber that produced them, in call order,
 * without a writer fiber or channel steps. The first line of a tick is written at once (the
 * sequential case: no added latency); lines written later in the same tick join one write on the
 * next tick (`cork`/`uncork` instead cost ~50 µs of CPU per sequential call, measured with
 * `bench/hot.ts stdio-raw1`). Backpressure: when the stream's buffer is full, the writing fiber
 * waits for `drain`. `flush` ends the stream and waits for `finish`, as the platform's `NodeSink`
 * does.
 */
const writableOutput = (writable: Writable) =>
  Effect.gen(function*() {
    const failure = yield* Deferred.make<void, TransportError>()
    let broken = false
    const onError = (error: unknown): void => {
      broken = true
      Deferred.unsafeDone(failure, Effect.fail(writeFailed(error)))
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => writable.on("error", onError)),
      () => Effect.sync(() => writable.off("error", onError))
    )
    // Resumes once `event` fires or writing failed.
    const waitFor = (event: "drain" | "finish"): Effect.Effect<void> =>
      Effect.async<void>((resume) => {
        const done = (): void => {
          writable.off(event, done)
          writable.off("error", done)
          resume(Effect.void)
        }
        writable.on(event, done)
        writable.on("error", done)
        return Effect.sync(() => {
          writable.off(event, done)
          writable.off("error", done)
        })
      })
    let batch: Array<string> | undefined
    const flushBatch = (): void => {
      const lines = batch
      batch = undefined
      if (lines !== undefined && lines.length > 0 && !broken) writable.write(lines.join(""))
    }
    const writeNow = (line: string): boolean => {
      if (broken) return true
      if (batch !== undefined) {
        batch.push(line)
        return !writable.writableNeedDrain
      }
      batch = []
      process.nextTick(flushBatch)
      return writable.write(line)
    }
    const output: Output = {
      write: (line) => Effect.suspend(() => writeNow(line) ? Effect.void : waitFor("drain")),
      failed: Deferred.await(failure),
      flush: Effect.suspend(() => {
        flushBatch()
        if (broken) return Deferred.await(failure)
        if (writable.writableFinished) return Effect.void
        const finished = waitFor("finish")
        writable.end()
        return Effect.zipRight(finished, Effect.suspend(() => broken ? Deferred.await(failure) : Effect.void))
      })
    }
    return output
  })
