/**
 * Newline-delimited framing for byte streams (stdio and any other pipe): bytes in, lines out,
 * with a bound on the length of one line.
 *
 * The splitter works on bytes, not text: `\n` (0x0A) never occurs inside a multi-byte UTF-8
 * sequence, so a line is cut at the byte level and decoded whole, which makes characters split
 * across chunk boundaries a non-issue. A line longer than the bound is not buffered: its bytes are
 * counted and dropped until the next `\n`, then one `Oversized` frame stands for it.
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Stream from "effect/Stream"

/** One frame: a line of text (terminator and a trailing `\r` removed), or a dropped long line. */
export type Frame =
  | { readonly _tag: "Line"; readonly text: string }
  | { readonly _tag: "Oversized"; readonly bytes: number }

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
