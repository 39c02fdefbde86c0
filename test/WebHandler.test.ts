/**
 * The web-standard handler: the official SDK clients through a `fetch` that calls the handler
 * directly (no socket), and the raw HTTP cases of the Streamable HTTP server.
 */
import { afterAll, assert, beforeAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/client"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as WebHandler from "presa-mcp/WebHandler"
import { makeLibrary } from "../examples/library-definitions.js"
import { get } from "./support/Wire.js"

const URL_ = "http://127.0.0.1/mcp"
let web: WebHandler.WebHandler

beforeAll(async () => {
  web = WebHandler.toWebHandler(await Effect.runPromise(makeLibrary))
})
afterAll(async () => {
  await web.dispose()
})

const direct: typeof fetch = (input, init) => web(new Request(input, init))

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {}
}

const call = async (
  method: string,
  body: unknown,
  headers: Record<string, string> = {}
): Promise<{ status: number; json: unknown; headers: Headers }> => {
  const res = await web(
    new Request(URL_, {
      method,
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers
      },
      ...(method === "POST" ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {})
    })
  )
  const text = await res.text()
  return { status: res.status, json: text === "" ? undefined : JSON.parse(text), headers: res.headers }
}

const modern = { "mcp-protocol-version": "2026-07-28" }

describe("WebHandler with the official SDK clients (fetch → handler, no socket)", () => {
  it("SDK v2 client (2026-07-28): list, call, read, get prompt, complete", async () => {
    const client = new Client({ name: "web-test", version: "0" }, {
      versionNegotiation: { mode: { pin: "2026-07-28" } }
    })
    await client.connect(new StreamableHTTPClientTransport(new URL(URL_), { fetch: direct }))
    assert.strictEqual(client.getProtocolEra(), "modern")
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["add", "logo"])
    const sum = await client.callTool({ name: "add", arguments: { numbers: [1, 2, 3] } })
    expect(sum.structuredContent).toEqual({ sum: 6 })
    const ada = await client.readResource({ uri: "people://ada" })
    assert.strictEqual(get(ada, "contents", 0, "text"), "Ada Lovelace")
    const prompt = await client.getPrompt({ name: "introduce", arguments: { id: "alan" } })
    assert.strictEqual(get(prompt, "messages", 0, "content", "text"), "Introduce Alan Turing in one sentence.")
    const done = await client.complete({
      ref: { type: "ref/prompt", name: "introduce" },
      argument: { name: "id", value: "a" }
    })
    expect(done.completion.values).toEqual(["ada", "alan"])
    await client.close()
  })

  it("SDK v1 client (legacy, no sessions): initialize and calls work without Mcp-Session-Id", async () => {
    const client = new ClientV1({ name: "web-test-v1", version: "0" })
    await client.connect(new TransportV1(new URL(URL_), { fetch: direct }))
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["add", "logo"])
    const sum = await client.callTool({ name: "add", arguments: { numbers: [4, 5] } })
    expect(sum.structuredContent).toEqual({ sum: 9 })
    await client.close()
  })
})

describe("WebHandler raw HTTP cases", () => {
  it("header/body method mismatch → 400 -32020", async () => {
    const r = await call("POST", { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: META } }, {
      ...modern,
      "mcp-method": "prompts/list"
    })
    assert.strictEqual(r.status, 400)
    assert.strictEqual(get(r.json, "error", "code"), -32020)
  })

  it("unknown version → 400 -32022 with data.supported", async () => {
    const meta = { ...META, "io.modelcontextprotocol/protocolVersion": "1999-01-01" }
    const r = await call("POST", { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: meta } }, {
      "mcp-protocol-version": "1999-01-01",
      "mcp-method": "tools/list"
    })
    assert.strictEqual(r.status, 400)
    assert.strictEqual(get(r.json, "error", "code"), -32022)
    expect(get(r.json, "error", "data", "supported")).toEqual(["2026-07-28", "2025-11-25", "2025-06-18"])
  })

  it("modern initialize → 404 -32601; bad Origin → 403; notification → 202; missing Accept → 406; 5 MiB → 413", async () => {
    const init = await call("POST", { jsonrpc: "2.0", id: 1, method: "initialize", params: { _meta: META } }, {
      ...modern,
      "mcp-method": "initialize"
    })
    assert.strictEqual(init.status, 404)
    assert.strictEqual(get(init.json, "error", "code"), -32601)
    const origin = await call("POST", { jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: META } }, {
      ...modern,
      "mcp-method": "tools/list",
      origin: "http://attacker.example"
    })
    assert.strictEqual(origin.status, 403)
    const note = await call("POST", { jsonrpc: "2.0", method: "notifications/initialized" }, modern)
    assert.strictEqual(note.status, 202)
    assert.isUndefined(note.json)
    const res = await web(
      new Request(URL_, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list", params: { _meta: META } })
      })
    )
    assert.strictEqual(res.status, 406)
    const big = await call("POST", "x".repeat(5 * 1024 * 1024), modern)
    assert.strictEqual(big.status, 413)
  })

  it("legacy without sessions: initialize gets no Mcp-Session-Id; an unknown session id → 404; GET → 405", async () => {
    const init = await call("POST", {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } }
    })
    assert.strictEqual(init.status, 200)
    assert.isNull(init.headers.get("mcp-session-id"))
    const list = await call("POST", { jsonrpc: "2.0", id: 2, method: "tools/list" }, {
      "mcp-protocol-version": "2025-11-25"
    })
    assert.strictEqual(list.status, 200)
    assert.isUndefined(get(list.json, "result", "resultType"))
    const unknown = await call("POST", { jsonrpc: "2.0", id: 3, method: "tools/list" }, {
      "mcp-protocol-version": "2025-11-25",
      "mcp-session-id": "00000000-0000-4000-8000-000000000000"
    })
    assert.strictEqual(unknown.status, 404)
    const getRes = await web(new Request(URL_, { method: "GET", headers: { accept: "text/event-stream" } }))
    assert.strictEqual(getRes.status, 405)
  })
})
