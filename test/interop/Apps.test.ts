/**
 * MCP Apps interop: the official SDK clients against examples/apps.ts.
 *
 * - SDK v1 (`@modelcontextprotocol/sdk`, legacy 2025-11-25) and SDK v2 (`@modelcontextprotocol/client`
 *   pinned to 2026-07-28) over Streamable HTTP on 127.0.0.1, each as a host that declares the
 *   `io.modelcontextprotocol/ui` extension and as one that does not: the first lists both tools with
 *   their `_meta.ui`, reads the view (the ext-apps MIME type, the HTML, `_meta.ui` on the contents)
 *   and calls the model's tool; the second lists only the model's tool and gets its text result.
 * - SDK v1 over stdio: `examples/apps.ts --stdio` as a child process, the same checks.
 *
 * The ext-apps constants (`EXTENSION_ID`, `RESOURCE_MIME_TYPE`, `RESOURCE_URI_META_KEY`) come from
 * the official package, so a drift between it and `App` fails here. Every wait is bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from "@modelcontextprotocol/client"
import {
  EXTENSION_ID,
  getUiCapability,
  RESOURCE_MIME_TYPE,
  RESOURCE_URI_META_KEY
} from "@modelcontextprotocol/ext-apps/server"
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport as V1Stdio } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { App } from "presa-mcp"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import { makeAppsServer } from "../../examples/apps-definitions.js"
import { MODERN, promise } from "../fixtures/interop-http.js"
import { asArray, get } from "../support/Wire.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const EXAMPLE = Path.join(ROOT, "examples", "apps.ts")
const CLIENT_INFO = { name: "apps-interop", version: "0.0.0" }
const BOARD = "ui://letters/board"
const UI_CAPABILITIES = { extensions: { [EXTENSION_ID]: { mimeTypes: [RESOURCE_MIME_TYPE] } } }

/** What the checks use of an SDK client (both generations fit it; results are read as JSON). */
interface SdkCalls {
  listTools(): Promise<unknown>
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>
  readResource(params: { uri: string }): Promise<unknown>
  close(): Promise<void>
}

const connected = <C extends SdkCalls>(client: C, connect: (client: C) => Promise<void>) =>
  Effect.acquireRelease(
    Effect.as(promise("connect", () => connect(client)), client),
    (c) => promise("close", () => c.close()).pipe(Effect.ignore)
  )

const toolsByName = (listed: unknown): Map<string, unknown> =>
  new Map(asArray(get(listed, "tools")).map((t) => [String(get(t, "name")), t]))

/** A host that declares the extension: both tools with `_meta.ui`, the view, the model's tool. */
const checkHost = (client: SdkCalls) =>
  Effect.gen(function*() {
    const tools = toolsByName(yield* promise("listTools", () => client.listTools()))
    expect([...tools.keys()].sort()).toEqual(["count_letters", "reverse_text"])
    expect(get(tools.get("count_letters"), "_meta")).toEqual({
      ui: { resourceUri: BOARD, visibility: ["model"] },
      [RESOURCE_URI_META_KEY]: BOARD
    })
    expect(get(tools.get("reverse_text"), "_meta", "ui")).toEqual({ resourceUri: BOARD, visibility: ["app"] })

    const read = yield* promise("readResource", () => client.readResource({ uri: BOARD }))
    const contents = asArray(get(read, "contents"))
    expect(contents).toHaveLength(1)
    expect(get(contents[0], "uri")).toBe(BOARD)
    expect(get(contents[0], "mimeType")).toBe(RESOURCE_MIME_TYPE)
    expect(get(contents[0], "_meta", "ui")).toEqual({ prefersBorder: true })
    const html = String(get(contents[0], "text"))
    expect(html.startsWith("<!doctype html>")).toBe(true)
    for (const id of ["status", "result", "call-app-tool", "app-result", "call-model-tool", "model-result"]) {
      expect(html).toContain(`id="${id}"`)
    }
    expect(html).toContain("const McpApps = {")
    expect(html).toContain("app.connect()")

    yield* checkText(client)
  })

/** The model's tool answers any host with structured data and its text fallback. */
const checkText = (client: SdkCalls) =>
  Effect.gen(function*() {
    const result = yield* promise(
      "callTool",
      () => client.callTool({ name: "count_letters", arguments: { text: "Hello World" } })
    )
    expect(get(result, "structuredContent")).toEqual({ text: "Hello World", letters: 10, vowels: 3 })
    expect(get(result, "content")).toEqual([{ type: "text", text: "\"Hello World\" has 10 letters, 3 of them vowels" }])
  })

/** A host without the extension: only the model's tool, whose text result works. */
const checkTextOnlyHost = (client: SdkCalls) =>
  Effect.gen(function*() {
    const tools = toolsByName(yield* promise("listTools", () => client.listTools()))
    expect([...tools.keys()]).toEqual(["count_letters"])
    yield* checkText(client)
  })

const serveExample = Effect.gen(function*() {
  const server = yield* makeAppsServer()
  return (yield* StreamableHttp.serve(server, { port: 0 })).url
})

describe("MCP Apps: our constants are the official ones", () => {
  it("EXTENSION_ID, MIME_TYPE, the deprecated key and the host capability", () => {
    expect(App.EXTENSION_ID).toBe(EXTENSION_ID)
    expect(App.MIME_TYPE).toBe(RESOURCE_MIME_TYPE)
    expect(App.LEGACY_RESOURCE_URI_KEY).toBe(RESOURCE_URI_META_KEY)
    expect(App.HOST_CAPABILITY).toEqual({ mimeTypes: [RESOURCE_MIME_TYPE] })
    expect(getUiCapability({ extensions: { [App.EXTENSION_ID]: { mimeTypes: [App.MIME_TYPE] } } })).toEqual({
      mimeTypes: [RESOURCE_MIME_TYPE]
    })
  })
})

describe("MCP Apps over Streamable HTTP: official SDK clients → examples/apps-definitions.ts", () => {
  it.scoped("SDK v1 (2025-11-25) declaring the extension: tools with _meta.ui, the view, the tool", () =>
    Effect.gen(function*() {
      const url = yield* serveExample
      const client = yield* connected(
        new V1Client(CLIENT_INFO, { capabilities: UI_CAPABILITIES }),
        (c) => c.connect(new V1Transport(new URL(url)))
      )
      yield* checkHost(client)
    }))

  it.scoped("SDK v1 without the extension: the model's tool only, with its text result", () =>
    Effect.gen(function*() {
      const url = yield* serveExample
      const client = yield* connected(new V1Client(CLIENT_INFO), (c) => c.connect(new V1Transport(new URL(url))))
      yield* checkTextOnlyHost(client)
    }))

  it.scoped("SDK v2 pinned to 2026-07-28 declaring the extension: tools with _meta.ui, the view, the tool", () =>
    Effect.gen(function*() {
      const url = yield* serveExample
      const client = yield* connected(
        new V2Client(CLIENT_INFO, { capabilities: UI_CAPABILITIES, versionNegotiation: { mode: { pin: MODERN } } }),
        (c) => c.connect(new V2Transport(new URL(url)))
      )
      yield* checkHost(client)
    }))

  it.scoped("SDK v2 pinned to 2026-07-28 without the extension: the model's tool only, with its text result", () =>
    Effect.gen(function*() {
      const url = yield* serveExample
      const client = yield* connected(
        new V2Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } }),
        (c) => c.connect(new V2Transport(new URL(url)))
      )
      yield* checkTextOnlyHost(client)
    }))
})

describe("MCP Apps over stdio: SDK v1 → examples/apps.ts --stdio", () => {
  let client: V1Client | undefined
  beforeAll(async () => {
    client = new V1Client(CLIENT_INFO, { capabilities: UI_CAPABILITIES })
    await client.connect(
      new V1Stdio({
        command: process.execPath,
        args: ["--import", "tsx", EXAMPLE, "--stdio"],
        cwd: ROOT,
        stderr: "ignore"
      })
    )
  }, 30_000)
  afterAll(async () => {
    await client?.close()
  })

  it.effect("tools with _meta.ui, the view, the tool", () =>
    Effect.suspend(() => {
      if (client === undefined) return Effect.die("not connected")
      return checkHost(client)
    }))
})
