import { assert, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { Content, JsonRpc, McpServer, Prompt, RequestContext, Resource, Tool } from "presa-mcp"
import { LOGO_PNG, makeLibrary, makeLibraryWith } from "../examples/library-definitions.js"
import {
  asArray,
  type Conn,
  connect,
  dispatchChecked,
  ERAS,
  errorOf,
  get,
  type Headers,
  initializeParams,
  isObject,
  type JsonObject,
  KEY,
  keysOf,
  legacy,
  MODERN,
  modern,
  modernMeta,
  notification,
  type Reply,
  request,
  resultOf,
  type Revision,
  textAt,
  withModernMeta
} from "./support/Wire.js"

// The core capabilities are exactly tools, resources, prompts, completions; the library also serves
// the code-review skill, so the Skills extension is declared under `extensions` (issue 6).
const LIBRARY_CAPS = {
  tools: {},
  resources: {},
  prompts: {},
  completions: {},
  extensions: { "io.modelcontextprotocol/skills": { directoryRead: true } }
}
const SERVER_INFO = { name: "presa-library", version: "0.1.0" }
const ALL = ["2026-07-28", "2025-11-25", "2025-06-18"]

const library = (rev: Revision) =>
  Effect.gen(function*() {
    const server = yield* makeLibrary
    return yield* connect(server, rev)
  })

const build = (options: Partial<McpServer.Options> = {}) =>
  McpServer.make({ name: "server-test", version: "2.0.0", ...options })

const names = (items: unknown): ReadonlyArray<unknown> => asArray(items).map((t) => get(t, "name"))

const MODERN_FIELDS = ["resultType", "ttlMs", "cacheScope"]

/** A legacy result carries none of the modern fields. */
const assertLegacyShape = (reply: Reply): void => {
  const r = resultOf(reply)
  for (const k of MODERN_FIELDS) assert.isFalse(k in r, `${k} in a legacy result: ${JSON.stringify(r)}`)
  assert.isUndefined(get(r, "_meta", KEY.serverInfo))
}

// =============================================================================================
// the reference library, in both eras
// =============================================================================================

describe("reference library (examples/library-definitions.ts)", () => {
  describe.each(ERAS)("%s", (rev) => {
    it.effect("add [1,2,3] → structuredContent {sum: 6} and a text block with its JSON", () =>
      Effect.gen(function*() {
        const conn = yield* library(rev)
        const reply = yield* conn.call("tools/call", { name: "add", arguments: { numbers: [1, 2, 3] } })
        const r = resultOf(reply)
        expect(r.structuredContent).toEqual({ sum: 6 })
        expect(r.content).toEqual([{ type: "text", text: "{\"sum\":6}" }])
        assert.isFalse("isError" in r)
      }))

    it.effect("add {numbers: [\"one\"]} → isError with the exact validation text", () =>
      Effect.gen(function*() {
        const conn = yield* library(rev)
        const reply = yield* conn.call("tools/call", { name: "add", arguments: { numbers: ["one"] } })
        const r = resultOf(reply)
        assert.strictEqual(r.isError, true)
        expect(r.content).toEqual([{
          type: "text",
          text: "Invalid arguments at /numbers/0: expected number, got string"
        }])
      }))

    it.effect("logo → `Here is the logo:` and an image/png block", () =>
      Effect.gen(function*() {
        const conn = yield* library(rev)
        const r = resultOf(yield* conn.call("tools/call", { name: "logo" }))
        expect(r.content).toEqual([
          { type: "text", text: "Here is the logo:" },
          { type: "image", data: LOGO_PNG, mimeType: "image/png" }
        ])
      }))

    it.effect("people://ada → Ada Lovelace; file:///readme.txt → its text", () =>
      Effect.gen(function*() {
        const conn = yield* library(rev)
        const ada = resultOf(yield* conn.call("resources/read", { uri: "people://ada" }))
        expect(ada.contents).toEqual([{ uri: "people://ada", mimeType: "text/plain", text: "Ada Lovelace" }])
        const readme = resultOf(yield* conn.call("resources/read", { uri: "file:///readme.txt" }))
        expect(readme.contents).toEqual([{ uri: "file:///readme.txt", mimeType: "text/plain", text: "Read me first." }])
      }))

    it.effect("people://nobody → -32602 Resource not found with data.uri (EC-06)", () =>
      Effect.gen(function*() {
        const conn = yield* library(rev)
        const reply = yield* conn.call("resources/read", { uri: "people://nobody" })
        expect(errorOf(reply)).toEqual({
          code: -32602,
          message: "Resource not found",
          data: { uri: "people://nobody" }
        })
        assert.strictEqual(reply.status, 200)
        const unknown = yield* conn.call("resources/read", { uri: "x://nope/1" })
        expect(errorOf(unknown)).toEqual({ code: -32602, message: "Resource not found", data: { uri: "x://nope/1" } })
        const notAUri = yield* conn.call("resources/read", { uri: "not a uri" })
        assert.strictEqual(errorOf(notAUri).code, -32602)
        const noUri = yield* conn.call("resources/read", {})
        assert.strictEqual(errorOf(noUri).code, -32602)
      }))

    it.effect("introduce {id: alan} → one user message", () =>
      Effect.gen(function*() {
        const conn = yield* library(rev)
        const r = resultOf(yield* conn.call("prompts/get", { name: "introduce", arguments: { id: "alan" } }))
        expect(r.messages).toEqual([
          { role: "user", content: { type: "text", text: "Introduce Alan Turing in one sentence." } }
        ])
      }))

    it.effect("introduce without id → -32602 naming id; unknown person → the handler's -32602", () =>
      Effect.gen(function*() {
        const conn = yield* library(rev)
        for (const params of [{ name: "introduce" }, { name: "introduce", arguments: {} }]) {
          const e = errorOf(yield* conn.call("prompts/get", params))
          assert.strictEqual(e.code, -32602)
          assert.include(e.message, "id")
          expect(e.data).toEqual({ argument: "id" })
        }
        const zed = errorOf(yield* conn.call("prompts/get", { name: "introduce", arguments: { id: "zed" } }))
        expect(zed).toMatchObject({ code: -32602, message: "Unknown person: zed" })
      }))

    it.effect("completion: ref/prompt introduce id \"a\" → [ada, alan]; ref/resource people://{id}", () =>
      Effect.gen(function*() {
        const conn = yield* library(rev)
        const prompt = resultOf(
          yield* conn.call("completion/complete", {
            ref: { type: "ref/prompt", name: "introduce" },
            argument: { name: "id", value: "a" }
          })
        )
        expect(prompt.completion).toEqual({ values: ["ada", "alan"] })
        const resource = resultOf(
          yield* conn.call("completion/complete", {
            ref: { type: "ref/resource", uri: "people://{id}" },
            argument: { name: "id", value: "al" }
          })
        )
        expect(resource.completion).toEqual({ values: ["alan"] })
        const none = resultOf(
          yield* conn.call("completion/complete", {
            ref: { type: "ref/prompt", name: "introduce" },
            argument: { name: "id", value: "z" }
          })
        )
        expect(none.completion).toEqual({ values: [] })
      }))

    it.effect("lists: tools add, logo; resource readme; template person; prompt introduce", () =>
      Effect.gen(function*() {
        const conn = yield* library(rev)
        const tools = asArray(resultOf(yield* conn.call("tools/list")).tools)
        expect(names(tools)).toEqual(["add", "logo"])
        expect(tools[0]).toEqual({
          name: "add",
          title: "Add numbers",
          description: "Adds a list of numbers and returns their sum.",
          annotations: { readOnlyHint: true },
          inputSchema: {
            type: "object",
            properties: { numbers: { type: "array", items: { type: "number" } } },
            required: ["numbers"]
          },
          outputSchema: { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] }
        })
        expect(tools[1]).toEqual({
          name: "logo",
          description: "Returns the logo as an image.",
          inputSchema: { type: "object", properties: {} }
        })
        expect(resultOf(yield* conn.call("resources/list")).resources).toEqual([
          { uri: "file:///readme.txt", name: "readme", mimeType: "text/plain" },
          {
            uri: "skill://code-review/SKILL.md",
            name: "code-review",
            description: "Review a change for correctness and style",
            mimeType: "text/markdown"
          }
        ])
        expect(resultOf(yield* conn.call("resources/templates/list")).resourceTemplates).toEqual([
          { uriTemplate: "people://{id}", name: "person", mimeType: "text/plain" }
        ])
        expect(resultOf(yield* conn.call("prompts/list")).prompts).toEqual([
          {
            name: "introduce",
            description: "Asks for a one-sentence introduction of a person.",
            arguments: [{ name: "id", description: "Who to introduce (ada, alan)", required: true }]
          }
        ])
      }))

    it.effect("addTool(late) → add, logo, late; removeTool(late) → gone", () =>
      Effect.gen(function*() {
        const conn = yield* library(rev)
        yield* McpServer.addTool(conn.server, Tool.fromJsonSchema({ name: "late", handler: () => "I was late" }))
        expect(names(resultOf(yield* conn.call("tools/list")).tools)).toEqual(["add", "logo", "late"])
        assert.strictEqual(textAt(yield* conn.call("tools/call", { name: "late" })), "I was late")
        yield* McpServer.removeTool(conn.server, "late")
        expect(names(resultOf(yield* conn.call("tools/list")).tools)).toEqual(["add", "logo"])
        assert.strictEqual(errorOf(yield* conn.call("tools/call", { name: "late" })).code, -32602)
      }))
  })

  it.effect("capabilities are exactly tools, resources, prompts, completions (modern discover)", () =>
    Effect.gen(function*() {
      const conn = yield* library(MODERN)
      const r = resultOf(yield* conn.call("server/discover"))
      expect(r.capabilities).toEqual(LIBRARY_CAPS)
      expect(r.supportedVersions).toEqual(ALL)
      assert.strictEqual(
        r.instructions,
        "A small reference library: add numbers, show a logo, read about people. " +
          "To review a change, load the skill skill://code-review/SKILL.md."
      )
      expect(yield* McpServer.capabilities(conn.server)).toEqual(LIBRARY_CAPS)
    }))

  it.effect.each(["2025-11-25", "2025-06-18"] as const)(
    "capabilities are exactly tools, resources, prompts, completions (legacy initialize %s)",
    (rev) =>
      Effect.gen(function*() {
        const server = yield* makeLibrary
        const conn = yield* legacy(server, rev)
        expect(resultOf(conn.init)).toEqual({
          protocolVersion: rev,
          capabilities: LIBRARY_CAPS,
          serverInfo: SERVER_INFO,
          instructions: "A small reference library: add numbers, show a logo, read about people. " +
            "To review a change, load the skill skill://code-review/SKILL.md."
        })
      })
  )

  it.effect("a request in flight keeps its snapshot while a tool is removed", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const server = yield* makeLibrary
      yield* McpServer.addTool(
        server,
        Tool.fromJsonSchema({
          name: "slow",
          handler: () =>
            Effect.gen(function*() {
              yield* Deferred.succeed(started, undefined)
              yield* Deferred.await(release)
              return "finished"
            })
        })
      )
      const conn = yield* modern(server)
      const fiber = yield* Effect.fork(conn.call("tools/call", { name: "slow" }))
      yield* Deferred.await(started)
      yield* McpServer.removeTool(server, "slow")
      // new requests see the new snapshot…
      expect(names(resultOf(yield* conn.call("tools/list")).tools)).toEqual(["add", "logo"])
      assert.strictEqual(errorOf(yield* conn.call("tools/call", { name: "slow" })).code, -32602)
      // …the one in flight finishes with the tool it started with
      yield* Deferred.succeed(release, undefined)
      const reply = yield* Fiber.join(fiber)
      assert.strictEqual(textAt(reply), "finished")
      assert.notStrictEqual(get(reply.message, "result", "isError"), true)
    }))
})

// =============================================================================================
// live changes
// =============================================================================================

describe("live changes (addTool, addResource, …)", () => {
  it.effect("add/remove resources, templates and prompts; capabilities follow", () =>
    Effect.gen(function*() {
      const server = yield* build()
      const conn = yield* modern(server)
      expect(resultOf(yield* conn.call("server/discover")).capabilities).toEqual({})
      yield* McpServer.addResource(server, Resource.make({ uri: "x://a", name: "a", handler: () => "A" }))
      expect(resultOf(yield* conn.call("server/discover")).capabilities).toEqual({ resources: {} })
      assert.strictEqual(
        get(yield* conn.call("resources/read", { uri: "x://a" }), "message", "result", "contents", 0, "text"),
        "A"
      )
      yield* McpServer.addResourceTemplate(
        server,
        Resource.template({ uriTemplate: "x://t/{id}", name: "t", handler: ({ id }) => `t${id ?? ""}` })
      )
      assert.strictEqual(
        get((yield* conn.call("resources/read", { uri: "x://t/7" })).message, "result", "contents", 0, "text"),
        "t7"
      )
      yield* McpServer.addPrompt(server, Prompt.make({ name: "p", handler: () => "hello" }))
      expect(resultOf(yield* conn.call("server/discover")).capabilities).toEqual({ resources: {}, prompts: {} })
      yield* McpServer.removeResource(server, "x://a")
      yield* McpServer.removeResourceTemplate(server, "x://t/{id}")
      yield* McpServer.removePrompt(server, "p")
      expect(resultOf(yield* conn.call("server/discover")).capabilities).toEqual({})
      assert.strictEqual(errorOf(yield* conn.call("resources/read", { uri: "x://a" })).code, -32601)
      // removing what is not there is a no-op
      yield* McpServer.removeTool(server, "nothing")
    }))

  it.effect("a refused change fails with DefinitionError and leaves the definitions as they were", () =>
    Effect.gen(function*() {
      const server = yield* makeLibrary
      const conn = yield* modern(server)
      const before = yield* conn.call("tools/list")
      const dup = yield* Effect.either(
        McpServer.addTool(server, Tool.fromJsonSchema({ name: "add", handler: () => "x" }))
      )
      assert.isTrue(Either.isLeft(dup) && dup.left._tag === "DefinitionError")
      const badTemplate = yield* Effect.either(
        McpServer.addResourceTemplate(
          server,
          Resource.template({ uriTemplate: "x://{oops", name: "b", handler: () => "" })
        )
      )
      assert.isTrue(Either.isLeft(badTemplate) && badTemplate.left.kind === "resourceTemplate")
      const dupResource = yield* Effect.either(
        McpServer.addResource(server, Resource.make({ uri: "file:///readme.txt", name: "again", handler: () => "" }))
      )
      assert.isTrue(Either.isLeft(dupResource) && dupResource.left.kind === "resource")
      const dupPrompt = yield* Effect.either(
        McpServer.addPrompt(server, Prompt.make({ name: "introduce", handler: () => "" }))
      )
      assert.isTrue(Either.isLeft(dupPrompt) && dupPrompt.left.kind === "prompt")
      const after = yield* conn.call("tools/list")
      expect(get(after.message, "result", "tools")).toEqual(get(before.message, "result", "tools"))
    }))

  it.effect("the server is observable as a snapshot and as a Layer service", () =>
    Effect.gen(function*() {
      const server = yield* makeLibrary
      const before = yield* server.snapshot
      yield* McpServer.addTool(server, Tool.make({ name: "x", handler: () => "x" }))
      const after = yield* server.snapshot
      assert.isAbove(after.revision, before.revision)
      expect(after.tools.map((t) => t.name)).toEqual([...before.tools.map((t) => t.name), "x"])
      const fromLayer = yield* Effect.provide(
        McpServer.McpServer,
        McpServer.layer({ name: "layered", version: "1" })
      )
      assert.strictEqual(fromLayer.info.name, "layered")
    }))
})

// =============================================================================================
// the modern era
// =============================================================================================

describe("modern era (2026-07-28)", () => {
  const cacheable = [
    ["server/discover", {}],
    ["tools/list", {}],
    ["prompts/list", {}],
    ["resources/list", {}],
    ["resources/templates/list", {}],
    ["resources/read", { uri: "people://ada" }]
  ] as const
  const uncacheable = [
    ["tools/call", { name: "add", arguments: { numbers: [1] } }],
    ["prompts/get", { name: "introduce", arguments: { id: "ada" } }],
    ["completion/complete", { ref: { type: "ref/prompt", name: "introduce" }, argument: { name: "id", value: "" } }]
  ] as const

  it.effect("every result has resultType complete and the server's info under _meta", () =>
    Effect.gen(function*() {
      const conn = yield* library(MODERN)
      for (const [method, params] of [...cacheable, ...uncacheable]) {
        const r = resultOf(yield* conn.call(method, params))
        assert.strictEqual(r.resultType, "complete", method)
        expect(get(r, "_meta", KEY.serverInfo), method).toEqual(SERVER_INFO)
      }
    }))

  it.effect("ttlMs/cacheScope (defaults 0/private) on discover, lists and read — not on call, get, complete", () =>
    Effect.gen(function*() {
      const conn = yield* library(MODERN)
      for (const [method, params] of cacheable) {
        const r = resultOf(yield* conn.call(method, params))
        assert.strictEqual(r.ttlMs, 0, method)
        assert.strictEqual(r.cacheScope, "private", method)
      }
      for (const [method, params] of uncacheable) {
        const r = resultOf(yield* conn.call(method, params))
        assert.isFalse("ttlMs" in r, method)
        assert.isFalse("cacheScope" in r, method)
      }
    }))

  it.effect("cache: {ttlMs: 5000, scope: public} is honoured", () =>
    Effect.gen(function*() {
      const server = yield* makeLibraryWith({ cache: { ttlMs: 5000, scope: "public" } })
      const conn = yield* modern(server)
      for (const [method, params] of cacheable) {
        const r = resultOf(yield* conn.call(method, params))
        assert.strictEqual(r.ttlMs, 5000, method)
        assert.strictEqual(r.cacheScope, "public", method)
      }
      const call = resultOf(yield* conn.call(...uncacheable[0]))
      assert.isFalse("ttlMs" in call)
    }))

  it.effect("ttlMs is never negative nor fractional", () =>
    Effect.gen(function*() {
      for (const [ttlMs, expected] of [[-5, 0], [1.7, 1]] as const) {
        const conn = yield* modern(yield* build({ cache: { ttlMs } }))
        const r = resultOf(yield* conn.call("server/discover"))
        assert.strictEqual(r.ttlMs, expected)
        assert.strictEqual(r.cacheScope, "private")
      }
    }))

  it.effect("server/discover: supportedVersions, capabilities, instructions", () =>
    Effect.gen(function*() {
      const conn = yield* library(MODERN)
      const r = resultOf(yield* conn.call("server/discover"))
      expect(r.supportedVersions).toEqual(["2026-07-28", "2025-11-25", "2025-06-18"])
      expect([...keysOf(r)].sort()).toEqual(
        ["_meta", "cacheScope", "capabilities", "instructions", "resultType", "supportedVersions", "ttlMs"]
      )
    }))

  it.effect("an unknown version → -32022 (400) with data.supported and data.requested echoed exactly", () =>
    Effect.gen(function*() {
      const conn = yield* library(MODERN)
      for (const requested of ["2099-01-01", "v999.0.0", "2025-11-25", "2024-11-05", "", " 2026-07-28"]) {
        const reply = yield* conn.call("tools/list", {}, { meta: { [KEY.protocolVersion]: requested } })
        const e = errorOf(reply)
        assert.strictEqual(e.code, -32022, requested)
        expect(e.data).toEqual({ supported: ALL, requested })
        assert.strictEqual(reply.status, 400)
      }
      // discover itself is refused the same way
      const discover = yield* conn.call("server/discover", {}, { meta: { [KEY.protocolVersion]: "2099-01-01" } })
      expect(errorOf(discover).data).toEqual({ supported: ALL, requested: "2099-01-01" })
    }))

  it.effect("a version that is not a string → -32602 (400): -32022's data.requested must be a string", () =>
    Effect.gen(function*() {
      const conn = yield* library(MODERN)
      for (const version of [42, null, true, {}]) {
        const reply = yield* conn.call("tools/list", {}, { meta: { [KEY.protocolVersion]: version } })
        assert.strictEqual(errorOf(reply).code, -32602, JSON.stringify(version))
        assert.strictEqual(reply.status, 400)
      }
    }))

  it.effect("missing or malformed clientCapabilities → -32602 (400); clientInfo is optional", () =>
    Effect.gen(function*() {
      const conn = yield* library(MODERN)
      const missing = yield* conn.raw(
        request(1, "tools/list", { _meta: { [KEY.protocolVersion]: MODERN } })
      )
      const e = errorOf(missing)
      assert.strictEqual(e.code, -32602)
      assert.include(e.message, KEY.clientCapabilities)
      assert.strictEqual(missing.status, 400)
      for (const caps of ["x", [], null, { elicitation: "yes" }]) {
        const bad = yield* conn.raw(
          request(2, "tools/list", { _meta: { [KEY.protocolVersion]: MODERN, [KEY.clientCapabilities]: caps } })
        )
        assert.strictEqual(errorOf(bad).code, -32602, JSON.stringify(caps))
        assert.strictEqual(bad.status, 400)
      }
      // unknown capability keys are fine, and so is a request without clientInfo
      const open = yield* conn.raw(
        request(3, "tools/list", {
          _meta: { [KEY.protocolVersion]: MODERN, [KEY.clientCapabilities]: { "com.example/x": {}, roots: {} } }
        })
      )
      assert.isArray(resultOf(open).tools)
      // a present but invalid clientInfo is refused
      const badInfo = yield* conn.call("tools/list", {}, { meta: { [KEY.clientInfo]: { name: "no version" } } })
      assert.strictEqual(errorOf(badInfo).code, -32602)
      const goodInfo = yield* conn.call("tools/list", {}, { meta: { [KEY.clientInfo]: { name: "c", version: "1" } } })
      assert.isArray(resultOf(goodInfo).tools)
    }))

  it.effect("missing _meta entirely on a request without a session → -32602 (400) naming the versions", () =>
    Effect.gen(function*() {
      const conn = yield* library(MODERN)
      for (const params of [undefined, {}, { _meta: {} }, { _meta: { [KEY.clientCapabilities]: {} } }]) {
        const reply = yield* conn.raw(request(1, "tools/list", params))
        const e = errorOf(reply)
        assert.strictEqual(e.code, -32602, JSON.stringify(params))
        assert.strictEqual(reply.status, 400)
        expect(get(e.data, "supported")).toEqual(ALL)
      }
    }))

  it.effect("an invalid logLevel in _meta → -32602; unknown _meta keys are ignored", () =>
    Effect.gen(function*() {
      const conn = yield* library(MODERN)
      const bad = yield* conn.call("tools/list", {}, { meta: { [KEY.logLevel]: "verbose" } })
      assert.strictEqual(errorOf(bad).code, -32602)
      const ok = yield* conn.call("tools/list", {}, {
        meta: { [KEY.logLevel]: "debug", "com.example/trace": { a: 1 }, progressToken: 1, traceparent: "00-x" }
      })
      assert.isArray(resultOf(ok).tools)
    }))

  it.effect.each(["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"])(
    "legacy-only method %s with modern _meta → -32601 (404)",
    (method) =>
      Effect.gen(function*() {
        const server = yield* makeLibraryWith({ logging: true })
        const conn = yield* modern(server)
        const params: JsonObject = method === "initialize"
          ? initializeParams(MODERN)
          : method === "logging/setLevel"
          ? { level: "info" }
          : method.startsWith("resources/")
          ? { uri: "people://ada" }
          : {}
        const reply = yield* conn.call(method, params)
        expect(errorOf(reply)).toMatchObject({ code: -32601, data: { method } })
        assert.strictEqual(reply.status, 404)
      })
  )

  it.effect("a modern-only server (versions: [2026-07-28]) refuses initialize, naming what it supports", () =>
    Effect.gen(function*() {
      const server = yield* makeLibraryWith({ versions: ["2026-07-28"] })
      const session = yield* McpServer.makeSession
      const reply = yield* dispatchChecked(
        server,
        "2025-11-25",
        request(1, "initialize", initializeParams("2025-11-25")),
        {
          session
        }
      )
      const e = errorOf(reply)
      assert.strictEqual(e.code, -32602)
      expect(get(e.data, "supported")).toEqual(["2026-07-28"])
      assert.strictEqual(reply.status, 400)
      const conn = yield* modern(server)
      expect(resultOf(yield* conn.call("server/discover")).supportedVersions).toEqual(["2026-07-28"])
      // and a request without _meta is told the same
      const bare = yield* dispatchChecked(server, MODERN, request(2, "tools/list"), { session })
      expect(get(errorOf(bare).data, "supported")).toEqual(["2026-07-28"])
    }))

  it.effect("a legacy-only server (versions: [2025-11-25]) answers modern requests with -32022", () =>
    Effect.gen(function*() {
      const server = yield* makeLibraryWith({ versions: ["2025-11-25"] })
      const conn = yield* modern(server)
      for (const method of ["server/discover", "tools/list"]) {
        const reply = yield* conn.call(method)
        expect(errorOf(reply)).toMatchObject({
          code: -32022,
          data: { supported: ["2025-11-25"], requested: "2026-07-28" }
        })
        assert.strictEqual(reply.status, 400)
      }
      const l = yield* legacy(server, "2025-11-25")
      assert.strictEqual(get(l.init.message, "result", "protocolVersion"), "2025-11-25")
      const other = yield* legacy(server, "2025-06-18")
      // 2025-06-18 is not served: the counter-offer is the server's newest legacy version
      assert.strictEqual(get(other.init.message, "result", "protocolVersion"), "2025-11-25")
    }))
})

// =============================================================================================
// the legacy era
// =============================================================================================

describe("legacy era (2025-11-25 / 2025-06-18)", () => {
  it.effect.each(["2025-11-25", "2025-06-18"] as const)(
    "initialize %s → version echoed, serverInfo, capabilities",
    (rev) =>
      Effect.gen(function*() {
        const server = yield* makeLibrary
        const conn = yield* legacy(server, rev)
        const r = resultOf(conn.init)
        assert.strictEqual(r.protocolVersion, rev)
        expect(r.serverInfo).toEqual(SERVER_INFO)
        expect(r.capabilities).toEqual(LIBRARY_CAPS)
        assert.isString(r.instructions)
        assertLegacyShape(conn.init)
        assert.strictEqual(get(conn.init.message, "id"), "init")
      })
  )

  it.effect.each(["2026-07-28", "1999-01-01", "2025-03-26", "garbage"])(
    "initialize %s → counter-offer 2025-11-25",
    (offered) =>
      Effect.gen(function*() {
        const server = yield* makeLibrary
        const session = yield* McpServer.makeSession
        const reply = yield* dispatchChecked(
          server,
          "2025-11-25",
          request(1, "initialize", initializeParams(offered)),
          {
            session
          }
        )
        assert.strictEqual(get(reply.message, "result", "protocolVersion"), "2025-11-25")
        // the session then speaks the counter-offered version
        const list = yield* dispatchChecked(server, "2025-11-25", request(2, "tools/list"), { session })
        assertLegacyShape(list)
      })
  )

  it.effect("initialize without clientInfo or capabilities → -32602", () =>
    Effect.gen(function*() {
      const server = yield* makeLibrary
      const session = yield* McpServer.makeSession
      for (
        const params of [{ protocolVersion: "2025-11-25", capabilities: {} }, { protocolVersion: "2025-11-25" }, {}]
      ) {
        const reply = yield* dispatchChecked(server, "2025-11-25", request(1, "initialize", params), { session })
        assert.strictEqual(errorOf(reply).code, -32602, JSON.stringify(params))
      }
    }))

  it.effect.each(["2025-11-25", "2025-06-18"] as const)(
    "ping → {} (%s), also before initialize",
    (rev) =>
      Effect.gen(function*() {
        const server = yield* makeLibrary
        const early = yield* dispatchChecked(server, rev, request(0, "ping"), { session: yield* McpServer.makeSession })
        expect(resultOf(early)).toEqual({})
        const noSession = yield* dispatchChecked(server, rev, request(1, "ping"))
        expect(resultOf(noSession)).toEqual({})
        const conn = yield* legacy(server, rev)
        expect(resultOf(yield* conn.call("ping"))).toEqual({})
      })
  )

  it.effect.each(["2025-11-25", "2025-06-18"] as const)(
    "server/discover and subscriptions/listen on a legacy session → -32601 (%s)",
    (rev) =>
      Effect.gen(function*() {
        const conn = yield* library(rev)
        for (const method of ["server/discover", "subscriptions/listen"]) {
          const reply = yield* conn.call(method)
          assert.strictEqual(errorOf(reply).code, -32601, method)
          assert.strictEqual(reply.status, 404)
        }
      })
  )

  it.effect.each(["2025-11-25", "2025-06-18"] as const)(
    "no modern fields (resultType, ttlMs, cacheScope, serverInfo _meta) in %s results",
    (rev) =>
      Effect.gen(function*() {
        const conn = yield* library(rev)
        const calls: ReadonlyArray<readonly [string, JsonObject]> = [
          ["tools/list", {}],
          ["tools/call", { name: "add", arguments: { numbers: [1, 2] } }],
          ["tools/call", { name: "add", arguments: { numbers: ["x"] } }],
          ["resources/list", {}],
          ["resources/templates/list", {}],
          ["resources/read", { uri: "people://ada" }],
          ["prompts/list", {}],
          ["prompts/get", { name: "introduce", arguments: { id: "ada" } }],
          ["completion/complete", {
            ref: { type: "ref/prompt", name: "introduce" },
            argument: { name: "id", value: "a" }
          }],
          ["ping", {}]
        ]
        for (const [method, params] of calls) assertLegacyShape(yield* conn.call(method, params))
      })
  )

  it.effect("requests on a session before initialize, or with no session, are refused with -32602 (400)", () =>
    Effect.gen(function*() {
      const server = yield* makeLibrary
      const session = yield* McpServer.makeSession
      const before = yield* dispatchChecked(server, "2025-11-25", request(1, "tools/list"), { session })
      assert.strictEqual(errorOf(before).code, -32602)
      assert.strictEqual(before.status, 400)
      expect(get(errorOf(before).data, "supported")).toEqual(ALL)
      const none = yield* dispatchChecked(server, "2025-11-25", request(2, "tools/call", { name: "add" }))
      assert.strictEqual(errorOf(none).code, -32602)
    }))

  it.effect("after a legacy initialize, a modern request on the same session is still modern", () =>
    Effect.gen(function*() {
      const server = yield* makeLibrary
      const l = yield* legacy(server, "2025-11-25")
      const m = yield* modern(server, { session: l.session ?? (yield* McpServer.makeSession) })
      const discover = resultOf(yield* m.call("server/discover"))
      assert.strictEqual(discover.resultType, "complete")
      const list = resultOf(yield* m.call("tools/list"))
      assert.strictEqual(list.resultType, "complete")
      assert.strictEqual(list.ttlMs, 0)
      const unsupported = yield* m.call("tools/list", {}, { meta: { [KEY.protocolVersion]: "2099-01-01" } })
      expect(errorOf(unsupported)).toMatchObject({ code: -32022, data: { supported: ALL, requested: "2099-01-01" } })
      // …and the legacy traffic on that session is unaffected
      assertLegacyShape(yield* l.call("tools/list"))
      assert.strictEqual(errorOf(yield* l.call("server/discover")).code, -32601)
    }))

  it.effect("notifications/initialized and other notifications get no reply on a session", () =>
    Effect.gen(function*() {
      const conn = yield* library("2025-11-25")
      yield* conn.rawNone(notification("notifications/initialized"))
      yield* conn.rawNone(notification("notifications/cancelled", { requestId: 0, reason: "test" }))
      yield* conn.rawNone(notification("notifications/roots/list_changed"))
      expect(resultOf(yield* conn.call("ping", {}, { id: 160 }))).toEqual({})
    }))
})

// =============================================================================================
// capabilities
// =============================================================================================

describe("capabilities are derived from the definitions", () => {
  it.effect("an empty server: discover capabilities {} and every feature method is -32601", () =>
    Effect.gen(function*() {
      const server = yield* build()
      const conn = yield* modern(server)
      const r = resultOf(yield* conn.call("server/discover"))
      expect(r.capabilities).toEqual({})
      assert.isFalse("instructions" in r)
      for (
        const [method, params] of [
          ["tools/list", {}],
          ["tools/call", { name: "x" }],
          ["resources/list", {}],
          ["resources/templates/list", {}],
          ["resources/read", { uri: "x://a" }],
          ["prompts/list", {}],
          ["prompts/get", { name: "x" }],
          ["completion/complete", { ref: { type: "ref/prompt", name: "x" }, argument: { name: "a", value: "" } }]
        ] as const
      ) {
        const reply = yield* conn.call(method, params)
        assert.strictEqual(errorOf(reply).code, -32601, method)
        assert.strictEqual(reply.status, 404)
      }
      const l = yield* legacy(server, "2025-11-25")
      expect(get(l.init.message, "result", "capabilities")).toEqual({})
      assert.strictEqual(errorOf(yield* l.call("tools/list")).code, -32601)
    }))

  it.effect("templates alone advertise resources; prompts without complete advertise no completions", () =>
    Effect.gen(function*() {
      const server = yield* build({
        resourceTemplates: [Resource.template({ uriTemplate: "x://{id}", name: "x", handler: ({ id }) => id })],
        prompts: [Prompt.make({ name: "p", handler: () => "hi" })]
      })
      expect(yield* McpServer.capabilities(server)).toEqual({ resources: {}, prompts: {} })
      const conn = yield* modern(server)
      expect(resultOf(yield* conn.call("resources/list")).resources).toEqual([])
      const complete = yield* conn.call("completion/complete", {
        ref: { type: "ref/prompt", name: "p" },
        argument: { name: "a", value: "" }
      })
      assert.strictEqual(errorOf(complete).code, -32601)
      assert.strictEqual(complete.status, 404)
    }))

  it.effect("logging: true → logging capability; legacy logging/setLevel → {}", () =>
    Effect.gen(function*() {
      const server = yield* build({ logging: true })
      expect(yield* McpServer.capabilities(server)).toEqual({ logging: {} })
      const l = yield* legacy(server, "2025-11-25")
      expect(get(l.init.message, "result", "capabilities")).toEqual({ logging: {} })
      expect(resultOf(yield* l.call("logging/setLevel", { level: "warning" }))).toEqual({})
      assert.strictEqual(errorOf(yield* l.call("logging/setLevel", { level: "loud" })).code, -32602)
      const old = yield* legacy(server, "2025-06-18")
      expect(resultOf(yield* old.call("logging/setLevel", { level: "debug" }))).toEqual({})
      const m = yield* modern(server)
      expect(resultOf(yield* m.call("server/discover")).capabilities).toEqual({ logging: {} })
    }))

  it.effect("without logging, logging/setLevel → -32601", () =>
    Effect.gen(function*() {
      const conn = yield* library("2025-11-25")
      assert.strictEqual(errorOf(yield* conn.call("logging/setLevel", { level: "info" })).code, -32601)
    }))

  it.effect("instructions and the server's Implementation are passed through", () =>
    Effect.gen(function*() {
      const server = yield* build({
        instructions: "Use me wisely.",
        title: "Server Test",
        description: "A server for tests",
        websiteUrl: "https://example.com",
        icons: [{ src: "https://example.com/icon.png", mimeType: "image/png" }]
      })
      const info = {
        name: "server-test",
        version: "2.0.0",
        title: "Server Test",
        description: "A server for tests",
        websiteUrl: "https://example.com",
        icons: [{ src: "https://example.com/icon.png", mimeType: "image/png" }]
      }
      const m = yield* modern(server)
      const d = resultOf(yield* m.call("server/discover"))
      assert.strictEqual(d.instructions, "Use me wisely.")
      expect(get(d, "_meta", KEY.serverInfo)).toEqual(info)
      const l = yield* legacy(server, "2025-11-25")
      expect(resultOf(l.init)).toMatchObject({ instructions: "Use me wisely.", serverInfo: info })
    }))

  it.effect("2025-06-18 sessions get a serverInfo valid for that revision", () =>
    Effect.gen(function*() {
      const server = yield* build({
        title: "T",
        description: "D",
        websiteUrl: "https://example.com",
        icons: [{ src: "https://example.com/icon.png" }]
      })
      // legacy() checks the initialize reply against the 2025-06-18 schema
      const l = yield* legacy(server, "2025-06-18")
      expect(get(l.init.message, "result", "serverInfo", "name")).toBe("server-test")
    }))
})

// =============================================================================================
// resources and templates
// =============================================================================================

describe("resources and templates (EC-04, EC-06)", () => {
  const bytes = new Uint8Array([0, 1, 2, 253, 254, 255])
  const resources = [
    Resource.make({ uri: "x://bytes", name: "bytes", mimeType: "application/octet-stream", handler: () => bytes }),
    Resource.make({
      uri: "x://many",
      name: "many",
      handler: (uri) => [
        { uri: `${uri}/1`, mimeType: "text/plain", text: "one" },
        { uri: `${uri}/2`, blob: "AAE=" }
      ]
    }),
    Resource.make({
      uri: "x://wrapped",
      name: "wrapped",
      handler: () => ({ contents: [{ uri: "x://wrapped", text: "w", _meta: { "com.example/k": 1 } }] })
    }),
    Resource.make({ uri: "x://gone", name: "gone", handler: () => undefined }),
    Resource.make({ uri: "x://null", name: "null", handler: () => null }),
    Resource.make({
      uri: "x://denied",
      name: "denied",
      handler: () => Effect.fail(new McpServer.McpError({ code: 4003, message: "denied", data: { why: "nope" } }))
    }),
    Resource.make({
      uri: "x://broken",
      name: "broken",
      handler: () => {
        throw new Error("secret failure")
      }
    }),
    Resource.make({
      uri: "x://malformed",
      name: "malformed",
      // deliberately not ResourceContents: the server must not pass it on
      handler: () => JSON.parse("[{\"nope\":1}]")
    }),
    Resource.make({
      uri: "x://async",
      name: "async",
      title: "Async",
      description: "from a promise",
      size: 5,
      annotations: { audience: ["user"], priority: 0.5 },
      handler: () => Promise.resolve("async")
    })
  ]
  const seen = (label: string) => (vars: Readonly<Record<string, string>>) => `${label} ${JSON.stringify(vars)}`
  const templates = [
    Resource.template({ uriTemplate: "file:///{+path}", name: "file", handler: seen("file") }),
    Resource.template({ uriTemplate: "x://content/{path}", name: "content", handler: seen("content") }),
    Resource.template({ uriTemplate: "x://repo/{owner}/{name}/blob/{+path}", name: "blob", handler: seen("blob") }),
    Resource.template({ uriTemplate: "x://repo/{owner}/{name}", name: "repo", handler: seen("repo") }),
    Resource.template({ uriTemplate: "x://search{?topic,limit}", name: "search", handler: seen("search") }),
    Resource.template({
      uriTemplate: "x://maybe/{id}",
      name: "maybe",
      handler: ({ id }) => (id === "yes" ? "found" : undefined)
    })
  ]
  const server = (order: "forward" | "reversed" = "forward") =>
    build({ resources, resourceTemplates: order === "forward" ? templates : [...templates].reverse() })

  const read = (conn: Conn, uri: string) => conn.call("resources/read", { uri })
  const textOf = (reply: Reply): unknown => get(reply.message, "result", "contents", 0, "text")

  it.effect("resources/templates/list keeps the operators intact", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* server())
      const listed = asArray(resultOf(yield* conn.call("resources/templates/list")).resourceTemplates)
      expect(listed.map((t) => get(t, "uriTemplate"))).toEqual([
        "file:///{+path}",
        "x://content/{path}",
        "x://repo/{owner}/{name}/blob/{+path}",
        "x://repo/{owner}/{name}",
        "x://search{?topic,limit}",
        "x://maybe/{id}"
      ])
    }))

  describe.each(["forward", "reversed"] as const)("templates registered %s", (order) => {
    describe.each(ERAS)("%s", (rev) => {
      it.effect("routing: {+path}, %2F in a simple variable, several variables, longer vs shorter", () =>
        Effect.gen(function*() {
          const conn = yield* connect(yield* server(order), rev)
          assert.strictEqual(
            textOf(yield* read(conn, "file:///docs/guide/intro.md")),
            "file {\"path\":\"docs/guide/intro.md\"}"
          )
          assert.strictEqual(textOf(yield* read(conn, "x://content/a%2Fb")), "content {\"path\":\"a/b\"}")
          assert.strictEqual(
            textOf(yield* read(conn, "x://repo/acme/widgets/blob/src/a%20b/c.ts")),
            "blob {\"owner\":\"acme\",\"name\":\"widgets\",\"path\":\"src/a b/c.ts\"}"
          )
          assert.strictEqual(
            textOf(yield* read(conn, "x://repo/acme/widgets")),
            "repo {\"owner\":\"acme\",\"name\":\"widgets\"}"
          )
          assert.strictEqual(
            textOf(yield* read(conn, "x://search?topic=mcp&limit=5")),
            "search {\"topic\":\"mcp\",\"limit\":\"5\"}"
          )
          // the contents carry the requested URI
          assert.strictEqual(
            get((yield* read(conn, "x://content/a%2Fb")).message, "result", "contents", 0, "uri"),
            "x://content/a%2Fb"
          )
        }))

      it.effect("x://content/a/b matches nothing → -32602 Resource not found (not -32603)", () =>
        Effect.gen(function*() {
          const conn = yield* connect(yield* server(order), rev)
          const reply = yield* read(conn, "x://content/a/b")
          expect(errorOf(reply)).toEqual({
            code: -32602,
            message: "Resource not found",
            data: { uri: "x://content/a/b" }
          })
        }))
    })
  })

  describe.each(ERAS)("%s", (rev) => {
    it.effect("Uint8Array → a base64 blob with the resource's mimeType", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* server(), rev)
        const r = resultOf(yield* read(conn, "x://bytes"))
        expect(r.contents).toEqual([{ uri: "x://bytes", mimeType: "application/octet-stream", blob: "AAEC/f7/" }])
      }))

    it.effect("an array of contents, or {contents}, is sent as is", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* server(), rev)
        expect(resultOf(yield* read(conn, "x://many")).contents).toEqual([
          { uri: "x://many/1", mimeType: "text/plain", text: "one" },
          { uri: "x://many/2", blob: "AAE=" }
        ])
        expect(resultOf(yield* read(conn, "x://wrapped")).contents).toEqual([
          { uri: "x://wrapped", text: "w", _meta: { "com.example/k": 1 } }
        ])
        assert.strictEqual(textOf(yield* read(conn, "x://async")), "async")
      }))

    it.effect("a handler returning undefined/null, or an unknown URI → -32602 Resource not found with data.uri", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* server(), rev)
        for (const uri of ["x://gone", "x://null", "x://maybe/no", "x://unknown/1", "zzz:nothing"]) {
          const reply = yield* read(conn, uri)
          expect(errorOf(reply), uri).toEqual({ code: -32602, message: "Resource not found", data: { uri } })
          assert.strictEqual(reply.status, 200)
        }
        assert.strictEqual(textOf(yield* read(conn, "x://maybe/yes")), "found")
      }))

    it.effect("McpError from a handler → that error; a throw or malformed contents → -32603 Internal error", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* server(), rev)
        expect(errorOf(yield* read(conn, "x://denied"))).toEqual({
          code: 4003,
          message: "denied",
          data: { why: "nope" }
        })
        for (const uri of ["x://broken", "x://malformed"]) {
          const reply = yield* read(conn, uri)
          expect(errorOf(reply), uri).toEqual({ code: -32603, message: "Internal error", data: undefined })
          assert.notInclude(JSON.stringify(reply.message), "secret")
        }
      }))
  })

  it.effect("resources/list carries the listed metadata", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* server())
      const listed = asArray(resultOf(yield* conn.call("resources/list")).resources)
      expect(listed.find((r) => get(r, "uri") === "x://async")).toEqual({
        uri: "x://async",
        name: "async",
        title: "Async",
        description: "from a promise",
        size: 5,
        annotations: { audience: ["user"], priority: 0.5 }
      })
    }))

  it.effect("a template with bad syntax → McpServer.make fails with DefinitionError", () =>
    Effect.gen(function*() {
      for (const uriTemplate of ["x://{unclosed", "x://{|pipe}", "x://a}b", "x://{}"]) {
        const result = yield* Effect.either(
          build({ resourceTemplates: [Resource.template({ uriTemplate, name: "bad", handler: () => "" })] })
        )
        assert.isTrue(Either.isLeft(result), uriTemplate)
        if (Either.isLeft(result)) {
          assert.strictEqual(result.left._tag, "DefinitionError")
          assert.strictEqual(result.left.kind, "resourceTemplate")
          assert.strictEqual(result.left.name, "bad")
        }
      }
    }))

  it.effect("duplicate resource URIs or template strings → DefinitionError", () =>
    Effect.gen(function*() {
      const r = Resource.make({ uri: "x://a", name: "a", handler: () => "" })
      const dupR = yield* Effect.either(build({ resources: [r, { ...r, name: "b" }] }))
      assert.isTrue(Either.isLeft(dupR) && dupR.left.kind === "resource" && dupR.left.name === "x://a")
      const t = Resource.template({ uriTemplate: "x://{id}", name: "t", handler: () => "" })
      const dupT = yield* Effect.either(build({ resourceTemplates: [t, { ...t, name: "u" }] }))
      assert.isTrue(Either.isLeft(dupT) && dupT.left.kind === "resourceTemplate")
    }))

  it.effect("when two templates match, the first registered wins (registration order)", () =>
    Effect.gen(function*() {
      const general = Resource.template({ uriTemplate: "file:///{+path}", name: "general", handler: () => "general" })
      const specific = Resource.template({
        uriTemplate: "file:///docs/{name}",
        name: "specific",
        handler: () => "specific"
      })
      const a = yield* modern(yield* build({ resourceTemplates: [specific, general] }))
      assert.strictEqual(textOf(yield* read(a, "file:///docs/a.md")), "specific")
      assert.strictEqual(textOf(yield* read(a, "file:///other/a.md")), "general")
      const b = yield* modern(yield* build({ resourceTemplates: [general, specific] }))
      assert.strictEqual(textOf(yield* read(b, "file:///docs/a.md")), "general")
    }))

  it.effect("a template handler returning undefined ends the search: -32602 even if a later template matches", () =>
    Effect.gen(function*() {
      const conn = yield* modern(
        yield* build({
          resourceTemplates: [
            Resource.template({ uriTemplate: "x://a/{id}", name: "first", handler: () => undefined }),
            Resource.template({ uriTemplate: "x://{+rest}", name: "second", handler: () => "second" })
          ]
        })
      )
      expect(errorOf(yield* read(conn, "x://a/1"))).toEqual({
        code: -32602,
        message: "Resource not found",
        data: { uri: "x://a/1" }
      })
      assert.strictEqual(textOf(yield* read(conn, "x://b/1")), "second")
    }))

  it.effect("a static resource wins over a template that also matches", () =>
    Effect.gen(function*() {
      const conn = yield* modern(
        yield* build({
          resourceTemplates: [
            Resource.template({ uriTemplate: "file:///{+path}", name: "f", handler: () => "template" })
          ],
          resources: [Resource.make({ uri: "file:///readme.txt", name: "r", handler: () => "static" })]
        })
      )
      assert.strictEqual(textOf(yield* read(conn, "file:///readme.txt")), "static")
      assert.strictEqual(textOf(yield* read(conn, "file:///other.txt")), "template")
    }))
})

// =============================================================================================
// prompts
// =============================================================================================

describe("prompts", () => {
  const prompts = [
    Prompt.make({ name: "one", handler: () => "Say hello." }),
    Prompt.make({
      name: "many",
      handler: () => [
        "first",
        { role: "assistant", content: "second" },
        { role: "user", content: Content.image("AAAA", "image/png") }
      ]
    }),
    Prompt.make({
      name: "object",
      arguments: [{ name: "topic" }],
      handler: ({ topic }) => ({ description: "About a topic", messages: [`Talk about ${topic ?? "anything"}.`] })
    }),
    Prompt.make({
      name: "optional",
      arguments: [{ name: "style", required: false }],
      handler: (args) => `args ${JSON.stringify(args)}`
    }),
    Prompt.make({
      name: "throws",
      handler: () => {
        throw new TypeError("secret prompt failure")
      }
    }),
    Prompt.make({ name: "rejects", handler: () => Promise.reject(new Error("secret rejection")) }),
    Prompt.make({ name: "dies", handler: () => Effect.die("secret die") })
  ]

  describe.each(ERAS)("%s", (rev) => {
    const conn = Effect.flatMap(build({ prompts }), (server) => connect(server, rev))
    const getPrompt = (c: Conn, name: string, args?: unknown) =>
      c.call("prompts/get", args === undefined ? { name } : { name, arguments: args })

    it.effect("a string → one user text message", () =>
      Effect.gen(function*() {
        const c = yield* conn
        expect(resultOf(yield* getPrompt(c, "one")).messages).toEqual([
          { role: "user", content: { type: "text", text: "Say hello." } }
        ])
      }))

    it.effect("an array of strings and {role, content} → those messages", () =>
      Effect.gen(function*() {
        const c = yield* conn
        expect(resultOf(yield* getPrompt(c, "many")).messages).toEqual([
          { role: "user", content: { type: "text", text: "first" } },
          { role: "assistant", content: { type: "text", text: "second" } },
          { role: "user", content: { type: "image", data: "AAAA", mimeType: "image/png" } }
        ])
      }))

    it.effect("{description, messages} → as is", () =>
      Effect.gen(function*() {
        const c = yield* conn
        const r = resultOf(yield* getPrompt(c, "object", { topic: "MCP" }))
        assert.strictEqual(r.description, "About a topic")
        expect(r.messages).toEqual([{ role: "user", content: { type: "text", text: "Talk about MCP." } }])
      }))

    it.effect("arguments omitted, {} and null behave the same (EC-03)", () =>
      Effect.gen(function*() {
        const c = yield* conn
        const texts = []
        for (const args of [undefined, {}, null]) {
          texts.push(get((yield* getPrompt(c, "optional", args)).message, "result", "messages", 0, "content", "text"))
        }
        expect(texts).toEqual(["args {}", "args {}", "args {}"])
      }))

    it.effect("arguments that are not an object of strings → -32602", () =>
      Effect.gen(function*() {
        const c = yield* conn
        for (const args of [[], "x", { style: 1 }]) {
          assert.strictEqual(errorOf(yield* getPrompt(c, "optional", args)).code, -32602, JSON.stringify(args))
        }
      }))

    it.effect("an unknown prompt → -32602 naming it", () =>
      Effect.gen(function*() {
        const c = yield* conn
        expect(errorOf(yield* getPrompt(c, "nope"))).toEqual({
          code: -32602,
          message: "Unknown prompt: nope",
          data: { name: "nope" }
        })
      }))

    it.effect("a prompt handler defect → -32603 Internal error, no details", () =>
      Effect.gen(function*() {
        const c = yield* conn
        for (const name of ["throws", "rejects", "dies"]) {
          const reply = yield* getPrompt(c, name)
          expect(errorOf(reply), name).toEqual({ code: -32603, message: "Internal error", data: undefined })
          assert.notInclude(JSON.stringify(reply.message), "secret")
          assert.strictEqual(get(reply.message, "id") !== undefined, true)
        }
      }))
  })
})

// =============================================================================================
// completions
// =============================================================================================

describe("completion/complete", () => {
  const values150 = Array.from({ length: 150 }, (_, i) => `v${i}`)
  const server = build({
    prompts: [
      Prompt.make({
        name: "p",
        arguments: [{ name: "big" }, { name: "passthrough" }, { name: "ctx" }, { name: "failing" }],
        handler: () => "x",
        complete: {
          big: () => values150,
          passthrough: (value) => ({ values: [`${value}1`, `${value}2`], total: 40, hasMore: true }),
          ctx: (_value, others) => [JSON.stringify(others)],
          failing: () => Effect.fail(McpServer.McpError.invalidParams("no completions today"))
        }
      })
    ],
    resources: [Resource.make({ uri: "x://static", name: "s", handler: () => "s" })],
    resourceTemplates: [
      Resource.template({
        uriTemplate: "x://{kind}/{id}",
        name: "t",
        handler: () => "t",
        complete: { kind: (value) => ["alpha", "beta"].filter((k) => k.startsWith(value)) }
      })
    ]
  })
  const complete = (conn: Conn, ref: JsonObject, name: string, value: string, context?: JsonObject) =>
    conn.call("completion/complete", {
      ref,
      argument: { name, value },
      ...(context === undefined ? {} : { context })
    })
  const P = { type: "ref/prompt", name: "p" }

  describe.each(ERAS)("%s", (rev) => {
    it.effect("150 values are cut to 100 with hasMore: true and total: 150", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* server, rev)
        const c = get(resultOf(yield* complete(conn, P, "big", "")), "completion")
        expect(get(c, "values")).toEqual(values150.slice(0, 100))
        assert.strictEqual(get(c, "hasMore"), true)
        assert.strictEqual(get(c, "total"), 150)
      }))

    it.effect("{values, total, hasMore} is passed through", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* server, rev)
        expect(resultOf(yield* complete(conn, P, "passthrough", "a")).completion).toEqual({
          values: ["a1", "a2"],
          total: 40,
          hasMore: true
        })
      }))

    it.effect("context.arguments reach the completion function", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* server, rev)
        const c = resultOf(yield* complete(conn, P, "ctx", "", { arguments: { big: "v1" } })).completion
        expect(c).toEqual({ values: ["{\"big\":\"v1\"}"] })
        const none = resultOf(yield* complete(conn, P, "ctx", "")).completion
        expect(none).toEqual({ values: ["{}"] })
      }))

    it.effect("an unknown argument → empty values; a static resource ref → empty values", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* server, rev)
        expect(resultOf(yield* complete(conn, P, "nope", "x")).completion).toEqual({ values: [] })
        expect(resultOf(yield* complete(conn, { type: "ref/resource", uri: "x://static" }, "a", "")).completion)
          .toEqual({ values: [] })
        expect(
          resultOf(yield* complete(conn, { type: "ref/resource", uri: "x://{kind}/{id}" }, "kind", "b")).completion
        )
          .toEqual({ values: ["beta"] })
      }))

    it.effect("an unknown prompt or resource ref → -32602; a completion's McpError is passed on", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* server, rev)
        const prompt = errorOf(yield* complete(conn, { type: "ref/prompt", name: "zzz" }, "a", ""))
        expect(prompt).toEqual({ code: -32602, message: "Unknown prompt: zzz", data: { name: "zzz" } })
        const resource = errorOf(yield* complete(conn, { type: "ref/resource", uri: "x://nope" }, "a", ""))
        assert.strictEqual(resource.code, -32602)
        const failing = errorOf(yield* complete(conn, P, "failing", ""))
        expect(failing).toMatchObject({ code: -32602, message: "no completions today" })
        const malformed = errorOf(yield* conn.call("completion/complete", { ref: { type: "ref/other" }, argument: {} }))
        assert.strictEqual(malformed.code, -32602)
      }))
  })
})

// =============================================================================================
// pagination
// =============================================================================================

describe("pagination", () => {
  const tool = (name: string) => Tool.fromJsonSchema({ name, handler: () => name })
  const five = build({ pageSize: 2, tools: ["a", "b", "c", "d", "e"].map(tool) })

  describe.each(ERAS)("%s", (rev) => {
    it.effect("pageSize 2 with 5 tools → 3 pages; nextCursor only when there is more", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* five, rev)
        const p1 = resultOf(yield* conn.call("tools/list"))
        expect(names(p1.tools)).toEqual(["a", "b"])
        assert.isString(p1.nextCursor)
        const p2 = resultOf(yield* conn.call("tools/list", { cursor: p1.nextCursor }))
        expect(names(p2.tools)).toEqual(["c", "d"])
        assert.isString(p2.nextCursor)
        const p3 = resultOf(yield* conn.call("tools/list", { cursor: p2.nextCursor }))
        expect(names(p3.tools)).toEqual(["e"])
        assert.isFalse("nextCursor" in p3)
      }))

    it.effect("exactly two pages: the last full page has no nextCursor", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build({ pageSize: 2, tools: ["a", "b", "c", "d"].map(tool) }), rev)
        const p1 = resultOf(yield* conn.call("tools/list"))
        const p2 = resultOf(yield* conn.call("tools/list", { cursor: p1.nextCursor }))
        expect(names(p2.tools)).toEqual(["c", "d"])
        assert.isFalse("nextCursor" in p2)
      }))

    it.effect("a cursor from before a change is stale → -32602 Invalid cursor (never a shifted page)", () =>
      Effect.gen(function*() {
        const server = yield* five
        const conn = yield* connect(server, rev)
        const p1 = resultOf(yield* conn.call("tools/list"))
        yield* McpServer.addTool(server, tool("late"))
        const stale = yield* conn.call("tools/list", { cursor: p1.nextCursor })
        expect(errorOf(stale)).toEqual({ code: -32602, message: "Invalid cursor", data: { cursor: p1.nextCursor } })
        // re-listing from the start works
        expect(names(resultOf(yield* conn.call("tools/list")).tools)).toEqual(["a", "b"])
      }))

    it.effect("forged cursors → -32602 Invalid cursor", () =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* five, rev)
        const beyond = btoa(JSON.stringify({ r: 1, o: 99 }))
        for (const cursor of ["abc", "", "!!!", "eyJyIjoxfQ", beyond, "bnVsbA"]) {
          const e = errorOf(yield* conn.call("tools/list", { cursor }))
          assert.strictEqual(e.code, -32602, cursor)
          assert.strictEqual(e.message, "Invalid cursor", cursor)
        }
        assert.strictEqual(errorOf(yield* conn.call("tools/list", { cursor: 5 })).code, -32602)
      }))
  })

  it.effect("prompts, resources and templates page the same way", () =>
    Effect.gen(function*() {
      const server = yield* build({
        pageSize: 1,
        prompts: [Prompt.make({ name: "p1", handler: () => "" }), Prompt.make({ name: "p2", handler: () => "" })],
        resources: [
          Resource.make({ uri: "x://1", name: "r1", handler: () => "" }),
          Resource.make({ uri: "x://2", name: "r2", handler: () => "" })
        ],
        resourceTemplates: [
          Resource.template({ uriTemplate: "y://{a}", name: "t1", handler: () => "" }),
          Resource.template({ uriTemplate: "z://{a}", name: "t2", handler: () => "" })
        ]
      })
      const conn = yield* modern(server)
      for (
        const [method, key] of [["prompts/list", "prompts"], ["resources/list", "resources"], [
          "resources/templates/list",
          "resourceTemplates"
        ]] as const
      ) {
        const first = resultOf(yield* conn.call(method))
        expect(asArray(first[key])).toHaveLength(1)
        const second = resultOf(yield* conn.call(method, { cursor: first.nextCursor }))
        expect(asArray(second[key])).toHaveLength(1)
        assert.isFalse("nextCursor" in second, method)
        assert.notDeepEqual(first[key], second[key])
        // every page carries the same cache hints
        assert.strictEqual(first.cacheScope, second.cacheScope)
      }
    }))
})

// =============================================================================================
// HTTP header rules (SEP-2243)
// =============================================================================================

describe("McpServer.checkHeaders", () => {
  const body = (method: string, params: JsonObject = {}, id: JsonRpc.RequestId = 1) =>
    request(id, method, withModernMeta(params))
  const headers = (method: string, extra: Record<string, string> = {}): Record<string, string> => ({
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": method,
    ...extra
  })
  const code = (o: Option.Option<McpServer.McpError>): number | undefined =>
    Option.getOrUndefined(Option.map(o, (e) => e.code))

  it("a matching set of headers passes", () => {
    assert.isTrue(Option.isNone(McpServer.checkHeaders(body("tools/list"), headers("tools/list"))))
    assert.isTrue(
      Option.isNone(
        McpServer.checkHeaders(body("tools/call", { name: "add" }), headers("tools/call", { "Mcp-Name": "add" }))
      )
    )
    assert.isTrue(
      Option.isNone(
        McpServer.checkHeaders(
          body("resources/read", { uri: "people://ada" }),
          headers("resources/read", { "Mcp-Name": "people://ada" })
        )
      )
    )
    assert.isTrue(
      Option.isNone(
        McpServer.checkHeaders(
          body("prompts/get", { name: "introduce" }),
          headers("prompts/get", { "Mcp-Name": "introduce" })
        )
      )
    )
  })

  it("a missing MCP-Protocol-Version → -32020", () => {
    const out = McpServer.checkHeaders(body("tools/list"), { "Mcp-Method": "tools/list" })
    assert.strictEqual(code(out), -32020)
    assert.include(Option.getOrThrow(out).message, "MCP-Protocol-Version")
  })

  it("a version header that disagrees with the body → -32020", () => {
    assert.strictEqual(
      code(
        McpServer.checkHeaders(body("tools/list"), { ...headers("tools/list"), "MCP-Protocol-Version": "2025-11-25" })
      ),
      -32020
    )
  })

  it("a missing or mismatched Mcp-Method → -32020", () => {
    assert.strictEqual(code(McpServer.checkHeaders(body("tools/list"), { "MCP-Protocol-Version": MODERN })), -32020)
    const out = McpServer.checkHeaders(body("tools/list"), headers("prompts/list"))
    assert.strictEqual(code(out), -32020)
    assert.include(Option.getOrThrow(out).message, "Mcp-Method")
  })

  it("header names are case-insensitive, values case-sensitive (TOOLS/CALL ≠ tools/call)", () => {
    const lower = { "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "add" }
    assert.isTrue(Option.isNone(McpServer.checkHeaders(body("tools/call", { name: "add" }), lower)))
    const upper = { "MCP-PROTOCOL-VERSION": MODERN, "MCP-METHOD": "tools/call", "MCP-NAME": "add" }
    assert.isTrue(Option.isNone(McpServer.checkHeaders(body("tools/call", { name: "add" }), upper)))
    const shouting = { ...lower, "mcp-method": "TOOLS/CALL" }
    assert.strictEqual(code(McpServer.checkHeaders(body("tools/call", { name: "add" }), shouting)), -32020)
    const nameCase = { ...lower, "mcp-name": "ADD" }
    assert.strictEqual(code(McpServer.checkHeaders(body("tools/call", { name: "add" }), nameCase)), -32020)
  })

  it("Mcp-Name: required where the method names something; padded values are accepted", () => {
    assert.strictEqual(code(McpServer.checkHeaders(body("tools/call", { name: "add" }), headers("tools/call"))), -32020)
    assert.strictEqual(
      code(McpServer.checkHeaders(body("tools/call", { name: "add" }), headers("tools/call", { "Mcp-Name": "logo" }))),
      -32020
    )
    assert.isTrue(
      Option.isNone(
        McpServer.checkHeaders(body("tools/call", { name: "add" }), headers("tools/call", { "Mcp-Name": "  add \t" }))
      )
    )
    assert.strictEqual(
      code(McpServer.checkHeaders(body("resources/read", { uri: "x://a" }), headers("resources/read"))),
      -32020
    )
  })

  it("base64 Mcp-Name: =?base64?SGVsbG8sIOS4lueVjA==?= is `Hello, 世界`", () => {
    const message = body("tools/call", { name: "Hello, 世界" })
    assert.isTrue(
      Option.isNone(
        McpServer.checkHeaders(message, headers("tools/call", { "Mcp-Name": "=?base64?SGVsbG8sIOS4lueVjA==?=" }))
      )
    )
    assert.strictEqual(
      code(McpServer.checkHeaders(message, headers("tools/call", { "Mcp-Name": "=?base64?SGVsbG8=?=" }))),
      -32020
    )
    // not valid UTF-8 inside the base64
    assert.strictEqual(
      code(McpServer.checkHeaders(message, headers("tools/call", { "Mcp-Name": "=?base64?/w==?=" }))),
      -32020
    )
    const padded = body("tools/call", { name: " padded " })
    assert.isTrue(
      Option.isNone(McpServer.checkHeaders(padded, headers("tools/call", { "Mcp-Name": "=?base64?IHBhZGRlZCA=?=" })))
    )
  })

  it("array header values: the first one counts", () => {
    const h: Headers = { "MCP-Protocol-Version": [MODERN, "2025-11-25"], "Mcp-Method": ["tools/list"] }
    assert.isTrue(Option.isNone(McpServer.checkHeaders(body("tools/list"), h)))
  })

  describe("Mcp-Param-* with x-mcp-header", () => {
    const inputSchema: JsonObject = {
      type: "object",
      properties: {
        region: { type: "string", "x-mcp-header": "Region" },
        count: { type: "integer", "x-mcp-header": "Count" },
        dry: { type: "boolean", "x-mcp-header": "Dry" },
        nested: { type: "object", properties: { zone: { type: "string", "x-mcp-header": "Zone" } } },
        plain: { type: "string" }
      }
    }
    const call = (args: JsonObject) => body("tools/call", { name: "deploy", arguments: args })
    const h = (extra: Record<string, string>) => headers("tools/call", { "Mcp-Name": "deploy", ...extra })

    it("integer values compare numerically (42 vs 42.0)", () => {
      assert.isTrue(
        Option.isNone(McpServer.checkHeaders(call({ count: 42 }), h({ "Mcp-Param-Count": "42.0" }), inputSchema))
      )
      assert.isTrue(
        Option.isNone(McpServer.checkHeaders(call({ count: 42 }), h({ "Mcp-Param-Count": "42" }), inputSchema))
      )
      assert.strictEqual(
        code(McpServer.checkHeaders(call({ count: 42 }), h({ "Mcp-Param-Count": "43" }), inputSchema)),
        -32020
      )
      assert.strictEqual(
        code(McpServer.checkHeaders(call({ count: 42 }), h({ "Mcp-Param-Count": "x" }), inputSchema)),
        -32020
      )
    })

    it("strings, booleans and nested properties; base64 values", () => {
      assert.isTrue(
        Option.isNone(
          McpServer.checkHeaders(
            call({ region: "eu-west", dry: true, nested: { zone: "b" } }),
            h({ "Mcp-Param-Region": "eu-west", "Mcp-Param-Dry": "true", "mcp-param-zone": "b" }),
            inputSchema
          )
        )
      )
      assert.strictEqual(
        code(McpServer.checkHeaders(call({ dry: true }), h({ "Mcp-Param-Dry": "false" }), inputSchema)),
        -32020
      )
      assert.isTrue(
        Option.isNone(
          McpServer.checkHeaders(
            call({ region: "Hello, 世界" }),
            h({ "Mcp-Param-Region": "=?base64?SGVsbG8sIOS4lueVjA==?=" }),
            inputSchema
          )
        )
      )
    })

    it("a value in the body without its header → -32020; absent or null values need no header", () => {
      assert.strictEqual(code(McpServer.checkHeaders(call({ region: "eu" }), h({}), inputSchema)), -32020)
      assert.isTrue(Option.isNone(McpServer.checkHeaders(call({}), h({}), inputSchema)))
      assert.isTrue(Option.isNone(McpServer.checkHeaders(call({ region: null, plain: "x" }), h({}), inputSchema)))
      // unrecognised Mcp-Param-* headers are ignored
      assert.isTrue(Option.isNone(McpServer.checkHeaders(call({}), h({ "Mcp-Param-Other": "1" }), inputSchema)))
    })
  })

  it("bodies that are not judged here: missing clientCapabilities, no _meta, notifications, invalid messages", () => {
    const noCaps = request(1, "tools/list", { _meta: { [KEY.protocolVersion]: MODERN } })
    assert.isTrue(Option.isNone(McpServer.checkHeaders(noCaps, {})))
    assert.isTrue(Option.isNone(McpServer.checkHeaders(request(1, "tools/list"), {})))
    assert.isTrue(
      Option.isNone(McpServer.checkHeaders(notification("notifications/initialized", withModernMeta()), {}))
    )
    assert.isTrue(Option.isNone(McpServer.checkHeaders([body("tools/list")], {})))
  })
})

describe("dispatch with HTTP headers: validation order (protocol.md §3.3)", () => {
  const h = (method: string, extra: Record<string, string> = {}): Record<string, string> => ({
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": method,
    ...extra
  })
  const send = (server: McpServer.McpServer, message: unknown, headers: Headers) =>
    dispatchChecked(server, MODERN, message, { headers })

  it.effect("missing clientCapabilities → -32602 before any header mismatch", () =>
    Effect.gen(function*() {
      const server = yield* makeLibrary
      const message = request(1, "tools/list", { _meta: { [KEY.protocolVersion]: MODERN } })
      const reply = yield* send(server, message, h("prompts/list"))
      assert.strictEqual(errorOf(reply).code, -32602)
      assert.strictEqual(reply.status, 400)
      // missing protocolVersion with a correct modern header (the conformance case) → -32602 too
      const noVersion = request(2, "tools/list", { _meta: { [KEY.clientCapabilities]: {} } })
      const r2 = yield* send(server, noVersion, h("tools/list"))
      assert.strictEqual(errorOf(r2).code, -32602)
      assert.strictEqual(r2.status, 400)
      // a modern header with no _meta at all → -32602 (era by header, §1.1 step 2)
      const r3 = yield* send(server, request(3, "tools/list"), h("tools/list"))
      assert.strictEqual(errorOf(r3).code, -32602)
      assert.strictEqual(r3.status, 400)
    }))

  it.effect("header 2026-07-28 + body v999.0.0 → -32020 (not -32022)", () =>
    Effect.gen(function*() {
      const server = yield* makeLibrary
      const message = request(1, "tools/list", withModernMeta({ _meta: { [KEY.protocolVersion]: "v999.0.0" } }))
      const reply = yield* send(server, message, h("tools/list"))
      assert.strictEqual(errorOf(reply).code, -32020)
      assert.strictEqual(reply.status, 400)
      assert.strictEqual(get(reply.message, "id"), 1)
      // when header and body agree on an unsupported version → -32022
      const both = yield* send(server, message, { ...h("tools/list"), "MCP-Protocol-Version": "v999.0.0" })
      expect(errorOf(both)).toMatchObject({ code: -32022, data: { requested: "v999.0.0", supported: ALL } })
    }))

  it.effect("a header mismatch on a valid request → -32020 with the request id; a match runs the request", () =>
    Effect.gen(function*() {
      const server = yield* makeLibrary
      const message = request("h1", "tools/call", withModernMeta({ name: "add", arguments: { numbers: [2, 3] } }))
      const bad = yield* send(server, message, h("tools/call", { "Mcp-Name": "logo" }))
      assert.strictEqual(errorOf(bad).code, -32020)
      assert.strictEqual(get(bad.message, "id"), "h1")
      const missing = yield* send(server, message, { "Mcp-Method": "tools/call", "Mcp-Name": "add" })
      assert.strictEqual(errorOf(missing).code, -32020)
      const ok = yield* send(server, message, h("tools/call", { "mcp-name": " add " }))
      expect(get(ok.message, "result", "structuredContent")).toEqual({ sum: 5 })
    }))

  it.effect("dispatch checks Mcp-Param-* against the called tool's x-mcp-header schema", () =>
    Effect.gen(function*() {
      const server = yield* build({
        tools: [
          Tool.fromJsonSchema({
            name: "deploy",
            inputSchema: { type: "object", properties: { count: { type: "integer", "x-mcp-header": "Count" } } },
            handler: ({ count }) => `deployed ${String(count)}`
          })
        ]
      })
      const message = request(1, "tools/call", withModernMeta({ name: "deploy", arguments: { count: 42 } }))
      const ok = yield* send(server, message, h("tools/call", { "Mcp-Name": "deploy", "Mcp-Param-Count": "42.0" }))
      assert.strictEqual(get(ok.message, "result", "content", 0, "text"), "deployed 42")
      const missing = yield* send(server, message, h("tools/call", { "Mcp-Name": "deploy" }))
      assert.strictEqual(errorOf(missing).code, -32020)
      const wrong = yield* send(server, message, h("tools/call", { "Mcp-Name": "deploy", "Mcp-Param-Count": "7" }))
      assert.strictEqual(errorOf(wrong).code, -32020)
    }))

  it.effect("legacy traffic with headers needs no Mcp-Method / Mcp-Name", () =>
    Effect.gen(function*() {
      const server = yield* makeLibrary
      const session = yield* McpServer.makeSession
      yield* dispatchChecked(server, "2025-11-25", request(0, "initialize", initializeParams("2025-11-25")), {
        session,
        headers: {}
      })
      const reply = yield* dispatchChecked(
        server,
        "2025-11-25",
        request(1, "tools/call", { name: "add", arguments: { numbers: [1] } }),
        { session, headers: { "MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "abc" } }
      )
      expect(get(reply.message, "result", "structuredContent")).toEqual({ sum: 1 })
      assertLegacyShape(reply)
    }))
})

// =============================================================================================
// request-scoped notifications
// =============================================================================================

describe("request context", () => {
  it.effect("ctx.notify reaches the dispatcher's notify; progressToken is read from _meta", () =>
    Effect.gen(function*() {
      const sent = yield* Ref.make<ReadonlyArray<unknown>>([])
      const server = yield* build({
        tools: [
          Tool.fromJsonSchema({
            name: "progress",
            handler: (_args, ctx) =>
              ctx.progressToken === undefined
                ? Effect.succeed("no token")
                : Effect.as(
                  ctx.notify(
                    JsonRpc.notification("notifications/progress", { progressToken: ctx.progressToken, progress: 1 })
                  ),
                  "notified"
                )
          })
        ]
      })
      const notify = (n: JsonRpc.Notification) => Ref.update(sent, (xs) => [...xs, n])
      for (const token of [0, "tok", 1.5] as const) {
        const reply = yield* dispatchChecked(
          server,
          MODERN,
          request(1, "tools/call", { name: "progress", _meta: { ...modernMeta(), progressToken: token } }),
          { notify }
        )
        assert.strictEqual(get(reply.message, "result", "content", 0, "text"), token === 1.5 ? "no token" : "notified")
      }
      const tokens = (yield* Ref.get(sent)).map((n) => get(n, "params", "progressToken"))
      expect(tokens).toEqual([0, "tok"])
      assert.isTrue((yield* Ref.get(sent)).every(isObject))
    }))

  // Handlers returning a value skip the provision; one returning an Effect must still get it.
  it.effect.each(ERAS)(
    "an Effect a handler returns reads the request as the RequestContext service (%s)",
    (rev) =>
      Effect.gen(function*() {
        const seen = Effect.map(RequestContext.RequestContext, (c) => `${c.method} ${String(c.requestId)} ${c.era}`)
        const server = yield* build({
          tools: [Tool.fromJsonSchema({ name: "t", handler: () => seen })],
          resources: [Resource.make({ uri: "x://r", name: "r", handler: () => seen })],
          resourceTemplates: [
            Resource.template({
              uriTemplate: "x://t/{id}",
              name: "t",
              handler: () => seen,
              complete: { id: () => Effect.map(seen, (s) => [s]) }
            })
          ],
          prompts: [Prompt.make({ name: "p", handler: () => seen })]
        })
        const conn = yield* connect(server, rev)
        const era = rev === MODERN ? "modern" : "legacy"
        const tool = yield* conn.call("tools/call", { name: "t" })
        const resource = yield* conn.call("resources/read", { uri: "x://r" })
        const template = yield* conn.call("resources/read", { uri: "x://t/1" })
        const prompt = yield* conn.call("prompts/get", { name: "p" })
        const completion = yield* conn.call("completion/complete", {
          ref: { type: "ref/resource", uri: "x://t/{id}" },
          argument: { name: "id", value: "" }
        })
        expect([
          get(resultOf(tool), "content", 0, "text"),
          get(resultOf(resource), "contents", 0, "text"),
          get(resultOf(template), "contents", 0, "text"),
          get(resultOf(prompt), "messages", 0, "content", "text"),
          get(resultOf(completion), "completion", "values", 0)
        ]).toEqual([
          `tools/call ${get(tool.message, "id")} ${era}`,
          `resources/read ${get(resource.message, "id")} ${era}`,
          `resources/read ${get(template.message, "id")} ${era}`,
          `prompts/get ${get(prompt.message, "id")} ${era}`,
          `completion/complete ${get(completion.message, "id")} ${era}`
        ])
      })
  )
})

// =============================================================================================
// untyped failures (issue 19, item 6): a failure of a type no handler may fail with (untyped
// code, a Promise-based library, a cast) is a defect with the documented wire shape, never an
// `input_required` result without input requests
// =============================================================================================

describe("a failure of an undeclared type is a defect, in every era", () => {
  // what untyped code can do despite the handler's declared error type
  const untyped = <A>(error: unknown): Effect.Effect<A> => Effect.fail(error) as unknown as Effect.Effect<A>
  const server = build({
    tools: [
      Tool.fromJsonSchema({ name: "odd", handler: () => untyped({ _tag: "Oops", secret: "secret-1" }) }),
      Tool.fromJsonSchema({ name: "plain", handler: () => untyped(new Error("secret-2")) })
    ],
    prompts: [Prompt.make({ name: "odd", handler: () => untyped({ _tag: "Oops", secret: "secret-3" }) })],
    resources: [Resource.make({ uri: "test://odd", name: "odd", handler: () => untyped("secret-4") })]
  })
  for (const rev of ERAS) {
    it.effect(`${rev}: tools/call → isError result, no details; prompts/get and resources/read → -32603`, () =>
      Effect.gen(function*() {
        const c = yield* connect(yield* server, rev)
        for (const name of ["odd", "plain"]) {
          const reply = yield* c.call("tools/call", { name, arguments: {} })
          const result = resultOf(reply)
          assert.strictEqual(result.isError, true, name)
          assert.notStrictEqual(result.resultType, "input_required")
          assert.notInclude(JSON.stringify(reply.message), "secret")
        }
        const prompt = yield* c.call("prompts/get", { name: "odd" })
        expect(errorOf(prompt)).toEqual({ code: -32603, message: "Internal error", data: undefined })
        const read = yield* c.call("resources/read", { uri: "test://odd" })
        expect(errorOf(read)).toEqual({ code: -32603, message: "Internal error", data: undefined })
        assert.notInclude(JSON.stringify([prompt.message, read.message]), "secret")
      }))
  }
})
