/**
 * Interop over stdio with foreign peers, in both directions.
 *
 * 1. The official SDK v1 client (`@modelcontextprotocol/sdk` 1.32, legacy 2025-11-25) drives
 *    `examples/library.ts --stdio`.
 * 2. The official SDK v2 client (`@modelcontextprotocol/client` 2.4) pinned to 2026-07-28 does the
 *    same (it spawns the server twice: a short-lived probe process, then the session process whose
 *    first line is an ordinary request carrying the modern `_meta`; see /tmp/peer-notes.md §d).
 * 3. Our client (`Stdio.spawn` + `McpClient.connect`) drives the official SDK v1 and v2 server
 *    fixtures and detects their era.
 * 4. Our client drives `@modelcontextprotocol/server-everything` (legacy).
 * 5. Raw hosts (`node:child_process`, exact lines) check era routing on one pipe (protocol.md §1.1,
 *    §1.2, §19.1): every response is cross-checked against the official schema of its revision,
 *    and every byte the server wrote on stdout, from spawn to exit, is a JSON-RPC message.
 *
 * Processes run as `node --import tsx <file>` (no extra tsx CLI process in between), with `cwd` the
 * repository root. One process per describe; every wait is bounded.
 */
import { afterAll, beforeAll, describe, expect, it, layer } from "@effect/vitest"
import { Client as V2Client } from "@modelcontextprotocol/client"
import { StdioClientTransport as V2Stdio } from "@modelcontextprotocol/client/stdio"
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport as V1Stdio } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as ChildProcess from "node:child_process"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as JsonRpc from "../../src/JsonRpc.js"
import * as McpClient from "../../src/McpClient.js"
import * as Stdio from "../../src/transport/Stdio.js"
import { assertSpecValid, type Revision } from "../support/SpecSchema.js"
import { asArray, get, type JsonObject } from "../support/Wire.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const LIBRARY = Path.join(ROOT, "examples", "library.ts")
const SDK_V1_SERVER = Path.join(ROOT, "test", "fixtures", "sdk-v1-server.ts")
const SDK_V2_SERVER = Path.join(ROOT, "test", "fixtures", "sdk-v2-server.ts")
const EVERYTHING = createRequire(import.meta.url)
  .resolve("@modelcontextprotocol/server-everything/package.json")
  .replace(/package\.json$/, "dist/index.js")
const NODE_ARGS = ["--import", "tsx"]
const WAIT_MS = 15_000
const WAIT: Duration.DurationInput = `${WAIT_MS} millis`
const MODERN = "2026-07-28"
const LEGACY = "2025-11-25"

/** Rejects when `promise` has not settled within {@link WAIT_MS}. */
const bounded = <A>(what: string, promise: Promise<A>): Promise<A> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${WAIT_MS} ms: ${what}`)), WAIT_MS)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

const names = (tools: unknown): Array<string> => asArray(get(tools, "tools")).map((t) => String(get(t, "name"))).sort()

// ---------------------------------------------------------------------------------------------
// 1 + 2: official SDK clients against the reference library
// ---------------------------------------------------------------------------------------------

/** What both official clients offer (results read as JSON through `get`). */
interface SdkClient {
  listTools(): Promise<unknown>
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>
  readResource(params: { uri: string }): Promise<unknown>
  getPrompt(params: { name: string; arguments: Record<string, string> }): Promise<unknown>
  complete(params: {
    ref: { type: "ref/prompt"; name: string }
    argument: { name: string; value: string }
  }): Promise<unknown>
  close(): Promise<void>
}

/** The same five checks for any official client connected to `examples/library.ts --stdio`. */
const libraryChecks = (client: () => SdkClient): void => {
  it("tools/list: add and logo", async () => {
    expect(names(await bounded("listTools", client().listTools()))).toEqual(["add", "logo"])
  })

  it("tools/call add {numbers: [1, 2, 3]} → structuredContent {sum: 6}", async () => {
    const result = await bounded("callTool add", client().callTool({ name: "add", arguments: { numbers: [1, 2, 3] } }))
    expect(get(result, "structuredContent")).toEqual({ sum: 6 })
    expect(get(result, "isError") ?? false).toBe(false)
  })

  it("resources/read people://ada (template) → Ada Lovelace", async () => {
    const result = await bounded("readResource", client().readResource({ uri: "people://ada" }))
    expect(get(result, "contents", 0, "uri")).toBe("people://ada")
    expect(get(result, "contents", 0, "text")).toBe("Ada Lovelace")
  })

  it("prompts/get introduce {id: alan}", async () => {
    const result = await bounded("getPrompt", client().getPrompt({ name: "introduce", arguments: { id: "alan" } }))
    expect(get(result, "messages", 0, "content", "text")).toBe("Introduce Alan Turing in one sentence.")
  })

  it("completion/complete ref/prompt introduce, id \"a\" → ada, alan", async () => {
    const result = await bounded(
      "complete",
      client().complete({ ref: { type: "ref/prompt", name: "introduce" }, argument: { name: "id", value: "a" } })
    )
    expect(get(result, "completion", "values")).toEqual(["ada", "alan"])
  })
}

/** The v1 stdio transport, remembering the version the client negotiated (the v1 client has no getter). */
class V1StdioRecording extends V1Stdio {
  negotiated: string | undefined = undefined
  setProtocolVersion(version: string): void {
    this.negotiated = version
  }
}

describe("official SDK v1 client → examples/library.ts --stdio", () => {
  let client: V1Client | undefined
  let transport: V1StdioRecording | undefined
  const sdk = (): SdkClient => {
    if (client === undefined) throw new Error("not connected")
    return client
  }

  beforeAll(async () => {
    transport = new V1StdioRecording({
      command: process.execPath,
      args: [...NODE_ARGS, LIBRARY, "--stdio"],
      cwd: ROOT,
      stderr: "ignore"
    })
    client = new V1Client({ name: "interop-v1", version: "0.0.0" }) // assigned first: afterAll closes it even on a timeout
    await bounded("v1 connect", client.connect(transport))
  })

  afterAll(async () => {
    await client?.close()
  })

  it("negotiates 2025-11-25 with the library", () => {
    expect(transport?.negotiated).toBe(LEGACY)
    expect(client?.getServerVersion()?.name).toBe("presa-library")
    expect(client?.getServerCapabilities()?.completions).toBeDefined()
  })

  libraryChecks(sdk)
})

describe("official SDK v2 client pinned to 2026-07-28 → examples/library.ts --stdio", () => {
  let client: V2Client | undefined
  const sdk = (): SdkClient => {
    if (client === undefined) throw new Error("not connected")
    return client
  }

  beforeAll(async () => {
    const c = new V2Client({ name: "interop-v2", version: "0.0.0" }, {
      versionNegotiation: { mode: { pin: MODERN } }
    })
    client = c // assigned first: afterAll closes it even on a timeout
    await bounded(
      "v2 connect",
      c.connect(
        new V2Stdio({
          command: process.execPath,
          args: [...NODE_ARGS, LIBRARY, "--stdio"],
          cwd: ROOT,
          stderr: "ignore"
        })
      )
    )
  })

  afterAll(async () => {
    await client?.close()
  })

  it("is modern, 2026-07-28", () => {
    expect(client?.getProtocolEra()).toBe("modern")
    expect(client?.getNegotiatedProtocolVersion()).toBe(MODERN)
    expect(get(client?.getDiscoverResult(), "supportedVersions")).toContain(MODERN)
  })

  libraryChecks(sdk)
})

// ---------------------------------------------------------------------------------------------
// 3 + 4: our client against the official servers
// ---------------------------------------------------------------------------------------------

class Peer extends Context.Tag("test/interop/Stdio/Peer")<Peer, McpClient.McpClient>() {}

const peer = (command: string, args: ReadonlyArray<string>): Layer.Layer<Peer, McpClient.CallError> =>
  Layer.scoped(
    Peer,
    Effect.gen(function*() {
      const transport = yield* Stdio.spawn({ command, args, cwd: ROOT, stderr: () => Effect.void })
      return yield* McpClient.connect(transport, {
        name: "interop-presa",
        version: "0.0.0",
        probeTimeout: "3 seconds",
        requestTimeout: WAIT
      })
    })
  )

const textBlocks = (result: { readonly content: ReadonlyArray<unknown> }): Array<string> =>
  result.content.filter((b) => get(b, "type") === "text").map((b) => String(get(b, "text")))

const sdkFixtureChecks = (fixture: "v1" | "v2") =>
  Effect.gen(function*() {
    const client = yield* Peer
    const tools = yield* client.listAllTools
    expect(tools.map((t) => t.name).sort()).toEqual(["add", "echo"])

    const echo = yield* client.callTool("echo", { text: "hi" })
    expect(textBlocks(echo)).toEqual(["hi"])

    const add = yield* client.callTool("add", { a: 2, b: 3 })
    expect(add.structuredContent).toEqual({ sum: 5 })
    expect(textBlocks(add)).toEqual(["5"])

    const resource = yield* client.readResource("test://greeting")
    expect(get(resource, "contents", 0, "text")).toBe(`hello from ${fixture}`)

    const prompt = yield* client.getPrompt("greet", { name: "Ada" })
    expect(get(prompt, "messages", 0, "content", "text")).toBe("Hello, Ada!")
  })

layer(peer(process.execPath, [...NODE_ARGS, SDK_V1_SERVER]), { timeout: 30_000 })(
  "our client → official SDK v1 server fixture (stdio)",
  (it) => {
    it.effect("detects legacy 2025-11-25", () =>
      Effect.gen(function*() {
        const { info } = yield* Peer
        expect(info.era).toBe("legacy")
        expect(info.protocolVersion).toBe(LEGACY)
        expect(info.serverInfo?.name).toBe("sdk-v1-fixture")
      }))

    it.effect("tools/list, tools/call echo + add, resources/read, prompts/get", () => sdkFixtureChecks("v1"))
  }
)

layer(peer(process.execPath, [...NODE_ARGS, SDK_V2_SERVER]), { timeout: 30_000 })(
  "our client → official SDK v2 server fixture (stdio)",
  (it) => {
    it.effect("detects modern 2026-07-28", () =>
      Effect.gen(function*() {
        const { info } = yield* Peer
        expect(info.era).toBe("modern")
        expect(info.protocolVersion).toBe(MODERN)
        expect(info.supportedVersions).toContain(MODERN)
      }))

    it.effect("tools/list, tools/call echo + add, resources/read, prompts/get", () => sdkFixtureChecks("v2"))
  }
)

layer(peer(process.execPath, [EVERYTHING, "stdio"]), { timeout: 30_000 })(
  "our client → @modelcontextprotocol/server-everything (stdio)",
  (it) => {
    it.effect("detects legacy and lists its tools", () =>
      Effect.gen(function*() {
        const client = yield* Peer
        expect(client.info.era).toBe("legacy")
        expect(client.info.protocolVersion).toBe(LEGACY)
        expect(client.info.serverInfo?.name).toBe("mcp-servers/everything")
        const tools = (yield* client.listAllTools).map((t) => t.name)
        expect(tools).toEqual(expect.arrayContaining(["echo", "get-sum", "get-tiny-image"]))
      }))

    it.effect("tools/call echo and get-sum", () =>
      Effect.gen(function*() {
        const client = yield* Peer
        expect(textBlocks(yield* client.callTool("echo", { message: "hi" }))).toEqual(["Echo: hi"])
        expect(textBlocks(yield* client.callTool("get-sum", { a: 1, b: 2 }))).toEqual(["The sum of 1 and 2 is 3."])
      }))
  }
)

// ---------------------------------------------------------------------------------------------
// 5: raw hosts against examples/library.ts --stdio
// ---------------------------------------------------------------------------------------------

const META: JsonObject = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "raw-host", version: "0.0.0" }
}

const initializeParams = (protocolVersion: string): JsonObject => ({
  protocolVersion,
  capabilities: {},
  clientInfo: { name: "raw-host", version: "0.0.0" }
})

interface RawHost {
  /** Writes one message as one line. */
  readonly send: (message: JsonObject) => Effect.Effect<void>
  /**
   * Sends a request and waits (bounded) for the response with its id; the response is checked
   * against the official schema of `rev`.
   */
  readonly request: (
    rev: Revision,
    id: JsonRpc.RequestId,
    method: string,
    params?: JsonObject
  ) => Effect.Effect<JsonObject>
  /** Closes stdin, waits (bounded) for the exit, and yields the exit code and ALL stdout text. */
  readonly finish: Effect.Effect<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>
}

/** Spawns `examples/library.ts --stdio` with raw pipes; killed when the Scope closes if still alive. */
const rawHost: Effect.Effect<RawHost, never, Scope.Scope> = Effect.acquireRelease(
  Effect.gen(function*() {
    const lines = yield* Queue.unbounded<string>()
    const exited = yield* Deferred.make<number | null>()
    const child = ChildProcess.spawn(process.execPath, [...NODE_ARGS, LIBRARY, "--stdio"], {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "pipe"]
    })
    const out: Array<Buffer> = []
    let partial: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => {
      out.push(chunk)
      let start = 0
      for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
        Queue.unsafeOffer(lines, Buffer.concat([...partial, chunk.subarray(start, nl)]).toString("utf8"))
        partial = []
        start = nl + 1
      }
      if (start < chunk.length) partial.push(chunk.subarray(start))
    })
    let stderr = ""
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk
    })
    child.on("close", (code) => Deferred.unsafeDone(exited, Exit.succeed(code)))
    const seen = new Map<string, JsonObject>()
    const key = (id: unknown) => JSON.stringify(id)

    const send = (message: JsonObject) =>
      Effect.async<void>((resume) => {
        child.stdin.write(JSON.stringify(message) + "\n", () => resume(Effect.void))
      })

    const awaitResponse = (id: JsonRpc.RequestId): Effect.Effect<JsonObject> =>
      Effect.suspend(() => {
        const hit = seen.get(key(id))
        if (hit !== undefined) return Effect.succeed(hit)
        return Queue.take(lines).pipe(
          Effect.flatMap((text) => {
            const classified = JsonRpc.parse(text)
            if (classified._tag === "Response") {
              seen.set(key(classified.message.id), JSON.parse(text) as JsonObject)
            }
            return awaitResponse(id)
          })
        )
      })

    const host: RawHost & { readonly kill: () => void } = {
      kill: () => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      },
      send,
      request: (rev, id, method, params) =>
        send(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params }).pipe(
          Effect.zipRight(awaitResponse(id)),
          Effect.timeoutFail({
            duration: WAIT,
            onTimeout: () => new Error(`timed out waiting for the response to ${method} (id ${key(id)})\n${stderr}`)
          }),
          Effect.orDie,
          Effect.tap((response) => Effect.sync(() => assertSpecValid(rev, method, response)))
        ),
      finish: Effect.sync(() => child.stdin.end()).pipe(
        Effect.zipRight(Deferred.await(exited)),
        Effect.timeoutFail({ duration: WAIT, onTimeout: () => new Error("timed out waiting for the server to exit") }),
        Effect.orDie,
        Effect.map((code) => ({ code, stdout: Buffer.concat(out).toString("utf8"), stderr }))
      )
    }
    return host
  }),
  (host) => Effect.sync(host.kill)
)

/**
 * Every byte on stdout, from spawn to exit, is newline-terminated JSON-RPC: responses to the ids
 * in `ids` (each exactly once) and nothing else.
 */
const assertStdoutIsJsonRpc = (stdout: string, ids: ReadonlyArray<JsonRpc.RequestId>): void => {
  expect(stdout.endsWith("\n"), "stdout ends with a newline").toBe(true)
  const lines = stdout.slice(0, -1).split("\n")
  const answered: Array<string> = []
  for (const text of lines) {
    const classified = JsonRpc.parse(text)
    expect(classified._tag, `stdout line is not a JSON-RPC response: ${text.slice(0, 300)}`).toBe("Response")
    if (classified._tag === "Response") answered.push(JSON.stringify(classified.message.id))
  }
  expect(answered.sort()).toEqual(ids.map((id) => JSON.stringify(id)).sort())
}

/**
 * The library's other methods (logo, resources, templates, prompts, completion; `ping` in legacy
 * revisions only), ids from `firstId`; each reply is checked against the schema of `rev` by
 * `request` and spot-checked here. Yields the ids used.
 */
const everyOtherMethod = (host: RawHost, rev: Revision, firstId: number, extra: JsonObject) =>
  Effect.gen(function*() {
    let id = firstId
    const ask = (method: string, params: JsonObject = {}) => host.request(rev, id++, method, { ...params, ...extra })

    const logo = yield* ask("tools/call", { name: "logo", arguments: {} })
    expect(get(logo, "result", "content", 1, "type")).toBe("image")
    expect(get(logo, "result", "content", 1, "mimeType")).toBe("image/png")
    const resources = yield* ask("resources/list")
    expect(get(resources, "result", "resources", 0, "uri")).toBe("file:///readme.txt")
    const readme = yield* ask("resources/read", { uri: "file:///readme.txt" })
    expect(get(readme, "result", "contents", 0, "text")).toBe("Read me first.")
    const templates = yield* ask("resources/templates/list")
    expect(get(templates, "result", "resourceTemplates", 0, "uriTemplate")).toBe("people://{id}")
    const prompts = yield* ask("prompts/list")
    expect(get(prompts, "result", "prompts", 0, "name")).toBe("introduce")
    const prompt = yield* ask("prompts/get", { name: "introduce", arguments: { id: "ada" } })
    expect(get(prompt, "result", "messages", 0, "content", "text")).toBe("Introduce Ada Lovelace in one sentence.")
    const completion = yield* ask("completion/complete", {
      ref: { type: "ref/resource", uri: "people://{id}" },
      argument: { name: "id", value: "al" }
    })
    expect(get(completion, "result", "completion", "values")).toEqual(["alan"])
    const unknown = yield* ask("tools/call", { name: "nope", arguments: {} })
    expect(get(unknown, "error", "code")).toBe(-32602) // protocol.md §7.4
    if (rev !== MODERN) {
      const pong = yield* ask("ping")
      expect(get(pong, "result")).toEqual({})
    }
    return Array.from({ length: id - firstId }, (_, i) => firstId + i)
  })

describe("raw hosts → examples/library.ts --stdio", () => {
  it.scoped("host A: server/discover first → DiscoverResult; then initialize 2025-11-25 on the same pipe", () =>
    Effect.gen(function*() {
      const host = yield* rawHost

      // A dual-era host probes first (protocol.md §1.2)
      const discover = yield* host.request(MODERN, "probe", "server/discover", { _meta: META })
      expect(get(discover, "result", "resultType")).toBe("complete")
      expect(get(discover, "result", "supportedVersions")).toEqual(expect.arrayContaining([MODERN, LEGACY]))
      expect(get(discover, "result", "capabilities", "tools")).toBeDefined()
      expect(get(discover, "result", "_meta", "io.modelcontextprotocol/serverInfo", "name")).toBe("presa-library")

      // A host that had got -32601 would fall back to initialize: it must work on this same pipe
      const init = yield* host.request(LEGACY, 1, "initialize", initializeParams(LEGACY))
      expect(get(init, "result", "protocolVersion")).toBe(LEGACY)
      expect(get(init, "result", "serverInfo", "name")).toBe("presa-library")
      yield* host.send({ jsonrpc: "2.0", method: "notifications/initialized" })

      const legacyList = yield* host.request(LEGACY, 2, "tools/list")
      expect(names(get(legacyList, "result"))).toEqual(["add", "logo"])
      expect(get(legacyList, "result", "resultType")).toBeUndefined()

      const legacyCall = yield* host.request(LEGACY, 3, "tools/call", { name: "add", arguments: { numbers: [4, 5] } })
      expect(get(legacyCall, "result", "structuredContent")).toEqual({ sum: 9 })

      // Each message is routed by its own shape (§1.1): a modern request after initialize stays modern,
      // a legacy-shaped server/discover is an unknown legacy method
      const modernList = yield* host.request(MODERN, 4, "tools/list", { _meta: META })
      expect(names(get(modernList, "result"))).toEqual(["add", "logo"])
      expect(get(modernList, "result", "resultType")).toBe("complete")
      const legacyDiscover = yield* host.request(LEGACY, 5, "server/discover")
      expect(get(legacyDiscover, "error", "code")).toBe(-32601)

      // the rest of the library in both eras on this one pipe, each reply checked against its revision
      const legacyIds = yield* everyOtherMethod(host, LEGACY, 100, {})
      const modernIds = yield* everyOtherMethod(host, MODERN, 200, { _meta: META })

      const { code, stdout } = yield* host.finish
      expect(code).toBe(0)
      assertStdoutIsJsonRpc(stdout, ["probe", 1, 2, 3, 4, 5, ...legacyIds, ...modernIds])
    }))

  it.scoped("host B: initialize 2025-06-18 first, never discovers; tools/list and tools/call work", () =>
    Effect.gen(function*() {
      const host = yield* rawHost
      const rev = "2025-06-18"

      const init = yield* host.request(rev, 0, "initialize", initializeParams(rev))
      expect(get(init, "result", "protocolVersion")).toBe(rev)
      expect(get(init, "result", "capabilities", "tools")).toBeDefined()
      yield* host.send({ jsonrpc: "2.0", method: "notifications/initialized" })

      const list = yield* host.request(rev, 1, "tools/list")
      expect(names(get(list, "result"))).toEqual(["add", "logo"])

      const call = yield* host.request(rev, "call-1", "tools/call", {
        name: "add",
        arguments: { numbers: [1, 2, 3.5] }
      })
      expect(get(call, "result", "structuredContent")).toEqual({ sum: 6.5 })
      expect(get(call, "result", "isError") ?? false).toBe(false)

      const read = yield* host.request(rev, 2, "resources/read", { uri: "people://alan" })
      expect(get(read, "result", "contents", 0, "text")).toBe("Alan Turing")

      // the rest of the library, each reply checked against the 2025-06-18 schema
      const ids = yield* everyOtherMethod(host, rev, 100, {})

      const { code, stdout } = yield* host.finish
      expect(code).toBe(0)
      assertStdoutIsJsonRpc(stdout, [0, 1, "call-1", 2, ...ids])
    }))
})
