import { assert, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { Content, InProcess, JsonRpc, McpClient, McpServer, Prompt, Resource, Tool, Transport } from "presa-mcp"
import { LOGO_PNG, makeLibrary, makeLibraryWith } from "../examples/library-definitions.js"
import { assertNotificationSpecValid } from "./support/SpecSchema.js"
import { checkedTransport, get, KEY } from "./support/Wire.js"

// The core capabilities are exactly tools, resources, prompts, completions; the library also serves
// the code-review skill, so the Skills extension is declared under `extensions` (issue 6).
const LIBRARY_CAPS = {
  tools: {},
  resources: {},
  prompts: {},
  completions: {},
  extensions: { "io.modelcontextprotocol/skills": { directoryRead: true } }
}
const INSTRUCTIONS = "A small reference library: add numbers, show a logo, read about people. " +
  "To review a change, load the skill skill://code-review/SKILL.md."

/** Connects a client to `server` in process; every response it receives is cross-checked. */
const connect = (server: McpServer.McpServer, options: McpClient.Options = {}) =>
  Effect.gen(function*() {
    const { checked, transport } = yield* checkedTransport(yield* InProcess.client(server))
    const client = yield* McpClient.connect(transport, options)
    return { client, checked }
  })

const withOptions = (patch: Partial<McpServer.Options>) => makeLibraryWith(patch)

describe("McpClient over InProcess", () => {
  it.scoped("connects in the modern era: version, capabilities, instructions, serverInfo", () =>
    Effect.gen(function*() {
      const { checked, client } = yield* connect(yield* makeLibrary)
      assert.strictEqual(client.info.era, "modern")
      assert.strictEqual(client.info.protocolVersion, "2026-07-28")
      expect(client.info.capabilities).toEqual(LIBRARY_CAPS)
      assert.strictEqual(client.info.instructions, INSTRUCTIONS)
      expect(client.info.serverInfo).toEqual({ name: "presa-library", version: "0.1.0" })
      expect(client.info.supportedVersions).toEqual(["2026-07-28", "2025-11-25", "2025-06-18"])
      assert.strictEqual(yield* Ref.get(checked), 1)
    }))

  const scenarios = [
    ["modern", {}, {}, "modern", "2026-07-28"],
    ["server versions [2025-11-25]", { versions: ["2025-11-25"] }, {}, "legacy", "2025-11-25"],
    ["client versions [2025-06-18]", {}, { versions: ["2025-06-18"] }, "legacy", "2025-06-18"],
    ["modern-only server", { versions: ["2026-07-28"] }, {}, "modern", "2026-07-28"]
  ] as const

  describe.each(scenarios)("%s", (_label, serverPatch, clientOptions, era, version) => {
    const setup = Effect.gen(function*() {
      const server = yield* withOptions({ ...serverPatch, pageSize: 1 })
      return yield* connect(server, clientOptions)
    })

    it.scoped("picks the era and version", () =>
      Effect.gen(function*() {
        const { client } = yield* setup
        assert.strictEqual(client.info.era, era)
        assert.strictEqual(client.info.protocolVersion, version)
        expect(client.info.capabilities).toEqual(LIBRARY_CAPS)
        assert.strictEqual(client.info.instructions, INSTRUCTIONS)
        expect(client.info.serverInfo).toMatchObject({ name: "presa-library", version: "0.1.0" })
      }))

    it.scoped("callTool: structured result, validation failure as isError, content blocks", () =>
      Effect.gen(function*() {
        const { client } = yield* setup
        const sum = yield* client.callTool("add", { numbers: [1, 2, 3] })
        expect(sum.structuredContent).toEqual({ sum: 6 })
        assert.strictEqual(Content.textOf(sum), "{\"sum\":6}")
        const bad = yield* client.callTool("add", { numbers: ["one"] })
        assert.strictEqual(bad.isError, true)
        assert.strictEqual(Content.textOf(bad), "Invalid arguments at /numbers/0: expected number, got string")
        const logo = yield* client.callTool("logo")
        assert.strictEqual(Content.textOf(logo), "Here is the logo:")
        expect(logo.content[1]).toEqual({ type: "image", data: LOGO_PNG, mimeType: "image/png" })
      }))

    it.scoped("readResource, getPrompt, complete", () =>
      Effect.gen(function*() {
        const { client } = yield* setup
        assert.strictEqual(Content.textOf(yield* client.readResource("people://ada")), "Ada Lovelace")
        assert.strictEqual(Content.textOf(yield* client.readResource("file:///readme.txt")), "Read me first.")
        const prompt = yield* client.getPrompt("introduce", { id: "alan" })
        assert.strictEqual(Content.textOf(prompt), "Introduce Alan Turing in one sentence.")
        expect(yield* client.complete({ type: "ref/prompt", name: "introduce" }, "id", "a")).toEqual({
          values: ["ada", "alan"]
        })
        expect(yield* client.complete({ type: "ref/resource", uri: "people://{id}" }, "id", "ad")).toEqual({
          values: ["ada"]
        })
      }))

    it.scoped("a missing resource fails with McpError -32602 carrying data.uri; isResourceNotFound", () =>
      Effect.gen(function*() {
        const { client } = yield* setup
        const e = yield* Effect.flip(client.readResource("people://nobody"))
        assert.strictEqual(e._tag, "McpError")
        if (e._tag === "McpError") {
          assert.strictEqual(e.code, -32602)
          assert.strictEqual(e.message, "Resource not found")
          expect(e.data).toEqual({ uri: "people://nobody" })
        }
        assert.isTrue(McpClient.isResourceNotFound(e))
        const prompt = yield* Effect.flip(client.getPrompt("introduce"))
        assert.strictEqual(prompt._tag, "McpError")
        assert.isFalse(McpClient.isResourceNotFound(prompt))
        const tool = yield* Effect.flip(client.callTool("nope"))
        expect(tool).toMatchObject({ _tag: "McpError", code: -32602, message: "Unknown tool: nope" })
      }))

    it.scoped("listAll* follow the cursors (pageSize 1)", () =>
      Effect.gen(function*() {
        const { client } = yield* setup
        const first = yield* client.listTools()
        expect(first.tools.map((t) => t.name)).toEqual(["add"])
        assert.isString(first.nextCursor)
        expect((yield* client.listAllTools).map((t) => t.name)).toEqual(["add", "logo"])
        expect((yield* client.listAllResources).map((r) => r.uri)).toEqual([
          "file:///readme.txt",
          "skill://code-review/SKILL.md"
        ])
        expect((yield* client.listAllResourceTemplates).map((t) => t.uriTemplate)).toEqual(["people://{id}"])
        expect((yield* client.listAllPrompts).map((p) => p.name)).toEqual(["introduce"])
      }))
  })

  it.scoped("listAllTools collects 5 tools over 3 pages; each page is a single request", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "paged",
        version: "1",
        pageSize: 2,
        tools: ["a", "b", "c", "d", "e"].map((name) => Tool.fromJsonSchema({ name, handler: () => name }))
      })
      const { checked, client } = yield* connect(server)
      const before = yield* Ref.get(checked)
      expect((yield* client.listAllTools).map((t) => t.name)).toEqual(["a", "b", "c", "d", "e"])
      assert.strictEqual((yield* Ref.get(checked)) - before, 3)
      const last = yield* client.listTools((yield* client.listTools((yield* client.listTools()).nextCursor)).nextCursor)
      expect(last.tools.map((t) => t.name)).toEqual(["e"])
      assert.isUndefined(last.nextCursor)
    }))

  it.scoped("an McpError from readResource carries the handler's code, message and data", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "r",
        version: "1",
        resources: [
          Resource.make({
            uri: "x://denied",
            name: "denied",
            handler: () => Effect.fail(new McpServer.McpError({ code: 4003, message: "denied", data: { why: "nope" } }))
          })
        ]
      })
      const { client } = yield* connect(server)
      const e = yield* Effect.flip(client.readResource("x://denied"))
      expect(e).toMatchObject({ _tag: "McpError", code: 4003, message: "denied", data: { why: "nope" } })
      assert.isFalse(McpClient.isResourceNotFound(e))
    }))

  it("isResourceNotFound: -32602 with data.uri, and the legacy -32002", () => {
    assert.isTrue(McpClient.isResourceNotFound(JsonRpc.McpError.resourceNotFound("x://a")))
    assert.isTrue(McpClient.isResourceNotFound(new JsonRpc.McpError({ code: -32002, message: "Resource not found" })))
    assert.isFalse(McpClient.isResourceNotFound(JsonRpc.McpError.invalidParams("Unknown tool: x", { name: "x" })))
    assert.isFalse(McpClient.isResourceNotFound(JsonRpc.McpError.invalidParams("bad")))
    assert.isFalse(McpClient.isResourceNotFound(new Transport.TransportError({ reason: "Closed", message: "closed" })))
    assert.isFalse(
      McpClient.isResourceNotFound(new McpClient.ClientError({ reason: "Timeout", message: "tools/call timed out" }))
    )
  })

  it.scoped("the client sends its info and capabilities (modern: per request; legacy: in initialize)", () =>
    Effect.gen(function*() {
      const whoami = Tool.fromJsonSchema({
        name: "whoami",
        handler: (_args, ctx) => ({
          era: ctx.era,
          version: ctx.protocolVersion,
          client: ctx.clientInfo?.name ?? null,
          caps: ctx.clientCapabilities,
          hasMeta: ctx.meta[KEY.protocolVersion] !== undefined
        })
      })
      const capabilities = { roots: {}, elicitation: {} }
      for (const versions of [undefined, ["2025-11-25"] as const]) {
        const server = yield* McpServer.make({
          name: "w",
          version: "1",
          tools: [whoami],
          ...(versions === undefined ? {} : { versions })
        })
        const { client } = yield* connect(server, { name: "my-client", version: "9.9.9", capabilities })
        const r = yield* client.callTool("whoami")
        expect(r.structuredContent).toEqual(
          versions === undefined
            ? { era: "modern", version: "2026-07-28", client: "my-client", caps: capabilities, hasMeta: true }
            : { era: "legacy", version: "2025-11-25", client: "my-client", caps: capabilities, hasMeta: false }
        )
      }
    }))

  it.scoped("client.request sends any method with _meta added (modern) and yields the raw result", () =>
    Effect.gen(function*() {
      const { client } = yield* connect(yield* makeLibrary)
      const result = yield* client.request("tools/list")
      assert.strictEqual(result.resultType, "complete")
      assert.isArray(result.tools)
      const unknown = yield* Effect.flip(client.request("nope/nothing"))
      expect(unknown).toMatchObject({ _tag: "McpError", code: -32601 })
      // a caller's own _meta is kept alongside the protocol keys
      const call = yield* client.request("tools/call", {
        name: "add",
        arguments: { numbers: [4] },
        _meta: { "com.example/trace": "t1" }
      })
      expect(call.structuredContent).toEqual({ sum: 4 })
    }))

  it.scoped("an empty server: connects with no capabilities; tools/list fails with -32601", () =>
    Effect.gen(function*() {
      const { client } = yield* connect(yield* McpServer.make({ name: "empty", version: "0" }))
      expect(client.info.capabilities).toEqual({})
      assert.isUndefined(client.info.instructions)
      const e = yield* Effect.flip(client.listTools())
      expect(e).toMatchObject({ _tag: "McpError", code: -32601 })
    }))

  it.scoped("no common version: a modern-only client against a legacy-only server → ClientError NoCommonVersion", () =>
    Effect.gen(function*() {
      const server = yield* withOptions({ versions: ["2025-11-25"] })
      const e = yield* Effect.flip(connect(server, { versions: ["2026-07-28"] }))
      expect(e).toMatchObject({ _tag: "ClientError", reason: "NoCommonVersion" })
    }))

  it.scoped("a legacy-only client against a modern-only server: initialize is refused with McpError", () =>
    Effect.gen(function*() {
      const server = yield* withOptions({ versions: ["2026-07-28"] })
      const e = yield* Effect.flip(connect(server, { versions: ["2025-11-25"] }))
      expect(e).toMatchObject({ _tag: "McpError", code: -32602 })
      if (e._tag === "McpError") expect(get(e.data, "supported")).toEqual(["2026-07-28"])
    }))

  it.scoped("request-scoped notifications reach onNotification (progress token echoed exactly)", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "p",
        version: "1",
        tools: [
          Tool.fromJsonSchema({
            name: "work",
            handler: (_args, ctx) =>
              Effect.gen(function*() {
                if (ctx.progressToken !== undefined) {
                  yield* ctx.notify(
                    JsonRpc.notification("notifications/progress", {
                      progressToken: ctx.progressToken,
                      progress: 1,
                      total: 2
                    })
                  )
                }
                return "done"
              })
          })
        ]
      })
      const { client } = yield* connect(server)
      const seen = yield* Ref.make<ReadonlyArray<JsonRpc.Notification>>([])
      const r = yield* client.callTool("work", {}, {
        _meta: { progressToken: 0 },
        onNotification: (n) => Ref.update(seen, (xs) => [...xs, n])
      })
      assert.strictEqual(Content.textOf(r), "done")
      const notes = yield* Ref.get(seen)
      expect(notes.map((n) => get(n, "params", "progressToken"))).toEqual([0])
      for (const n of notes) assertNotificationSpecValid("2026-07-28", n)
    }))

  it.scopedLive("a request past requestTimeout fails with ClientError Timeout", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const server = yield* McpServer.make({
        name: "slow",
        version: "1",
        tools: [
          Tool.fromJsonSchema({
            name: "slow",
            handler: () => Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)
          })
        ],
        prompts: [Prompt.make({ name: "p", handler: () => "quick" })]
      })
      const { client } = yield* connect(server, { requestTimeout: "100 millis" })
      const e = yield* Effect.flip(client.callTool("slow"))
      expect(e).toMatchObject({ _tag: "ClientError", reason: "Timeout" })
      assert.isTrue(yield* Deferred.isDone(started))
      // the client is still usable
      assert.strictEqual(Content.textOf(yield* client.getPrompt("p")), "quick")
    }))

  it.scopedLive("a call's own timeout wins over requestTimeout, shorter and longer (issue 18)", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "timed",
        version: "1",
        tools: [
          Tool.fromJsonSchema({ name: "never", handler: () => Effect.never }),
          Tool.fromJsonSchema({ name: "later", handler: () => Effect.as(Effect.sleep("600 millis"), "late but here") })
        ]
      })
      const patient = (yield* connect(server, { requestTimeout: "30 seconds" })).client
      const started = Date.now()
      const e = yield* Effect.flip(patient.callTool("never", {}, { timeout: "150 millis" }))
      expect(e).toMatchObject({ _tag: "ClientError", reason: "Timeout" })
      // far below the client-wide 30 s: the call's own deadline decided
      expect(Date.now() - started).toBeLessThan(10_000)
      const hasty = (yield* connect(server, { requestTimeout: "100 millis" })).client
      expect(yield* Effect.flip(hasty.callTool("later"))).toMatchObject({ _tag: "ClientError", reason: "Timeout" })
      const r = yield* hasty.callTool("later", {}, { timeout: "20 seconds" })
      assert.strictEqual(Content.textOf(r), "late but here")
    }))
})
