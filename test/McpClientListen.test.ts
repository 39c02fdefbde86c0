/**
 * `McpClient.listen`: change-notification streams.
 *
 * - Modern `subscriptions/listen` over InProcess, stdio (our server in a child process) and
 *   Streamable HTTP: the acknowledgement (the honoured subset of the filter) comes first, then
 *   only the notifications asked for, each tagged with the listen's subscription id; the stream
 *   ends with the server's graceful result; two listens on one stdio pipe stay apart.
 * - Legacy: the session's unsolicited notifications, filtered the same way, over InProcess,
 *   stdio and the HTTP GET stream; `resources/subscribe` / `unsubscribe` for resource URIs.
 *
 * Live clock (the notifications cross fibers, processes and sockets); every wait is bounded.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { InProcess, JsonRpc, McpClient, McpServer, Prompt, Resource, Tool, Transport } from "presa-mcp"
import * as Stdio from "../src/transport/Stdio.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import * as TcpProxy from "./support/TcpProxy.js"
import { get, recording } from "./support/Wire.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const FIXTURE = Path.join(ROOT, "test", "fixtures", "client-input-server.ts")
const WAIT: Duration.DurationInput = "10 seconds"
/** How long we wait to be sure nothing more arrives. */
const QUIET: Duration.DurationInput = "200 millis"
const SUB_ID = "io.modelcontextprotocol/subscriptionId"

const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | Error, R> =>
  Effect.timeoutFail(effect, { duration: WAIT, onTimeout: () => new Error(`timed out after ${Duration.format(WAIT)}`) })

// ---------------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------------

const echo = Tool.fromJsonSchema({ name: "echo", handler: () => "echo" })
const extra = (name: string) => Tool.fromJsonSchema({ name, handler: () => name })

const makeServer = (patch: Partial<McpServer.Options> = {}) =>
  McpServer.make({
    name: "listen-test",
    version: "1.0.0",
    listChanged: true,
    subscribe: true,
    tools: [echo],
    resources: [Resource.make({ uri: "mem://a", name: "a", handler: () => "A" })],
    ...patch
  })

/** Collects a stream's elements in the background (in the current Scope). */
const collect = (stream: Stream.Stream<JsonRpc.Notification, McpClient.CallError>) =>
  Effect.gen(function*() {
    const seen = yield* Ref.make<ReadonlyArray<JsonRpc.Notification>>([])
    const fiber = yield* stream.pipe(
      Stream.runForEach((n) => Ref.update(seen, (xs) => [...xs, n])),
      Effect.forkScoped
    )
    /** Waits for `count` notifications, then makes sure no more arrive for a moment. */
    const exactly = (count: number) =>
      Effect.gen(function*() {
        yield* Ref.get(seen).pipe(
          Effect.repeat({ until: (xs) => xs.length >= count, schedule: Schedule.spaced("10 millis") }),
          bounded
        )
        yield* Effect.sleep(QUIET)
        const all = yield* Ref.get(seen)
        expect(all.map((n) => n.method)).toHaveLength(count)
        return all
      })
    return { seen, fiber, exactly }
  })

const methods = (ns: ReadonlyArray<JsonRpc.Notification>) => ns.map((n) => n.method)

const spawnFixture = (
  options: McpClient.Options = {},
  spawn: { readonly restart?: Stdio.SpawnOptions["restart"]; readonly args?: ReadonlyArray<string> } = {}
) =>
  Effect.gen(function*() {
    const transport = yield* Stdio.spawn({
      command: process.execPath,
      args: ["--import", "tsx", FIXTURE, ...(spawn.args ?? [])],
      cwd: ROOT,
      stderr: () => Effect.void,
      restart: spawn.restart
    })
    const { sent, transport: recorded } = yield* recording(transport)
    // spawning under load can be slow: the probe must not give up on a starting process
    const client = yield* bounded(McpClient.connect(recorded, { probeTimeout: WAIT, ...options }))
    return { client, sent, transport }
  })

const listenIds = (sent: Ref.Ref<ReadonlyArray<JsonRpc.Request>>) =>
  Effect.map(Ref.get(sent), (xs) => xs.filter((x) => x.method === "subscriptions/listen").map((x) => x.id))

// ---------------------------------------------------------------------------------------------
// modern
// ---------------------------------------------------------------------------------------------

describe("McpClient.listen (modern)", () => {
  it.scopedLive("in process: ack (honoured subset), then exactly one tools/list_changed tagged with the listen id", () =>
    Effect.gen(function*() {
      const server = yield* makeServer()
      const { sent, transport } = yield* recording(yield* InProcess.client(server))
      const client = yield* McpClient.connect(transport)
      const sub = yield* client.listen({ toolsListChanged: true, promptsListChanged: true })
      // no prompts served → promptsListChanged is not honoured
      expect(sub.acknowledged).toEqual({ toolsListChanged: true })
      const { exactly } = yield* collect(sub.notifications)
      yield* McpServer.addTool(server, extra("added"))
      const [n] = yield* exactly(1)
      expect(n?.method).toBe("notifications/tools/list_changed")
      const [id] = yield* listenIds(sent)
      expect(get(n?.params, "_meta", SUB_ID)).toBe(id)
      // a prompt change is not asked for
      yield* McpServer.addPrompt(server, Prompt.make({ name: "p", handler: () => "p" }))
      yield* exactly(1)
    }))

  it.scopedLive("in process: the server's graceful end (shutdown) ends the stream; closing the scope cancels", () =>
    Effect.gen(function*() {
      const server = yield* makeServer()
      const client = yield* McpClient.connect(yield* InProcess.client(server))
      const ended = yield* Effect.scoped(Effect.gen(function*() {
        const sub = yield* client.listen({ toolsListChanged: true })
        const fiber = yield* Effect.fork(Stream.runCollect(sub.notifications))
        yield* McpServer.addTool(server, extra("before-shutdown"))
        yield* Effect.sleep("50 millis")
        yield* McpServer.shutdown(server)
        return yield* bounded(Effect.flatMap(Effect.fromFiber(fiber), (c) => Effect.succeed(Chunk.toReadonlyArray(c))))
      }))
      expect(methods(ended)).toEqual(["notifications/tools/list_changed"])

      // a second server: the listen ends when its scope closes (the handler is interrupted)
      const other = yield* makeServer()
      const c2 = yield* McpClient.connect(yield* InProcess.client(other))
      const scope = yield* Scope.make()
      const sub = yield* c2.listen({ toolsListChanged: true }).pipe(Scope.extend(scope))
      yield* bounded(Scope.close(scope, Exit.void))
      expect(sub.acknowledged).toEqual({ toolsListChanged: true })
      // the client is still usable
      expect((yield* c2.listTools()).tools.map((t) => t.name)).toEqual(["echo"])
    }))

  it.scoped("a server that serves no listen: McpError -32601", () =>
    Effect.gen(function*() {
      const server = yield* makeServer({ listChanged: false, subscribe: false })
      const client = yield* McpClient.connect(yield* InProcess.client(server))
      const e = yield* Effect.flip(Effect.scoped(client.listen({ toolsListChanged: true })))
      expect(e).toMatchObject({ _tag: "McpError", code: -32601 })
    }))

  it.scopedLive("stdio: two listens with different filters on one pipe each get only their own", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* spawnFixture()
      assert.strictEqual(client.info.era, "modern")
      const tools = yield* bounded(client.listen({ toolsListChanged: true }))
      const prompts = yield* bounded(client.listen({ promptsListChanged: true }))
      const resource = yield* bounded(client.listen({ resourceSubscriptions: ["mem://a"] }))
      expect(tools.acknowledged).toEqual({ toolsListChanged: true })
      expect(prompts.acknowledged).toEqual({ promptsListChanged: true })
      expect(resource.acknowledged).toEqual({ resourceSubscriptions: ["mem://a"] })
      const [toolsId, promptsId, resourceId] = yield* listenIds(sent)
      const t = yield* collect(tools.notifications)
      const p = yield* collect(prompts.notifications)
      const r = yield* collect(resource.notifications)

      yield* bounded(client.callTool("touch", { kind: "tools" }))
      const [tn] = yield* t.exactly(1)
      expect(tn?.method).toBe("notifications/tools/list_changed")
      expect(get(tn?.params, "_meta", SUB_ID)).toBe(toolsId)
      yield* p.exactly(0)

      yield* bounded(client.callTool("touch", { kind: "prompts" }))
      const [pn] = yield* p.exactly(1)
      expect(pn?.method).toBe("notifications/prompts/list_changed")
      expect(get(pn?.params, "_meta", SUB_ID)).toBe(promptsId)
      yield* t.exactly(1)

      yield* bounded(client.callTool("update", { uri: "mem://b" }))
      yield* bounded(client.callTool("update", { uri: "mem://a" }))
      const [rn] = yield* r.exactly(1)
      expect(rn?.method).toBe("notifications/resources/updated")
      expect(get(rn?.params, "uri")).toBe("mem://a")
      expect(get(rn?.params, "_meta", SUB_ID)).toBe(resourceId)
      yield* t.exactly(1)
      yield* p.exactly(1)
    }))

  it.scopedLive("stdio: closing a listen's scope cancels it; the other listen goes on", () =>
    Effect.gen(function*() {
      const { client } = yield* spawnFixture()
      const kept = yield* bounded(client.listen({ toolsListChanged: true }))
      const k = yield* collect(kept.notifications)
      const scope = yield* Scope.make()
      const closing = yield* bounded(client.listen({ toolsListChanged: true })).pipe(Scope.extend(scope))
      const c = yield* collect(closing.notifications).pipe(Scope.extend(scope))
      yield* bounded(client.callTool("touch", { kind: "tools" }))
      yield* k.exactly(1)
      yield* c.exactly(1)
      yield* bounded(Scope.close(scope, Exit.void))
      yield* bounded(client.callTool("touch", { kind: "tools" }))
      yield* k.exactly(2)
      expect(yield* Ref.get(c.seen)).toHaveLength(1)
    }))

  it.scopedLive("Streamable HTTP: ack, then exactly one tools/list_changed per change, tagged", () =>
    Effect.gen(function*() {
      const server = yield* makeServer()
      const { url } = yield* StreamableHttp.serve(server)
      const { sent, transport } = yield* recording(yield* StreamableHttp.client({ url }))
      const client = yield* bounded(McpClient.connect(transport))
      assert.strictEqual(client.info.era, "modern")
      const sub = yield* bounded(client.listen({ toolsListChanged: true }))
      expect(sub.acknowledged).toEqual({ toolsListChanged: true })
      const { exactly } = yield* collect(sub.notifications)
      yield* McpServer.addTool(server, extra("over-http"))
      const [n] = yield* exactly(1)
      expect(n?.method).toBe("notifications/tools/list_changed")
      const [id] = yield* listenIds(sent)
      expect(get(n?.params, "_meta", SUB_ID)).toBe(id)
    }))
})

// ---------------------------------------------------------------------------------------------
// legacy
// ---------------------------------------------------------------------------------------------

describe("McpClient.listen (legacy)", () => {
  it.scopedLive("in process: list changes and subscribed resource updates; resources/subscribe and unsubscribe", () =>
    Effect.gen(function*() {
      const server = yield* makeServer()
      const { sent, transport } = yield* recording(yield* InProcess.client(server))
      const client = yield* McpClient.connect(transport, { versions: ["2025-11-25"] })
      assert.strictEqual(client.info.era, "legacy")
      const scope = yield* Scope.make()
      const sub = yield* client.listen({ toolsListChanged: true, resourceSubscriptions: ["mem://a"] }).pipe(
        Scope.extend(scope)
      )
      expect(sub.acknowledged).toEqual({ toolsListChanged: true, resourceSubscriptions: ["mem://a"] })
      const { exactly } = yield* collect(sub.notifications).pipe(Scope.extend(scope))
      yield* McpServer.addTool(server, extra("legacy-added"))
      yield* McpServer.addPrompt(server, Prompt.make({ name: "p", handler: () => "p" }))
      yield* McpServer.resourceUpdated(server, "mem://other")
      yield* McpServer.resourceUpdated(server, "mem://a")
      const got = yield* exactly(2)
      expect(methods(got)).toEqual(["notifications/tools/list_changed", "notifications/resources/updated"])
      expect(get(got[0]?.params, "_meta", SUB_ID)).toBeUndefined()
      expect(get(got[1]?.params, "uri")).toBe("mem://a")
      const subscribed = (yield* Ref.get(sent)).filter((x) => x.method === "resources/subscribe")
      expect(subscribed.map((x) => get(x.params, "uri"))).toEqual(["mem://a"])
      yield* Scope.close(scope, Exit.void)
      const unsubscribed = (yield* Ref.get(sent)).filter((x) => x.method === "resources/unsubscribe")
      expect(unsubscribed.map((x) => get(x.params, "uri"))).toEqual(["mem://a"])
    }))

  it.scopedLive("stdio: the process's list_changed, filtered", () =>
    Effect.gen(function*() {
      const { client } = yield* spawnFixture({ versions: ["2025-11-25"] })
      assert.strictEqual(client.info.era, "legacy")
      const sub = yield* bounded(client.listen({ promptsListChanged: true }))
      expect(sub.acknowledged).toEqual({ promptsListChanged: true })
      const { exactly } = yield* collect(sub.notifications)
      yield* bounded(client.callTool("touch", { kind: "tools" }))
      yield* bounded(client.callTool("touch", { kind: "prompts" }))
      const [n] = yield* exactly(1)
      expect(n?.method).toBe("notifications/prompts/list_changed")
    }))

  it.scopedLive("Streamable HTTP: the session's GET stream, shared by two listens", () =>
    Effect.gen(function*() {
      const server = yield* makeServer()
      const { url } = yield* StreamableHttp.serve(server)
      const client = yield* bounded(
        McpClient.connect(yield* StreamableHttp.client({ url }), { versions: ["2025-11-25"] })
      )
      assert.strictEqual(client.info.era, "legacy")
      const a = yield* bounded(client.listen({ toolsListChanged: true }))
      const b = yield* bounded(client.listen({ toolsListChanged: true, resourceSubscriptions: ["mem://a"] }))
      const ca = yield* collect(a.notifications)
      const cb = yield* collect(b.notifications)
      yield* McpServer.addTool(server, extra("over-get"))
      yield* McpServer.resourceUpdated(server, "mem://a")
      expect(methods(yield* ca.exactly(1))).toEqual(["notifications/tools/list_changed"])
      expect(methods(yield* cb.exactly(2))).toEqual([
        "notifications/tools/list_changed",
        "notifications/resources/updated"
      ])
    }))

  it.scoped("a transport without sessionNotifications: ClientError Unsupported", () =>
    Effect.gen(function*() {
      const server = yield* makeServer()
      const inner = yield* InProcess.client(server)
      const bare: Transport.ClientTransport = { request: inner.request, notify: inner.notify }
      const client = yield* McpClient.connect(bare, { versions: ["2025-11-25"] })
      const e = yield* Effect.flip(Effect.scoped(client.listen({ toolsListChanged: true })))
      expect(e).toMatchObject({ _tag: "ClientError", reason: "Unsupported" })
    }))
})

// ---------------------------------------------------------------------------------------------
// coalescing
// ---------------------------------------------------------------------------------------------

describe("McpClient.listen: a burst of changes is coalesced", () => {
  const FILTER: McpClient.ListenFilter = {
    toolsListChanged: true,
    promptsListChanged: true,
    resourceSubscriptions: ["mem://a"]
  }
  const ONE_EACH = [
    "notifications/prompts/list_changed",
    "notifications/resources/updated",
    "notifications/tools/list_changed"
  ]
  const COUNT = 50

  /** `COUNT` times in a row: add a tool, add a prompt, announce an update of mem://a. */
  const burstIn = (server: McpServer.McpServer, round: string): Effect.Effect<void, McpServer.DefinitionError> =>
    Effect.forEach(Array.from({ length: COUNT }, (_, i) => `burst-${round}-${i}`), (name) =>
      Effect.gen(function*() {
        yield* McpServer.addTool(server, extra(name))
        yield* McpServer.addPrompt(server, Prompt.make({ name, handler: () => name }))
        yield* McpServer.resourceUpdated(server, "mem://a")
      }), { discard: true })

  type Setup = (versions: McpClient.Options) => Effect.Effect<
    { readonly client: McpClient.McpClient; readonly burst: (round: string) => Effect.Effect<unknown, unknown> },
    unknown,
    Scope.Scope
  >

  const withPrompts = () => makeServer({ prompts: [Prompt.make({ name: "hello", handler: () => "Hello!" })] })

  const transports: ReadonlyArray<readonly [string, Setup]> = [
    ["in process", (options) =>
      Effect.gen(function*() {
        const server = yield* withPrompts()
        const client = yield* McpClient.connect(yield* InProcess.client(server), options)
        return { client, burst: (round: string) => burstIn(server, round) }
      })],
    ["stdio", (options) =>
      Effect.gen(function*() {
        const { client } = yield* spawnFixture(options)
        return { client, burst: () => bounded(client.callTool("burst", { count: COUNT })) }
      })],
    ["Streamable HTTP", (options) =>
      Effect.gen(function*() {
        const server = yield* withPrompts()
        const { url } = yield* StreamableHttp.serve(server)
        const client = yield* bounded(McpClient.connect(yield* StreamableHttp.client({ url }), options))
        return { client, burst: (round: string) => burstIn(server, round) }
      })]
  ]

  for (const [name, setup] of transports) {
    for (const era of ["modern", "legacy"] as const) {
      it.scopedLive(`${name}, ${era}: ${COUNT} changes of each kind in a row → one notification per kind; a later burst → one more each`, () =>
        Effect.gen(function*() {
          const { burst, client } = yield* setup(era === "legacy" ? { versions: ["2025-11-25"] } : {})
          assert.strictEqual(client.info.era, era)
          const sub = yield* bounded(client.listen(FILTER))
          expect(sub.acknowledged).toEqual(FILTER)
          const c = yield* collect(sub.notifications)
          yield* burst("a")
          expect(methods(yield* c.exactly(3)).sort()).toEqual(ONE_EACH)
          // the first notifications were delivered: a new change is announced again
          yield* burst("b")
          expect(methods((yield* c.exactly(6)).slice(3)).sort()).toEqual(ONE_EACH)
        }))
    }
  }
})

// ---------------------------------------------------------------------------------------------
// re-established after the connection drops
// ---------------------------------------------------------------------------------------------

describe("McpClient.listen: re-established after the connection drops", () => {
  const RESTART = Schedule.spaced("50 millis").pipe(Schedule.intersect(Schedule.recurs(3)))
  const RELISTEN = Schedule.spaced("100 millis").pipe(Schedule.intersect(Schedule.recurs(50)))
  const resubscribed = (n: JsonRpc.Notification | undefined) => get(n?.params, "_meta", McpClient.RESUBSCRIBED)
  const count = (sent: Ref.Ref<ReadonlyArray<JsonRpc.Request>>, method: string) =>
    Effect.map(Ref.get(sent), (xs) => xs.filter((x) => x.method === method).length)

  it.scopedLive("stdio, modern: the process is killed and respawned; the client listens again, clears its cache, and the new process's change arrives", () =>
    Effect.gen(function*() {
      const { client, sent, transport } = yield* spawnFixture({ cache: true }, { restart: RESTART, args: ["--cache"] })
      assert.strictEqual(client.info.era, "modern")
      const sub = yield* bounded(client.listen({ toolsListChanged: true }))
      const c = yield* collect(sub.notifications)
      yield* bounded(client.listTools())
      yield* bounded(client.listTools())
      expect(yield* count(sent, "tools/list")).toBe(1)
      const before = transport.pid
      process.kill(before, "SIGKILL")
      const [re] = yield* c.exactly(1)
      expect(re?.method).toBe("notifications/tools/list_changed")
      expect(resubscribed(re)).toBe(true)
      expect(transport.pid).not.toBe(before)
      const ids = yield* listenIds(sent)
      expect(ids).toHaveLength(2)
      expect(get(re?.params, "_meta", SUB_ID)).toBe(ids[1])
      // the cache was cleared: this goes out to the new process
      yield* bounded(client.listTools())
      expect(yield* count(sent, "tools/list")).toBe(2)
      yield* bounded(client.callTool("touch", { kind: "tools" }))
      const all = yield* c.exactly(2)
      expect(all[1]?.method).toBe("notifications/tools/list_changed")
      expect(resubscribed(all[1])).toBeUndefined()
      expect(get(all[1]?.params, "_meta", SUB_ID)).toBe(ids[1])
    }))

  it.scopedLive("stdio, legacy: the respawned process is initialized again, the URIs are subscribed again, its changes arrive", () =>
    Effect.gen(function*() {
      const { client, sent, transport } = yield* spawnFixture({ versions: ["2025-11-25"] }, { restart: RESTART })
      assert.strictEqual(client.info.era, "legacy")
      const sub = yield* bounded(client.listen({ toolsListChanged: true, resourceSubscriptions: ["mem://a"] }))
      const c = yield* collect(sub.notifications)
      process.kill(transport.pid, "SIGKILL")
      const missed = yield* c.exactly(2)
      expect(methods(missed)).toEqual(["notifications/tools/list_changed", "notifications/resources/updated"])
      expect(missed.map(resubscribed)).toEqual([true, true])
      expect(get(missed[1]?.params, "uri")).toBe("mem://a")
      expect(yield* count(sent, "resources/subscribe")).toBe(2)
      // list_changed reaches only an initialized session: the handshake was replayed
      yield* bounded(client.callTool("touch", { kind: "tools" }))
      yield* bounded(client.callTool("update", { uri: "mem://a" }))
      const all = yield* c.exactly(4)
      expect(methods(all.slice(2))).toEqual(["notifications/tools/list_changed", "notifications/resources/updated"])
      expect(all.slice(2).map(resubscribed)).toEqual([undefined, undefined])
    }))

  it.scopedLive("Streamable HTTP, modern: the listen's connection is cut; the client listens again, clears its cache, and the next change arrives", () =>
    Effect.gen(function*() {
      const server = yield* makeServer({ cache: { ttlMs: 60_000 } })
      const { port, url } = yield* StreamableHttp.serve(server)
      const proxy = yield* TcpProxy.make(port)
      const via = url.replace(`:${port}/`, `:${proxy.port}/`)
      const { sent, transport } = yield* recording(yield* StreamableHttp.client({ url: via }))
      const client = yield* bounded(McpClient.connect(transport, { cache: true, relisten: RELISTEN }))
      assert.strictEqual(client.info.era, "modern")
      const sub = yield* bounded(client.listen({ toolsListChanged: true, resourceSubscriptions: ["mem://a"] }))
      const c = yield* collect(sub.notifications)
      yield* bounded(client.listTools())
      yield* bounded(client.listTools())
      expect(yield* count(sent, "tools/list")).toBe(1)
      yield* proxy.cut
      const missed = yield* c.exactly(2)
      expect(methods(missed)).toEqual(["notifications/tools/list_changed", "notifications/resources/updated"])
      expect(missed.map(resubscribed)).toEqual([true, true])
      const ids = yield* listenIds(sent)
      expect(ids).toHaveLength(2)
      yield* bounded(client.listTools())
      expect(yield* count(sent, "tools/list")).toBe(2)
      yield* McpServer.addTool(server, extra("after-cut"))
      const all = yield* c.exactly(3)
      expect(all[2]?.method).toBe("notifications/tools/list_changed")
      expect(get(all[2]?.params, "_meta", SUB_ID)).toBe(ids[1])
    }))

  it.scopedLive("Streamable HTTP, legacy: the server restarts (new session store); the client re-initializes, reopens the GET stream, subscribes again", () =>
    Effect.gen(function*() {
      const first = yield* makeServer()
      const a = yield* StreamableHttp.serve(first)
      const proxy = yield* TcpProxy.make(a.port)
      const via = a.url.replace(`:${a.port}/`, `:${proxy.port}/`)
      const { sent, transport } = yield* recording(yield* StreamableHttp.client({ url: via }))
      const client = yield* bounded(McpClient.connect(transport, { versions: ["2025-11-25"], relisten: RELISTEN }))
      assert.strictEqual(client.info.era, "legacy")
      const sub = yield* bounded(client.listen({ toolsListChanged: true, resourceSubscriptions: ["mem://a"] }))
      const c = yield* collect(sub.notifications)
      const second = yield* makeServer()
      const b = yield* StreamableHttp.serve(second)
      yield* proxy.retarget(b.port)
      yield* proxy.cut
      const missed = yield* c.exactly(2)
      expect(methods(missed)).toEqual(["notifications/tools/list_changed", "notifications/resources/updated"])
      expect(missed.map(resubscribed)).toEqual([true, true])
      expect(yield* count(sent, "resources/subscribe")).toBe(2)
      yield* McpServer.addTool(second, extra("restarted"))
      yield* McpServer.resourceUpdated(second, "mem://a")
      const all = yield* c.exactly(4)
      expect(methods(all.slice(2))).toEqual(["notifications/tools/list_changed", "notifications/resources/updated"])
    }))

  it.scopedLive("a graceful end (the server's shutdown sends the listen result) ends the stream: no listen again", () =>
    Effect.gen(function*() {
      const server = yield* makeServer()
      const { url } = yield* StreamableHttp.serve(server)
      const { sent, transport } = yield* recording(yield* StreamableHttp.client({ url }))
      const client = yield* bounded(McpClient.connect(transport, { relisten: RELISTEN }))
      const sub = yield* bounded(client.listen({ toolsListChanged: true }))
      const fiber = yield* Effect.fork(Stream.runCollect(sub.notifications))
      yield* McpServer.shutdown(server)
      const ended = yield* bounded(Effect.fromFiber(fiber))
      expect(Chunk.size(ended)).toBe(0)
      yield* Effect.sleep(QUIET)
      expect(yield* listenIds(sent)).toHaveLength(1)
    }))

  it.scopedLive("stdio, legacy: once the client's Scope closed the listen is not re-established; its stream fails at once", () =>
    Effect.gen(function*() {
      const clientScope = yield* Scope.make()
      const { client } = yield* Scope.extend(
        spawnFixture({ versions: ["2025-11-25"], relisten: RELISTEN }, { restart: RESTART }),
        clientScope
      )
      const sub = yield* bounded(client.listen({ toolsListChanged: true }))
      const fiber = yield* Effect.fork(Stream.runCollect(sub.notifications))
      yield* bounded(Scope.close(clientScope, Exit.void))
      // RELISTEN would go on trying for 5 s
      const exit = yield* Effect.exit(Effect.fromFiber(fiber)).pipe(
        Effect.timeoutFail({ duration: "1 second", onTimeout: () => new Error("the stream is still open") })
      )
      assert(Exit.isFailure(exit))
      expect(String(exit.cause)).toContain("TransportError")
    }))

  it.scopedLive("relisten Schedule.stop: a cut connection fails the stream with TransportError", () =>
    Effect.gen(function*() {
      const server = yield* makeServer()
      const { port, url } = yield* StreamableHttp.serve(server)
      const proxy = yield* TcpProxy.make(port)
      const via = url.replace(`:${port}/`, `:${proxy.port}/`)
      const client = yield* bounded(
        McpClient.connect(yield* StreamableHttp.client({ url: via }), { relisten: Schedule.stop })
      )
      const sub = yield* bounded(client.listen({ toolsListChanged: true }))
      const fiber = yield* Effect.fork(Stream.runCollect(sub.notifications))
      yield* Effect.sleep("50 millis")
      yield* proxy.cut
      const exit = yield* bounded(Effect.exit(Effect.fromFiber(fiber)))
      assert(Exit.isFailure(exit))
      expect(Exit.isFailure(exit) ? String(exit.cause) : "").toContain("TransportError")
    }))
})
