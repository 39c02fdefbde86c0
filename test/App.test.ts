/**
 * MCP Apps, server and client side (the `App` module): views and app tools in a server, in a
 * `Part` and as definition Layers; build-time `DefinitionError`s; the host's capability as a
 * handler sees it in both eras (in process and over Streamable HTTP on 127.0.0.1); our client's
 * `App.toolMeta` / `App.readView`. Every response our client receives in process is cross-checked
 * against the official JSON Schema of its revision (`checkedTransport`), and every `_meta.ui` we
 * send against the official ext-apps schema (`@modelcontextprotocol/ext-apps/schema.json`).
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Ajv2020 } from "ajv/dist/2020.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { App, InProcess, JsonRpc, McpClient, McpServer, Part, Resource, Tool } from "presa-mcp"
import * as Stdio from "presa-mcp/transport/Stdio"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import { MALFORMED_UI } from "./support/AppsMeta.js"
import { checkedTransport } from "./support/Wire.js"

const HTML = "<!doctype html><html><head><title>t</title></head><body><div id=\"result\"></div></body></html>"
const UI: App.ResourceMeta = {
  csp: {
    connectDomains: ["https://api.example.com"],
    resourceDomains: ["https://cdn.example.com", "https://*.example.org"],
    frameDomains: ["https://www.youtube.com"],
    baseUriDomains: ["https://cdn.example.com"]
  },
  permissions: { clipboardWrite: {}, camera: {} },
  domain: "board.example.com",
  prefersBorder: false
}

const board = App.view({ uri: "ui://test/board", name: "board", description: "a board", html: HTML, ui: UI })

const show = App.tool({
  name: "show",
  description: "Doubles a number and shows it",
  view: board,
  parameters: Schema.Struct({ n: Schema.Int }),
  success: Schema.Struct({ n: Schema.Int, double: Schema.Int }),
  text: ({ double, n }) => `${n} doubled is ${double}`,
  handler: ({ n }) => ({ n, double: 2 * n })
})

const refresh = App.tool({
  name: "refresh",
  view: board,
  visibility: ["app"],
  success: Schema.Struct({ fresh: Schema.Boolean }),
  handler: () => Effect.succeed({ fresh: true })
})

/** Says what the handler sees of the host's capability. */
const probe = Tool.make({
  name: "probe",
  success: Schema.Struct({
    era: Schema.String,
    supports: Schema.Boolean,
    mimeTypes: Schema.NullOr(Schema.Array(Schema.String))
  }),
  handler: (_, ctx) => ({
    era: ctx.era,
    supports: App.supportsViews(ctx),
    mimeTypes: Option.match(App.hostCapability(ctx), { onNone: () => null, onSome: (c) => c.mimeTypes ?? [] })
  })
})

const options = { name: "apps-test", version: "0.0.0", tools: [show, refresh, probe], resources: [board] }

const VERSIONS = ["2026-07-28", "2025-11-25", "2025-06-18"] as const

/** Connects our client in process, every response cross-checked against the official schema. */
const connect = (server: McpServer.McpServer, clientOptions: McpClient.Options) =>
  Effect.gen(function*() {
    const { checked, transport } = yield* checkedTransport(yield* InProcess.client(server))
    const client = yield* McpClient.connect(transport, clientOptions)
    return { client, checked }
  })

// The official ext-apps schema (read from the installed package, never copied).
const extAppsSchema: unknown = JSON.parse(
  readFileSync(createRequire(import.meta.url).resolve("@modelcontextprotocol/ext-apps/schema.json"), "utf8")
)
const ajv = new Ajv2020({ strict: false, allErrors: true })
ajv.addSchema(extAppsSchema as object)
const EXT_APPS_ID = "https://modelcontextprotocol.io/ext-apps/schema.json"
const assertExtApps = (definition: string, value: unknown) => {
  const validate = ajv.getSchema(`${EXT_APPS_ID}#/$defs/${definition}`)
  assert.isDefined(validate, definition)
  const ok = validate(value)
  expect(ok ? [] : validate.errors, `${definition}: ${JSON.stringify(value)}`).toEqual([])
}

const callResult = (result: { readonly structuredContent?: unknown; readonly content: ReadonlyArray<unknown> }) => ({
  structuredContent: result.structuredContent,
  content: result.content
})

describe("App: views and app tools in a server", () => {
  for (const version of VERSIONS) {
    it.scoped(`${version}: lists the tools with _meta.ui, lists and reads the view, calls the tool`, () =>
      Effect.gen(function*() {
        const server = yield* McpServer.make(options)
        const { checked, client } = yield* connect(server, { versions: [version], apps: true })
        assert.strictEqual(client.info.protocolVersion, version)

        const tools = yield* client.listAllTools
        const byName = new Map(tools.map((t) => [t.name, t]))
        const listedShow = byName.get("show")
        const listedRefresh = byName.get("refresh")
        assert.isDefined(listedShow)
        assert.isDefined(listedRefresh)
        expect(listedShow._meta).toEqual({
          ui: { resourceUri: "ui://test/board", visibility: ["model", "app"] },
          "ui/resourceUri": "ui://test/board"
        })
        expect(listedRefresh._meta?.ui).toEqual({ resourceUri: "ui://test/board", visibility: ["app"] })
        assertExtApps("McpUiToolMeta", listedShow._meta?.ui)
        assertExtApps("McpUiToolMeta", listedRefresh._meta?.ui)
        expect(listedShow.outputSchema).toMatchObject({ type: "object", required: ["n", "double"] })
        expect(App.toolMeta(listedShow)).toEqual(
          Option.some({ resourceUri: "ui://test/board", visibility: ["model", "app"] })
        )
        expect(App.isVisibleTo(listedShow, "model")).toBe(true)
        expect(App.isVisibleTo(listedRefresh, "model")).toBe(false)
        expect(App.isVisibleTo(listedRefresh, "app")).toBe(true)

        const resources = yield* client.listAllResources
        expect(resources).toEqual([{
          uri: "ui://test/board",
          name: "board",
          description: "a board",
          mimeType: "text/html;profile=mcp-app",
          _meta: { ui: UI }
        }])

        const raw = yield* client.readResource("ui://test/board")
        expect(raw.contents).toEqual([{
          uri: "ui://test/board",
          mimeType: "text/html;profile=mcp-app",
          text: HTML,
          _meta: { ui: UI }
        }])
        assertExtApps("McpUiResourceMeta", raw.contents[0]?._meta?.ui)
        const view = yield* App.readView(client, "ui://test/board")
        expect(view).toEqual({
          uri: "ui://test/board",
          mimeType: App.MIME_TYPE,
          html: HTML,
          ui: UI,
          _meta: { ui: UI }
        })

        expect(callResult(yield* client.callTool("show", { n: 21 }))).toEqual({
          structuredContent: { n: 21, double: 42 },
          content: [{ type: "text", text: "21 doubled is 42" }]
        })
        expect(callResult(yield* client.callTool("refresh"))).toEqual({
          structuredContent: { fresh: true },
          content: [{ type: "text", text: "{\"fresh\":true}" }]
        })
        expect((yield* client.callTool("probe")).structuredContent).toEqual({
          era: version === "2026-07-28" ? "modern" : "legacy",
          supports: true,
          mimeTypes: ["text/html;profile=mcp-app"]
        })
        expect(yield* Ref.get(checked)).toBeGreaterThanOrEqual(7)
      }))

    it.scoped(`${version}: a host without the extension gets the text result and no app-only tool`, () =>
      Effect.gen(function*() {
        const server = yield* McpServer.make(options)
        const { client } = yield* connect(server, { versions: [version] })
        const names = (yield* client.listAllTools).map((t) => t.name).sort()
        expect(names).toEqual(["probe", "show"])
        const result = yield* client.callTool("show", { n: 2 })
        expect(result.content).toEqual([{ type: "text", text: "2 doubled is 4" }])
        const refused = yield* Effect.flip(client.callTool("refresh"))
        assert.instanceOf(refused, JsonRpc.McpError)
        expect(refused.code).toBe(-32602)
        expect((yield* client.callTool("probe")).structuredContent).toMatchObject({ supports: false, mimeTypes: null })
      }))
  }

  it.scoped("a declared extension without the HTML MIME type is not a host that shows views", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make(options)
      const { client } = yield* connect(server, {
        capabilities: { extensions: { [App.EXTENSION_ID]: { mimeTypes: ["text/uri-list"] } } }
      })
      expect((yield* client.callTool("probe")).structuredContent).toEqual({
        era: "modern",
        supports: false,
        mimeTypes: ["text/uri-list"]
      })
      expect((yield* client.listAllTools).map((t) => t.name)).not.toContain("refresh")
    }))

  it.scoped("an explicit capabilities entry wins over Options.apps", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make(options)
      const { client } = yield* connect(server, {
        apps: true,
        capabilities: { extensions: { [App.EXTENSION_ID]: { mimeTypes: ["text/uri-list", App.MIME_TYPE] } } }
      })
      expect((yield* client.callTool("probe")).structuredContent).toMatchObject({
        supports: true,
        mimeTypes: ["text/uri-list", App.MIME_TYPE]
      })
    }))

  it.scoped("a blob view is sent as base64 and read back as HTML; an effectful view sees the context", () =>
    Effect.gen(function*() {
      const blob = App.view({ uri: "ui://test/blob", name: "blob", html: new TextEncoder().encode("<p>héllo</p>") })
      const era = App.view({
        uri: "ui://test/era",
        name: "era",
        html: (ctx) => Effect.succeed(`<p>${ctx.era}</p>`)
      })
      const server = yield* McpServer.make({ name: "blob", version: "0", resources: [blob, era] })
      const { client } = yield* connect(server, {})
      const raw = yield* client.readResource("ui://test/blob")
      expect(raw.contents).toEqual([{
        uri: "ui://test/blob",
        mimeType: App.MIME_TYPE,
        blob: Buffer.from("<p>héllo</p>").toString("base64")
      }])
      expect((yield* App.readView(client, "ui://test/blob")).html).toBe("<p>héllo</p>")
      expect((yield* App.readView(client, "ui://test/blob")).ui).toEqual({})
      expect((yield* App.readView(client, "ui://test/era")).html).toBe("<p>modern</p>")
    }))

  it.scoped("readView refuses what is not a view (ClientError InvalidResult) and passes on -32602", () =>
    Effect.gen(function*() {
      const plain = Resource.make({ uri: "ui://test/plain", name: "plain", mimeType: "text/html", handler: () => HTML })
      const server = yield* McpServer.make({ name: "plain", version: "0", resources: [plain] })
      const { client } = yield* connect(server, {})
      const notView = yield* Effect.flip(App.readView(client, "ui://test/plain"))
      assert.strictEqual(notView._tag, "ClientError")
      if (notView._tag === "ClientError") expect(notView.reason).toBe("InvalidResult")
      const missing = yield* Effect.flip(App.readView(client, "ui://test/missing"))
      assert.instanceOf(missing, JsonRpc.McpError)
      expect(missing.code).toBe(-32602)
    }))

  it("decodeView: a bad blob or a malformed _meta.ui is InvalidResult", () => {
    const badBlob = App.decodeView("ui://x", { contents: [{ uri: "ui://x", mimeType: App.MIME_TYPE, blob: "%%%" }] })
    assert(Either.isLeft(badBlob))
    expect(badBlob.left.reason).toBe("InvalidResult")
    const badMeta = App.decodeView("ui://x", {
      contents: [{ uri: "ui://x", mimeType: App.MIME_TYPE, text: HTML, _meta: { ui: { prefersBorder: "yes" } } }]
    })
    assert(Either.isLeft(badMeta))
    expect(badMeta.left.message).toContain("_meta.ui")
  })

  it("the official ext-apps schema check is live (it refuses what the spec refuses)", () => {
    const validate = ajv.getSchema(`${EXT_APPS_ID}#/$defs/McpUiToolMeta`)
    assert.isDefined(validate)
    expect(validate({ visibility: ["robot"] })).toBe(false)
    const resourceMeta = ajv.getSchema(`${EXT_APPS_ID}#/$defs/McpUiResourceMeta`)
    assert.isDefined(resourceMeta)
    expect(resourceMeta({ csp: { connectDomains: "https://a.example" } })).toBe(false)
  })

  it("toolMeta: the deprecated flat key, defaults, and what is not UI metadata", () => {
    expect(App.toolMeta({ _meta: { "ui/resourceUri": "ui://a" } })).toEqual(Option.some({ resourceUri: "ui://a" }))
    expect(App.toolMeta({ _meta: { ui: { visibility: ["app"] }, "ui/resourceUri": "ui://a" } })).toEqual(
      Option.some({ visibility: ["app"], resourceUri: "ui://a" })
    )
    expect(App.toolMeta({})).toEqual(Option.none())
    expect(App.toolMeta({ _meta: { ui: { visibility: ["robot"] } } })).toEqual(Option.none())
    expect(App.isVisibleTo({}, "app")).toBe(true)
    expect(App.isVisibleTo({ _meta: { ui: { resourceUri: "ui://a" } } }, "model")).toBe(true)
    expect(App.isVisibleTo({ _meta: { ui: { visibility: ["robot"] } } }, "model")).toBe(false)
  })

  it("a malformed _meta.ui (refused by the official McpUiToolMeta schema) is visible to no one and links no view", () => {
    const validate = ajv.getSchema(`${EXT_APPS_ID}#/$defs/McpUiToolMeta`)
    assert.isDefined(validate)
    for (const { label, meta } of MALFORMED_UI) {
      expect(validate(meta.ui), label).toBe(false)
      expect(App.toolMeta({ _meta: meta }), label).toEqual(Option.none())
      expect(App.isVisibleTo({ _meta: meta }, "model"), label).toBe(false)
      expect(App.isVisibleTo({ _meta: meta }, "app"), label).toBe(false)
    }
  })

  it.scoped("supportsViews: an extension entry without the HTML MIME type (or without mimeTypes) is not enough", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make(options)
      for (const settings of [{}, { mimeTypes: [] }, { mimeTypes: "text/html;profile=mcp-app" }]) {
        const { client } = yield* connect(server, { capabilities: { extensions: { [App.EXTENSION_ID]: settings } } })
        expect((yield* client.callTool("probe")).structuredContent, JSON.stringify(settings)).toMatchObject({
          supports: false
        })
        // the app-only tool is not listed to it
        expect((yield* client.listAllTools).map((t) => t.name).sort()).toEqual(["probe", "show"])
      }
    }))

  it.scoped("a non-object success is sent as {value}; the default text is its JSON", () =>
    Effect.gen(function*() {
      const count = App.tool({ name: "count", view: board, success: Schema.Number, handler: () => 3 })
      const server = yield* McpServer.make({ name: "n", version: "0", tools: [count], resources: [board] })
      const { client } = yield* connect(server, {})
      expect(callResult(yield* client.callTool("count"))).toEqual({
        structuredContent: { value: 3 },
        content: [{ type: "text", text: "{\"value\":3}" }]
      })
      const listed = (yield* client.listAllTools)[0]
      expect(listed?.outputSchema).toEqual({
        type: "object",
        properties: { value: { type: "number" } },
        required: ["value"]
      })
    }))

  it.scoped("a ToolError from an app tool is an isError result; bad arguments are one too", () =>
    Effect.gen(function*() {
      const failing = App.tool({
        name: "failing",
        view: board,
        parameters: Schema.Struct({ n: Schema.Int }),
        success: Schema.Struct({}),
        handler: ({ n }) => Effect.fail(new Tool.ToolError({ message: `no board for ${n}` }))
      })
      const server = yield* McpServer.make({ name: "f", version: "0", tools: [failing], resources: [board] })
      const { client } = yield* connect(server, {})
      const failed = yield* client.callTool("failing", { n: 1 })
      expect(failed).toMatchObject({ isError: true, content: [{ type: "text", text: "no board for 1" }] })
      expect(failed.structuredContent).toBeUndefined()
      const invalid = yield* client.callTool("failing", { n: "one" })
      expect(invalid.isError).toBe(true)
    }))

  it.scoped("an app-only tool's own visible predicate is asked after the capability", () =>
    Effect.gen(function*() {
      const hidden = App.tool({
        name: "hidden",
        view: board,
        visibility: ["app"],
        visible: () => false,
        success: Schema.Struct({}),
        handler: () => ({})
      })
      const server = yield* McpServer.make({ name: "h", version: "0", tools: [hidden, refresh], resources: [board] })
      const { client } = yield* connect(server, { apps: true })
      expect((yield* client.listAllTools).map((t) => t.name)).toEqual(["refresh"])
    }))
})

describe("App: definitions in parts and Layers", () => {
  const listed = (server: McpServer.McpServer) =>
    Effect.gen(function*() {
      const { client } = yield* connect(server, { apps: true })
      const tools = (yield* client.listAllTools).map((t) => t.name).sort()
      const resources = (yield* client.listAllResources).map((r) => r.uri)
      const view = yield* App.readView(client, "ui://test/board")
      return { tools, resources, html: view.html }
    })

  const expected = { tools: ["refresh", "show"], resources: ["ui://test/board"], html: HTML }

  it.scoped("Part.server: a part whose tools come before its view", () =>
    Effect.gen(function*() {
      const part = Part.make({ tools: [show, refresh], resources: [board] })
      const server = yield* Part.server({ name: "p", version: "0" }, [part])
      expect(yield* listed(server)).toEqual(expected)
    }))

  it.scoped("McpServer.part: a part's view is added before its tools (and removed after them)", () =>
    Effect.gen(function*() {
      const part = Part.make({ tools: [show, refresh], resources: [board] })
      const context = yield* Layer.build(
        McpServer.part(part).pipe(Layer.provideMerge(McpServer.layer({ name: "p", version: "0" })))
      )
      expect(yield* listed(Context.get(context, McpServer.McpServer))).toEqual(expected)
    }))

  it.scoped("single definition Layers: the view's Layer provided to the tools' Layers", () =>
    Effect.gen(function*() {
      const App1 = Layer.mergeAll(McpServer.tool(show), McpServer.tool(refresh)).pipe(
        Layer.provide(McpServer.resource(board)),
        Layer.provideMerge(McpServer.layer({ name: "l", version: "0" }))
      )
      const context = yield* Layer.build(App1)
      expect(yield* listed(Context.get(context, McpServer.McpServer))).toEqual(expected)
    }))

  it.scoped("a view and a tool needing a service: the Layers require it, the handlers see it", () =>
    Effect.gen(function*() {
      class Greeting extends Context.Tag("test/Greeting")<Greeting, { readonly word: string }>() {}
      const greeted = App.view({
        uri: "ui://test/greeted",
        name: "greeted",
        html: () => Effect.map(Greeting, (g) => `<p>${g.word}</p>`)
      })
      const greet = App.tool({
        name: "greet",
        view: greeted,
        success: Schema.Struct({ word: Schema.String }),
        handler: () => Effect.map(Greeting, (g) => ({ word: g.word }))
      })
      // The services are in the definitions' types: a Layer without Greeting does not type-check.
      // @ts-expect-error Greeting is required
      const missing: Layer.Layer<never, McpServer.DefinitionError, McpServer.McpServer> = McpServer.tool(greet)
      // @ts-expect-error Greeting is required
      const missingView: Layer.Layer<never, McpServer.DefinitionError, McpServer.McpServer> = McpServer.resource(
        greeted
      )
      expect([missing, missingView]).toHaveLength(2)
      const layer = McpServer.part(Part.make({ tools: [greet], resources: [greeted] })).pipe(
        Layer.provide(Layer.succeed(Greeting, { word: "hello" })),
        Layer.provideMerge(McpServer.layer({ name: "g", version: "0" }))
      )
      const { client } = yield* connect(Context.get(yield* Layer.build(layer), McpServer.McpServer), {})
      expect((yield* client.callTool("greet")).structuredContent).toEqual({ word: "hello" })
      expect((yield* App.readView(client, "ui://test/greeted")).html).toBe("<p>hello</p>")
    }))

  it.scoped("a part's tool linking a view nobody serves fails the Layer with DefinitionError", () =>
    Effect.gen(function*() {
      const part = Part.make({ tools: [show] })
      const error = yield* Effect.flip(
        Layer.build(McpServer.part(part).pipe(Layer.provideMerge(McpServer.layer({ name: "p", version: "0" }))))
      )
      assert.strictEqual(error._tag, "DefinitionError")
      expect(error).toMatchObject({ kind: "tool", name: "show" })
    }))
})

describe("App: misuse is a DefinitionError when the server is built or changed", () => {
  it.effect("a view whose URI is not ui://", () =>
    Effect.gen(function*() {
      const bad = App.view({ uri: "https://example.com/board", name: "bad", html: HTML })
      const error = yield* Effect.flip(McpServer.make({ name: "x", version: "0", resources: [bad] }))
      expect(error).toMatchObject({ _tag: "DefinitionError", kind: "resource", name: "https://example.com/board" })
      expect(error.message).toContain("ui://")
    }))

  it.effect("a tool linking a view the server does not serve", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(McpServer.make({ name: "x", version: "0", tools: [show] }))
      expect(error).toMatchObject({ _tag: "DefinitionError", kind: "tool", name: "show" })
      expect(error.message).toContain("ui://test/board")
    }))

  it.effect("a tool linking a view that is not ui:// (served or not)", () =>
    Effect.gen(function*() {
      const web = App.view({ uri: "https://example.com/board", name: "web", html: HTML })
      const linked = App.tool({ name: "linked", view: web, success: Schema.Struct({}), handler: () => ({}) })
      const plain = Resource.make({ uri: "https://example.com/board", name: "web", handler: () => HTML })
      const error = yield* Effect.flip(McpServer.make({ name: "x", version: "0", tools: [linked], resources: [plain] }))
      expect(error).toMatchObject({ _tag: "DefinitionError", kind: "tool", name: "linked" })
    }))

  it.effect("live changes: a tool is added only once its view is served; a linked view is not removed", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "live", version: "0" })
      const early = yield* Effect.flip(server.addTool(show))
      expect(early).toMatchObject({ kind: "tool", name: "show" })
      yield* server.addResource(board)
      yield* server.addTool(show)
      const removal = yield* Effect.flip(server.removeResource(board.uri))
      expect(removal).toMatchObject({ kind: "tool", name: "show" })
      expect((yield* server.snapshot).resources.map((r) => r.uri)).toEqual(["ui://test/board"])
      yield* server.removeTool("show")
      yield* server.removeResource(board.uri)
      expect((yield* server.snapshot).resources).toEqual([])
    }))

  it.effect("a view served by a ui:// template satisfies the link", () =>
    Effect.gen(function*() {
      const perItem = Resource.template({
        uriTemplate: "ui://test/{name}",
        name: "views",
        mimeType: App.MIME_TYPE,
        handler: () => HTML
      })
      const server = yield* McpServer.make({ name: "t", version: "0", tools: [show], resourceTemplates: [perItem] })
      expect((yield* server.snapshot).tools.map((t) => t.name)).toEqual(["show"])
    }))

  it.effect("raw _meta.ui on a plain tool (a proxy's, say) is not checked", () =>
    Effect.gen(function*() {
      const forwarded = Tool.fromJsonSchema({
        name: "forwarded",
        _meta: { ui: { resourceUri: "ui://elsewhere/view" } },
        handler: () => "ok"
      })
      const server = yield* McpServer.make({ name: "t", version: "0", tools: [forwarded] })
      expect((yield* server.snapshot).tools.map((t) => t.name)).toEqual(["forwarded"])
    }))
})

describe("App: the host's capability over Streamable HTTP (127.0.0.1)", () => {
  for (const version of ["2026-07-28", "2025-11-25"] as const) {
    for (const apps of [true, false]) {
      it.scoped(`${version}, apps: ${apps}: the handler sees what the host declared`, () =>
        Effect.gen(function*() {
          const server = yield* McpServer.make(options)
          const { url } = yield* StreamableHttp.serve(server, { port: 0 })
          const transport = yield* StreamableHttp.client({ url })
          const client = yield* McpClient.connect(transport, { versions: [version], apps })
          expect((yield* client.callTool("probe")).structuredContent).toEqual({
            era: version === "2026-07-28" ? "modern" : "legacy",
            supports: apps,
            mimeTypes: apps ? [App.MIME_TYPE] : null
          })
          const names = (yield* client.listAllTools).map((t) => t.name).sort()
          expect(names).toEqual(apps ? ["probe", "refresh", "show"] : ["probe", "show"])
          if (apps) expect((yield* App.readView(client, "ui://test/board")).ui).toEqual(UI)
        }))
    }
  }
})

describe("App: examples/apps.ts over stdio, our client in both eras", () => {
  const EXAMPLE = fileURLToPath(new URL("../examples/apps.ts", import.meta.url))
  const ROOT = fileURLToPath(new URL("..", import.meta.url))
  // (the other two combinations are covered over HTTP above, and by SDK v1 over stdio in test/interop/Apps.test.ts)
  const cases = [["2026-07-28", true], ["2025-11-25", false]] as const
  for (const [version, apps] of cases) {
    it.scoped(
      `${version}, apps: ${apps}: app-only tools follow the declared capability`,
      () =>
        Effect.gen(function*() {
          const transport = yield* Stdio.spawn({
            command: process.execPath,
            args: ["--import", "tsx", EXAMPLE, "--stdio"],
            cwd: ROOT,
            stderr: () => Effect.void
          })
          const client = yield* McpClient.connect(transport, { versions: [version], apps })
          assert.strictEqual(client.info.protocolVersion, version)
          const names = (yield* client.listAllTools).map((t) => t.name).sort()
          expect(names).toEqual(apps ? ["count_letters", "reverse_text"] : ["count_letters"])
          const counted = yield* client.callTool("count_letters", { text: "abc" })
          expect(counted.structuredContent).toEqual({ text: "abc", letters: 3, vowels: 1 })
          const view = yield* App.readView(client, "ui://letters/board")
          expect(view.ui).toEqual({ prefersBorder: true })
          expect(view.html).toContain("id=\"model-result\"")
        }),
      { timeout: 30_000 }
    )
  }
})
