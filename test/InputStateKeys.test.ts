/**
 * `inputState.keys` of `McpServer.make`: an empty string is never an HMAC key (WebCrypto refuses
 * one: every second multi round-trip round was a defect). A configuration read from an unset
 * variable (`(process.env.STATE_KEYS ?? "").split(",")` is `[""]`) makes the server sign
 * `requestState` with a random key of its own (logged), and empty keys next to real ones are
 * ignored.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Input, McpServer, Tool } from "presa-mcp"
import { get, isObject, modernMeta, request } from "./support/Wire.js"

const CONFIRM = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] } as const

/** Asks twice: the second round's retry carries a signed `requestState`. */
const confirm = Tool.fromJsonSchema({
  name: "confirm",
  handler: () =>
    Effect.gen(function*() {
      yield* Input.elicit("First?", CONFIRM)
      yield* Input.elicit("Second?", CONFIRM)
      return "confirmed"
    })
})

const serverWith = (keys: ReadonlyArray<string>) =>
  McpServer.make({ name: "state-keys", version: "1.0.0", tools: [confirm], inputState: { keys } })

const meta = modernMeta({ "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } } })

const call = (server: McpServer.McpServer, id: number, extra: Record<string, unknown> = {}) =>
  Effect.map(
    McpServer.handleMessage(
      server,
      request(id, "tools/call", { name: "confirm", arguments: {}, _meta: meta, ...extra })
    ),
    Option.getOrThrow
  )

const accept = (result: unknown): Record<string, unknown> => {
  const asked = get(result, "result", "inputRequests")
  if (!isObject(asked)) throw new Error(`no inputRequests in ${JSON.stringify(result)}`)
  return Object.fromEntries(Object.keys(asked).map((key) => [key, { action: "accept", content: { ok: true } }]))
}

/** Runs the first two rounds on `a`, then sends the third (with `a`'s requestState) to `b`. */
const crossServer = (a: McpServer.McpServer, b: McpServer.McpServer) =>
  Effect.gen(function*() {
    const first = yield* call(a, 1)
    const second = yield* call(a, 2, { inputResponses: accept(first) })
    const state = get(second, "result", "requestState")
    assert.isString(state)
    return yield* call(b, 3, { inputResponses: accept(second), requestState: state })
  })

describe("inputState.keys", () => {
  it.effect("shared non-empty keys: a round signed by one server is accepted by the other", () =>
    Effect.gen(function*() {
      const [a, b] = [yield* serverWith(["k1-shared-secret"]), yield* serverWith(["k1-shared-secret"])]
      const third = yield* crossServer(a, b)
      assert.strictEqual(get(third, "result", "content", 0, "text"), "confirmed")
    }))

  it.effect("[\"\"] (an unset variable split): not a key; each server signs with its own random key", () =>
    Effect.gen(function*() {
      const [a, b] = [yield* serverWith([""]), yield* serverWith([""])]
      assert.strictEqual(get(yield* crossServer(a, a), "result", "content", 0, "text"), "confirmed")
      const third = yield* crossServer(a, b)
      assert.include(String(get(third, "error", "message")), "Invalid requestState")
    }))

  it.effect("an empty key next to real ones is ignored: they sign and verify as without it", () =>
    Effect.gen(function*() {
      const a = yield* serverWith(["", "k2-real-secret"])
      const b = yield* serverWith(["k2-real-secret"])
      assert.strictEqual(get(yield* crossServer(a, b), "result", "content", 0, "text"), "confirmed")
      const c = yield* serverWith([""])
      const third = yield* crossServer(c, b)
      assert.include(String(get(third, "error", "message")), "Invalid requestState")
    }))
})
