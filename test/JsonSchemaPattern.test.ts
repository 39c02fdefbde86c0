/**
 * The built-in validator's `pattern` / `patternProperties` engine (issue #34, point 3): a
 * linear-time RE2 engine (`re2js`) with ECMA-262 semantics, so long valid strings pass and a
 * backtracking pattern cannot stall; backreferences and lookaround fall back to `RegExp` on
 * strings of at most 4,096 code units. Each case is checked against JavaScript's own `RegExp`
 * (the reference for ECMA-262) as well as the expected answer. The last test calls a tool over
 * Streamable HTTP on 127.0.0.1 with a 100,000-character argument.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { McpClient, McpServer, Tool } from "presa-mcp"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import * as JsonSchema from "../src/JsonSchema.js"

const { validate } = JsonSchema

const matches = (pattern: string, value: string): boolean => validate({ type: "string", pattern }, value).length === 0

/** [pattern, input, ECMA-262 answer] */
const SEMANTICS: ReadonlyArray<readonly [string, string, boolean]> = [
  // \s and \S are ECMA-262 WhiteSpace + LineTerminator (RE2's \s is ASCII only)
  ["^\\s+$", "\u00a0\u2028\ufeff\u3000", true],
  ["^\\S$", "\u00a0", false],
  ["^[\\s,]+$", " ,\u2003", true],
  ["^[^\\S]$", "\u00a0", true],
  // . stops at \n, \r, U+2028, U+2029 and takes a whole astral code point (u flag)
  ["^.$", "\r", false],
  ["^.$", "\u2028", false],
  ["^.$", "😀", true],
  ["^[😀]$", "😀", true],
  // \d and \w are ASCII (u flag without i), \b an ASCII word boundary
  ["^\\d$", "٣", false],
  ["^\\w$", "é", false],
  ["\\bfoo\\b", "a foo b", true],
  // escapes RE2 spells otherwise
  ["^\\u{1F600}$", "😀", true],
  ["^\\uD83D\\uDE00$", "😀", true],
  ["^\\u0041$", "A", true],
  ["^\\cJ$", "\n", true],
  ["^\\0$", "\0", true],
  ["^[\\b]$", "\b", true],
  ["^\\x41$", "A", true],
  // Unicode properties
  ["^\\p{Lu}$", "Ä", true],
  ["^\\p{gc=Lu}$", "a", false],
  ["^\\p{Script=Greek}+$", "αβγ", true],
  ["^\\P{L}$", "1", true],
  // classes: [ is a literal inside one, [] matches nothing, [^] anything
  ["[[]", "[", true],
  ["^[]$", "a", false],
  ["^[^]$", "\n", true],
  // anchors: $ is the end of the input (not before a final \n); unanchored otherwise
  ["a$", "a\n", false],
  ["b", "abc", true],
  ["^(?<year>\\d{4})-(?:\\d{2})$", "2024-05", true]
]

describe("pattern: ECMA-262 semantics on the linear-time engine", () => {
  it("each case answers as JavaScript's RegExp with the u flag does", () => {
    for (const [pattern, input, expected] of SEMANTICS) {
      assert.strictEqual(
        new RegExp(pattern, "u").test(input),
        expected,
        `RegExp ${pattern} on ${JSON.stringify(input)}`
      )
      assert.strictEqual(matches(pattern, input), expected, `${pattern} on ${JSON.stringify(input)}`)
    }
  })

  it("a 100,000-character valid string passes pattern (no length bound on the linear engine)", () => {
    const long = `id-${"ab".repeat(50_000)}`
    expect(long.length).toBeGreaterThan(100_000)
    expect(validate({ type: "string", pattern: "^id-(?:ab)+$" }, long)).toEqual([])
    expect(validate({ type: "string", pattern: "^id-(?:ab)+$" }, `${long}c`)).toEqual([{
      path: "",
      message: "must match pattern \"^id-(?:ab)+$\""
    }])
  })

  it("^(a+)+$ against 'aaa…a!' answers (it would backtrack for ages on RegExp)", () => {
    for (const length of [30, 40, 100_000]) {
      expect(validate({ type: "string", pattern: "^(a+)+$" }, `${"a".repeat(length)}!`)).toEqual([{
        path: "",
        message: "must match pattern \"^(a+)+$\""
      }])
    }
    expect(validate({ type: "string", pattern: "^(a|a?)+$" }, "a".repeat(100_000))).toEqual([])
  })

  it("patternProperties: a long key matches, a catastrophic key pattern answers", () => {
    const schema = {
      type: "object",
      patternProperties: { "^k(?:ey)+$": { type: "number" }, "^(x+)+$": { type: "string" } },
      additionalProperties: false
    }
    const longKey = `k${"ey".repeat(10_000)}`
    expect(validate(schema, { [longKey]: 1 })).toEqual([])
    expect(validate(schema, { [longKey]: "one" })[0]?.message).toBe("expected number, got string")
    const badKey = `${"x".repeat(40)}!`
    expect(validate(schema, { [badKey]: "s" })).toEqual([{ path: `/${badKey}`, message: "is not allowed" }])
  })
})

describe("pattern: the backtracking fallback (backreferences, lookaround)", () => {
  it("a backreference pattern matches through RegExp", () => {
    expect(matches("^(ab)\\1$", "abab")).toBe(true)
    expect(matches("^(ab)\\1$", "abba")).toBe(false)
    expect(matches("^(?<q>[\"'])\\w+\\k<q>$", "'x'")).toBe(true)
    expect(matches("^(?<q>[\"'])\\w+\\k<q>$", "'x\"")).toBe(false)
    expect(matches("foo(?=bar)", "foobar")).toBe(true)
    expect(matches("(?<!x)y", "xy")).toBe(false)
  })

  it("a fallback pattern on a string over 4,096 code units is an issue naming the reason", () => {
    expect(matches("^(a)\\1*$", "a".repeat(4096))).toBe(true)
    expect(validate({ type: "string", pattern: "^(a)\\1*$" }, "a".repeat(4097))).toEqual([{
      path: "",
      message: "is too long to check against pattern \"^(a)\\1*$\" (over 4096 characters; " +
        "the pattern needs backtracking: backreferences or lookaround)"
    }])
  })

  it("patternProperties with a backreference: short keys match, long keys are an issue", () => {
    const schema = { type: "object", patternProperties: { "^(.)\\1": { type: "number" } } }
    expect(validate(schema, { aab: 1 })).toEqual([])
    expect(validate(schema, { aab: "x" })).toEqual([{ path: "/aab", message: "expected number, got string" }])
    expect(validate(schema, { abc: "x" })).toEqual([])
    expect(validate(schema, { ["a".repeat(5000)]: 1 })[0]?.message).toMatch(/^is too long to check against pattern/)
  })

  it("an invalid ECMA-262 pattern stays an invalid-schema issue; RE2-only syntax is not accepted", () => {
    for (const pattern of ["(", "(?i)a", "(?P<n>a)", "\\pL", "a{,3}"]) {
      expect(validate({ type: "string", pattern }, "a")).toEqual([{
        path: "",
        message: `invalid schema: pattern "${pattern}" is not a valid regular expression`
      }])
    }
  })
})

describe("pattern over a real transport", () => {
  it.live("a tool call over Streamable HTTP with a 100,000-character valid argument succeeds", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "patterns",
        version: "1.0.0",
        tools: [
          Tool.fromJsonSchema({
            name: "echo",
            inputSchema: {
              type: "object",
              properties: { s: { type: "string", pattern: "^(?:[a-z]+\\s?)+$" } },
              required: ["s"]
            },
            handler: (args) => `length ${String(args.s).length}`
          })
        ]
      })
      const { url } = yield* StreamableHttp.serve(server, { port: 0, host: "127.0.0.1" })
      const client = yield* McpClient.connect(yield* StreamableHttp.client({ url }))
      const long = "word ".repeat(20_000)
      const ok = yield* client.callTool("echo", { s: long })
      assert.notStrictEqual(ok.isError, true, JSON.stringify(ok))
      assert.deepStrictEqual(ok.content, [{ type: "text", text: `length ${long.length}` }])
      const bad = yield* client.callTool("echo", { s: `${long}!` })
      assert.strictEqual(bad.isError, true)
      const text = bad.content[0]
      assert.match(text?.type === "text" ? text.text : "", /must match pattern/)
    })))
})
