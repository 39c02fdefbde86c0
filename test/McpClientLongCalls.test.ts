/**
 * A client that survives long calls and era changes, over real transports (Streamable HTTP on
 * 127.0.0.1, port 0):
 *
 * - progress extends a `tools/call`'s deadline (`resetTimeoutOnProgress`, default on): a call
 *   whose progress comes more often than `requestTimeout` outlives it; the same call with the
 *   option off times out; a call whose progress never ends fails at `maxTotalTimeout` and its
 *   handler is cancelled;
 * - the era cache: a second client with the same cache and key sends no `server/discover`
 *   (counted at a scripted server), modern and legacy; a verdict up front sends none either;
 * - a tool whose `outputSchema` declares draft-07 (`$schema`) is validated, not refused: a raw
 *   server's matching result passes, a mismatching one fails with `ClientError` "InvalidResult"
 *   (built-in validator: the top level; `JsonSchemaFull`: through `definitions` / `$ref`); the
 *   official SDK v1 server (spawned, HTTP) lists zod's draft-07 schema and its result passes.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { Content, JsonRpc, McpClient, McpServer, Tool } from "presa-mcp"
import * as JsonSchemaFull from "../src/JsonSchemaFull.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import { type Canned, type Recorded, recorder } from "./fixtures/http-raw.js"
import { spawnSdkServer } from "./fixtures/interop-http.js"

const WAIT: Duration.DurationInput = "20 seconds"
const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | Error, R> =>
  Effect.timeoutFail(effect, { duration: WAIT, onTimeout: () => new Error(`timed out after ${Duration.format(WAIT)}`) })

// ---------------------------------------------------------------------------------------------
// long calls
// ---------------------------------------------------------------------------------------------

/** A server whose `steps` tool reports progress every `every` ms for `count` steps; `interrupted` completes when a run is cancelled. */
const progressServer = Effect.gen(function*() {
  const interrupted = yield* Deferred.make<void>()
  const server = yield* McpServer.make({
    name: "long",
    version: "1.0.0",
    tools: [
      Tool.fromJsonSchema({
        name: "steps",
        inputSchema: {
          type: "object",
          properties: { count: { type: "integer" }, every: { type: "integer" } },
          required: ["count", "every"]
        },
        handler: (args, ctx) =>
          Effect.gen(function*() {
            const count = typeof args.count === "number" ? args.count : 0
            const every = typeof args.every === "number" ? args.every : 0
            for (let i = 1; i <= count; i++) {
              yield* Effect.sleep(Duration.millis(every))
              yield* ctx.progress(i, { total: count })
            }
            return `${count} steps`
          }).pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
      })
    ]
  })
  const { url } = yield* StreamableHttp.serve(server, { port: 0, host: "127.0.0.1" })
  return { url, interrupted }
})

const connectHttp = (url: string, options: McpClient.Options = {}) =>
  Effect.flatMap(StreamableHttp.client({ url }), (transport) => McpClient.connect(transport, options))

describe("McpClient long calls (Streamable HTTP)", () => {
  it.live("progress keeps a tools/call alive past requestTimeout; without the option it times out", () =>
    bounded(
      Effect.gen(function*() {
        const { url } = yield* progressServer
        const client = yield* connectHttp(url, { requestTimeout: "1 second" })
        let updates = 0
        const onProgress = () =>
          Effect.sync(() => {
            updates++
          })
        // 8 steps of 200 ms: 1.6 s in all, never 1 s without progress
        const result = yield* client.callTool("steps", { count: 8, every: 200 }, { onProgress })
        assert.strictEqual(Content.textOf(result), "8 steps")
        assert.strictEqual(updates, 8)

        const off = yield* Effect.flip(
          client.callTool("steps", { count: 8, every: 200 }, { onProgress, resetTimeoutOnProgress: false })
        )
        assert.strictEqual(off._tag, "ClientError")
        assert.strictEqual(off._tag === "ClientError" ? off.reason : undefined, "Timeout")
      }).pipe(Effect.scoped)
    ))

  it.live("progress that never ends fails at maxTotalTimeout, and the server's handler is cancelled", () =>
    bounded(
      Effect.gen(function*() {
        const { interrupted, url } = yield* progressServer
        const client = yield* connectHttp(url, { requestTimeout: "1 second", maxTotalTimeout: "2500 millis" })
        let updates = 0
        const e = yield* Effect.flip(
          client.callTool("steps", { count: 50, every: 200 }, {
            onProgress: () =>
              Effect.sync(() => {
                updates++
              })
          })
        )
        assert.strictEqual(e._tag, "ClientError")
        assert.strictEqual(e._tag === "ClientError" ? e.reason : undefined, "Timeout")
        // it outlived requestTimeout thanks to progress, and stopped well before the 50 steps
        assert.isAbove(updates, 5)
        assert.isBelow(updates, 50)
        yield* Deferred.await(interrupted)
      }).pipe(Effect.scoped)
    ))

  it.live("a call without progress still times out at requestTimeout", () =>
    bounded(
      Effect.gen(function*() {
        const { url } = yield* progressServer
        const client = yield* connectHttp(url, { requestTimeout: "500 millis" })
        // no progress token: nothing extends the deadline
        const e = yield* Effect.flip(client.callTool("steps", { count: 5, every: 300 }))
        assert.strictEqual(e._tag === "ClientError" ? e.reason : e._tag, "Timeout")
      }).pipe(Effect.scoped)
    ))
})

// ---------------------------------------------------------------------------------------------
// a scripted server on HTTP that counts what it receives
// ---------------------------------------------------------------------------------------------

const DRAFT_07_OUTPUT = {
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  definitions: { point: { type: "object", properties: { x: { type: "number" } }, required: ["x"] } },
  properties: { total: { type: "number" }, at: { $ref: "#/definitions/point" } },
  required: ["total", "at"]
}

const json = (body: unknown): Canned => ({
  status: 200,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body)
})

/** The JSON-RPC message of a recorded POST (`undefined` for GET / DELETE or a non-request). */
const messageOf = (r: Recorded): JsonRpc.Request | JsonRpc.Notification | undefined => {
  if (r.method !== "POST") return undefined
  const parsed = JsonRpc.parse(r.body)
  return parsed._tag === "Request" || parsed._tag === "Notification" ? parsed.message : undefined
}

/**
 * A raw server: modern (`server/discover`, 2026-07-28) or legacy (discover refused with -32601,
 * `initialize` answered 2025-11-25). `tools/list` lists `sum` with a draft-07 `outputSchema`;
 * `tools/call` answers `structuredContent` as `arguments.answer`.
 */
const rawServer = (era: "modern" | "legacy") =>
  recorder((r) => {
    const m = messageOf(r)
    if (m === undefined || !("id" in m) || m.id === undefined) return { status: 202 }
    const id = m.id
    switch (m.method) {
      case "server/discover":
        return era === "modern"
          ? json(JsonRpc.success(id, {
            supportedVersions: ["2026-07-28"],
            capabilities: { tools: {} },
            _meta: { "io.modelcontextprotocol/serverInfo": { name: "raw", version: "1" } }
          }))
          : json(JsonRpc.failure(id, JsonRpc.McpError.methodNotFound("server/discover")))
      case "initialize":
        return json(JsonRpc.success(id, {
          protocolVersion: "2025-11-25",
          capabilities: { tools: {} },
          serverInfo: { name: "raw-legacy", version: "1" }
        }))
      case "tools/list":
        return json(JsonRpc.success(id, {
          tools: [{ name: "sum", inputSchema: { type: "object" }, outputSchema: DRAFT_07_OUTPUT }]
        }))
      case "tools/call": {
        const answer = JsonRpc.isObject(m.params) && JsonRpc.isObject(m.params.arguments)
          ? m.params.arguments.answer
          : undefined
        return json(JsonRpc.success(id, {
          content: [{ type: "text", text: answer === undefined ? "no answer" : JSON.stringify(answer) }],
          ...(answer === undefined ? {} : { structuredContent: answer })
        }))
      }
      default:
        return json(JsonRpc.failure(id, JsonRpc.McpError.methodNotFound(m.method)))
    }
  })

const countOf = (requests: ReadonlyArray<Recorded>, method: string): number =>
  requests.filter((r) => messageOf(r)?.method === method).length

describe("McpClient era cache and verdict (Streamable HTTP)", () => {
  it.live("modern: the second client with the same cache sends no server/discover", () =>
    bounded(
      Effect.gen(function*() {
        const server = yield* rawServer("modern")
        const cache = yield* McpClient.makeEraCache
        const first = yield* connectHttp(server.url, { eraCache: { cache, key: server.url } })
        assert.strictEqual(first.info.era, "modern")
        assert.strictEqual(countOf(yield* server.requests, "server/discover"), 1)
        const second = yield* connectHttp(server.url, { eraCache: { cache, key: server.url } })
        assert.strictEqual(second.info.era, "modern")
        assert.deepStrictEqual(second.info.serverInfo, { name: "raw", version: "1" })
        assert.strictEqual((yield* second.listAllTools).length, 1)
        const requests = yield* server.requests
        assert.strictEqual(countOf(requests, "server/discover"), 1, "a cache hit sends no probe")
        assert.strictEqual(countOf(requests, "initialize"), 0)
        // another key misses
        yield* connectHttp(server.url, { eraCache: { cache, key: `${server.url}?other` } })
        assert.strictEqual(countOf(yield* server.requests, "server/discover"), 2)
      }).pipe(Effect.scoped)
    ))

  it.live("legacy: a refused probe is remembered, the next client goes straight to initialize", () =>
    bounded(
      Effect.gen(function*() {
        const server = yield* rawServer("legacy")
        const cache = yield* McpClient.makeEraCache
        const first = yield* connectHttp(server.url, { eraCache: { cache, key: server.url } })
        assert.strictEqual(first.info.era, "legacy")
        const second = yield* connectHttp(server.url, { eraCache: { cache, key: server.url } })
        assert.strictEqual(second.info.era, "legacy")
        assert.strictEqual(second.info.protocolVersion, "2025-11-25")
        const requests = yield* server.requests
        assert.strictEqual(countOf(requests, "server/discover"), 1)
        assert.strictEqual(countOf(requests, "initialize"), 2)
        assert.deepStrictEqual(yield* cache.get(server.url).pipe(Effect.map((o) => o._tag)), "Some")
        yield* cache.invalidate(server.url)
        assert.deepStrictEqual(yield* cache.get(server.url).pipe(Effect.map((o) => o._tag)), "None")
      }).pipe(Effect.scoped)
    ))

  it.live("a verdict up front: no probe at all, modern or legacy", () =>
    bounded(
      Effect.gen(function*() {
        const modern = yield* rawServer("modern")
        const client = yield* connectHttp(modern.url, { era: { era: "modern" } })
        assert.strictEqual(client.info.era, "modern")
        assert.strictEqual(client.info.protocolVersion, "2026-07-28")
        const result = yield* client.callTool("sum", { answer: { total: 1, at: { x: 2 } } })
        assert.deepStrictEqual(result.structuredContent, { total: 1, at: { x: 2 } })
        const requests = yield* modern.requests
        assert.strictEqual(countOf(requests, "server/discover"), 0)
        assert.strictEqual(countOf(requests, "tools/call"), 1)

        const legacy = yield* rawServer("legacy")
        const old = yield* connectHttp(legacy.url, { era: { era: "legacy" } })
        assert.strictEqual(old.info.era, "legacy")
        assert.strictEqual(countOf(yield* legacy.requests, "server/discover"), 0)
        assert.strictEqual(countOf(yield* legacy.requests, "initialize"), 1)
      }).pipe(Effect.scoped)
    ))
})

describe("McpClient outputSchema in draft-07 (raw server over Streamable HTTP)", () => {
  it.live("a matching result passes; a mismatching one fails with InvalidResult (built-in validator)", () =>
    bounded(
      Effect.gen(function*() {
        const server = yield* rawServer("modern")
        const client = yield* connectHttp(server.url)
        const [tool] = yield* client.listAllTools
        assert.deepStrictEqual(tool?.outputSchema?.$schema, "http://json-schema.org/draft-07/schema#")
        const ok = yield* client.callTool("sum", { answer: { total: 3, at: { x: 1 } } })
        assert.deepStrictEqual(ok.structuredContent, { total: 3, at: { x: 1 } })
        const bad = yield* Effect.flip(client.callTool("sum", { answer: { total: "three", at: { x: 1 } } }))
        assert.strictEqual(bad._tag, "ClientError")
        assert.strictEqual(bad._tag === "ClientError" ? bad.reason : undefined, "InvalidResult")
        assert.include(bad.message, "structuredContent does not match the outputSchema")
        assert.include(bad.message, "/total")
        const missing = yield* Effect.flip(client.callTool("sum", {}))
        assert.include(missing.message, "no structuredContent")
      }).pipe(Effect.scoped)
    ))

  it.live("JsonSchemaFull validates the draft-07 definitions / $ref too", () =>
    bounded(
      Effect.gen(function*() {
        const server = yield* rawServer("modern")
        const client = yield* connectHttp(server.url, { validator: JsonSchemaFull.validate })
        yield* client.listAllTools
        const ok = yield* client.callTool("sum", { answer: { total: 3, at: { x: 1 } } })
        assert.deepStrictEqual(ok.structuredContent, { total: 3, at: { x: 1 } })
        // `at.x` is checked only through `$ref: "#/definitions/point"`
        const bad = yield* Effect.flip(client.callTool("sum", { answer: { total: 3, at: { x: "one" } } }))
        assert.strictEqual(bad._tag === "ClientError" ? bad.reason : bad._tag, "InvalidResult")
        // the built-in subset ignores `$ref`: it lets the same result through
        const loose = yield* connectHttp(server.url)
        yield* loose.listAllTools
        const passed = yield* loose.callTool("sum", { answer: { total: 3, at: { x: "one" } } })
        assert.deepStrictEqual(passed.structuredContent, { total: 3, at: { x: "one" } })
      }).pipe(Effect.scoped)
    ))
})

describe("McpClient outputSchema of an official SDK v1 server (zod → draft-07)", () => {
  it.live("the v1 server's draft-07 outputSchema is listed and its results validated, built-in and full", () =>
    bounded(
      Effect.gen(function*() {
        const url = yield* spawnSdkServer("v1")
        for (const validator of [undefined, JsonSchemaFull.validate]) {
          const client = yield* connectHttp(url, validator === undefined ? {} : { validator })
          assert.strictEqual(client.info.era, "legacy")
          const tools = yield* client.listAllTools
          const add = tools.find((t) => t.name === "add")
          assert.strictEqual(add?.outputSchema?.$schema, "http://json-schema.org/draft-07/schema#")
          const result = yield* client.callTool("add", { a: 2, b: 3 })
          assert.deepStrictEqual(result.structuredContent, { sum: 5 })
        }
      }).pipe(Effect.scoped)
    ))
})
