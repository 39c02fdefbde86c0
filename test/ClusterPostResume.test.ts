/**
 * A legacy (2025-11-25) request's POST SSE stream cut on one instance and resumed with a GET on
 * another (MCP 2025-11-25, Transports, "Resumability and Redelivery"; `Redis.layer`: sessions and
 * events shared through a real `redis-server`). Two instances in this process, each with its own
 * Redis connection (its own instance id), each serving on 127.0.0.1 port 0, addressed directly so
 * which one serves what is explicit. The request runs on A; the client reads part of its stream
 * there and cancels it; more is recorded while no connection is open; the GET with the last id
 * read lands on B, which replays what A recorded, follows the rest as A records it (B polls the
 * store), up to the response, and ends: every event once, in order. Every wait is bounded.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Redis from "../src/Redis.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import * as Processes from "./support/Cluster.js"
import { callStages, describeEvent, makeServer, openSession, parts, read, resume } from "./support/PostStream.js"

const LEGACY = "2025-11-25"

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
      }),
    60_000
  )
})
