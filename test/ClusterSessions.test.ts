/**
 * Legacy (2025-11-25) sessions across instances (presa-mcp/Redis `layerSessionStore`), driven by
 * the official SDK v1 client (`@modelcontextprotocol/sdk`, Streamable HTTP client transport):
 * three processes of `examples/cluster.ts` with a real `redis-server`, behind nginx round robin
 * (where installed; CI installs it) and behind the per-request round robin of
 * test/support/RoundRobin.ts, whose log shows that the requests of one session landed on every
 * instance. Also: a session whose GET-stream instance dies goes on (the client reconnects its GET
 * stream elsewhere), and the `/health` endpoint with Redis stopped. Every wait is bounded.
 */
import { assert, describe, expect, it, layer } from "@effect/vitest"
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ElicitRequestSchema, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import { bounded, eventually, type Recorder, recordingFetch } from "./fixtures/interop-http.js"
import * as Cluster from "./support/Cluster.js"
import * as RoundRobin from "./support/RoundRobin.js"

const CLIENT_INFO = { name: "cluster-sessions-test", version: "0.0.0" }
const README = "file:///readme.txt"
const HAS_NGINX = Cluster.hasNginx()

interface Fixture {
  readonly redis: Cluster.RedisServer
  readonly instances: ReadonlyArray<Cluster.Instance>
  readonly lb: RoundRobin.RoundRobin
  readonly nginx: Cluster.Nginx | undefined
}

class TestCluster extends Context.Tag("test/ClusterSessions")<TestCluster, Fixture>() {}

const startCluster = (size: number, withNginx: boolean) =>
  Effect.gen(function*() {
    const redis = yield* Cluster.redisServer()
    const prefix = `presa-test-${crypto.randomUUID()}`
    const instances = yield* Effect.all(
      Array.from({ length: size }, () => Cluster.instance({ redisUrl: redis.url, prefix, stateKeys: "k" })),
      { concurrency: "unbounded" }
    )
    const lb = yield* RoundRobin.make(instances.map((i) => i.port))
    const nginx = withNginx && HAS_NGINX ? yield* Cluster.nginx(instances.map((i) => i.port)) : undefined
    return { redis, instances, lb, nginx }
  })

/** A promise as an Effect (bounded), failing with its rejection. */
const promise = <A>(what: string, thunk: () => Promise<A>) =>
  bounded(Effect.tryPromise({ try: thunk, catch: (e) => new Error(`${what}: ${String(e)}`) }), what)

interface Session {
  readonly client: V1Client
  readonly transport: V1Transport
  readonly recorder: Recorder
  /** The URIs of the `notifications/resources/updated` the client received. */
  readonly updates: Queue.Queue<string>
  /** The messages of the `elicitation/create` requests the client answered (accept, ok). */
  readonly asked: Array<string>
}

/** An SDK v1 client with elicitation, connected to `url` for the scope (closed at its end). */
const connectV1 = (url: string) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const recorder = recordingFetch()
    const updates = yield* Queue.unbounded<string>()
    const asked: Array<string> = []
    const client = new V1Client(CLIENT_INFO, { capabilities: { elicitation: {} } })
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message)
      return Promise.resolve({ action: "accept", content: { ok: true } })
    })
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      Runtime.runSync(runtime)(Queue.offer(updates, notification.params.uri))
    })
    const transport = new V1Transport(new URL(url), {
      fetch: recorder.fetch,
      reconnectionOptions: {
        initialReconnectionDelay: 200,
        maxReconnectionDelay: 1000,
        reconnectionDelayGrowFactor: 1.5,
        maxRetries: 5
      }
    })
    yield* Effect.acquireRelease(
      promise("v1 connect", () => client.connect(transport)),
      () => promise("v1 close", () => client.close()).pipe(Effect.ignore)
    )
    return { client, transport, recorder, updates, asked } satisfies Session
  })

/** The number of standalone GET streams the client has opened (200 responses). */
const getStreams = (recorder: Recorder): number =>
  recorder.exchanges.filter((x) => x.method === "GET" && x.status === 200).length

const textOf = (result: object): string => {
  const content = "content" in result ? result.content : undefined
  if (!Array.isArray(content)) return ""
  const first: unknown = content[0]
  return typeof first === "object" && first !== null && "text" in first && typeof first.text === "string"
    ? first.text
    : ""
}

/** Calls `touch` and waits for the resulting `resources/updated` on the session's GET stream. */
const touchAndHear = (session: Session) =>
  Effect.gen(function*() {
    const touched = yield* promise("touch", () => session.client.callTool({ name: "touch", arguments: {} }))
    assert.strictEqual(textOf(touched), "touched file:///readme.txt")
    assert.strictEqual(yield* bounded(Queue.take(session.updates), "notifications/resources/updated"), README)
  })

/** A raw legacy POST naming `sessionId`, straight to `url`: its HTTP status. */
const rawStatus = (url: string, sessionId: string) =>
  promise("raw POST", async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": sessionId,
        "mcp-protocol-version": "2025-11-25"
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
    })
    await response.body?.cancel()
    return response.status
  })

/** A raw legacy `initialize` POST to `url`: its HTTP status. */
const rawInitializeStatus = (url: string) =>
  promise("raw initialize", async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: CLIENT_INFO }
      })
    })
    await response.body?.cancel()
    return response.status
  })

/** `GET /health` of one instance: status and JSON body. */
const health = (port: number) =>
  promise("GET /health", async () => {
    const response = await fetch(`http://127.0.0.1:${port}/health`)
    const body: unknown = await response.json()
    return { status: response.status, body }
  })

/**
 * The whole life of one session: initialize (connect), tools/list, tools/call, subscribe and
 * three `touch` notifications on the GET stream, an elicitation round trip (two questions), DELETE
 * (then the id is unknown on every instance: 404).
 */
const sessionLife = (url: string, instances: number) =>
  Effect.gen(function*() {
    const session = yield* connectV1(url)
    const { client, transport } = session
    expect(client.getServerVersion()?.name).toBe("presa-library")
    const sessionId = transport.sessionId
    assert.isString(sessionId)
    const tools = yield* promise("tools/list", () => client.listTools())
    expect(tools.tools.map((t) => t.name)).toEqual(expect.arrayContaining(["add", "touch", "confirm"]))
    const sum = yield* promise("add", () => client.callTool({ name: "add", arguments: { numbers: [1, 2, 3] } }))
    expect(sum.structuredContent).toEqual({ sum: 6 })
    yield* promise("resources/subscribe", () => client.subscribeResource({ uri: README }))
    yield* eventually("the GET stream to open", () => getStreams(session.recorder) >= 1)
    for (let i = 0; i < instances; i++) yield* touchAndHear(session)
    const confirmed = yield* promise(
      "confirm",
      () => client.callTool({ name: "confirm", arguments: { what: "deploy" } })
    )
    assert.strictEqual(textOf(confirmed), "done deploy")
    expect(session.asked).toEqual(["Do deploy?", "Really do deploy?"])
    yield* promise("DELETE", () => transport.terminateSession())
    for (let i = 0; i < instances; i++) assert.strictEqual(yield* rawStatus(url, sessionId ?? ""), 404)
    return sessionId ?? ""
  })

layer(Layer.scoped(TestCluster, startCluster(3, true)), { timeout: 120_000, excludeTestServices: true })(
  "a 2025-11-25 session of the official SDK v1 client across three instances",
  (it) => {
    it.scoped.skipIf(!HAS_NGINX)("through nginx round robin: the whole session works", () =>
      Effect.gen(function*() {
        const { nginx } = yield* TestCluster
        if (nginx === undefined) return assert.fail("nginx did not start")
        yield* sessionLife(nginx.url, 3)
      }))

    it.scoped("through the per-request balancer: the same, with every request kind on every instance", () =>
      Effect.gen(function*() {
        const { lb } = yield* TestCluster
        const from = lb.log.length
        yield* sessionLife(lb.url, 3)
        const landed = (method: string) =>
          new Set(lb.log.slice(from).filter((l) => l.method === method).map((l) => l.upstream))
        // initialize on one instance, the session's requests on all three
        expect(landed("tools/call").size).toBe(3)
        expect(landed("initialize").size).toBe(1)
        const all = new Set(lb.log.slice(from).map((l) => l.upstream))
        expect(all.size).toBe(3)
      }))
  }
)

describe("failures", () => {
  it.scopedLive(
    "the instance holding a session's GET stream dies: the client reconnects it elsewhere, the session goes on",
    () =>
      Effect.gen(function*() {
        const { instances, lb } = yield* startCluster(3, false)
        const session = yield* connectV1(lb.url)
        yield* promise("resources/subscribe", () => session.client.subscribeResource({ uri: README }))
        yield* eventually("the GET stream to open", () => getStreams(session.recorder) >= 1)
        yield* touchAndHear(session)
        // the GET request is the one logged without a JSON-RPC method
        const getOn = lb.log.find((l) => l.method === undefined)?.upstream
        const victim = instances[getOn ?? -1]
        if (victim === undefined) return assert.fail("no GET landing logged")
        yield* victim.kill("SIGKILL")
        yield* eventually("the GET stream to reopen", () => getStreams(session.recorder) >= 2)
        for (let i = 0; i < 2; i++) yield* touchAndHear(session)
        const sum = yield* promise(
          "add",
          () => session.client.callTool({ name: "add", arguments: { numbers: [2, 2] } })
        )
        expect(sum.structuredContent).toEqual({ sum: 4 })
      }),
    { timeout: 90_000 }
  )

  it.scopedLive(
    "Redis down: /health reports it, held sessions go on, no new session opens; all recover",
    () =>
      Effect.gen(function*() {
        const { instances, lb, redis } = yield* startCluster(2, false)
        for (const i of instances) {
          expect(yield* health(i.port)).toEqual({ status: 200, body: { status: "ok", redis: "up" } })
        }
        const held = yield* connectV1(lb.url)
        // both instances hold the session now (initialize on one, the rest spread over both)
        for (let i = 0; i < 2; i++) yield* promise("tools/list", () => held.client.listTools())
        yield* redis.kill("SIGKILL")
        yield* Effect.forEach(instances, (i) =>
          health(i.port).pipe(
            Effect.filterOrFail((h) => h.status === 503, () => new Error("not degraded yet")),
            Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("10 seconds"))),
            Effect.map((h) => expect(h.body).toEqual({ status: "degraded", redis: "down" }))
          ))
        // the held session is served from each instance's memory, without waiting on Redis
        for (let i = 0; i < 2; i++) {
          const started = Date.now()
          const sum = yield* promise("add", () => held.client.callTool({ name: "add", arguments: { numbers: [i, 1] } }))
          expect(sum.structuredContent).toEqual({ sum: i + 1 })
          expect(Date.now() - started).toBeLessThan(3_000)
        }
        // a new session cannot be shared: refused with 503 (not left to work by chance)
        const refused = yield* Effect.flip(connectV1(lb.url))
        expect(String(refused)).toContain("Cannot open a session now")
        for (let i = 0; i < 2; i++) assert.strictEqual(yield* rawInitializeStatus(lb.url), 503)
        // Redis back (empty: this one keeps nothing on disk): healthy again, new sessions work across instances
        yield* Cluster.redisServer(redis.port)
        yield* Effect.forEach(instances, (i) =>
          health(i.port).pipe(
            Effect.filterOrFail((h) => h.status === 200, () => new Error("not recovered yet")),
            Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("10 seconds")))
          ))
        const fresh = yield* connectV1(lb.url)
        yield* promise("resources/subscribe", () => fresh.client.subscribeResource({ uri: README }))
        yield* eventually("the GET stream to open", () => getStreams(fresh.recorder) >= 1)
        for (let i = 0; i < 2; i++) yield* touchAndHear(fresh)
      }),
    { timeout: 90_000 }
  )
})
