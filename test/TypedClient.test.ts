/**
 * Typed client calls from shared definitions (issue #35, point 2): `McpClient.call` /
 * `McpClient.prompt` / `McpClient.readTemplate` with the same `Tool.make` / `Prompt.make` /
 * `Resource.template` values the server serves, in process (both eras), and with `Tool.definition`
 * records against the official SDK v2 server (`test/fixtures/sdk-v2-typed-server.ts`, zod) over
 * stdio, both eras.
 */
import { assert, describe, expectTypeOf, it, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Content, InProcess, McpClient, type McpSchema, McpServer, Prompt, Resource, Tool } from "presa-mcp"
import * as Stdio from "../src/transport/Stdio.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const V2_TYPED = Path.join(ROOT, "test", "fixtures", "sdk-v2-typed-server.ts")

// ---------------------------------------------------------------------------------------------
// shared definitions
// ---------------------------------------------------------------------------------------------

class NoHits extends Schema.TaggedError<NoHits>()("NoHits", { query: Schema.String }) {}

class DivisionByZero extends Schema.TaggedError<DivisionByZero>()("DivisionByZero", { dividend: Schema.Number }) {}

const SearchParameters = Schema.Struct({
  query: Schema.String,
  limit: Schema.optional(Schema.Number.pipe(Schema.between(1, 100)))
})
const SearchResult = Schema.Struct({ hits: Schema.Array(Schema.String), total: Schema.Number })

const search = Tool.make({
  name: "search",
  parameters: SearchParameters,
  success: SearchResult,
  failure: NoHits,
  handler: ({ limit, query }) =>
    query === "none"
      ? Effect.fail(new NoHits({ query }))
      : Effect.succeed({ hits: Array.from({ length: limit ?? 2 }, (_, i) => `${query}-${i}`), total: limit ?? 2 })
})

/** A non-object success: sent as `{value}`, read back from it. */
const half = Tool.make({
  name: "half",
  parameters: Schema.Struct({ n: Schema.Number }),
  success: Schema.Number,
  handler: ({ n }) => n / 2
})

/** No `success`: the typed call yields the whole result. */
const hello = Tool.make({ name: "hello", handler: () => "hi" })

/** A plain `ToolError`: no typed failure. */
const refuse = Tool.make({
  name: "refuse",
  parameters: Schema.Struct({ why: Schema.String }),
  handler: ({ why }) => Effect.fail(new Tool.ToolError({ message: `refused: ${why}` }))
})

const greet = Prompt.make({
  name: "greet",
  parameters: Schema.Struct({ name: Schema.String, times: Schema.optional(Schema.NumberFromString) }),
  handler: ({ name, times }) => `Hello, ${name}! x${times ?? 1}`
})

const user = Resource.template({
  uriTemplate: "users://{id}",
  name: "user",
  mimeType: "text/plain",
  parameters: Schema.Struct({ id: Schema.NumberFromString }),
  handler: ({ id }) => `user ${id.toFixed(0)} (next ${id + 1})`
})

/** The plain form keeps working: the variables as matched. */
const file = Resource.template({
  uriTemplate: "files://{name}",
  name: "file",
  handler: (variables) => `file ${variables.name ?? "?"}`
})

const makeServer = (versions?: ReadonlyArray<McpSchema.ProtocolVersion>) =>
  McpServer.make({
    name: "typed",
    version: "1.0.0",
    ...(versions === undefined ? {} : { versions }),
    tools: [search, half, hello, refuse],
    prompts: [greet],
    resourceTemplates: [user, file]
  })

class Client extends Context.Tag("test/TypedClient/Client")<Client, McpClient.McpClient>() {}

const inProcess = (versions?: ReadonlyArray<McpSchema.ProtocolVersion>) =>
  Layer.scoped(
    Client,
    Effect.gen(function*() {
      const server = yield* makeServer(versions)
      return yield* McpClient.connect(yield* InProcess.client(server))
    })
  )

const spawnV2 = (versions?: ReadonlyArray<McpSchema.ProtocolVersion>) =>
  Layer.scoped(
    Client,
    Effect.gen(function*() {
      const transport = yield* Stdio.spawn({
        command: process.execPath,
        args: ["--import", "tsx", V2_TYPED],
        cwd: ROOT,
        stderr: () => Effect.void
      })
      return yield* McpClient.connect(transport, {
        probeTimeout: "3 seconds",
        requestTimeout: "15 seconds",
        ...(versions === undefined ? {} : { versions })
      })
    })
  )

// ---------------------------------------------------------------------------------------------
// our server, in process, both eras
// ---------------------------------------------------------------------------------------------

for (const [era, versions] of [["modern", undefined], ["legacy", ["2025-11-25"] as const]] as const) {
  layer(inProcess(versions))(`typed calls against our server in process (${era})`, (it) => {
    it.effect("the era is the one asked for", () =>
      Effect.gen(function*() {
        const client = yield* Client
        assert.strictEqual(client.info.era, era)
      }))

    it.effect("call: typed arguments in, the decoded success out", () =>
      Effect.gen(function*() {
        const client = yield* Client
        const result = yield* McpClient.call(client, search, { query: "effect", limit: 3 })
        expectTypeOf(result).toEqualTypeOf<{ readonly hits: ReadonlyArray<string>; readonly total: number }>()
        assert.deepStrictEqual(result, { hits: ["effect-0", "effect-1", "effect-2"], total: 3 })
        const omitted = yield* McpClient.call(client, search, { query: "x" })
        assert.deepStrictEqual(omitted, { hits: ["x-0", "x-1"], total: 2 })
      }))

    it.effect("call: a typed failure comes back decoded as the tool's error", () =>
      Effect.gen(function*() {
        const client = yield* Client
        const error = yield* Effect.flip(McpClient.call(client, search, { query: "none" }))
        expectTypeOf(error).toEqualTypeOf<
          NoHits | Tool.ToolError | McpClient.TypedCallError | McpClient.CallError
        >()
        assert.instanceOf(error, NoHits)
        assert.strictEqual(error._tag, "NoHits")
        assert.strictEqual(error instanceof NoHits ? error.query : undefined, "none")
        // catchTag works on it like on any typed error
        const recovered = yield* McpClient.call(client, search, { query: "none" }).pipe(
          Effect.catchTag("NoHits", (e) => Effect.succeed({ hits: [], total: -1, query: e.query }))
        )
        assert.deepStrictEqual(recovered, { hits: [], total: -1, query: "none" })
      }))

    it.effect("call: a ToolError without a failure Schema is Tool.ToolError with the result's text", () =>
      Effect.gen(function*() {
        const client = yield* Client
        const error = yield* Effect.flip(McpClient.call(client, refuse, { why: "busy" }))
        assert(error._tag === "ToolError", `expected ToolError, got ${error._tag}`)
        assert.strictEqual(error.message, "refused: busy")
        assert.deepStrictEqual(error.content, [{ type: "text", text: "refused: busy" }])
      }))

    it.effect("call: arguments that do not encode fail locally with TypedCallError Arguments", () =>
      Effect.gen(function*() {
        const client = yield* Client
        const error = yield* Effect.flip(McpClient.call(client, search, { query: "x", limit: 500 }))
        assert(error._tag === "TypedCallError", `expected TypedCallError, got ${error._tag}`)
        assert.strictEqual(error.reason, "Arguments")
        assert.strictEqual(error.name, "search")
        assert.strictEqual(error.message, "Invalid arguments at /limit: expected a number between 1 and 100, got 500")
      }))

    it.effect("call: a non-object success is read from {value}; no success yields the whole result", () =>
      Effect.gen(function*() {
        const client = yield* Client
        const n = yield* McpClient.call(client, half, { n: 5 })
        expectTypeOf(n).toEqualTypeOf<number>()
        assert.strictEqual(n, 2.5)
        const result = yield* McpClient.call(client, hello, {})
        expectTypeOf(result).toEqualTypeOf<McpSchema.CallToolResult>()
        assert.strictEqual(Content.textOf(result), "hi")
      }))

    it.effect("call: a result or an error result that does not decode is TypedCallError with the raw result", () =>
      Effect.gen(function*() {
        const client = yield* Client
        const wrongSuccess = Tool.definition({
          name: "search",
          parameters: SearchParameters,
          success: Schema.Struct({ hits: Schema.Array(Schema.Number), total: Schema.Number })
        })
        const bad = yield* Effect.flip(McpClient.call(client, wrongSuccess, { query: "q", limit: 1 }))
        assert(bad._tag === "TypedCallError", `expected TypedCallError, got ${bad._tag}`)
        assert.strictEqual(bad.reason, "Result")
        assert.strictEqual(
          bad.message,
          "Tool search: result does not decode at /hits/0: expected a number, got \"q-0\""
        )
        assert.deepStrictEqual(bad.result?.structuredContent, { hits: ["q-0"], total: 1 })

        class Other extends Schema.TaggedError<Other>()("Other", { code: Schema.Number }) {}
        const wrongFailure = Tool.definition({ name: "search", parameters: SearchParameters, failure: Other })
        const badFailure = yield* Effect.flip(McpClient.call(client, wrongFailure, { query: "none" }))
        assert(badFailure._tag === "TypedCallError", `expected TypedCallError, got ${badFailure._tag}`)
        assert.strictEqual(badFailure.reason, "Failure")
        assert.deepStrictEqual(badFailure.result?.structuredContent, { _tag: "NoHits", query: "none" })
        assert.strictEqual(badFailure.result?.isError, true)
      }))

    it.effect("call: an unknown tool is the server's McpError -32602", () =>
      Effect.gen(function*() {
        const client = yield* Client
        const ghost = Tool.definition({ name: "ghost", parameters: Schema.Struct({}) })
        const error = yield* Effect.flip(McpClient.call(client, ghost, {}))
        assert(error._tag === "McpError", `expected McpError, got ${error._tag}`)
        assert.strictEqual(error.code, -32602)
      }))

    it.effect("prompt: typed arguments encoded to the wire's strings", () =>
      Effect.gen(function*() {
        const client = yield* Client
        const result = yield* McpClient.prompt(client, greet, { name: "Ada", times: 2 })
        assert.strictEqual(Content.textOf(result), "Hello, Ada! x2")
        const once = yield* McpClient.prompt(client, greet, { name: "Bo" })
        assert.strictEqual(Content.textOf(once), "Hello, Bo! x1")
      }))

    it.effect("readTemplate: typed variables expanded into the URI; the handler gets them decoded", () =>
      Effect.gen(function*() {
        const client = yield* Client
        const result = yield* McpClient.readTemplate(client, user, { id: 7 })
        assert.strictEqual(Content.textOf(result), "user 7 (next 8)")
        assert.strictEqual(result.contents[0]?.uri, "users://7")
      }))

    it.effect("Schema template: variables that do not decode are -32602 naming the variable, with data.uri", () =>
      Effect.gen(function*() {
        const client = yield* Client
        const error = yield* Effect.flip(client.readResource("users://abc"))
        assert(error._tag === "McpError", `expected McpError, got ${error._tag}`)
        assert.strictEqual(error.code, -32602)
        assert.strictEqual(
          error.message,
          "Invalid URI variables at /id: Unable to decode \"abc\" into a number"
        )
        assert.deepStrictEqual(error.data, { uri: "users://abc" })
        assert.isTrue(McpClient.isResourceNotFound(error))
      }))

    it.effect("the plain template form keeps working", () =>
      Effect.gen(function*() {
        const client = yield* Client
        assert.strictEqual(Content.textOf(yield* client.readResource("files://a.txt")), "file a.txt")
      }))
  })
}

describe("typed calls against our server over Streamable HTTP (127.0.0.1 port 0)", () => {
  it.scopedLive("success, typed failure, prompt and template on a real transport", () =>
    Effect.gen(function*() {
      const { url } = yield* StreamableHttp.serve(yield* makeServer(), { port: 0 })
      const client = yield* McpClient.connect(yield* StreamableHttp.client({ url }))
      assert.deepStrictEqual(yield* McpClient.call(client, search, { query: "h", limit: 1 }), {
        hits: ["h-0"],
        total: 1
      })
      assert.instanceOf(yield* Effect.flip(McpClient.call(client, search, { query: "none" })), NoHits)
      assert.strictEqual(
        Content.textOf(yield* McpClient.prompt(client, greet, { name: "Cy", times: 4 })),
        "Hello, Cy! x4"
      )
      assert.strictEqual(Content.textOf(yield* McpClient.readTemplate(client, user, { id: 1 })), "user 1 (next 2)")
    }))
})

describe("typed definitions never reach the wire", () => {
  it.effect("tools/list, prompts/list, templates/list carry no Schema fields", () =>
    Effect.gen(function*() {
      const server = yield* makeServer()
      const client = yield* McpClient.connect(yield* InProcess.client(server))
      const tools = yield* client.listAllTools
      const wire = tools.find((t) => t.name === "search")
      assert.deepStrictEqual(Object.keys(wire ?? {}).sort(), ["inputSchema", "name", "outputSchema"])
      const prompts = yield* client.listAllPrompts
      assert.deepStrictEqual(Object.keys(prompts[0] ?? {}).sort(), ["arguments", "name"])
      const templates = yield* client.listAllResourceTemplates
      assert.deepStrictEqual(templates.map((t) => Object.keys(t).sort()), [
        ["mimeType", "name", "uriTemplate"],
        ["name", "uriTemplate"]
      ])
    }).pipe(Effect.scoped))

  it("types: a handler may fail with its failure Schema's type only when it declares one", () => {
    Tool.make({
      name: "ok",
      failure: NoHits,
      handler: () => Effect.fail(new NoHits({ query: "q" }))
    })
    Tool.make({
      name: "bad",
      // @ts-expect-error: without `failure`, a handler may fail only with ToolError, McpError or InputRequired
      handler: () => Effect.fail(new NoHits({ query: "q" }))
    })
    Tool.make({
      name: "other",
      failure: DivisionByZero,
      // @ts-expect-error: NoHits is not the declared failure
      handler: () => Effect.fail(new NoHits({ query: "q" }))
    })
  })
})

// ---------------------------------------------------------------------------------------------
// the official SDK v2 server (zod) over stdio: the same definitions as Tool.definition records
// ---------------------------------------------------------------------------------------------

const searchDef = Tool.definition({
  name: "search",
  parameters: SearchParameters,
  success: SearchResult,
  failure: NoHits
})
const divideDef = Tool.definition({
  name: "divide",
  parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  success: Schema.Struct({ quotient: Schema.Number }),
  failure: DivisionByZero
})
const legacyText = Tool.definition({
  name: "legacy-text",
  parameters: Schema.Struct({}),
  success: Schema.Struct({ count: Schema.Number })
})
const greetDef = Prompt.definition({
  name: "greet",
  parameters: Schema.Struct({ name: Schema.String, times: Schema.optional(Schema.NumberFromString) })
})
const userDef = Resource.templateDefinition({
  uriTemplate: "users://{id}",
  parameters: Schema.Struct({ id: Schema.NumberFromString })
})

for (const [era, versions] of [["modern", undefined], ["legacy", ["2025-11-25"] as const]] as const) {
  layer(spawnV2(versions), { timeout: 30_000 })(
    `typed calls against the official SDK v2 server (stdio, ${era})`,
    (it) => {
      it.effect("call: success, typed failure, and a result read from its text block", () =>
        Effect.gen(function*() {
          const client = yield* Client
          assert.strictEqual(client.info.era, era)
          assert.deepStrictEqual(yield* McpClient.call(client, searchDef, { query: "zod", limit: 2 }), {
            hits: ["zod-0", "zod-1"],
            total: 2
          })
          const noHits = yield* Effect.flip(McpClient.call(client, searchDef, { query: "none" }))
          assert.instanceOf(noHits, NoHits)
          assert.deepStrictEqual(yield* McpClient.call(client, divideDef, { a: 9, b: 3 }), { quotient: 3 })
          const byZero = yield* Effect.flip(McpClient.call(client, divideDef, { a: 9, b: 0 }))
          assert.instanceOf(byZero, DivisionByZero)
          assert.strictEqual(byZero instanceof DivisionByZero ? byZero.dividend : undefined, 9)
          assert.deepStrictEqual(yield* McpClient.call(client, legacyText, {}), { count: 3 })
        }))

      it.effect("call: the server's own argument error (no structuredContent) is Tool.ToolError", () =>
        Effect.gen(function*() {
          const client = yield* Client
          const loose = Tool.definition({
            name: "search",
            parameters: Schema.Struct({ query: Schema.String, limit: Schema.Number }),
            success: SearchResult,
            failure: NoHits
          })
          const error = yield* Effect.flip(McpClient.call(client, loose, { query: "x", limit: 500 }))
          assert(error._tag === "ToolError", `expected ToolError, got ${error._tag}`)
          assert.match(error.message, /limit/)
        }))

      it.effect("prompt and readTemplate", () =>
        Effect.gen(function*() {
          const client = yield* Client
          assert.strictEqual(
            Content.textOf(yield* McpClient.prompt(client, greetDef, { name: "Ada", times: 3 })),
            "Hello, Ada! x3"
          )
          const read = yield* McpClient.readTemplate(client, userDef, { id: 42 })
          assert.strictEqual(Content.textOf(read), "user 42")
        }))
    }
  )
}
