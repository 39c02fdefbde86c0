/**
 * Chaos for tasks (presa-mcp/Redis) with a real `redis-server`; nothing a task did while Redis
 * was away is lost:
 *
 * - two instances of `examples/cluster.ts` as child processes; Redis SIGKILLed while a task runs on
 *   A and started again (empty: no persistence) on its port. The task completes during the
 *   outage: A's own `tasks/get` answers `completed` from what A keeps, B's answers -32603 without
 *   Redis internals; after the restart B reads `completed` with the result within a bound, and
 *   B's listener, kept open through the outage, gets `completed` once;
 * - in process (two servers, each with its own `Redis.layer`): a question (`input_required`) and a
 *   failure during the outage reach B after the restart, B answers the question with
 *   `tasks/update` and the task, running on A, completes; meanwhile an `optional` tool runs in the
 *   request and a `required` one is refused with -32603;
 * - in process: Redis frozen (SIGSTOP: connections open, commands time out) longer than the
 *   heartbeat keys live while a task ends: B never reads it other than `working` or `completed`.
 *
 * Every wait is bounded; every process is killed when its test's Scope closes.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { Redis as IORedis } from "ioredis"
import * as Input from "../src/Input.js"
import * as JsonRpc from "../src/JsonRpc.js"
import * as McpClient from "../src/McpClient.js"
import * as McpServer from "../src/McpServer.js"
import * as Redis from "../src/Redis.js"
import * as Task from "../src/Task.js"
import * as Tool from "../src/Tool.js"
import * as InProcess from "../src/transport/InProcess.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import * as Cluster from "./support/Cluster.js"

const WAIT = Duration.seconds(20)

/** After Redis is back: the client reconnects within 1 s, then the kept change is tried within 1 s. */
const RECOVERY_MS = 5_000

const connect = (url: string) =>
  Effect.flatMap(StreamableHttp.client({ url }), (transport) => McpClient.connect(transport, { tasks: true }))

const urlOf = (i: Cluster.Instance) => `http://127.0.0.1:${i.port}/mcp`

/** Retries `effect` every 100 ms while it fails, for at most WAIT. */
const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo(WAIT))))

/** Waits until every instance's log has `text` after its last "Redis unavailable" (or at all). */
const logged = (instances: ReadonlyArray<Cluster.Instance>, text: string, afterOutage = false) =>
  eventually(Effect.forEach(instances, (i) => {
    const out = afterOutage ? (i.output().split("Redis unavailable").at(-1) ?? "") : i.output()
    return out.includes(text) ? Effect.void : Effect.fail(new Error(`"${text}" not logged yet`))
  }))

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

const status = (client: McpClient.McpClient, taskId: string, want: Task.Status) =>
  client.tasks.get(taskId).pipe(
    Effect.filterOrFail((t) => t.status === want, (t) => new Error(`${t.status}, not ${want}`))
  )

const twoInstances = Effect.gen(function*() {
  const redis = yield* Cluster.redisServer()
  const prefix = `presa-chaos-tasks-${crypto.randomUUID()}`
  const [a, b] = yield* Effect.all(
    [Cluster.instance({ redisUrl: redis.url, prefix }), Cluster.instance({ redisUrl: redis.url, prefix })],
    { concurrency: "unbounded" }
  )
  return { redis, a, b, onA: yield* connect(urlOf(a)), onB: yield* connect(urlOf(b)) }
})

const NAME_SCHEMA = { type: "object", properties: { name: { type: "string" } }, required: ["name"] } as const

/**
 * A server with its own `Redis.layer` (heartbeat 100 ms): `ask` waits for `gate`, then asks a
 * name; `boom` waits for `gate`, then fails with -32603 "boom"; `wait` waits for `gate`;
 * `quick` answers at once (`optional`; the others are `required`).
 */
const inProcess = (
  url: string,
  prefix: string,
  gate: Deferred.Deferred<void>,
  heartbeat: Duration.DurationInput = "100 millis"
) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      Redis.layer({ url, prefix, heartbeat, commandTimeout: "300 millis" })
    )
    const server = yield* McpServer.make({
      name: "chaos-tasks",
      version: "1.0.0",
      tasks: { pollInterval: "100 millis" },
      tools: [
        Tool.fromJsonSchema({
          name: "ask",
          task: "required",
          handler: () =>
            Effect.gen(function*() {
              yield* Deferred.await(gate)
              const r = yield* Input.elicit("Name?", NAME_SCHEMA)
              return `hello ${String(r.content?.name)}`
            })
        }),
        Tool.fromJsonSchema({
          name: "boom",
          task: "required",
          handler: () => Effect.zipRight(Deferred.await(gate), Effect.fail(JsonRpc.McpError.internalError("boom")))
        }),
        Tool.fromJsonSchema({ name: "quick", task: "optional", handler: () => "quick" }),
        Tool.fromJsonSchema({
          name: "wait",
          task: "required",
          handler: () => Effect.as(Deferred.await(gate), "waited")
        })
      ]
    }).pipe(Effect.provide(context))
    return { server, connection: yield* Effect.provide(Redis.RedisConnection, context) }
  })

const healthy = (connection: Redis.RedisConnectionShape, want: boolean) =>
  eventually(Effect.flatMap(connection.healthy, (ok) => ok === want ? Effect.void : Effect.fail(new Error("not yet"))))

describe("chaos: tasks across a Redis outage", () => {
  it.scopedLive(
    "a task completes while Redis is away: B reads completed with its result after Redis is back, and its listener hears it",
    () =>
      Effect.gen(function*() {
        const { a, b, onA, onB, redis } = yield* twoInstances
        const created = yield* onA.tasks.callTool("slow", { seconds: 3 })
        if (!Task.isCreateTaskResult(created)) return assert.fail("expected a task")
        const { taskId } = created
        const sub = yield* onB.listen({ taskIds: [taskId] })
        expect(sub.acknowledged).toEqual({ taskIds: [taskId] })
        const queue = yield* statuses(sub)
        assert.strictEqual((yield* take(queue, "the current state")).status, "working")

        yield* redis.kill("SIGKILL")
        yield* logged([a, b], "Redis unavailable")
        // the task ends during the outage: A answers from what it keeps
        const onAOutage = yield* eventually(status(onA, taskId, "completed"))
        expect(onAOutage.result?.content).toEqual([{ type: "text", text: "slept" }])
        expect(a.output()).toContain("the task's change is kept and written when it is back")
        // B cannot read the store: -32603, nothing of Redis in the message
        const onBOutage = yield* Effect.flip(onB.tasks.get(taskId))
        expect(JSON.stringify(onBOutage)).toContain("-32603")
        expect(JSON.stringify(onBOutage)).toContain("Task store unavailable")
        expect(JSON.stringify(onBOutage)).not.toContain("ECONNREFUSED")
        assert.strictEqual(yield* Queue.size(queue), 0)

        // Redis back, empty (no persistence): A writes the task again, with its end
        yield* Cluster.redisServer(redis.port)
        const back = Date.now()
        const done = yield* eventually(status(onB, taskId, "completed"))
        expect(Date.now() - back).toBeLessThan(RECOVERY_MS)
        expect(done.result?.content).toEqual([{ type: "text", text: "slept" }])
        // the listener kept open on B through the outage gets the end, once
        const heard = yield* take(queue, "completed")
        assert.strictEqual(heard.status, "completed")
        expect(heard.result?.content).toEqual([{ type: "text", text: "slept" }])
        yield* Effect.sleep("1 second")
        assert.strictEqual(yield* Queue.size(queue), 0)
        // and it stays so on both instances
        assert.strictEqual((yield* onA.tasks.get(taskId)).status, "completed")
        assert.strictEqual((yield* onB.tasks.get(taskId)).status, "completed")
        yield* logged([a], "Task change written after the task store came back")
      }),
    { timeout: 120_000 }
  )

  it.scopedLive(
    "in process: a question and a failure while Redis is away reach the other instance after it is back, in order",
    () =>
      Effect.gen(function*() {
        const redis = yield* Cluster.redisServer()
        const prefix = `presa-chaos-tasks-${crypto.randomUUID()}`
        const gate = yield* Deferred.make<void>()
        const a = yield* inProcess(redis.url, prefix, gate)
        const b = yield* inProcess(redis.url, prefix, gate)
        // the clients declare elicitation; the answer is given with tasks/update below
        const options: McpClient.Options = {
          tasks: true,
          onElicit: () => Effect.succeed({ action: "decline" as const })
        }
        const onA = yield* McpClient.connect(yield* InProcess.client(a.server), options)
        const onB = yield* McpClient.connect(yield* InProcess.client(b.server), options)
        const ask = yield* onA.tasks.callTool("ask")
        const boom = yield* onA.tasks.callTool("boom")
        if (!Task.isCreateTaskResult(ask) || !Task.isCreateTaskResult(boom)) return assert.fail("expected tasks")
        assert.strictEqual((yield* onB.tasks.get(ask.taskId)).status, "working")

        yield* redis.kill("SIGKILL")
        yield* Effect.forEach([a, b], (i) => healthy(i.connection, false))
        // no store: an optional tool runs in the request, a required one is refused with -32603
        assert.isFalse(Task.isCreateTaskResult(yield* onA.tasks.callTool("quick")))
        const refused = yield* Effect.flip(onA.tasks.callTool("ask"))
        expect(JSON.stringify(refused)).toContain("Task store unavailable")
        // the tasks move on during the outage: A answers from what it keeps
        yield* Deferred.succeed(gate, undefined)
        const asked = yield* eventually(status(onA, ask.taskId, "input_required"))
        const failed = yield* eventually(status(onA, boom.taskId, "failed"))
        expect(failed.error).toEqual({ code: -32603, message: "boom" })
        const [key] = Object.keys(asked.inputRequests ?? {})
        if (key === undefined) return assert.fail("expected a question")

        yield* Cluster.redisServer(redis.port)
        const back = Date.now()
        const onBAsked = yield* eventually(status(onB, ask.taskId, "input_required"))
        const onBFailed = yield* eventually(status(onB, boom.taskId, "failed"))
        expect(Date.now() - back).toBeLessThan(RECOVERY_MS)
        expect(onBAsked.inputRequests).toEqual(asked.inputRequests)
        expect(onBFailed.error).toEqual({ code: -32603, message: "boom" })
        // answered on B: the task, running on A, completes with the answer
        yield* onB.tasks.update(ask.taskId, { [key]: { action: "accept", content: { name: "ada" } } })
        const done = yield* eventually(status(onB, ask.taskId, "completed"))
        expect(done.result?.content).toEqual([{ type: "text", text: "hello ada" }])
      }),
    { timeout: 120_000 }
  )
  it.scopedLive(
    "in process: Redis frozen past the heartbeat keys' life while a task ends: never read as stopped, then completed",
    () =>
      Effect.gen(function*() {
        const redis = yield* Cluster.redisServer()
        const prefix = `presa-chaos-tasks-${crypto.randomUUID()}`
        const gate = yield* Deferred.make<void>()
        const a = yield* inProcess(redis.url, prefix, gate)
        const b = yield* inProcess(redis.url, prefix, gate)
        const onA = yield* McpClient.connect(yield* InProcess.client(a.server), { tasks: true })
        const onB = yield* McpClient.connect(yield* InProcess.client(b.server), { tasks: true })
        const created = yield* onA.tasks.callTool("wait")
        if (!Task.isCreateTaskResult(created)) return assert.fail("expected a task")
        const { taskId } = created
        assert.strictEqual((yield* onB.tasks.get(taskId)).status, "working")
        // frozen (SIGSTOP): connections stay open, commands time out; the heartbeat keys (5 × 100 ms) lapse
        yield* Effect.acquireRelease(
          Effect.sync(() => redis.child.kill("SIGSTOP")),
          () => Effect.sync(() => redis.child.kill("SIGCONT"))
        )
        yield* Effect.sleep("1500 millis")
        yield* Deferred.succeed(gate, undefined)
        yield* eventually(status(onA, taskId, "completed"))
        redis.child.kill("SIGCONT")
        const back = Date.now()
        // read on B from the moment Redis answers again: working (or unavailable) until A's end lands
        const seen: Array<string> = []
        const done = yield* onB.tasks.get(taskId).pipe(
          Effect.tap((t) => Effect.sync(() => seen.push(t.status))),
          Effect.filterOrFail((t) => t.status !== "working", () => new Error("still working")),
          Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo(WAIT)))
        )
        expect(Date.now() - back).toBeLessThan(RECOVERY_MS)
        assert.strictEqual(done.status, "completed")
        expect(done.result?.content).toEqual([{ type: "text", text: "waited" }])
        expect(seen.filter((s) => s !== "working" && s !== "completed")).toEqual([])
      }),
    { timeout: 120_000 }
  )
  it.scopedLive(
    "in process: right after an outage an instance does not take a lapsed heartbeat key for a stopped instance",
    () =>
      Effect.gen(function*() {
        const redis = yield* Cluster.redisServer()
        const prefix = `presa-chaos-tasks-${crypto.randomUUID()}`
        const gate = yield* Deferred.make<void>()
        // heartbeat 300 ms: a key lives 1.5 s
        const a = yield* inProcess(redis.url, prefix, gate, "300 millis")
        const b = yield* inProcess(redis.url, prefix, gate, "300 millis")
        const onA = yield* McpClient.connect(yield* InProcess.client(a.server), { tasks: true })
        const onB = yield* McpClient.connect(yield* InProcess.client(b.server), { tasks: true })
        const created = yield* onA.tasks.callTool("wait")
        if (!Task.isCreateTaskResult(created)) return assert.fail("expected a task")
        const key = `${prefix}:task:${created.taskId}`
        const raw = (url: string) =>
          Effect.acquireRelease(
            Effect.sync(() => new IORedis(url, { lazyConnect: false })),
            (c) => Effect.promise(() => c.quit().catch(() => "closed"))
          )
        // the record as a Redis that keeps its data would give it back, owned by an instance whose
        // heartbeat key lapsed during the outage (and that has not reconnected yet)
        const stored = yield* Effect.flatMap(raw(redis.url), (c) => Effect.promise(() => c.get(key)))
        if (stored === null) return assert.fail("no stored record")
        const ghost = JSON.stringify({ ...JSON.parse(stored), owner: "an-instance-not-back-yet" })

        yield* redis.kill("SIGKILL")
        yield* healthy(b.connection, false)
        yield* Cluster.redisServer(redis.port)
        const c = yield* raw(redis.url)
        yield* Effect.promise(() => c.set(key, ghost, "PX", 60_000))
        yield* healthy(b.connection, true)
        const ready = Date.now()
        // just reconnected: B does not judge the owner yet
        const early = yield* onB.tasks.get(created.taskId)
        expect(Date.now() - ready).toBeLessThan(1_500)
        assert.strictEqual(early.status, "working")
        // once B has reached Redis for five heartbeats, the owner's missing key means it stopped
        const failed = yield* eventually(status(onB, created.taskId, "failed"))
        expect(Date.now() - ready).toBeGreaterThanOrEqual(1_000)
        assert.strictEqual(failed.statusMessage, "The server instance running the task stopped")
      }),
    { timeout: 120_000 }
  )
})
