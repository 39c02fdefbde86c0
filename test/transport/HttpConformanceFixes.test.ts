/**
 * Two HTTP rules the official conformance suite pins down (conformance/FIXTURES.md §3.3, §4.9):
 *
 * - a legacy request inside a session that names `MCP-Protocol-Version: 2025-03-26` (the version
 *   the spec assumes when the header is absent; conformance 0.1.16 and some SDKs send it) is
 *   served like one without the header, while other non-negotiated values still get 400 (EC-18);
 * - `=?base64?…?=` header values must be canonical base64: a value without its padding is
 *   malformed (-32020), not decoded leniently (SEP-2243 `http-custom-header-server-validation`).
 */
import { assert, describe, expect, it, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as JsonRpc from "../../src/JsonRpc.js"
import * as McpServer from "../../src/McpServer.js"
import * as Tool from "../../src/Tool.js"
import * as StreamableHttp from "../../src/transport/StreamableHttp.js"
import { raw } from "../fixtures/http-raw.js"
import { get } from "../support/Wire.js"

const WAIT: Duration.DurationInput = "10 seconds"
const LEGACY = "2025-11-25"

const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | Error, R> =>
  Effect.timeoutFail(effect, { duration: WAIT, onTimeout: () => new Error(`timed out after ${Duration.format(WAIT)}`) })

const BASE = { "content-type": "application/json", accept: "application/json, text/event-stream" } as const

const post = (url: string, body: unknown, headers: Record<string, string>) =>
  bounded(raw(url, { method: "POST", headers, body: JSON.stringify(body) }))

const parse = (text: string): unknown => {
  const value: unknown = JSON.parse(text)
  return value
}

class Env extends Context.Tag("test/HttpConformanceFixes/Env")<Env, { readonly url: string }>() {}

const EnvLive = Layer.scoped(
  Env,
  Effect.gen(function*() {
    const server = yield* McpServer.make({
      name: "fixes",
      version: "1.0.0",
      tools: [Tool.fromJsonSchema({ name: "hello", description: "Says hello", handler: () => "hello" })]
    })
    const address = yield* StreamableHttp.serve(server, { port: 0 })
    return { url: address.url }
  })
)

layer(EnvLive, { excludeTestServices: true, timeout: "30 seconds" })(
  "legacy MCP-Protocol-Version in a session",
  (it) => {
    const openSession = (url: string) =>
      Effect.gen(function*() {
        const init = yield* post(url, {
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "t", version: "0" } }
        }, BASE)
        const id = init.headers["mcp-session-id"]
        assert(typeof id === "string")
        return id
      })

    it.effect("2025-03-26 (the assumed version) is served like an absent header", () =>
      Effect.gen(function*() {
        const { url } = yield* Env
        const session = yield* openSession(url)
        const r = yield* post(
          url,
          { jsonrpc: "2.0", id: 1, method: "tools/list" },
          { ...BASE, "mcp-session-id": session, "mcp-protocol-version": "2025-03-26" }
        )
        expect(r.status).toBe(200)
        expect(get(parse(r.body), "result", "tools", 0, "name")).toBe("hello")
      }))

    it.effect("a supported but not negotiated version still gets 400", () =>
      Effect.gen(function*() {
        const { url } = yield* Env
        const session = yield* openSession(url)
        const r = yield* post(
          url,
          { jsonrpc: "2.0", id: 2, method: "tools/list" },
          { ...BASE, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" }
        )
        expect(r.status).toBe(400)
      }))
  }
)

layer(EnvLive, { excludeTestServices: true, timeout: "30 seconds" })(
  "unreadable bodies in a session: the id rule of the session's revision",
  (it) => {
    const openSession = (url: string, protocolVersion: string) =>
      Effect.gen(function*() {
        const init = yield* post(url, {
          jsonrpc: "2.0",
          id: 0,
          method: "initialize",
          params: { protocolVersion, capabilities: {}, clientInfo: { name: "t", version: "0" } }
        }, BASE)
        const id = init.headers["mcp-session-id"]
        assert(typeof id === "string")
        return id
      })
    const send = (url: string, body: string, headers: Record<string, string>) =>
      bounded(raw(url, { method: "POST", headers, body }))

    it.effect("2025-06-18 (id required by its schema): -32700 and -32600 carry \"id\": null", () =>
      Effect.gen(function*() {
        const { url } = yield* Env
        const session = yield* openSession(url, "2025-06-18")
        const headers = { ...BASE, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" }
        const notJson = yield* send(url, "{not json", headers)
        expect(notJson.status).toBe(400)
        expect(parse(notJson.body)).toEqual({
          jsonrpc: "2.0",
          id: null,
          error: { code: -32700, message: "Parse error" }
        })
        const batch = yield* send(url, JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "tools/list" }]), headers)
        expect(batch.status).toBe(400)
        expect(get(parse(batch.body), "id")).toBeNull()
        expect(get(parse(batch.body), "error", "code")).toBe(-32600)
      }))

    it.effect("2025-11-25 and no session: no id at all", () =>
      Effect.gen(function*() {
        const { url } = yield* Env
        const session = yield* openSession(url, LEGACY)
        for (const headers of [{ ...BASE, "mcp-session-id": session }, BASE]) {
          const notJson = yield* send(url, "{not json", headers)
          expect(notJson.status).toBe(400)
          expect(parse(notJson.body)).toEqual({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error" } })
        }
      }))
  }
)

describe("SEP-2243 base64 header values", () => {
  const schema: JsonRpc.JsonObject = {
    type: "object",
    properties: { region: { type: "string", "x-mcp-header": "Region" } },
    required: ["region"]
  }
  const message = {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: {
      name: "t",
      arguments: { region: "Hello" },
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
      }
    }
  }
  const headers = (region: string) => ({
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "t",
    "Mcp-Param-Region": region
  })
  const code = (region: string) =>
    Option.map(McpServer.checkHeaders(message, headers(region), schema), (e) => e.code).pipe(Option.getOrUndefined)

  it("canonical base64 is decoded and compared", () => {
    expect(code("=?base64?SGVsbG8=?=")).toBeUndefined()
  })

  it("base64 without its padding is malformed → -32020", () => {
    expect(code("=?base64?SGVsbG8?=")).toBe(-32020)
  })

  it("characters outside the alphabet → -32020", () => {
    expect(code("=?base64?SGVs!!!bG8=?=")).toBe(-32020)
  })
})
