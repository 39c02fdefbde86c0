/**
 * MCP Apps through `McpProxy` (issue #41 item 2, proxy part; docs/proxy.md, "MCP Apps").
 *
 * Two Apps backends (our servers with raw `_meta.ui`) both serve the view `ui://dice/view.html`.
 * The host is the official one: the SDK v2 `Client` (declaring `io.modelcontextprotocol/ui`)
 * over Streamable HTTP to the proxy, the `AppBridge` of `@modelcontextprotocol/ext-apps/app-bridge`
 * over it, and a view built with the official `App` of `@modelcontextprotocol/ext-apps`, the two
 * joined by the SDK's in-memory transport pair. The view calls its tools by its own server's
 * names (`roll`), not the proxy's (`apps_roll`), and reaches them; a model-only tool is not
 * reachable that way; a host without the extension sees no app-only tool.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { App } from "@modelcontextprotocol/ext-apps"
import { AppBridge } from "@modelcontextprotocol/ext-apps/app-bridge"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { App as PresaApp, InProcess, McpClient, McpServer, Resource, Tool } from "presa-mcp"
import * as McpProxy from "../src/McpProxy.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import { MALFORMED_UI } from "./support/AppsMeta.js"

const WAIT: Duration.DurationInput = "20 seconds"
const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.timeoutFail(effect, { duration: WAIT, onTimeout: () => new Error(`timed out after ${Duration.format(WAIT)}`) })

const MIME = "text/html;profile=mcp-app"

/** An Apps backend: a tool linking the view, an app-only tool, a model-only tool, the view. */
const makeAppsBackend = (label: string, appTool: string) =>
  McpServer.make({
    name: label,
    version: "1.0.0",
    tools: [
      Tool.fromJsonSchema({
        name: "show",
        _meta: { ui: { resourceUri: "ui://dice/view.html" } },
        handler: () => `shown by ${label}`
      }),
      Tool.fromJsonSchema({
        name: appTool,
        _meta: { ui: { visibility: ["app"] } },
        handler: () => `${appTool} by ${label}`
      }),
      Tool.fromJsonSchema({
        name: "reveal",
        _meta: { ui: { visibility: ["model"] } },
        handler: () => "for the model"
      })
    ],
    resources: [
      Resource.make({
        uri: "ui://dice/view.html",
        name: "view",
        mimeType: MIME,
        handler: (uri) => [{ uri, mimeType: MIME, text: `<p>${label}</p>`, _meta: { ui: { prefersBorder: true } } }]
      })
    ]
  })

const connect = (server: McpServer.McpServer) =>
  Effect.flatMap(InProcess.client(server), (t) => McpClient.connect(t, McpProxy.inputHandlers))

const promise = <A>(f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: (e) => e })

describe("McpProxy and MCP Apps", () => {
  it.live("a view hosted by the official AppBridge calls its tools by its own names through the proxy", () =>
    Effect.gen(function*() {
      const apps = yield* makeAppsBackend("apps", "roll")
      const games = yield* makeAppsBackend("games", "shuffle")
      const proxy = yield* McpProxy.make([
        { prefix: "apps", client: yield* connect(apps) },
        { prefix: "games", client: yield* connect(games) }
      ])
      const { url } = yield* StreamableHttp.serve(proxy)

      const host = yield* Effect.acquireRelease(
        promise(async () => {
          const client = new Client({ name: "apps-host", version: "1.0.0" }, {
            capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [MIME] } } }
          })
          await client.connect(new StreamableHTTPClientTransport(new URL(url)))
          return client
        }),
        (client) => Effect.promise(() => client.close())
      )

      // What the host lists: view URIs in the proxy's namespace, _meta.ui kept, app-only tools
      // flagged (the host keeps them from its model), the aliases app-only too.
      const tools = (yield* promise(() => host.listTools())).tools
      const byName = new Map(tools.map((t) => [t.name, t]))
      expect(byName.get("apps_show")?._meta).toEqual({ ui: { resourceUri: "ui://apps/dice/view.html" } })
      expect(byName.get("games_show")?._meta).toEqual({ ui: { resourceUri: "ui://games/dice/view.html" } })
      expect(byName.get("apps_roll")?._meta).toEqual({ ui: { visibility: ["app"] } })
      expect(byName.get("roll")?._meta).toEqual({ ui: { visibility: ["app"] } })
      expect(byName.get("shuffle")?._meta).toEqual({ ui: { visibility: ["app"] } })
      expect(byName.get("apps_reveal")?._meta).toEqual({ ui: { visibility: ["model"] } })
      // a model-only tool has no alias: a view cannot reach it by its own name
      expect(byName.has("reveal")).toBe(false)

      // The view's resource, read through the proxy: its content's _meta.ui is kept.
      const view = yield* promise(() => host.readResource({ uri: "ui://apps/dice/view.html" }))
      const content = view.contents[0]
      assert(content !== undefined && "text" in content)
      assert.strictEqual(content.text, "<p>apps</p>")
      assert.strictEqual(content.mimeType, MIME)
      assert.strictEqual(content.uri, "ui://apps/dice/view.html")
      expect(content._meta).toEqual({ ui: { prefersBorder: true } })
      const other = yield* promise(() => host.readResource({ uri: "ui://games/dice/view.html" }))
      expect(other.contents[0] !== undefined && "text" in other.contents[0] ? other.contents[0].text : "").toBe(
        "<p>games</p>"
      )

      // The official host bridge and view, joined in memory.
      const [viewSide, hostSide] = InMemoryTransport.createLinkedPair()
      const bridge = new AppBridge(host, { name: "apps-host", version: "1.0.0" }, { serverTools: {} })
      const app = new App({ name: "dice-view", version: "1.0.0" }, {}, { autoResize: false })
      yield* Effect.acquireRelease(
        promise(async () => {
          await bridge.connect(hostSide)
          await app.connect(viewSide)
        }),
        () => Effect.promise(() => Promise.allSettled([app.close(), bridge.close()]))
      )

      const rolled = yield* promise(() => app.callServerTool({ name: "roll", arguments: {} }))
      expect(rolled.content).toEqual([{ type: "text", text: "roll by apps" }])
      const shuffled = yield* promise(() => app.callServerTool({ name: "shuffle", arguments: {} }))
      expect(shuffled.content).toEqual([{ type: "text", text: "shuffle by games" }])
      // a model-only tool by its own name: unknown to the proxy
      const refused = yield* Effect.either(
        promise(() => app.callServerTool({ name: "reveal", arguments: {} }))
      )
      const refusedText = refused._tag === "Left"
        ? String(refused.left)
        : JSON.stringify(refused.right)
      expect(refusedText).toMatch(/reveal/)
      assert(refused._tag === "Left" || refused.right.isError === true)

      // A caller that does not declare the extension sees no app-only tool and no alias.
      const plain = yield* McpClient.connect(yield* InProcess.client(proxy))
      const names = (yield* plain.listAllTools).map((t) => t.name).sort()
      expect(names).toEqual(["apps_reveal", "apps_show", "games_reveal", "games_show"])
      for (const name of ["roll", "apps_roll"]) {
        const hidden = yield* Effect.flip(plain.callTool(name, {}))
        assert(hidden._tag === "McpError")
        assert.strictEqual(hidden.code, -32602)
      }
    }).pipe(Effect.scoped, bounded))

  it.live("two backends offering a view the same tool name: no alias (a view must not reach the other backend)", () =>
    Effect.gen(function*() {
      const one = yield* makeAppsBackend("one", "roll")
      const two = yield* makeAppsBackend("two", "roll")
      const proxy = yield* McpProxy.make([
        { prefix: "one", client: yield* connect(one) },
        { prefix: "two", client: yield* connect(two) }
      ])
      const front = yield* McpClient.connect(yield* InProcess.client(proxy), {
        capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [MIME] } } }
      })
      const names = (yield* front.listAllTools).map((t) => t.name)
      // a 2025-11-25 host declares the extension in `initialize`: the same view of the tools
      const legacy = yield* McpClient.connect(yield* InProcess.client(proxy), {
        versions: ["2025-11-25"],
        capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [MIME] } } }
      })
      assert.strictEqual(legacy.info.era, "legacy")
      expect((yield* legacy.listAllTools).map((t) => t.name).sort()).toEqual([...names].sort())
      expect(names).toContain("one_roll")
      expect(names).toContain("two_roll")
      expect(names).not.toContain("roll")
      expect(names).not.toContain("show")
      // a view's call by that name is refused with the prefixed offers named
      const ambiguous = yield* Effect.flip(front.callTool("roll", {}))
      assert(ambiguous._tag === "McpError")
      assert.strictEqual(ambiguous.code, -32602)
      expect(ambiguous.message).toContain("one_roll, two_roll")
    }).pipe(Effect.scoped, bounded))

  it.live("from an mcpServers file: examples/apps.ts's app-only tool reaches Apps hosts through the proxy, and only them", () =>
    Effect.gen(function*() {
      const config = yield* McpProxy.decodeConfig({
        mcpServers: { apps: { command: process.execPath, args: ["--import", "tsx", "examples/apps.ts", "--stdio"] } }
      })
      const proxy = yield* McpProxy.fromConfig(config, { client: { requestTimeout: "20 seconds" } })
      // the proxy's own client declared the extension: the backend listed reverse_text to it
      const host = yield* McpClient.connect(yield* InProcess.client(proxy), { apps: true })
      const hostNames = (yield* host.listAllTools).map((t) => t.name)
      expect(hostNames).toContain("apps_count_letters")
      expect(hostNames).toContain("apps_reverse_text")
      const counted = yield* host.callTool("apps_count_letters", { text: "Hello World" })
      expect(counted.structuredContent).toMatchObject({ letters: 10, vowels: 3 })
      const listed = (yield* host.listAllTools).find((t) => t.name === "apps_count_letters")
      expect(listed?._meta).toMatchObject({ ui: { resourceUri: "ui://apps/letters/board" } })
      const reversed = yield* host.callTool("apps_reverse_text", { text: "abc" })
      expect(reversed.structuredContent).toMatchObject({ reversed: "cba" })
      // a caller without the extension sees the model tool only
      const plain = yield* McpClient.connect(yield* InProcess.client(proxy))
      const plainNames = (yield* plain.listAllTools).map((t) => t.name)
      expect(plainNames).toContain("apps_count_letters")
      expect(plainNames).not.toContain("apps_reverse_text")
    }).pipe(Effect.scoped, bounded))

  it.live("a malformed _meta.ui: listed to Apps hosts only, visible there to no one, no alias; {} is no Apps host", () =>
    Effect.gen(function*() {
      const backend = yield* McpServer.make({
        name: "odd",
        version: "1.0.0",
        tools: [
          Tool.fromJsonSchema({ name: "show", _meta: { ui: { resourceUri: "ui://m/view" } }, handler: () => "shown" }),
          ...MALFORMED_UI.map(({ meta }, i) =>
            Tool.fromJsonSchema({ name: `malformed_${i}`, _meta: meta, handler: () => "malformed" })
          )
        ],
        resources: [
          Resource.make({
            uri: "ui://m/view",
            name: "view",
            mimeType: MIME,
            handler: (uri) => [{ uri, mimeType: MIME, text: "<p>m</p>" }]
          })
        ]
      })
      const proxy = yield* McpProxy.make([{ prefix: "odd", client: yield* connect(backend) }])
      const malformed = MALFORMED_UI.map((_, i) => `odd_malformed_${i}`)

      // an Apps host gets them (with the backend's _meta.ui) and, reading them by the same rule,
      // shows none to its model; no view may call one by the backend's name (no alias)
      const host = yield* McpClient.connect(yield* InProcess.client(proxy), { apps: true })
      const listed = yield* host.listAllTools
      expect(listed.map((t) => t.name).sort()).toEqual(["odd_show", "show", ...malformed].sort())
      for (const name of malformed) {
        const tool = listed.find((t) => t.name === name)
        assert(tool !== undefined, name)
        assert.isFalse(PresaApp.isVisibleTo(tool, "model"), name)
        assert.isFalse(PresaApp.isVisibleTo(tool, "app"), name)
      }
      for (const [i] of MALFORMED_UI.entries()) {
        const refused = yield* Effect.flip(host.callTool(`malformed_${i}`, {}))
        assert(refused._tag === "McpError")
        assert.strictEqual(refused.code, -32602)
      }

      // a caller without the extension, or declaring it without the HTML MIME type, gets none of them
      for (const extensions of [undefined, { "io.modelcontextprotocol/ui": {} }]) {
        const plain = yield* McpClient.connect(
          yield* InProcess.client(proxy),
          extensions === undefined ? {} : { capabilities: { extensions } }
        )
        expect((yield* plain.listAllTools).map((t) => t.name), JSON.stringify(extensions)).toEqual(["odd_show"])
      }
    }).pipe(Effect.scoped, bounded))
})
