import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { JsonRpc, McpServer, Tool } from "presa-mcp"
import { makeLibrary } from "../examples/library-definitions.js"
import { assertSpecValid, type Revision } from "./support/SpecSchema.js"
import {
  type Conn,
  connect,
  dispatchChecked,
  dispatchNone,
  ERAS,
  errorOf,
  get,
  keysOf,
  legacy,
  MODERN,
  notification,
  request,
  resultOf,
  withModernMeta
} from "./support/Wire.js"

/** Revisions whose error envelope admits a response without `id` (2025-06-18 requires it). */
const ID_OPTIONAL: ReadonlyArray<Revision> = ["2026-07-28", "2025-11-25"]

const checkIdless = (message: unknown): void => {
  for (const rev of ID_OPTIONAL) assertSpecValid(rev, "(invalid)", message)
}

describe("JsonRpc.classify", () => {
  it("classifies a request and keeps id 0 as the number 0", () => {
    const c = JsonRpc.classify({ jsonrpc: "2.0", id: 0, method: "ping" })
    assert.strictEqual(c._tag, "Request")
    if (c._tag === "Request") {
      assert.strictEqual(c.message.id, 0)
      assert.strictEqual(typeof c.message.id, "number")
      expect(c.message).toEqual({ jsonrpc: "2.0", id: 0, method: "ping" })
    }
  })

  it("keeps a string id a string (\"0\" is not 0)", () => {
    const c = JsonRpc.classify({ jsonrpc: "2.0", id: "0", method: "ping", params: {} })
    assert.strictEqual(c._tag, "Request")
    if (c._tag === "Request") {
      assert.strictEqual(c.message.id, "0")
      expect(c.message.params).toEqual({})
    }
  })

  it("classifies a message without id as a notification", () => {
    const c = JsonRpc.classify({ jsonrpc: "2.0", method: "notifications/initialized" })
    expect(c).toEqual({ _tag: "Notification", message: { jsonrpc: "2.0", method: "notifications/initialized" } })
  })

  it("id: null is an invalid request, not a notification (EC-27)", () => {
    const c = JsonRpc.classify({ jsonrpc: "2.0", id: null, method: "ping" })
    assert.strictEqual(c._tag, "Invalid")
    if (c._tag === "Invalid") {
      assert.strictEqual(c.error.code, -32600)
      assert.strictEqual(c.id, undefined)
    }
  })

  it("classifyBatch / parseBatch (a client reading a 2025-03-26 server): a batch message by message, in order", () => {
    const batch = [
      { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } },
      { jsonrpc: "2.0", id: 7, method: "ping" },
      { jsonrpc: "2.0", id: 1, result: {} },
      { jsonrpc: "2.0", id: 2, error: { code: -32601, message: "Method not found" } },
      [{ jsonrpc: "2.0", id: 3, method: "ping" }],
      "x"
    ]
    const tags = (cs: ReadonlyArray<JsonRpc.Classified>) => cs.map((c) => c._tag)
    const expected = ["Notification", "Request", "Response", "Response", "Invalid", "Invalid"]
    expect(tags(JsonRpc.classifyBatch(batch))).toEqual(expected)
    expect(tags(JsonRpc.parseBatch(JSON.stringify(batch)))).toEqual(expected)
    expect(JsonRpc.classifyBatch(batch)[2]).toEqual(JsonRpc.classify(batch[2]))
    // not a batch: one message, as classify gives it
    expect(JsonRpc.classifyBatch({ jsonrpc: "2.0", id: 1, method: "ping" })).toEqual([
      JsonRpc.classify({ jsonrpc: "2.0", id: 1, method: "ping" })
    ])
    // an empty batch is one -32600; text that is not JSON one -32700
    const [empty] = JsonRpc.classifyBatch([])
    assert(empty?._tag === "Invalid")
    expect(empty.error.code).toBe(-32600)
    const [garbled] = JsonRpc.parseBatch("[{")
    assert(garbled?._tag === "Invalid")
    expect(garbled.error.code).toBe(-32700)
  })

  it("rejects batches, non-objects, wrong jsonrpc, non-string methods, non-object params", () => {
    const cases: ReadonlyArray<readonly [unknown, number | string | undefined]> = [
      [[{ jsonrpc: "2.0", id: 1, method: "ping" }], undefined],
      [[], undefined],
      ["ping", undefined],
      [42, undefined],
      [null, undefined],
      [{ jsonrpc: "1.0", id: 1, method: "ping" }, 1],
      [{ id: 2, method: "ping" }, 2],
      [{ jsonrpc: "2.0", id: 3, method: 42 }, 3],
      [{ jsonrpc: "2.0", id: 4, method: "ping", params: [1, 2] }, 4],
      [{ jsonrpc: "2.0", id: 5, method: "ping", params: "x" }, 5],
      [{ jsonrpc: "2.0", id: 6, method: "ping", params: null }, 6],
      [{ jsonrpc: "2.0", id: true, method: "ping" }, undefined],
      [{ jsonrpc: "2.0", id: {}, method: "ping" }, undefined],
      [{ jsonrpc: "2.0", id: 7 }, 7],
      [{ jsonrpc: "1.0", id: 0, method: "ping" }, 0],
      [{ jsonrpc: "2.0", id: "", method: 1 }, ""]
    ]
    for (const [value, id] of cases) {
      const c = JsonRpc.classify(value)
      assert.strictEqual(c._tag, "Invalid", JSON.stringify(value))
      if (c._tag === "Invalid") {
        assert.strictEqual(c.error.code, -32600, JSON.stringify(value))
        assert.strictEqual(c.id, id, JSON.stringify(value))
      }
    }
  })

  it("classifies results and errors (with or without id) as responses", () => {
    expect(JsonRpc.classify({ jsonrpc: "2.0", id: 1, result: {} })).toEqual({
      _tag: "Response",
      message: { jsonrpc: "2.0", id: 1, result: {} }
    })
    expect(JsonRpc.classify({ jsonrpc: "2.0", id: "a", error: { code: -32601, message: "nope", data: 1 } })).toEqual({
      _tag: "Response",
      message: { jsonrpc: "2.0", id: "a", error: { code: -32601, message: "nope", data: 1 } }
    })
    expect(JsonRpc.classify({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error" } })._tag).toBe("Response")
  })
})

describe("JsonRpc.parse", () => {
  it("text that is not JSON is -32700 without id", () => {
    const c = JsonRpc.parse("{bad")
    assert.strictEqual(c._tag, "Invalid")
    if (c._tag === "Invalid") {
      assert.strictEqual(c.error.code, -32700)
      assert.strictEqual(c.error.message, "Parse error")
      assert.strictEqual(c.id, undefined)
      const response = JsonRpc.failure(c.id, c.error)
      expect(response).toEqual({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error" } })
      assert.isFalse("id" in response)
      checkIdless(JSON.parse(JsonRpc.encode(response)))
    }
  })

  it("parses and classifies valid JSON", () => {
    const c = JsonRpc.parse(`{"jsonrpc":"2.0","id":0,"method":"tools/list"}`)
    assert.strictEqual(c._tag, "Request")
    expect(JsonRpc.parse("[]")._tag).toBe("Invalid")
    const empty = JsonRpc.parse("")
    assert.strictEqual(empty._tag === "Invalid" ? empty.error.code : 0, -32700)
  })
})

describe("JsonRpc constructors", () => {
  it("success and failure echo the id with its exact type; failure without id omits it", () => {
    expect(JsonRpc.success(0, {})).toEqual({ jsonrpc: "2.0", id: 0, result: {} })
    expect(JsonRpc.failure("x", JsonRpc.McpError.methodNotFound("nope"))).toEqual({
      jsonrpc: "2.0",
      id: "x",
      error: { code: -32601, message: "Method not found: nope", data: { method: "nope" } }
    })
    const idless = JsonRpc.failure(undefined, JsonRpc.McpError.invalidRequest())
    assert.deepStrictEqual(keysOf(idless), ["jsonrpc", "error"])
  })

  it("encode writes one line even when strings contain newlines", () => {
    const line = JsonRpc.encode(JsonRpc.success(1, { text: "a\nb" }))
    assert.isFalse(line.includes("\n"))
    expect(JSON.parse(line)).toEqual({ jsonrpc: "2.0", id: 1, result: { text: "a\nb" } })
  })

  it("McpError constructors choose the codes of the spec", () => {
    expect(JsonRpc.McpError.resourceNotFound("x://a").toErrorObject()).toEqual({
      code: -32602,
      message: "Resource not found",
      data: { uri: "x://a" }
    })
    expect(JsonRpc.McpError.unsupportedVersion(["2026-07-28"], "v9").toErrorObject()).toEqual({
      code: -32022,
      message: "Unsupported protocol version: v9",
      data: { supported: ["2026-07-28"], requested: "v9" }
    })
    expect(JsonRpc.McpError.internalError().toErrorObject()).toEqual({ code: -32603, message: "Internal error" })
    expect(JsonRpc.McpError.headerMismatch("m").code).toBe(-32020)
    expect(JsonRpc.McpError.missingClientCapability({ sampling: {} }).toErrorObject()).toEqual({
      code: -32021,
      message: "Missing required client capability: sampling",
      data: { requiredCapabilities: { sampling: {} } }
    })
    assert.isTrue(JsonRpc.isErrorResponse(JsonRpc.failure(1, JsonRpc.McpError.parseError())))
    assert.isFalse(JsonRpc.isErrorResponse(JsonRpc.success(1, {})))
  })
})

// ---------------------------------------------------------------------------------------------
// the envelope rules as the server applies them, in both eras
// ---------------------------------------------------------------------------------------------

describe("McpServer.dispatch: JSON-RPC envelope", () => {
  describe.each(ERAS)("%s", (rev) => {
    const setup = Effect.gen(function*() {
      const server = yield* makeLibrary
      return yield* connect(server, rev)
    })
    const meta = (conn: Conn, params: Record<string, unknown> = {}) =>
      conn.rev === MODERN ? withModernMeta(params) : params

    it.effect("id 0 is echoed as the number 0 (EC-01)", () =>
      Effect.gen(function*() {
        const conn = yield* setup
        const reply = yield* conn.raw(request(0, "tools/list", meta(conn)))
        assert.strictEqual(get(reply.message, "id"), 0)
        assert.strictEqual(reply.status, 200)
        assert.isArray(resultOf(reply).tools)
      }))

    it.effect("a string id is echoed as a string, a negative id as a negative number", () =>
      Effect.gen(function*() {
        const conn = yield* setup
        const s = yield* conn.raw(request("0", "tools/list", meta(conn)))
        assert.strictEqual(get(s.message, "id"), "0")
        const u = yield* conn.raw(request("id-ü-1", "tools/list", meta(conn)))
        assert.strictEqual(get(u.message, "id"), "id-ü-1")
        const n = yield* conn.raw(request(-7, "tools/list", meta(conn)))
        assert.strictEqual(get(n.message, "id"), -7)
        const empty = yield* conn.raw(request("", "tools/list", meta(conn)))
        assert.strictEqual(get(empty.message, "id"), "")
        const big = yield* conn.raw(request(Number.MAX_SAFE_INTEGER, "tools/list", meta(conn)))
        assert.strictEqual(get(big.message, "id"), Number.MAX_SAFE_INTEGER)
      }))

    it.effect("error responses echo the id too (id 0 on an unknown method)", () =>
      Effect.gen(function*() {
        const conn = yield* setup
        const reply = yield* conn.raw(request(0, "nope/nothing", meta(conn)))
        assert.strictEqual(get(reply.message, "id"), 0)
        expect(errorOf(reply).code).toBe(-32601)
      }))

    it.effect("an unknown method is -32601 (HTTP 404) naming the method", () =>
      Effect.gen(function*() {
        const conn = yield* setup
        const reply = yield* conn.call("tools/frobnicate")
        const e = errorOf(reply)
        assert.strictEqual(e.code, -32601)
        assert.strictEqual(e.message, "Method not found: tools/frobnicate")
        expect(e.data).toEqual({ method: "tools/frobnicate" })
        assert.strictEqual(reply.status, 404)
      }))

    it.effect("a notification with an unknown method gets no reply", () =>
      Effect.gen(function*() {
        const conn = yield* setup
        yield* conn.rawNone(notification("notifications/does_not_exist", meta(conn)))
        yield* conn.rawNone(notification("notifications/does_not_exist"))
      }))

    it.effect("a request method sent as a notification gets no reply and has no side effect", () =>
      Effect.gen(function*() {
        const calls = yield* Ref.make(0)
        const server = yield* McpServer.make({
          name: "t",
          version: "1",
          tools: [
            Tool.fromJsonSchema({
              name: "count",
              handler: () => Ref.updateAndGet(calls, (n) => n + 1).pipe(Effect.asVoid)
            })
          ]
        })
        const conn = yield* connect(server, rev)
        yield* conn.rawNone(notification("tools/call", meta(conn, { name: "count", arguments: {} })))
        yield* conn.rawNone(notification("tools/list", meta(conn)))
        assert.strictEqual(yield* Ref.get(calls), 0)
        // the same call as a request does run
        const reply = yield* conn.call("tools/call", { name: "count", arguments: {} })
        expect(get(reply.message, "result", "content")).toEqual([])
        assert.strictEqual(yield* Ref.get(calls), 1)
      }))

    it.effect("responses sent by the client get no reply", () =>
      Effect.gen(function*() {
        const conn = yield* setup
        yield* conn.rawNone({ jsonrpc: "2.0", id: 1, result: {} })
        yield* conn.rawNone({ jsonrpc: "2.0", id: "x", error: { code: -32601, message: "no" } })
        yield* conn.rawNone({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error" } })
      }))
  })

  describe("invalid envelopes (-32600, HTTP 400, no era)", () => {
    const send = (message: unknown) =>
      Effect.gen(function*() {
        const server = yield* makeLibrary
        const reply = yield* dispatchChecked(server, MODERN, message)
        checkIdless(reply.message)
        return reply
      })

    it.effect("id: null → -32600 without id (EC-27, EC-28)", () =>
      Effect.gen(function*() {
        const reply = yield* send({ jsonrpc: "2.0", id: null, method: "tools/list", params: withModernMeta() })
        assert.strictEqual(errorOf(reply).code, -32600)
        assert.strictEqual(reply.status, 400)
        assert.isFalse(keysOf(reply.message).includes("id"))
      }))

    it.effect("a batch array → one -32600 without id", () =>
      Effect.gen(function*() {
        const reply = yield* send([
          request(1, "tools/list", withModernMeta()),
          request(2, "tools/list", withModernMeta())
        ])
        const e = errorOf(reply)
        assert.strictEqual(e.code, -32600)
        assert.include(e.message, "batch")
        assert.strictEqual(reply.status, 400)
        assert.deepStrictEqual(keysOf(reply.message), ["jsonrpc", "error"])
        const empty = yield* send([])
        assert.strictEqual(errorOf(empty).code, -32600)
      }))

    it.effect("wrong or missing jsonrpc → -32600 (the readable id is echoed)", () =>
      Effect.gen(function*() {
        const wrong = yield* send({ jsonrpc: "1.0", id: 9, method: "tools/list", params: withModernMeta() })
        assert.strictEqual(errorOf(wrong).code, -32600)
        assert.strictEqual(get(wrong.message, "id"), 9)
        assert.strictEqual(wrong.status, 400)
        const missing = yield* send({ id: "m", method: "tools/list", params: withModernMeta() })
        assert.strictEqual(errorOf(missing).code, -32600)
        assert.strictEqual(get(missing.message, "id"), "m")
      }))

    it.effect("params that are not an object → -32600", () =>
      Effect.gen(function*() {
        for (const params of [[1, 2], "x", 3, null, true]) {
          const reply = yield* send({ jsonrpc: "2.0", id: 1, method: "tools/list", params })
          assert.strictEqual(errorOf(reply).code, -32600, JSON.stringify(params))
          assert.strictEqual(reply.status, 400)
        }
      }))

    it.effect("a method that is not a string, an id that is not a string/number, a bare value → -32600", () =>
      Effect.gen(function*() {
        const m = yield* send({ jsonrpc: "2.0", id: 1, method: 7 })
        assert.strictEqual(errorOf(m).code, -32600)
        const i = yield* send({ jsonrpc: "2.0", id: { n: 1 }, method: "tools/list", params: withModernMeta() })
        assert.strictEqual(errorOf(i).code, -32600)
        assert.isFalse(keysOf(i.message).includes("id"))
        for (const value of ["hello", 42, null]) {
          const r = yield* send(value)
          assert.strictEqual(errorOf(r).code, -32600)
          assert.isFalse(keysOf(r.message).includes("id"))
        }
      }))

    it.effect("handleMessage gives the same reply without the status", () =>
      Effect.gen(function*() {
        const server = yield* makeLibrary
        const out = yield* McpServer.handleMessage(server, { jsonrpc: "2.0", id: null, method: "ping" })
        assert.strictEqual(out._tag, "Some")
        if (out._tag === "Some") {
          expect(out.value).toEqual({ jsonrpc: "2.0", error: { code: -32600, message: expect.any(String) } })
        }
        yield* dispatchNone(server, notification("notifications/whatever"))
      }))

    it.effect(
      "on a 2025-06-18 session an error with an unreadable id still matches the 2025-06-18 schema (EC-28: that revision requires id)",
      () =>
        Effect.gen(function*() {
          const server = yield* makeLibrary
          const conn = yield* legacy(server, "2025-06-18")
          // conn.raw cross-checks against the session's own revision, 2025-06-18
          const reply = yield* conn.raw({ jsonrpc: "2.0", id: null, method: "ping" })
          assert.strictEqual(errorOf(reply).code, -32600)
        })
    )
  })
})
