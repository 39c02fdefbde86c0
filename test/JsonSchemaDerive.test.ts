/**
 * JSON Schemas a model reads well and argument errors a person reads well (issue #35, point 5):
 * the `inputSchema` `Tool.make` derives for several Schema shapes (optional refined numbers,
 * unions, nested and identified structs, arrays of identified items, brands, classes: inlined, no
 * `$ref`; recursive Schemas keep `$defs`), as `tools/list` serves it in process and over Streamable
 * HTTP (127.0.0.1 port 0), and the `isError` text of calls those schemas refuse, with the built-in
 * validator and with `validate: false` (the Schema decode's own words).
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { Content, InProcess, JsonSchema, McpClient, McpServer, Prompt, Tool } from "presa-mcp"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"

class Person extends Schema.Class<Person>("Person")({ name: Schema.String, age: Schema.Int }) {}

const UserId = Schema.String.pipe(Schema.brand("UserId"))

const Address = Schema.Struct({ city: Schema.String, zip: Schema.String }).annotations({ identifier: "Address" })

interface Category {
  readonly name: string
  readonly children: ReadonlyArray<Category>
}
const Category: Schema.Schema<Category> = Schema.Struct({
  name: Schema.String,
  children: Schema.Array(Schema.suspend((): Schema.Schema<Category> => Category))
}).annotations({ identifier: "Category" })

const noop = () => "ok"

const tools = [
  Tool.make({
    name: "list",
    parameters: Schema.Struct({ limit: Schema.optional(Schema.Number.pipe(Schema.between(1, 100))) }),
    handler: noop
  }),
  Tool.make({
    name: "sort",
    parameters: Schema.Struct({ by: Schema.Union(Schema.Literal("asc", "desc"), Schema.Number) }),
    handler: noop
  }),
  Tool.make({
    name: "ship",
    parameters: Schema.Struct({
      to: Address,
      owner: Schema.Struct({ name: Schema.String, tags: Schema.Array(Schema.String) })
    }),
    handler: noop
  }),
  Tool.make({ name: "sum", parameters: Schema.Struct({ numbers: Schema.Array(Schema.Int) }), handler: noop }),
  Tool.make({ name: "user", parameters: Schema.Struct({ id: UserId }), handler: noop }),
  Tool.make({ name: "person", parameters: Schema.Struct({ person: Person }), handler: noop }),
  Tool.make({ name: "tree", parameters: Schema.Struct({ root: Category }), handler: noop }),
  Tool.make({ name: "category", parameters: Category, handler: noop })
]

const CATEGORY_DEF = {
  type: "object",
  required: ["name", "children"],
  properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/Category" } } },
  additionalProperties: false
}

const PERSON = {
  type: "object",
  required: ["name", "age"],
  properties: { name: { type: "string" }, age: { type: "integer", description: "an integer", title: "int" } },
  additionalProperties: false
}

const ADDRESS = {
  type: "object",
  required: ["city", "zip"],
  properties: { city: { type: "string" }, zip: { type: "string" } },
  additionalProperties: false
}

const EXPECTED: Record<string, unknown> = {
  list: {
    type: "object",
    required: [],
    properties: {
      limit: {
        type: "number",
        description: "a number between 1 and 100",
        title: "between(1, 100)",
        minimum: 1,
        maximum: 100
      }
    },
    additionalProperties: false
  },
  sort: {
    type: "object",
    required: ["by"],
    properties: { by: { anyOf: [{ type: "string", enum: ["asc", "desc"] }, { type: "number" }] } },
    additionalProperties: false
  },
  ship: {
    type: "object",
    required: ["to", "owner"],
    properties: {
      to: ADDRESS,
      owner: {
        type: "object",
        required: ["name", "tags"],
        properties: { name: { type: "string" }, tags: { type: "array", items: { type: "string" } } },
        additionalProperties: false
      }
    },
    additionalProperties: false
  },
  sum: {
    type: "object",
    required: ["numbers"],
    properties: {
      numbers: { type: "array", items: { type: "integer", description: "an integer", title: "int" } }
    },
    additionalProperties: false
  },
  user: {
    type: "object",
    required: ["id"],
    properties: { id: { type: "string" } },
    additionalProperties: false
  },
  person: {
    type: "object",
    required: ["person"],
    properties: { person: PERSON },
    additionalProperties: false
  },
  tree: {
    type: "object",
    required: ["root"],
    properties: { root: { $ref: "#/$defs/Category" } },
    additionalProperties: false,
    $defs: { Category: CATEGORY_DEF }
  },
  category: { ...CATEGORY_DEF, $defs: { Category: CATEGORY_DEF } }
}

const RECURSIVE = new Set(["tree", "category"])

const checkListed = (listed: ReadonlyArray<{ readonly name: string; readonly inputSchema: unknown }>) => {
  assert.deepStrictEqual(listed.map((t) => t.name), Object.keys(EXPECTED))
  for (const tool of listed) {
    expect(tool.inputSchema, tool.name).toEqual(EXPECTED[tool.name])
    const text = JSON.stringify(tool.inputSchema)
    if (!RECURSIVE.has(tool.name)) {
      assert.notInclude(text, "$ref", `${tool.name}: no $ref`)
      assert.notInclude(text, "$defs", `${tool.name}: no $defs`)
    }
  }
}

describe("derived inputSchema: inlined, recursive keeps $defs", () => {
  it.effect("in process: tools/list serves the inlined schemas", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "derive", version: "1.0.0", tools })
      const client = yield* McpClient.connect(yield* InProcess.client(server))
      checkListed(yield* client.listAllTools)
    }).pipe(Effect.scoped))

  it.scopedLive("Streamable HTTP: the same schemas on the wire", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "derive", version: "1.0.0", tools })
      const { url } = yield* StreamableHttp.serve(server, { port: 0 })
      const client = yield* McpClient.connect(yield* StreamableHttp.client({ url }))
      checkListed(yield* client.listAllTools)
    }))

  it("Tool.deriveJsonSchema alone: a success Schema with a class and an identified struct", () => {
    const derived = Tool.deriveJsonSchema(Schema.Struct({ who: Person, where: Schema.Array(Address) }))
    assert.notInclude(JSON.stringify(derived), "$ref")
    expect(derived).toEqual({
      type: "object",
      required: ["who", "where"],
      properties: {
        who: PERSON,
        where: { type: "array", items: ADDRESS }
      },
      additionalProperties: false
    })
  })
})

// ---------------------------------------------------------------------------------------------
// argument errors
// ---------------------------------------------------------------------------------------------

/** [tool, arguments, text with the built-in validator, text with `validate: false` (the decode's)] */
const CASES: ReadonlyArray<readonly [string, Record<string, unknown>, string, string]> = [
  [
    "list",
    { limit: 500 },
    "Invalid arguments at /limit: expected a number between 1 and 100, got 500",
    "Invalid arguments at /limit: expected a number between 1 and 100, got 500"
  ],
  [
    "list",
    { limit: "ten" },
    "Invalid arguments at /limit: expected number, got string",
    "Invalid arguments at /limit: expected a number, got \"ten\""
  ],
  [
    "sort",
    { by: true },
    "Invalid arguments at /by: expected \"asc\", \"desc\" or a number, got true",
    "Invalid arguments at /by: expected \"asc\", \"desc\" or a number, got true"
  ],
  [
    "ship",
    { to: { city: "Oslo" }, owner: { name: "a", tags: ["x", 3] } },
    "Invalid arguments at /to/zip: is required; at /owner/tags/1: expected string, got number",
    "Invalid arguments at /to/zip: is required"
  ],
  [
    "sum",
    { numbers: [1, 2.5] },
    "Invalid arguments at /numbers/1: expected integer, got number",
    "Invalid arguments at /numbers/1: expected an integer, got 2.5"
  ],
  [
    "user",
    { id: 5 },
    "Invalid arguments at /id: expected string, got number",
    "Invalid arguments at /id: expected a string, got 5"
  ],
  [
    "person",
    { person: { name: "Ada", age: "old" } },
    "Invalid arguments at /person/age: expected integer, got string",
    "Invalid arguments at /person/age: expected a number, got \"old\""
  ]
]

describe("argument errors read as a person writes them", () => {
  for (const [validate, index] of [["built-in validator", 2], ["validate: false", 3]] as const) {
    it.effect(`${validate}: which argument, what was expected, what was given`, () =>
      Effect.gen(function*() {
        const server = yield* McpServer.make({
          name: "derive",
          version: "1.0.0",
          tools,
          ...(index === 3 ? { validate: false } : {})
        })
        const client = yield* McpClient.connect(yield* InProcess.client(server))
        for (const c of CASES) {
          const result = yield* client.callTool(c[0], c[1])
          assert.strictEqual(result.isError, true, c[0])
          assert.strictEqual(Content.textOf(result), c[index], `${c[0]} ${JSON.stringify(c[1])}`)
        }
      }).pipe(Effect.scoped))
  }

  it("JsonSchema.validate: a minimum+maximum pair reads as one range with the value; one bound as before", () => {
    expect(JsonSchema.validate({ type: "integer", minimum: 1, maximum: 3 }, 7)).toEqual([
      { path: "", message: "expected an integer between 1 and 3, got 7" }
    ])
    expect(JsonSchema.validate({ minimum: 1, maximum: 3 }, 0.5)).toEqual([
      { path: "", message: "expected a number between 1 and 3, got 0.5" }
    ])
    expect(JsonSchema.validate({ minimum: 1, maximum: 3 }, 2)).toEqual([])
    expect(JsonSchema.validate({ maximum: 3 }, 4)).toEqual([{ path: "", message: "must be <= 3" }])
  })

  it("Tool.formatParseError: optional members, unions, brands, custom messages", () => {
    const P = Schema.Struct({
      limit: Schema.optional(Schema.Number.pipe(Schema.between(1, 100))),
      kind: Schema.Literal("a", "b"),
      n: Schema.Number.pipe(Schema.filter((n) => n !== 13, { message: () => "is unlucky" }))
    })
    const text = (u: unknown) =>
      Either.match(Schema.decodeUnknownEither(P, { errors: "all" })(u), {
        onLeft: (e) => Tool.formatParseError("Invalid arguments", e),
        onRight: () => "ok"
      })
    assert.strictEqual(
      text({ limit: 0, kind: "c", n: 13 }),
      "Invalid arguments at /limit: expected a number between 1 and 100, got 0; " +
        "at /kind: expected \"a\" or \"b\", got \"c\"; at /n: is unlucky"
    )
    assert.strictEqual(text({ kind: "a" }), "Invalid arguments at /n: is required")
  })

  it.effect("prompts: the same wording in their -32602", () =>
    Effect.gen(function*() {
      const greet = Prompt.make({
        name: "greet",
        parameters: Schema.Struct({ times: Schema.NumberFromString.pipe(Schema.between(1, 3)) }),
        handler: ({ times }) => `x${times}`
      })
      const server = yield* McpServer.make({ name: "derive", version: "1.0.0", prompts: [greet] })
      const client = yield* McpClient.connect(yield* InProcess.client(server))
      const error = yield* Effect.flip(client.getPrompt("greet", { times: "9" }))
      assert(error._tag === "McpError", `expected McpError, got ${error._tag}`)
      assert.strictEqual(error.code, -32602)
      assert.strictEqual(error.message, "Invalid arguments at /times: expected a number between 1 and 3, got 9")
    }).pipe(Effect.scoped))
})
