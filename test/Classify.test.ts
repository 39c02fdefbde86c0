/**
 * Which methods each era has comes from one source, the method table's rows (issue 33, point 3):
 * a request naming a method of the other era is -32601 (HTTP 404), decided when it is dispatched,
 * before any middleware runs; `initialize` belongs to the handshake revisions only.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { McpServer, Task, Tool } from "presa-mcp"
import { get, legacy, modern } from "./support/Wire.js"

const makeServer = (seen: Array<string>) =>
  McpServer.make({
    name: "eras",
    version: "1",
    logging: true,
    subscribe: true,
    listChanged: true,
    tasks: {},
    tools: [Tool.fromJsonSchema({ name: "t", handler: () => "t" })],
    middleware: [(request, next) => {
      seen.push(request.method)
      return next
    }]
  })

describe("eras come from the method table", () => {
  it.effect("a modern request naming a handshake-only method is -32601 (404), unseen by middlewares", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const conn = yield* modern(yield* makeServer(seen))
      for (const method of ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"]) {
        const reply = yield* conn.call(method, method === "logging/setLevel" ? { level: "info" } : { uri: "x://y" })
        assert.strictEqual(get(reply.message, "error", "code"), -32601, method)
        assert.strictEqual(reply.status, 404, method)
      }
      assert.deepStrictEqual(seen, [])
      // a method of both eras reaches them
      yield* conn.call("tools/list", {})
      assert.deepStrictEqual(seen, ["tools/list"])
    }))

  it.effect("a legacy request naming a 2026-07-28-only method is -32601, unseen by middlewares", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const conn = yield* legacy(yield* makeServer(seen), "2025-11-25")
      for (const method of ["server/discover", "subscriptions/listen", Task.Method.get, Task.Method.cancel]) {
        const reply = yield* conn.call(method, { taskId: "x" })
        assert.strictEqual(get(reply.message, "error", "code"), -32601, method)
      }
      assert.deepStrictEqual(seen, [])
      yield* conn.call("ping", {})
      assert.deepStrictEqual(seen, ["ping"])
    }))
})
