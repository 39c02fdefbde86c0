/**
 * The example transport over the public connection seam (`examples/websocket.ts`, MCP over
 * WebSocket with `presa-mcp/Connection`), driven over 127.0.0.1 by the official SDK v1 client's
 * `WebSocketClientTransport`, by the official SDK v2 client (`@modelcontextprotocol/client`, which
 * ships no WebSocket transport) over a minimal `Transport` of its interface written here over the
 * `ws` package, pinned to 2026-07-28 (modern) and in its legacy mode (2025-11-25 handshake), and by
 * raw `ws` frames:
 * - `initialize` / `server/discover`, `tools/list` and `tools/call` answer;
 * - a request-scoped notification (`notifications/progress`) reaches the client before the reply;
 * - cancellation: the SDK's abort sends `notifications/cancelled`; the tool is interrupted and no
 *   reply comes for it (raw frames: nothing with its id), later requests are answered;
 * - a frame that is not JSON gets -32700, the connection goes on.
 * Every wait is bounded. */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import {
  Client as V2Client,
  type JSONRPCMessage,
  type MessageExtraInfo,
  parseJSONRPCMessage,
  type Transport as V2Transport
} from "@modelcontextprotocol/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { WebSocketClientTransport } from "@modelcontextprotocol/sdk/client/websocket.js"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { createRequire } from "node:module"
import { serveWebSocket } from "../../examples/websocket.js"
import * as McpServer from "../../src/McpServer.js"
import * as Tool from "../../src/Tool.js"

/** The part of a `ws` WebSocket the raw client uses (the package ships no types). */
interface RawSocket {
  readonly on: (event: "message" | "close" | "error", listener: (data?: unknown) => void) => void
  readonly once: (event: "open" | "error", listener: (error?: unknown) => void) => void
  readonly send: (text: string, callback?: (error?: Error | null) => void) => void
  readonly close: () => void
}
type RawSocketConstructor = new(url: string, protocol: string) => RawSocket

const isWsModule = (u: unknown): u is { readonly WebSocket: RawSocketConstructor } =>
  (typeof u === "object" || typeof u === "function") && u !== null && "WebSocket" in u &&
  typeof u.WebSocket === "function"

const wsModule: unknown = createRequire(import.meta.url)("ws")
if (!isWsModule(wsModule)) throw new Error("the ws package has no WebSocket export")
const WsWebSocket = wsModule.WebSocket

// Node 20 has no global WebSocket; the SDK's transport uses the global one.
const globals = globalThis as { WebSocket?: unknown }
globals.WebSocket ??= WsWebSocket

const WAIT_MS = 10_000

const within = <A>(what: string, promise: Promise<A>, ms = WAIT_MS): Promise<A> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** What the `hang` tool saw: its starts and its interruptions, by tag. */
const events: Array<string> = []

const echo = Tool.make({
  name: "echo",
  parameters: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => text
})

const steps = Tool.make({
  name: "steps",
  description: "Reports progress twice, then answers",
  parameters: Schema.Struct({}),
  handler: (_args, ctx) =>
    Effect.gen(function*() {
      yield* ctx.progress(1, { total: 2, message: "half" })
      yield* ctx.progress(2, { total: 2, message: "all" })
      // SDK v1 handles a notification a microtask after it arrives and forgets a request's progress
      // handler at its reply: a reply in the same read would outrun the notifications
      yield* Effect.sleep("50 millis")
      return "stepped"
    })
})

const hang = Tool.make({
  name: "hang",
  description: "Records its start, then waits until interrupted",
  parameters: Schema.Struct({ tag: Schema.String }),
  handler: ({ tag }) =>
    Effect.sync(() => events.push(`start ${tag}`)).pipe(
      Effect.zipRight(Effect.never),
      Effect.onInterrupt(() => Effect.sync(() => events.push(`interrupted ${tag}`)))
    )
})

let scope: Scope.CloseableScope
let url = ""

beforeAll(async () => {
  scope = Effect.runSync(Scope.make())
  const address = await Effect.runPromise(
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "ws-test", version: "1.0.0", tools: [echo, steps, hang] })
      return yield* serveWebSocket(server, { port: 0, host: "127.0.0.1" })
    }).pipe(Scope.extend(scope))
  )
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  url = `ws://127.0.0.1:${address.port}`
})

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

/** A raw client: sends frames, collects every frame it receives. */
const rawClient = async () => {
  const socket = new WsWebSocket(url, "mcp")
  const frames: Array<unknown> = []
  socket.on("message", (data) => frames.push(JSON.parse(String(data))))
  await within(
    "the socket to open",
    new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve())
      socket.once("error", reject)
    })
  )
  const send = (message: unknown) => socket.send(typeof message === "string" ? message : JSON.stringify(message))
  const waitFor = async (what: string, check: () => boolean) => {
    const started = Date.now()
    while (!check()) {
      if (Date.now() - started > WAIT_MS) throw new Error(`timed out waiting for ${what}`)
      await sleep(10)
    }
  }
  const withId = (id: unknown) => frames.filter((f) => typeof f === "object" && f !== null && "id" in f && f.id === id)
  return { socket, frames, send, waitFor, withId }
}

/**
 * The SDK v2 client's `Transport` over one `ws` socket (subprotocol `mcp`): one text frame per
 * JSON-RPC message, each frame decoded with the SDK's own message schema.
 */
class WsTransport implements V2Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined
  private socket: RawSocket | undefined
  private closed = false

  constructor(private readonly url: string) {}

  async start(): Promise<void> {
    const socket = new WsWebSocket(this.url, "mcp")
    socket.on("message", (data) => {
      let message: JSONRPCMessage
      try {
        const value: unknown = JSON.parse(String(data))
        message = parseJSONRPCMessage(value)
      } catch (e) {
        this.onerror?.(e instanceof Error ? e : new Error(String(e)))
        return
      }
      this.onmessage?.(message)
    })
    socket.on("error", (e) => this.onerror?.(e instanceof Error ? e : new Error(String(e))))
    socket.on("close", () => {
      if (this.closed) return
      this.closed = true
      this.onclose?.()
    })
    await within(
      "the socket to open",
      new Promise<void>((resolve, reject) => {
        socket.once("open", () => resolve())
        socket.once("error", reject)
      })
    )
    this.socket = socket
  }

  send(message: JSONRPCMessage): Promise<void> {
    const socket = this.socket
    if (socket === undefined) return Promise.reject(new Error("not started"))
    return new Promise((resolve, reject) =>
      socket.send(JSON.stringify(message), (error) => error instanceof Error ? reject(error) : resolve())
    )
  }

  async close(): Promise<void> {
    this.socket?.close()
  }
}

/** Waits, bounded, until `events` holds `event`. */
const eventOccurs = async (event: string) => {
  const started = Date.now()
  while (!events.includes(event) && Date.now() - started < WAIT_MS) await sleep(10)
  expect(events).toContain(event)
}

/**
 * The SDK v2 client over `WsTransport`: tools/list, tools/call echo, the `steps` tool's progress
 * before its result, an aborted `hang` call interrupted (tag `tag`), a later call answered.
 */
const exerciseV2 = async (client: V2Client, tag: string) => {
  const tools = await within("tools/list", client.listTools())
  expect(tools.tools.map((t) => t.name).sort()).toEqual(["echo", "hang", "steps"])

  const echoed = await within("tools/call echo", client.callTool({ name: "echo", arguments: { text: "hi" } }))
  expect(echoed.content).toEqual([{ type: "text", text: "hi" }])

  // progress and the result in the order the client saw them
  const seen: Array<unknown> = []
  const stepped = await within(
    "tools/call steps",
    client.callTool({ name: "steps", arguments: {} }, { onprogress: (p) => seen.push(p) }).then((result) => {
      seen.push("result")
      return result
    })
  )
  expect(stepped.content).toEqual([{ type: "text", text: "stepped" }])
  expect(seen).toEqual([
    { progress: 1, total: 2, message: "half" },
    { progress: 2, total: 2, message: "all" },
    "result"
  ])

  const abort = new AbortController()
  const hung = client.callTool({ name: "hang", arguments: { tag } }, { signal: abort.signal })
  const settled = hung.then(() => "answered", () => "rejected")
  await eventOccurs(`start ${tag}`)
  abort.abort("the user gave up")
  expect(await within("the aborted call", settled)).toBe("rejected")
  await eventOccurs(`interrupted ${tag}`)

  const later = await within("a later call", client.callTool({ name: "echo", arguments: { text: "later" } }))
  expect(later.content).toEqual([{ type: "text", text: "later" }])
}

describe("examples/websocket.ts: a transport over the public connection seam", () => {
  it("the official SDK v1 client: tools/list, tools/call, progress notifications, cancellation", async () => {
    const client = new Client({ name: "ws-sdk-v1", version: "1.0.0" })
    await within("connect", client.connect(new WebSocketClientTransport(new URL(url))))
    try {
      const tools = await within("tools/list", client.listTools())
      expect(tools.tools.map((t) => t.name).sort()).toEqual(["echo", "hang", "steps"])

      const echoed = await within("tools/call echo", client.callTool({ name: "echo", arguments: { text: "hi" } }))
      expect(echoed.content).toEqual([{ type: "text", text: "hi" }])

      const progress: Array<unknown> = []
      const stepped = await within(
        "tools/call steps",
        client.callTool({ name: "steps", arguments: {} }, undefined, { onprogress: (p) => progress.push(p) })
      )
      expect(stepped.content).toEqual([{ type: "text", text: "stepped" }])
      expect(progress).toEqual([
        { progress: 1, total: 2, message: "half" },
        { progress: 2, total: 2, message: "all" }
      ])

      const abort = new AbortController()
      const hung = client.callTool({ name: "hang", arguments: { tag: "sdk" } }, undefined, { signal: abort.signal })
      const settled = hung.then(() => "answered", () => "rejected")
      const started = Date.now()
      while (!events.includes("start sdk") && Date.now() - started < WAIT_MS) await sleep(10)
      expect(events).toContain("start sdk")
      abort.abort("the user gave up")
      expect(await within("the aborted call", settled)).toBe("rejected")
      const after = Date.now()
      while (!events.includes("interrupted sdk") && Date.now() - after < WAIT_MS) await sleep(10)
      expect(events).toContain("interrupted sdk")

      const later = await within("a later call", client.callTool({ name: "echo", arguments: { text: "later" } }))
      expect(later.content).toEqual([{ type: "text", text: "later" }])
    } finally {
      await client.close()
    }
  }, 30_000)

  it("raw frames: a cancelled request gets no reply, a frame that is not JSON gets -32700", async () => {
    const c = await rawClient()
    try {
      c.send({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
      })
      await c.waitFor("the initialize reply", () => c.withId(1).length === 1)
      c.send({ jsonrpc: "2.0", method: "notifications/initialized" })
      c.send({ jsonrpc: "2.0", id: "h", method: "tools/call", params: { name: "hang", arguments: { tag: "raw" } } })
      await c.waitFor("the hang to start", () => events.includes("start raw"))
      c.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "h", reason: "test" } })
      await c.waitFor("the hang to be interrupted", () => events.includes("interrupted raw"))
      c.send("{not json")
      await c.waitFor(
        "the parse error",
        () => c.frames.some((f) => typeof f === "object" && f !== null && "error" in f && !("id" in f))
      )
      const parseError = c.frames.find((f) => typeof f === "object" && f !== null && "error" in f && !("id" in f))
      expect(parseError).toEqual({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error" } })
      c.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "x" } } })
      await c.waitFor("the echo reply", () => c.withId(2).length === 1)
      expect(c.withId(2)[0]).toEqual({
        jsonrpc: "2.0",
        id: 2,
        result: { content: [{ type: "text", text: "x" }] }
      })
      // nothing ever answered the cancelled request
      await sleep(100)
      expect(c.withId("h")).toEqual([])
    } finally {
      c.socket.close()
    }
  }, 30_000)
})

describe("examples/websocket.ts with the official SDK v2 client over a ws Transport", () => {
  it("pinned to 2026-07-28: modern era; tools/list, tools/call, progress before the result, cancellation", async () => {
    const client = new V2Client({ name: "ws-sdk-v2", version: "1.0.0" }, {
      versionNegotiation: { mode: { pin: "2026-07-28" } }
    })
    try {
      await within("connect", client.connect(new WsTransport(url)))
      expect(client.getProtocolEra()).toBe("modern")
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28")
      await exerciseV2(client, "v2 modern")
    } finally {
      await client.close()
    }
  }, 30_000)

  it("legacy mode: the 2025-11-25 handshake; the same calls", async () => {
    const client = new V2Client({ name: "ws-sdk-v2-legacy", version: "1.0.0" }, {
      versionNegotiation: { mode: "legacy" }
    })
    try {
      await within("connect", client.connect(new WsTransport(url)))
      expect(client.getProtocolEra()).toBe("legacy")
      expect(client.getNegotiatedProtocolVersion()).toBe("2025-11-25")
      await exerciseV2(client, "v2 legacy")
    } finally {
      await client.close()
    }
  }, 30_000)
})
