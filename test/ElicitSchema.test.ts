/**
 * Schema-first `Input.elicit` (issue #35, point 3): the `requestedSchema` derived from an Effect
 * Schema (`Input.requestedSchema`), refused shapes (compile time and run time), and the decoded
 * answer in both eras: our client in process (modern `input_required` rounds, legacy
 * `elicitation/create` requests), and the official SDK clients answering over Streamable HTTP on
 * 127.0.0.1 port 0 (v2 pinned to 2026-07-28, v1 on 2025-11-25).
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Client as V2Client, StreamableHTTPClientTransport as V2Http } from "@modelcontextprotocol/client"
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as V1Http } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { Content, InProcess, Input, JsonRpc, McpClient, type McpSchema, McpServer, Tool } from "presa-mcp"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import { promise } from "./fixtures/interop-http.js"

const Signup = Schema.Struct({
  name: Schema.String.annotations({ title: "Name", description: "Your full name" }),
  email: Schema.String.annotations({ jsonSchema: { format: "email" } }),
  age: Schema.optional(Schema.Int.pipe(Schema.between(0, 150))),
  subscribe: Schema.Boolean,
  plan: Schema.Literal("free", "pro"),
  topics: Schema.optional(Schema.Array(Schema.Literal("effect", "mcp")))
})

const EXPECTED_REQUESTED_SCHEMA = {
  type: "object",
  properties: {
    name: { type: "string", title: "Name", description: "Your full name" },
    email: { type: "string", format: "email" },
    age: { type: "integer", description: "a number between 0 and 150", minimum: 0, maximum: 150 },
    subscribe: { type: "boolean" },
    plan: { type: "string", enum: ["free", "pro"] },
    topics: { type: "array", items: { type: "string", enum: ["effect", "mcp"] } }
  },
  required: ["name", "email", "subscribe", "plan"]
}

describe("Input.requestedSchema", () => {
  it("derives the flat form elicitation allows", () => {
    const derived = Input.requestedSchema(Signup)
    assert(Either.isRight(derived))
    expect(derived.right).toEqual(EXPECTED_REQUESTED_SCHEMA)
  })

  it("refuses at run time what is not a flat form, naming the property", () => {
    const union = Input.requestedSchema(Schema.Struct({ when: Schema.Union(Schema.String, Schema.Number) }))
    assert(Either.isLeft(union))
    assert.strictEqual(union.left._tag, "ElicitSchemaError")
    assert.strictEqual(union.left.property, "when")
    assert.strictEqual(
      union.left.message,
      "property \"when\" is a union of types: elicitation allows only strings, numbers, booleans and enums"
    )
    const list = Input.requestedSchema(Schema.Struct({ names: Schema.Array(Schema.String) }))
    assert(Either.isLeft(list))
    assert.strictEqual(list.left.property, "names")
    assert.match(list.left.message, /is an array of anything but an enum of strings/)
  })

  it("refuses a nested form at compile time", () => {
    const Nested = Schema.Struct({ address: Schema.Struct({ city: Schema.String }) })
    // @ts-expect-error: a nested struct is not a flat form
    const derived = Input.requestedSchema(Nested)
    assert(Either.isLeft(derived))
    // @ts-expect-error: same for elicit (neither its Schema form nor its raw JSON Schema form takes it)
    const effect = Input.elicit("Where?", Nested)
    assert.isDefined(effect)
  })
})

// ---------------------------------------------------------------------------------------------
// a server asking with the Schema
// ---------------------------------------------------------------------------------------------

const signup = Tool.make({
  name: "signup",
  handler: () =>
    Effect.gen(function*() {
      const answer = yield* Input.elicit("Sign up?", Signup)
      if (answer.action !== "accept") return `no: ${answer.action}`
      const { age, name, plan, subscribe, topics } = answer.content
      return `${name} (${age === undefined ? "?" : age + 1} next year) ${plan} ${subscribe} ${(topics ?? []).join("+")}`
    })
})

/** A Schema whose encoded side is flat but whose JSON Schema is not: refused when asked. */
const broken = Tool.make({
  name: "broken",
  handler: () =>
    Effect.map(
      Input.elicit("?", Schema.Struct({ when: Schema.Union(Schema.String, Schema.Number) })),
      (a) => a.action
    )
})

const makeServer = (versions?: ReadonlyArray<McpSchema.ProtocolVersion>) =>
  McpServer.make({
    name: "elicit-schema",
    version: "1.0.0",
    ...(versions === undefined ? {} : { versions }),
    tools: [signup, broken]
  })

const ACCEPT = {
  name: "Ada",
  email: "ada@example.com",
  age: 36,
  subscribe: true,
  plan: "pro",
  topics: ["effect", "mcp"]
}

for (const [era, versions] of [["modern", undefined], ["legacy", ["2025-11-25"] as const]] as const) {
  describe(`our client answers a Schema-first elicit (${era})`, () => {
    it.effect("the derived requestedSchema is sent; accept is decoded; decline and cancel kept", () =>
      Effect.gen(function*() {
        const server = yield* makeServer(versions)
        const seen: Array<JsonRpc.JsonObject> = []
        let answer: Input.ElicitResult = { action: "accept", content: ACCEPT }
        const client = yield* McpClient.connect(yield* InProcess.client(server), {
          onElicit: (params) => Effect.sync(() => (seen.push(params), answer))
        })
        assert.strictEqual(client.info.era, era)
        const accepted = yield* client.callTool("signup", {})
        assert.strictEqual(Content.textOf(accepted), "Ada (37 next year) pro true effect+mcp")
        expect(seen[0]?.requestedSchema).toEqual(EXPECTED_REQUESTED_SCHEMA)
        assert.strictEqual(seen[0]?.message, "Sign up?")
        answer = { action: "decline" }
        assert.strictEqual(Content.textOf(yield* client.callTool("signup", {})), "no: decline")
        answer = { action: "cancel" }
        assert.strictEqual(Content.textOf(yield* client.callTool("signup", {})), "no: cancel")
      }).pipe(Effect.scoped))

    it.effect("content that does not decode with the Schema is -32602", () =>
      Effect.gen(function*() {
        const server = yield* makeServer(versions)
        const client = yield* McpClient.connect(yield* InProcess.client(server), {
          onElicit: () => Effect.succeed({ action: "accept", content: { ...ACCEPT, age: 500 } })
        })
        const error = yield* Effect.flip(client.callTool("signup", {}))
        assert(error._tag === "McpError", `expected McpError, got ${error._tag}`)
        assert.strictEqual(error.code, -32602)
        assert.strictEqual(error.message, "Invalid response to elicitation/create")
      }).pipe(Effect.scoped))

    it.effect("a Schema that is not a flat form: the tool dies with ElicitSchemaError (isError, named)", () =>
      Effect.gen(function*() {
        const server = yield* makeServer(versions)
        const client = yield* McpClient.connect(yield* InProcess.client(server), {
          onElicit: () => Effect.succeed({ action: "decline" })
        })
        const result = yield* client.callTool("broken", {})
        assert.strictEqual(result.isError, true)
        assert.match(Content.textOf(result), /ElicitSchemaError/)
      }).pipe(Effect.scoped))
  })
}

// ---------------------------------------------------------------------------------------------
// the official SDK clients answer it over Streamable HTTP
// ---------------------------------------------------------------------------------------------

const CLIENT_INFO = { name: "elicit-schema-interop", version: "0.0.0" }

describe("official SDK clients answer a Schema-first elicit (Streamable HTTP)", () => {
  it.scopedLive("v2 client, 2026-07-28: input_required rounds", () =>
    Effect.gen(function*() {
      const { url } = yield* StreamableHttp.serve(yield* makeServer(), { port: 0 })
      const seen: Array<unknown> = []
      const client = new V2Client(CLIENT_INFO, {
        versionNegotiation: { mode: { pin: "2026-07-28" } },
        capabilities: { elicitation: {} }
      })
      client.setRequestHandler("elicitation/create", (request) => {
        seen.push(JSON.parse(JSON.stringify(request.params)))
        return Promise.resolve({ action: "accept", content: { ...ACCEPT, topics: ["mcp"] } })
      })
      yield* Effect.acquireRelease(
        promise("v2 connect", () => client.connect(new V2Http(new URL(url)))),
        () => promise("v2 close", () => client.close()).pipe(Effect.ignore)
      )
      assert.strictEqual(client.getProtocolEra(), "modern")
      const result = yield* promise("v2 call", () => client.callTool({ name: "signup", arguments: {} }))
      expect(result.content).toEqual([{ type: "text", text: "Ada (37 next year) pro true mcp" }])
      expect(seen).toEqual([
        expect.objectContaining({ message: "Sign up?", requestedSchema: EXPECTED_REQUESTED_SCHEMA })
      ])
    }))

  it.scopedLive("v1 client, 2025-11-25: an elicitation/create request on the session", () =>
    Effect.gen(function*() {
      const { url } = yield* StreamableHttp.serve(yield* makeServer(), { port: 0 })
      const seen: Array<unknown> = []
      const client = new V1Client(CLIENT_INFO, { capabilities: { elicitation: {} } })
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        seen.push(JSON.parse(JSON.stringify(request.params)))
        return Promise.resolve({ action: "accept", content: { ...ACCEPT, topics: ["effect"] } })
      })
      yield* Effect.acquireRelease(
        promise("v1 connect", () => client.connect(new V1Http(new URL(url)))),
        () => promise("v1 close", () => client.close()).pipe(Effect.ignore)
      )
      const result = yield* promise("v1 call", () => client.callTool({ name: "signup", arguments: {} }))
      expect(result.content).toEqual([{ type: "text", text: "Ada (37 next year) pro true effect" }])
      expect(seen).toEqual([
        expect.objectContaining({ message: "Sign up?", requestedSchema: EXPECTED_REQUESTED_SCHEMA })
      ])
    }))
})
