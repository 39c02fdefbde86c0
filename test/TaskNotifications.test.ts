/**
 * Task status notifications (Tasks extension, SEP-2663 "Task Status Notifications") on
 * `subscriptions/listen`, in process and over Streamable HTTP on 127.0.0.1 port 0:
 *
 * - a listen with `taskIds` is acknowledged with the ids the caller may read (an unknown one, or
 *   another authenticated caller's, is left out and never notified); a task going working → input_required → (tasks/update) → working → completed is
 *   reported once per state, in order, each notification equal to `tasks/get` at that moment and
 *   nothing after the terminal one; cancelled and failed tasks too;
 * - each notification decodes with `Task.DetailedTask`; the ack is valid against the 2026-07-28
 *   schema; `notifications/tasks` itself is not in that schema (the check says so, and nothing
 *   else is wrong with the envelope);
 * - `client.tasks.awaitResult` ends on notifications without one `tasks/get` (counted by a server
 *   middleware), and polls against a server that acknowledges no task ids;
 * - a listen cut while its task finishes: the client listens again and reads the task again, so
 *   the terminal status reaches the stream (marked `RESUBSCRIBED`) even from a server that sends
 *   no current state after its ack; from ours (which does) it arrives once.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Content, InProcess, Input, JsonRpc, McpClient, McpSchema, McpServer, Task, Tool, Transport } from "presa-mcp"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import { freePort } from "./support/Cluster.js"
import { checkNotification, specAvailable } from "./support/SpecSchema.js"
import * as TcpProxy from "./support/TcpProxy.js"
import { get } from "./support/Wire.js"

const WAIT: Duration.DurationInput = "10 seconds"
const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | Error, R> =>
  Effect.timeoutFail(effect, { duration: WAIT, onTimeout: () => new Error(`timed out after ${Duration.format(WAIT)}`) })

const NAME_SCHEMA = { type: "object", properties: { name: { type: "string" } }, required: ["name"] } as const

interface Fixture {
  readonly server: McpServer.McpServer
  /** `tasks/get` requests the server received. */
  readonly gets: Ref.Ref<number>
  /** Opens the `ask` tool's first gate (before its question) and second gate (before its answer). */
  readonly ask: Deferred.Deferred<void>
  readonly answer: Deferred.Deferred<void>
}

/**
 * Tools (all tasks): `ask` waits for its first gate, asks a name (elicitation), waits for its
 * second gate, answers "hello <name>"; `wait` waits for the second gate, answers "waited";
 * `hang` never ends; `boom` fails with McpError -32603.
 */
const makeFixture = Effect.gen(function*() {
  const gets = yield* Ref.make(0)
  const ask = yield* Deferred.make<void>()
  const answer = yield* Deferred.make<void>()
  const server = yield* McpServer.make({
    name: "notify",
    version: "1.0.0",
    tasks: { pollInterval: "50 millis" },
    middleware: [
      (request, next) =>
        request.method === Task.Method.get ? Effect.zipRight(Ref.update(gets, (n) => n + 1), next) : next
    ],
    tools: [
      Tool.fromJsonSchema({
        name: "ask",
        task: "required",
        handler: () =>
          Effect.gen(function*() {
            yield* Deferred.await(ask)
            const r = yield* Input.elicit("Name?", NAME_SCHEMA)
            yield* Deferred.await(answer)
            return `hello ${String(r.content?.name)}`
          })
      }),
      Tool.fromJsonSchema({ name: "hang", task: "required", handler: () => Effect.never }),
      Tool.fromJsonSchema({
        name: "wait",
        task: "required",
        handler: () => Effect.as(Deferred.await(answer), "waited")
      }),
      Tool.fromJsonSchema({
        name: "boom",
        task: "required",
        handler: () => Effect.fail(JsonRpc.McpError.internalError("boom"))
      })
    ]
  })
  return { server, gets, ask, answer } satisfies Fixture
})

/** Wraps a client transport: every notification of a `subscriptions/listen` is kept in `seen`. */
const observing = (inner: Transport.ClientTransport) =>
  Effect.gen(function*() {
    const seen = yield* Ref.make<ReadonlyArray<JsonRpc.Notification>>([])
    const transport: Transport.ClientTransport = {
      ...inner,
      request: (message, options) =>
        message.method !== "subscriptions/listen" || options?.onNotification === undefined
          ? inner.request(message, options)
          : inner.request(message, {
            ...options,
            onNotification: (n) =>
              Effect.zipRight(Ref.update(seen, (xs) => [...xs, n]), options.onNotification?.(n) ?? Effect.void)
          })
    }
    return { transport, seen }
  })

type Via = "in process" | "Streamable HTTP"

const clientOf = (server: McpServer.McpServer, via: Via, options: McpClient.Options = {}) =>
  Effect.gen(function*() {
    const inner = via === "in process"
      ? yield* InProcess.client(server)
      : yield* StreamableHttp.client({ url: (yield* StreamableHttp.serve(server)).url })
    const { seen, transport } = yield* observing(inner)
    const client = yield* bounded(McpClient.connect(transport, {
      tasks: true,
      onElicit: () => Effect.succeed({ action: "accept" as const, content: { name: "Ann" } }),
      ...options
    }))
    return { client, seen }
  })

/** The task statuses of a subscription, in a queue (decoded with `Task.DetailedTask`). */
const statuses = (sub: McpClient.Subscription): Effect.Effect<Queue.Dequeue<Task.DetailedTask>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<Task.DetailedTask>()
    yield* sub.notifications.pipe(
      Stream.filter((n) => n.method === Task.STATUS_NOTIFICATION),
      Stream.map((n) => Option.getOrThrowWith(Task.fromNotification(n), () => new Error("not a DetailedTask"))),
      Stream.runForEach((t) => Queue.offer(queue, t)),
      Effect.forkScoped
    )
    return queue
  })

const createTask = (client: McpClient.McpClient, name: string) =>
  Effect.flatMap(
    client.tasks.callTool(name),
    (created) => Task.isCreateTaskResult(created) ? Effect.succeed(created) : Effect.dieMessage("expected a task")
  )

/** What `tasks/get` gives now, without the `Result` envelope's own members (`_meta`, `resultType`). */
const taskNow = (client: McpClient.McpClient, taskId: string) =>
  Effect.map(client.tasks.get(taskId), ({ _meta, resultType: _resultType, ...task }) => task)

/** The next status, equal to what `tasks/get` gives now (the task is held still by the test). */
const nextEqualsGet = (client: McpClient.McpClient, queue: Queue.Dequeue<Task.DetailedTask>, status: Task.Status) =>
  Effect.gen(function*() {
    const task = yield* bounded(Queue.take(queue))
    assert.strictEqual(task.status, status)
    expect(task).toEqual(yield* taskNow(client, task.taskId))
    return task
  })

describe.each<Via>(["in process", "Streamable HTTP"])("notifications/tasks (%s)", (via) => {
  it.scopedLive("working → input_required → working → completed: each state once, in order, equal to tasks/get", () =>
    Effect.gen(function*() {
      const { answer, ask, server } = yield* makeFixture
      const { client, seen } = yield* clientOf(server, via)
      const created = yield* createTask(client, "ask")
      const sub = yield* bounded(client.listen({ taskIds: [created.taskId, "no-such-task"] }))
      expect(sub.acknowledged).toEqual({ taskIds: [created.taskId] })
      const queue = yield* statuses(sub)
      yield* nextEqualsGet(client, queue, "working")
      yield* Deferred.succeed(ask, undefined)
      const asked = yield* nextEqualsGet(client, queue, "input_required")
      const [key] = Object.keys(asked.inputRequests ?? {})
      assert.isDefined(key)
      yield* client.tasks.update(created.taskId, { [key ?? ""]: { action: "accept", content: { name: "Bo" } } })
      yield* nextEqualsGet(client, queue, "working")
      yield* Deferred.succeed(answer, undefined)
      const done = yield* nextEqualsGet(client, queue, "completed")
      assert.strictEqual(Content.textOf(yield* Schema.decodeUnknown(McpSchema.CallToolResult)(done.result)), "hello Bo")
      // nothing after the terminal state (the server re-checks every 50 ms: give it several rounds)
      yield* Effect.sleep("300 millis")
      assert.strictEqual(yield* Queue.size(queue), 0)
      // the wire: the ack is valid 2026-07-28; every notifications/tasks decodes as a DetailedTask,
      // carries the listen's subscription id, and is not a 2026-07-28 notification (an extension's)
      const wire = yield* Ref.get(seen)
      const ack = wire.find((n) => n.method === "notifications/subscriptions/acknowledged")
      expect(ack?.params?.notifications).toEqual({ taskIds: [created.taskId] })
      const tasks = wire.filter((n) => n.method === Task.STATUS_NOTIFICATION)
      expect(tasks.map((n) => n.params?.status)).toEqual(["working", "input_required", "working", "completed"])
      for (const n of tasks) {
        assert.isTrue(Option.isSome(Task.fromNotification(n)))
        assert.isDefined(
          JsonRpc.isObject(n.params?._meta) ? n.params._meta["io.modelcontextprotocol/subscriptionId"] : undefined
        )
      }
      if (specAvailable) {
        const message = (n: JsonRpc.Notification) => ({ jsonrpc: "2.0", method: n.method, params: n.params })
        expect(checkNotification("2026-07-28", message(ack ?? JsonRpc.notification("none"))).problems).toEqual([])
        expect(checkNotification("2026-07-28", message(tasks[0] ?? JsonRpc.notification("none"))).problems).toEqual([
          "notification notifications/tasks is not defined in 2026-07-28"
        ])
      }
    }))

  it.scopedLive("cancelled and failed tasks are reported once, terminal; a task already finished is sent after the ack", () =>
    Effect.gen(function*() {
      const { server } = yield* makeFixture
      const { client } = yield* clientOf(server, via)
      const hang = yield* createTask(client, "hang")
      const boom = yield* createTask(client, "boom")
      // boom fails at once: wait until it has, so the listen starts after its last change
      yield* client.tasks.get(boom.taskId).pipe(
        Effect.repeat({ until: (t) => t.status === "failed", times: 200 }),
        Effect.zipLeft(Effect.sleep("5 millis"))
      )
      const sub = yield* bounded(client.listen({ taskIds: [hang.taskId, boom.taskId] }))
      expect(sub.acknowledged).toEqual({ taskIds: [hang.taskId, boom.taskId] })
      const queue = yield* statuses(sub)
      const first = [yield* bounded(Queue.take(queue)), yield* bounded(Queue.take(queue))]
      const failed = first.find((t) => t.taskId === boom.taskId)
      assert.strictEqual(failed?.status, "failed")
      expect(failed?.error).toEqual({ code: -32603, message: "boom" })
      expect(failed).toEqual(yield* taskNow(client, boom.taskId))
      assert.strictEqual(first.find((t) => t.taskId === hang.taskId)?.status, "working")
      yield* client.tasks.cancel(hang.taskId)
      const cancelled = yield* bounded(Queue.take(queue))
      assert.strictEqual(cancelled.taskId, hang.taskId)
      assert.strictEqual(cancelled.status, "cancelled")
      expect(cancelled).toEqual(yield* taskNow(client, hang.taskId))
      yield* Effect.sleep("300 millis")
      assert.strictEqual(yield* Queue.size(queue), 0)
    }))

  it.scopedLive("awaitResult ends on notifications: the server receives no tasks/get", () =>
    Effect.gen(function*() {
      const { answer, ask, gets, server } = yield* makeFixture
      const asked = yield* Ref.make(0)
      const { client } = yield* clientOf(server, via, {
        onElicit: () =>
          Effect.as(Ref.update(asked, (n) => n + 1), { action: "accept" as const, content: { name: "Cy" } })
      })
      yield* Deferred.succeed(ask, undefined)
      yield* Deferred.succeed(answer, undefined)
      // callTool awaits the task it created (input answered with onElicit along the way)
      assert.strictEqual(Content.textOf(yield* bounded(client.callTool("ask"))), "hello Cy")
      assert.strictEqual(yield* Ref.get(asked), 1)
      const boom = yield* createTask(client, "boom")
      const e = yield* bounded(Effect.flip(client.tasks.awaitResult(boom.taskId)))
      assert.strictEqual(e._tag === "McpError" ? e.message : e._tag, "boom")
      assert.strictEqual(yield* Ref.get(gets), 0)
    }))
})

describe("the access rule of tasks/get", () => {
  it.scopedLive("another caller's task is left out of the ack and never notified; the owner's is", () =>
    Effect.gen(function*() {
      const { server } = yield* makeFixture
      const as = (subject: string) => ({ subject, scopes: [], claims: {} })
      const meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { extensions: { [Task.EXTENSION_ID]: {} } }
      }
      const created = yield* McpServer.dispatch(server, {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "hang", arguments: {}, _meta: meta }
      }, { auth: as("alice") })
      const taskId = get(Option.getOrThrow(created).message, "result", "taskId")
      assert.isString(taskId)
      const listenAs = (subject: string) =>
        Effect.gen(function*() {
          const seen = yield* Queue.unbounded<JsonRpc.Notification>()
          yield* McpServer.dispatch(server, {
            jsonrpc: "2.0",
            id: `listen-${subject}`,
            method: "subscriptions/listen",
            params: { notifications: { taskIds: [taskId] }, _meta: meta }
          }, { auth: as(subject), notify: (n) => Queue.offer(seen, n) }).pipe(Effect.forkScoped)
          return seen
        })
      const mallory = yield* listenAs("mallory")
      const alice = yield* listenAs("alice")
      const ackOf = (queue: Queue.Dequeue<JsonRpc.Notification>) => bounded(Queue.take(queue))
      expect(get((yield* ackOf(mallory)).params, "notifications")).toEqual({ taskIds: [] })
      expect(get((yield* ackOf(alice)).params, "notifications")).toEqual({ taskIds: [taskId] })
      assert.strictEqual(get((yield* bounded(Queue.take(alice))).params, "status"), "working")
      // alice cancels: alice hears it, mallory hears nothing at all
      yield* McpServer.dispatch(server, {
        jsonrpc: "2.0",
        id: 2,
        method: "tasks/cancel",
        params: { taskId, _meta: meta }
      }, { auth: as("alice") })
      assert.strictEqual(get((yield* bounded(Queue.take(alice))).params, "status"), "cancelled")
      yield* Effect.sleep("200 millis")
      assert.strictEqual(yield* Queue.size(mallory), 0)
    }))
})

describe("awaitResult against a server that acknowledges no task ids", () => {
  it.scopedLive("it polls tasks/get as before", () =>
    Effect.gen(function*() {
      const { answer, ask, gets, server } = yield* makeFixture
      // an older server: its ack has no taskIds and it sends no notifications/tasks (the wire is
      // rewritten on its way to the client)
      const inner = yield* InProcess.client(server)
      const transport: Transport.ClientTransport = {
        ...inner,
        request: (message, options) =>
          inner.request(message, {
            ...options,
            onNotification: (n) =>
              n.method === Task.STATUS_NOTIFICATION
                ? Effect.void
                : (options?.onNotification ?? (() => Effect.void))(
                  n.method === "notifications/subscriptions/acknowledged"
                    ? JsonRpc.notification(n.method, { ...n.params, notifications: {} })
                    : n
                )
          })
      }
      const client = yield* bounded(McpClient.connect(transport, {
        tasks: true,
        onElicit: () => Effect.succeed({ action: "accept" as const, content: { name: "Di" } })
      }))
      yield* Deferred.succeed(ask, undefined)
      yield* Deferred.succeed(answer, undefined)
      assert.strictEqual(Content.textOf(yield* bounded(client.callTool("ask"))), "hello Di")
      expect(yield* Ref.get(gets)).toBeGreaterThan(0)
    }))
})

describe.each([true, false])("a relisten re-reads the tasks (server silent after its ack: %s)", (silent) => {
  it.scopedLive("the listen is cut while the task finishes: the terminal status arrives once", () =>
    Effect.gen(function*() {
      const { answer, server } = yield* makeFixture
      const { port, url } = yield* StreamableHttp.serve(server)
      const proxy = yield* TcpProxy.make(port)
      const inner = yield* StreamableHttp.client({ url: url.replace(`:${port}/`, `:${proxy.port}/`) })
      // a server that sends no current state after its ack: every notifications/tasks of a
      // re-established listen is dropped on the wire, so only the client's own re-read can tell
      const listens = yield* Ref.make(0)
      const transport: Transport.ClientTransport = {
        ...inner,
        request: (message, options) =>
          message.method !== "subscriptions/listen"
            ? inner.request(message, options)
            : Effect.flatMap(Ref.updateAndGet(listens, (n) => n + 1), (nth) =>
              inner.request(message, {
                ...options,
                onNotification: (n) =>
                  silent && nth > 1 && n.method === Task.STATUS_NOTIFICATION
                    ? Effect.void
                    : (options?.onNotification ?? (() => Effect.void))(n)
              }))
      }
      const client = yield* bounded(McpClient.connect(transport, {
        tasks: true,
        relisten: Schedule.spaced("100 millis").pipe(Schedule.intersect(Schedule.recurs(100)))
      }))
      const direct = yield* bounded(
        Effect.flatMap(StreamableHttp.client({ url }), (t) => McpClient.connect(t, { tasks: true }))
      )
      const created = yield* createTask(client, "wait")
      const sub = yield* bounded(client.listen({ taskIds: [created.taskId] }))
      const got = yield* Queue.unbounded<JsonRpc.Notification>()
      yield* sub.notifications.pipe(Stream.runForEach((n) => Queue.offer(got, n)), Effect.forkScoped)
      assert.strictEqual(get((yield* bounded(Queue.take(got))).params, "status"), "working")
      // the listen goes down and stays down while the task finishes
      yield* proxy.retarget(yield* freePort)
      yield* proxy.cut
      yield* Deferred.succeed(answer, undefined)
      yield* direct.tasks.get(created.taskId).pipe(
        Effect.repeat({ until: (t) => t.status === "completed", times: 200 }),
        Effect.zipLeft(Effect.sleep("5 millis"))
      )
      yield* proxy.retarget(port)
      const done = yield* bounded(
        Queue.take(got).pipe(Effect.repeat({ until: (n) => n.method === Task.STATUS_NOTIFICATION }))
      )
      assert.strictEqual(get(done.params, "status"), "completed")
      // from the client's own re-read when the server is silent (else whichever came first)
      if (silent) assert.strictEqual(get(done.params, "_meta", McpClient.RESUBSCRIBED), true)
      expect(Option.map(Task.fromNotification(done), (t) => t.result?.content)).toEqual(
        Option.some([{ type: "text", text: "waited" }])
      )
      assert.isAtLeast(yield* Ref.get(listens), 2)
      // once: the server's state after its ack and the client's re-read are the same state
      yield* Effect.sleep("300 millis")
      const after = yield* Queue.takeAll(got)
      expect([...after].filter((n) => n.method === Task.STATUS_NOTIFICATION)).toEqual([])
    }))
})
