/**
 * The byte-level line splitter behind the stdio transport (internal).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Frame from "../../src/internal/transport/stdio/frame.js"

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)

const split = (chunks: ReadonlyArray<string | Uint8Array>, max = 1024): Array<Frame.Frame> => {
  const splitter = Frame.makeSplitter(max)
  const out: Array<Frame.Frame> = []
  for (const c of chunks) out.push(...splitter.push(typeof c === "string" ? bytes(c) : c))
  out.push(...splitter.end())
  return out
}

const lines = (...texts: Array<string>): Array<Frame.Frame> => texts.map((text) => ({ _tag: "Line", text }))

describe("stdio framing", () => {
  it("splits on \\n, strips a trailing \\r, skips blank lines, keeps a last unterminated line", () => {
    expect(split(["a\nb\r\n\n  \r\n\tc", "d\n", "e"])).toEqual(lines("a", "b", "\tcd", "e"))
  })

  it("joins a \\r\\n split across chunks and a character split across chunks", () => {
    const all = bytes("{\"t\":\"世\"}\r\n")
    expect(split([all.slice(0, 7), all.slice(7, 12), all.slice(12)])).toEqual(lines("{\"t\":\"世\"}"))
  })

  it("drops a line over the bound as it streams, reports it once with its size, then goes on", () => {
    expect(split(["x".repeat(6), "y".repeat(6), "z\nok\n"], 10)).toEqual([
      { _tag: "Oversized", bytes: 13 },
      ...lines("ok")
    ])
    expect(split(["0123456789\n01234567890\n"], 10)).toEqual([...lines("0123456789"), { _tag: "Oversized", bytes: 11 }])
    expect(split(["x".repeat(20)], 10)).toEqual([{ _tag: "Oversized", bytes: 20 }])
  })

  it.effect("as a Stream combinator", () =>
    Effect.gen(function*() {
      const out = yield* Stream.make(bytes("a\nb"), bytes("c\n"), bytes("d")).pipe(Frame.frames(100), Stream.runCollect)
      expect(Chunk.toArray(out)).toEqual(lines("a", "bc", "d"))
    }))
})
