/**
 * Chaos (presa-mcp/Redis): instances of `examples/cluster.ts` as child processes with a real
 * `redis-server` (and nginx where a balancer is needed), each test asserting that nothing is lost:
 *
 * - Redis stopped (SIGKILL) and restarted while listeners are open on every instance: a tool
 *   learned on one instance during the outage reaches the other (its listener, refetching on
 *   `notifications/tools/list_changed`, sees it), and a resource update published during the
 *   outage reaches the other instance's listener from the change bus's outbox;
 * - an instance SIGKILLed while running a task: the task reads `failed` with a clear message within
 *   the documented bound (5 heartbeats of 1 s, plus one poll), answered by another instance;
 * - each instance restarted in turn while a client listens through nginx: the listen is
 *   re-established, reports the gap (`_meta[RESUBSCRIBED]`), and hears what comes after.
 *
 * Every wait is bounded; every process is killed when its test's Scope closes.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import type * as JsonRpc from "../src/JsonRpc.js"
import * as McpClient from "../src/McpClient.js"
import * as Task from "../src/Task.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import * as Cluster from "./support/Cluster.js"

const WAIT = Duration.seconds(20)

const connect = (url: string, options: McpClient.Options = {}) =>
  Effect.flatMap(StreamableHttp.client({ url }), (transport) => McpClient.connect(transport, options))

const urlOf = (i: Cluster.Instance) => `http://127.0.0.1:${i.port}/mcp`

const textOf = (result: { readonly content: ReadonlyArray<unknown> }): string => {
  const [first] = result.content
  return typeof first === "object" && first !== null && "text" in first && typeof first.text === "string"
    ? first.text
    : ""
}

/** Retries `effect` every 200 ms while it fails, for at most WAIT. */
const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.upTo(WAIT))))

/** Every notification of a listen, in a queue (the stream runs in the test's Scope). */
const collect = (sub: McpClient.Subscription) =>
  Effect.gen(function*() {
    const got = yield* Queue.unbounded<JsonRpc.Notification>()
    yield* sub.notifications.pipe(Stream.runForEach((n) => Queue.offer(got, n)), Effect.forkScoped)
    return got
  })

/** The next notification matching `p` (others are skipped), within WAIT. */
const next = (
  queue: Queue.Dequeue<JsonRpc.Notification>,
  p: (n: JsonRpc.Notification) => boolean,
  what: string
) =>
  Queue.take(queue).pipe(
    Effect.repeat({ until: p }),
    Effect.timeoutFail({ duration: WAIT, onTimeout: () => new Error(`no ${what} within ${Duration.format(WAIT)}`) })
  )

const isMethod = (method: string) => (n: JsonRpc.Notification) => n.method === method

const resubscribed = (n: JsonRpc.Notification): boolean => {
  const meta = n.params?._meta
  return typeof meta === "object" && meta !== null && Reflect.get(meta, McpClient.RESUBSCRIBED) === true
}

/** Waits until every instance's log has `text` after its last "Redis unavailable" (or at all). */
const logged = (instances: ReadonlyArray<Cluster.Instance>, text: string, afterOutage = false) =>
  eventually(Effect.forEach(instances, (i) => {
    const out = afterOutage ? (i.output().split("Redis unavailable").at(-1) ?? "") : i.output()
    return out.includes(text) ? Effect.void : Effect.fail(new Error(`"${text}" not logged yet`))
  }))

describe("chaos", () => {
  it.scopedLive(
    "Redis stopped and restarted under open listeners: a tool learned meanwhile reaches every instance",
    () =>
      Effect.gen(function*() {
        const redis = yield* Cluster.redisServer()
        const prefix = `presa-chaos-${crypto.randomUUID()}`
        const [a, b] = yield* Effect.all(
          [Cluster.instance({ redisUrl: redis.url, prefix }), Cluster.instance({ redisUrl: redis.url, prefix })],
          { concurrency: "unbounded" }
        )
        const onA = yield* connect(urlOf(a))
        const onB = yield* connect(urlOf(b))
        const filter = { toolsListChanged: true, resourceSubscriptions: ["file:///readme.txt"] }
        const gotA = yield* collect(yield* onA.listen(filter))
        const gotB = yield* collect(yield* onB.listen(filter))
        // the bus works before the outage: a touch on B reaches A's listener
        yield* onB.callTool("touch")
        yield* next(gotA, isMethod("notifications/resources/updated"), "resources/updated before the outage")

        yield* redis.kill("SIGKILL")
        yield* logged([a, b], "Redis unavailable")
        const name = `learned_${crypto.randomUUID().slice(0, 8)}`
        assert.strictEqual(textOf(yield* onB.callTool("learn", { name })), `learned ${name}`)
        assert.strictEqual(textOf(yield* onB.callTool("touch")), "touched file:///readme.txt")
        // B's own listener hears both at once; A has not got the tool (Redis is away)
        yield* next(gotB, isMethod("notifications/tools/list_changed"), "tools/list_changed on B")
        const namesOnA = (yield* onA.listAllTools).map((t) => t.name)
        expect(namesOnA).not.toContain(name)
        yield* Queue.takeAll(gotA)

        const again = yield* Cluster.redisServer(redis.port)
        assert.strictEqual(again.port, redis.port)
        yield* logged([a, b], "Redis connection ready", true)
        // A's listener refetches on each tools/list_changed, as a consumer does: it ends up seeing the
        // learned tool, and it gets the update published during the outage from B's outbox (the URI
        // itself, not only "everything may have changed")
        let sawTool = false
        let sawUpdate = false
        for (let i = 0; i < 50 && !(sawTool && sawUpdate); i++) {
          const n = yield* next(
            gotA,
            () => true,
            `the learned tool and the update on A (tool ${sawTool}, update ${sawUpdate})`
          )
          if (n.method === "notifications/resources/updated" && n.params?.uri === "file:///readme.txt") {
            sawUpdate = true
          }
          if (n.method === "notifications/tools/list_changed") {
            sawTool = (yield* onA.listAllTools).some((t) => t.name === name)
          }
        }
        assert.isTrue(sawTool && sawUpdate)
        assert.strictEqual(textOf(yield* onA.callTool(name)), `I am ${name}`)
        // and the learned set in Redis holds it: an instance started now has it too
        const late = yield* Cluster.instance({ redisUrl: redis.url, prefix })
        const onLate = yield* connect(urlOf(late))
        yield* eventually(
          onLate.listAllTools.pipe(
            Effect.filterOrFail(
              (tools) => tools.some((t) => t.name === name),
              () => new Error("not on the new instance")
            )
          )
        )
        expect(b.output()).toContain("learn: not shared yet")
      }),
    { timeout: 120_000 }
  )

  it.scopedLive(
    "an instance SIGKILLed while running a task: another instance answers tasks/get with failed",
    () =>
      Effect.gen(function*() {
        const redis = yield* Cluster.redisServer()
        const prefix = `presa-chaos-${crypto.randomUUID()}`
        const [a, b] = yield* Effect.all(
          [Cluster.instance({ redisUrl: redis.url, prefix }), Cluster.instance({ redisUrl: redis.url, prefix })],
          { concurrency: "unbounded" }
        )
        const onA = yield* connect(urlOf(a), { tasks: true })
        const onB = yield* connect(urlOf(b), { tasks: true })
        const created = yield* onA.tasks.callTool("slow", { seconds: 30 })
        if (!Task.isCreateTaskResult(created)) return assert.fail("expected a task")
        assert.strictEqual((yield* onB.tasks.get(created.taskId)).status, "working")
        yield* a.kill("SIGKILL")
        const killedAt = Date.now()
        const failed = yield* onB.tasks.get(created.taskId).pipe(
          Effect.filterOrFail((t) => t.status === "failed", (t) => new Error(`still ${t.status}`)),
          Effect.retry(Schedule.spaced("250 millis").pipe(Schedule.upTo("15 seconds")))
        )
        // the documented bound: the heartbeat key lives 5 heartbeats (5 s), then one poll
        expect(Date.now() - killedAt).toBeLessThan(5_000 + 2_000)
        assert.strictEqual(failed.statusMessage, "The server instance running the task stopped")
        // terminal: it stays failed, and its result is the error
        assert.strictEqual((yield* onB.tasks.get(created.taskId)).status, "failed")
        const e = yield* Effect.flip(onB.tasks.awaitResult(created.taskId))
        expect(JSON.stringify(e)).toContain("The server instance running the task stopped")
      }),
    { timeout: 90_000 }
  )

  it.scopedLive.skipIf(!Cluster.hasNginx())(
    "each instance restarted under a listen through nginx: the listen comes back and reports the gap",
    () =>
      Effect.gen(function*() {
        const redis = yield* Cluster.redisServer()
        const prefix = `presa-chaos-${crypto.randomUUID()}`
        const first = yield* Effect.all(
          [Cluster.instance({ redisUrl: redis.url, prefix }), Cluster.instance({ redisUrl: redis.url, prefix })],
          { concurrency: "unbounded" }
        )
        const lb = yield* Cluster.nginx(first.map((i) => i.port))
        const listener = yield* connect(lb.url)
        const sub = yield* listener.listen({ toolsListChanged: true, resourceSubscriptions: ["file:///readme.txt"] })
        const got = yield* collect(sub)
        const actor = yield* connect(lb.url)
        // a rolling restart: each instance killed and started again on its port
        for (const old of first) {
          yield* old.kill("SIGKILL")
          yield* Cluster.instance({ redisUrl: redis.url, prefix, port: old.port })
        }
        // the listen was on one of them: it was re-established and said what may have been missed
        const gap = yield* next(
          got,
          (n) => n.method === "notifications/resources/updated" && resubscribed(n),
          "the re-established listen's gap report"
        )
        expect(gap.params?.uri).toBe("file:///readme.txt")
        // what comes after reaches it, whichever instance it lands on (a few touches through nginx)
        for (let i = 0; i < 4; i++) {
          yield* eventually(actor.callTool("touch"))
          const n = yield* next(
            got,
            (n) => n.method === "notifications/resources/updated" && !resubscribed(n),
            `touch ${i} after the restarts`
          )
          expect(n.params?.uri).toBe("file:///readme.txt")
        }
      }),
    { timeout: 120_000 }
  )
})
