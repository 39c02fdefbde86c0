/**
 * `presa-mcp/Testing`, used the way a user would (`it.effect` + `Effect.provide(Testing.layer…)`):
 *
 * - both eras (modern MRTR rounds, legacy server→client requests): assertions on results
 *   (`expectSuccess`, `expectError`, `structured` and their failure messages), scripted
 *   elicitation (answers in order, the questions recorded, an exhausted script fails the call);
 * - recorded notifications: progress and log messages of a call, a list change after `addTool`;
 * - the TestClock drives the in-process deadline (`requestTimeout`) and the progress-extended one
 *   (`resetTimeoutOnProgress` with its `maxTotalTimeout` cap): nothing moves until
 *   `TestClock.adjust`, and the deadlines are hours or minutes long, so a real timer would never
 *   fire within the test's own timeout;
 * - `listing` as an inline snapshot, and a drifted schema failing it;
 * - `layerFromService` over an app made of definition Layers.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { Content, Input, McpClient, McpServer, Testing, Tool } from "presa-mcp"

const NAME_SCHEMA = { type: "object", properties: { name: { type: "string" } }, required: ["name"] } as const

const add = Tool.make({
  name: "add",
  description: "Adds two numbers",
  parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  success: Schema.Struct({ sum: Schema.Number }),
  handler: ({ a, b }) => Effect.succeed({ sum: a + b })
})

const divide = Tool.make({
  name: "divide",
  parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  success: Schema.Struct({ quotient: Schema.Number }),
  handler: ({ a, b }) =>
    b === 0 ? Effect.fail(new Tool.ToolError({ message: "division by zero" })) : Effect.succeed({ quotient: a / b })
})

const greet = Tool.fromJsonSchema({
  name: "greet",
  handler: () =>
    Effect.gen(function*() {
      const first = yield* Input.elicit("Who are you?", NAME_SCHEMA)
      const second = yield* Input.elicit("And your friend?", NAME_SCHEMA)
      return `hello ${String(first.content?.name)} and ${String(second.content?.name)}`
    })
})

const work = Tool.fromJsonSchema({
  name: "work",
  handler: (_args, ctx) =>
    Effect.gen(function*() {
      yield* ctx.progress(1, { total: 2 })
      yield* ctx.log("info", "halfway")
      yield* ctx.progress(2, { total: 2, message: "done" })
      return "worked"
    })
})

const consult = Tool.fromJsonSchema({
  name: "consult",
  handler: () =>
    Effect.gen(function*() {
      const model = yield* Input.sample([{ role: "user", content: { type: "text", text: "2+2?" } }], { maxTokens: 5 })
      const roots = yield* Input.roots()
      return `${model.model} says ${JSON.stringify(model.content)} in ${roots.roots.map((r) => r.uri).join(",")}`
    })
})

const SERVER = {
  name: "calc",
  version: "1.0.0",
  logging: true,
  listChanged: true,
  tools: [add, divide, greet, work, consult]
}

for (const era of ["modern", "legacy"] as const) {
  describe(`Testing (${era})`, () => {
    it.effect("a connected client in the asked era; results asserted and decoded", () =>
      Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        assert.strictEqual(client.info.era, era)
        const sum = yield* client.callTool("add", { a: 2, b: 3 }).pipe(
          Effect.flatMap(Testing.structured(Schema.Struct({ sum: Schema.Number })))
        )
        assert.deepStrictEqual(sum, { sum: 5 })
        const ok = yield* client.callTool("add", { a: 1, b: 1 }).pipe(Effect.flatMap(Testing.expectSuccess))
        assert.strictEqual(ok.isError, undefined)
        const text = yield* client.callTool("divide", { a: 1, b: 0 }).pipe(Effect.flatMap(Testing.expectError))
        assert.strictEqual(text, "division by zero")

        // the assertions' own failures read well
        const notOk = yield* client.callTool("divide", { a: 1, b: 0 }).pipe(
          Effect.flatMap(Testing.expectSuccess),
          Effect.flip
        )
        assert.strictEqual(notOk._tag, "AssertionError")
        assert.include(notOk.message, "expected a successful tool result")
        assert.include(notOk.message, "division by zero")
        const notError = yield* client.callTool("add", { a: 1, b: 1 }).pipe(
          Effect.flatMap(Testing.expectError),
          Effect.flip
        )
        assert.include(notError.message, "expected an error result")
        const wrongShape = yield* client.callTool("add", { a: 1, b: 1 }).pipe(
          Effect.flatMap(Testing.structured(Schema.Struct({ sum: Schema.String }))),
          Effect.flip
        )
        assert.include(wrongShape.message, "the structured content does not decode")
        assert.include(wrongShape.message, "[\"sum\"]")
        assert.include(wrongShape.message, "{\"sum\":2}")
      }).pipe(Effect.provide(Testing.layer(SERVER, { era }))))

    it.effect("scripted elicitation: answers in order, the questions recorded", () =>
      Effect.gen(function*() {
        const test = yield* Testing.TestClient
        const result = yield* test.client.callTool("greet", {}).pipe(Effect.flatMap(Testing.expectSuccess))
        assert.strictEqual(Content.textOf(result), "hello Ada and Grace")
        const asked = yield* test.asked
        assert.deepStrictEqual(asked.map((a) => [a.method, a.params.message]), [
          ["elicitation/create", "Who are you?"],
          ["elicitation/create", "And your friend?"]
        ])
        // the second call gets the third answer, then the script is exhausted: the call does not succeed
        const again = yield* test.client.callTool("greet", {}).pipe(Effect.either)
        assert.isTrue(again._tag === "Left" || again.right.isError === true, "the exhausted script must fail the call")
      }).pipe(Effect.provide(Testing.layer(SERVER, {
        era,
        elicit: [
          { action: "accept", content: { name: "Ada" } },
          { action: "accept", content: { name: "Grace" } },
          { action: "accept", content: { name: "Linus" } }
        ]
      }))))

    it.effect("scripted sampling and roots", () =>
      Effect.gen(function*() {
        const test = yield* Testing.TestClient
        const result = yield* test.client.callTool("consult", {}).pipe(Effect.flatMap(Testing.expectSuccess))
        assert.strictEqual(Content.textOf(result), "stub-model says {\"type\":\"text\",\"text\":\"4\"} in file:///work")
        const asked = yield* test.asked
        assert.deepStrictEqual(asked.map((a) => a.method), ["sampling/createMessage", "roots/list"])
        assert.strictEqual(asked[0]?.params.maxTokens, 5)
      }).pipe(Effect.provide(Testing.layer(SERVER, {
        era,
        sample: () =>
          Effect.succeed({
            role: "assistant" as const,
            content: { type: "text" as const, text: "4" },
            model: "stub-model"
          }),
        roots: [{ uri: "file:///work", name: "work" }]
      }))))

    it.effect("records a call's progress and log messages, and list changes", () =>
      Effect.gen(function*() {
        const test = yield* Testing.TestClient
        yield* test.client.callTool("work", {}).pipe(Effect.flatMap(Testing.expectSuccess))
        const progress = yield* test.notificationsOf("notifications/progress")
        assert.deepStrictEqual(progress.map((n) => n.params?.progress), [1, 2])
        const logs = yield* test.notificationsOf("notifications/message")
        assert.deepStrictEqual(logs.map((n) => n.params?.data), ["halfway"])

        yield* test.clearNotifications
        yield* test.server.addTool(Tool.fromJsonSchema({ name: "late", handler: () => "late" }))
        const changes = yield* test.awaitNotification("notifications/tools/list_changed")
        assert.strictEqual(changes.length, 1)
      }).pipe(Effect.provide(Testing.layer(SERVER, { era }))))
  })
}

describe("Testing and the TestClock", () => {
  it.effect("requestTimeout runs on the TestClock: nothing expires until TestClock.adjust", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const slow = Tool.fromJsonSchema({
        name: "slow",
        handler: () => Effect.zipRight(Deferred.succeed(started, undefined), Effect.as(Effect.sleep("2 hours"), "late"))
      })
      const fiber = yield* Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        return yield* client.callTool("slow", {})
      }).pipe(
        Effect.provide(Testing.layer({ name: "t", version: "1", tools: [slow] }, {
          client: { requestTimeout: "1 hour" }
        })),
        Effect.fork
      )
      yield* Deferred.await(started)
      yield* TestClock.adjust("59 minutes")
      assert.isNull(fiber.unsafePoll(), "still waiting at 59 minutes")
      yield* TestClock.adjust("2 minutes")
      const e = yield* Effect.flip(Fiber.join(fiber))
      assert.strictEqual(e._tag === "ClientError" ? e.reason : e._tag, "Timeout")
    }))

  it.effect("progress extends a call's deadline on the TestClock, up to maxTotalTimeout", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      // progress every 3 minutes, `steps` times, then done
      const steps = Tool.make({
        name: "steps",
        parameters: Schema.Struct({ count: Schema.Number }),
        handler: ({ count }, ctx) =>
          Effect.gen(function*() {
            yield* Deferred.succeed(started, undefined)
            for (let i = 1; i <= count; i++) {
              yield* Effect.sleep("3 minutes")
              yield* ctx.progress(i)
            }
            return `${count} steps`
          })
      })
      const TestLive = Testing.layer({ name: "t", version: "1", tools: [steps] }, {
        client: { requestTimeout: "5 minutes", maxTotalTimeout: "20 minutes" }
      })
      const call = (count: number) =>
        Effect.flatMap(McpClient.McpClient, (client) =>
          client.callTool("steps", { count }, { onProgress: () => Effect.void }))

      // 4 steps: 12 minutes in all, more than requestTimeout but never 5 minutes without progress
      const long = yield* Effect.fork(Effect.provide(call(4), TestLive))
      yield* Deferred.await(started)
      for (let i = 0; i < 4; i++) {
        assert.isNull(long.unsafePoll())
        yield* TestClock.adjust("3 minutes")
      }
      const done = yield* Fiber.join(long)
      assert.strictEqual(Content.textOf(done), "4 steps")
    }))

  it.effect("a progress-extended call still fails at maxTotalTimeout (TestClock)", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const endless = Tool.fromJsonSchema({
        name: "endless",
        handler: (_args, ctx) =>
          Effect.gen(function*() {
            yield* Deferred.succeed(started, undefined)
            for (let i = 1; i <= 100; i++) {
              yield* Effect.sleep("3 minutes")
              yield* ctx.progress(i)
            }
            return "never"
          })
      })
      const fiber = yield* Effect.flatMap(McpClient.McpClient, (client) =>
        client.callTool("endless", {}, { onProgress: () => Effect.void })).pipe(
          Effect.provide(Testing.layer({ name: "t", version: "1", tools: [endless] }, {
            client: { requestTimeout: "5 minutes", maxTotalTimeout: "20 minutes" }
          })),
          Effect.fork
        )
      yield* Deferred.await(started)
      for (let i = 0; i < 6; i++) {
        yield* TestClock.adjust("3 minutes") // 18 minutes: alive
      }
      assert.isNull(fiber.unsafePoll(), "progress keeps it alive before the cap")
      yield* TestClock.adjust("3 minutes") // 21 minutes: past the cap
      const e = yield* Effect.flip(Fiber.join(fiber))
      assert.strictEqual(e._tag === "ClientError" ? e.reason : e._tag, "Timeout")
    }))
})

describe("Testing and the TestClock: the client cache", () => {
  it.effect("a cached result lives for its ttlMs on the TestClock", () =>
    Effect.gen(function*() {
      const counted = Tool.fromJsonSchema({ name: "counted", handler: () => "x" })
      const test = yield* Testing.TestClient
      const list = Effect.flatMap(McpClient.McpClient, (client) => client.listTools())
      yield* list
      // a change while cached (no listen open to drop the entry): the cached page still answers until its ttl passes on the TestClock
      yield* test.server.addTool(counted)
      assert.deepStrictEqual((yield* list).tools.map((t) => t.name), ["add"])
      yield* TestClock.adjust("59 seconds")
      assert.deepStrictEqual((yield* list).tools.map((t) => t.name), ["add"])
      yield* TestClock.adjust("2 seconds")
      assert.deepStrictEqual((yield* list).tools.map((t) => t.name).sort(), ["add", "counted"])
    }).pipe(Effect.provide(Testing.layer({ name: "t", version: "1", tools: [add], cache: { ttlMs: 60_000 } }, {
      listen: false,
      client: { cache: true }
    }))))
})

describe("Testing.listing", () => {
  it.effect("a stable, sorted snapshot; a schema that drifts no longer matches it", () =>
    Effect.gen(function*() {
      const listing = yield* Testing.listing.pipe(
        Effect.provide(Testing.layer({ name: "calc", version: "1.0.0", tools: [divide, add] }))
      )
      assert.deepStrictEqual(listing.tools.map((t) => t.name), ["add", "divide"])
      expect(listing.json).toMatchInlineSnapshot(`
        "{
          "prompts": [],
          "resourceTemplates": [],
          "resources": [],
          "tools": [
            {
              "description": "Adds two numbers",
              "inputSchema": {
                "additionalProperties": false,
                "properties": {
                  "a": {
                    "type": "number"
                  },
                  "b": {
                    "type": "number"
                  }
                },
                "required": [
                  "a",
                  "b"
                ],
                "type": "object"
              },
              "name": "add",
              "outputSchema": {
                "additionalProperties": false,
                "properties": {
                  "sum": {
                    "type": "number"
                  }
                },
                "required": [
                  "sum"
                ],
                "type": "object"
              }
            },
            {
              "inputSchema": {
                "additionalProperties": false,
                "properties": {
                  "a": {
                    "type": "number"
                  },
                  "b": {
                    "type": "number"
                  }
                },
                "required": [
                  "a",
                  "b"
                ],
                "type": "object"
              },
              "name": "divide",
              "outputSchema": {
                "additionalProperties": false,
                "properties": {
                  "quotient": {
                    "type": "number"
                  }
                },
                "required": [
                  "quotient"
                ],
                "type": "object"
              }
            }
          ]
        }"
      `)

      // the same definitions in another order: the same text
      const reordered = yield* Testing.listing.pipe(
        Effect.provide(Testing.layer({ name: "calc", version: "1.0.0", tools: [add, divide] }))
      )
      assert.strictEqual(reordered.json, listing.json)

      // `b` became a string: the snapshot no longer matches
      const drifted = Tool.make({
        name: "add",
        description: "Adds two numbers",
        parameters: Schema.Struct({ a: Schema.Number, b: Schema.String }),
        success: Schema.Struct({ sum: Schema.Number }),
        handler: ({ a }) => Effect.succeed({ sum: a })
      })
      const after = yield* Testing.listing.pipe(
        Effect.provide(Testing.layer({ name: "calc", version: "1.0.0", tools: [divide, drifted] }))
      )
      assert.notStrictEqual(after.json, listing.json)
      expect(() => expect(after.json).toBe(listing.json)).toThrow()
    }))
})

describe("Testing.layerFromService", () => {
  it.effect("connects to the server an app builds from definition Layers", () =>
    Effect.gen(function*() {
      const client = yield* McpClient.McpClient
      const result = yield* client.callTool("add", { a: 20, b: 22 }).pipe(
        Effect.flatMap(Testing.structured(Schema.Struct({ sum: Schema.Number })))
      )
      assert.strictEqual(result.sum, 42)
    }).pipe(Effect.provide(
      Testing.layerFromService().pipe(
        Layer.provideMerge(McpServer.tool(add).pipe(Layer.provideMerge(McpServer.layer({ name: "app", version: "1" }))))
      )
    )))
})
