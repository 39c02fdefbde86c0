/**
 * The stdio server: newline-delimited JSON-RPC over a byte stream in and a byte sink out (MCP
 * 2025-11-25, Basic, Transports, "stdio"), an adapter over the connection core
 * (`server/connection.ts`): it frames lines, classifies each once and writes what the connection
 * answers. Documented on `Stdio.serve`.
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
import type * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../../JsonRpc.js"
import * as McpServer from "../../../McpServer.js"
import { TransportError } from "../../../Transport.js"
import type * as Stdio from "../../../transport/Stdio.js"
import { nextTick } from "../../runtime.js"
import * as Connection from "../../server/connection.js"
import * as Service from "../../server/service.js"
import * as Frame from "./frame.js"

/** What `serve` takes: the public options, and the direct Node streams `Stdio.run` passes. */
/** The peer of a stdio server: a pipe (semantic-conventions-genai, docs/gen-ai/mcp.md, "Recording MCP transport"). */
const PIPE = { transport: "pipe" } as const

export interface ServeOptions<E = never, E2 = never, R = never, R2 = never> extends Stdio.ServeOptions<E, E2, R, R2> {
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

/** Characters of lines joined into one write within a tick before they are written at once. */
const BATCH_LIMIT = 64 * 1024

/** Lines waiting for the writer; a slow reader of stdout applies backpressure beyond this. */
const OUTBOX_CAPACITY = 256

/** Default `writeTimeout`: how long a line may wait for a reader that stopped reading. */
export const DEFAULT_WRITE_TIMEOUT: Duration.DurationInput = "60 seconds"

export const serve = <E, E2, R, R2>(
  server: McpServer.McpServer,
  options: ServeOptions<E, E2, R, R2>
): Effect.Effect<void, TransportError, R | R2> =>
  Effect.gen(function*() {
    const maxLineBytes = Math.max(1, Math.floor(options.maxLineBytes ?? Frame.DEFAULT_MAX_LINE_BYTES))
    const writeTimeout = Duration.decode(options.writeTimeout ?? DEFAULT_WRITE_TIMEOUT)
    const output = options.writable === undefined
      ? yield* sinkOutput(options.stdout, writeTimeout)
      : yield* writableOutput(options.writable, writeTimeout)
    // The session's unsolicited notifications (legacy list_changed, resources/updated) share the
    // pipe (`send`): the connection subscribes to them before the first line is read.
    const connection = yield* Connection.make(Service.internal(server), {
      session: yield* McpServer.makeSession,
      send: (text) => output.write(text + "\n"),
      maxInFlight: options.maxInFlight,
      maxQueued: options.maxQueued,
      duplicateIds: "ignore",
      isOpen: () => !output.broken(),
      peer: PIPE
    })

    // An error for a line whose id cannot be read (non-JSON, too long).
    const unreadable = (error: JsonRpc.McpError): Effect.Effect<void> =>
      connection.receive({ message: { _tag: "Invalid", id: undefined, error } })

    // Handles one frame, in arrival order: returns what is still to run before the next frame is
    // handled, or `undefined` when the frame is handled already (a request started in its fiber or
    // queued: the connection answers `Effect.void` itself, the frame reader's fast path).
    const onFrame = (frame: Frame.Frame): Effect.Effect<void> | undefined => {
      // The peer stopped reading for good: nothing more is started (the serve is ending).
      if (output.broken()) return undefined
      if (frame._tag === "Oversized") {
        return Effect.zipRight(
          Effect.logWarning(`dropped an incoming line of ${frame.bytes} bytes (limit ${maxLineBytes})`),
          unreadable(
            JsonRpc.McpError.invalidRequest(`Invalid Request: the message exceeds ${maxLineBytes} bytes`, {
              maxLineBytes
            })
          )
        )
      }
      const value = Frame.parseJson(frame.text)
      if (Option.isNone(value)) {
        return Effect.zipRight(
          Effect.logDebug("an incoming line is not JSON"),
          unreadable(JsonRpc.McpError.parseError())
        )
      }
      const rest = connection.receive({ message: JsonRpc.classify(value.value) })
      return rest === Effect.void ? undefined : rest
    }

    const reading = options.readable === undefined
      ? options.stdin.pipe(
        Stream.mapError(readFailed),
        Frame.frames(maxLineBytes),
        Stream.runForEach((frame) => onFrame(frame) ?? Effect.void)
      )
      : Frame.readFrom(options.readable, maxLineBytes, onFrame, connection.runFork, readFailed)
    // A writer failure (stdout closed under us, or its reader stuck past `writeTimeout`) ends the
    // serve at once; closing the scope interrupts the requests still running.
    const writerFailed = output.failed.pipe(Effect.zipRight(Effect.never))
    yield* Effect.raceFirst(reading, writerFailed)

    // stdin ended: `stopped`, drain, then interrupt what is left, then flush.
    yield* connection.stop(options.drainTimeout ?? Connection.DEFAULT_DRAIN_TIMEOUT)
    yield* output.flush
  }).pipe(Effect.scoped)

const readFailed = (cause: unknown): TransportError =>
  new TransportError({ reason: "Closed", message: "reading stdin failed", cause })

/** Where the lines go: `write` queues one whole line, in call order. */
interface Output {
  readonly write: (line: string) => Effect.Effect<void>
  /** True once writing failed or gave up: nothing more is read. */
  readonly broken: () => boolean
  /** Fails when writing failed (stdout closed under us); never succeeds before `flush`. */
  readonly failed: Effect.Effect<void, TransportError>
  /** Waits until every line written so far is handed to the OS (or writing failed). */
  readonly flush: Effect.Effect<void, TransportError>
}

const writeFailed = (cause: unknown): TransportError =>
  new TransportError({ reason: "Closed", message: "writing to stdout failed", cause })

const readerStuck = (writeTimeout: Duration.Duration): TransportError =>
  new TransportError({
    reason: "Closed",
    message: `stdout: the client has read nothing for ${Duration.format(writeTimeout)}; closing the connection`
  })

/** `wait`, or the `stuck` Deferred failed once it has not resumed within `writeTimeout`. */
const boundedWait = (
  wait: Effect.Effect<unknown>,
  writeTimeout: Duration.Duration,
  stuck: () => void
): Effect.Effect<void> =>
  Effect.flatMap(
    Effect.timeoutOption(wait, writeTimeout),
    (done) => Option.isSome(done) ? Effect.void : Effect.sync(stuck)
  )

/**
 * Lines through a byte `Sink`, by one writer fiber. Each write is a system call (pipes are
 * synchronous on Linux): the writer yields once before writing, so that responses finishing
 * meanwhile go out in the same write.
 */
const sinkOutput = <E2, R2>(
  sink: Sink.Sink<unknown, Uint8Array, unknown, E2, R2>,
  writeTimeout: Duration.Duration
) =>
  Effect.gen(function*() {
    const encoder = new TextEncoder()
    const stuck = yield* Deferred.make<void, TransportError>()
    let broken = false
    const onStuck = (): void => {
      broken = true
      Deferred.unsafeDone(stuck, Effect.fail(readerStuck(writeTimeout)))
    }
    const outbox = yield* Mailbox.make<string>(OUTBOX_CAPACITY)
    const writer = yield* Mailbox.toStream(outbox).pipe(
      Stream.mapChunksEffect((lines) => Effect.as(Effect.yieldNow(), Chunk.of(encoder.encode(Chunk.join(lines, ""))))),
      Stream.run(sink),
      Effect.mapError(writeFailed),
      Effect.forkScoped
    )
    const output: Output = {
      write: (line) =>
        Effect.suspend(() =>
          outbox.unsafeOffer(line) ? Effect.void : boundedWait(outbox.offer(line), writeTimeout, onStuck)
        ),
      broken: () => broken || writer.unsafePoll() !== null,
      failed: Effect.raceFirst(Effect.asVoid(Fiber.join(writer)), Deferred.await(stuck)),
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
 * waits for `drain`, at most `writeTimeout`. `flush` ends the stream and waits for `finish`, as the platform's `NodeSink`
 * does.
 */
const writableOutput = (writable: Writable, writeTimeout: Duration.Duration) =>
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
    let batchChars = 0
    const flushBatch = (): void => {
      const lines = batch
      batch = undefined
      batchChars = 0
      if (lines !== undefined && lines.length > 0 && !broken) writable.write(lines.join(""))
    }
    const writeNow = (line: string): boolean => {
      if (broken) return true
      if (batch === undefined) {
        batch = []
        nextTick(flushBatch)
        return writable.write(line)
      }
      batch.push(line)
      batchChars += line.length
      if (batchChars < BATCH_LIMIT) return !writable.writableNeedDrain
      // A large batch goes out at once: its write's answer is the backpressure signal, so a tick
      // never holds more than this much beyond what the stream itself buffers.
      const lines = batch
      batch = []
      batchChars = 0
      return writable.write(lines.join(""))
    }
    // The reader stopped reading for `writeTimeout`: the connection closes (`failed`).
    const onStuck = (): void => {
      broken = true
      Deferred.unsafeDone(failure, Effect.fail(readerStuck(writeTimeout)))
    }
    const output: Output = {
      write: (line) =>
        Effect.suspend(() => writeNow(line) ? Effect.void : boundedWait(waitFor("drain"), writeTimeout, onStuck)),
      broken: () => broken,
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
