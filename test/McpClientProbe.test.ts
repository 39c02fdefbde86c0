/**
 * Era detection timing (protocol.md §1.2): the `server/discover` probe waits `probeTimeout`
 * (default 10 s) alone, then `initialize` goes out beside it; a modern answer that arrives first
 * still wins, the `initialize` is never cancelled, and a failed `initialize` waits for the probe.
 * A scripted transport answers each method after a set delay on the TestClock and records the wire.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/TestClock"
import { JsonRpc, McpClient, Transport } from "presa-mcp"

const DISCOVER_RESULT = {
  supportedVersions: ["2026-07-28", "2025-11-25", "2025-06-18"],
  capabilities: { tools: {} },
  _meta: { "io.modelcontextprotocol/serverInfo": { name: "slow", version: "1" } }
}
const INITIALIZE_RESULT = {
  protocolVersion: "2025-11-25",
  capabilities: { tools: {} },
  serverInfo: { name: "slow", version: "1" }
}

/** When (on the TestClock) a method is answered, and how; `undefined`: never answered. */
interface Script {
  readonly discover?: { readonly after: Duration.DurationInput; readonly error?: number } | undefined
  readonly initialize?: { readonly after: Duration.DurationInput; readonly error?: number } | undefined
}

/** What crossed the scripted wire: `→ method`, `← method`, `✗ method` (request interrupted), `notify method`. */
const scripted = (script: Script) =>
  Effect.gen(function*() {
    const wire = yield* Ref.make<ReadonlyArray<string>>([])
    const log = (line: string) => Ref.update(wire, (lines) => [...lines, line])
    const answer = (message: JsonRpc.Request): Effect.Effect<JsonRpc.Response> => {
      const plan = message.method === "server/discover"
        ? script.discover
        : message.method === "initialize"
        ? script.initialize
        : undefined
      if (plan === undefined) return Effect.never
      return Effect.sleep(plan.after).pipe(
        Effect.as(
          plan.error !== undefined
            ? JsonRpc.failure(message.id, new JsonRpc.McpError({ code: plan.error, message: "refused" }))
            : JsonRpc.success(message.id, message.method === "initialize" ? INITIALIZE_RESULT : DISCOVER_RESULT)
        )
      )
    }
    const transport: Transport.ClientTransport = {
      request: (message, options) =>
        log(`→ ${message.method}`).pipe(
          Effect.zipRight(answer(message)),
          options?.timeout === undefined ? (self) => self : Effect.timeoutFail({
            duration: options.timeout,
            onTimeout: () => new Transport.TransportError({ reason: "Timeout", message: `${message.method} timed out` })
          }),
          Effect.tap(() => log(`← ${message.method}`)),
          Effect.onInterrupt(() => log(`✗ ${message.method}`))
        ),
      notify: (message) => log(`notify ${message.method}`)
    }
    return { transport, wire: Ref.get(wire) }
  })

/** Starts `connect` in a fiber (the clock is moved by the test) and yields it. */
const connecting = (transport: Transport.ClientTransport, options: McpClient.Options = {}) =>
  Effect.fork(McpClient.connect(transport, options))

/** The fiber's client, which must be done by now. */
const doneClient = (fiber: Fiber.RuntimeFiber<McpClient.McpClient, McpClient.CallError>) =>
  Effect.flatMap(Fiber.poll(fiber), (exit) => {
    assert.isTrue(Option.isSome(exit), "connect should be done")
    return Option.getOrThrow(exit)
  })

describe("McpClient era probe timing", () => {
  it.scoped("default probeTimeout is 10 s: a server answering server/discover after 9.9 s is modern, no initialize", () =>
    Effect.gen(function*() {
      const { transport, wire } = yield* scripted({ discover: { after: "9900 millis" }, initialize: { after: 0 } })
      const fiber = yield* connecting(transport)
      yield* TestClock.adjust("9899 millis")
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      expect(yield* wire).toEqual(["→ server/discover"])
      yield* TestClock.adjust("1 millis")
      const client = yield* doneClient(fiber)
      assert.strictEqual(client.info.era, "modern")
      assert.strictEqual(client.info.protocolVersion, "2026-07-28")
      expect(yield* wire).toEqual(["→ server/discover", "← server/discover"])
    }))

  it.scoped("silence past 10 s sends initialize too; the late modern answer that comes first wins", () =>
    Effect.gen(function*() {
      const { transport, wire } = yield* scripted({
        discover: { after: "12 seconds" },
        initialize: { after: "13 seconds" }
      })
      const fiber = yield* connecting(transport)
      yield* TestClock.adjust("10 seconds")
      expect(yield* wire).toEqual(["→ server/discover", "→ initialize"])
      yield* TestClock.adjust("2 seconds")
      const client = yield* doneClient(fiber)
      assert.strictEqual(client.info.era, "modern")
      expect(client.info.serverInfo).toEqual({ name: "slow", version: "1" })
      // initialize is not cancelled: it finishes on its own and nothing follows it
      yield* TestClock.adjust("20 seconds")
      expect(yield* wire).toEqual(["→ server/discover", "→ initialize", "← server/discover", "← initialize"])
    }))

  it.scoped("silence past probeTimeout, then initialize answered first: legacy, the probe is given up", () =>
    Effect.gen(function*() {
      const { transport, wire } = yield* scripted({ initialize: { after: "1 second" } })
      const fiber = yield* connecting(transport, { probeTimeout: "2 seconds" })
      yield* TestClock.adjust("3 seconds")
      const client = yield* doneClient(fiber)
      assert.strictEqual(client.info.era, "legacy")
      assert.strictEqual(client.info.protocolVersion, "2025-11-25")
      expect(yield* wire).toEqual([
        "→ server/discover",
        "→ initialize",
        "← initialize",
        "✗ server/discover",
        "notify notifications/initialized"
      ])
    }))

  it.scoped("a failed initialize waits for the probe: a modern answer after it still wins", () =>
    Effect.gen(function*() {
      const { transport, wire } = yield* scripted({
        discover: { after: "5 seconds" },
        initialize: { after: "1 second", error: -32601 }
      })
      const fiber = yield* connecting(transport, { probeTimeout: "2 seconds" })
      yield* TestClock.adjust("3 seconds")
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      yield* TestClock.adjust("2 seconds")
      const client = yield* doneClient(fiber)
      assert.strictEqual(client.info.era, "modern")
      expect(yield* wire).toEqual(["→ server/discover", "→ initialize", "← initialize", "← server/discover"])
    }))

  it.scoped("a failed initialize and a probe that never answers: the initialize error, after requestTimeout", () =>
    Effect.gen(function*() {
      const { transport } = yield* scripted({ initialize: { after: "1 second", error: -32601 } })
      const fiber = yield* connecting(transport, { probeTimeout: "2 seconds", requestTimeout: "30 seconds" })
      yield* TestClock.adjust("29 seconds")
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      yield* TestClock.adjust("1 second")
      const error = yield* Effect.flip(Fiber.join(fiber))
      assert.strictEqual(error._tag, "McpError")
      assert.strictEqual(error._tag === "McpError" ? error.code : 0, -32601)
    }))

  it.scoped("an error answer to the probe before probeTimeout: the handshake at once, as before", () =>
    Effect.gen(function*() {
      const { transport, wire } = yield* scripted({
        discover: { after: "1 second", error: -32601 },
        initialize: { after: "1 second" }
      })
      const fiber = yield* connecting(transport)
      yield* TestClock.adjust("2 seconds")
      const client = yield* doneClient(fiber)
      assert.strictEqual(client.info.era, "legacy")
      expect(yield* wire).toEqual([
        "→ server/discover",
        "← server/discover",
        "→ initialize",
        "← initialize",
        "notify notifications/initialized"
      ])
    }))
})
