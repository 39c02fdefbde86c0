/**
 * Issue #20: hostile and careless peers. One block per kind of fault: amplification through error
 * text, names that are also `Object.prototype` members, numbers JSON cannot carry and the
 * `Mcp-Param-*` number grammar, defect names, and the validator's `pattern` engine (linear time).
 * Every reply is cross-checked against the official schema of its revision (test/support/Wire.ts).
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { JsonRpc, JsonSchema, McpServer, Prompt, Resource, Tool } from "presa-mcp"
import { makeLibrary } from "../examples/library-definitions.js"
import {
  connect,
  ERAS,
  errorOf,
  get,
  type JsonObject,
  KEY,
  MODERN,
  modernMeta,
  type Reply,
  request,
  resultOf,
  textAt
} from "./support/Wire.js"

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), "utf8")

/** A reply in wire form, with the JSON text of everything it carries. */
const wire = (reply: Reply): string => JSON.stringify(reply.message)

// =============================================================================================
// 1. Amplification
// =============================================================================================

describe("amplification: an error quotes request values only up to a bound", () => {
  const BIG = "x".repeat(100_000)
  // Each case: a request whose reply is an error (or an isError result) caused by a 100 KB value.
  const cases: ReadonlyArray<readonly [string, string, JsonObject]> = [
    ["unknown method", BIG, {}],
    ["unknown tool", "tools/call", { name: BIG, arguments: {} }],
    ["unknown prompt", "prompts/get", { name: BIG }],
    ["unknown resource", "resources/read", { uri: `file:///${BIG}` }],
    ["invalid cursor", "tools/list", { cursor: BIG }],
    ["completion of an unknown prompt", "completion/complete", {
      ref: { type: "ref/prompt", name: BIG },
      argument: { name: "id", value: "" }
    }],
    ["completion of an unknown template", "completion/complete", {
      ref: { type: "ref/resource", uri: BIG },
      argument: { name: "id", value: "" }
    }],
    ["params of the wrong type (Schema quotes the value)", "prompts/get", { name: "introduce", arguments: BIG }],
    ["params with a huge record key", "prompts/get", { name: "introduce", arguments: { [BIG]: 1 } }],
    ["arguments failing the input schema", "tools/call", { name: "add", arguments: { numbers: [BIG] } }],
    ["many extra keys failing the input schema", "tools/call", {
      name: "strict",
      arguments: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`${i}${"k".repeat(1_000)}`, 1]))
    }]
  ]

  describe.each(ERAS)("%s", (rev) => {
    it.effect("each reply stays under 4 KiB and under 5% of its request", () =>
      Effect.gen(function*() {
        const server = yield* makeLibrary
        yield* McpServer.addTool(
          server,
          Tool.fromJsonSchema({
            name: "strict",
            inputSchema: { type: "object", properties: {}, additionalProperties: false },
            handler: () => "ok"
          })
        )
        const conn = yield* connect(server, rev)
        const ratios: Array<string> = []
        for (const [label, method, params] of cases) {
          const reply = yield* conn.call(method, params)
          const requestBytes = bytes(request(1, method, params))
          const replyBytes = bytes(reply.message)
          ratios.push(`${label}: ${replyBytes} / ${requestBytes}`)
          const isError = get(reply.message, "error") !== undefined ||
            get(reply.message, "result", "isError") === true
          assert.isTrue(isError, `${label}: ${wire(reply).slice(0, 300)}`)
          assert.isBelow(replyBytes, 4096, `${label}: reply of ${replyBytes} bytes`)
          assert.isBelow(replyBytes / requestBytes, 0.05, label)
        }
        // The measured figures, for the record (issue #20 asks for reply bytes / request bytes).
        yield* Effect.logDebug(ratios.join("\n"))
      }))
  })

  it.effect("the modern _meta log level and the header mismatch messages are bounded too", () =>
    Effect.gen(function*() {
      const server = yield* makeLibrary
      const conn = yield* connect(server, MODERN)
      const level = yield* conn.call("tools/list", {}, { meta: { [KEY.logLevel]: BIG } })
      assert.strictEqual(errorOf(level).code, -32602)
      assert.isBelow(bytes(level.message), 1024)
      const body = request(1, "tools/call", { name: BIG, arguments: {}, _meta: modernMeta() })
      const mismatch = McpServer.checkHeaders(body, {
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "y".repeat(8_000)
      })
      assert.isTrue(Option.isSome(mismatch))
      if (Option.isSome(mismatch)) assert.isBelow(bytes(mismatch.value.toErrorObject()), 1024)
      const version = McpServer.McpError.unsupportedVersion(["2026-07-28"], BIG)
      assert.isBelow(bytes(version.toErrorObject()), 1024)
    }))

  it("JsonSchema.formatIssues renders at most 10 issues, each path cut after 256 characters", () => {
    const issues = Array.from(
      { length: 100 },
      (_, i) => ({ path: `/${"p".repeat(10_000)}${i}`, message: "is not allowed" })
    )
    const text = JsonSchema.formatIssues("Invalid arguments", issues)
    assert.isBelow(text.length, 10 * 300)
    assert.isTrue(text.endsWith("; and 90 more"), text.slice(-40))
    assert.strictEqual(text.split("; at ").length, 10)
    // Short issues are rendered exactly as before.
    assert.strictEqual(
      JsonSchema.formatIssues("Invalid arguments", [{ path: "/a", message: "x" }, { path: "", message: "y" }]),
      "Invalid arguments at /a: x; at /: y"
    )
  })
})

// =============================================================================================
// 2. Names that are also Object.prototype members
// =============================================================================================

const PROTO_NAMES = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "isPrototypeOf"] as const

/** No built-in function leaked into a reply, no -32603. */
const assertClean = (label: string, reply: Reply): void => {
  const text = wire(reply)
  assert.notInclude(text, "[native code]", label)
  assert.notInclude(text, "function ", label)
  const code = get(reply.message, "error", "code")
  assert.notStrictEqual(code, -32603, `${label}: ${text.slice(0, 300)}`)
}

describe("names that are also Object.prototype members", () => {
  describe.each(ERAS)("%s", (rev) => {
    it.effect("unknown: tools, prompts, prompt arguments, completion arguments, template values, methods", () =>
      Effect.gen(function*() {
        const server = yield* makeLibrary
        const conn = yield* connect(server, rev)
        for (const n of PROTO_NAMES) {
          const tool = yield* conn.call("tools/call", { name: n, arguments: {} })
          assertClean(`tools/call ${n}`, tool)
          expect(errorOf(tool)).toMatchObject({ code: -32602, message: `Unknown tool: ${n}` })
          const prompt = yield* conn.call("prompts/get", { name: n })
          assertClean(`prompts/get ${n}`, prompt)
          expect(errorOf(prompt)).toMatchObject({ code: -32602, message: `Unknown prompt: ${n}` })
          // The example's lookup: an id that is a prototype member is an unknown person.
          const intro = yield* conn.call("prompts/get", { name: "introduce", arguments: { id: n } })
          assertClean(`introduce ${n}`, intro)
          expect(errorOf(intro)).toMatchObject({ code: -32602, message: `Unknown person: ${n}` })
          const person = yield* conn.call("resources/read", { uri: `people://${n}` })
          assertClean(`people://${n}`, person)
          expect(errorOf(person)).toMatchObject({ code: -32602, message: "Resource not found" })
          const resource = yield* conn.call("resources/read", { uri: n })
          assertClean(`resources/read ${n}`, resource)
          assert.strictEqual(errorOf(resource).code, -32602)
          for (
            const ref of [{ type: "ref/prompt", name: "introduce" }, { type: "ref/resource", uri: "people://{id}" }]
          ) {
            const completion = yield* conn.call("completion/complete", { ref, argument: { name: n, value: "" } })
            assertClean(`completion ${n}`, completion)
            expect(resultOf(completion).completion).toEqual({ values: [] })
          }
          const method = yield* conn.call(n, {})
          assertClean(`method ${n}`, method)
          assert.strictEqual(errorOf(method).code, -32601)
        }
      }))

    it.effect("known: a tool, a prompt, its arguments and template variables named like prototype members", () =>
      Effect.gen(function*() {
        const server = yield* McpServer.make({
          name: "proto",
          version: "1.0.0",
          tools: PROTO_NAMES.map((n) =>
            Tool.fromJsonSchema({
              name: n,
              inputSchema: {
                type: "object",
                properties: { [n]: { type: "string" } },
                required: [n],
                additionalProperties: false
              },
              handler: (args) => `tool ${n}: ${JSON.stringify(args)}`
            })
          ),
          prompts: [
            Prompt.make({
              name: "constructor",
              arguments: [{ name: "toString", required: true }, { name: "hasOwnProperty" }],
              handler: (args) => `prompt: ${JSON.stringify(args)}`,
              complete: { toString: (v: string) => [`${v}!`] }
            })
          ],
          resourceTemplates: [
            Resource.template({
              uriTemplate: "proto://{constructor}/{__proto__}/{toString}",
              name: "proto",
              handler: (vars) => JSON.stringify(vars)
            })
          ]
        })
        const conn = yield* connect(server, rev)
        for (const n of PROTO_NAMES) {
          const ok = yield* conn.call("tools/call", { name: n, arguments: { [n]: "v" } })
          assertClean(`call ${n}`, ok)
          assert.strictEqual(textAt(ok), `tool ${n}: ${JSON.stringify({ [n]: "v" })}`)
          // A required argument named like a prototype member is missing when the client omits it.
          const missing = yield* conn.call("tools/call", { name: n, arguments: {} })
          assertClean(`call ${n} without its argument`, missing)
          assert.strictEqual(get(missing.message, "result", "isError"), true)
        }
        const noArg = yield* conn.call("prompts/get", { name: "constructor", arguments: {} })
        assertClean("prompt without toString", noArg)
        expect(errorOf(noArg)).toMatchObject({ code: -32602, message: "Missing required argument: toString" })
        const withArgs = yield* conn.call("prompts/get", {
          name: "constructor",
          arguments: { toString: "a", hasOwnProperty: "b" }
        })
        assertClean("prompt with arguments", withArgs)
        assert.strictEqual(
          get(withArgs.message, "result", "messages", 0, "content", "text"),
          "prompt: {\"toString\":\"a\",\"hasOwnProperty\":\"b\"}"
        )
        const completion = yield* conn.call("completion/complete", {
          ref: { type: "ref/prompt", name: "constructor" },
          argument: { name: "toString", value: "x" }
        })
        expect(resultOf(completion).completion).toEqual({ values: ["x!"] })
        const read = yield* conn.call("resources/read", { uri: "proto://a/b/c" })
        assertClean("template read", read)
        // The template's own variables, `__proto__` included (a JSON text the handler built).
        assert.strictEqual(
          get(read.message, "result", "contents", 0, "text"),
          "{\"constructor\":\"a\",\"__proto__\":\"b\",\"toString\":\"c\"}"
        )
      }))
  })
})

describe("`__proto__` keys in peer text", () => {
  it("JsonRpc.parse drops them, so a decoded object never gets a peer's prototype", () => {
    for (
      const text of [
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":{\"name\":\"p\",\"__proto__\":{\"x\":5}}}",
        // the same key spelled with escapes
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":{\"name\":\"p\",\"\\u005f_proto__\":{\"x\":5}}}"
      ]
    ) {
      const c = JsonRpc.parse(text)
      assert.strictEqual(c._tag, "Request")
      if (c._tag !== "Request") return
      const params = c.message.params
      assert.isDefined(params)
      assert.deepStrictEqual(Object.keys(params ?? {}), ["name"])
      assert.strictEqual(Object.getPrototypeOf(params), Object.prototype)
      assert.isUndefined(get(params, "x"))
    }
    // Text without the key parses to the same value as JSON.parse.
    const plain = "{\"jsonrpc\":\"2.0\",\"id\":\"é\\u00e9\",\"method\":\"ping\"}"
    const c = JsonRpc.parse(plain)
    expect(c._tag === "Request" ? c.message : undefined).toEqual(JSON.parse(plain))
  })
})

// =============================================================================================
// 3. Numbers
// =============================================================================================

describe("numbers", () => {
  it("the validator takes no NaN or ±Infinity as a number or an integer", () => {
    for (const type of ["number", "integer"]) {
      for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
        expect(JsonSchema.validate({ type }, value)).toEqual([{ path: "", message: `expected ${type}, got number` }])
      }
      expect(JsonSchema.validate({ type }, 42)).toEqual([])
    }
  })

  describe("Mcp-Param-* integers: decimal only (MCP 2026-07-28, Streamable HTTP, custom headers)", () => {
    const schema = {
      type: "object",
      properties: { n: { type: "integer", "x-mcp-header": "N" }, s: { type: "string", "x-mcp-header": "S" } }
    }
    const check = (n: number, header: string) =>
      McpServer.checkHeaders(
        request(1, "tools/call", { name: "t", arguments: { n }, _meta: modernMeta() }),
        { "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "t", "mcp-param-n": header },
        schema
      )
    it("accepts decimal forms of the same value", () => {
      for (const [n, header] of [[42, "42"], [42, "42.0"], [-7, "-7"], [0, "0"], [0, "-0"], [42, " 42 "]] as const) {
        assert.isTrue(Option.isNone(check(n, header)), `${n} vs '${header}'`)
      }
    })
    it("refuses hex, binary, octal, exponent, sign, bare-point, leading-zero and empty forms with -32020", () => {
      for (
        const header of [
          "0x2a",
          "0X2A",
          "0b101010",
          "0o52",
          "4.2e1",
          "42e0",
          "+42",
          "42.",
          ".5",
          "042",
          "",
          "4_2",
          "Infinity"
        ]
      ) {
        const n = header === ".5" ? 0.5 : header === "" ? 0 : 42
        const e = check(n, header)
        assert.isTrue(Option.isSome(e), `'${header}' accepted`)
        if (Option.isSome(e)) assert.strictEqual(e.value.code, -32020)
      }
    })
  })
})

// =============================================================================================
// 8. Defect names
// =============================================================================================

describe("defect names", () => {
  class Leaky extends Error {
    constructor(secret: string) {
      super("boom")
      this.name = `user ${secret} at /home/alice/.ssh/id_rsa`
    }
  }
  class Long extends Error {
    override name = "E".repeat(65)
  }
  class Fine extends Error {
    override name = "QuotaError"
  }
  const tool = (name: string, error: () => Error) => Tool.fromJsonSchema({ name, handler: () => Effect.die(error()) })

  describe.each(ERAS)("%s", (rev) => {
    it.effect("only an identifier of at most 64 characters goes out; anything else reads Error", () =>
      Effect.gen(function*() {
        const server = yield* McpServer.make({
          name: "defects",
          version: "1.0.0",
          tools: [
            tool("leaky", () => new Leaky("4111-1111")),
            tool("long", () => new Long()),
            tool("fine", () => new Fine()),
            tool("type", () => new TypeError("x"))
          ]
        })
        const conn = yield* connect(server, rev)
        const text = (name: string) =>
          Effect.map(conn.call("tools/call", { name, arguments: {} }), (reply) => {
            assert.strictEqual(get(reply.message, "result", "isError"), true, `${name}: ${wire(reply)}`)
            return textAt(reply)
          })
        assert.strictEqual(yield* text("leaky"), "Error")
        assert.strictEqual(yield* text("long"), "Error")
        assert.strictEqual(yield* text("fine"), "QuotaError")
        assert.strictEqual(yield* text("type"), "TypeError")
      }))
  })
})

// =============================================================================================
// 7. Validator time
// =============================================================================================

describe("validator time: pattern runs in linear time; fallback patterns on at most 4,096 code units", () => {
  it("a catastrophic pattern against a long string answers at once instead of backtracking", () => {
    const schema = { type: "object", properties: { s: { type: "string", pattern: "^(a|a?)+$" } } }
    const value = { s: `${"a".repeat(100_000)}!` }
    const started = performance.now()
    const issues = JsonSchema.validate(schema, value)
    const elapsed = performance.now() - started
    expect(issues).toEqual([{
      path: "/s",
      message: "must match pattern \"^(a|a?)+$\""
    }])
    assert.isBelow(elapsed, 100, `${elapsed} ms`)
  })

  it("a quadratic pattern on a long string stays fast; patternProperties keys too", () => {
    const quadratic = { type: "string", pattern: "^(?:a|b)*?c(?:a|b)*$" }
    const at = "ab".repeat(2048)
    const started = performance.now()
    expect(JsonSchema.validate(quadratic, at)).toEqual([{
      path: "",
      message: `must match pattern "${quadratic.pattern}"`
    }])
    assert.isBelow(performance.now() - started, 1000)
    expect(JsonSchema.validate({ type: "string", pattern: "^a+$" }, "a".repeat(4096))).toEqual([])
    const keyed = { type: "object", patternProperties: { "^k": { type: "number" } } }
    expect(JsonSchema.validate(keyed, { ["k".repeat(5000)]: 1 })).toEqual([])
    expect(JsonSchema.validate(keyed, { ["k".repeat(5000)]: "x" })[0]?.message).toBe("expected number, got string")
    const backtracking = { type: "object", patternProperties: { "^(k)\\1": { type: "number" } } }
    expect(JsonSchema.validate(backtracking, { ["k".repeat(5000)]: 1 })[0]?.message).toMatch(/too long to check/)
    expect(JsonSchema.validate(keyed, { k1: "x" })).toEqual([{ path: "/k1", message: "expected number, got string" }])
  })

  it.effect("a server with such a tool answers the call with isError quickly", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "patterns",
        version: "1.0.0",
        tools: [
          Tool.fromJsonSchema({
            name: "p",
            inputSchema: { type: "object", properties: { s: { type: "string", pattern: "^(\\d+)*$" } } },
            handler: () => "ok"
          })
        ]
      })
      const conn = yield* connect(server, MODERN)
      const reply = yield* conn.call("tools/call", { name: "p", arguments: { s: `${"1".repeat(50_000)}x` } })
      assert.strictEqual(get(reply.message, "result", "isError"), true)
      assert.match(String(textAt(reply)), /must match pattern/)
    }))
})
