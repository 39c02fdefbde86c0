/**
 * A tool call is checked once (issue 33, point 3): a `Tool.make` tool's arguments by its Schema
 * decode alone, with the built-in validator's text when a refused call breaks the derived JSON
 * Schema; the tool a `tools/call` names is found once, and with per-caller visibility only its own
 * predicate runs.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { McpServer, Tool } from "presa-mcp"
import { type Conn, get, legacy, modern, textAt } from "./support/Wire.js"

const call = (conn: Conn, name: string, args: unknown) => conn.call("tools/call", { name, arguments: args })
const isError = (reply: { readonly message: unknown }): unknown => get(reply.message, "result", "isError")

// The JSON Schema says more than the Schema checks: `minLength: 5` is only an annotation.
const Word = Schema.String.annotations({ jsonSchema: { type: "string", minLength: 5 } })

const words = Tool.make({
  name: "words",
  parameters: Schema.Struct({
    word: Word,
    numbers: Schema.optional(Schema.Array(Schema.Number)),
    n: Schema.optional(Schema.NumberFromString)
  }),
  handler: ({ word }) => `got ${word}`
})

describe("a Tool.make tool's arguments are checked once, by its Schema decode", () => {
  it.effect("the derived JSON Schema is not walked on a call the decode accepts", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "t", version: "1", tools: [words] })
      const conn = yield* modern(server)
      const listed = yield* conn.call("tools/list", {})
      const tools = get(listed.message, "result", "tools")
      // the advertised schema still says minLength 5 ...
      assert.strictEqual(get(tools, 0, "inputSchema", "properties", "word", "minLength"), 5)
      // ... but the decode is the check: "abc" passes it
      const reply = yield* call(conn, "words", { word: "abc" })
      assert.notStrictEqual(isError(reply), true)
      assert.strictEqual(textAt(reply), "got abc")
    }))

  it.effect("a refused call keeps the built-in validator's text (both eras)", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "t", version: "1", tools: [words] })
      for (const conn of [yield* modern(server), yield* legacy(server, "2025-11-25")]) {
        const wrongItem = yield* call(conn, "words", { word: "hello", numbers: ["one"] })
        assert.strictEqual(isError(wrongItem), true)
        assert.strictEqual(textAt(wrongItem), "Invalid arguments at /numbers/0: expected number, got string")
        const missing = yield* call(conn, "words", {})
        assert.strictEqual(textAt(missing), "Invalid arguments at /word: is required")
        // excess properties are refused, as the derived `additionalProperties: false` says
        const extra = yield* call(conn, "words", { word: "hello", extra: true })
        assert.strictEqual(textAt(extra), "Invalid arguments at /extra: is not allowed")
        // passes the JSON Schema (a string), fails the decode: the decode's text
        const notNumeric = yield* call(conn, "words", { word: "hello", n: "abc" })
        assert.strictEqual(isError(notNumeric), true)
        assert.match(String(textAt(notNumeric)), /^Invalid arguments at \/n: /)
      }
    }))

  it.effect("a custom validator still runs before the handler", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const server = yield* McpServer.make({
        name: "t",
        version: "1",
        tools: [words],
        validator: (_schema, value) => {
          seen.push(value)
          return []
        }
      })
      const conn = yield* modern(server)
      assert.strictEqual(textAt(yield* call(conn, "words", { word: "abc" })), "got abc")
      expect(seen).toEqual([{ word: "abc" }])
    }))

  it.effect("a tool added with services keeps its one check", () =>
    Effect.gen(function*() {
      class Prefix extends Context.Tag("test/ToolArguments/Prefix")<Prefix, string>() {}
      const prefixed = Tool.make({
        name: "prefixed",
        parameters: Schema.Struct({ word: Word }),
        handler: ({ word }) => Effect.map(Prefix, (p) => `${p}${word}`)
      })
      const server = yield* McpServer.make({ name: "t", version: "1" })
      yield* McpServer.addTool(server, prefixed).pipe(Effect.provideService(Prefix, "> "))
      const conn = yield* modern(server)
      assert.strictEqual(textAt(yield* call(conn, "prefixed", { word: "abc" })), "> abc")
      const extra = yield* call(conn, "prefixed", { word: "hello", extra: 1 })
      assert.strictEqual(textAt(extra), "Invalid arguments at /extra: is not allowed")
    }))
})

describe("with per-caller visibility, tools/call runs only its target's predicate", () => {
  it.effect("the called tool's predicate decides; the others are not asked", () =>
    Effect.gen(function*() {
      const asked = yield* Ref.make<ReadonlyArray<string>>([])
      const seenBy = (name: string, answer: boolean) => () => Effect.as(Ref.update(asked, (a) => [...a, name]), answer)
      const server = yield* McpServer.make({
        name: "t",
        version: "1",
        tools: [
          Tool.fromJsonSchema({ name: "open", visible: seenBy("open", true), handler: () => "open" }),
          Tool.fromJsonSchema({ name: "closed", visible: seenBy("closed", false), handler: () => "closed" }),
          Tool.fromJsonSchema({ name: "other", visible: seenBy("other", true), handler: () => "other" })
        ]
      })
      const conn = yield* modern(server)
      assert.strictEqual(textAt(yield* call(conn, "open", {})), "open")
      expect(yield* Ref.get(asked)).toEqual(["open"])
      const hidden = yield* call(conn, "closed", {})
      assert.strictEqual(get(hidden.message, "error", "code"), -32602)
      assert.strictEqual(get(hidden.message, "error", "message"), "Unknown tool: closed")
      expect(yield* Ref.get(asked)).toEqual(["open", "closed"])
      // a list still asks every predicate
      yield* Ref.set(asked, [])
      yield* conn.call("tools/list", {})
      expect([...(yield* Ref.get(asked))].sort()).toEqual(["closed", "open", "other"])
    }))
})
