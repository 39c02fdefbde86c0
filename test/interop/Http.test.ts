/**
 * Streamable HTTP interop with the official TypeScript SDKs, over real sockets on 127.0.0.1:
 *
 * 1. SDK v1 client (`@modelcontextprotocol/sdk`, legacy 2025-11-25) → our server (the reference
 *    library, `StreamableHttp.serve` in-process);
 * 2. SDK v2 client (`@modelcontextprotocol/client`) pinned to 2026-07-28, and in "auto" mode → our
 *    server;
 * 3. our client (`McpClient` over `StreamableHttp.client`) → the SDK v1 and v2 HTTP fixtures
 *    (child processes);
 * 4. the wire as a recording `fetch` saw it: every request answered with JSON or SSE, every
 *    response valid against the official schema of the era in use.
 *
 * Every wait is bounded (`WAIT`).
 */
import { assert, describe, expect, it, layer } from "@effect/vitest"
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from "@modelcontextprotocol/client"
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { makeLibrary } from "../../examples/library-definitions.js"
import * as McpClient from "../../src/McpClient.js"
import * as StreamableHttp from "../../src/transport/StreamableHttp.js"
import {
  bounded,
  checkExchanges,
  eventually,
  LEGACY,
  MODERN,
  promise,
  type Recorder,
  recordingFetch,
  rejection,
  spawnSdkServer,
  textOf,
  WAIT
} from "../fixtures/interop-http.js"
import * as RoundRobin from "../support/RoundRobin.js"

const CLIENT_INFO = { name: "interop-test", version: "0.0.0" }
const SERVER_INFO = { name: "presa-library", version: "0.1.0" }
const INVALID_NUMBERS = "Invalid arguments at /numbers/0: expected number, got string"

class Library extends Context.Tag("test/interop/Http/Library")<Library, { readonly url: string }>() {}

const LibraryLive = Layer.scoped(
  Library,
  Effect.gen(function*() {
    const server = yield* makeLibrary
    const { url } = yield* StreamableHttp.serve(server, { port: 0 })
    return { url }
  }).pipe(Effect.orDie)
)

/** Connects an SDK client (v1 or v2) for the test's scope; `close`s it when the scope ends. */
const connected = <C extends { close(): Promise<void> }>(client: C, connect: (client: C) => Promise<void>) =>
  Effect.acquireRelease(
    Effect.as(promise("connect", () => connect(client)), client),
    (c) => promise("close", () => c.close()).pipe(Effect.ignore)
  )

const v1Client = (url: string, recorder?: Recorder) =>
  connected(
    new V1Client(CLIENT_INFO),
    (c) => c.connect(new V1Transport(new URL(url), recorder === undefined ? {} : { fetch: recorder.fetch }))
  )

type V2Mode = "auto" | { readonly pin: "2026-07-28" }

const v2Client = (url: string, mode: V2Mode, recorder?: Recorder) =>
  connected(
    new V2Client(CLIENT_INFO, {
      versionNegotiation: mode === "auto"
        ? { mode: "auto", probe: { timeoutMs: 2000, maxRetries: 0 } }
        : { mode: { pin: mode.pin } }
    }),
    (c) => c.connect(new V2Transport(new URL(url), recorder === undefined ? {} : { fetch: recorder.fetch }))
  )

const errorCode = (e: unknown): unknown =>
  typeof e === "object" && e !== null && "code" in e ? (e as { readonly code: unknown }).code : undefined

/**
 * What `exerciseLibrary` uses of an SDK client: both generations fit it (their own result types
 * differ, so a union of the two classes cannot be called directly).
 */
interface SdkCalls {
  listTools(): Promise<{ readonly tools: ReadonlyArray<{ readonly name: string; readonly outputSchema?: unknown }> }>
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<{
    readonly [key: string]: unknown
    readonly content?: unknown
    readonly structuredContent?: unknown
    readonly isError?: unknown
  }>
  readResource(params: { uri: string }): Promise<{ readonly contents: ReadonlyArray<unknown> }>
  getPrompt(params: { name: string; arguments: Record<string, string> }): Promise<{
    readonly messages: ReadonlyArray<unknown>
  }>
  complete(params: {
    ref: { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string }
    argument: { name: string; value: string }
  }): Promise<{ readonly completion: { readonly values: ReadonlyArray<string> } }>
  getServerCapabilities():
    | {
      readonly tools?: unknown
      readonly resources?: unknown
      readonly prompts?: unknown
      readonly completions?: unknown
    }
    | undefined
}

/**
 * The same calls through either SDK client against the reference library: list, call (valid and
 * invalid arguments), read a template resource, get a prompt, complete, and a not-found read.
 */
const exerciseLibrary = (client: SdkCalls) =>
  Effect.gen(function*() {
    const tools = yield* promise("tools/list", () => client.listTools())
    expect(tools.tools.map((t) => t.name).sort()).toEqual(["add", "logo"])
    const add = tools.tools.find((t) => t.name === "add")
    expect(add?.outputSchema).toMatchObject({ type: "object", properties: { sum: { type: "number" } } })

    const sum = yield* promise("tools/call add", () =>
      client.callTool({ name: "add", arguments: { numbers: [1, 2, 3] } }))
    expect(sum.isError ?? false).toBe(false)
    expect(sum.structuredContent).toEqual({ sum: 6 })

    const invalid = yield* promise(
      "tools/call add (invalid)",
      () =>
        client.callTool({ name: "add", arguments: { numbers: ["one"] } })
    )
    expect(invalid.isError).toBe(true)
    expect(textOf(invalid.content)).toBe(INVALID_NUMBERS)

    const logo = yield* promise("tools/call logo", () => client.callTool({ name: "logo", arguments: {} }))
    expect(logo.content).toMatchObject([{ type: "text", text: "Here is the logo:" }, {
      type: "image",
      mimeType: "image/png"
    }])

    const ada = yield* promise("resources/read people://ada", () => client.readResource({ uri: "people://ada" }))
    expect(ada.contents).toHaveLength(1)
    expect(ada.contents[0]).toMatchObject({ uri: "people://ada", mimeType: "text/plain", text: "Ada Lovelace" })

    const readme = yield* promise("resources/read readme", () => client.readResource({ uri: "file:///readme.txt" }))
    expect(readme.contents[0]).toMatchObject({ text: "Read me first." })

    const prompt = yield* promise(
      "prompts/get introduce",
      () => client.getPrompt({ name: "introduce", arguments: { id: "alan" } })
    )
    expect(prompt.messages).toHaveLength(1)
    expect(prompt.messages[0]).toMatchObject({
      role: "user",
      content: { type: "text", text: "Introduce Alan Turing in one sentence." }
    })

    const completion = yield* promise("completion/complete", () =>
      client.complete({ ref: { type: "ref/prompt", name: "introduce" }, argument: { name: "id", value: "a" } }))
    expect(completion.completion.values).toEqual(["ada", "alan"])

    const templateCompletion = yield* promise("completion/complete (template)", () =>
      client.complete({ ref: { type: "ref/resource", uri: "people://{id}" }, argument: { name: "id", value: "al" } }))
    expect(templateCompletion.completion.values).toEqual(["alan"])

    const notFound = yield* rejection(
      "resources/read people://nobody",
      () =>
        client.readResource({ uri: "people://nobody" })
    )
    expect(errorCode(notFound)).toBe(-32602)
    const data = typeof notFound === "object" && notFound !== null && "data" in notFound ? notFound.data : undefined
    expect(data).toEqual({ uri: "people://nobody" })

    const capabilities = client.getServerCapabilities()
    assert(capabilities !== undefined, "server capabilities")
    expect(capabilities.tools).toBeDefined()
    expect(capabilities.resources).toBeDefined()
    expect(capabilities.prompts).toBeDefined()
    expect(capabilities.completions).toBeDefined()
  })

layer(LibraryLive, { excludeTestServices: true, timeout: WAIT })("SDK clients → our HTTP server", (it) => {
  it.scoped("SDK v1 client (legacy 2025-11-25): tools, resources, prompts, completions, errors", () =>
    Effect.gen(function*() {
      const { url } = yield* Library
      const recorder = recordingFetch()
      const client = yield* v1Client(url, recorder)
      expect(client.getServerVersion()).toMatchObject(SERVER_INFO)
      expect(client.getInstructions()).toContain("reference library")
      yield* exerciseLibrary(client)

      // the handshake on the wire: initialize (2025-11-25) answered with a session id
      const init = recorder.exchanges.find((x) =>
        typeof x.requestBody === "object" && x.requestBody !== null && "method" in x.requestBody &&
        x.requestBody.method === "initialize"
      )
      assert(init !== undefined, "initialize was sent")
      expect(init.responseHeaders["mcp-session-id"]).toMatch(/^[0-9a-f-]{36}$/)
      const session = init.responseHeaders["mcp-session-id"]
      for (const x of recorder.exchanges.filter((x) => x !== init && x.method === "POST")) {
        expect(x.requestHeaders["mcp-session-id"]).toBe(session)
        expect(x.requestHeaders["mcp-protocol-version"]).toBe(LEGACY)
      }
    }))

  it.scoped("SDK v1 client: every response on the wire is JSON or SSE and valid for 2025-11-25", () =>
    Effect.gen(function*() {
      const { url } = yield* Library
      const recorder = recordingFetch()
      const client = yield* v1Client(url, recorder)
      yield* exerciseLibrary(client)
      const checked = yield* checkExchanges(recorder.exchanges, LEGACY)
      expect(checked.requests).toEqual([
        "initialize",
        "tools/list",
        "tools/call",
        "tools/call",
        "tools/call",
        "resources/read",
        "resources/read",
        "prompts/get",
        "completion/complete",
        "completion/complete",
        "resources/read"
      ])
      expect(checked.notifications).toEqual(["notifications/initialized"])
      // the GET stream the v1 client opens after initialize is served as SSE
      yield* eventually("the GET stream", () => recorder.exchanges.some((x) => x.method === "GET"))
      const get = recorder.exchanges.find((x) => x.method === "GET")
      expect(get?.status).toBe(200)
      expect(get?.contentType).toBe("text/event-stream")
    }))

  it.scoped("SDK v2 client pinned to 2026-07-28: modern era, same calls", () =>
    Effect.gen(function*() {
      const { url } = yield* Library
      const client = yield* v2Client(url, { pin: MODERN })
      expect(client.getProtocolEra()).toBe("modern")
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN)
      expect(client.getServerVersion()).toMatchObject(SERVER_INFO)
      expect(client.getDiscoverResult()?.supportedVersions).toContain(MODERN)
      yield* exerciseLibrary(client)
    }))

  it.scoped("SDK v2 client in auto mode: probes, settles on the modern era", () =>
    Effect.gen(function*() {
      const { url } = yield* Library
      const recorder = recordingFetch()
      const client = yield* v2Client(url, "auto", recorder)
      expect(client.getProtocolEra()).toBe("modern")
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN)
      expect(client.getServerVersion()).toMatchObject(SERVER_INFO)
      yield* exerciseLibrary(client)
      const checked = yield* checkExchanges(recorder.exchanges, MODERN)
      expect(checked.requests[0]).toBe("server/discover")
      expect(checked.requests).not.toContain("initialize")
    }))

  it.scoped("SDK v2 client (modern): every response on the wire is JSON or SSE and valid for 2026-07-28", () =>
    Effect.gen(function*() {
      const { url } = yield* Library
      const recorder = recordingFetch()
      const client = yield* v2Client(url, { pin: MODERN }, recorder)
      yield* exerciseLibrary(client)
      const checked = yield* checkExchanges(recorder.exchanges, MODERN)
      expect(checked.requests).toEqual([
        "server/discover",
        "tools/list",
        "tools/call",
        "tools/call",
        "tools/call",
        "resources/read",
        "resources/read",
        "prompts/get",
        "completion/complete",
        "completion/complete",
        "resources/read"
      ])
      expect(checked.notifications).toEqual([])
      // modern: no session, no GET stream, no DELETE
      expect(recorder.exchanges.map((x) => x.method).filter((m) => m !== "POST")).toEqual([])
      for (const x of recorder.exchanges) {
        expect(x.requestHeaders["mcp-session-id"]).toBeUndefined()
        expect(x.responseHeaders["mcp-session-id"]).toBeUndefined()
        expect(x.requestHeaders["mcp-protocol-version"]).toBe(MODERN)
      }
    }))
})

// ---------------------------------------------------------------------------------------------
// our client → official SDK servers
// ---------------------------------------------------------------------------------------------

const ourClient = (url: string) =>
  Effect.gen(function*() {
    const transport = yield* StreamableHttp.client({ url })
    return yield* bounded(McpClient.connect(transport, { name: "presa-interop", version: "0.0.0" }), "connect")
  })

const exerciseFixture = (client: McpClient.McpClient, greeting: string) =>
  bounded(
    Effect.gen(function*() {
      const tools = yield* client.listAllTools
      expect(tools.map((t) => t.name).sort()).toEqual(["add", "echo"])

      const echo = yield* client.callTool("echo", { text: "héllo" })
      expect(echo.isError ?? false).toBe(false)
      expect(echo.content).toEqual([{ type: "text", text: "héllo" }])

      const add = yield* client.callTool("add", { a: 2, b: 3 })
      expect(add.structuredContent).toEqual({ sum: 5 })
      expect(add.content).toEqual([{ type: "text", text: "5" }])

      const read = yield* client.readResource("test://greeting")
      expect(read.contents).toHaveLength(1)
      expect(read.contents[0]).toMatchObject({ uri: "test://greeting", mimeType: "text/plain", text: greeting })

      const prompt = yield* client.getPrompt("greet", { name: "Ada" })
      expect(prompt.messages).toEqual([{ role: "user", content: { type: "text", text: "Hello, Ada!" } }])
    }),
    "exercise fixture"
  )

class V1Fixture extends Context.Tag("test/interop/Http/V1Fixture")<V1Fixture, string>() {}
class V2Fixture extends Context.Tag("test/interop/Http/V2Fixture")<V2Fixture, string>() {}

layer(
  Layer.mergeAll(
    Layer.scoped(V1Fixture, Effect.orDie(spawnSdkServer("v1"))),
    Layer.scoped(V2Fixture, Effect.orDie(spawnSdkServer("v2")))
  ),
  { excludeTestServices: true, timeout: "30 seconds" }
)("our client → official SDK HTTP servers", (it) => {
  it.scoped("SDK v1 server: legacy era detected (2025-11-25), calls work", () =>
    Effect.gen(function*() {
      const client = yield* ourClient(yield* V1Fixture)
      expect(client.info.era).toBe("legacy")
      expect(client.info.protocolVersion).toBe(LEGACY)
      expect(client.info.serverInfo).toMatchObject({ name: "sdk-v1-fixture", version: "1.32.2" })
      expect(client.info.capabilities.tools).toBeDefined()
      yield* exerciseFixture(client, "hello from v1")
    }))

  it.scoped("SDK v1 server: a resource that does not exist is McpClient.isResourceNotFound", () =>
    Effect.gen(function*() {
      const client = yield* ourClient(yield* V1Fixture)
      const exit = yield* bounded(Effect.exit(client.readResource("test://nope")))
      assert(Exit.isFailure(exit), "reading test://nope must fail")
      const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
      assert(error !== undefined && error._tag === "McpError", `expected McpError, got ${String(exit.cause)}`)
      // the SDK v1 server answers -32602 "MCP error -32602: Resource test://nope not found", without `data`
      expect(error.code).toBe(-32602)
      expect(error.message).toContain("test://nope not found")
      expect(McpClient.isResourceNotFound(error)).toBe(true)
    }))

  it.scoped("SDK v2 server: modern era detected (2026-07-28), calls work", () =>
    Effect.gen(function*() {
      const client = yield* ourClient(yield* V2Fixture)
      expect(client.info.era).toBe("modern")
      expect(client.info.protocolVersion).toBe(MODERN)
      expect(client.info.supportedVersions).toContain(MODERN)
      expect(client.info.serverInfo).toMatchObject({ name: "sdk-v2-fixture", version: "2.4.0" })
      yield* exerciseFixture(client, "hello from v2")
    }))

  it.scoped("SDK v2 server: a resource that does not exist is McpClient.isResourceNotFound", () =>
    Effect.gen(function*() {
      const client = yield* ourClient(yield* V2Fixture)
      const exit = yield* bounded(Effect.exit(client.readResource("test://nope")))
      assert(Exit.isFailure(exit), "reading test://nope must fail")
      const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
      assert(error !== undefined && error._tag === "McpError", `expected McpError, got ${String(exit.cause)}`)
      expect(McpClient.isResourceNotFound(error)).toBe(true)
    }))
})

/**
 * Connects our client to `url` answering every elicitation "Ada", then calls the SDK v1 `--ask`
 * server's `ask_outside`, whose elicitation/create relates to no request: it can only arrive on the
 * legacy session's GET stream. Yields the connected era and the messages the client was asked.
 */
const askOutside = (url: string) =>
  Effect.gen(function*() {
    const asked: Array<string> = []
    const transport = yield* StreamableHttp.client({ url })
    const client = yield* bounded(
      McpClient.connect(transport, {
        name: "presa-interop",
        version: "0.0.0",
        onElicit: (params) =>
          Effect.sync(() => {
            asked.push(String(params.message))
            return { action: "accept" as const, content: { name: "Ada" } }
          })
      }),
      "connect"
    )
    // no listen: the transport opened the GET stream after notifications/initialized
    const result = yield* bounded(client.callTool("ask_outside"), "ask_outside")
    expect(result.content).toEqual([{ type: "text", text: "name=Ada" }])
    return { era: client.info.era, asked }
  })

describe("our client keeps the legacy session's GET stream open (issue 18)", () => {
  it.scopedLive(
    "SDK v1 server: an elicitation/create related to no request reaches onElicit",
    () =>
      Effect.gen(function*() {
        const { asked, era } = yield* askOutside(yield* spawnSdkServer("v1", ["--ask"]))
        expect(era).toBe("legacy")
        expect(asked).toEqual(["Your name?"])
      }),
    { timeout: 60_000 }
  )
  it.scopedLive(
    "SDK v1 server: a GET that gets no response (connection reset) is tried again, and the request arrives",
    () =>
      Effect.gen(function*() {
        const url = yield* spawnSdkServer("v1", ["--ask"])
        let gets = 0
        // the first GET's connection is destroyed before any response; later ones pass
        const balancer = yield* RoundRobin.make([Number(new URL(url).port)], {
          cut: (req) => req.method === "GET" && ++gets === 1
        })
        const { asked } = yield* askOutside(balancer.url)
        expect(asked).toEqual(["Your name?"])
        expect(gets).toBe(2)
      }),
    { timeout: 60_000 }
  )
})
