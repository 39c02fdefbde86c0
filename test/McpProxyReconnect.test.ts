/**
 * Every kind of backend reconnects behind `McpProxy` (issue #37 item 3; docs/proxy.md,
 * "Reconnection and health"): a backend killed and restarted is used again without restarting
 * the proxy, and the health view (`McpProxy.Health`) shows it reconnecting, then connected.
 *
 * - stdio: a spawned child process (test/fixtures/stdio-server.ts), killed with SIGKILL;
 * - HTTP modern: our server on a port, closed and served again on the same port;
 * - HTTP legacy session: the same, a 2025-11-25 session: restarted at once, the old session id is
 *   unknown (404) and the proxy's call gets a fresh session without a reconnection; stopped for
 *   longer, the proxy's pings notice and it reconnects; the official SDK v1 server (sessions)
 *   killed and started again on the same port;
 * - a client given connected (`{ prefix, client, connect }`): its process killed, the proxy
 *   re-creates it with `connect`.
 *
 * Live clock; every wait is bounded.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { InProcess, McpClient, McpServer, Tool } from "presa-mcp"
import * as McpProxy from "../src/McpProxy.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Stdio from "../src/transport/Stdio.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import { spawnSdkServer } from "./fixtures/interop-http.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const FIXTURE = Path.join(ROOT, "test", "fixtures", "stdio-server.ts")
const WAIT: Duration.DurationInput = "30 seconds"
const TEST_WAIT: Duration.DurationInput = "100 seconds"
const LEGACY: ReadonlyArray<McpSchema.ProtocolVersion> = ["2025-11-25"]

const boundedBy = (limit: Duration.DurationInput) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.timeoutFail(effect, {
    duration: limit,
    onTimeout: () => new Error(`timed out after ${Duration.format(limit)}`)
  })
const bounded = boundedBy(WAIT)
const boundedTest = boundedBy(TEST_WAIT)

/** Retries `check` every 50 ms until it succeeds (bounded). */
const eventually = <A, E, R>(check: Effect.Effect<A, E, R>): Effect.Effect<A, E | Error, R> =>
  bounded(Effect.retry(check, Schedule.spaced("50 millis")))

const texts = (result: McpSchema.CallToolResult): ReadonlyArray<string> =>
  result.content.flatMap((b) => (b.type === "text" ? [b.text] : []))

/** Waits until `prefix`'s health is `status` (and, if given, has made `connections`). */
const healthIs = (health: McpProxy.Health, prefix: string, status: McpProxy.BackendStatus, connections?: number) =>
  eventually(
    Effect.filterOrFail(
      Effect.map(SubscriptionRef.get(health), (all) => all.find((b) => b.prefix === prefix)),
      (b): b is McpProxy.BackendHealth =>
        b !== undefined && b.status === status && (connections === undefined || b.connections === connections),
      () => new Error(`${prefix} is not ${status}`)
    )
  )

/** Calls `name` through the proxy until it answers `expected` (bounded). */
const answers = (front: McpClient.McpClient, name: string, args: Record<string, unknown>, expected: string) =>
  eventually(
    Effect.filterOrFail(
      Effect.map(front.callTool(name, args), texts),
      (t) => t.length === 1 && t[0] === expected,
      () => new Error(`${name} does not answer ${expected} yet`)
    )
  )

/** Spawns the stdio fixture; its pid goes to `pids`. */
const spawnFixture = (pids: Ref.Ref<ReadonlyArray<number>>, input: McpProxy.InputOptions) =>
  Effect.gen(function*() {
    const transport = yield* Stdio.spawn({
      command: process.execPath,
      args: ["--import", "tsx", FIXTURE],
      cwd: ROOT,
      stderr: () => Effect.void
    })
    yield* Ref.update(pids, (p) => [...p, transport.pid])
    return yield* McpClient.connect(transport, { ...input, relisten: Schedule.stop, requestTimeout: WAIT })
  })

const killLast = (pids: Ref.Ref<ReadonlyArray<number>>) =>
  Effect.flatMap(Ref.get(pids), (p) =>
    Effect.sync(() => {
      const last = p[p.length - 1]
      assert(last !== undefined)
      process.kill(last, "SIGKILL")
    }))

/** Our server answering `version` with `label`, served on `port` (0: any) in a Scope the test closes. */
const serveWeb = (label: string, port: number) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const server = yield* McpServer.make({
      name: "web",
      version: "1.0.0",
      tools: [Tool.fromJsonSchema({ name: "version", handler: () => label })]
    })
    const address = yield* StreamableHttp.serve(server, { port }).pipe(Scope.extend(scope))
    return { address, stop: Scope.close(scope, Exit.void) }
  })

describe("McpProxy reconnects every kind of backend", () => {
  it.live(
    "stdio: a killed process is spawned again; health goes reconnecting, then connected",
    () =>
      Effect.gen(function*() {
        const pids = yield* Ref.make<ReadonlyArray<number>>([])
        const health = yield* McpProxy.makeHealth
        const proxy = yield* McpProxy.make([{
          prefix: "files",
          retry: Schedule.spaced("100 millis"),
          connect: (input) => spawnFixture(pids, input)
        }], { health, pingInterval: "500 millis" })
        const front = yield* McpClient.connect(yield* InProcess.client(proxy))
        expect(texts(yield* front.callTool("files_echo", { text: "one" }))).toEqual(["one"])
        yield* healthIs(health, "files", "connected", 1)

        yield* killLast(pids)
        const down = yield* healthIs(health, "files", "reconnecting")
        expect(down.lastError).toBeDefined()
        yield* healthIs(health, "files", "connected", 2)
        expect(texts(yield* answersEcho(front))).toEqual(["two"])
        expect((yield* Ref.get(pids)).length).toBe(2)
      }).pipe(Effect.scoped, boundedTest),
    120_000
  )

  it.live(
    "HTTP modern: the server stopped and served again on the same port is used again",
    () =>
      Effect.gen(function*() {
        const first = yield* serveWeb("first", 0)
        const port = first.address.port
        const health = yield* McpProxy.makeHealth
        const config = yield* McpProxy.decodeConfig({
          mcpServers: { web: { url: first.address.url, retry: { initialDelayMs: 100, maxDelayMs: 200 } } }
        })
        const proxy = yield* McpProxy.fromConfig(config, {
          health,
          pingInterval: "200 millis",
          client: { requestTimeout: "5 seconds" }
        })
        const front = yield* McpClient.connect(yield* InProcess.client(proxy))
        expect(texts(yield* front.callTool("web_version", {}))).toEqual(["first"])

        yield* first.stop
        yield* healthIs(health, "web", "reconnecting")
        const second = yield* serveWeb("second", port)
        yield* healthIs(health, "web", "connected", 2)
        yield* answers(front, "web_version", {}, "second")
        yield* second.stop
      }).pipe(Effect.scoped, boundedTest),
    120_000
  )

  it.live(
    "HTTP legacy session: a restarted server's 404 gets a fresh session; a longer stop reconnects",
    () =>
      Effect.gen(function*() {
        const first = yield* serveWeb("first", 0)
        const port = first.address.port
        const health = yield* McpProxy.makeHealth
        const config = yield* McpProxy.decodeConfig({
          mcpServers: { web: { url: first.address.url, retry: { initialDelayMs: 100, maxDelayMs: 200 } } }
        })
        const proxy = yield* McpProxy.fromConfig(config, {
          health,
          pingInterval: "60 seconds",
          client: { versions: LEGACY, requestTimeout: "5 seconds" }
        })
        const front = yield* McpClient.connect(yield* InProcess.client(proxy))
        expect(texts(yield* front.callTool("web_version", {}))).toEqual(["first"])

        // Restarted at once: the proxy's session id is unknown to the new server (404); the call
        // is answered on a fresh session, without the backend being marked down.
        yield* first.stop
        const second = yield* serveWeb("second", port)
        expect(texts(yield* front.callTool("web_version", {}))).toEqual(["second"])
        const still = yield* healthIs(health, "web", "connected", 1)
        assert.strictEqual(still.connections, 1)

        // Stopped for longer: a call finds it gone, the proxy reconnects when it is back.
        yield* second.stop
        const failed = yield* Effect.either(front.callTool("web_version", {}))
        assert(failed._tag === "Left" || failed.right.isError === true)
        yield* healthIs(health, "web", "reconnecting")
        const third = yield* serveWeb("third", port)
        yield* healthIs(health, "web", "connected", 2)
        yield* answers(front, "web_version", {}, "third")
        yield* third.stop
      }).pipe(Effect.scoped, boundedTest),
    120_000
  )

  it.live(
    "HTTP legacy session, the official SDK v1 server: killed and started again on the same port",
    () =>
      Effect.gen(function*() {
        const firstScope = yield* Scope.make()
        const url = yield* spawnSdkServer("v1").pipe(Scope.extend(firstScope))
        const port = Number(new URL(url).port)
        const health = yield* McpProxy.makeHealth
        const config = yield* McpProxy.decodeConfig({
          mcpServers: { v1: { url, include: ["echo"], retry: { initialDelayMs: 100, maxDelayMs: 200 } } }
        })
        const proxy = yield* McpProxy.fromConfig(config, {
          health,
          pingInterval: "200 millis",
          client: { versions: LEGACY, requestTimeout: "5 seconds" }
        })
        const front = yield* McpClient.connect(yield* InProcess.client(proxy))
        expect(texts(yield* front.callTool("v1_echo", { text: "one" }))).toEqual(["one"])

        yield* Scope.close(firstScope, Exit.void)
        yield* healthIs(health, "v1", "reconnecting")
        yield* spawnSdkServer("v1", ["--port", String(port)])
        yield* healthIs(health, "v1", "connected", 2)
        yield* answers(front, "v1_echo", { text: "two" }, "two")
      }).pipe(Effect.scoped, boundedTest),
    120_000
  )

  it.live(
    "a client given connected is re-created with its connect when its process dies",
    () =>
      Effect.gen(function*() {
        const pids = yield* Ref.make<ReadonlyArray<number>>([])
        const health = yield* McpProxy.makeHealth
        const client = yield* spawnFixture(pids, McpProxy.inputHandlers)
        const proxy = yield* McpProxy.make([{
          prefix: "files",
          client,
          connect: (input) => spawnFixture(pids, input),
          retry: Schedule.spaced("100 millis")
        }], { health, pingInterval: "500 millis" })
        const front = yield* McpClient.connect(yield* InProcess.client(proxy))
        expect(texts(yield* front.callTool("files_echo", { text: "one" }))).toEqual(["one"])

        yield* killLast(pids)
        yield* healthIs(health, "files", "reconnecting")
        yield* healthIs(health, "files", "connected", 2)
        expect(texts(yield* answersEcho(front))).toEqual(["two"])
        expect((yield* Ref.get(pids)).length).toBe(2)
      }).pipe(Effect.scoped, boundedTest),
    120_000
  )

  it.live(
    "a client given connected without connect is not reconnected: health says givenUp",
    () =>
      Effect.gen(function*() {
        const pids = yield* Ref.make<ReadonlyArray<number>>([])
        const health = yield* McpProxy.makeHealth
        const client = yield* spawnFixture(pids, McpProxy.inputHandlers)
        yield* McpProxy.make([{ prefix: "files", client }], { health, pingInterval: "500 millis" })
        yield* killLast(pids)
        const gone = yield* healthIs(health, "files", "givenUp")
        expect(gone.lastError).toBeDefined()
      }).pipe(Effect.scoped, boundedTest),
    120_000
  )
})

/** `files_echo` answered "two" once the backend is back (bounded). */
const answersEcho = (front: McpClient.McpClient) =>
  Effect.zipRight(
    answers(front, "files_echo", { text: "two" }, "two"),
    front.callTool("files_echo", { text: "two" })
  )
