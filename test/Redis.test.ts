/**
 * presa-mcp/Redis in one process: two servers, each with its own `Redis.layer` (its own
 * connections, as two instances would have), over one real `redis-server`, driven through
 * in-process clients. The cluster tests (test/Cluster.test.ts) cover the same over HTTP with
 * separate processes.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Cluster from "../src/Cluster.js"
import type * as JsonRpc from "../src/JsonRpc.js"
import * as McpClient from "../src/McpClient.js"
import * as McpServer from "../src/McpServer.js"
import * as Redis from "../src/Redis.js"
import * as Resource from "../src/Resource.js"
import * as Task from "../src/Task.js"
import * as Tool from "../src/Tool.js"
import * as InProcess from "../src/transport/InProcess.js"
import * as Processes from "./support/Cluster.js"

const WAIT = Duration.seconds(10)

const readme = Resource.make({ uri: "file:///readme.txt", name: "readme", handler: () => "hi" })
const echo = Tool.fromJsonSchema({ name: "echo", handler: () => "echo" })

/** A server built with its own Redis layer (kept for the test's Scope). */
const instance = (url: string, prefix: string) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(Redis.layer({ url, prefix, heartbeat: "100 millis" }))
    const server = yield* McpServer.make({
      name: "redis-test",
      version: "1.0.0",
      tools: [echo],
      resources: [readme],
      listChanged: true,
      subscribe: true,
      tasks: {}
    }).pipe(Effect.provide(context))
    return { server, context }
  })

const listenOn = (server: McpServer.McpServer) =>
  Effect.gen(function*() {
    const client = yield* McpClient.connect(yield* InProcess.client(server))
    const sub = yield* client.listen({ toolsListChanged: true, resourceSubscriptions: ["file:///readme.txt"] })
    const got = yield* Queue.unbounded<JsonRpc.Notification>()
    yield* sub.notifications.pipe(Stream.runForEach((n) => Queue.offer(got, n)), Effect.forkScoped)
    return got
  })

const next = (queue: Queue.Dequeue<JsonRpc.Notification>) =>
  Queue.take(queue).pipe(
    Effect.timeoutFail({
      duration: WAIT,
      onTimeout: () => new Error(`no notification within ${Duration.format(WAIT)}`)
    })
  )

const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo(WAIT))))

describe("Redis change bus", () => {
  it.scopedLive(
    "an event published on one instance reaches the other's listen stream, once",
    () =>
      Effect.gen(function*() {
        const redis = yield* Processes.redisServer()
        const prefix = crypto.randomUUID()
        const a = yield* instance(redis.url, prefix)
        const b = yield* instance(redis.url, prefix)
        const other = yield* instance(redis.url, `${prefix}-other`)
        yield* Effect.forEach([a, b, other], (i) =>
          eventually(Effect.flatMap(Effect.provide(Redis.RedisConnection, i.context), (c) =>
            Effect.flatMap(c.healthy, (ok) =>
              ok ? Effect.void : Effect.fail(new Error("not ready"))))))
        const onA = yield* listenOn(a.server)
        const onOther = yield* listenOn(other.server)
        yield* McpServer.resourceUpdated(b.server, "file:///readme.txt")
        const n = yield* next(onA)
        expect(n.method).toBe("notifications/resources/updated")
        expect(n.params?.uri).toBe("file:///readme.txt")
        // a local change still reaches the local stream, once
        yield* McpServer.addTool(
          a.server,
          Tool.fromJsonSchema({
            name: "more",
            handler: () =>
              "more"
          })
        )
        const m = yield* next(onA)
        expect(m.method).toBe("notifications/tools/list_changed")
        // nothing else arrived (no echo of a's own event through Redis); another prefix hears nothing
        yield* Effect.sleep("300 millis")
        expect(yield* Queue.size(onA)).toBe(0)
        expect(yield* Queue.size(onOther)).toBe(0)
      }),
    { timeout: 60_000 }
  )

  it.scopedLive(
    "Redis down: local events still flow, health reads false and is logged; back: true",
    () =>
      Effect.gen(function*() {
        const redis = yield* Processes.redisServer()
        const a = yield* instance(redis.url, crypto.randomUUID())
        const connection = yield* Effect.provide(Redis.RedisConnection, a.context)
        const waitHealth = (want: boolean) =>
          eventually(
            Effect.flatMap(connection.healthy, (ok) => ok === want ? Effect.void : Effect.fail(new Error("no")))
          )
        yield* waitHealth(true)
        const onA = yield* listenOn(a.server)
        yield* redis.kill("SIGKILL")
        yield* waitHealth(false)
        const started = Date.now()
        yield* McpServer.resourceUpdated(a.server, "file:///readme.txt")
        expect(Date.now() - started).toBeLessThan(2_000)
        expect((yield* next(onA)).method).toBe("notifications/resources/updated")
        // task requests fail instead of waiting
        const store = yield* Effect.provide(Task.TaskStore, a.context)
        const exit = yield* Effect.exit(store.get("nope", Date.now()))
        assert.isTrue(exit._tag === "Failure")
        // back: healthy again, and listeners are told every list may have changed
        yield* Processes.redisServer(redis.port)
        yield* waitHealth(true)
        expect((yield* next(onA)).method).toBe("notifications/tools/list_changed")
      }),
    { timeout: 60_000 }
  )
})

describe("Redis seams stay optional", () => {
  it.effect("without a ChangeBus in the context the server keeps its own in-memory bus", () =>
    Effect.gen(function*() {
      const option = yield* Effect.serviceOption(Cluster.ChangeBus)
      assert.isTrue(option._tag === "None")
    }))
})
