import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { McpServer, Prompt } from "presa-mcp"
import { asArray, connect, ERAS, errorOf, get, resultOf } from "./support/Wire.js"

/** `greet`: `who` required (with a description), `times` optional and decoded to a number. */
const greet = Prompt.make({
  name: "greet",
  parameters: Schema.Struct({
    who: Schema.String.annotations({ title: "Who", description: "Whom to greet" }),
    times: Schema.optional(Schema.NumberFromString)
  }),
  handler: ({ times, who }) => `Say hello to ${who} ${typeof times === "number" ? times * 2 : "no"} times.`,
  complete: { who: () => ["Ada", "Alan"] }
})

/** The array form, unchanged: the handler gets the strings as sent. */
const echo = Prompt.make({
  name: "echo",
  arguments: [{ name: "text", required: true }],
  handler: ({ text }) => `echo ${text}`
})

const build = McpServer.make({ name: "prompt-test", version: "1.0.0", prompts: [greet, echo] })

const firstText = (result: unknown): unknown => get(result, "messages", 0, "content", "text")

describe("Prompt.make with Schema parameters", () => {
  it.effect.each(ERAS)(
    "%s: prompts/list shows the derived arguments; the array form is unchanged",
    (rev) =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build, rev)
        const prompts = asArray(resultOf(yield* conn.call("prompts/list")).prompts)
        expect(get(prompts[0], "arguments")).toEqual([
          { name: "who", title: "Who", description: "Whom to greet", required: true },
          { name: "times", required: false }
        ])
        expect(get(prompts[1], "arguments")).toEqual([{ name: "text", required: true }])
      })
  )

  it.effect.each(ERAS)("%s: the handler gets decoded, typed arguments", (rev) =>
    Effect.gen(function*() {
      const conn = yield* connect(yield* build, rev)
      const r = resultOf(yield* conn.call("prompts/get", { name: "greet", arguments: { who: "Ada", times: "21" } }))
      assert.strictEqual(firstText(r), "Say hello to Ada 42 times.")
      const none = resultOf(yield* conn.call("prompts/get", { name: "greet", arguments: { who: "Ada" } }))
      assert.strictEqual(firstText(none), "Say hello to Ada no times.")
      const raw = resultOf(yield* conn.call("prompts/get", { name: "echo", arguments: { text: "hi" } }))
      assert.strictEqual(firstText(raw), "echo hi")
    }))

  it.effect.each(ERAS)(
    "%s: a missing required argument and one that does not decode are -32602",
    (rev) =>
      Effect.gen(function*() {
        const conn = yield* connect(yield* build, rev)
        const missing = errorOf(yield* conn.call("prompts/get", { name: "greet", arguments: {} }))
        assert.strictEqual(missing.code, -32602)
        assert.strictEqual(missing.message, "Missing required argument: who")
        const bad = errorOf(
          yield* conn.call("prompts/get", { name: "greet", arguments: { who: "Ada", times: "many" } })
        )
        assert.strictEqual(bad.code, -32602)
        assert.match(bad.message, /^Invalid arguments at \/times: /)
      })
  )

  it.effect("completion functions are keyed by the parameters' names", () =>
    Effect.gen(function*() {
      const conn = yield* connect(yield* build, "2026-07-28")
      const r = resultOf(
        yield* conn.call("completion/complete", {
          ref: { type: "ref/prompt", name: "greet" },
          argument: { name: "who", value: "A" }
        })
      )
      expect(get(r, "completion", "values")).toEqual(["Ada", "Alan"])
    }))

  it("types: the handler's arguments come from parameters; encoded fields must be strings", () => {
    Prompt.make({
      name: "typed",
      parameters: Schema.Struct({ n: Schema.NumberFromString }),
      // @ts-expect-error `n` is a number
      handler: ({ n }) => n.toUpperCase()
    })
    Prompt.make({
      name: "not-strings",
      // @ts-expect-error prompt arguments are strings on the wire
      parameters: Schema.Struct({ n: Schema.Number }),
      handler: () => "x"
    })
    // @ts-expect-error no argument `whom` to complete
    Prompt.make({
      name: "completion-keys",
      parameters: Schema.Struct({ who: Schema.String }),
      handler: () => "x",
      complete: { whom: () => [] }
    })
    assert.strictEqual(greet.name, "greet")
  })
})
