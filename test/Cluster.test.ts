/**
 * Scale-out (presa-mcp/Redis): three processes of `examples/cluster.ts` behind a per-request
 * round-robin balancer (test/support/RoundRobin.ts) with a real `redis-server`, driven through the
 * balancer by the library's own client. Consecutive requests land on different instances (the
 * balancer's log says where), so each test crosses instances by construction. Where nginx is
 * installed (CI installs it), one test goes through nginx in front of the same instances; elsewhere
 * it is reported as skipped.
 */
import { assert, describe, expect, it, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import type * as JsonRpc from "../src/JsonRpc.js"
import * as McpClient from "../src/McpClient.js"
import * as Task from "../src/Task.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import * as Cluster from "./support/Cluster.js"
import * as RoundRobin from "./support/RoundRobin.js"

const WAIT = Duration.seconds(10)

interface Fixture {
  readonly redis: Cluster.RedisServer
  readonly instances: ReadonlyArray<Cluster.Instance>
  readonly lb: RoundRobin.RoundRobin
  /** nginx in front of the same instances, when installed (CI installs it). */
  readonly nginx: Cluster.Nginx | undefined
}

const HAS_NGINX = Cluster.hasNginx()

class TestCluster extends Context.Tag("test/TestCluster")<TestCluster, Fixture>() {}

const startCluster = (stateKeys: string | undefined, size = 3) =>
  Effect.gen(function*() {
    const redis = yield* Cluster.redisServer()
    const prefix = `presa-test-${crypto.randomUUID()}`
    const instances = yield* Effect.all(
      Array.from({ length: size }, () => Cluster.instance({ redisUrl: redis.url, prefix, stateKeys })),
      { concurrency: "unbounded" }
    )
    const lb = yield* RoundRobin.make(instances.map((i) => i.port))
    const nginx = size === 3 && HAS_NGINX ? yield* Cluster.nginx(instances.map((i) => i.port)) : undefined
    return { redis, instances, lb, nginx }
  })

const connect = (url: string, options: McpClient.Options = {}) =>
  Effect.flatMap(StreamableHttp.client({ url }), (transport) => McpClient.connect(transport, options))

const textOf = (result: { readonly content: ReadonlyArray<unknown> }): string => {
  const [first] = result.content
  return typeof first === "object" && first !== null && "text" in first && typeof first.text === "string"
    ? first.text
    : ""
}

/** The upstreams that served the requests of `method` logged since `from`. */
const landings = (lb: RoundRobin.RoundRobin, from: number, method: string): ReadonlyArray<number> =>
  lb.log.slice(from).filter((l) => l.method === method).map((l) => l.upstream)

/** The next notification of `method` on `queue` (others are skipped), within WAIT. */
const next = (queue: Queue.Dequeue<JsonRpc.Notification>, method: string) =>
  Queue.take(queue).pipe(
    Effect.repeat({ until: (n) => n.method === method }),
    Effect.timeoutFail({ duration: WAIT, onTimeout: () => new Error(`no ${method} within ${Duration.format(WAIT)}`) })
  )

/** Retries `effect` every 100 ms while it fails, for at most WAIT. */
const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo(WAIT))))

layer(Layer.scoped(TestCluster, startCluster("cluster-key-1,cluster-key-0")), {
  timeout: 120_000,
  excludeTestServices: true
})(
  "three instances behind round robin, one Redis",
  (it) => {
    it.scoped("a listen stream hears learn and touch done through the balancer by another client", () =>
      Effect.gen(function*() {
        const { lb } = yield* TestCluster
        const listener = yield* connect(lb.url)
        const from = lb.log.length
        const sub = yield* listener.listen({ toolsListChanged: true, resourceSubscriptions: ["file:///readme.txt"] })
        expect(sub.acknowledged).toEqual({ toolsListChanged: true, resourceSubscriptions: ["file:///readme.txt"] })
        const got = yield* Queue.unbounded<JsonRpc.Notification>()
        yield* sub.notifications.pipe(Stream.runForEach((n) => Queue.offer(got, n)), Effect.forkScoped)
        const actor = yield* connect(lb.url)
        // three touches in a row land on the three instances: each reaches the listen stream once
        for (let i = 0; i < 3; i++) {
          const touched = yield* actor.callTool("touch")
          assert.strictEqual(textOf(touched), "touched file:///readme.txt")
          const n = yield* next(got, "notifications/resources/updated")
          expect(n.params?.uri).toBe("file:///readme.txt")
        }
        const [listenedOn] = landings(lb, from, "subscriptions/listen")
        const touchedOn = landings(lb, from, "tools/call")
        expect(new Set(touchedOn).size).toBe(3)
        assert.isDefined(listenedOn)
        // a tool learned on one instance: the listen stream hears it, every instance serves it
        const name = `learned_${crypto.randomUUID().slice(0, 8)}`
        assert.strictEqual(textOf(yield* actor.callTool("learn", { name })), `learned ${name}`)
        yield* next(got, "notifications/tools/list_changed")
        for (let i = 0; i < 3; i++) {
          yield* eventually(
            actor.listAllTools.pipe(
              Effect.filterOrFail((tools) => tools.some((t) => t.name === name), () => new Error(`${name} not listed`))
            )
          )
          assert.strictEqual(textOf(yield* actor.callTool(name)), `I am ${name}`)
        }
      }))

    it.scoped("a slow task created through the balancer is polled and cancelled through it", () =>
      Effect.gen(function*() {
        const { instances, lb } = yield* TestCluster
        const client = yield* connect(lb.url, { tasks: true })
        const from = lb.log.length
        const created = yield* client.tasks.callTool("slow", { seconds: 30 })
        assert.isTrue(Task.isCreateTaskResult(created))
        if (!Task.isCreateTaskResult(created)) return
        const { taskId } = created
        // polled on every instance
        for (let i = 0; i < 3; i++) {
          const polled = yield* client.tasks.get(taskId)
          assert.strictEqual(polled.status, "working")
        }
        expect(new Set(landings(lb, from, "tasks/get")).size).toBe(3)
        const [createdOn] = landings(lb, from, "tools/call")
        // cancelled from an instance that does not run it (round robin moves on after each request)
        yield* client.tasks.cancel(taskId)
        const [cancelledOn] = landings(lb, from, "tasks/cancel")
        assert.notStrictEqual(cancelledOn, createdOn)
        const final = yield* eventually(
          client.tasks.get(taskId).pipe(
            Effect.filterOrFail((t) => t.status === "cancelled", () => new Error("not yet"))
          )
        )
        assert.strictEqual(final.status, "cancelled")
        // the handler itself was interrupted, on the instance that runs it (a signal through Redis)
        const owner = instances[createdOn ?? -1]
        if (owner === undefined) return assert.fail("no owner")
        yield* eventually(
          owner.output().includes("slow: interrupted") ? Effect.void : Effect.fail(new Error("not interrupted"))
        )
        // a task that is left alone completes, polled through the balancer
        const quick = yield* client.tasks.callTool("slow", { seconds: 0 })
        if (!Task.isCreateTaskResult(quick)) return assert.fail("expected a task")
        const done = yield* client.tasks.awaitResult(quick.taskId)
        assert.strictEqual(textOf(done), "slept")
      }))

    it.scoped("a task's questions are answered with tasks/update on another instance; the task resumes", () =>
      Effect.gen(function*() {
        const { lb } = yield* TestCluster
        // onElicit declares the elicitation capability; the test answers the questions itself
        const client = yield* connect(lb.url, {
          tasks: true,
          onElicit: () => Effect.succeed({ action: "decline" })
        })
        const from = lb.log.length
        const created = yield* client.tasks.callTool("confirm", { what: "ship" })
        if (!Task.isCreateTaskResult(created)) return assert.fail("expected a task")
        const [createdOn] = landings(lb, from, "tools/call")
        for (const round of [1, 2]) {
          const asked = yield* eventually(
            client.tasks.get(created.taskId).pipe(
              Effect.filterOrFail(
                (t) => t.status === "input_required",
                (t) => new Error(`still ${t.status} (${t.statusMessage ?? ""})`)
              )
            )
          )
          const keys = Object.keys(asked.inputRequests ?? {})
          assert.strictEqual(keys.length, 1, `round ${round}`)
          // the answer goes to an instance that does not run the task
          while (lb.nextUpstream() === createdOn) yield* client.tasks.get(created.taskId)
          yield* client.tasks.update(
            created.taskId,
            Object.fromEntries(keys.map((k) => [k, { action: "accept", content: { ok: true } }]))
          )
          const updatedOn = landings(lb, from, "tasks/update").at(-1)
          assert.notStrictEqual(updatedOn, createdOn)
        }
        const done = yield* client.tasks.awaitResult(created.taskId)
        assert.strictEqual(textOf(done), "done ship")
      }))

    it.scoped.skipIf(!HAS_NGINX)(
      "through nginx round robin: a listen hears every instance's touch; a task is cancelled",
      () =>
        Effect.gen(function*() {
          const { instances, nginx } = yield* TestCluster
          if (nginx === undefined) return assert.fail("nginx did not start")
          const listener = yield* connect(nginx.url)
          const sub = yield* listener.listen({ resourceSubscriptions: ["file:///readme.txt"] })
          const got = yield* Queue.unbounded<JsonRpc.Notification>()
          yield* sub.notifications.pipe(Stream.runForEach((n) => Queue.offer(got, n)), Effect.forkScoped)
          const actor = yield* connect(nginx.url, { tasks: true })
          for (let i = 0; i < 3; i++) {
            yield* actor.callTool("touch")
            expect((yield* next(got, "notifications/resources/updated")).params?.uri).toBe("file:///readme.txt")
          }
          const before = instances.map((i) => i.output().split("slow: interrupted").length)
          const created = yield* actor.tasks.callTool("slow", { seconds: 30 })
          if (!Task.isCreateTaskResult(created)) return assert.fail("expected a task")
          for (let i = 0; i < 3; i++) assert.strictEqual((yield* actor.tasks.get(created.taskId)).status, "working")
          yield* actor.tasks.cancel(created.taskId)
          yield* eventually(
            actor.tasks.get(created.taskId).pipe(
              Effect.filterOrFail((t) => t.status === "cancelled", () => new Error("not cancelled yet"))
            )
          )
          // exactly one instance interrupted the handler
          yield* eventually(
            Effect.suspend(() => {
              const grown = instances.filter((inst, k) =>
                inst.output().split("slow: interrupted").length > (before[k] ?? 0)
              )
              return grown.length === 1 ? Effect.void : Effect.fail(new Error(`${grown.length} interrupted`))
            })
          )
        })
    )

    it.scoped("an MRTR elicitation round trip completes across instances (shared requestState keys)", () =>
      Effect.gen(function*() {
        const { lb } = yield* TestCluster
        const client = yield* connect(lb.url, {
          onElicit: () => Effect.succeed({ action: "accept", content: { ok: true } })
        })
        const from = lb.log.length
        const result = yield* client.callTool("confirm", { what: "deploy" })
        assert.strictEqual(textOf(result), "done deploy")
        // three rounds (ask, ask again with a signed requestState, answer) on three instances
        const rounds = landings(lb, from, "tools/call")
        assert.strictEqual(rounds.length, 3)
        expect(new Set(rounds).size).toBe(3)
      }))
  }
)

layer(Layer.scoped(TestCluster, startCluster(undefined, 2)), { timeout: 120_000, excludeTestServices: true })(
  "two instances without shared requestState keys",
  (it) => {
    it.scoped("the second MRTR round lands on another instance and is refused", () =>
      Effect.gen(function*() {
        const { lb } = yield* TestCluster
        const client = yield* connect(lb.url, {
          onElicit: () => Effect.succeed({ action: "accept", content: { ok: true } })
        })
        const e = yield* Effect.flip(client.callTool("confirm", { what: "deploy" }))
        expect(e._tag).toBe("McpError")
        if (e._tag === "McpError") expect(e.message).toContain("Invalid requestState")
      }))
  }
)

describe("failures", () => {
  it.scopedLive("a killed instance's task reads failed; the others' work goes on", () =>
    Effect.gen(function*() {
      const { instances, lb } = yield* startCluster("k", 2)
      const client = yield* connect(lb.url, { tasks: true })
      const from = lb.log.length
      const doomed = yield* client.tasks.callTool("slow", { seconds: 30 })
      const kept = yield* client.tasks.callTool("slow", { seconds: 3 })
      if (!Task.isCreateTaskResult(doomed) || !Task.isCreateTaskResult(kept)) return assert.fail("expected tasks")
      const [doomedOn, keptOn] = landings(lb, from, "tools/call")
      assert.notStrictEqual(doomedOn, keptOn)
      const victim = instances[doomedOn ?? 0]
      if (victim === undefined) return assert.fail("no instance")
      yield* victim.kill("SIGKILL")
      // the task reads failed once its instance's heartbeat key expired (5 heartbeats)
      const failed = yield* client.tasks.get(doomed.taskId).pipe(
        Effect.filterOrFail((t) => t.status === "failed", (t) => new Error(`still ${t.status}`)),
        Effect.retry(Schedule.spaced("250 millis").pipe(Schedule.upTo("15 seconds")))
      )
      assert.strictEqual(failed.statusMessage, "The server instance running the task stopped")
      // the other instance's task completes, polled through the balancer
      const result = yield* client.tasks.awaitResult(kept.taskId)
      assert.strictEqual(textOf(result), "slept")
      // stateless calls keep working (the balancer skips the dead instance)
      for (let i = 0; i < 4; i++) {
        const sum = yield* client.callTool("add", { numbers: [1, 2, i] })
        expect(sum.structuredContent).toEqual({ sum: 3 + i })
      }
    }), { timeout: 90_000 })

  it.scopedLive(
    "Redis down: stateless requests keep working, an optional task tool runs in the request, both recover",
    () =>
      Effect.gen(function*() {
        const { instances, lb, redis } = yield* startCluster("k", 2)
        const client = yield* connect(lb.url, { tasks: true })
        yield* redis.kill("SIGKILL")
        // every instance notices and logs the degraded state
        yield* eventually(
          Effect.forEach(
            instances,
            (i) => i.output().includes("Redis unavailable") ? Effect.void : Effect.fail(new Error("not logged yet"))
          )
        )
        for (let i = 0; i < 3; i++) {
          const sum = yield* client.callTool("add", { numbers: [i, 1] }).pipe(Effect.timeout("5 seconds"))
          expect(sum.structuredContent).toEqual({ sum: i + 1 })
        }
        // the task store is away: `slow` (`task: "optional"`) runs in the request at once instead
        // of waiting for Redis, and answers as a plain tool (a `required` one answers -32603:
        // test/ChaosTasks.test.ts)
        const started = Date.now()
        const inline = yield* client.tasks.callTool("slow", { seconds: 0 }).pipe(Effect.timeout("5 seconds"))
        if (Task.isCreateTaskResult(inline)) return assert.fail("expected the tool's own result, not a task")
        assert.strictEqual(textOf(inline), "slept")
        expect(Date.now() - started).toBeLessThan(3_000)
        // Redis back on the same port: tasks work again on every instance
        const again = yield* Cluster.redisServer(redis.port)
        assert.strictEqual(again.port, redis.port)
        yield* eventually(
          Effect.forEach(instances, (i) =>
            i.output().split("Redis unavailable").at(-1)?.includes("Redis connection ready") === true
              ? Effect.void
              : Effect.fail(new Error("not recovered yet")))
        )
        for (let i = 0; i < 2; i++) {
          const created = yield* client.tasks.callTool("slow", { seconds: 0 })
          if (!Task.isCreateTaskResult(created)) {
            return assert.fail("expected a task")
          }
          assert.strictEqual(textOf(yield* client.tasks.awaitResult(created.taskId)), "slept")
        }
      }),
    { timeout: 90_000 }
  )
})
