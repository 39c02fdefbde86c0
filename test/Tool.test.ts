import { assert, describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Logger from "effect/Logger"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { Content, JsonSchema, McpServer, Tool } from "presa-mcp"
import * as JsonSchemaFull from "presa-mcp/JsonSchemaFull"
import {
  asArray,
  type Conn,
  connect,
  errorOf,
  get,
  isObject,
  type JsonObject,
  keysOf,
  legacy,
  modern,
  resultOf,
  textAt
} from "./support/Wire.js"

const build = (tools: ReadonlyArray<Tool.Tool>, options: Partial<McpServer.Options> = {}) =>
  McpServer.make({ name: "tool-test", version: "1.0.0", ...options, tools })

const call = (conn: Conn, name: string, args?: unknown) =>
  conn.call("tools/call", args === undefined ? { name } : { name, arguments: args })

const isError = (reply: { readonly message: unknown }): unknown => get(reply.message, "result", "isError")

/** `echo`: all arguments optional; answers with the text it got (or "(none)"). */
const echo = Tool.fromJsonSchema({
  name: "echo",
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
  handler: ({ text }) => (typeof text === "string" ? text : "(none)")
})

/** `needs_text`: `text` is required. */
const needsText = Tool.fromJsonSchema({
  name: "needs_text",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  handler: ({ text }) => String(text)
})

// ---------------------------------------------------------------------------------------------

describe("tools/call: arguments omitted vs {} vs null (EC-03)", () => {
  describe.each(["2026-07-28", "2025-11-25", "2025-06-18"] as const)("%s", (rev) => {
    it.effect("omitted, {} and null behave the same for a tool whose arguments are all optional", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build([echo, needsText]), rev)
        const omitted = yield* call(conn, "echo")
        const empty = yield* call(conn, "echo", {})
        const nul = yield* call(conn, "echo", null)
        for (const reply of [omitted, empty, nul]) {
          assert.strictEqual(textAt(reply), "(none)")
          assert.notStrictEqual(isError(reply), true)
        }
        expect(get(omitted.message, "result", "content")).toEqual(get(empty.message, "result", "content"))
        const given = yield* call(conn, "echo", { text: "hi" })
        assert.strictEqual(textAt(given), "hi")
      }))

    it.effect("arguments that are not an object ([], a string, a number) → -32602", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build([echo]), rev)
        for (const args of [[], "text", 3]) {
          const reply = yield* call(conn, "echo", args)
          const e = errorOf(reply)
          assert.strictEqual(e.code, -32602, JSON.stringify(args))
          assert.notInclude(e.message, "    at ")
        }
      }))

    it.effect("a required argument left out → isError naming /text (SEP-1303)", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build([echo, needsText]), rev)
        for (const args of [undefined, {}, null]) {
          const reply = yield* call(conn, "needs_text", args)
          assert.strictEqual(isError(reply), true)
          assert.strictEqual(textAt(reply), "Invalid arguments at /text: is required")
        }
      }))

    it.effect("an unknown tool → -32602 naming it", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build([echo]), rev)
        const e = errorOf(yield* call(conn, "nope", {}))
        assert.strictEqual(e.code, -32602)
        assert.strictEqual(e.message, "Unknown tool: nope")
        expect(e.data).toEqual({ name: "nope" })
      }))

    it.effect("a call without a name → -32602", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build([echo]), rev)
        assert.strictEqual(errorOf(yield* conn.call("tools/call", { arguments: {} })).code, -32602)
        assert.strictEqual(errorOf(yield* conn.call("tools/call", { name: 5 })).code, -32602)
      }))
  })
})

// ---------------------------------------------------------------------------------------------

describe("tool results (architecture.md, Handler results)", () => {
  const tools = [
    Tool.fromJsonSchema({ name: "str", handler: () => "plain text" }),
    Tool.fromJsonSchema({ name: "obj", handler: () => ({ a: 1, b: ["x"] }) }),
    Tool.fromJsonSchema({
      name: "blocks",
      handler: () =>
        Content.blocks([
          Content.text("t"),
          Content.image(new Uint8Array([1, 2, 3]), "image/png"),
          Content.audio("AAAA", "audio/wav"),
          Content.resourceLink({ uri: "x://a", name: "a" }),
          Content.embeddedResource("x://b", "body", "text/plain")
        ])
    }),
    Tool.fromJsonSchema({
      name: "asis",
      handler: () => ({ content: [Content.text("kept")], structuredContent: { k: 1 }, _meta: { "com.example/x": 1 } })
    }),
    Tool.fromJsonSchema({ name: "undef", handler: () => undefined }),
    Tool.fromJsonSchema({ name: "nul", handler: () => null }),
    Tool.fromJsonSchema({ name: "promise", handler: () => Promise.resolve("from a promise") }),
    Tool.fromJsonSchema({ name: "effect", handler: () => Effect.succeed("from an effect") })
  ]

  describe.each(["2026-07-28", "2025-11-25", "2025-06-18"] as const)("%s", (rev) => {
    it.effect("a string → one text block", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build(tools), rev)
        const r = resultOf(yield* call(conn, "str", {}))
        expect(r.content).toEqual([{ type: "text", text: "plain text" }])
        assert.isFalse("structuredContent" in r)
        assert.isFalse("isError" in r)
      }))

    it.effect("a plain object → structuredContent plus a text block with its JSON", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build(tools), rev)
        const r = resultOf(yield* call(conn, "obj", {}))
        expect(r.structuredContent).toEqual({ a: 1, b: ["x"] })
        expect(r.content).toEqual([{ type: "text", text: JSON.stringify({ a: 1, b: ["x"] }) }])
      }))

    it.effect("Content.blocks → those blocks (bytes as base64)", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build(tools), rev)
        const r = resultOf(yield* call(conn, "blocks", {}))
        expect(r.content).toEqual([
          { type: "text", text: "t" },
          { type: "image", data: "AQID", mimeType: "image/png" },
          { type: "audio", data: "AAAA", mimeType: "audio/wav" },
          { type: "resource_link", uri: "x://a", name: "a" },
          { type: "resource", resource: { uri: "x://b", mimeType: "text/plain", text: "body" } }
        ])
      }))

    it.effect("an object with content → as is (structuredContent and _meta kept)", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build(tools), rev)
        const r = resultOf(yield* call(conn, "asis", {}))
        expect(r.content).toEqual([{ type: "text", text: "kept" }])
        expect(r.structuredContent).toEqual({ k: 1 })
        expect(get(r, "_meta", "com.example/x")).toBe(1)
      }))

    it.effect("undefined and null → an empty result", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build(tools), rev)
        for (const name of ["undef", "nul"]) {
          const r = resultOf(yield* call(conn, name, {}))
          expect(r.content).toEqual([])
          assert.isFalse("isError" in r)
        }
      }))

    it.effect("a Promise-returning handler and an Effect handler", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build(tools), rev)
        assert.strictEqual(textAt(yield* call(conn, "promise", {})), "from a promise")
        assert.strictEqual(textAt(yield* call(conn, "effect", {})), "from an effect")
      }))
  })

  it.effect("the handler gets the request context (era, version, id, client info)", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<ReadonlyArray<string>>([])
      const server = yield* build([
        Tool.fromJsonSchema({
          name: "ctx",
          handler: (_args, ctx) =>
            Ref.update(seen, (xs) => [
              ...xs,
              `${ctx.era} ${ctx.protocolVersion} ${String(ctx.requestId)} ${ctx.method} ${ctx.clientInfo?.name ?? "-"}`
            ])
        })
      ])
      const m = yield* modern(server)
      yield* m.call("tools/call", { name: "ctx" }, { id: 0 })
      yield* m.call("tools/call", { name: "ctx" }, {
        id: "s",
        meta: { "io.modelcontextprotocol/clientInfo": { name: "probe", version: "1" } }
      })
      const l = yield* legacy(server, "2025-06-18")
      yield* l.call("tools/call", { name: "ctx" }, { id: 3 })
      expect(yield* Ref.get(seen)).toEqual([
        "modern 2026-07-28 0 tools/call -",
        "modern 2026-07-28 s tools/call probe",
        "legacy 2025-06-18 3 tools/call wire-test"
      ])
    }))
})

// ---------------------------------------------------------------------------------------------

describe("argument validation", () => {
  const numeric = Tool.fromJsonSchema({
    name: "numeric",
    inputSchema: {
      type: "object",
      properties: {
        n: { type: "integer" },
        color: { enum: ["red", "green"] }
      },
      additionalProperties: false
    },
    handler: (args) => ({ got: args })
  })

  it.effect("integer rejects 5.5 and accepts 5", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* build([numeric]))
      const bad = yield* call(conn, "numeric", { n: 5.5 })
      assert.strictEqual(isError(bad), true)
      assert.strictEqual(textAt(bad), "Invalid arguments at /n: expected integer, got number")
      const good = yield* call(conn, "numeric", { n: 5 })
      assert.notStrictEqual(isError(good), true)
      expect(get(good.message, "result", "structuredContent")).toEqual({ got: { n: 5 } })
    }))

  it.effect("additionalProperties: false rejects an extra property, naming it", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* build([numeric]))
      const bad = yield* call(conn, "numeric", { n: 1, extra: true })
      assert.strictEqual(isError(bad), true)
      assert.strictEqual(textAt(bad), "Invalid arguments at /extra: is not allowed")
    }))

  it.effect("enum rejects other values", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* build([numeric]))
      const bad = yield* call(conn, "numeric", { color: "blue" })
      assert.strictEqual(isError(bad), true)
      assert.strictEqual(textAt(bad), "Invalid arguments at /color: must be one of \"red\", \"green\"")
      assert.notStrictEqual(isError(yield* call(conn, "numeric", { color: "red" })), true)
    }))

  it.effect("several problems are reported together", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* build([numeric]))
      const bad = yield* call(conn, "numeric", { n: "x", color: 1 })
      assert.strictEqual(
        textAt(bad),
        "Invalid arguments at /n: expected integer, got string; at /color: must be one of \"red\", \"green\""
      )
    }))

  it.effect("validate: false turns argument checks off (the handler sees the raw arguments)", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* build([numeric, needsText], { validate: false }))
      const r = yield* call(conn, "numeric", { n: 5.5, extra: true, color: "blue" })
      assert.notStrictEqual(isError(r), true)
      expect(get(r.message, "result", "structuredContent")).toEqual({ got: { n: 5.5, extra: true, color: "blue" } })
      assert.strictEqual(textAt(yield* call(conn, "needs_text", {})), "undefined")
    }))

  it.effect("a custom validator replaces the built-in one", () =>
    Effect.gen(function*() {
      let calls = 0
      const validator: JsonSchema.Validator = (_schema, value) => {
        calls++
        return isObject(value) && value.n === 13 ? [{ path: "/n", message: "is unlucky" }] : []
      }
      const conn = yield* modern(yield* build([numeric], { validator }))
      const bad = yield* call(conn, "numeric", { n: 13 })
      assert.strictEqual(textAt(bad), "Invalid arguments at /n: is unlucky")
      // the built-in check (integer) is not applied any more
      const loose = yield* call(conn, "numeric", { n: 5.5 })
      assert.notStrictEqual(isError(loose), true)
      assert.isAtLeast(calls, 2)
    }))

  it.effect("JsonSchemaFull as validator: $ref / $defs are resolved", () =>
    Effect.gen(function*() {
      const refTool = Tool.fromJsonSchema({
        name: "point",
        inputSchema: {
          type: "object",
          $defs: { coord: { type: "integer", minimum: 0 } },
          properties: { x: { $ref: "#/$defs/coord" }, y: { $ref: "#/$defs/coord" } },
          required: ["x", "y"]
        },
        handler: ({ x, y }) => `${String(x)},${String(y)}`
      })
      const full = yield* modern(yield* build([refTool], { validator: JsonSchemaFull.validate }))
      const bad = yield* call(full, "point", { x: 1, y: -1 })
      assert.strictEqual(isError(bad), true)
      const text = String(textAt(bad))
      assert.match(text, /^Invalid arguments at \/y: /)
      const good = yield* call(full, "point", { x: 1, y: 2 })
      assert.strictEqual(textAt(good), "1,2")
      // the built-in subset ignores $ref: the same call passes there
      const subset = yield* modern(yield* build([refTool]))
      assert.strictEqual(textAt(yield* call(subset, "point", { x: 1, y: -1 })), "1,-1")
    }))

  it.effect("the reference error text for a wrong item type", () =>
    Effect.gen(function*() {
      const conn = yield* modern(
        yield* build([
          Tool.fromJsonSchema({
            name: "sum",
            inputSchema: {
              type: "object",
              properties: { numbers: { type: "array", items: { type: "number" } } },
              required: ["numbers"]
            },
            handler: () => "ok"
          })
        ])
      )
      const bad = yield* call(conn, "sum", { numbers: ["one"] })
      assert.strictEqual(textAt(bad), "Invalid arguments at /numbers/0: expected number, got string")
      expect(get(bad.message, "result", "content")).toHaveLength(1)
    }))
})

// ---------------------------------------------------------------------------------------------

describe("outputSchema (EC-07)", () => {
  const outputSchema = { type: "object", properties: { tempC: { type: "number" } }, required: ["tempC"] }
  const weather = Tool.fromJsonSchema({
    name: "weather",
    inputSchema: { type: "object", properties: { mode: { type: "string" } } },
    outputSchema,
    handler: ({ mode }) => {
      switch (mode) {
        case "fail":
          return Effect.fail(new Tool.ToolError({ message: "upstream unavailable" }))
        case "fail-structured":
          return { content: [Content.text("E42")], structuredContent: { error: "E42" }, isError: true }
        case "bad":
          return { content: [Content.text("warm")], structuredContent: { tempC: "warm" } }
        case "missing":
          return { content: [Content.text("21")] }
        case "text":
          return "21 degrees"
        default:
          return { tempC: 21 }
      }
    }
  })

  describe.each(["2026-07-28", "2025-11-25", "2025-06-18"] as const)("%s", (rev) => {
    it.effect("a conforming structured result passes", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build([weather]), rev)
        const r = resultOf(yield* call(conn, "weather", {}))
        expect(r.structuredContent).toEqual({ tempC: 21 })
        assert.isFalse("isError" in r)
      }))

    it.effect("a ToolError is sent unchanged, without an output check", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build([weather]), rev)
        const r = resultOf(yield* call(conn, "weather", { mode: "fail" }))
        expect(r).toMatchObject({ content: [{ type: "text", text: "upstream unavailable" }], isError: true })
        assert.isFalse("structuredContent" in r)
      }))

    it.effect("an isError result with non-conforming structuredContent is sent unchanged", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build([weather]), rev)
        const r = resultOf(yield* call(conn, "weather", { mode: "fail-structured" }))
        expect(r.content).toEqual([{ type: "text", text: "E42" }])
        expect(r.structuredContent).toEqual({ error: "E42" })
        assert.strictEqual(r.isError, true)
      }))

    it.effect("a mismatching structured result becomes an isError result naming the path (documented choice: isError, not -32603)", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build([weather]), rev)
        const reply = yield* call(conn, "weather", { mode: "bad" })
        const r = resultOf(reply)
        assert.strictEqual(r.isError, true)
        assert.strictEqual(
          textAt(reply),
          "Tool result does not match its outputSchema at /tempC: expected number, got string"
        )
        assert.isFalse("structuredContent" in r)
      }))

    it.effect("a missing structuredContent when outputSchema is declared becomes an isError result", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build([weather]), rev)
        for (const mode of ["missing", "text"]) {
          const reply = yield* call(conn, "weather", { mode })
          assert.strictEqual(isError(reply), true, mode)
          assert.include(String(textAt(reply)), "structuredContent is missing")
        }
      }))

    it.effect("validate: false skips the output check too", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build([weather], { validate: false }), rev)
        const r = resultOf(yield* call(conn, "weather", { mode: "bad" }))
        expect(r.structuredContent).toEqual({ tempC: "warm" })
        assert.isFalse("isError" in r)
      }))
  })
})

// ---------------------------------------------------------------------------------------------

describe("tool errors and defects", () => {
  const tools = [
    Tool.fromJsonSchema({
      name: "tool_error",
      handler: () => Effect.fail(new Tool.ToolError({ message: "city not found" }))
    }),
    Tool.fromJsonSchema({
      name: "tool_error_content",
      handler: () =>
        Effect.fail(
          new Tool.ToolError({
            message: "ignored",
            content: [Content.text("rich error")],
            structuredContent: { code: "E1" }
          })
        )
    }),
    Tool.fromJsonSchema({
      name: "mcp_error",
      handler: () => Effect.fail(McpServer.McpError.invalidParams("no such city", { city: "Atlantis" }))
    }),
    Tool.fromJsonSchema({
      name: "app_error",
      handler: () => Effect.fail(new McpServer.McpError({ code: 4001, message: "quota exceeded", data: { left: 0 } }))
    }),
    Tool.fromJsonSchema({
      name: "throws",
      handler: () => {
        throw new TypeError("cannot read properties of undefined (secret detail)")
      }
    }),
    Tool.fromJsonSchema({ name: "rejects", handler: () => Promise.reject(new RangeError("out of range (secret)")) }),
    Tool.fromJsonSchema({ name: "dies", handler: () => Effect.die(new Error("boom (secret)")) }),
    Tool.fromJsonSchema({ name: "dies_string", handler: () => Effect.die("just a string") })
  ]

  describe.each(["2026-07-28", "2025-11-25", "2025-06-18"] as const)("%s", (rev) => {
    it.effect("ToolError → isError result with its message", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build(tools), rev)
        const r = resultOf(yield* call(conn, "tool_error", {}))
        expect(r.content).toEqual([{ type: "text", text: "city not found" }])
        assert.strictEqual(r.isError, true)
      }))

    it.effect("ToolError with content and structuredContent → those, isError", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build(tools), rev)
        const r = resultOf(yield* call(conn, "tool_error_content", {}))
        expect(r.content).toEqual([{ type: "text", text: "rich error" }])
        expect(r.structuredContent).toEqual({ code: "E1" })
        assert.strictEqual(r.isError, true)
      }))

    it.effect("McpError from a handler → a JSON-RPC error with its code, message and data", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build(tools), rev)
        const reply = yield* call(conn, "mcp_error", {})
        expect(errorOf(reply)).toEqual({ code: -32602, message: "no such city", data: { city: "Atlantis" } })
        const app = yield* call(conn, "app_error", {})
        expect(errorOf(app)).toEqual({ code: 4001, message: "quota exceeded", data: { left: 0 } })
        assert.strictEqual(app.status, 200)
      }))

    it.effect("a thrown TypeError → isError with the class name only (no message, no stack)", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build(tools), rev)
        const reply = yield* call(conn, "throws", {})
        const r = resultOf(reply)
        assert.strictEqual(r.isError, true)
        expect(r.content).toEqual([{ type: "text", text: "TypeError" }])
        assert.notInclude(JSON.stringify(reply.message), "secret")
      }))

    it.effect("a rejected Promise and Effect.die take the defect path", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build(tools), rev)
        const rejected = resultOf(yield* call(conn, "rejects", {}))
        expect(rejected).toMatchObject({ content: [{ type: "text", text: "RangeError" }], isError: true })
        const died = resultOf(yield* call(conn, "dies", {}))
        expect(died).toMatchObject({ content: [{ type: "text", text: "Error" }], isError: true })
        const diedString = resultOf(yield* call(conn, "dies_string", {}))
        assert.strictEqual(diedString.isError, true)
        assert.notInclude(JSON.stringify(diedString), "just a string")
      }))
  })

  it.effect("an McpError -32021 from a handler is sent with HTTP status 400 (the spec's MUST for -32021)", () =>
    Effect.gen(function*() {
      const conn = yield* modern(
        yield* build([
          Tool.fromJsonSchema({
            name: "needs_elicitation",
            handler: (_args, ctx) =>
              ctx.clientCapabilities.elicitation === undefined
                ? Effect.fail(McpServer.McpError.missingClientCapability({ elicitation: {} }))
                : Effect.succeed("asked")
          })
        ])
      )
      const reply = yield* call(conn, "needs_elicitation", {})
      expect(errorOf(reply)).toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: {} } } })
      assert.strictEqual(reply.status, 400)
      const ok = yield* conn.call("tools/call", { name: "needs_elicitation" }, {
        meta: { "io.modelcontextprotocol/clientCapabilities": { elicitation: {} } }
      })
      assert.strictEqual(textAt(ok), "asked")
    }))

  it.effect("exposeErrorMessages: true → `TypeError: <message>`", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* build(tools, { exposeErrorMessages: true }))
      assert.strictEqual(
        textAt(yield* call(conn, "throws", {})),
        "TypeError: cannot read properties of undefined (secret detail)"
      )
      assert.strictEqual(textAt(yield* call(conn, "rejects", {})), "RangeError: out of range (secret)")
      assert.strictEqual(textAt(yield* call(conn, "dies", {})), "Error: boom (secret)")
    }))

  it.effect("the full cause of a defect goes to the server's logger", () =>
    Effect.gen(function*() {
      const logged = yield* Ref.make<ReadonlyArray<string>>([])
      const capture = Logger.make(({ cause, message }) => {
        Effect.runSync(Ref.update(logged, (xs) => [...xs, `${String(message)} ${Cause.pretty(cause)}`]))
      })
      const conn = yield* modern(yield* build(tools))
      yield* call(conn, "throws", {}).pipe(Effect.provide(Logger.add(capture)))
      const lines = yield* Ref.get(logged)
      assert.isTrue(lines.some((l) => l.includes("throws") && l.includes("secret detail")), lines.join("\n"))
    }))
})

// ---------------------------------------------------------------------------------------------

/** Follows a local `$ref` (`#/$defs/X`) from `root`; other nodes are returned as they are. */
const deref = (root: unknown, node: unknown): unknown => {
  const ref = get(node, "$ref")
  if (typeof ref !== "string") return node
  const m = /^#\/\$defs\/(.+)$/.exec(ref)
  return m === null ? undefined : get(root, "$defs", m[1] ?? "")
}

describe("Tool.make (Effect Schema parameters)", () => {
  const greet = Tool.make({
    name: "greet",
    parameters: Schema.Struct({
      name: Schema.String,
      times: Schema.optional(Schema.Int),
      n: Schema.optional(Schema.NumberFromString)
    }),
    success: Schema.Struct({ greeting: Schema.String, nIsNumber: Schema.Boolean }),
    handler: ({ n, name, times }) =>
      Effect.succeed({ greeting: `Hello, ${name}${"!".repeat(times ?? 1)}`, nIsNumber: typeof n === "number" })
  })

  const plain = Tool.make({
    name: "shout",
    parameters: Schema.Struct({ text: Schema.String }),
    handler: ({ text }) => text.toUpperCase()
  })

  it.effect("tools/list shows the derived inputSchema (type object, properties, required) without $schema", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* build([greet, plain]))
      const tools = asArray(resultOf(yield* conn.call("tools/list")).tools)
      const g = tools[0]
      assert.strictEqual(get(g, "name"), "greet")
      const input = get(g, "inputSchema")
      assert.strictEqual(get(input, "type"), "object")
      expect(get(input, "required")).toEqual(["name"])
      expect(keysOf(get(input, "properties"))).toEqual(["name", "times", "n"])
      assert.strictEqual(get(deref(input, get(input, "properties", "name")), "type"), "string")
      assert.strictEqual(get(deref(input, get(input, "properties", "times")), "type"), "integer")
      // the encoded side of NumberFromString is a string
      assert.strictEqual(get(deref(input, get(input, "properties", "n")), "type"), "string")
      assert.isFalse(keysOf(input).includes("$schema"))
      const output = get(g, "outputSchema")
      assert.strictEqual(get(output, "type"), "object")
      assert.isFalse(keysOf(output).includes("$schema"))
      expect(get(output, "required")).toEqual(["greeting", "nIsNumber"])
      const s = tools[1]
      assert.strictEqual(get(s, "name"), "shout")
      assert.isUndefined(get(s, "outputSchema"))
    }))

  it.effect("the handler gets decoded arguments; success → structuredContent", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* build([greet]))
      const reply = yield* call(conn, "greet", { name: "Ada", times: 2, n: "42" })
      const r = resultOf(reply)
      expect(r.structuredContent).toEqual({ greeting: "Hello, Ada!!", nIsNumber: true })
      expect(r.content).toEqual([{ type: "text", text: JSON.stringify(r.structuredContent) }])
      assert.isFalse("isError" in r)
    }))

  it.effect("bad arguments → isError with the path", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* build([greet, plain]))
      const missing = yield* call(conn, "greet", {})
      assert.strictEqual(isError(missing), true)
      assert.strictEqual(textAt(missing), "Invalid arguments at /name: is required")
      const wrongType = yield* call(conn, "greet", { name: 1 })
      assert.strictEqual(isError(wrongType), true)
      assert.match(String(textAt(wrongType)), /^Invalid arguments at \/name: /)
      const notInt = yield* call(conn, "greet", { name: "a", times: 1.5 })
      assert.match(String(textAt(notInt)), /^Invalid arguments at \/times: /)
      // passes the JSON Schema (a string) but fails the Schema decode: the decode error names the path
      const notNumeric = yield* call(conn, "greet", { name: "a", n: "abc" })
      assert.strictEqual(isError(notNumeric), true)
      assert.match(String(textAt(notNumeric)), /^Invalid arguments at \/n: /)
      const shout = yield* call(conn, "shout", { text: "hi" })
      assert.strictEqual(textAt(shout), "HI")
    }))

  it.effect("with validate: false the Schema decode still guards the handler", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* build([greet], { validate: false }))
      const bad = yield* call(conn, "greet", { name: 1 })
      assert.strictEqual(isError(bad), true)
      assert.match(String(textAt(bad)), /^Invalid arguments at \/name: /)
    }))

  it.effect("a typed tool may fail with ToolError", () =>
    Effect.gen(function*() {
      const t = Tool.make({
        name: "div",
        parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
        success: Schema.Struct({ q: Schema.Number }),
        handler: ({ a, b }) => b === 0 ? Effect.fail(new Tool.ToolError({ message: "division by zero" })) : { q: a / b }
      })
      const conn = yield* modern(yield* build([t]))
      const ok = resultOf(yield* call(conn, "div", { a: 6, b: 3 }))
      expect(ok.structuredContent).toEqual({ q: 2 })
      const bad = resultOf(yield* call(conn, "div", { a: 1, b: 0 }))
      expect(bad).toMatchObject({ content: [{ type: "text", text: "division by zero" }], isError: true })
    }))

  it.effect("a typed tool without parameters (Schema.Struct({})) is accepted and listed with a root type object (EC-09)", () =>
    Effect.gen(function*() {
      const t = Tool.make({ name: "now", parameters: Schema.Struct({}), handler: () => "12:00" })
      const built = yield* Effect.either(build([t]))
      assert.isTrue(Either.isRight(built), Either.isLeft(built) ? built.left.message : "")
      if (Either.isRight(built)) {
        const conn = yield* modern(built.right)
        const tool = asArray(resultOf(yield* conn.call("tools/list")).tools)[0]
        assert.strictEqual(get(tool, "inputSchema", "type"), "object")
        assert.strictEqual(textAt(yield* call(conn, "now", {})), "12:00")
        assert.strictEqual(textAt(yield* call(conn, "now")), "12:00")
      }
    }))

  it.effect("without parameters: no arguments, listed as {type: object, properties: {}}, the handler gets {}", () =>
    Effect.gen(function*() {
      const seen: Array<unknown> = []
      const t = Tool.make({
        name: "ping",
        handler: (args) => {
          seen.push(args)
          return "pong"
        }
      })
      const conn = yield* modern(yield* build([t]))
      const tool = asArray(resultOf(yield* conn.call("tools/list")).tools)[0]
      expect(get(tool, "inputSchema")).toEqual({ type: "object", properties: {} })
      assert.strictEqual(textAt(yield* call(conn, "ping")), "pong")
      expect(seen).toEqual([{}])
    }))

  it.effect("an untyped 0.1-style make({ inputSchema }) is served as the JSON Schema tool it is, not emptied", () =>
    Effect.gen(function*() {
      // What plain JavaScript (no type check) passes: the 0.1 record.
      const untyped: Parameters<typeof Tool.fromJsonSchema>[0] = {
        name: "greet",
        inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        handler: (args) => `Hello, ${String(args.name)}!`
      }
      const makeUntyped: (tool: unknown) => Tool.Tool = Tool.make as (tool: unknown) => Tool.Tool
      const conn = yield* modern(yield* build([makeUntyped(untyped)]))
      const tool = asArray(resultOf(yield* conn.call("tools/list")).tools)[0]
      expect(get(tool, "inputSchema")).toEqual(untyped.inputSchema)
      assert.strictEqual(textAt(yield* call(conn, "greet", { name: "Ada" })), "Hello, Ada!")
    }))

  it("the handler's arguments are typed from parameters (no cast; the README's first tool)", () => {
    const add = Tool.make({
      name: "add",
      parameters: Schema.Struct({ numbers: Schema.Array(Schema.Number) }),
      success: Schema.Struct({ sum: Schema.Number }),
      handler: ({ numbers }) => Effect.succeed({ sum: numbers.reduce((a, n) => a + n, 0) })
    })
    assert.strictEqual(add.name, "add")
    Tool.make({
      name: "typed",
      parameters: Schema.Struct({ n: Schema.Number }),
      // @ts-expect-error `n` is a number, not a string
      handler: ({ n }) => n.toUpperCase()
    })
    Tool.make({
      name: "no-parameters",
      // @ts-expect-error without `parameters` the handler has no arguments
      handler: ({ text }) => String(text)
    })
    Tool.make({
      name: "raw",
      // @ts-expect-error a raw JSON Schema needs Tool.fromJsonSchema
      inputSchema: { type: "object" },
      handler: () => "x"
    })
  })

  it.effect("a non-object success schema: the result conforms to the advertised outputSchema (no isError)", () =>
    Effect.gen(function*() {
      const t = Tool.make({
        name: "count",
        parameters: Schema.Struct({ of: Schema.optional(Schema.String) }),
        success: Schema.Number,
        handler: () => Effect.succeed(5)
      })
      const conn = yield* modern(yield* build([t]))
      const listed = asArray(resultOf(yield* conn.call("tools/list")).tools)[0]
      const outputSchema = get(listed, "outputSchema")
      const reply = yield* call(conn, "count", {})
      const r = resultOf(reply)
      assert.notStrictEqual(r.isError, true, JSON.stringify(r))
      expect(JsonSchema.validate(outputSchema, r.structuredContent)).toEqual([])
    }))
})

// ---------------------------------------------------------------------------------------------

describe("tool definitions", () => {
  const fails = (tools: ReadonlyArray<Tool.Tool>) =>
    Effect.gen(function*() {
      const result = yield* Effect.either(build(tools))
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result)) {
        assert.strictEqual(result.left._tag, "DefinitionError")
        return result.left
      }
      throw new Error("unreachable")
    })

  it.effect("an inputSchema whose root type is not object → DefinitionError", () =>
    Effect.gen(function*() {
      const e = yield* fails([Tool.fromJsonSchema({ name: "s", inputSchema: { type: "string" }, handler: () => "x" })])
      assert.strictEqual(e.kind, "tool")
      assert.strictEqual(e.name, "s")
      assert.include(e.message, "object")
      yield* fails([
        Tool.fromJsonSchema({ name: "u", inputSchema: { anyOf: [{ type: "object" }] }, handler: () => "x" })
      ])
      yield* fails([Tool.fromJsonSchema({ name: "p", inputSchema: { properties: {} }, handler: () => "x" })])
    }))

  it.effect("a duplicate tool name → DefinitionError naming it", () =>
    Effect.gen(function*() {
      const e = yield* fails([echo, Tool.fromJsonSchema({ name: "echo", handler: () => "again" })])
      assert.strictEqual(e.kind, "tool")
      assert.strictEqual(e.name, "echo")
    }))

  it.effect("an empty tool name → DefinitionError", () =>
    Effect.gen(function*() {
      yield* fails([Tool.fromJsonSchema({ name: "", handler: () => "x" })])
    }))

  it.effect("a parameterless tool is listed with {type: object, properties: {}} (EC-09)", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* build([Tool.fromJsonSchema({ name: "noargs", handler: () => "x" })]))
      const tool = asArray(resultOf(yield* conn.call("tools/list")).tools)[0]
      expect(get(tool, "inputSchema")).toEqual({ type: "object", properties: {} })
    }))

  it.effect.each(["2026-07-28", "2025-11-25", "2025-06-18"] as const)(
    "listed metadata: title, description, annotations, icons, _meta, outputSchema (%s)",
    (rev) =>
      Effect.gen(function*() {
        const meta: JsonObject = { "com.example/tag": "x" }
        const conn = yield* connect(
          yield* build([
            Tool.fromJsonSchema({
              name: "full",
              title: "Full",
              description: "A tool with everything",
              annotations: { readOnlyHint: true, title: "Full tool" },
              icons: [{ src: "https://example.com/i.png", mimeType: "image/png", sizes: ["48x48"] }],
              _meta: meta,
              inputSchema: { type: "object", properties: { a: { type: "string" } } },
              outputSchema: { type: "object" },
              handler: () => ({ ok: true })
            })
          ]),
          rev
        )
        const tool = asArray(resultOf(yield* conn.call("tools/list")).tools)[0]
        expect(tool).toEqual({
          name: "full",
          title: "Full",
          description: "A tool with everything",
          annotations: { readOnlyHint: true, title: "Full tool" },
          icons: [{ src: "https://example.com/i.png", mimeType: "image/png", sizes: ["48x48"] }],
          _meta: meta,
          inputSchema: { type: "object", properties: { a: { type: "string" } } },
          outputSchema: { type: "object" }
        })
      })
  )

  it.effect("legacy sessions are never sent a non-object outputSchema or structuredContent (protocol.md §24.5)", () =>
    Effect.gen(function*() {
      const server = yield* build([
        Tool.fromJsonSchema({
          name: "list",
          outputSchema: { type: "array", items: { type: "number" } },
          handler: () => ({ content: [Content.text("[1,2]")], structuredContent: [1, 2] })
        })
      ])
      // modern: an array outputSchema / structuredContent is fine
      const m = yield* modern(server)
      yield* m.call("tools/list")
      expect(get((yield* call(m, "list", {})).message, "result", "structuredContent")).toEqual([1, 2])
      // legacy: both replies are cross-checked against the 2025-11-25 schema (object roots only)
      const l = yield* legacy(server, "2025-11-25")
      yield* l.call("tools/list")
      yield* call(l, "list", {})
    }))
})
