/**
 * Our client against servers that negotiate MCP 2025-03-26 (`test/fixtures/sdk-v1-server-2025-03-26.ts`:
 * the official SDK v1 low-level `Server` answering `initialize` with 2025-03-26), over Streamable
 * HTTP on 127.0.0.1 and over stdio (a spawned process):
 *
 * - the client asks for its newest legacy revision (2025-11-25), accepts the server's 2025-03-26,
 *   and lists, calls, reads, gets prompts, follows progress and cancels;
 * - the wire (HTTP, as a recording `fetch` saw it): `Mcp-Session-Id` on every message after
 *   `initialize`, no `MCP-Protocol-Version` header (2025-03-26 has none), only methods of that
 *   revision;
 * - what 2025-03-26 lacks is not relied on: a listed `outputSchema` is not enforced, a server's
 *   `elicitation/create` is answered -32601 even with `onElicit`, a client allowing only
 *   2025-03-26 declares no `elicitation`;
 * - a JSON-RPC batch from the server is read message by message: a stdio line, and one SSE event
 *   of a scripted 2025-03-26 HTTP server (`test/fixtures/http-raw.ts` `recorder`);
 * - a server answering an unknown version (`2024-01-01`), or 2025-03-26 to a client that does not
 *   allow it, is refused with `ClientError` "NoCommonVersion".
 *
 * Every wait is bounded.
 */
import { assert, describe, expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as McpClient from "../../src/McpClient.js"
import * as McpSchema from "../../src/McpSchema.js"
import * as Stdio from "../../src/transport/Stdio.js"
import * as StreamableHttp from "../../src/transport/StreamableHttp.js"
import { type Canned, type Recorded, recorder } from "../fixtures/http-raw.js"
import {
  bounded,
  eventually,
  type Exchange,
  recordingFetch,
  spawnFixtureServer,
  textOf
} from "../fixtures/interop-http.js"
import { asArray, get } from "../support/Wire.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const FIXTURE = Path.join(ROOT, "test", "fixtures", "sdk-v1-server-2025-03-26.ts")
const V20250326 = "2025-03-26"
const GREETING = "hello from 2025-03-26"
const OPTIONS: McpClient.Options = { name: "presa-2025-03-26", version: "0.0.0", probeTimeout: "3 seconds" }

const methodOf = (x: Exchange): string | undefined => {
  const body = x.requestBody
  return typeof body === "object" && body !== null && "method" in body && typeof body.method === "string"
    ? body.method
    : undefined
}

const text = (result: { readonly content: ReadonlyArray<unknown> }): string | undefined => textOf(result.content)

/** List, call, read, get: what every 2025-03-26 server offers. */
const exercise = (client: McpClient.McpClient) =>
  bounded(
    Effect.gen(function*() {
      expect(client.info.era).toBe("legacy")
      expect(client.info.protocolVersion).toBe(V20250326)
      expect(client.info.supportedVersions).toEqual([V20250326])
      expect(client.info.serverInfo).toEqual({ name: "sdk-v1-2025-03-26-fixture", version: "1.32.2" })

      const tools = yield* client.listAllTools
      expect(tools.map((t) => t.name)).toEqual([
        "echo",
        "add",
        "slow",
        "cancellations",
        "initialize_params",
        "ask",
        "batched"
      ])
      expect(text(yield* client.callTool("echo", { text: "héllo" }))).toBe("héllo")
      // `add` lists an outputSchema but answers text only: 2025-03-26 has no structured output,
      // so the client does not hold the server to it (on 2025-06-18+ this is ClientError "InvalidResult")
      const add = yield* client.callTool("add", { a: 2, b: 3 })
      expect(text(add)).toBe("5")
      expect(add.structuredContent).toBeUndefined()

      const read = yield* client.readResource("test://greeting")
      expect(read.contents).toEqual([{ uri: "test://greeting", mimeType: "text/plain", text: GREETING }])
      const prompt = yield* client.getPrompt("greet", { name: "Ada" })
      expect(prompt.messages).toEqual([{ role: "user", content: { type: "text", text: "Hello, Ada!" } }])
    }),
    "exercise"
  )

/** The JSON a tool answered as its text block. */
const jsonOf = (result: { readonly content: ReadonlyArray<unknown> }): unknown => JSON.parse(text(result) ?? "null")

/** `slow` reports progress until cancelled: the client sees progress, interrupts, the server records the cancellation. */
const progressAndCancel = (client: McpClient.McpClient, reason: string) =>
  Effect.gen(function*() {
    const cancellations = Effect.map(client.callTool("cancellations"), (r) => asArray(jsonOf(r)))
    const before = (yield* cancellations).length
    const progress: Array<number> = []
    const call = yield* Effect.fork(
      client.callTool("slow", {}, {
        onProgress: (p) => Effect.sync(() => void progress.push(p.progress))
      })
    )
    yield* eventually("three progress notifications", () => progress.length >= 3)
    expect(progress.slice(0, 3)).toEqual([1, 2, 3])
    yield* Fiber.interrupt(call)
    const after = yield* bounded(
      cancellations.pipe(
        Effect.filterOrFail((all) => all.length > before, () => "not yet" as const),
        Effect.retry(Schedule.spaced("50 millis"))
      ),
      "the server saw the cancellation"
    )
    expect(after[after.length - 1]).toMatchObject({ reason })
  })

// ---------------------------------------------------------------------------------------------
// Streamable HTTP
// ---------------------------------------------------------------------------------------------

class Url extends Context.Tag("test/interop/Legacy20250326/Url")<Url, string>() {}
class UnknownUrl extends Context.Tag("test/interop/Legacy20250326/UnknownUrl")<UnknownUrl, string>() {}

/**
 * Our client over HTTP; `record`: through a recording `fetch` (not for a client with input
 * handlers, which opens the session's GET stream: the recorder's copy of that body is never
 * cancelled, so the client's cancel of its own copy would wait for it at close).
 */
const httpClient = (url: string, options: McpClient.Options = OPTIONS, record = true) =>
  Effect.gen(function*() {
    const recorder = recordingFetch()
    const transport = yield* StreamableHttp.client(record ? { url, fetch: recorder.fetch } : { url })
    const client = yield* bounded(McpClient.connect(transport, options), "connect")
    return { client, recorder }
  })

layer(
  Layer.mergeAll(
    Layer.scoped(Url, Effect.orDie(spawnFixtureServer(FIXTURE, "sdk-v1-2025-03-26"))),
    Layer.scoped(UnknownUrl, Effect.orDie(spawnFixtureServer(FIXTURE, "sdk-v1-2024-01-01", ["--answer", "2024-01-01"])))
  ),
  { excludeTestServices: true, timeout: "60 seconds" }
)("our client → a 2025-03-26 server over Streamable HTTP", (it) => {
  it.scoped("asks 2025-11-25, runs at 2025-03-26: list, call, read, prompt; the wire has no MCP-Protocol-Version", () =>
    Effect.gen(function*() {
      const { client, recorder } = yield* httpClient(yield* Url)
      yield* exercise(client)

      const init = recorder.exchanges.find((x) => methodOf(x) === "initialize")
      assert(init !== undefined, "initialize was sent")
      expect(init.requestBody).toMatchObject({ params: { protocolVersion: "2025-11-25" } })
      const session = init.responseHeaders["mcp-session-id"]
      assert(session !== undefined, "the server gave a session id")
      const after = recorder.exchanges.slice(recorder.exchanges.indexOf(init) + 1)
      expect(after.length).toBeGreaterThan(5)
      for (const x of after) {
        expect(x.requestHeaders["mcp-session-id"]).toBe(session)
        expect(x.requestHeaders["mcp-protocol-version"]).toBeUndefined()
      }
      // only 2025-03-26 methods after the era probe (whose refusal sent the client to initialize)
      expect(recorder.exchanges.map(methodOf)).toEqual([
        "server/discover",
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call",
        "tools/call",
        "resources/read",
        "prompts/get"
      ])
    }))

  it.scoped("progress and cancellation; notifications/cancelled carries the session, no version header", () =>
    Effect.gen(function*() {
      const { client, recorder } = yield* httpClient(yield* Url)
      yield* progressAndCancel(client, "interrupted")
      const cancelled = recorder.exchanges.filter((x) => methodOf(x) === "notifications/cancelled")
      expect(cancelled).toHaveLength(1)
      expect(cancelled[0]?.requestHeaders["mcp-session-id"]).toBeDefined()
      expect(cancelled[0]?.requestHeaders["mcp-protocol-version"]).toBeUndefined()
    }))

  it.scoped("elicitation/create on a 2025-03-26 session is -32601, even with onElicit", () =>
    Effect.gen(function*() {
      let asked = 0
      const { client } = yield* httpClient(yield* Url, {
        ...OPTIONS,
        onElicit: () => Effect.sync(() => (asked++, { action: "accept" as const, content: {} }))
      }, false)
      expect(text(yield* bounded(client.callTool("ask")))).toBe("error -32601")
      expect(asked).toBe(0)
    }))

  it.scoped("a client allowing only 2025-03-26 offers it and declares no elicitation", () =>
    Effect.gen(function*() {
      const { client } = yield* httpClient(yield* Url, {
        ...OPTIONS,
        versions: [V20250326],
        onElicit: () => Effect.succeed({ action: "decline" as const }),
        onRoots: () => Effect.succeed({ roots: [] })
      }, false)
      expect(client.info.protocolVersion).toBe(V20250326)
      const params = jsonOf(yield* bounded(client.callTool("initialize_params")))
      expect(params).toMatchObject({ protocolVersion: V20250326, capabilities: { roots: {} } })
      expect(params).not.toHaveProperty("capabilities.elicitation")
    }))

  it.scoped("a client that does not allow 2025-03-26 refuses the server: NoCommonVersion", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(httpClient(yield* Url, { ...OPTIONS, versions: ["2025-11-25", "2025-06-18"] }))
      assert(Exit.isFailure(exit), "connect must fail")
      const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
      expect(error).toMatchObject({
        _tag: "ClientError",
        reason: "NoCommonVersion",
        message: "server offered protocol version 2025-03-26; this client allows 2025-11-25, 2025-06-18"
      })
    }))

  it.scoped("a server answering an unknown version (2024-01-01) is refused: NoCommonVersion", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(httpClient(yield* UnknownUrl))
      assert(Exit.isFailure(exit), "connect must fail")
      const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
      expect(error).toMatchObject({
        _tag: "ClientError",
        reason: "NoCommonVersion",
        message:
          "server offered protocol version 2024-01-01; this client allows 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26"
      })
    }))
})

// ---------------------------------------------------------------------------------------------
// stdio
// ---------------------------------------------------------------------------------------------

class StdioPeer extends Context.Tag("test/interop/Legacy20250326/StdioPeer")<StdioPeer, McpClient.McpClient>() {}

const spawnStdio = (args: ReadonlyArray<string> = [], options: McpClient.Options = OPTIONS) =>
  Effect.gen(function*() {
    const transport = yield* Stdio.spawn({
      command: process.execPath,
      args: ["--import", "tsx", FIXTURE, ...args],
      cwd: ROOT,
      stderr: () => Effect.void
    })
    return yield* bounded(McpClient.connect(transport, options), "connect")
  })

layer(Layer.scoped(StdioPeer, Effect.orDie(spawnStdio())), { excludeTestServices: true, timeout: "60 seconds" })(
  "our client → a 2025-03-26 server over stdio",
  (it) => {
    it.effect("list, call, read, prompt at 2025-03-26", () => Effect.flatMap(StdioPeer, exercise))

    it.effect("progress and cancellation", () =>
      Effect.flatMap(StdioPeer, (client) => progressAndCancel(client, "The client cancelled the request")))

    it.effect("a batch line [progress, response] is read message by message, in order", () =>
      Effect.gen(function*() {
        const client = yield* StdioPeer
        const seen: Array<string> = []
        const result = yield* bounded(client.callTool("batched", {}, {
          onProgress: (p) => Effect.sync(() => void seen.push(`progress ${p.progress}`))
        }))
        seen.push(`result ${text(result)}`)
        expect(seen).toEqual(["progress 1", "result batched"])
        // the connection goes on after the batch
        expect(text(yield* bounded(client.callTool("echo", { text: "after" })))).toBe("after")
      }))
  }
)

// ---------------------------------------------------------------------------------------------
// a scripted 2025-03-26 HTTP server: a batch in one SSE event
// ---------------------------------------------------------------------------------------------

/** A 2025-03-26 Streamable HTTP server, scripted: its `tools/call` answers one SSE event holding a batch. */
const scripted = (request: Recorded): Canned => {
  const body: unknown = request.body === "" ? undefined : JSON.parse(request.body)
  const method = typeof body === "object" && body !== null && "method" in body ? body.method : undefined
  const id = typeof body === "object" && body !== null && "id" in body ? body.id : undefined
  const json = (message: unknown): Canned => ({
    status: 200,
    headers: { "content-type": "application/json", "mcp-session-id": "s-1" },
    body: JSON.stringify(message)
  })
  switch (method) {
    case "initialize":
      return json({
        jsonrpc: "2.0",
        id,
        result: {
          protocolVersion: V20250326,
          capabilities: { tools: {} },
          serverInfo: { name: "scripted", version: "1" }
        }
      })
    case "tools/call": {
      const token = get(body, "params", "_meta", "progressToken")
      const batch = [
        { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: 1, total: 2 } },
        { jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "from a batch" }] } }
      ]
      return {
        status: 200,
        headers: { "content-type": "text/event-stream", "mcp-session-id": "s-1" },
        body: `event: message\ndata: ${JSON.stringify(batch)}\n\n`
      }
    }
    case undefined:
      return { status: request.method === "DELETE" ? 200 : 405 }
    default:
      // notifications: accepted; any other request (the era probe): not a session, 400
      return id === undefined
        ? { status: 202 }
        : {
          status: 400,
          headers: { "content-type": "application/json" },
          body: "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32000,\"message\":\"Bad Request: no session\"}}"
        }
  }
}

layer(Layer.empty, { excludeTestServices: true, timeout: "30 seconds" })(
  "our client → a scripted 2025-03-26 HTTP server",
  (it) => {
    it.scoped("a batch [progress, response] in one SSE event is read message by message", () =>
      Effect.gen(function*() {
        const server = yield* recorder(scripted)
        const transport = yield* StreamableHttp.client({ url: server.url })
        const client = yield* bounded(McpClient.connect(transport, OPTIONS), "connect")
        expect(client.info.protocolVersion).toBe(V20250326)
        const seen: Array<string> = []
        const result = yield* bounded(client.callTool("anything", {}, {
          onProgress: (p) => Effect.sync(() => void seen.push(`progress ${p.progress}/${p.total}`))
        }))
        seen.push(`result ${text(result)}`)
        expect(seen).toEqual(["progress 1/2", "result from a batch"])
        const requests = yield* server.requests
        const call = requests.find((r) => r.body.includes("tools/call"))
        expect(call?.headers["mcp-session-id"]).toBe("s-1")
        expect(call?.headers["mcp-protocol-version"]).toBeUndefined()
      }))
  }
)

describe("McpSchema client versions", () => {
  layer(Layer.empty)((it) => {
    it.effect("the client speaks 2025-03-26 besides what servers serve", () =>
      Effect.sync(() => {
        expect(McpSchema.CLIENT_VERSIONS).toEqual([...McpSchema.ALL_VERSIONS, V20250326])
        expect(McpSchema.ALL_VERSIONS).not.toContain(V20250326)
        expect(McpSchema.isProtocolVersion(V20250326)).toBe(false)
        expect(McpSchema.isBefore20250618(V20250326)).toBe(true)
        expect(McpSchema.isBefore20250618("2025-06-18")).toBe(false)
      }))
  })

  layer(Layer.empty, { excludeTestServices: true, timeout: "30 seconds" })((it) => {
    it.scoped("stdio: a server answering 2024-01-01 is refused: NoCommonVersion", () =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(spawnStdio(["--answer", "2024-01-01"]))
        assert(Exit.isFailure(exit), "connect must fail")
        const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
        expect(error).toMatchObject({ _tag: "ClientError", reason: "NoCommonVersion" })
      }))
  })
})
