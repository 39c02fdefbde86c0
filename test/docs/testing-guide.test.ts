// test/docs/testing-guide.test.ts: the example of docs/testing.md, kept identical by test/docs/guides.test.ts
import { assert, describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { Content, Input, McpClient, Testing, Tool } from "presa-mcp"

// -- the server under test (in an app: its own module) ----------------------------------------

const Order = Schema.Struct({ id: Schema.String, total: Schema.Number })

const placeOrder = Tool.make({
  name: "place_order",
  description: "Places an order after the user confirms it",
  parameters: Schema.Struct({ item: Schema.String, quantity: Schema.Int }),
  success: Order,
  handler: ({ item, quantity }, ctx) =>
    Effect.gen(function*() {
      if (quantity <= 0) return yield* new Tool.ToolError({ message: "quantity must be positive" })
      const answer = yield* Input.elicit(`Order ${quantity} × ${item}?`, {
        type: "object",
        properties: { confirm: { type: "boolean" } },
        required: ["confirm"]
      })
      if (answer.action !== "accept" || answer.content?.confirm !== true) {
        return yield* new Tool.ToolError({ message: "cancelled by the user" })
      }
      yield* ctx.progress(1, { total: 2, message: "reserving" })
      yield* Effect.sleep("30 seconds") // the warehouse is slow
      yield* ctx.progress(2, { total: 2, message: "placed" })
      return { id: `${item}-${quantity}`, total: quantity * 5 }
    })
})

const server = { name: "shop", version: "1.0.0", tools: [placeOrder] }

// -- its tests --------------------------------------------------------------------------------

describe("shop", () => {
  it.effect("places a confirmed order (modern)", () =>
    Effect.gen(function*() {
      const test = yield* Testing.TestClient
      const call = yield* Effect.fork(test.client.callTool("place_order", { item: "tea", quantity: 2 }))
      yield* test.awaitNotification("notifications/progress") // "reserving": the handler is sleeping now
      yield* TestClock.adjust("30 seconds") // its sleep runs on the TestClock
      const order = yield* call.await.pipe(
        Effect.flatten,
        Effect.flatMap(Testing.structured(Order))
      )
      assert.deepStrictEqual(order, { id: "tea-2", total: 10 })
      const asked = yield* test.asked
      assert.strictEqual(asked[0]?.params.message, "Order 2 × tea?")
      const progress = yield* test.notificationsOf("notifications/progress")
      assert.deepStrictEqual(progress.map((n) => n.params?.message), ["reserving", "placed"])
    }).pipe(Effect.provide(Testing.layer(server, { elicit: [{ action: "accept", content: { confirm: true } }] }))))

  it.effect("a declined order is a tool error (legacy)", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const text = yield* client.callTool("place_order", { item: "tea", quantity: 1 }).pipe(
        Effect.flatMap(Testing.expectError)
      )
      assert.strictEqual(text, "cancelled by the user")
    }).pipe(Effect.provide(Testing.layer(server, { era: "legacy", elicit: [{ action: "decline" }] }))))

  // one server and client for a whole group of tests
  layer(Testing.layer(server))("listing", (it) => {
    it.effect("matches the snapshot (fails when a schema drifts)", () =>
      Effect.gen(function*() {
        const listing = yield* Testing.listing
        assert.deepStrictEqual(listing.tools.map((t) => t.name), ["place_order"])
        expect(listing.json).toMatchSnapshot()
      }))

    it.effect("refuses a bad quantity", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        const result = yield* client.callTool("place_order", { item: "tea", quantity: 0 })
        assert.strictEqual(Content.textOf(result), "quantity must be positive")
      }))
  })
})
