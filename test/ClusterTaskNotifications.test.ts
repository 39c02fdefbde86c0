/**
 * Task status notifications across instances (presa-mcp/Redis): two instances of
 * `examples/cluster.ts` as child processes sharing a real `redis-server`, each client talking to
 * one instance over Streamable HTTP.
 *
 * - a task created on A, listened for on B: B acknowledges the id (it reads the shared store),
 *   sends its current state at once and its terminal state when A finishes it (A publishes a
 *   `TaskStatus` change event; B re-reads the record);
 * - A SIGKILLed while running the task: nothing is published, yet B's listener gets `failed`
 *   ("The server instance running the task stopped") within the documented bound: A's heartbeat
 *   key lives 5 heartbeats (5 s), then B re-reads the task within one poll interval (200 ms);
 * - an event of a variant this build does not know (what an older build sees of `TaskStatus`),
 *   published on the change channel, is ignored: the instance keeps serving and its listener
 *   keeps working.
 *
 * Every wait is bounded; every process is killed when its test's Scope closes.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { Redis as IORedis } from "ioredis"
import * as McpClient from "../src/McpClient.js"
import * as Task from "../src/Task.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import * as Cluster from "./support/Cluster.js"

const WAIT = Duration.seconds(20)

const connect = (url: string) =>
  Effect.flatMap(StreamableHttp.client({ url }), (transport) => McpClient.connect(transport, { tasks: true }))

const urlOf = (i: Cluster.Instance) => `http://127.0.0.1:${i.port}/mcp`

/** The task statuses of a subscription, in a queue. */
const statuses = (sub: McpClient.Subscription) =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<Task.DetailedTask>()
    yield* sub.notifications.pipe(
      Stream.filterMap(Task.fromNotification),
      Stream.runForEach((t) => Queue.offer(queue, t)),
      Effect.forkScoped
    )
    return queue
  })

const take = (queue: Queue.Dequeue<Task.DetailedTask>, what: string) =>
  Queue.take(queue).pipe(
    Effect.timeoutFail({ duration: WAIT, onTimeout: () => new Error(`no ${what} within ${Duration.format(WAIT)}`) })
  )

const twoInstances = Effect.gen(function*() {
  const redis = yield* Cluster.redisServer()
  const prefix = `presa-task-notify-${crypto.randomUUID()}`
  const [a, b] = yield* Effect.all(
    [Cluster.instance({ redisUrl: redis.url, prefix }), Cluster.instance({ redisUrl: redis.url, prefix })],
    { concurrency: "unbounded" }
  )
  return { redis, prefix, a, b }
})

describe("notifications/tasks across instances", () => {
  it.scopedLive(
    "a task on A, a listener on B: the current state after the ack, then the terminal one",
    () =>
      Effect.gen(function*() {
        const { a, b } = yield* twoInstances
        const onA = yield* connect(urlOf(a))
        const onB = yield* connect(urlOf(b))
        const created = yield* onA.tasks.callTool("slow", { seconds: 1 })
        if (!Task.isCreateTaskResult(created)) return assert.fail("expected a task")
        const sub = yield* onB.listen({ taskIds: [created.taskId] })
        expect(sub.acknowledged).toEqual({ taskIds: [created.taskId] })
        const queue = yield* statuses(sub)
        assert.strictEqual((yield* take(queue, "the current state")).status, "working")
        const done = yield* take(queue, "the terminal state")
        assert.strictEqual(done.status, "completed")
        expect(done.result?.content).toEqual([{ type: "text", text: "slept" }])
        // awaitResult on B ends on the notification of a task that ran on A
        const again = yield* onA.tasks.callTool("slow", { seconds: 1 })
        if (!Task.isCreateTaskResult(again)) return assert.fail("expected a task")
        const result = yield* onB.tasks.awaitResult(again.taskId).pipe(Effect.timeout(WAIT))
        expect(result.content).toEqual([{ type: "text", text: "slept" }])
      }),
    { timeout: 90_000 }
  )

  it.scopedLive(
    "A SIGKILLed while running the task: B's listener gets failed within 5 heartbeats plus a poll",
    () =>
      Effect.gen(function*() {
        const { a, b } = yield* twoInstances
        const onA = yield* connect(urlOf(a))
        const onB = yield* connect(urlOf(b))
        const created = yield* onA.tasks.callTool("slow", { seconds: 30 })
        if (!Task.isCreateTaskResult(created)) return assert.fail("expected a task")
        const sub = yield* onB.listen({ taskIds: [created.taskId] })
        const queue = yield* statuses(sub)
        assert.strictEqual((yield* take(queue, "the current state")).status, "working")
        yield* a.kill("SIGKILL")
        const killedAt = Date.now()
        const failed = yield* take(queue, "failed")
        // the documented bound: the heartbeat key lives 5 heartbeats (5 s), then one poll interval (200 ms)
        expect(Date.now() - killedAt).toBeLessThan(5_000 + 2_000)
        assert.strictEqual(failed.status, "failed")
        assert.strictEqual(failed.statusMessage, "The server instance running the task stopped")
        // what tasks/get gives (without the Result envelope's own members)
        const { _meta, resultType: _resultType, ...read } = yield* onB.tasks.get(created.taskId)
        expect(failed).toEqual(read)
        // terminal: nothing more for that id
        yield* Effect.sleep("1 second")
        assert.strictEqual(yield* Queue.size(queue), 0)
      }),
    { timeout: 90_000 }
  )

  it.scopedLive(
    "a change event of an unknown variant is ignored: the instance serves and notifies on",
    () =>
      Effect.gen(function*() {
        const { a, b, prefix, redis } = yield* twoInstances
        const raw = yield* Effect.acquireRelease(
          Effect.sync(() => new IORedis(redis.url, { lazyConnect: false })),
          (c) => Effect.promise(() => c.quit().catch(() => "closed"))
        )
        const onA = yield* connect(urlOf(a))
        const onB = yield* connect(urlOf(b))
        const created = yield* onA.tasks.callTool("slow", { seconds: 1 })
        if (!Task.isCreateTaskResult(created)) return assert.fail("expected a task")
        const queue = yield* statuses(yield* onB.listen({ taskIds: [created.taskId] }))
        assert.strictEqual((yield* take(queue, "the current state")).status, "working")
        // what an older build receives of a TaskStatus: a variant its decoder does not know
        yield* Effect.promise(() =>
          raw.publish(
            `${prefix}:changes`,
            JSON.stringify({ deployment: prefix, origin: "newer-build", event: { _tag: "SomethingNew", id: "x" } })
          )
        )
        assert.strictEqual((yield* take(queue, "the terminal state")).status, "completed")
        assert.isTrue((yield* onB.listAllTools).some((t) => t.name === "slow"))
        // it was read and ignored (logged once as a warning), not lost before reaching B
        yield* Effect.suspend(() =>
          b.output().includes("Redis: ignored a value") ? Effect.void : Effect.fail(new Error("not logged yet"))
        ).pipe(Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo(WAIT))))
      }),
    { timeout: 90_000 }
  )
})
