/**
 * What an instance reads from Redis that is not its own (issue 34, point 7): on each channel
 * (`changes`, `tasks`, `sessions`) a real `redis-server` carries garbage, a payload over
 * `maxMessageBytes`, well-formed messages stamped with another deployment and with this
 * deployment but another instance, published by a raw ioredis client. The instance keeps serving,
 * its definitions stay as they were, only the last kind has an effect, and `Redis.ignored` counts
 * the rest by source and reason. Stored records (task, legacy session) that are corrupt, oversized
 * or another deployment's: a clear error for that task / session only (over the wire: -32603 for
 * `tasks/get`, `503` then `404` for a legacy HTTP session), the others unaffected.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { Redis as IORedis } from "ioredis"
import * as Cluster from "../src/Cluster.js"
import type * as JsonRpc from "../src/JsonRpc.js"
import * as McpClient from "../src/McpClient.js"
import * as McpServer from "../src/McpServer.js"
import * as Redis from "../src/Redis.js"
import * as Resource from "../src/Resource.js"
import * as Task from "../src/Task.js"
import * as Tool from "../src/Tool.js"
import * as InProcess from "../src/transport/InProcess.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import * as Processes from "./support/Cluster.js"
import { asString, errorOf, KEY, modern, resultOf } from "./support/Wire.js"

const WAIT = Duration.seconds(10)
const DEPLOYMENT = "library-prod"
const MAX_BYTES = 64 * 1024
const OVERSIZED = "x".repeat(MAX_BYTES + 1)
const EXT = { [KEY.clientCapabilities]: { extensions: { [Task.EXTENSION_ID]: {} } } }

const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo(WAIT))))

const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.timeoutFail(effect, { duration: WAIT, onTimeout: () => new Error(`timed out after ${Duration.format(WAIT)}`) })

/** `Redis.ignored` for one source and reason, now. */
const ignoredCount = (source: string, reason: string) =>
  Effect.map(
    Metric.value(Metric.tagged(Metric.tagged(Redis.ignored, "source", source), "reason", reason)),
    (state) => state.count
  )

/** The counts of `source` by reason; `since` subtracts an earlier reading. */
const countsOf = (source: string) =>
  Effect.all({
    oversized: ignoredCount(source, "oversized"),
    malformed: ignoredCount(source, "malformed"),
    foreign: ignoredCount(source, "foreign")
  })
type Counts = Effect.Effect.Success<ReturnType<typeof countsOf>>
const since = (before: Counts) => (after: Counts): Counts => ({
  oversized: after.oversized - before.oversized,
  malformed: after.malformed - before.malformed,
  foreign: after.foreign - before.foreign
})

/** Waits until the counts of `source` grew by `want` since `before`. */
const countsReach = (source: string, before: Counts, want: Counts) =>
  eventually(
    Effect.flatMap(countsOf(source), (now) => {
      const grown = since(before)(now)
      return grown.oversized === want.oversized && grown.malformed === want.malformed &&
          grown.foreign === want.foreign
        ? Effect.succeed(grown)
        : Effect.fail(new Error(`counts of ${source}: ${JSON.stringify(grown)}, want ${JSON.stringify(want)}`))
    })
  )

const readme = Resource.make({ uri: "file:///readme.txt", name: "readme", handler: () => "hi" })
const echo = Tool.fromJsonSchema({ name: "echo", handler: () => "echo" })

/** One instance of deployment `library-prod` under a fresh prefix, and a raw client on the same Redis. */
const setup = Effect.gen(function*() {
  const redis = yield* Processes.redisServer()
  const prefix = crypto.randomUUID()
  const started = yield* Deferred.make<void>()
  const interrupted = yield* Ref.make(0)
  const slow = Tool.fromJsonSchema({
    name: "slow",
    task: "optional",
    handler: () =>
      Deferred.succeed(started, undefined).pipe(
        Effect.zipRight(Effect.never),
        Effect.onInterrupt(() => Ref.update(interrupted, (n) => n + 1))
      )
  })
  const context = yield* Layer.build(
    Redis.layer({ url: redis.url, prefix, deployment: DEPLOYMENT, heartbeat: "100 millis", maxMessageBytes: MAX_BYTES })
  )
  const server = yield* McpServer.make({
    name: "redis-channels",
    version: "1.0.0",
    tools: [echo, slow],
    resources: [readme],
    listChanged: true,
    subscribe: true,
    tasks: { pollInterval: "20 millis" }
  }).pipe(Effect.provide(context))
  const raw = yield* Effect.acquireRelease(
    Effect.sync(() => new IORedis(redis.url, { maxRetriesPerRequest: 0 })),
    (c) => Effect.sync(() => c.disconnect())
  )
  const connection = yield* Effect.provide(Redis.RedisConnection, context)
  yield* eventually(Effect.flatMap(connection.healthy, (ok) => ok ? Effect.void : Effect.fail(new Error("not ready"))))
  // every channel subscribed by the instance
  yield* eventually(
    Effect.tryPromise(() => raw.pubsub("NUMSUB", `${prefix}:changes`, `${prefix}:tasks`, `${prefix}:sessions`)).pipe(
      Effect.flatMap((counts) =>
        [1, 3, 5].every((i) => Number(counts[i]) >= 1) ? Effect.void : Effect.fail(new Error("not subscribed"))
      )
    )
  )
  const publish = (channel: string, message: string) =>
    Effect.promise(() => raw.publish(`${prefix}:${channel}`, message))
  const set = (key: string, value: string) => Effect.promise(() => raw.set(`${prefix}:${key}`, value, "PX", 60_000))
  const getKey = (key: string) => Effect.promise(() => raw.get(`${prefix}:${key}`))
  return { server, context, publish, set, getKey, started, interrupted, url: redis.url, prefix }
})

/** Garbage of every kind for one channel: four malformed, one oversized. */
const garbage = (publish: (message: string) => Effect.Effect<unknown>, malformedOfOurs: unknown) =>
  Effect.forEach(
    ["{not json", "[1,2,3]", JSON.stringify({ origin: "x" }), JSON.stringify(malformedOfOurs), OVERSIZED],
    publish,
    { discard: true }
  )

const toolNames = (server: McpServer.McpServer) =>
  Effect.gen(function*() {
    const client = yield* McpClient.connect(yield* InProcess.client(server))
    return (yield* client.listAllTools).map((t) => t.name).sort()
  })

describe("Redis channels: what is not ours is ignored and counted", () => {
  it.scopedLive(
    "changes: garbage, oversized, another deployment's events are ignored; another instance's event is delivered",
    () =>
      Effect.gen(function*() {
        const s = yield* setup
        const before = yield* countsOf("changes")
        const namesBefore = yield* toolNames(s.server)
        const client = yield* McpClient.connect(yield* InProcess.client(s.server))
        const sub = yield* client.listen({ toolsListChanged: true, resourceSubscriptions: ["file:///readme.txt"] })
        const got = yield* Queue.unbounded<JsonRpc.Notification>()
        yield* sub.notifications.pipe(Stream.runForEach((n) => Queue.offer(got, n)), Effect.forkScoped)
        const send = (m: string) => s.publish("changes", m)
        yield* garbage(send, {
          deployment: DEPLOYMENT,
          origin: "other",
          event: { _tag: "ListChanged", kind: "everything" }
        })
        yield* send(
          JSON.stringify({ deployment: "staging", origin: "x", event: { _tag: "ListChanged", kind: "tools" } })
        )
        yield* send(JSON.stringify({
          deployment: "staging",
          origin: "x",
          event: { _tag: "ResourceUpdated", uri: "file:///readme.txt" }
        }))
        // the one message of ours: from another instance of the same deployment
        yield* send(JSON.stringify({
          deployment: DEPLOYMENT,
          origin: "another-instance",
          event: { _tag: "ResourceUpdated", uri: "file:///readme.txt" }
        }))
        const n = yield* bounded(Queue.take(got))
        expect(n.method).toBe("notifications/resources/updated")
        expect(n.params?.uri).toBe("file:///readme.txt")
        expect(yield* countsReach("changes", before, { oversized: 1, malformed: 4, foreign: 2 })).toEqual({
          oversized: 1,
          malformed: 4,
          foreign: 2
        })
        yield* Effect.sleep("300 millis")
        expect(yield* Queue.size(got)).toBe(0)
        // still serving, same definitions
        expect(yield* toolNames(s.server)).toEqual(namesBefore)
        expect(namesBefore).toEqual(["echo", "slow"])
        const result = yield* client.callTool("echo", {})
        expect(result.content).toEqual([{ type: "text", text: "echo" }])
      }),
    { timeout: 60_000 }
  )

  it.scopedLive(
    "maxMessageBytes counts UTF-8 bytes: 2-byte characters over the bound are dropped, under it delivered",
    () =>
      Effect.gen(function*() {
        const s = yield* setup
        const before = yield* countsOf("changes")
        const client = yield* McpClient.connect(yield* InProcess.client(s.server))
        const sub = yield* client.listen({ toolsListChanged: true })
        const got = yield* Queue.unbounded<JsonRpc.Notification>()
        yield* sub.notifications.pipe(Stream.runForEach((n) => Queue.offer(got, n)), Effect.forkScoped)
        const event = (pad: string) =>
          JSON.stringify({
            deployment: DEPLOYMENT,
            origin: "another-instance",
            event: { _tag: "ListChanged", kind: "tools" },
            pad
          })
        // 33,000 × "é" is 66,000 bytes (over 65,536) in 33,000 UTF-16 code units (under it)
        yield* s.publish("changes", event("\u00e9".repeat(33_000)))
        yield* s.publish("changes", event("\u00e9".repeat(30_000)))
        expect((yield* bounded(Queue.take(got))).method).toBe("notifications/tools/list_changed")
        yield* countsReach("changes", before, { oversized: 1, malformed: 0, foreign: 0 })
      }),
    { timeout: 60_000 }
  )

  it.scopedLive(
    "tasks: a signal of another deployment never cancels a task; one of another instance of ours does",
    () =>
      Effect.gen(function*() {
        const s = yield* setup
        const conn = yield* modern(s.server)
        const created = resultOf(yield* conn.call("tools/call", { name: "slow", arguments: {} }, { meta: EXT }))
        const taskId = asString(created.taskId)
        yield* bounded(Deferred.await(s.started))
        // the record says cancelled, as another instance's tasks/cancel would write it; no signal yet
        const store = yield* Effect.provide(Task.TaskStore, s.context)
        const now = Date.now()
        yield* store.modify(taskId, now, (r) => ({ ...r, status: "cancelled", lastUpdatedAt: now }))
        const before = yield* countsOf("tasks")
        const send = (m: string) => s.publish("tasks", m)
        yield* garbage(send, { deployment: DEPLOYMENT, origin: "other", taskId: 42 })
        yield* send(JSON.stringify({ deployment: "staging", origin: "x", taskId }))
        yield* countsReach("tasks", before, { oversized: 1, malformed: 4, foreign: 1 })
        yield* Effect.sleep("300 millis")
        expect(yield* Ref.get(s.interrupted)).toBe(0)
        // another instance of this deployment: the running handler is interrupted
        yield* send(JSON.stringify({ deployment: DEPLOYMENT, origin: "another-instance", taskId }))
        yield* eventually(
          Effect.flatMap(Ref.get(s.interrupted), (n) => n === 1 ? Effect.void : Effect.fail(new Error("running")))
        )
        // and the instance goes on serving
        const echoed = resultOf(yield* conn.call("tools/call", { name: "echo", arguments: {} }))
        expect(echoed.content).toEqual([{ type: "text", text: "echo" }])
      }),
    { timeout: 60_000 }
  )

  it.scopedLive(
    "sessions: only a signal of another instance of ours reaches the holder of the session",
    () =>
      Effect.gen(function*() {
        const s = yield* setup
        const store = yield* Effect.provide(Cluster.SessionStore, s.context)
        const signals = yield* store.signals("s-1")
        const before = yield* countsOf("sessions")
        const send = (m: string) => s.publish("sessions", m)
        const response = { jsonrpc: "2.0", id: "s2c-1", result: { action: "accept" } }
        yield* garbage(send, { deployment: DEPLOYMENT, origin: "other", id: "s-1", signal: { _tag: "Reboot" } })
        // a request is not something a session signals
        yield* send(JSON.stringify({
          deployment: DEPLOYMENT,
          origin: "other",
          id: "s-1",
          signal: { _tag: "Message", message: { jsonrpc: "2.0", id: 1, method: "tools/call" } }
        }))
        yield* send(JSON.stringify({ deployment: "staging", origin: "x", id: "s-1", signal: { _tag: "Closed" } }))
        yield* send(JSON.stringify({
          deployment: "staging",
          origin: "x",
          id: "s-1",
          signal: { _tag: "Message", message: response }
        }))
        yield* send(JSON.stringify({
          deployment: DEPLOYMENT,
          origin: "another-instance",
          id: "s-1",
          signal: { _tag: "Message", message: response }
        }))
        const signal = yield* bounded(Queue.take(signals))
        expect(signal).toEqual({ _tag: "Message", message: response })
        yield* countsReach("sessions", before, { oversized: 1, malformed: 5, foreign: 2 })
        yield* Effect.sleep("300 millis")
        expect(yield* Queue.size(signals)).toBe(0)
      }),
    { timeout: 60_000 }
  )
})

describe("Redis stored records: a corrupt one fails that task / session only", () => {
  it.scopedLive(
    "tasks/get: -32603 for a corrupt or oversized record, unknown for another deployment's; other tasks unaffected",
    () =>
      Effect.gen(function*() {
        const s = yield* setup
        const conn = yield* modern(s.server)
        const create = Effect.map(
          conn.call("tools/call", { name: "slow", arguments: {} }, { meta: EXT }),
          (reply) => asString(resultOf(reply).taskId)
        )
        const [corrupt, oversized, foreign, fine] = yield* Effect.all([create, create, create, create])
        const before = yield* countsOf("task-record")
        yield* s.set(`task:${corrupt}`, "{\"owner\": tru")
        yield* s.set(`task:${oversized}`, JSON.stringify({ deployment: DEPLOYMENT, pad: OVERSIZED }))
        const stored = yield* s.getKey(`task:${foreign}`)
        assert.isString(stored)
        yield* s.set(`task:${foreign}`, JSON.stringify({ ...JSON.parse(stored ?? "{}"), deployment: "staging" }))
        const get = (taskId: string) => conn.call("tasks/get", { taskId }, { meta: EXT })
        expect(errorOf(yield* get(corrupt)).code).toBe(-32603)
        expect(errorOf(yield* get(oversized)).code).toBe(-32603)
        expect(errorOf(yield* get(foreign)).code).toBe(-32602)
        expect(resultOf(yield* get(fine)).status).toBe("working")
        expect(since(before)(yield* countsOf("task-record"))).toEqual({ oversized: 1, malformed: 1, foreign: 1 })
        const echoed = resultOf(yield* conn.call("tools/call", { name: "echo", arguments: {} }))
        expect(echoed.content).toEqual([{ type: "text", text: "echo" }])
      }),
    { timeout: 60_000 }
  )

  it.scopedLive(
    "a legacy HTTP session whose record is corrupt: 503 naming it on another instance, then 404; another session goes on",
    () =>
      Effect.gen(function*() {
        const s = yield* setup
        const a = yield* StreamableHttp.serve(s.server, { port: 0 }).pipe(Effect.provide(s.context))
        // a second instance of the deployment, which does not hold the sessions
        const contextB = yield* Layer.build(
          Redis.layer({ url: s.url, prefix: s.prefix, deployment: DEPLOYMENT, maxMessageBytes: MAX_BYTES })
        )
        const serverB = yield* McpServer.make({ name: "redis-channels", version: "1.0.0", tools: [echo] })
        const b = yield* StreamableHttp.serve(serverB, { port: 0 }).pipe(Effect.provide(contextB))
        const post = (url: string, body: unknown, session?: string) =>
          Effect.promise(async () => {
            const response = await fetch(url, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                accept: "application/json, text/event-stream",
                ...(session === undefined ? {} : { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" })
              },
              body: JSON.stringify(body)
            })
            return {
              status: response.status,
              session: response.headers.get("mcp-session-id"),
              text: await response.text()
            }
          })
        const open = Effect.gen(function*() {
          const init = yield* post(a.url, {
            jsonrpc: "2.0",
            id: 0,
            method: "initialize",
            params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } }
          })
          expect(init.status).toBe(200)
          const id = init.session ?? ""
          expect(id).not.toBe("")
          expect((yield* post(a.url, { jsonrpc: "2.0", method: "notifications/initialized" }, id)).status).toBe(202)
          return id
        })
        const listTools = (url: string, session: string) =>
          post(url, { jsonrpc: "2.0", id: 1, method: "tools/list" }, session)
        const bad = yield* open
        const good = yield* open
        expect((yield* listTools(a.url, bad)).status).toBe(200)
        const before = yield* countsOf("session-record")
        yield* s.set(`session:${bad}`, "\u0000garbage")
        const refused = yield* listTools(b.url, bad)
        expect(refused.status).toBe(503)
        expect(refused.text).toContain(`the stored record of session ${bad} is unreadable`)
        // removed: the session is gone everywhere, its client starts a new one
        expect((yield* listTools(a.url, bad)).status).toBe(404)
        expect((yield* listTools(b.url, bad)).status).toBe(404)
        for (const url of [a.url, b.url]) {
          const other = yield* listTools(url, good)
          expect(other.status).toBe(200)
          expect(other.text).toContain("\"echo\"")
        }
        expect(since(before)(yield* countsOf("session-record"))).toEqual({ oversized: 0, malformed: 1, foreign: 0 })
      }),
    { timeout: 60_000 }
  )

  it.scopedLive(
    "SessionStore.load: oversized fails (and is removed), another deployment's reads as absent (and stays)",
    () =>
      Effect.gen(function*() {
        const s = yield* setup
        const store = yield* Effect.provide(Cluster.SessionStore, s.context)
        const ttl = Duration.minutes(1)
        const snapshot: Cluster.SessionSnapshot = {
          protocolVersion: "2025-11-25",
          clientInfo: { name: "t", version: "1" },
          clientCapabilities: {},
          initialized: true,
          logLevel: "info",
          subscriptions: ["file:///readme.txt"]
        }
        yield* store.save("mine", snapshot, ttl)
        const mine = yield* s.getKey("session:mine")
        assert.isString(mine)
        yield* s.set("session:theirs", JSON.stringify({ ...JSON.parse(mine ?? "{}"), deployment: "staging" }))
        yield* s.set("session:huge", JSON.stringify({ deployment: DEPLOYMENT, snapshot, pad: OVERSIZED }))
        const before = yield* countsOf("session-record")
        const huge = yield* Effect.flip(store.load("huge", ttl))
        expect(huge._tag).toBe("SessionStoreError")
        expect(huge.message).toContain("session huge is unreadable")
        expect(yield* s.getKey("session:huge")).toBeNull()
        expect((yield* store.load("theirs", ttl))._tag).toBe("None")
        expect(yield* s.getKey("session:theirs")).not.toBeNull()
        const loaded = yield* store.load("mine", ttl)
        assert.isTrue(loaded._tag === "Some")
        if (loaded._tag === "Some") expect(loaded.value).toEqual(snapshot)
        expect(since(before)(yield* countsOf("session-record"))).toEqual({ oversized: 1, malformed: 0, foreign: 1 })
      }),
    { timeout: 60_000 }
  )
})
