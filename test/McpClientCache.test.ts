/**
 * The client's result cache (`McpClient.Options.cache`, protocol.md §13): results kept for their
 * `ttlMs` (TestClock), keyed by method + params; change notifications on a listen stream drop
 * what they make stale; MRTR results and legacy results (unless `legacyTtlMs`) are not kept; a
 * cursor error drops the list's pages. Requests are counted with a wrapping transport.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { InProcess, Input, McpClient, McpServer, Resource, Tool, type Transport } from "presa-mcp"
import { recording } from "./support/Wire.js"

const tool = (name: string) => Tool.fromJsonSchema({ name, handler: () => name })

const makeServer = (patch: Partial<McpServer.Options> = {}) =>
  McpServer.make({
    name: "cache-test",
    version: "1.0.0",
    listChanged: true,
    subscribe: true,
    cache: { ttlMs: 60_000 },
    tools: [tool("a"), tool("b"), tool("c")],
    resources: [
      Resource.make({ uri: "mem://a", name: "a", handler: () => "A" }),
      Resource.make({ uri: "mem://b", name: "b", handler: () => "B" }),
      Resource.make({
        uri: "mem://ask",
        name: "ask",
        handler: () =>
          Effect.map(
            Input.elicit("Ok?", { type: "object", properties: { ok: { type: "boolean" } } }),
            (r) => `asked ${r.action}`
          )
      })
    ],
    ...patch
  })

/** A transport that counts the requests it sends, by method. */
const counting = (inner: Transport.ClientTransport) =>
  Effect.gen(function*() {
    const { sent, transport } = yield* recording(inner)
    const count = (method: string, uri?: string) =>
      Effect.map(
        Ref.get(sent),
        (xs) => xs.filter((x) => x.method === method && (uri === undefined || x.params?.uri === uri)).length
      )
    return { transport, count }
  })

const connect = (server: McpServer.McpServer, options: McpClient.Options = { cache: true }) =>
  Effect.gen(function*() {
    const { count, transport } = yield* counting(yield* InProcess.client(server))
    const client = yield* McpClient.connect(transport, options)
    return { client, count }
  })

describe("McpClient cache", () => {
  it.scoped("ttlMs > 0: the second listTools makes no request; past ttlMs it refetches", () =>
    Effect.gen(function*() {
      const { client, count } = yield* connect(yield* makeServer())
      const first = yield* client.listTools()
      const second = yield* client.listTools()
      expect(second).toEqual(first)
      assert.strictEqual(yield* count("tools/list"), 1)
      yield* TestClock.adjust("59 seconds")
      yield* client.listTools()
      assert.strictEqual(yield* count("tools/list"), 1)
      yield* TestClock.adjust("2 seconds")
      yield* client.listTools()
      assert.strictEqual(yield* count("tools/list"), 2)
      // discover through `request` is cached too (the connect probe is not)
      yield* client.request("server/discover")
      yield* client.request("server/discover")
      assert.strictEqual(yield* count("server/discover"), 2)
    }))

  it.scoped("a tools/list_changed on a listen stream drops the tools pages (and nothing else)", () =>
    Effect.gen(function*() {
      const server = yield* makeServer({ prompts: [] })
      const { client, count } = yield* connect(server)
      const sub = yield* client.listen({ toolsListChanged: true })
      yield* client.listTools()
      yield* client.readResource("mem://a")
      yield* McpServer.addTool(server, tool("d"))
      yield* sub.notifications.pipe(Stream.take(1), Stream.runDrain)
      const after = yield* client.listTools()
      expect(after.tools.map((t) => t.name)).toEqual(["a", "b", "c", "d"])
      assert.strictEqual(yield* count("tools/list"), 2)
      yield* client.listTools()
      assert.strictEqual(yield* count("tools/list"), 2)
      yield* client.readResource("mem://a")
      assert.strictEqual(yield* count("resources/read", "mem://a"), 1)
    }))

  it.scoped("resources/read is kept per URI; resources/updated drops that URI's read only", () =>
    Effect.gen(function*() {
      const server = yield* makeServer()
      const { client, count } = yield* connect(server)
      const sub = yield* client.listen({ resourceSubscriptions: ["mem://a"] })
      for (let i = 0; i < 2; i++) {
        yield* client.readResource("mem://a")
        yield* client.readResource("mem://b")
      }
      assert.strictEqual(yield* count("resources/read", "mem://a"), 1)
      assert.strictEqual(yield* count("resources/read", "mem://b"), 1)
      yield* McpServer.resourceUpdated(server, "mem://a")
      yield* sub.notifications.pipe(Stream.take(1), Stream.runDrain)
      yield* client.readResource("mem://a")
      yield* client.readResource("mem://b")
      assert.strictEqual(yield* count("resources/read", "mem://a"), 2)
      assert.strictEqual(yield* count("resources/read", "mem://b"), 1)
    }))

  it.scoped("ttlMs 0, or no cache option: every call goes out", () =>
    Effect.gen(function*() {
      const zero = yield* connect(yield* makeServer({ cache: { ttlMs: 0 } }))
      yield* zero.client.listTools()
      yield* zero.client.listTools()
      assert.strictEqual(yield* zero.count("tools/list"), 2)
      const off = yield* connect(yield* makeServer(), {})
      yield* off.client.listTools()
      yield* off.client.listTools()
      assert.strictEqual(yield* off.count("tools/list"), 2)
    }))

  it.scoped("a read that went through input_required rounds is never kept", () =>
    Effect.gen(function*() {
      const { client, count } = yield* connect(yield* makeServer(), {
        cache: true,
        onElicit: () => Effect.succeed<Input.ElicitResult>({ action: "accept", content: { ok: true } })
      })
      const r = yield* client.readResource("mem://ask")
      expect(r.contents[0]).toMatchObject({ text: "asked accept" })
      yield* client.readResource("mem://ask")
      assert.strictEqual(yield* count("resources/read", "mem://ask"), 4) // 2 rounds, twice
    }))

  it.scoped("pages are kept by cursor; a cursor error drops every page of that list", () =>
    Effect.gen(function*() {
      const { client, count } = yield* connect(yield* makeServer({ pageSize: 1 }))
      const first = yield* client.listTools()
      const cursor = first.nextCursor
      assert(cursor !== undefined)
      yield* client.listTools(cursor)
      yield* client.listTools()
      yield* client.listTools(cursor)
      assert.strictEqual(yield* count("tools/list"), 2)
      const e = yield* Effect.flip(client.listTools("not-a-cursor"))
      expect(e).toMatchObject({ _tag: "McpError", code: -32602 })
      yield* client.listTools()
      yield* client.listTools(cursor)
      assert.strictEqual(yield* count("tools/list"), 5)
    }))

  it.scoped("legacy results have no ttlMs: not kept unless legacyTtlMs", () =>
    Effect.gen(function*() {
      const server = yield* makeServer()
      const plain = yield* connect(server, { cache: true, versions: ["2025-11-25"] })
      yield* plain.client.listTools()
      yield* plain.client.listTools()
      assert.strictEqual(yield* plain.count("tools/list"), 2)
      const kept = yield* connect(server, { cache: true, versions: ["2025-11-25"], legacyTtlMs: 1_000 })
      yield* kept.client.listTools()
      yield* kept.client.listTools()
      assert.strictEqual(yield* kept.count("tools/list"), 1)
      yield* TestClock.adjust("1 second")
      yield* kept.client.listTools()
      assert.strictEqual(yield* kept.count("tools/list"), 2)
    }))

  it.scoped("clearCache empties it", () =>
    Effect.gen(function*() {
      const { client, count } = yield* connect(yield* makeServer())
      yield* client.listTools()
      yield* client.clearCache
      yield* client.listTools()
      yield* client.listTools()
      assert.strictEqual(yield* count("tools/list"), 2)
    }))
})
