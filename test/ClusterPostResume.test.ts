/**
 * A legacy (2025-11-25) request's POST SSE stream cut on one instance and resumed with a GET on
 * another (MCP 2025-11-25, Transports, "Resumability and Redelivery"; `Redis.layer`: sessions and
 * events shared through a real `redis-server`). Two instances in this process, each with its own
 * Redis connection (its own instance id), each serving on 127.0.0.1 port 0, addressed directly so
 * which one serves what is explicit. The request runs on A; the client reads part of its stream
 * there and cancels it; more is recorded while no connection is open; the GET with the last id
 * read lands on B, which replays what A recorded, follows the rest as A records it (B polls the
 * store), up to the response, and ends: every event once, in order; the stream's keys then live
 * the store's `maxAge`, not a day. A request cancelled on A: the GET following it on B ends (A
 * released the stream). A killed with SIGKILL (two `examples/cluster.ts` processes) while its
 * request waits for an answer: the GET following it on B ends, without the response, within A's
 * liveness bound, and our McpClient's call (its resumption sent to B) fails with `TransportError`
 * `"Resume"`. Every wait is bounded.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import { Redis as IORedis } from "ioredis"
import * as McpClient from "../src/McpClient.js"
import * as Redis from "../src/Redis.js"
import * as Transport from "../src/Transport.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import * as Processes from "./support/Cluster.js"
import {
  bounded,
  callStages,
  callTool,
  describeEvent,
  makeServer,
  openSession,
  parts,
  read,
  resume,
  run
} from "./support/PostStream.js"

const LEGACY = "2025-11-25"

/** The event store's default `maxAge` (ms): a request stream's keys live that long after its last event. */
const MAX_AGE_MS = 600_000

describe("POST stream resumed on another instance (Redis sessions and event store)", () => {
  it.scopedLive(
    "the request runs on A, its stream is cut there, the GET with the last id lands on B: every event once, in order, then the response",
    () =>
      Effect.gen(function*() {
        const redis = yield* Processes.redisServer()
        const prefix = `presa-test-${crypto.randomUUID()}`
        // one set of gates for both instances: only A runs the tool
        const gates = yield* Queue.unbounded<void>()
        const open = Queue.offer(gates, undefined)
        const instance = (instanceId: string) =>
          Effect.gen(function*() {
            const shared = yield* Layer.build(
              Redis.layer({ url: redis.url, prefix, instanceId, heartbeat: "100 millis" })
            )
            const { server } = yield* makeServer({ gates }).pipe(Effect.provide(shared))
            const { url } = yield* StreamableHttp.serve(server).pipe(Effect.provide(shared))
            return url
          })
        const a = yield* instance("a")
        const b = yield* instance("b")
        const session = yield* openSession(a, LEGACY)
        const posted = yield* callStages(a, LEGACY, session, 5)
        const before = yield* read(posted, 3)
        expect(before.map(describeEvent)).toEqual(["priming", "progress 1", "progress 2"])
        const { key } = parts(before[0]?.id)
        const last = before[2]?.id
        assert(last !== undefined)
        yield* posted.cancel()
        yield* open
        const resumed = yield* resume(b, LEGACY, session, last)
        const replayed = yield* read(resumed, 2)
        expect(replayed.map(describeEvent)).toEqual(["progress 3", "progress 4"])
        yield* open
        const rest = yield* resumed.rest()
        expect(rest.map(describeEvent)).toEqual(["progress 5", "result staged"])
        expect([...before, ...replayed, ...rest].map((e) => parts(e.id))).toEqual(
          [0, 1, 2, 3, 4, 5, 6].map((n) => ({ key, n }))
        )
        // resumed on A with the same id: the same events, from the shared store
        const onA = yield* resume(a, LEGACY, session, last)
        expect((yield* onA.rest()).map(describeEvent)).toEqual([
          "progress 3",
          "progress 4",
          "progress 5",
          "result staged"
        ])
        // the stream's keys live the store's maxAge after its last event, not a day
        const inspect = new IORedis(redis.url, { maxRetriesPerRequest: 1 })
        yield* Effect.addFinalizer(() => Effect.sync(() => inspect.disconnect()))
        const base = `${prefix}:events:post:${session}:${key}`
        const ttls = yield* run("PTTL", () =>
          Promise.all([base, `${base}:n`, `${base}:writer`].map((k) => inspect.pttl(k))))
        for (const ttl of ttls) {
          expect(ttl).toBeGreaterThan(0)
          expect(ttl).toBeLessThanOrEqual(MAX_AGE_MS)
        }
      }),
    60_000
  )
})

describe("a GET on B following a POST stream of A ends when the stream cannot finish", () => {
  it.scopedLive(
    "the request is cancelled on A (A releases the stream: it has no writer): the GET on B ends, no response",
    () =>
      Effect.gen(function*() {
        const redis = yield* Processes.redisServer()
        const prefix = `presa-test-${crypto.randomUUID()}`
        const instance = (instanceId: string) =>
          Effect.gen(function*() {
            const shared = yield* Layer.build(
              Redis.layer({ url: redis.url, prefix, instanceId, heartbeat: "100 millis" })
            )
            const { server } = yield* makeServer().pipe(Effect.provide(shared))
            return (yield* StreamableHttp.serve(server).pipe(Effect.provide(shared))).url
          })
        const a = yield* instance("a")
        const b = yield* instance("b")
        const session = yield* openSession(a, LEGACY)
        const posted = yield* callStages(a, LEGACY, session, 11)
        const [priming] = yield* read(posted, 1)
        yield* posted.cancel()
        const following = yield* resume(b, LEGACY, session, priming?.id ?? "")
        expect((yield* read(following, 3)).map(describeEvent)).toEqual(["progress 1", "progress 2", "progress 3"])
        yield* run("cancel", () =>
          fetch(a, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              "mcp-protocol-version": LEGACY,
              "mcp-session-id": session
            },
            body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 11 } })
          }).then((r) => r.text()))
        // A is alive: it is the release, not a lapse, that ends the GET (well within WAIT_MS)
        expect(yield* following.rest()).toEqual([])
      }),
    60_000
  )
})

/** Five heartbeats of `examples/cluster.ts` (the default, 1 s): how long a killed writer still looks alive. */
const LIVENESS_MS = 5 * 1000
/** The bound asserted from the kill to the end of what followed the request: liveness plus slack for a loaded machine. */
const BOUND_MS = LIVENESS_MS + 5_000

const endpoint = (port: number) => `http://127.0.0.1:${port}/mcp`

describe("POST stream whose instance is killed (SIGKILL) while it runs the request", () => {
  it.scopedLive(
    "the GET following it on B ends once A's liveness lapsed, without the response; McpClient's call fails with TransportError Resume",
    () =>
      Effect.gen(function*() {
        const redis = yield* Processes.redisServer()
        const prefix = `presa-test-${crypto.randomUUID()}`
        const [a, b] = yield* Effect.all(
          [0, 1].map(() => Processes.instance({ redisUrl: redis.url, prefix })),
          { concurrency: "unbounded" }
        )
        assert(a !== undefined && b !== undefined)
        const onA = endpoint(a.port)
        const onB = endpoint(b.port)
        // raw: `confirm` asks its question on the request's POST stream on A, and waits for the answer
        const session = yield* openSession(onA, LEGACY, { elicitation: {} })
        const posted = yield* callTool(onA, LEGACY, session, 2, "confirm", { what: "ship" })
        const [priming, question] = yield* read(posted, 2)
        assert(priming !== undefined && question !== undefined)
        expect(priming.data).toBe("")
        expect(JSON.parse(question.data)).toMatchObject({ method: "elicitation/create" })
        // our client: the same on A, its GETs (the resumption) sent to B
        const asked = yield* Deferred.make<void>()
        const transport = yield* StreamableHttp.client({
          url: onA,
          resumption: { initialDelay: "100 millis", maxAttempts: 3 },
          fetch: (input, init) => globalThis.fetch(init?.method === "GET" ? onB : input, init)
        })
        const client = yield* bounded(McpClient.connect(transport, {
          versions: [LEGACY],
          onElicit: () => Effect.zipRight(Deferred.succeed(asked, undefined), Effect.never)
        }))
        const call = yield* Effect.fork(client.callTool("confirm", { what: "ship" }))
        yield* bounded(Deferred.await(asked))
        // the GET with the question's id follows the stream on B while A lives
        assert(question.id !== undefined)
        const following = yield* resume(onB, LEGACY, session, question.id)
        const end = yield* Effect.fork(following.next())
        yield* Effect.sleep("1 second")
        expect(end.unsafePoll()).toBeNull()
        const killedAt = Date.now()
        yield* a.kill("SIGKILL")
        // nothing more, no response: the body ends, within the bound
        expect(yield* Fiber.join(end)).toBeUndefined()
        expect(Date.now() - killedAt).toBeLessThan(BOUND_MS)
        // the client's resumption on B ends the same way: its bounded tries give up with the typed error
        const exit = yield* bounded(Fiber.await(call))
        expect(Date.now() - killedAt).toBeLessThan(BOUND_MS)
        assert(Exit.isFailure(exit))
        const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
        assert(error instanceof Transport.TransportError, `not a TransportError: ${String(exit.cause)}`)
        expect(error.reason).toBe("Resume")
        expect(error.message).toContain("after 3 tries")
      }),
    120_000
  )
})
