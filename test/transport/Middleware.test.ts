/**
 * Middleware over real transports, in both eras (modern 2026-07-28, legacy 2025-11-25 session):
 * a spawned stdio server process (`test/fixtures/middleware-server.ts`) and Streamable HTTP on
 * 127.0.0.1 port 0, both serving `test/fixtures/middleware-app.ts`. Each case checks order (on a
 * list method and a call), short-circuit with a result and with an `McpError`, context enrichment
 * seen by a handler (a typed service provided by a middleware, per caller), a service from the
 * app's Layer, and the rate limit's 429 with `data.retryAfterMs`. Recovery needs `TestClock`, so
 * it is tested in-process (test/Middleware.test.ts).
 */
import { assert, describe, expect, expectTypeOf, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as JsonRpc from "../../src/JsonRpc.js"
import * as McpClient from "../../src/McpClient.js"
import type * as McpSchema from "../../src/McpSchema.js"
import type * as McpServer from "../../src/McpServer.js"
import type { ClientTransport } from "../../src/Transport.js"
import * as Stdio from "../../src/transport/Stdio.js"
import * as StreamableHttp from "../../src/transport/StreamableHttp.js"
import { AppLayer, type CurrentUser, type Greeting, makeServer, TRACE_KEY } from "../fixtures/middleware-app.js"
import { get } from "../support/Wire.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const FIXTURE = Path.join(ROOT, "test", "fixtures", "middleware-server.ts")
const ERAS = ["2026-07-28", "2025-11-25"] as const satisfies ReadonlyArray<McpSchema.ProtocolVersion>

const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("timed out") }))

const mcpErrorOf = <A>(effect: Effect.Effect<A, McpClient.CallError>): Effect.Effect<JsonRpc.McpError> =>
  Effect.flatMap(Effect.either(effect), (outcome) =>
    outcome._tag === "Left" && outcome.left instanceof JsonRpc.McpError
      ? Effect.succeed(outcome.left)
      : Effect.dieMessage(`expected an McpError, got ${JSON.stringify(outcome)}`))

/**
 * The whole scenario against one transport, as client `name` in era `rev`; with `other` (a second
 * transport to the same server), a second caller shows it has a bucket of its own.
 */
const scenario = (
  transport: ClientTransport,
  rev: McpSchema.ProtocolVersion,
  name: string,
  other?: ClientTransport
) =>
  Effect.gen(function*() {
    const client = yield* McpClient.connect(transport, { name, version: "1.0.0", versions: [rev] })
    assert.strictEqual(client.info.era, rev === "2026-07-28" ? "modern" : "legacy")
    assert.strictEqual(client.info.protocolVersion, rev)

    // Order: the inner middleware returns first, on a list method and on a call.
    const list = yield* client.request("tools/list")
    expect(get(list, "_meta", TRACE_KEY)).toEqual(["inner", "outer"])
    expect((list.tools as ReadonlyArray<unknown>).map((t) => get(t, "name"))).toEqual(["whoami", "greet", "limited"])

    // Enrichment: the handler reads the CurrentUser the middleware provides (this caller's name).
    const whoami = yield* client.request("tools/call", { name: "whoami" })
    assert.strictEqual(get(whoami, "content", 0, "text"), name)
    expect(get(whoami, "_meta", TRACE_KEY)).toEqual(["inner", "outer"])

    // A service from the app's Layer reaches the handler.
    const greet = yield* client.request("tools/call", { name: "greet", arguments: { name: "Ann" } })
    assert.strictEqual(get(greet, "content", 0, "text"), "Hello, Ann")

    // Short-circuit with a result (no tool has this name) and with an McpError.
    const cached = yield* client.request("tools/call", { name: "cached" })
    assert.strictEqual(get(cached, "content", 0, "text"), "from cache")
    expect(get(cached, "_meta", TRACE_KEY)).toEqual(["inner", "outer"])
    const blocked = yield* mcpErrorOf(client.request("tools/call", { name: "blocked" }))
    assert.strictEqual(blocked.code, -32602)
    assert.strictEqual(blocked.message, "blocked by policy")
    expect(blocked.data).toEqual({ policy: "deny" })

    // Rate limit: two calls pass, the third is refused with 429 and retryAfterMs (~100 s).
    assert.strictEqual(get(yield* client.request("tools/call", { name: "limited" }), "content", 0, "text"), "ok")
    assert.strictEqual(get(yield* client.request("tools/call", { name: "limited" }), "content", 0, "text"), "ok")
    const limited = yield* mcpErrorOf(client.request("tools/call", { name: "limited" }))
    assert.strictEqual(limited.code, 429)
    assert.strictEqual(limited.message, "Rate limit exceeded")
    const retryAfterMs = get(limited.data, "retryAfterMs")
    assert.isTrue(typeof retryAfterMs === "number" && Number.isInteger(retryAfterMs))
    assert.isTrue(typeof retryAfterMs === "number" && retryAfterMs > 90_000 && retryAfterMs <= 100_000)
    if (other !== undefined) {
      const second = yield* McpClient.connect(other, { name: `${name}-other`, version: "1.0.0", versions: [rev] })
      assert.strictEqual(get(yield* second.request("tools/call", { name: "limited" }), "content", 0, "text"), "ok")
      assert.strictEqual(
        get(yield* second.request("tools/call", { name: "whoami" }), "content", 0, "text"),
        `${name}-other`
      )
    }
  })

const spawnFixture: Effect.Effect<ClientTransport, unknown, Scope.Scope> = Stdio.spawn({
  command: process.execPath,
  args: ["--import", "tsx", FIXTURE],
  cwd: ROOT,
  stderr: () => Effect.void
})

describe("the fixture's types", () => {
  it("requires the app's Greeting only: CurrentUser comes from its middleware", () => {
    expectTypeOf(makeServer).toEqualTypeOf<
      Effect.Effect<McpServer.McpServer<Greeting | CurrentUser>, McpServer.DefinitionError, Greeting>
    >()
  })
})

describe.each(ERAS)("middleware over stdio (%s)", (rev) => {
  it.scopedLive("order, short-circuit, enrichment, app services, rate limit", () =>
    bounded(Effect.gen(function*() {
      yield* scenario(yield* spawnFixture, rev, `stdio-${rev}`)
    })), 30_000)
})

describe.each(ERAS)("middleware over Streamable HTTP (%s)", (rev) => {
  it.scopedLive("order, short-circuit, enrichment, app services, rate limit", () =>
    bounded(Effect.gen(function*() {
      const server = yield* makeServer.pipe(Effect.provide(AppLayer))
      const { url } = yield* StreamableHttp.serve(server, { port: 0 })
      assert.isTrue(url.startsWith("http://127.0.0.1:"))
      yield* scenario(yield* StreamableHttp.client({ url }), rev, `http-${rev}`, yield* StreamableHttp.client({ url }))
    })), 30_000)
})
