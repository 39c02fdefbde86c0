/**
 * `Cluster.EventStore`: the in-memory store (the GET streams' default replay buffer; TestClock for
 * ages) and `Redis.layerEventStore` on a real `redis-server` (two connections as two instances):
 * bounds by count and age, the replay of an id the stream did not issue, one writer per stream, a
 * stream without a live writer reported abandoned, a request stream's keys living `maxAge`.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import { Redis as IORedis } from "ioredis"
import * as Cluster from "../src/Cluster.js"
import * as JsonRpc from "../src/JsonRpc.js"
import * as Redis from "../src/Redis.js"
import * as Processes from "./support/Cluster.js"

const note = (n: number) => JsonRpc.notification("notifications/message", { level: "info", data: n })

const appendAll = (store: Cluster.EventStoreShape, stream: string, ns: ReadonlyArray<number>) =>
  Effect.forEach(ns, (n) => Effect.map(store.append(stream, note(n)), Option.getOrThrow))

const ids = (replay: Cluster.Replay) => replay.events.map((e) => e.id)

describe("in-memory event store", () => {
  it.effect("ids per stream from 1; replay after an id; bounded by count (a gap is reported)", () =>
    Effect.gen(function*() {
      const store = yield* Cluster.makeMemoryEventStore({ maxEvents: 3 })
      expect(yield* store.claim("s")).toBe(0)
      yield* appendAll(store, "s", [1, 2, 3, 4, 5])
      yield* appendAll(store, "other", [9])
      expect(yield* store.claim("s")).toBe(5)
      const all = yield* store.replayAfter("s", 0)
      expect(all).toMatchObject({ latest: 5, known: true, gap: true })
      expect(ids(all)).toEqual([3, 4, 5])
      expect(all.events.map((e) => e.message)).toEqual([note(3), note(4), note(5)])
      const tail = yield* store.replayAfter("s", 3)
      expect(tail).toMatchObject({ known: true, gap: false })
      expect(ids(tail)).toEqual([4, 5])
      expect(ids(yield* store.replayAfter("other", 0))).toEqual([1])
      // an id the stream never issued: nothing replayed, said so
      expect(yield* store.replayAfter("s", 6)).toEqual({ events: [], latest: 5, known: false, gap: false })
      expect(yield* store.replayAfter("s", 5)).toEqual({ events: [], latest: 5, known: true, gap: false })
      yield* store.release("s")
      // released: unknown (a lookup does not bring it back), until claimed again
      expect(yield* store.replayAfter("s", 0)).toEqual({ events: [], latest: 0, known: false, gap: false })
      expect(yield* store.replayAfter("s", 0)).toEqual({ events: [], latest: 0, known: false, gap: false })
      expect(yield* store.claim("s")).toBe(0)
      expect(yield* store.replayAfter("s", 0)).toEqual({ events: [], latest: 0, known: true, gap: false })
      // a stream never claimed nor appended to: unknown, even for id 0
      expect(yield* store.replayAfter("never", 0)).toEqual({ events: [], latest: 0, known: false, gap: false })
    }))

  it.effect("bounded by age: an event older than maxAge is not replayed", () =>
    Effect.gen(function*() {
      const store = yield* Cluster.makeMemoryEventStore({ maxAge: "1 minute" })
      yield* appendAll(store, "s", [1])
      yield* TestClock.adjust("40 seconds")
      yield* appendAll(store, "s", [2])
      yield* TestClock.adjust("30 seconds")
      const replay = yield* store.replayAfter("s", 0)
      expect(ids(replay)).toEqual([2])
      expect(replay.gap).toBe(true)
      yield* TestClock.adjust("31 seconds")
      expect(yield* store.replayAfter("s", 1)).toEqual({ events: [], latest: 2, known: true, gap: true })
    }))

  it.effect("randomStart: an id from another store's numbering is unknown here", () =>
    Effect.gen(function*() {
      const store = yield* Cluster.makeMemoryEventStore({ randomStart: true })
      const [first] = yield* appendAll(store, "s", [1])
      assert(first !== undefined)
      expect(first.id).toBeGreaterThan(1)
      expect((yield* store.replayAfter("s", 0)).known).toBe(false)
      expect(ids(yield* store.replayAfter("s", first.id - 1))).toEqual([first.id])
    }))
})

/** An instance's event store, kept for the current Scope. */
const redisStore = (
  url: string,
  prefix: string,
  instanceId: string,
  options: Cluster.EventStoreOptions,
  deployment = prefix
) =>
  Effect.map(
    Layer.build(
      Redis.layerEventStore(options).pipe(
        Layer.provide(Redis.layerConnection({ url, prefix, instanceId, deployment, heartbeat: "50 millis" }))
      )
    ),
    Context.get(Cluster.EventStore)
  )

describe("Redis event store (real redis-server)", () => {
  it.scopedLive("one numbering for every instance; bounded by count; one writer per stream", () =>
    Effect.gen(function*() {
      const redis = yield* Processes.redisServer()
      const prefix = `presa-test-${crypto.randomUUID()}`
      const open = (instanceId: string) => redisStore(redis.url, prefix, instanceId, { maxEvents: 3 })
      const aScope = yield* Scope.make()
      const a = yield* open("a").pipe(Scope.extend(aScope))
      const b = yield* open("b")
      expect(yield* a.claim("get:s")).toBe(0)
      yield* appendAll(a, "get:s", [1, 2])
      // b is not the writer: what it would record, a records
      expect(Option.isNone(yield* b.append("get:s", note(99)))).toBe(true)
      // b takes the stream over (a client opened its GET stream there): a's appends are dropped
      expect(yield* b.claim("get:s")).toBe(2)
      expect(Option.isNone(yield* a.append("get:s", note(99)))).toBe(true)
      yield* appendAll(b, "get:s", [3, 4, 5])
      for (const store of [a, b]) {
        const replay = yield* store.replayAfter("get:s", 1)
        expect(replay).toMatchObject({ latest: 5, known: true, gap: true })
        expect(ids(replay)).toEqual([3, 4, 5])
        expect(replay.events.map((e) => e.message)).toEqual([note(3), note(4), note(5)])
      }
      expect(yield* a.replayAfter("get:s", 7)).toEqual({ events: [], latest: 5, known: false, gap: false })
      expect(ids(yield* b.replayAfter("get:s", 4))).toEqual([5])
      // a stream never claimed nor appended to: unknown, even for id 0; claimed, it is known
      expect(yield* b.replayAfter("post:s:k", 0)).toEqual({ events: [], latest: 0, known: false, gap: false })
      expect(yield* a.claim("post:s:k")).toBe(0)
      expect(yield* b.replayAfter("post:s:k", 0)).toEqual({ events: [], latest: 0, known: true, gap: false })
      // another stream: its own numbering, its first recorder is its writer
      yield* appendAll(a, "get:t", [1])
      expect(Option.isNone(yield* b.append("get:t", note(2)))).toBe(true)
      expect(ids(yield* b.replayAfter("get:t", 0))).toEqual([1])
      // a stops: once its liveness lapses (five heartbeats), b records its streams
      yield* Scope.close(aScope, Exit.void)
      const taken = yield* b.append("get:t", note(2)).pipe(
        Effect.flatMap((appended) => appended),
        Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("10 seconds")))
      )
      expect(taken.id).toBe(2)
    }))

  it.scopedLive("a stream whose writer released it or stopped is abandoned; a request stream's keys live maxAge", () =>
    Effect.gen(function*() {
      const redis = yield* Processes.redisServer()
      const prefix = `presa-test-${crypto.randomUUID()}`
      const open = (instanceId: string) => redisStore(redis.url, prefix, instanceId, { maxAge: "400 millis" })
      const aScope = yield* Scope.make()
      const a = yield* open("a").pipe(Scope.extend(aScope))
      const b = yield* open("b")
      // a records, and lives: not abandoned
      expect(yield* a.claim("post:s:k")).toBe(0)
      yield* appendAll(a, "post:s:k", [1])
      expect((yield* b.replayAfter("post:s:k", 0)).abandoned).toBeUndefined()
      // b releasing a stream a writes changes nothing; a releasing it leaves it without a writer
      yield* b.release("post:s:k")
      expect((yield* b.replayAfter("post:s:k", 0)).abandoned).toBeUndefined()
      yield* a.release("post:s:k")
      const released = yield* b.replayAfter("post:s:k", 0)
      expect(released).toMatchObject({ latest: 1, known: true, abandoned: true })
      expect(ids(released)).toEqual([1])
      // a request stream's keys live maxAge after its last event; a GET stream's, a day
      yield* appendAll(a, "get:s", [1])
      const inspect = new IORedis(redis.url, { maxRetriesPerRequest: 1 })
      yield* Effect.addFinalizer(() => Effect.sync(() => inspect.disconnect()))
      const pttl = (key: string) => Effect.promise(() => inspect.pttl(`${prefix}:events:${key}`))
      expect(yield* pttl("post:s:k:writer")).toBe(-2) // released: no writer key
      for (const key of ["post:s:k", "post:s:k:n"]) {
        const ttl = yield* pttl(key)
        expect(ttl).toBeGreaterThan(0)
        expect(ttl).toBeLessThanOrEqual(400)
      }
      expect(yield* pttl("get:s")).toBeGreaterThan(60 * 60 * 1000)
      // a stops (its liveness lapses within five heartbeats): its stream is abandoned
      expect(yield* a.claim("post:s:m")).toBe(0)
      expect((yield* b.replayAfter("post:s:m", 0)).abandoned).toBeUndefined()
      yield* Scope.close(aScope, Exit.void)
      yield* b.replayAfter("post:s:m", 0).pipe(
        Effect.filterOrFail((r) => r.abandoned === true, () => new Error("still has a live writer")),
        Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("10 seconds")))
      )
      // a request stream whose keys expired is not recreated by a late append; a GET stream is
      expect(yield* b.claim("post:s:n")).toBe(0)
      yield* Effect.sleep("600 millis")
      expect(Option.isNone(yield* b.append("post:s:n", note(1)))).toBe(true)
      expect((yield* b.replayAfter("post:s:n", 0)).known).toBe(false)
      expect(Option.isSome(yield* b.append("get:u", note(1)))).toBe(true)
    }))

  it.scopedLive("bounded by age; entries of another deployment are not replayed; Redis away fails", () =>
    Effect.gen(function*() {
      const redis = yield* Processes.redisServer()
      const prefix = `presa-test-${crypto.randomUUID()}`
      const open = (instanceId: string, deployment: string) =>
        redisStore(redis.url, prefix, instanceId, { maxAge: "300 millis" }, deployment)
      const a = yield* open("a", "prod")
      yield* appendAll(a, "get:s", [1])
      yield* Effect.sleep("500 millis")
      yield* appendAll(a, "get:s", [2])
      const replay = yield* a.replayAfter("get:s", 0)
      expect(ids(replay)).toEqual([2])
      expect(replay.gap).toBe(true)
      // a stray deployment sharing the prefix: its entry is ignored (and counted)
      const stray = yield* open("x", "staging")
      yield* stray.claim("get:s")
      yield* appendAll(stray, "get:s", [3])
      const counter = Redis.ignored.pipe(Metric.tagged("source", "event"), Metric.tagged("reason", "foreign"))
      const before = (yield* Metric.value(counter)).count
      expect(ids(yield* a.replayAfter("get:s", 1))).toEqual([2])
      expect((yield* Metric.value(counter)).count).toBe(before + 1)
      yield* redis.kill("SIGKILL")
      const failed = yield* Effect.flip(a.append("get:s", note(4)))
      expect(failed._tag).toBe("EventStoreError")
      expect((yield* Effect.flip(a.replayAfter("get:s", 0)))._tag).toBe("EventStoreError")
    }))
})
