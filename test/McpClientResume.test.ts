/**
 * Resumable SSE streams in the Streamable HTTP client (MCP 2025-11-25, Transports › Streamable
 * HTTP › Resumability and Redelivery; SEP-1699 polling), over HTTP on 127.0.0.1 port 0:
 *
 * - against a raw `node:http` server this file controls (streams cut at exact points, `retry:`
 *   sent, GET refused): a POST stream that ends before its response is resumed with a GET carrying
 *   `Last-Event-ID`, the response arrives there once and a replayed notification is not delivered
 *   twice; the server's `retry` is the delay chosen (asserted on the transport's debug log, and
 *   the GET's arrival checked against a lower bound only, which load cannot break); `405`, `404`
 *   and tries used up fail the request with `TransportError` `"Resume"` after a counted number of
 *   GETs; a stream without event ids is not resumed;
 * - against our own server (legacy session, 2025-11-25): the standalone GET stream cut by a TCP
 *   proxy is resumed, and the notifications sent while it was down arrive once, in order, with
 *   no "everything may have changed" gap;
 * - against the official SDK v2 server (`NodeStreamableHTTPServerTransport` with an event store
 *   and `retryInterval`): a tool that closes its POST stream (`closeSSE`) before answering; our
 *   client resumes with one GET and gets the result.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { NodeStreamableHTTPServerTransport } from "@modelcontextprotocol/node"
import { type EventStore, type JSONRPCMessage, McpServer as SdkServer } from "@modelcontextprotocol/server"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Http from "node:http"
import type * as Net from "node:net"
import { JsonRpc, McpClient, McpServer, Resource, Transport } from "presa-mcp"
import * as z from "zod"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import { listenLoopback } from "./support/Listen.js"
import * as TcpProxy from "./support/TcpProxy.js"

const WAIT: Duration.DurationInput = "10 seconds"
const QUIET: Duration.DurationInput = "200 millis"
const SESSION = "resume-session-1"

const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | Error, R> =>
  Effect.timeoutFail(effect, { duration: WAIT, onTimeout: () => new Error(`timed out after ${Duration.format(WAIT)}`) })

// ---------------------------------------------------------------------------------------------
// a raw server whose SSE streams this file writes byte by byte
// ---------------------------------------------------------------------------------------------

interface Seen {
  readonly method: string
  readonly lastEventId: string | undefined
  readonly sessionId: string | undefined
  /** `performance.now()` when the request arrived. */
  readonly at: number
}

interface Raw {
  readonly url: string
  readonly seen: Array<Seen>
  /** `performance.now()` when the tools/call POST stream was ended by the server. */
  readonly closedAt: { value: number | undefined }
  /** GET responses whose connection the client closed (or that ended). */
  readonly getsClosed: { value: number }
}

/** What the raw server does with the tools/call POST and with each GET. */
interface Script {
  /** The tools/call stream's events (raw SSE text) before the server ends it. */
  readonly post: (id: JsonRpc.RequestId) => string
  /** The answer to the `n`th GET (0-based): a status, or SSE text (the stream stays open unless `end`). */
  readonly get: (
    n: number,
    lastEventId: string | undefined,
    id: JsonRpc.RequestId
  ) => { readonly status: number } | { readonly sse: string; readonly end?: boolean }
}

const sse = (id: string | undefined, data: unknown, retry?: number): string =>
  `${id === undefined ? "" : `id: ${id}\n`}${retry === undefined ? "" : `retry: ${retry}\n`}data: ${
    data === "" ? "" : JSON.stringify(data)
  }\n\n`

const readBody = (req: Http.IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    let body = ""
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8")
    })
    req.on("end", () => resolve(body))
  })

const rawServer = (script: Script): Effect.Effect<Raw, never, Scope.Scope> =>
  Effect.gen(function*() {
    const seen: Array<Seen> = []
    const closedAt: { value: number | undefined } = { value: undefined }
    const getsClosed = { value: 0 }
    const sockets = new Set<Net.Socket>()
    let callId: JsonRpc.RequestId = 0
    let gets = 0
    const header = (req: Http.IncomingMessage, name: string): string | undefined => {
      const v = req.headers[name]
      return typeof v === "string" ? v : undefined
    }
    const server = Http.createServer((req, res) => {
      const at = performance.now()
      if (req.method === "GET") {
        seen.push({
          method: "GET",
          lastEventId: header(req, "last-event-id"),
          sessionId: header(req, "mcp-session-id"),
          at
        })
        const answer = script.get(gets++, header(req, "last-event-id"), callId)
        if ("status" in answer) {
          res.writeHead(answer.status).end()
          return
        }
        res.on("close", () => {
          getsClosed.value++
        })
        res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": SESSION })
        res.write(answer.sse)
        if (answer.end === true) res.end()
        return
      }
      if (req.method === "DELETE") {
        res.writeHead(200).end()
        return
      }
      void readBody(req).then((body) => {
        const parsed: unknown = JSON.parse(body)
        const message = typeof parsed === "object" && parsed !== null ? parsed : {}
        const method = "method" in message && typeof message.method === "string" ? message.method : ""
        const id = "id" in message && (typeof message.id === "number" || typeof message.id === "string")
          ? message.id
          : undefined
        seen.push({ method, lastEventId: undefined, sessionId: header(req, "mcp-session-id"), at })
        if (id === undefined) {
          res.writeHead(202).end()
          return
        }
        if (method === "initialize") {
          res.writeHead(200, { "content-type": "application/json", "mcp-session-id": SESSION })
          res.end(JSON.stringify({
            jsonrpc: "2.0",
            id,
            result: {
              protocolVersion: "2025-11-25",
              capabilities: { tools: {} },
              serverInfo: { name: "raw", version: "1.0.0" }
            }
          }))
          return
        }
        callId = id
        res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": SESSION })
        res.write(script.post(id))
        // a graceful end of the connection before the response
        setTimeout(() => {
          closedAt.value = performance.now()
          res.end()
        }, 20)
      })
    })
    server.on("connection", (socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    })
    const port = yield* listenLoopback(server, sockets)
    return { url: `http://127.0.0.1:${port}/mcp`, seen, closedAt, getsClosed }
  })

/** Debug log lines of the transport (which delay it chose, which try). */
const capturingLogs = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ message }) => {
    lines.push(Array.isArray(message) ? message.map(String).join(" ") : String(message))
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

/** A transport with a legacy session open (initialize + initialized, no input capabilities: no standing GET). */
const legacySession = (url: string, resumption: StreamableHttp.ClientOptions["resumption"]) =>
  Effect.gen(function*() {
    const transport = yield* StreamableHttp.client({ url, resumption })
    yield* bounded(transport.request(JsonRpc.request(0, "initialize", {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "resume-test", version: "1.0.0" }
    })))
    yield* transport.notify(JsonRpc.notification("notifications/initialized"))
    return transport
  })

const progress = (n: number) => ({
  jsonrpc: "2.0",
  method: "notifications/progress",
  params: { progressToken: "t", progress: n }
})
const result = (id: JsonRpc.RequestId) => ({
  jsonrpc: "2.0",
  id,
  result: { content: [{ type: "text", text: "done" }] }
})

const call = (transport: Transport.ClientTransport, notes: Array<JsonRpc.Notification>) =>
  transport.request(
    JsonRpc.request(1, "tools/call", { name: "slow", arguments: {}, _meta: { progressToken: "t" } }),
    { onNotification: (n) => Effect.sync(() => notes.push(n)) }
  )

const gets = (raw: Raw) => raw.seen.filter((s) => s.method === "GET")

describe("Streamable HTTP client: resuming a request's SSE stream (raw server)", () => {
  it.scopedLive("a POST stream ended before its response is resumed with GET + Last-Event-ID after the server's retry; the result and each notification arrive once", () => {
    const logs = capturingLogs()
    return Effect.gen(function*() {
      const raw = yield* rawServer({
        post: () => sse("p-1", "", 300) + sse("p-2", progress(1)),
        // the server replays p-2 (already delivered) before the new events: dropped by id
        get: (_n, _last, id) => ({ sse: sse("p-2", progress(1)) + sse("p-3", progress(2)) + sse("p-4", result(id)) })
      })
      const transport = yield* legacySession(raw.url, { initialDelay: "5 millis" })
      const notes: Array<JsonRpc.Notification> = []
      const response = yield* bounded(call(transport, notes))
      assert(!JsonRpc.isErrorResponse(response))
      expect(response.id).toBe(1)
      expect(response.result).toEqual({ content: [{ type: "text", text: "done" }] })
      expect(notes.map((n) => n.params?.progress)).toEqual([1, 2])
      const [get] = gets(raw)
      expect(gets(raw)).toHaveLength(1)
      expect(get?.lastEventId).toBe("p-2")
      expect(get?.sessionId).toBe(SESSION)
      // the server's retry (300 ms), not the option's 5 ms: the chosen delay, and a lower bound on the GET
      expect(logs.lines.filter((l) => l.includes("resuming the SSE stream of tools/call in"))).toEqual([
        "Streamable HTTP: resuming the SSE stream of tools/call in 300 ms (Last-Event-ID p-2, try 1 of 5)"
      ])
      const closedAt = raw.closedAt.value ?? Number.POSITIVE_INFINITY
      expect((get?.at ?? 0) - closedAt).toBeGreaterThanOrEqual(250)
      // the resumed GET, left open by the server, is closed by the client once the response is in
      yield* bounded(Effect.repeat(Effect.sleep("5 millis"), { until: () => raw.getsClosed.value === 1 }))
    }).pipe(Effect.provide(logs.layer), Logger.withMinimumLogLevel(LogLevel.Debug))
  })

  it.scopedLive("without a retry field the option's backoff is used: tries double from initialDelay while the GET fails", () => {
    const logs = capturingLogs()
    return Effect.gen(function*() {
      const raw = yield* rawServer({
        post: () => sse("p-1", ""),
        get: (n, _last, id) => n < 2 ? { status: 503 } : { sse: sse("p-2", result(id)) }
      })
      const transport = yield* legacySession(raw.url, { initialDelay: "10 millis", maxDelay: "15 millis" })
      const response = yield* bounded(call(transport, []))
      assert(!JsonRpc.isErrorResponse(response))
      expect(gets(raw).map((g) => g.lastEventId)).toEqual(["p-1", "p-1", "p-1"])
      expect(logs.lines.filter((l) => l.includes("resuming the SSE stream of tools/call in"))).toEqual([
        "Streamable HTTP: resuming the SSE stream of tools/call in 10 ms (Last-Event-ID p-1, try 1 of 5)",
        "Streamable HTTP: resuming the SSE stream of tools/call in 15 ms (Last-Event-ID p-1, try 2 of 5)",
        "Streamable HTTP: resuming the SSE stream of tools/call in 15 ms (Last-Event-ID p-1, try 3 of 5)"
      ])
    }).pipe(Effect.provide(logs.layer), Logger.withMinimumLogLevel(LogLevel.Debug))
  })

  it.scopedLive("a server without GET streams (405) fails the request with TransportError Resume after one GET", () =>
    Effect.gen(function*() {
      const raw = yield* rawServer({ post: () => sse("p-1", "", 1), get: () => ({ status: 405 }) })
      const transport = yield* legacySession(raw.url, {})
      const exit = yield* bounded(Effect.exit(call(transport, [])))
      assert(Exit.isFailure(exit))
      const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
      assert(error instanceof Transport.TransportError)
      expect(error.reason).toBe("Resume")
      expect(error.status).toBe(405)
      expect(gets(raw)).toHaveLength(1)
    }))

  it.scopedLive("a session gone (404 on the GET) fails the request with TransportError Resume, status 404", () =>
    Effect.gen(function*() {
      const raw = yield* rawServer({ post: () => sse("p-1", "", 1), get: () => ({ status: 404 }) })
      const transport = yield* legacySession(raw.url, {})
      const exit = yield* bounded(Effect.exit(call(transport, [])))
      assert(Exit.isFailure(exit))
      const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
      assert(error instanceof Transport.TransportError)
      expect(error.reason).toBe("Resume")
      expect(error.status).toBe(404)
      expect(gets(raw)).toHaveLength(1)
    }))

  it.scopedLive("GETs that keep failing, or streams that keep ending with nothing new, stop after maxAttempts tries", () =>
    Effect.gen(function*() {
      const failing = yield* rawServer({ post: () => sse("p-1", "", 1), get: () => ({ status: 503 }) })
      const t1 = yield* legacySession(failing.url, { maxAttempts: 3 })
      const e1 = yield* bounded(Effect.flip(call(t1, [])))
      assert(e1 instanceof Transport.TransportError)
      expect(e1.reason).toBe("Resume")
      expect(e1.message).toContain("after 3 tries")
      expect(gets(failing)).toHaveLength(3)
      // each GET opens and ends at once without a new event: each counts as a try
      const empty = yield* rawServer({
        post: () => sse("p-1", "", 1),
        get: () => ({ sse: ": nothing\n\n", end: true })
      })
      const t2 = yield* legacySession(empty.url, { maxAttempts: 3 })
      const e2 = yield* bounded(Effect.flip(call(t2, [])))
      assert(e2 instanceof Transport.TransportError)
      expect(e2.reason).toBe("Resume")
      expect(gets(empty)).toHaveLength(3)
      expect(gets(empty).map((g) => g.lastEventId)).toEqual(["p-1", "p-1", "p-1"])
    }))

  it.scopedLive("a stream without event ids, or resumption turned off, is not resumed: the early end fails the request (Protocol)", () =>
    Effect.gen(function*() {
      const noIds = yield* rawServer({ post: () => sse(undefined, progress(1)), get: () => ({ status: 500 }) })
      const t1 = yield* legacySession(noIds.url, {})
      const e1 = yield* bounded(Effect.flip(call(t1, [])))
      assert(e1 instanceof Transport.TransportError)
      expect(e1.reason).toBe("Protocol")
      const off = yield* rawServer({ post: () => sse("p-1", "", 1), get: () => ({ status: 500 }) })
      const t2 = yield* legacySession(off.url, { maxAttempts: 0 })
      const e2 = yield* bounded(Effect.flip(call(t2, [])))
      assert(e2 instanceof Transport.TransportError)
      expect(e2.reason).toBe("Protocol")
      yield* Effect.sleep(QUIET)
      expect(gets(noIds)).toHaveLength(0)
      expect(gets(off)).toHaveLength(0)
    }))
})

describe("Streamable HTTP client: resuming the standalone GET stream (our server, legacy session)", () => {
  it.scopedLive("the GET stream cut by a proxy is resumed with Last-Event-ID: notifications sent meanwhile arrive once, in order, no gap reported", () =>
    Effect.gen(function*() {
      const uris = ["mem://a", "mem://b", "mem://c"]
      const server = yield* McpServer.make({
        name: "resume-test",
        version: "1.0.0",
        subscribe: true,
        resources: uris.map((uri) => Resource.make({ uri, name: uri, handler: () => uri }))
      })
      const { port, url } = yield* StreamableHttp.serve(server)
      const proxy = yield* TcpProxy.make(port)
      const via = url.replace(`:${port}/`, `:${proxy.port}/`)
      const transport = yield* StreamableHttp.client({ url: via, resumption: { initialDelay: "100 millis" } })
      const client = yield* bounded(McpClient.connect(transport, { versions: ["2025-11-25"] }))
      assert.strictEqual(client.info.era, "legacy")
      const sub = yield* bounded(client.listen({ resourceSubscriptions: uris }))
      const got: Array<JsonRpc.Notification> = []
      const fiber = yield* Effect.fork(Stream.runForEach(sub.notifications, (n) => Effect.sync(() => got.push(n))))
      const arrived = (n: number) => bounded(Effect.repeat(Effect.sleep("5 millis"), { until: () => got.length >= n }))
      yield* McpServer.resourceUpdated(server, "mem://a")
      yield* arrived(1)
      yield* proxy.cut
      yield* McpServer.resourceUpdated(server, "mem://b")
      yield* McpServer.resourceUpdated(server, "mem://c")
      yield* arrived(3)
      yield* McpServer.resourceUpdated(server, "mem://a")
      yield* arrived(4)
      yield* Effect.sleep(QUIET)
      expect(got.map((n) => n.params?.uri)).toEqual(["mem://a", "mem://b", "mem://c", "mem://a"])
      expect(got.every((n) => n.method === "notifications/resources/updated")).toBe(true)
      expect(got.some((n) => JSON.stringify(n.params?._meta ?? {}).includes("resubscribed"))).toBe(false)
      yield* Fiber.interrupt(fiber)
    }))
})

describe("Streamable HTTP client: resuming a stream the official SDK v2 server closes", () => {
  it.scopedLive("a tools/call whose POST stream the SDK server closes (closeSSE, event store, retryInterval) gets its result through the resumed GET", () =>
    Effect.gen(function*() {
      const events = new Map<string, { readonly streamId: string; readonly message: JSONRPCMessage }>()
      let next = 0
      const eventStore: EventStore = {
        storeEvent: (streamId, message) => {
          const id = `${streamId}_${String(++next).padStart(6, "0")}`
          events.set(id, { streamId, message })
          return Promise.resolve(id)
        },
        replayEventsAfter: async (lastEventId, { send }) => {
          const streamId = events.get(lastEventId)?.streamId ?? ""
          let after = false
          for (const [id, event] of events) {
            if (id === lastEventId) after = true
            else if (after && event.streamId === streamId) await send(id, event.message)
          }
          return streamId
        }
      }
      const sdk = new SdkServer({ name: "sdk-v2-resume", version: "2.4.0" })
      sdk.registerTool(
        "slow",
        { description: "closes its stream, then answers", inputSchema: z.object({}) },
        async (_args, ctx) => {
          ctx.http?.closeSSE?.()
          await new Promise((resolve) => setTimeout(resolve, 200))
          return { content: [{ type: "text", text: "after the close" }] }
        }
      )
      const sdkTransport = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: () => "sdk-session",
        eventStore,
        retryInterval: 50
      })
      yield* Effect.promise(() => sdk.connect(sdkTransport))
      const resumed: Array<string> = []
      const sockets = new Set<Net.Socket>()
      const http = Http.createServer((req, res) => {
        const last = req.headers["last-event-id"]
        if (req.method === "GET" && typeof last === "string") resumed.push(last)
        void sdkTransport.handleRequest(req, res)
      })
      http.on("connection", (socket) => {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
      })
      const port = yield* listenLoopback(http, sockets)
      yield* Effect.addFinalizer(() => Effect.promise(() => sdk.close()))
      const transport = yield* StreamableHttp.client({ url: `http://127.0.0.1:${port}/mcp` })
      const client = yield* bounded(McpClient.connect(transport, { versions: ["2025-11-25"] }))
      assert.strictEqual(client.info.era, "legacy")
      const called = yield* bounded(client.callTool("slow", {}))
      expect(called.content).toEqual([{ type: "text", text: "after the close" }])
      expect(resumed).toHaveLength(1)
      expect(events.has(resumed[0] ?? "")).toBe(true)
    }))
})
