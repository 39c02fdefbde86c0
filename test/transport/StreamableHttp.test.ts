/**
 * Streamable HTTP over real sockets on 127.0.0.1 (port 0).
 *
 * - Server: `StreamableHttp.serve` of `test/fixtures/http-server.ts`, driven with raw `node:http`
 *   requests (`test/fixtures/http-raw.ts`) so every header and byte is ours.
 * - Mounting: the handler inside an app's own `HttpRouter` and `HttpLayerRouter`.
 * - Client: `StreamableHttp.client` against our server (both eras) and against a scripted
 *   recorder that shows exactly which headers we send and how odd replies are read.
 *
 * Every wait is bounded (`WAIT`).
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { assert, describe, expect, it, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import * as NodeHttp from "node:http"
import * as Service from "../../src/internal/server/service.js"
import * as Sessions from "../../src/internal/transport/http/session/store.js"
import * as JsonRpc from "../../src/JsonRpc.js"
import * as McpClient from "../../src/McpClient.js"
import * as McpServer from "../../src/McpServer.js"
import * as Tool from "../../src/Tool.js"
import * as StreamableHttp from "../../src/transport/StreamableHttp.js"
import { type Canned, raw, type RawResponse, rawUntil, recorder } from "../fixtures/http-raw.js"
import { makeProbe, makeServer, type Probe, type ProbeEvent } from "../fixtures/http-server.js"
import { asArray, get } from "../support/Wire.js"

const WAIT: Duration.DurationInput = "10 seconds"
const MODERN = "2026-07-28"
const LEGACY = "2025-11-25"

const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | Error, R> =>
  Effect.timeoutFail(effect, { duration: WAIT, onTimeout: () => new Error(`timed out after ${Duration.format(WAIT)}`) })

// ---------------------------------------------------------------------------------------------
// wire helpers
// ---------------------------------------------------------------------------------------------

type JsonObject = JsonRpc.JsonObject

const META: JsonObject = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": {}
}

const BASE = { "content-type": "application/json", accept: "application/json, text/event-stream" } as const

const modernHeaders = (method: string, extra: Record<string, string> = {}): Record<string, string> => ({
  ...BASE,
  "mcp-protocol-version": MODERN,
  "mcp-method": method,
  ...extra
})

const legacyHeaders = (sessionId: string, extra: Record<string, string> = {}): Record<string, string> => ({
  ...BASE,
  "mcp-session-id": sessionId,
  "mcp-protocol-version": LEGACY,
  ...extra
})

const rpc = (id: JsonRpc.RequestId, method: string, params?: JsonObject): JsonObject =>
  params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params }

const note = (method: string, params?: JsonObject): JsonObject =>
  params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params }

const modernCall = (id: JsonRpc.RequestId, name: string, args: JsonObject = {}, meta: JsonObject = {}): JsonObject =>
  rpc(id, "tools/call", { name, arguments: args, _meta: { ...META, ...meta } })

const INIT_PARAMS: JsonObject = {
  protocolVersion: LEGACY,
  capabilities: {},
  clientInfo: { name: "raw-test", version: "0.0.0" }
}

const post = (url: string, body: unknown, headers: Record<string, string>) =>
  bounded(raw(url, { method: "POST", headers, body: JSON.stringify(body) }))

const parseJson = (text: string): unknown => {
  const parsed: unknown = JSON.parse(text)
  return parsed
}

const bodyJson = (r: RawResponse): unknown => parseJson(r.body)

/** The `data` of every SSE event, parsed. */
const sseMessages = (body: string): ReadonlyArray<unknown> =>
  body.split(/\n\n/).flatMap((block) => {
    const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n")
    if (data === "") return []
    const parsed: unknown = JSON.parse(data)
    return [parsed]
  })

const header = (r: RawResponse, name: string): string | undefined => {
  const v = r.headers[name.toLowerCase()]
  return Array.isArray(v) ? v[0] : v
}

const takeProbe = (probe: Probe) => bounded(Queue.take(probe.events))

const expectProbe = (probe: Probe, event: ProbeEvent) => Effect.map(takeProbe(probe), (e) => expect(e).toBe(event))

// ---------------------------------------------------------------------------------------------
// the served fixture
// ---------------------------------------------------------------------------------------------

class Env extends Context.Tag("test/StreamableHttp/Env")<Env, {
  readonly url: string
  readonly port: number
  readonly probe: Probe
  readonly server: McpServer.McpServer
}>() {}

const EnvLive = Layer.scoped(
  Env,
  Effect.gen(function*() {
    const probe = yield* makeProbe
    const server = yield* makeServer(probe, { listChanged: true })
    const address = yield* StreamableHttp.serve(server, { port: 0 })
    return { url: address.url, port: address.port, probe, server }
  })
)

/** `initialize` + `notifications/initialized`; yields the session id. */
const openSession = (url: string) =>
  Effect.gen(function*() {
    const init = yield* post(url, rpc(1, "initialize", INIT_PARAMS), BASE)
    expect(init.status).toBe(200)
    const id = header(init, "mcp-session-id")
    assert(id !== undefined, "initialize must return Mcp-Session-Id")
    expect(get(bodyJson(init), "result", "protocolVersion")).toBe(LEGACY)
    const ack = yield* post(url, note("notifications/initialized"), legacyHeaders(id))
    expect(ack.status).toBe(202)
    return id
  })

layer(EnvLive, { excludeTestServices: true, timeout: "30 seconds" })("StreamableHttp server (raw HTTP)", (it) => {
  it.effect("serve reports a loopback URL with the bound port", () =>
    Effect.gen(function*() {
      const { port, url } = yield* Env
      expect(port).toBeGreaterThan(0)
      expect(url).toBe(`http://127.0.0.1:${port}/mcp`)
    }))

  it.effect("modern tools/call → 200 application/json", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      const r = yield* post(
        url,
        modernCall(1, "echo", { text: "hi" }),
        modernHeaders("tools/call", { "mcp-name": "echo" })
      )
      expect(r.status).toBe(200)
      expect(header(r, "content-type")).toContain("application/json")
      expect(header(r, "mcp-session-id")).toBeUndefined()
      expect(get(bodyJson(r), "result", "content", 0, "text")).toBe("echo: hi")
      expect(get(bodyJson(r), "id")).toBe(1)
    }))

  it.effect("Mcp-Method header disagreeing with the body → 400 -32020", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      const r = yield* post(url, rpc(2, "tools/list", { _meta: META }), modernHeaders("tools/call"))
      expect(r.status).toBe(400)
      expect(get(bodyJson(r), "error", "code")).toBe(-32020)
      expect(get(bodyJson(r), "id")).toBe(2)
    }))

  it.effect("unknown version in header and body → 400 -32022 with data.supported", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      const meta = { ...META, "io.modelcontextprotocol/protocolVersion": "1999-01-01" }
      const r = yield* post(
        url,
        rpc(3, "tools/list", { _meta: meta }),
        { ...BASE, "mcp-protocol-version": "1999-01-01", "mcp-method": "tools/list" }
      )
      expect(r.status).toBe(400)
      expect(get(bodyJson(r), "error", "code")).toBe(-32022)
      expect(get(bodyJson(r), "error", "data", "supported")).toContain(MODERN)
      expect(get(bodyJson(r), "error", "data", "requested")).toBe("1999-01-01")
    }))

  it.effect("initialize with modern _meta → 404 -32601", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      const r = yield* post(url, rpc(4, "initialize", { ...INIT_PARAMS, _meta: META }), modernHeaders("initialize"))
      expect(r.status).toBe(404)
      expect(get(bodyJson(r), "error", "code")).toBe(-32601)
      expect(header(r, "mcp-session-id")).toBeUndefined()
    }))

  it.effect("a bad Origin → 403 with an id-less JSON-RPC error, on POST, GET and DELETE", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      for (const method of ["POST", "GET", "DELETE"]) {
        const r = yield* bounded(raw(url, {
          method,
          headers: { ...BASE, origin: "http://attacker.example" },
          ...(method === "POST" ? { body: JSON.stringify(rpc(1, "initialize", INIT_PARAMS)) } : {})
        }))
        expect(r.status).toBe(403)
        expect(get(bodyJson(r), "error", "code")).toBe(-32600)
        expect(get(bodyJson(r), "id")).toBeUndefined()
        expect(header(r, "mcp-session-id")).toBeUndefined()
      }
      const nullOrigin = yield* post(url, rpc(1, "initialize", INIT_PARAMS), { ...BASE, origin: "null" })
      expect(nullOrigin.status).toBe(403)
    }))

  it.effect("a loopback Origin (any port) and an absent Origin are accepted", () =>
    Effect.gen(function*() {
      const { port, url } = yield* Env
      for (const origin of [`http://127.0.0.1:${port}`, "http://localhost:1234", "https://[::1]"]) {
        const r = yield* post(
          url,
          modernCall(1, "echo", { text: "o" }),
          modernHeaders("tools/call", { "mcp-name": "echo", origin })
        )
        expect(r.status).toBe(200)
      }
    }))

  it.effect("Host: evil.example.com → 4xx (DNS rebinding); loopback names pass", () =>
    Effect.gen(function*() {
      const { port, url } = yield* Env
      const evil = yield* post(url, rpc(1, "initialize", INIT_PARAMS), { ...BASE, host: "evil.example.com" })
      expect(evil.status).toBeGreaterThanOrEqual(400)
      expect(evil.status).toBeLessThan(500)
      expect(header(evil, "mcp-session-id")).toBeUndefined()
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
        const ok = yield* post(
          url,
          modernCall(1, "echo", {}),
          modernHeaders("tools/call", { "mcp-name": "echo", host })
        )
        expect(ok.status).toBe(200)
      }
    }))

  it.effect("POSTed notifications → 202 with an empty body (EC-12, EC-27)", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      const cancelled = note("notifications/cancelled", { requestId: "r-1", reason: "user" })
      const withHeader = yield* post(url, cancelled, modernHeaders("notifications/cancelled"))
      expect(withHeader.status).toBe(202)
      expect(withHeader.body).toBe("")
      expect(header(withHeader, "mcp-session-id")).toBeUndefined()
      const noMethodHeader = yield* post(url, cancelled, { ...BASE, "mcp-protocol-version": MODERN })
      expect(noMethodHeader.status).toBe(202)
      const unknown = yield* post(url, note("notifications/unknown_x"), BASE)
      expect(unknown.status).toBe(202)
      expect(unknown.body).toBe("")
      const response = yield* post(url, { jsonrpc: "2.0", id: "srv-1", result: {} }, BASE)
      expect(response.status).toBe(202)
      const disagreeing = yield* post(url, cancelled, modernHeaders("tools/call"))
      expect(disagreeing.status).toBe(400)
      expect(get(bodyJson(disagreeing), "error", "code")).toBe(-32020)
    }))

  it.effect("missing Accept → 406; Accept without application/json → 406", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      const missing = yield* post(url, modernCall(1, "echo"), { "content-type": "application/json" })
      expect(missing.status).toBe(406)
      expect(get(bodyJson(missing), "error", "code")).toBe(-32600)
      const sseOnly = yield* post(url, modernCall(1, "echo"), {
        "content-type": "application/json",
        accept: "text/event-stream"
      })
      expect(sseOnly.status).toBe(406)
      const any = yield* post(
        url,
        modernCall(1, "echo"),
        modernHeaders("tools/call", { accept: "*/*", "mcp-name": "echo" })
      )
      expect(any.status).toBe(200)
    }))

  it.effect("a wrong Content-Type → 415", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      const r = yield* post(url, modernCall(1, "echo"), {
        ...modernHeaders("tools/call"),
        "content-type": "text/plain"
      })
      expect(r.status).toBe(415)
      const charset = yield* post(
        url,
        modernCall(1, "echo"),
        modernHeaders("tools/call", { "content-type": "application/json; charset=utf-8", "mcp-name": "echo" })
      )
      expect(charset.status).toBe(200)
    }))

  it.effect("a 5 MiB body → 413", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      const big = JSON.stringify(modernCall(1, "echo", { text: "x".repeat(5 * 1024 * 1024) }))
      const r = yield* bounded(raw(url, {
        method: "POST",
        headers: {
          ...modernHeaders("tools/call", { "mcp-name": "echo" }),
          "content-length": String(Buffer.byteLength(big))
        },
        body: big
      }))
      expect(r.status).toBe(413)
      expect(get(bodyJson(r), "error", "code")).toBe(-32600)
    }))

  it.effect("a 5 MiB chunked body (no Content-Length): the client reads the 413 (issue #20); past 8 MiB it is cut off", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      const chunked = (mib: number) =>
        raw(url, {
          method: "POST",
          headers: { ...modernHeaders("tools/call", { "mcp-name": "echo" }), "transfer-encoding": "chunked" },
          body: JSON.stringify(modernCall(1, "echo", { text: "x".repeat(mib * 1024 * 1024) }))
        })
      // Over the 4 MiB limit but within twice it: the rest is read and dropped, then 413 with
      // `Connection: close`, which the client reads once its upload is done (three times over).
      for (let i = 0; i < 3; i++) {
        const r = yield* bounded(chunked(5))
        expect(r.status).toBe(413)
        expect(get(bodyJson(r), "error", "code")).toBe(-32600)
      }
      // Past twice the limit the server stops reading: a client still uploading may see the reset
      // before it reads the answer.
      const cut = yield* Effect.either(bounded(chunked(9)))
      if (cut._tag === "Right") expect(cut.right.status).toBe(413)
      else expect(cut.left.message).toMatch(/ECONNRESET|EPIPE/)
      const after = yield* post(
        url,
        modernCall(2, "echo", { text: "ok" }),
        modernHeaders("tools/call", { "mcp-name": "echo" })
      )
      expect(after.status).toBe(200)
    }))

  it.effect("malformed JSON → 400 -32700; a batch → 400 -32600; id null → 400 -32600", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      const bad = yield* bounded(raw(url, { method: "POST", headers: modernHeaders("tools/list"), body: "{bad" }))
      expect(bad.status).toBe(400)
      expect(get(bodyJson(bad), "error", "code")).toBe(-32700)
      expect(get(bodyJson(bad), "id")).toBeUndefined()
      const batch = yield* post(url, [rpc(1, "tools/list", { _meta: META })], modernHeaders("tools/list"))
      expect(batch.status).toBe(400)
      expect(get(bodyJson(batch), "error", "code")).toBe(-32600)
      const nullId = yield* post(url, { jsonrpc: "2.0", id: null, method: "ping" }, BASE)
      expect(nullId.status).toBe(400)
      expect(get(bodyJson(nullId), "error", "code")).toBe(-32600)
    }))

  it.effect("a legacy request with an unknown session id → 404; without one → 400", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      const unknown = yield* post(url, rpc(80, "tools/list"), legacyHeaders("00000000-0000-4000-8000-000000000000"))
      expect(unknown.status).toBe(404)
      expect(get(bodyJson(unknown), "error", "code")).toBe(-32600)
      for (const method of ["GET", "DELETE"]) {
        const r = yield* bounded(raw(url, {
          method,
          headers: { accept: "text/event-stream", "mcp-session-id": "00000000-0000-4000-8000-000000000000" }
        }))
        expect(r.status).toBe(404)
      }
      const missing = yield* post(url, rpc(81, "tools/list"), { ...BASE, "mcp-protocol-version": LEGACY })
      expect(missing.status).toBe(400)
    }))

  it.effect("GET and DELETE without a session → 405", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      const g = yield* bounded(raw(url, { method: "GET", headers: { accept: "text/event-stream" } }))
      expect(g.status).toBe(405)
      expect(header(g, "allow")).toContain("POST")
      const d = yield* bounded(raw(url, { method: "DELETE" }))
      expect(d.status).toBe(405)
    }))

  it.effect("legacy flow: initialize → session → tools/list → DELETE → reuse → 404", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      const id = yield* openSession(url)
      expect(id).toMatch(/^[\x21-\x7E]{32,}$/)
      const list = yield* post(url, rpc(2, "tools/list"), legacyHeaders(id))
      expect(list.status).toBe(200)
      const names = asArray(get(bodyJson(list), "result", "tools")).map((t) => get(t, "name"))
      expect(names).toEqual(["echo", "slow", "ticker", "progress"])
      expect(get(bodyJson(list), "result", "resultType")).toBeUndefined()
      const noHeader = yield* post(url, rpc(3, "tools/list"), { ...BASE, "mcp-session-id": id })
      expect(noHeader.status).toBe(200)
      const unknownMethod = yield* post(url, rpc(4, "server/discover"), legacyHeaders(id))
      expect(unknownMethod.status).toBe(200)
      expect(get(bodyJson(unknownMethod), "error", "code")).toBe(-32601)
      const del = yield* bounded(raw(url, { method: "DELETE", headers: { "mcp-session-id": id } }))
      expect(del.status).toBe(204)
      const reuse = yield* post(url, rpc(5, "tools/list"), legacyHeaders(id))
      expect(reuse.status).toBe(404)
      const delAgain = yield* bounded(raw(url, { method: "DELETE", headers: { "mcp-session-id": id } }))
      expect(delAgain.status).toBe(404)
    }))

  it.effect("legacy MCP-Protocol-Version: absent ok; unsupported or not negotiated → 400 (EC-18)", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      const id = yield* openSession(url)
      for (const version of ["1900-01-01", "not-a-version", "2025-06-18"]) {
        const r = yield* post(url, rpc(100, "tools/list"), legacyHeaders(id, { "mcp-protocol-version": version }))
        expect(r.status).toBe(400)
        expect(get(bodyJson(r), "id")).toBeUndefined()
        expect(get(bodyJson(r), "error", "data", "requested")).toBe(version)
      }
      // A modern header routes the request to the modern path (protocol.md §1.1): no _meta → -32602.
      const modern = yield* post(url, rpc(102, "tools/list"), legacyHeaders(id, { "mcp-protocol-version": MODERN }))
      expect(modern.status).toBe(400)
      expect(get(bodyJson(modern), "error", "code")).toBe(-32602)
      const ok = yield* post(url, rpc(101, "tools/list"), { ...BASE, "mcp-session-id": id })
      expect(ok.status).toBe(200)
    }))

  it.effect("legacy GET opens the session's SSE stream (priming event first)", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      const id = yield* openSession(url)
      const r = yield* bounded(rawUntil(url, {
        method: "GET",
        headers: { accept: "text/event-stream", "mcp-session-id": id, "mcp-protocol-version": LEGACY }
      }, (body) => body.includes("\n\n")))
      expect(r.status).toBe(200)
      expect(header(r, "content-type")).toContain("text/event-stream")
      expect(header(r, "x-accel-buffering")).toBe("no")
      expect(r.body.startsWith("id: 0\n")).toBe(true)
      const notSse = yield* bounded(
        raw(url, { method: "GET", headers: { accept: "application/json", "mcp-session-id": id } })
      )
      expect(notSse.status).toBe(406)
    }))

  it.effect("legacy GET stream carries list_changed with event ids; Last-Event-ID replays", () =>
    Effect.gen(function*() {
      const { server, url } = yield* Env
      const id = yield* openSession(url)
      const get1 = yield* Effect.fork(bounded(rawUntil(url, {
        method: "GET",
        headers: { accept: "text/event-stream", "mcp-session-id": id }
      }, (body) => body.includes("list_changed"))))
      // Wait for the stream to be subscribed: the priming event is written first.
      yield* Effect.sleep("100 millis")
      yield* McpServer.addTool(server, Tool.fromJsonSchema({ name: "late", handler: () => "late" }))
      const first = yield* Fiber.join(get1)
      expect(sseMessages(first.body).map((m) => get(m, "method"))).toContain("notifications/tools/list_changed")
      const eventId = /id: (\d+)\nevent: message\ndata: .*list_changed/.exec(first.body)?.[1]
      assert(eventId !== undefined)
      const replay = yield* bounded(rawUntil(url, {
        method: "GET",
        headers: { accept: "text/event-stream", "mcp-session-id": id, "last-event-id": String(Number(eventId) - 1) }
      }, (body) => body.includes("list_changed")))
      expect(replay.body).toContain(`id: ${eventId}\n`)
      yield* McpServer.removeTool(server, "late")
    }))

  it.effect("modern SSE: progress notifications precede the final response", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      const r = yield* post(
        url,
        modernCall(7, "progress", {}, { progressToken: "tok" }),
        modernHeaders("tools/call", { "mcp-name": "progress" })
      )
      expect(r.status).toBe(200)
      expect(header(r, "content-type")).toContain("text/event-stream")
      expect(header(r, "x-accel-buffering")).toBe("no")
      expect(r.body).toContain("event: message\ndata: ")
      const messages = sseMessages(r.body)
      expect(messages.map((m) => get(m, "method") ?? "response")).toEqual([
        "notifications/progress",
        "notifications/progress",
        "response"
      ])
      expect(messages.map((m) => get(m, "params", "progress"))).toEqual([1, 2, undefined])
      expect(get(messages[0], "params", "progressToken")).toBe("tok")
      expect(get(messages[2], "id")).toBe(7)
      expect(get(messages[2], "result", "content", 0, "text")).toBe("done")
    }))

  it.effect("modern SSE is not used when the client accepts only JSON", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      const r = yield* post(
        url,
        modernCall(8, "progress", {}, { progressToken: 1 }),
        modernHeaders("tools/call", { "mcp-name": "progress", accept: "application/json" })
      )
      expect(r.status).toBe(200)
      expect(header(r, "content-type")).toContain("application/json")
      expect(get(bodyJson(r), "result", "content", 0, "text")).toBe("done")
    }))

  it.effect("a client disconnect cancels a slow modern request (handler interrupted)", () =>
    Effect.gen(function*() {
      const { probe, url } = yield* Env
      const call = yield* Effect.fork(
        post(url, modernCall(9, "slow"), modernHeaders("tools/call", { "mcp-name": "slow" }))
      )
      yield* expectProbe(probe, "slow:start")
      yield* Fiber.interrupt(call)
      yield* expectProbe(probe, "slow:interrupted")
    }))

  it.effect("legacy: a disconnect does not cancel; notifications/cancelled does (→ 204)", () =>
    Effect.gen(function*() {
      const { probe, url } = yield* Env
      const id = yield* openSession(url)
      const call = yield* Effect.fork(
        post(url, rpc(10, "tools/call", { name: "slow", arguments: {} }), legacyHeaders(id))
      )
      yield* expectProbe(probe, "slow:start")
      const cancel = yield* post(
        url,
        note("notifications/cancelled", { requestId: 10, reason: "test" }),
        legacyHeaders(id)
      )
      expect(cancel.status).toBe(202)
      yield* expectProbe(probe, "slow:interrupted")
      const r = yield* Fiber.join(call)
      expect(r.status).toBe(204)
      expect(r.body).toBe("")
      // A disconnect alone leaves the legacy request running; DELETE ends it.
      const call2 = yield* Effect.fork(
        post(url, rpc(11, "tools/call", { name: "slow", arguments: {} }), legacyHeaders(id))
      )
      yield* expectProbe(probe, "slow:start")
      yield* Fiber.interrupt(call2)
      yield* Effect.sleep("100 millis")
      expect(Option.isNone(yield* Queue.poll(probe.events))).toBe(true)
      yield* bounded(raw(url, { method: "DELETE", headers: { "mcp-session-id": id } }))
      yield* expectProbe(probe, "slow:interrupted")
    }))

  it.effect("closing a modern SSE response cancels the handler", () =>
    Effect.gen(function*() {
      const { probe, url } = yield* Env
      const r = yield* bounded(rawUntil(url, {
        method: "POST",
        headers: modernHeaders("tools/call", { "mcp-name": "ticker" }),
        body: JSON.stringify(modernCall(12, "ticker", {}, { progressToken: "t" }))
      }, (body) => body.includes("notifications/progress")))
      expect(header(r, "content-type")).toContain("text/event-stream")
      yield* expectProbe(probe, "slow:start")
      yield* expectProbe(probe, "slow:interrupted")
    }))

  it.effect("subscriptions/listen: an open SSE stream (ack, then list_changed) until the client leaves", () =>
    Effect.gen(function*() {
      const { server, url } = yield* Env
      const listen = rpc(13, "subscriptions/listen", { notifications: { toolsListChanged: true }, _meta: META })
      const fiber = yield* Effect.fork(bounded(rawUntil(url, {
        method: "POST",
        headers: modernHeaders("subscriptions/listen"),
        body: JSON.stringify(listen)
      }, (body) => body.includes("tools/list_changed"))))
      // The ack arrives first; changes published after the subscription are forwarded.
      yield* Effect.retry(
        Effect.gen(function*() {
          yield* McpServer.listChanged(server, "tools")
          yield* Effect.sleep("20 millis")
          if (fiber.unsafePoll() === null) return yield* Effect.fail("not yet")
        }),
        { times: 100 }
      )
      const r = yield* Fiber.join(fiber)
      expect(header(r, "content-type")).toContain("text/event-stream")
      const methods = sseMessages(r.body).map((m) => get(m, "method"))
      expect(methods[0]).toBe("notifications/subscriptions/acknowledged")
      expect(methods).toContain("notifications/tools/list_changed")
    }))

  it.effect("other paths are not served; other methods → 405", () =>
    Effect.gen(function*() {
      const { url } = yield* Env
      const other = yield* bounded(raw(url.replace("/mcp", "/other"), { method: "POST", headers: BASE, body: "{}" }))
      expect(other.status).toBe(404)
      const put = yield* bounded(raw(url, { method: "PUT", headers: BASE, body: "{}" }))
      expect(put.status).toBe(405)
    }))
})

// ---------------------------------------------------------------------------------------------
// mounting into an app
// ---------------------------------------------------------------------------------------------

describe("StreamableHttp mounted in an app", () => {
  it.scopedLive("StreamableHttp.router combines with the app's HttpRouter", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe
      const server = yield* makeServer(probe)
      const app = HttpRouter.empty.pipe(HttpRouter.get("/health", HttpServerResponse.text("ok")))
      const mcp = yield* StreamableHttp.router(server, { path: "/api/mcp" })
      const http = yield* NodeHttpServer.make(() => NodeHttp.createServer(), { port: 0, host: "127.0.0.1" })
      yield* http.serve(yield* HttpRouter.toHttpApp(HttpRouter.concat(app, mcp)))
      const port = http.address._tag === "TcpAddress" ? http.address.port : 0
      const health = yield* bounded(raw(`http://127.0.0.1:${port}/health`, { method: "GET" }))
      expect(health.body).toBe("ok")
      const r = yield* post(
        `http://127.0.0.1:${port}/api/mcp`,
        modernCall(1, "echo", { text: "mounted" }),
        modernHeaders("tools/call", { "mcp-name": "echo" })
      )
      expect(get(bodyJson(r), "result", "content", 0, "text")).toBe("echo: mounted")
    }))

  it.scopedLive("StreamableHttp.layer registers on HttpLayerRouter", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe
      const server = yield* makeServer(probe)
      const routes = Layer.mergeAll(
        StreamableHttp.layer().pipe(Layer.provide(Layer.succeed(McpServer.McpServer, server))),
        HttpLayerRouter.add("GET", "/health", HttpServerResponse.text("ok"))
      )
      const ctx = yield* Layer.build(
        HttpLayerRouter.serve(routes, { disableListenLog: true, disableLogger: true }).pipe(
          Layer.provideMerge(NodeHttpServer.layer(() => NodeHttp.createServer(), { port: 0, host: "127.0.0.1" }))
        )
      )
      const address = Context.get(ctx, HttpServer.HttpServer).address
      const port = address._tag === "TcpAddress" ? address.port : 0
      const r = yield* post(
        `http://127.0.0.1:${port}/mcp`,
        modernCall(1, "echo", { text: "layer" }),
        modernHeaders("tools/call", { "mcp-name": "echo" })
      )
      expect(get(bodyJson(r), "result", "content", 0, "text")).toBe("echo: layer")
    }))

  it.scopedLive("SSE responses carry keep-alive comments", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe
      const server = yield* makeServer(probe)
      const { url } = yield* StreamableHttp.serve(server, { keepAlive: "50 millis" })
      const init = yield* post(url, rpc(1, "initialize", INIT_PARAMS), BASE)
      const id = header(init, "mcp-session-id")
      assert(id !== undefined)
      const r = yield* bounded(rawUntil(url, {
        method: "GET",
        headers: { accept: "text/event-stream", "mcp-session-id": id }
      }, (body) => body.includes(": ping\n\n")))
      expect(r.body).toContain(": ping\n\n")
    }))

  it.live("closing the server ends open listen streams with their result, then the connections", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe
      const server = yield* makeServer(probe, { listChanged: true })
      const scope = yield* Scope.make()
      const { url } = yield* Scope.extend(StreamableHttp.serve(server), scope)
      const listen = rpc("L", "subscriptions/listen", { notifications: { toolsListChanged: true }, _meta: META })
      const acknowledged = yield* Deferred.make<void>()
      const opened = yield* Effect.fork(bounded(rawUntil(url, {
        method: "POST",
        headers: modernHeaders("subscriptions/listen"),
        body: JSON.stringify(listen)
      }, (body) => {
        if (body.includes("acknowledged")) Deferred.unsafeDone(acknowledged, Exit.void)
        return body.includes("\"result\"")
      })))
      yield* bounded(Deferred.await(acknowledged))
      const started = Date.now()
      yield* Scope.close(scope, Exit.void)
      expect(Date.now() - started).toBeLessThan(1000)
      const r = yield* Fiber.join(opened)
      const last = sseMessages(r.body).at(-1)
      expect(get(last, "id")).toBe("L")
      expect(get(last, "result", "_meta", "io.modelcontextprotocol/subscriptionId")).toBe("L")
    }))

  it.scopedLive("a public bind address with explicit allow-lists", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe
      const server = yield* makeServer(probe)
      const { port, url } = yield* StreamableHttp.serve(server, {
        allowedHosts: ["mcp.example.com"],
        allowedOrigins: [...StreamableHttp.loopbackOrigins, "https://app.example.com"]
      })
      const ok = yield* post(
        url,
        modernCall(1, "echo"),
        modernHeaders("tools/call", {
          "mcp-name": "echo",
          host: `mcp.example.com:${port}`,
          origin: "https://app.example.com"
        })
      )
      expect(ok.status).toBe(200)
      const loopbackHost = yield* post(url, modernCall(1, "echo"), modernHeaders("tools/call", { "mcp-name": "echo" }))
      expect(loopbackHost.status).toBe(403)
      const otherOrigin = yield* post(
        url,
        modernCall(1, "echo"),
        modernHeaders("tools/call", { "mcp-name": "echo", host: "mcp.example.com", origin: "https://evil.example.com" })
      )
      expect(otherOrigin.status).toBe(403)
    }))
})

// ---------------------------------------------------------------------------------------------
// the client against our server
// ---------------------------------------------------------------------------------------------

interface Exchange {
  readonly method: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly status: number
  readonly responseHeaders: Readonly<Record<string, string>>
}

/** A `fetch` that records what went over the wire. */
const recordingFetch = (log: Array<Exchange>): typeof globalThis.fetch => async (input, init) => {
  const response = await fetch(input, init)
  const headers: Record<string, string> = {}
  new Headers(init?.headers).forEach((v, k) => {
    headers[k] = v
  })
  const responseHeaders: Record<string, string> = {}
  response.headers.forEach((v, k) => {
    responseHeaders[k] = v
  })
  const body = init?.body
  log.push({
    method: init?.method ?? "GET",
    headers,
    body: typeof body === "string" ? body : body instanceof Uint8Array ? new TextDecoder().decode(body) : "",
    status: response.status,
    responseHeaders
  })
  return response
}

const methodOf = (e: Exchange): unknown => e.body === "" ? e.method : get(parseJson(e.body), "method")

describe("StreamableHttp.client against our server", () => {
  it.scopedLive("modern: request with _meta, SSE progress to onNotification", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe
      const server = yield* makeServer(probe)
      const { url } = yield* StreamableHttp.serve(server)
      const transport = yield* StreamableHttp.client({ url })
      const echo = yield* bounded(transport.request(JsonRpc.request(1, "tools/call", {
        name: "echo",
        arguments: { text: "modern" },
        _meta: META
      })))
      expect(get(echo, "result", "content", 0, "text")).toBe("echo: modern")
      const seen: Array<JsonRpc.Notification> = []
      const progress = yield* bounded(transport.request(
        JsonRpc.request(2, "tools/call", { name: "progress", arguments: {}, _meta: { ...META, progressToken: 42 } }),
        { onNotification: (n) => Effect.sync(() => void seen.push(n)) }
      ))
      expect(get(progress, "result", "content", 0, "text")).toBe("done")
      expect(seen.map((n) => n.method)).toEqual(["notifications/progress", "notifications/progress"])
      expect(seen.map((n) => n.params?.progressToken)).toEqual([42, 42])
      const unknown = yield* bounded(
        transport.request(JsonRpc.request(3, "initialize", { ...INIT_PARAMS, _meta: META }))
      )
      expect(get(unknown, "error", "code")).toBe(-32601)
      const badVersion = yield* bounded(transport.request(JsonRpc.request(4, "tools/list", {
        _meta: { ...META, "io.modelcontextprotocol/protocolVersion": "1999-01-01" }
      })))
      expect(get(badVersion, "error", "code")).toBe(-32022)
      yield* transport.notify(JsonRpc.notification("notifications/cancelled", { requestId: 99 }))
    }))

  it.scopedLive("modern: interrupting a request aborts it (the server handler is interrupted)", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe
      const server = yield* makeServer(probe)
      const { url } = yield* StreamableHttp.serve(server)
      const transport = yield* StreamableHttp.client({ url })
      const fiber = yield* Effect.fork(
        transport.request(JsonRpc.request(1, "tools/call", { name: "slow", _meta: META }))
      )
      yield* expectProbe(probe, "slow:start")
      yield* Fiber.interrupt(fiber)
      yield* expectProbe(probe, "slow:interrupted")
    }))

  it.scopedLive("modern: a request past its timeout fails with TransportError Timeout and is aborted", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe
      const server = yield* makeServer(probe)
      const { url } = yield* StreamableHttp.serve(server)
      const transport = yield* StreamableHttp.client({ url })
      const error = yield* bounded(Effect.flip(
        transport.request(JsonRpc.request(1, "tools/call", { name: "slow", _meta: META }), { timeout: "300 millis" })
      ))
      expect(error).toMatchObject({ _tag: "TransportError", reason: "Timeout" })
      yield* expectProbe(probe, "slow:start")
      yield* expectProbe(probe, "slow:interrupted")
      const echo = yield* bounded(transport.request(
        JsonRpc.request(2, "tools/call", { name: "echo", arguments: { text: "after" }, _meta: META }),
        { timeout: WAIT }
      ))
      expect(get(echo, "result", "content", 0, "text")).toBe("echo: after")
    }))

  it.scopedLive("legacy: initialize, session reuse, 404 → re-initialize and replay once, closing the Scope → DELETE", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe
      const server = yield* makeServer(probe)
      const { url } = yield* StreamableHttp.serve(server)
      const log: Array<Exchange> = []
      const transportScope = yield* Scope.make()
      const transport = yield* Scope.extend(StreamableHttp.client({ url, fetch: recordingFetch(log) }), transportScope)
      const init = yield* bounded(transport.request(JsonRpc.request(1, "initialize", INIT_PARAMS)))
      expect(get(init, "result", "protocolVersion")).toBe(LEGACY)
      yield* bounded(transport.notify(JsonRpc.notification("notifications/initialized")))
      const sid = log[0]?.responseHeaders["mcp-session-id"]
      assert(sid !== undefined)
      const list = yield* bounded(transport.request(JsonRpc.request(2, "tools/list")))
      expect(asArray(get(list, "result", "tools")).length).toBe(4)
      expect(log[1]?.headers["mcp-session-id"]).toBe(sid)
      expect(log[2]?.headers["mcp-session-id"]).toBe(sid)
      expect(log[2]?.headers["mcp-protocol-version"]).toBe(LEGACY)
      expect(log[0]?.headers["mcp-session-id"]).toBeUndefined()
      // The server forgets the session: the next request gets 404, the client recovers.
      const del = yield* bounded(raw(url, { method: "DELETE", headers: { "mcp-session-id": sid } }))
      expect(del.status).toBe(204)
      const again = yield* bounded(transport.request(JsonRpc.request(3, "tools/list")))
      expect(asArray(get(again, "result", "tools")).length).toBe(4)
      const tail = log.slice(3)
      expect(tail.map((e) => [methodOf(e), e.status])).toEqual([
        ["tools/list", 404],
        ["initialize", 200],
        ["notifications/initialized", 202],
        ["tools/list", 200]
      ])
      const newSid = tail[1]?.responseHeaders["mcp-session-id"]
      assert(newSid !== undefined && newSid !== sid)
      expect(tail[1]?.headers["mcp-session-id"]).toBeUndefined()
      expect(tail[2]?.headers["mcp-session-id"]).toBe(newSid)
      expect(tail[3]?.headers["mcp-session-id"]).toBe(newSid)
      // Unknown methods on a live session are ordinary errors (no re-initialization).
      const discover = yield* bounded(transport.request(JsonRpc.request(4, "server/discover")))
      expect(get(discover, "error", "code")).toBe(-32601)
      expect(log.length).toBe(8)
      yield* Scope.close(transportScope, Exit.void)
      expect(log[8]?.method).toBe("DELETE")
      expect(log[8]?.headers["mcp-session-id"]).toBe(newSid)
      expect(log[8]?.status).toBe(204)
      const closed = yield* Effect.flip(transport.request(JsonRpc.request(5, "tools/list")))
      expect(closed.reason).toBe("Closed")
    }))

  it.scopedLive("legacy: interrupting a request POSTs notifications/cancelled", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe
      const server = yield* makeServer(probe)
      const { url } = yield* StreamableHttp.serve(server)
      const transport = yield* StreamableHttp.client({ url })
      yield* bounded(transport.request(JsonRpc.request(1, "initialize", INIT_PARAMS)))
      yield* bounded(transport.notify(JsonRpc.notification("notifications/initialized")))
      const fiber = yield* Effect.fork(transport.request(JsonRpc.request(2, "tools/call", { name: "slow" })))
      yield* expectProbe(probe, "slow:start")
      yield* Fiber.interrupt(fiber)
      yield* expectProbe(probe, "slow:interrupted")
    }))
})

describe("McpClient over StreamableHttp.client", () => {
  it.scopedLive("modern server: discover probe, Mcp-Param-* from the listed schemas", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe
      const server = yield* makeServer(probe)
      const { url } = yield* StreamableHttp.serve(server)
      const client = yield* bounded(McpClient.connect(yield* StreamableHttp.client({ url })))
      expect(client.info.era).toBe("modern")
      // Without the tool's schema the Region header is missing: the server refuses (-32020).
      const refused = yield* Effect.flip(bounded(client.callTool("echo", { text: "a", region: "eu" })))
      expect(refused).toMatchObject({ _tag: "McpError", code: -32020 })
      expect((yield* bounded(client.listAllTools)).length).toBe(4)
      const ok = yield* bounded(client.callTool("echo", { text: "a", region: "eu" }))
      expect(get(ok, "content", 0, "text")).toBe("echo: a")
      const read = yield* bounded(client.readResource("test://hello"))
      expect(get(read, "contents", 0, "text")).toBe("hello, world")
    }))

  it.scopedLive("legacy-only server: the probe falls back to initialize over HTTP", () =>
    Effect.gen(function*() {
      const probe = yield* makeProbe
      const server = yield* makeServer(probe, { versions: ["2025-11-25"] })
      const { url } = yield* StreamableHttp.serve(server)
      const log: Array<Exchange> = []
      const client = yield* bounded(
        McpClient.connect(yield* StreamableHttp.client({ url, fetch: recordingFetch(log) }))
      )
      expect(client.info.era).toBe("legacy")
      expect(client.info.protocolVersion).toBe(LEGACY)
      const r = yield* bounded(client.callTool("echo", { text: "legacy", region: "eu" }))
      expect(get(r, "content", 0, "text")).toBe("echo: legacy")
      const last = log[log.length - 1]
      expect(last?.headers["mcp-session-id"]).toBeDefined()
      expect(last?.headers["mcp-method"]).toBeUndefined()
    }))
})

// ---------------------------------------------------------------------------------------------
// the client against a scripted peer
// ---------------------------------------------------------------------------------------------

const jsonReply = (body: unknown, status = 200): Canned => ({
  status,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body)
})

const resultFor = (r: { readonly body: string }, result: JsonObject): Canned =>
  jsonReply({ jsonrpc: "2.0", id: get(parseJson(r.body), "id"), result })

describe("StreamableHttp.client against a scripted peer", () => {
  it.scopedLive("modern headers: MCP-Protocol-Version, Mcp-Method, base64 Mcp-Name, Mcp-Param-*", () =>
    Effect.gen(function*() {
      const peer = yield* recorder((r) => resultFor(r, { content: [] }))
      const schema: JsonObject = {
        type: "object",
        properties: {
          region: { type: "string", "x-mcp-header": "Region" },
          count: { type: "integer", "x-mcp-header": "Count" },
          flag: { type: "boolean", "x-mcp-header": "Flag" },
          ratio: { type: "number", "x-mcp-header": "Ratio" },
          absent: { type: "string", "x-mcp-header": "Absent" }
        }
      }
      const transport = yield* StreamableHttp.client({
        url: peer.url,
        headers: { authorization: "Bearer t0k" },
        headerParamsFor: (name) => name === "Hello, 世界" ? schema : undefined
      })
      yield* bounded(transport.request(JsonRpc.request(1, "tools/call", {
        name: "Hello, 世界",
        arguments: { region: "eu-west", count: 42, flag: true, ratio: 0.5, absent: null },
        _meta: META
      })))
      yield* bounded(transport.request(JsonRpc.request(2, "resources/read", { uri: "test://plain", _meta: META })))
      yield* bounded(transport.notify(JsonRpc.notification("notifications/cancelled", { requestId: 1 })))
      const [call, read, cancelled] = yield* peer.requests
      assert(call !== undefined && read !== undefined && cancelled !== undefined)
      expect(call.headers["content-type"]).toBe("application/json")
      expect(call.headers["accept"]).toBe("application/json, text/event-stream")
      expect(call.headers["authorization"]).toBe("Bearer t0k")
      expect(call.headers["mcp-protocol-version"]).toBe(MODERN)
      expect(call.headers["mcp-method"]).toBe("tools/call")
      expect(call.headers["mcp-name"]).toBe("=?base64?SGVsbG8sIOS4lueVjA==?=")
      expect(call.headers["mcp-param-region"]).toBe("eu-west")
      expect(call.headers["mcp-param-count"]).toBe("42")
      expect(call.headers["mcp-param-flag"]).toBe("true")
      expect(call.headers["mcp-param-ratio"]).toBeUndefined()
      expect(call.headers["mcp-param-absent"]).toBeUndefined()
      expect(call.headers["mcp-session-id"]).toBeUndefined()
      expect(read.headers["mcp-name"]).toBe("test://plain")
      expect(read.headers["mcp-method"]).toBe("resources/read")
      expect(cancelled.headers["mcp-protocol-version"]).toBe(MODERN)
      expect(cancelled.headers["mcp-method"]).toBe("notifications/cancelled")
    }))

  it.scopedLive("Mcp-Param-* from the schemas of a tools/list that passed through", () =>
    Effect.gen(function*() {
      const peer = yield* recorder((r, i) =>
        i === 0
          ? resultFor(r, {
            tools: [{
              name: "echo",
              inputSchema: { type: "object", properties: { region: { type: "string", "x-mcp-header": "Region" } } }
            }]
          })
          : resultFor(r, { content: [] })
      )
      const transport = yield* StreamableHttp.client({ url: peer.url })
      yield* bounded(transport.request(JsonRpc.request(1, "tools/list", { _meta: META })))
      yield* bounded(transport.request(JsonRpc.request(2, "tools/call", {
        name: "echo",
        arguments: { region: " padded " },
        _meta: META
      })))
      const requests = yield* peer.requests
      expect(requests[1]?.headers["mcp-param-region"]).toBe("=?base64?IHBhZGRlZCA=?=")
    }))

  it.scopedLive("legacy headers after initialize; a stateless legacy server (no session id) works", () =>
    Effect.gen(function*() {
      const peer = yield* recorder((r, i) =>
        i === 0
          ? {
            ...resultFor(r, {
              protocolVersion: "2025-06-18",
              capabilities: {},
              serverInfo: { name: "p", version: "1" }
            })
          }
          : resultFor(r, { tools: [] })
      )
      const transport = yield* StreamableHttp.client({ url: peer.url })
      yield* bounded(transport.request(JsonRpc.request(1, "initialize", INIT_PARAMS)))
      yield* bounded(transport.request(JsonRpc.request(2, "tools/list")))
      const [init, list] = yield* peer.requests
      expect(init?.headers["mcp-protocol-version"]).toBeUndefined()
      expect(list?.headers["mcp-protocol-version"]).toBe("2025-06-18")
      expect(list?.headers["mcp-session-id"]).toBeUndefined()
      expect(list?.headers["mcp-method"]).toBeUndefined()
    }))

  it.scopedLive("SSE: notifications delivered, foreign ids and server requests skipped, response ends it", () =>
    Effect.gen(function*() {
      const sse = [
        "id: 1\ndata: \n\n",
        ": comment\n\n",
        `event: message\ndata: ${JSON.stringify(note("notifications/message", { level: "info", data: "hi" }))}\n\n`,
        `data: ${JSON.stringify(rpc("srv-1", "sampling/createMessage", {}))}\n\n`,
        `data: ${JSON.stringify({ jsonrpc: "2.0", id: 999, result: {} })}\n\n`,
        `data: ${JSON.stringify({ jsonrpc: "2.0", id: 1, result: { ok: true } })}\n\n`,
        `data: ${JSON.stringify(note("notifications/message", { level: "info", data: "late" }))}\n\n`
      ].join("")
      const peer = yield* recorder(() => ({ status: 200, headers: { "content-type": "text/event-stream" }, body: sse }))
      const transport = yield* StreamableHttp.client({ url: peer.url })
      const seen: Array<unknown> = []
      const r = yield* bounded(transport.request(
        JsonRpc.request(1, "tools/list", { _meta: META }),
        { onNotification: (n) => Effect.sync(() => void seen.push(n.params?.data)) }
      ))
      expect(get(r, "result", "ok")).toBe(true)
      expect(seen).toEqual(["hi"])
    }))

  it.scopedLive("SSE: a stream that ends without the response → TransportError Protocol; oversize event → Protocol", () =>
    Effect.gen(function*() {
      const peer = yield* recorder((_r, i) => ({
        status: 200,
        headers: { "content-type": "text/event-stream" },
        body: i === 0 ? `data: ${JSON.stringify(note("notifications/progress"))}\n\n` : `data: ${"x".repeat(5000)}\n\n`
      }))
      const transport = yield* StreamableHttp.client({ url: peer.url, maxMessageBytes: 1000 })
      const e1 = yield* Effect.flip(bounded(transport.request(JsonRpc.request(1, "tools/list", { _meta: META }))))
      expect(e1).toMatchObject({ _tag: "TransportError", reason: "Protocol" })
      const e2 = yield* Effect.flip(bounded(transport.request(JsonRpc.request(2, "tools/list", { _meta: META }))))
      expect(e2).toMatchObject({ _tag: "TransportError", reason: "Protocol" })
      expect(e2.message).toContain("larger than 1000")
    }))

  it.scopedLive("notifications: 200 empty, 204, 202 text, 200 id:null all count as accepted (EC-14)", () =>
    Effect.gen(function*() {
      const answers: ReadonlyArray<Canned> = [
        { status: 200 },
        { status: 204 },
        { status: 202, headers: { "content-type": "text/plain" }, body: "Accepted" },
        jsonReply({ jsonrpc: "2.0", id: null }),
        jsonReply({ jsonrpc: "2.0", error: { code: -32600, message: "no" } }, 400)
      ]
      const peer = yield* recorder((_r, i) => answers[i] ?? { status: 202 })
      const transport = yield* StreamableHttp.client({ url: peer.url })
      for (let i = 0; i < answers.length; i++) {
        yield* bounded(transport.notify(JsonRpc.notification("notifications/initialized")))
      }
      expect((yield* peer.requests).length).toBe(answers.length)
    }))

  it.scopedLive("error bodies: id null / absent are this request's answer; other failures are TransportError (EC-28)", () =>
    Effect.gen(function*() {
      const answers: ReadonlyArray<Canned> = [
        jsonReply({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Bad Request" } }, 400),
        jsonReply({ jsonrpc: "2.0", error: { code: -32600, message: "Bad Request" } }, 400),
        jsonReply({ jsonrpc: "2.0", id: 3, error: { code: -32601, message: "Method not found" } }, 404),
        { status: 500, headers: { "content-type": "text/plain" }, body: "boom" },
        { status: 200 },
        jsonReply({ jsonrpc: "2.0", id: 777, result: {} })
      ]
      const peer = yield* recorder((_r, i) => answers[i] ?? { status: 500 })
      const transport = yield* StreamableHttp.client({ url: peer.url })
      const a = yield* bounded(transport.request(JsonRpc.request(1, "server/discover", { _meta: META })))
      expect(a).toEqual({ jsonrpc: "2.0", id: 1, error: { code: -32600, message: "Bad Request" } })
      const b = yield* bounded(transport.request(JsonRpc.request(2, "server/discover", { _meta: META })))
      expect(b).toEqual({ jsonrpc: "2.0", id: 2, error: { code: -32600, message: "Bad Request" } })
      const c = yield* bounded(transport.request(JsonRpc.request(3, "server/discover", { _meta: META })))
      expect(get(c, "error", "code")).toBe(-32601)
      const d = yield* Effect.flip(bounded(transport.request(JsonRpc.request(4, "x", { _meta: META }))))
      expect(d).toMatchObject({ _tag: "TransportError", reason: "Http", status: 500 })
      const e = yield* Effect.flip(bounded(transport.request(JsonRpc.request(5, "x", { _meta: META }))))
      expect(e).toMatchObject({ _tag: "TransportError", reason: "Protocol" })
      const f = yield* Effect.flip(bounded(transport.request(JsonRpc.request(6, "x", { _meta: META }))))
      expect(f).toMatchObject({ _tag: "TransportError", reason: "Protocol" })
    }))

  it.scopedLive("legacy 404 with a foreign-id error body → re-initialize (EC-28 + EC-15); second 404 → TransportError", () =>
    Effect.gen(function*() {
      const initResult = { protocolVersion: LEGACY, capabilities: {}, serverInfo: { name: "p", version: "1" } }
      const gone = jsonReply({
        jsonrpc: "2.0",
        id: "server-error",
        error: { code: -32001, message: "Session not found" }
      }, 404)
      const answers = (
        r: { readonly body: string; readonly headers: NodeHttp.IncomingHttpHeaders },
        i: number
      ): Canned => {
        switch (i) {
          case 0:
            return {
              ...resultFor(r, initResult),
              headers: { "content-type": "application/json", "mcp-session-id": "s-1" }
            }
          case 1:
            return gone
          case 2:
            return {
              ...resultFor(r, initResult),
              headers: { "content-type": "application/json", "mcp-session-id": "s-2" }
            }
          case 3:
            return { status: 202 }
          case 4:
            return resultFor(r, { tools: [] })
          default:
            return gone
        }
      }
      const peer = yield* recorder(answers)
      const transport = yield* StreamableHttp.client({ url: peer.url })
      yield* bounded(transport.request(JsonRpc.request(1, "initialize", INIT_PARAMS)))
      const list = yield* bounded(transport.request(JsonRpc.request(2, "tools/list")))
      expect(get(list, "result", "tools")).toEqual([])
      const requests = yield* peer.requests
      expect(requests.map((r) => [get(parseJson(r.body), "method"), r.headers["mcp-session-id"]])).toEqual([
        ["initialize", undefined],
        ["tools/list", "s-1"],
        ["initialize", undefined],
        ["notifications/initialized", "s-2"],
        ["tools/list", "s-2"]
      ])
      // Every later request 404s, and so does the replay after re-initialization: a typed failure.
      const failure = yield* Effect.flip(bounded(transport.request(JsonRpc.request(3, "tools/list"))))
      expect(failure).toMatchObject({ _tag: "TransportError", reason: "Http", status: 404 })
    }))
})

// ---------------------------------------------------------------------------------------------
// the session store (TestClock)
// ---------------------------------------------------------------------------------------------

// `layer(...)` above reassigns the shared `it.effect`/`it.scoped` (without test services), so these
// tests provide TestContext themselves.
describe("legacy session store", () => {
  it.scopedLive("standalone stream: ids, bounded replay after Last-Event-ID, takeover ends the old stream", () =>
    Effect.gen(function*() {
      const store = yield* Sessions.makeStore({
        maxSessions: 2,
        idleTimeout: Duration.infinity,
        replayBufferSize: 2,
        server: Service.internal(yield* McpServer.make({ name: "store", version: "1.0.0" })),
        connection: {}
      })
      const core = yield* McpServer.makeSession
      const session = Option.getOrThrow(yield* store.create(core))
      for (const m of ["a", "b", "c"]) yield* store.publish(session, JsonRpc.notification(m))
      const replayed = yield* store.stream(session, 0).pipe(Stream.take(3), Stream.runCollect)
      expect(Array.from(replayed)).toEqual([
        { _tag: "Event", event: { id: 2, message: JsonRpc.notification("b") } },
        { _tag: "Event", event: { id: 3, message: JsonRpc.notification("c") } },
        { _tag: "Priming", id: 3 }
      ])
      const first = yield* store.stream(session, undefined).pipe(Stream.runCollect, Effect.fork)
      yield* Effect.yieldNow()
      const second = yield* store.stream(session, undefined).pipe(Stream.take(2), Stream.runCollect, Effect.fork)
      const ended = yield* Fiber.join(first)
      expect(Array.from(ended)).toEqual([{ _tag: "Priming", id: 3 }])
      yield* store.publish(session, JsonRpc.notification("d"))
      expect(Array.from(yield* Fiber.join(second))).toEqual([
        { _tag: "Priming", id: 3 },
        { _tag: "Event", event: { id: 4, message: JsonRpc.notification("d") } }
      ])
      // At maxSessions with every session busy (a GET stream open on each), a new one is refused.
      const other = Option.getOrThrow(yield* store.create(core))
      const held = yield* Effect.forEach(
        [session, other],
        (s) => store.stream(s, undefined).pipe(Stream.runDrain, Effect.fork)
      )
      // Wait (bounded) until both streams are open.
      for (let i = 0; i < 100; i++) {
        const open = yield* Effect.forEach([session, other], (s) => Ref.get(s.openStreams))
        if (open.every((n) => n > 0)) break
        yield* Effect.yieldNow()
      }
      expect(Option.isNone(yield* store.create(core))).toBe(true)
      yield* Effect.forEach(held, Fiber.interrupt)
    }).pipe(Effect.provide(TestContext.TestContext)))

  it.scopedLive("at maxSessions the least recently active idle session makes room (issue #20)", () =>
    Effect.gen(function*() {
      const store = yield* Sessions.makeStore({
        maxSessions: 3,
        idleTimeout: Duration.infinity,
        replayBufferSize: 10,
        server: Service.internal(yield* McpServer.make({ name: "store", version: "1.0.0" })),
        connection: {}
      })
      const make = Effect.flatMap(McpServer.makeSession, (core) => Effect.map(store.create(core), Option.getOrThrow))
      const oldest = yield* make
      yield* TestClock.adjust("1 second")
      const busy = yield* make
      yield* TestClock.adjust("1 second")
      const recent = yield* make
      yield* TestClock.adjust("1 second")
      // `busy` is the least recently created but holds a GET stream; `oldest` is touched last.
      const stream = yield* store.stream(busy, undefined).pipe(Stream.runDrain, Effect.fork)
      yield* Effect.yieldNow()
      yield* TestClock.adjust("1 second")
      expect(Option.isSome(yield* store.get(oldest.id))).toBe(true)
      // Now `recent` (active at 2 s) is the least recently active idle session.
      const fourth = yield* make
      expect(Option.isNone(yield* store.get(recent.id))).toBe(true)
      expect(Option.isSome(yield* store.get(oldest.id))).toBe(true)
      expect(Option.isSome(yield* store.get(busy.id))).toBe(true)
      expect(Option.isSome(yield* store.get(fourth.id))).toBe(true)
      expect((yield* store.all).length).toBe(3)
      yield* Fiber.interrupt(stream)
    }).pipe(Effect.provide(TestContext.TestContext)))

  it.scopedLive("a session without notifications/initialized is closed after initializeTimeout (issue #20)", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "store", version: "1.0.0" })
      const store = yield* Sessions.makeStore({
        maxSessions: 10,
        idleTimeout: Duration.infinity,
        initializeTimeout: Duration.seconds(30),
        replayBufferSize: 10,
        server: Service.internal(server),
        connection: {}
      })
      const handshake = (completed: boolean) =>
        Effect.gen(function*() {
          const core = yield* McpServer.makeSession
          yield* McpServer.dispatch(
            server,
            JsonRpc.request(1, "initialize", {
              protocolVersion: "2025-11-25",
              capabilities: {},
              clientInfo: { name: "c", version: "1" }
            }),
            { session: core }
          )
          if (completed) {
            yield* McpServer.dispatch(server, JsonRpc.notification("notifications/initialized"), { session: core })
          }
          return Option.getOrThrow(yield* store.create(core))
        })
      const stalled = yield* handshake(false)
      const done = yield* handshake(true)
      yield* TestClock.adjust("29 seconds")
      expect(Option.isSome(yield* store.get(stalled.id))).toBe(true)
      yield* TestClock.adjust("2 seconds")
      expect(Option.isNone(yield* store.get(stalled.id))).toBe(true)
      expect(Option.isSome(yield* store.get(done.id))).toBe(true)
    }).pipe(Effect.provide(TestContext.TestContext)))

  it.scopedLive("idle sessions are closed after the timeout (not while a stream is open)", () =>
    Effect.gen(function*() {
      const store = yield* Sessions.makeStore({
        maxSessions: 10,
        idleTimeout: Duration.minutes(30),
        replayBufferSize: 10,
        server: Service.internal(yield* McpServer.make({ name: "store", version: "1.0.0" })),
        connection: {}
      })
      const idle = Option.getOrThrow(yield* store.create(yield* McpServer.makeSession))
      const streaming = Option.getOrThrow(yield* store.create(yield* McpServer.makeSession))
      const stream = yield* store.stream(streaming, undefined).pipe(Stream.runDrain, Effect.fork)
      yield* Effect.yieldNow()
      yield* TestClock.adjust("29 minutes")
      expect(Option.isSome(yield* store.get(idle.id))).toBe(true)
      yield* TestClock.adjust("31 minutes")
      expect(Option.isNone(yield* store.get(idle.id))).toBe(true)
      expect(Option.isSome(yield* store.get(streaming.id))).toBe(true)
      expect(yield* store.close(streaming.id)).toBe(true)
      yield* Fiber.join(stream)
      expect(yield* store.close(streaming.id)).toBe(false)
    }).pipe(Effect.provide(TestContext.TestContext)))
})
