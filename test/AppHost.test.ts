/**
 * `AppHost` (issue #41, point 3): the view's Content-Security-Policy from `_meta.ui.csp`
 * (declared, undeclared and hostile values), the host bridge over an in-memory port in front of a
 * real server (our `McpServer` in process, reached through an `McpClient`), and the module's
 * platform neutrality (esbuild bundles it for the browser, where a Node import cannot resolve).
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import { build } from "esbuild"
import { fileURLToPath } from "node:url"
import { AppHost, InProcess, JsonRpc, McpClient, McpServer, Resource, Tool } from "presa-mcp"
import { MALFORMED_UI } from "./support/AppsMeta.js"

const DEFAULT = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
  "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; " +
  "base-uri 'self'"

const directives = (policy: string): Map<string, string> =>
  new Map(
    policy.split("; ").map((d) => {
      const [name = "", ...values] = d.split(" ")
      return [name, values.join(" ")]
    })
  )

describe("AppHost.contentSecurityPolicy", () => {
  it("undeclared: the spec's restrictive default", () => {
    for (const csp of [undefined, null, "https://a.example", [], 42]) {
      const built = AppHost.contentSecurityPolicy(csp)
      assert.strictEqual(built.policy, DEFAULT)
      assert.isFalse(built.declared)
      expect(built.approved).toEqual({ connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] })
    }
    // declared but empty: the same directives
    assert.strictEqual(AppHost.contentSecurityPolicy({}).policy, DEFAULT)
  })

  it("declared origins extend exactly the directives the spec maps them to", () => {
    const built = AppHost.contentSecurityPolicy({
      connectDomains: ["https://api.example.com", "wss://live.example.com:8443"],
      resourceDomains: ["https://cdn.example.com", "https://*.cdn.example.net/lib/"],
      frameDomains: ["https://www.youtube.com"],
      baseUriDomains: ["https://base.example.com"]
    })
    const d = directives(built.policy)
    assert.strictEqual(d.get("default-src"), "'none'")
    assert.strictEqual(d.get("connect-src"), "https://api.example.com wss://live.example.com:8443")
    const resources = "https://cdn.example.com https://*.cdn.example.net/lib/"
    assert.strictEqual(d.get("script-src"), `'self' 'unsafe-inline' ${resources}`)
    assert.strictEqual(d.get("style-src"), `'self' 'unsafe-inline' ${resources}`)
    assert.strictEqual(d.get("img-src"), `'self' data: ${resources}`)
    assert.strictEqual(d.get("media-src"), `'self' data: ${resources}`)
    assert.strictEqual(d.get("font-src"), `'self' ${resources}`)
    assert.strictEqual(d.get("frame-src"), "https://www.youtube.com")
    assert.strictEqual(d.get("base-uri"), "https://base.example.com")
    assert.strictEqual(d.get("object-src"), "'none'")
    assert.deepStrictEqual(built.rejected, [])
    assert.isTrue(built.declared)
    // an IPv4 loopback origin with a port and an IPv6 one
    const local = AppHost.contentSecurityPolicy({ connectDomains: ["http://127.0.0.1:4100", "http://[::1]:4100"] })
    assert.strictEqual(directives(local.policy).get("connect-src"), "http://127.0.0.1:4100 http://[::1]:4100")
  })

  it("hostile values are rejected and never reach the policy", () => {
    const hostile: ReadonlyArray<unknown> = [
      "*",
      "https://*",
      "https:",
      "http:",
      "data:",
      "blob:",
      "'unsafe-eval'",
      "'self'",
      "'none'",
      "https://a.example.com; script-src *",
      "https://a.example.com\nscript-src *",
      "https://a.example.com\r\n",
      "https://a.example.com 'unsafe-eval'",
      "https://a.example.com,https://b.example.com",
      "https://a.example.com'",
      "\"https://a.example.com\"",
      "javascript:alert(1)",
      "not a url",
      "example.com",
      "//example.com",
      "ftp://files.example.com",
      "https://a.example.com:0",
      "https://a.example.com:99999",
      "https://user@a.example.com",
      "https://a.example.com/path?query",
      "https://a.example.com/#frag",
      "https://*.*.example.com",
      `https://${"a".repeat(600)}.example.com`,
      "",
      42,
      null,
      { origin: "https://a.example.com" },
      ["https://a.example.com"]
    ]
    for (const field of ["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"] as const) {
      const built = AppHost.contentSecurityPolicy({ [field]: hostile })
      assert.strictEqual(built.rejected.length, hostile.length, `${field}: every entry rejected`)
      assert.isTrue(built.rejected.every((r) => r.field === field && r.reason.length > 0))
      expect(built.approved[field]).toEqual([])
      // the policy is the default one: nothing declared got in
      assert.strictEqual(built.policy, DEFAULT)
      assert.notInclude(built.policy, "\n")
      assert.notInclude(built.policy, "unsafe-eval")
    }
    // a list that is not an array is rejected as a whole
    const notArray = AppHost.contentSecurityPolicy({ connectDomains: "https://a.example.com" })
    assert.strictEqual(notArray.policy, DEFAULT)
    assert.strictEqual(notArray.rejected[0]?.reason, "not an array")
  })

  it("the good entries of a mixed list are kept, the others reported", () => {
    const built = AppHost.contentSecurityPolicy({
      connectDomains: ["https://ok.example.com", "*", "https://ok.example.com", "https://x.example.com; img-src *"]
    })
    assert.strictEqual(directives(built.policy).get("connect-src"), "https://ok.example.com")
    expect(built.rejected.map((r) => r.value)).toEqual(["*", "https://x.example.com; img-src *"])
  })

  it("at most 64 entries per field", () => {
    const many = Array.from({ length: 70 }, (_, i) => `https://h${i}.example.com`)
    const built = AppHost.contentSecurityPolicy({ connectDomains: many })
    assert.strictEqual(built.approved.connectDomains.length, 64)
    assert.strictEqual(built.rejected.length, 1)
  })
})

describe("AppHost visibility and resourceUri", () => {
  const tool = (meta: JsonRpc.JsonObject | undefined) => ({
    name: "t",
    inputSchema: { type: "object" },
    ...(meta === undefined ? {} : { _meta: meta })
  })
  it("reads _meta.ui", () => {
    expect(AppHost.visibility(tool(undefined))).toEqual(["model", "app"])
    expect(AppHost.visibility(tool({ ui: { visibility: ["app"] } }))).toEqual(["app"])
    // A malformed _meta.ui is visible to no one (the library's one rule, as App.isVisibleTo and
    // McpProxy). These two lines expected ["model"] (unknown entries dropped) and ["model", "app"]
    // (a non-array visibility ignored) before: the latter showed an app-only tool to the model.
    expect(AppHost.visibility(tool({ ui: { visibility: ["model", "root"] } }))).toEqual([])
    expect(AppHost.visibility(tool({ ui: { visibility: "app" } }))).toEqual([])
    assert.strictEqual(AppHost.resourceUri(tool({ ui: { resourceUri: "ui://a/b" } })), "ui://a/b")
    assert.strictEqual(AppHost.resourceUri(tool({ "ui/resourceUri": "ui://old" })), "ui://old")
    assert.strictEqual(AppHost.resourceUri(tool({ ui: { resourceUri: 3 } })), undefined)
  })
  it("a malformed _meta.ui: visible to no one, no view", () => {
    for (const { label, meta } of MALFORMED_UI) {
      expect(AppHost.visibility(tool(meta)), label).toEqual([])
      assert.strictEqual(AppHost.resourceUri(tool(meta)), undefined, label)
    }
  })
})

const server = McpServer.make({
  name: "apps-unit",
  version: "1.0.0",
  tools: [
    Tool.make({
      name: "show",
      _meta: { ui: { resourceUri: "ui://unit/view" } },
      parameters: Schema.Struct({ n: Schema.Number }),
      handler: ({ n }) => ({ doubled: n * 2 })
    }),
    Tool.make({
      name: "app_only",
      _meta: { ui: { resourceUri: "ui://unit/view", visibility: ["app"] } },
      handler: () => "from the app-only tool"
    }),
    Tool.make({ name: "model_only", _meta: { ui: { visibility: ["model"] } }, handler: () => "secret" }),
    ...MALFORMED_UI.map(({ meta }, i) => Tool.make({ name: `malformed_${i}`, _meta: meta, handler: () => "malformed" }))
  ],
  resources: [
    Resource.make({
      uri: "ui://unit/view",
      name: "view",
      mimeType: AppHost.MIME_TYPE,
      handler: (uri) => [{ uri, mimeType: AppHost.MIME_TYPE, text: "<!DOCTYPE html><p>view</p>" }]
    })
  ]
})

/** A view on an in-memory port: what the host posts is queued; `send` delivers a message to the host. */
const setup = (options: Partial<AppHost.Options> = {}) =>
  Effect.gen(function*() {
    const client = yield* McpClient.connect(yield* InProcess.client(yield* server))
    const tools = yield* client.listAllTools
    const tool = tools.find((t) => t.name === "show")
    if (tool === undefined) return yield* Effect.die("the server lists no tool show")
    const posted = yield* Queue.unbounded<unknown>()
    let listener: ((message: unknown) => void) | undefined
    const port: AppHost.Port = {
      postMessage: (message) => Queue.unsafeOffer(posted, message),
      subscribe: (onMessage) => {
        listener = onMessage
        return () => {
          listener = undefined
        }
      }
    }
    const bridge = yield* AppHost.make({ port, server: client, tool, tools, ...options })
    const send = (message: unknown) => Effect.sync(() => listener?.(message))
    const next = Queue.take(posted).pipe(
      Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error("no message from the host") })
    )
    const ask = (id: number, method: string, params?: JsonRpc.JsonObject) =>
      Effect.zipRight(send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }), next)
    return { bridge, send, next, ask, posted, client, isSubscribed: () => listener !== undefined }
  })

const initialize = { protocolVersion: "2026-01-26", appInfo: { name: "unit-view", version: "1" }, appCapabilities: {} }

describe("AppHost.make", () => {
  it.live("answers ui/initialize, then sends the tool input and result only after initialized", () =>
    Effect.gen(function*() {
      const { ask, bridge, next, posted, send } = yield* setup({ hostContext: { theme: "dark" } })
      const sent = yield* Effect.fork(
        Effect.zipRight(
          bridge.sendToolInput({ n: 2 }),
          bridge.sendToolResult({ content: [], structuredContent: { doubled: 4 } })
        )
      )
      const init = yield* ask(1, "ui/initialize", initialize)
      expect(init).toMatchObject({
        jsonrpc: "2.0",
        id: 1,
        result: {
          protocolVersion: "2026-01-26",
          hostCapabilities: { serverTools: {}, serverResources: {}, logging: {} },
          hostContext: { theme: "dark", displayMode: "inline", toolInfo: { tool: { name: "show" } } }
        }
      })
      // nothing before the view's initialized notification
      assert.strictEqual(yield* Queue.size(posted), 0)
      expect(Option.getOrUndefined(yield* bridge.appInfo)).toEqual({ name: "unit-view", version: "1" })
      yield* send({ jsonrpc: "2.0", method: "ui/notifications/initialized" })
      yield* bridge.initialized
      expect(yield* next).toEqual({
        jsonrpc: "2.0",
        method: "ui/notifications/tool-input",
        params: { arguments: { n: 2 } }
      })
      expect(yield* next).toEqual({
        jsonrpc: "2.0",
        method: "ui/notifications/tool-result",
        params: { content: [], structuredContent: { doubled: 4 } }
      })
      yield* Fiber.join(sent)
    }).pipe(Effect.scoped))

  it.live("partial input, cancellation and host-context changes, in the order sent", () =>
    Effect.gen(function*() {
      const { ask, bridge, next, send } = yield* setup()
      yield* ask(1, "ui/initialize", initialize)
      yield* send({ jsonrpc: "2.0", method: "ui/notifications/initialized" })
      yield* bridge.sendToolInputPartial({ n: 1 })
      yield* bridge.sendToolInput({ n: 12 })
      yield* bridge.sendToolCancelled("user action")
      yield* bridge.setHostContext({ theme: "light" })
      expect(yield* next).toEqual({
        jsonrpc: "2.0",
        method: "ui/notifications/tool-input-partial",
        params: { arguments: { n: 1 } }
      })
      expect(yield* next).toEqual({
        jsonrpc: "2.0",
        method: "ui/notifications/tool-input",
        params: { arguments: { n: 12 } }
      })
      expect(yield* next).toEqual({
        jsonrpc: "2.0",
        method: "ui/notifications/tool-cancelled",
        params: { reason: "user action" }
      })
      expect(yield* next).toEqual({
        jsonrpc: "2.0",
        method: "ui/notifications/host-context-changed",
        params: { theme: "light" }
      })
    }).pipe(Effect.scoped))

  it.live("relays tools/call under the visibility rule", () =>
    Effect.gen(function*() {
      const { ask } = yield* setup()
      const app = yield* ask(2, "tools/call", { name: "app_only", arguments: {} })
      expect(app).toMatchObject({ id: 2, result: { content: [{ type: "text", text: "from the app-only tool" }] } })
      const both = yield* ask(3, "tools/call", { name: "show", arguments: { n: 21 } })
      expect(both).toMatchObject({ id: 3, result: { structuredContent: { doubled: 42 } } })
      for (const [id, name] of [[4, "model_only"], [5, "no_such_tool"]] as const) {
        const refused = yield* ask(id, "tools/call", { name, arguments: {} })
        expect(refused).toMatchObject({ id, error: { code: -32602, data: { name } } })
      }
      // a tool whose _meta.ui is malformed is not callable from a view either
      for (const [i] of MALFORMED_UI.entries()) {
        const name = `malformed_${i}`
        const refused = yield* ask(100 + i, "tools/call", { name, arguments: {} })
        expect(refused).toMatchObject({ id: 100 + i, error: { code: -32602, data: { name } } })
      }
      // the server's own JSON-RPC error is relayed as it is (bad arguments of a callable tool are
      // a tool result; an unknown resource is -32602 Resource not found)
      const view = yield* ask(8, "resources/read", { uri: "ui://unit/view" })
      expect(view).toMatchObject({
        id: 8,
        result: { contents: [{ uri: "ui://unit/view", text: "<!DOCTYPE html><p>view</p>" }] }
      })
      const read = yield* ask(6, "resources/read", { uri: "ui://unit/missing" })
      expect(read).toMatchObject({ id: 6, error: { code: -32602, message: "Resource not found" } })
      const badArgs = yield* ask(7, "tools/call", { name: "app_only", arguments: [1] })
      expect(badArgs).toMatchObject({ id: 7, error: { code: -32602 } })
    }).pipe(Effect.scoped))

  it.live("resolveTool: the view's name is mapped, the call sent under the server's name, visibility checked on it", () =>
    Effect.gen(function*() {
      // as a proxy that prefixes tools would: the view says "only", the server has "app_only"
      const { ask } = yield* setup({
        resolveTool: (name, tools) => tools.find((t) => t.name === `app_${name}` || t.name === `model_${name}`)
      })
      const mapped = yield* ask(1, "tools/call", { name: "only", arguments: {} })
      expect(mapped).toMatchObject({ id: 1, result: { content: [{ type: "text", text: "from the app-only tool" }] } })
      // the exact name no longer resolves (the resolver is the only lookup)
      expect(yield* ask(2, "tools/call", { name: "app_only", arguments: {} })).toMatchObject({
        error: { code: -32602 }
      })
    }).pipe(Effect.scoped))

  it.live("bad messages: -32600 for a request, nothing for a notification, -32601 for an unknown method", () =>
    Effect.gen(function*() {
      const { ask, next, posted, send } = yield* setup()
      yield* send({ jsonrpc: "1.0", id: 9, method: "ping" })
      expect(yield* next).toMatchObject({ id: 9, error: { code: -32600 } })
      yield* send({ jsonrpc: "2.0", method: 42 })
      yield* send("not json-rpc")
      yield* send({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: -5 } })
      expect(yield* ask(10, "ping")).toEqual({ jsonrpc: "2.0", id: 10, result: {} })
      assert.strictEqual(yield* Queue.size(posted), 0)
      expect(yield* ask(11, "sampling/createMessage", {})).toMatchObject({ id: 11, error: { code: -32601 } })
      expect(yield* ask(12, "tools/call", { arguments: {} })).toMatchObject({ id: 12, error: { code: -32602 } })
      // no onOpenLink: the capability is not declared and the request is -32601
      expect(yield* ask(13, "ui/open-link", { url: "https://example.com" })).toMatchObject({
        id: 13,
        error: { code: -32601 }
      })
    }).pipe(Effect.scoped))

  it.live("hands open-link, message, log and size to the host's callbacks", () =>
    Effect.gen(function*() {
      const opened = yield* Queue.unbounded<string>()
      const sizes = yield* Queue.unbounded<AppHost.SizeChange>()
      const logs = yield* Queue.unbounded<JsonRpc.JsonObject>()
      const { ask, send } = yield* setup({
        onOpenLink: (url) => Queue.offer(opened, url),
        onMessage: () => Effect.fail(JsonRpc.McpError.invalidParams("Message sending denied")),
        onLog: (params) => Queue.offer(logs, params),
        onSizeChange: (size) => Queue.offer(sizes, size)
      })
      const init = yield* ask(1, "ui/initialize", initialize)
      expect(init).toMatchObject({ result: { hostCapabilities: { openLinks: {}, message: { text: {} } } } })
      expect(yield* ask(2, "ui/open-link", { url: "https://example.com/x" })).toEqual({
        jsonrpc: "2.0",
        id: 2,
        result: {}
      })
      assert.strictEqual(yield* Queue.take(opened), "https://example.com/x")
      expect(yield* ask(3, "ui/open-link", { url: "javascript:alert(1)" })).toMatchObject({ error: { code: -32602 } })
      assert.strictEqual(yield* Queue.size(opened), 0)
      expect(yield* ask(4, "ui/message", { role: "user", content: [] })).toMatchObject({
        id: 4,
        error: { code: -32602, message: "Message sending denied" }
      })
      yield* send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "hi" } })
      expect(yield* Queue.take(logs)).toEqual({ level: "info", data: "hi" })
      yield* send({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { width: 300, height: 120 } })
      expect(yield* Queue.take(sizes)).toEqual({ width: 300, height: 120 })
      expect(yield* ask(5, "ui/request-display-mode", { mode: "fullscreen" })).toEqual({
        jsonrpc: "2.0",
        id: 5,
        result: { mode: "inline" }
      })
    }).pipe(Effect.scoped))

  it.live("teardown: one ui/resource-teardown request, completed by the view's answer", () =>
    Effect.gen(function*() {
      const { ask, bridge, next, send } = yield* setup()
      yield* ask(1, "ui/initialize", initialize)
      yield* send({ jsonrpc: "2.0", method: "ui/notifications/initialized" })
      const done = yield* Deferred.make<void>()
      yield* Effect.fork(Effect.zipRight(bridge.teardown("closing"), Deferred.succeed(done, undefined)))
      const request = yield* next
      expect(request).toMatchObject({ jsonrpc: "2.0", method: "ui/resource-teardown", params: { reason: "closing" } })
      const id = JsonRpc.isObject(request) ? request.id : undefined
      assert.isFalse(yield* Deferred.isDone(done))
      yield* send({ jsonrpc: "2.0", id, result: {} })
      yield* Deferred.await(done)
      // a second teardown sends nothing
      yield* bridge.teardown()
    }).pipe(Effect.scoped))

  it.live("closing the scope removes the port's listener", () =>
    Effect.gen(function*() {
      const isSubscribed = yield* Effect.scoped(Effect.map(setup(), (s) => s.isSubscribed))
      assert.isFalse(isSubscribed())
    }))
})

describe("AppHost is platform-neutral", () => {
  it("bundles for the browser (a Node import would not resolve)", { timeout: 60_000 }, async () => {
    const entry = fileURLToPath(new URL("../src/AppHost.ts", import.meta.url))
    const out = await build({
      entryPoints: [entry],
      bundle: true,
      write: false,
      platform: "browser",
      format: "esm",
      target: "es2022",
      logLevel: "silent"
    })
    const text = out.outputFiles[0]?.text ?? ""
    assert.isAbove(text.length, 1000)
    assert.notMatch(text, /from\s*"node:|require\("node:/)
  })
})
