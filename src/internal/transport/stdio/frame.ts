/**
 * Newline-delimited framing for byte streams (stdio and any other pipe): bytes in, lines out,
 * with a bound on the length of one line.
 *
 * The splitter works on bytes, not text: `\n` (0x0A) never occurs inside a multi-byte UTF-8
 * sequence, so a line is cut at the byte level and decoded whole, which makes characters split
 * across chunk boundaries a non-issue. A line longer than the bound is not buffered: its bytes are
 * counted and dropped until the next `\n`, then one `Oversized` frame stands for it.
 *
 * Two ways in: {@link frames} over an Effect `Stream` of bytes, and {@link readFrom} straight from
 * a Node readable's callbacks (the stdio server's `process.stdin`, the client's child stdout).
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Json from "../../json.js"

/** One frame: a line of text (terminator and a trailing `\r` removed), or a dropped long line. */
export type Frame =
  | { readonly _tag: "Line"; readonly text: string }
  | { readonly _tag: "Oversized"; readonly bytes: number }

/** Parses one line's JSON; `Option.none()` when the text is not JSON. */
export const parseJson = (text: string): Option.Option<unknown> => {
  try {
    return Option.some<unknown>(Json.parseJson(text))
  } catch {
    return Option.none()
  }
}

/** The default bound of the stdio server: 4 MiB. */
export const DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024

const NEWLINE = 0x0a

/**
 * A stateful splitter for ONE stream run: `push` each chunk, `end` at EOF. The state is local
 * to the run that created it (see {@link frames}); it is never shared.
 */
export const makeSplitter = (maxLineBytes: number): {
  readonly push: (chunk: Uint8Array) => Array<Frame>
  readonly end: () => Array<Frame>
} => {
  const decoder = new TextDecoder("utf-8")
  let parts: Array<Uint8Array> = []
  let size = 0
  let discarding = false
  let dropped = 0

  const decodeLine = (bytes: Uint8Array, out: Array<Frame>): void => {
    let text = decoder.decode(bytes)
    if (text.endsWith("\r")) text = text.slice(0, -1)
    if (text.trim().length > 0) out.push({ _tag: "Line", text })
  }

  const finish = (out: Array<Frame>): void => {
    if (discarding) {
      out.push({ _tag: "Oversized", bytes: dropped })
    } else if (parts.length === 1 && parts[0] !== undefined) {
      decodeLine(parts[0], out)
    } else if (parts.length > 1) {
      const joined = new Uint8Array(size)
      let offset = 0
      for (const part of parts) {
        joined.set(part, offset)
        offset += part.length
      }
      decodeLine(joined, out)
    }
    parts = []
    size = 0
    discarding = false
    dropped = 0
  }

  const push = (chunk: Uint8Array): Array<Frame> => {
    const out: Array<Frame> = []
    let start = 0
    while (start < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start)
      const end = nl === -1 ? chunk.length : nl
      const length = end - start
      if (discarding) {
        dropped += length
      } else if (size + length > maxLineBytes) {
        discarding = true
        dropped = size + length
        parts = []
        size = 0
      } else if (nl !== -1 && parts.length === 0) {
        // fast path: the whole line is inside this chunk
        decodeLine(chunk.subarray(start, end), out)
        start = nl + 1
        continue
      } else if (length > 0) {
        // a partial line is kept across chunks: copy it, the producer may reuse its buffer
        parts.push(chunk.slice(start, end))
        size += length
      }
      if (nl === -1) break
      finish(out)
      start = nl + 1
    }
    return out
  }

  const end = (): Array<Frame> => {
    const out: Array<Frame> = []
    if (discarding || size > 0) finish(out)
    return out
  }

  return { push, end }
}

/**
 * Cuts a byte stream into frames. A last line without a terminator is still delivered at EOF.
 * Blank lines (only whitespace) are skipped. `maxLineBytes` counts the bytes of one line
 * without its `\n`.
 */
export const frames =
  (maxLineBytes: number) => <E, R>(self: Stream.Stream<Uint8Array, E, R>): Stream.Stream<Frame, E, R> =>
    Stream.suspend(() => {
      const splitter = makeSplitter(maxLineBytes)
      return self.pipe(
        Stream.mapChunks((chunk) => {
          const out: Array<Frame> = []
          for (const bytes of chunk) {
            for (const frame of splitter.push(bytes)) out.push(frame)
          }
          return Chunk.unsafeFromArray(out)
        }),
        Stream.concat(Stream.suspend(() => Stream.fromIterable(splitter.end())))
      )
    })

/** The part of a Node `Readable` (`process.stdin`, a child's stdout) that {@link readFrom} reads. */
export interface Readable {
  /** `false` once the stream has ended or was destroyed. */
  readonly readable: boolean
  readonly on: (event: string, listener: (...args: Array<unknown>) => void) => unknown
  readonly off: (event: string, listener: (...args: Array<unknown>) => void) => unknown
  readonly pause: () => unknown
  readonly resume: () => unknown
}

/** Frames waiting to be handled beyond which `readable` is paused, and below which it resumes. */
const QUEUE_HIGH = 256
const QUEUE_LOW = 64

/**
 * Reads frames from a Node readable with `data` events and the synchronous splitter, and hands
 * each to `onFrame` in arrival order, without a Stream. What `onFrame` leaves to run is run by
 * `runFork`; the next frames wait in a queue until it is done (a request is started at once by
 * `onFrame` itself, so a sequential client costs no fiber beyond the request's own). The
 * readable is paused while more than `QUEUE_HIGH` frames wait. Succeeds once the readable has
 * ended and every frame is handled; fails with `readFailed(cause)` when reading fails; a defect
 * of `onFrame`'s Effect ends the reading with that defect, as in the Stream path ({@link frames}).
 * Interrupting it stops reading and interrupts what `onFrame` left running.
 */
export const readFrom = <E>(
  readable: Readable,
  maxLineBytes: number,
  onFrame: (frame: Frame) => Effect.Effect<void> | undefined,
  runFork: (effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>,
  readFailed: (cause: unknown) => E
): Effect.Effect<void, E> =>
  Effect.async<void, E>((resume) => {
    if (!readable.readable) return resume(Effect.void)
    const splitter = makeSplitter(maxLineBytes)
    const encoder = new TextEncoder()
    // Frames not handled yet: `queue[head]` onwards.
    let queue: Array<Frame> = []
    let head = 0
    let current: Fiber.RuntimeFiber<void> | undefined
    let ended = false
    let paused = false
    let done = false

    const detach = (): void => {
      readable.off("data", onData)
      readable.off("end", onEnd)
      readable.off("error", onError)
      readable.pause()
    }
    const finish = (effect: Effect.Effect<void, E>): void => {
      if (done) return
      done = true
      detach()
      resume(effect)
    }
    const settled = (exit: Exit.Exit<void>): boolean => {
      if (Exit.isSuccess(exit)) return true
      finish(Effect.failCause(exit.cause))
      return false
    }
    const pump = (): void => {
      while (current === undefined && !done) {
        const frame = queue[head]
        if (frame === undefined) {
          queue = []
          head = 0
          break
        }
        head++
        const effect = onFrame(frame)
        if (effect === undefined) continue
        const fiber = runFork(effect)
        const exit = fiber.unsafePoll()
        if (exit !== null) {
          if (!settled(exit)) return
          continue
        }
        current = fiber
        fiber.addObserver((exit) => {
          current = undefined
          if (settled(exit)) pump()
        })
        return
      }
      if (done) return
      if (paused && queue.length - head <= QUEUE_LOW) {
        paused = false
        readable.resume()
      }
      if (ended && current === undefined && head === queue.length) finish(Effect.void)
    }
    function onData(chunk: unknown): void {
      const bytes = typeof chunk === "string" ? encoder.encode(chunk) : chunk instanceof Uint8Array ? chunk : undefined
      if (bytes === undefined || done) return
      for (const frame of splitter.push(bytes)) queue.push(frame)
      pump()
      if (!paused && !done && queue.length - head > QUEUE_HIGH) {
        paused = true
        readable.pause()
      }
    }
    function onEnd(): void {
      for (const frame of splitter.end()) queue.push(frame)
      ended = true
      pump()
    }
    function onError(error: unknown): void {
      finish(Effect.fail(readFailed(error)))
    }
    readable.on("data", onData)
    readable.on("end", onEnd)
    readable.on("error", onError)
    readable.resume()
    return Effect.suspend(() => {
      done = true
      detach()
      return current === undefined ? Effect.void : Fiber.interrupt(current)
    })
  })
