/**
 * The Tasks extension (io.modelcontextprotocol/tasks, SEP-2663), server and client, in process.
 *
 * Wire level (every reply checked against the 2026-07-28 schema plus the SEP's task shapes,
 * test/support/SpecSchema.ts): capability, the task policies (sync, optional, required, a
 * function doing MRTR first), a task that reports progress and is polled to completion, one
 * cancelled mid-way (finalizer ran, then `cancelled`), failed vs completed-with-isError,
 * `tasks/update` answering an elicitation (partial answers, unknown keys ignored), gating
 * (-32021 without the extension, -32601 in legacy sessions and without the option, -32602 for
 * an unknown task), ttl expiry and max tasks under `TestClock`, server shutdown, `Mcp-Name`.
 * Client level: `McpClient.callTool` polls a task transparently and answers its questions with
 * `onElicit`; `client.tasks` get / cancel / awaitResult.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/TestClock"
import { Content, InProcess, Input, JsonRpc, McpClient, McpServer, Task, Tool } from "presa-mcp"
import { makeTasksServer, NAME_SCHEMA } from "./fixtures/tasks-server.js"
import {
  asString,
  type Conn,
  dispatchChecked,
  errorOf,
  get,
  KEY,
  keysOf,
  legacy,
  modern,
  type Reply,
  resultOf,
  textAt
} from "./support/Wire.js"

const EXT = { [KEY.clientCapabilities]: { extensions: { [Task.EXTENSION_ID]: {} } } }
const EXT_ELICIT = { [KEY.clientCapabilities]: { elicitation: {}, extensions: { [Task.EXTENSION_ID]: {} } } }

const WAIT: Duration.DurationInput = "10 seconds"
const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | Error, R> =>
  Effect.timeoutFail(effect, { duration: WAIT, onTimeout: () => new Error(`timed out after ${Duration.format(WAIT)}`) })

const call = (conn: Conn, name: string, args: JsonRpc.JsonObject = {}, meta: JsonRpc.JsonObject = EXT) =>
  conn.call("tools/call", { name, arguments: args }, { meta })

const taskIdOf = (reply: Reply): string => {
  const result = resultOf(reply)
  assert.strictEqual(result.resultType, "task", JSON.stringify(result))
  return asString(result.taskId)
}

const getTask = (conn: Conn, taskId: string, meta: JsonRpc.JsonObject = EXT) =>
  Effect.map(conn.call("tasks/get", { taskId }, { meta }), resultOf)

/** Polls `tasks/get` (real time, at most 1,000 polls 5 ms apart) until `done` holds. */
const pollUntil = (conn: Conn, taskId: string, done: (task: JsonRpc.JsonObject) => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1000; i++) {
      const task = yield* getTask(conn, taskId)
      if (done(task)) return task
      yield* Effect.sleep("5 millis")
    }
    return yield* Effect.dieMessage(`task ${taskId} never reached the expected state`)
  })

const terminal = (t: JsonRpc.JsonObject) =>
  t.status === "completed" || t.status === "failed" || t.status === "cancelled"

/** Runs forked effects under TestClock until `done` holds (at most 1,000 yields). */
const settle = (conn: Conn, taskId: string, done: (task: JsonRpc.JsonObject) => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1000; i++) {
      const task = yield* getTask(conn, taskId)
      if (done(task)) return task
      yield* Effect.yieldNow()
    }
    return yield* Effect.dieMessage(`task ${taskId} never reached the expected state`)
  })

describe("Tasks: capability and policies", () => {
  it.effect("server/discover declares the extension (settings {}) only with the tasks option", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* makeTasksServer(yield* Ref.make(0)))
      const caps = get(resultOf(yield* conn.call("server/discover")), "capabilities", "extensions")
      expect(caps).toEqual({ [Task.EXTENSION_ID]: {} })
      const plain = yield* modern(
        yield* McpServer.make({
          name: "p",
          version: "1",
          tools: [Tool.fromJsonSchema({ name: "t", handler: () => "t" })]
        })
      )
      assert.isUndefined(get(resultOf(yield* plain.call("server/discover")), "capabilities", "extensions"))
    }))

  it.effect("optional: a task for a declaring client, the plain result otherwise; sync tools never make one", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* makeTasksServer(yield* Ref.make(0)))
      const created = resultOf(yield* call(conn, "steps", { n: 0, delayMs: 0 }))
      expect([...keysOf(created)].sort()).toEqual(
        ["_meta", "createdAt", "lastUpdatedAt", "pollIntervalMs", "resultType", "status", "taskId", "ttlMs"]
      )
      assert.strictEqual(created.status, "working")
      assert.strictEqual(created.ttlMs, 3_600_000)
      assert.strictEqual(created.pollIntervalMs, 20)
      assert.match(asString(created.taskId), /^[0-9a-f-]{36}$/)
      const plain = yield* call(conn, "steps", { n: 0, delayMs: 0 }, {})
      assert.strictEqual(resultOf(plain).resultType, "complete")
      assert.strictEqual(textAt(plain), "done 0 steps")
      const sync = yield* call(conn, "sync", {})
      assert.strictEqual(resultOf(sync).resultType, "complete")
      assert.strictEqual(textAt(sync), "sync")
    }))

  it.effect("required: -32021 naming the extension for a client without it (modern and legacy); a task with it", () =>
    Effect.gen(function*() {
      const server = yield* makeTasksServer(yield* Ref.make(0))
      const conn = yield* modern(server)
      const reply = yield* call(conn, "must", {}, {})
      assert.strictEqual(reply.status, 400)
      const e = errorOf(reply)
      assert.strictEqual(e.code, -32021)
      expect(e.data).toEqual({ requiredCapabilities: { extensions: { [Task.EXTENSION_ID]: {} } } })
      const old = yield* legacy(server, "2025-11-25")
      const legacyReply = yield* old.call("tools/call", { name: "must", arguments: {} })
      assert.strictEqual(errorOf(legacyReply).code, -32021)
      // the legacy session never gets a task, even declaring the extension in initialize-style caps
      assert.strictEqual(
        textAt(yield* old.call("tools/call", { name: "steps", arguments: { n: 0, delayMs: 0 } })),
        "done 0 steps"
      )
      const id = taskIdOf(yield* call(conn, "must"))
      const done = yield* settle(conn, id, terminal)
      assert.strictEqual(get(done, "result", "content", 0, "text"), "must ran")
    }))

  it.effect("a policy function runs in the request: its MRTR question is answered before the task exists", () =>
    Effect.gen(function*() {
      const ask = Input.elicit("Name?", NAME_SCHEMA, { key: "user_name" })
      const server = yield* McpServer.make({
        name: "mrtr",
        version: "1",
        tasks: {},
        tools: [Tool.fromJsonSchema({
          name: "compose",
          task: () => Effect.as(ask, "required" as const),
          handler: () => Effect.map(ask, (r) => `Hello, ${String(r.content?.name)}!`)
        })]
      })
      const conn = yield* modern(server)
      const first = resultOf(yield* call(conn, "compose", {}, EXT_ELICIT))
      assert.strictEqual(first.resultType, "input_required")
      assert.isUndefined(first.taskId)
      expect(keysOf(get(first, "inputRequests"))).toEqual(["user_name"])
      const second = yield* conn.call("tools/call", {
        name: "compose",
        arguments: {},
        inputResponses: { user_name: { action: "accept", content: { name: "Alice" } } }
      }, { meta: EXT_ELICIT })
      const id = taskIdOf(second)
      assert.isUndefined(resultOf(second).requestState)
      const done = yield* settle(conn, id, terminal)
      assert.strictEqual(done.status, "completed")
      assert.strictEqual(get(done, "result", "content", 0, "text"), "Hello, Alice!")
    }))
})

describe("Tasks: lifecycle", () => {
  it.live("a task runs, reports progress as its status message, and is polled to completion", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* makeTasksServer(yield* Ref.make(0)))
      const id = taskIdOf(yield* call(conn, "steps", { n: 3, delayMs: 40 }))
      const seen = new Set<string>()
      const done = yield* bounded(pollUntil(conn, id, (t) => {
        if (typeof t.statusMessage === "string" && t.status === "working") seen.add(t.statusMessage)
        return terminal(t)
      }))
      assert.strictEqual(done.status, "completed")
      assert.isAtLeast(seen.size, 2, `progress seen: ${[...seen].join(", ")}`)
      for (const m of seen) assert.match(m, /^step [0-2]$/)
      expect(get(done, "result")).toEqual({ resultType: "complete", content: [{ type: "text", text: "done 3 steps" }] })
      assert.strictEqual(done.resultType, "complete")
      // a finished task stays readable, and cancelling it is an idempotent ack
      assert.strictEqual((yield* getTask(conn, id)).status, "completed")
      const ack = resultOf(yield* conn.call("tasks/cancel", { taskId: id }, { meta: EXT }))
      expect([...keysOf(ack)].sort()).toEqual(["_meta", "resultType"])
      assert.strictEqual((yield* getTask(conn, id)).status, "completed")
    }))

  it.live("a task cancelled mid-way: the ack comes at once, the handler's finalizer runs, the status is cancelled", () =>
    Effect.gen(function*() {
      const finalized = yield* Ref.make(0)
      const conn = yield* modern(yield* makeTasksServer(finalized))
      const id = taskIdOf(yield* call(conn, "hang"))
      assert.strictEqual((yield* getTask(conn, id)).status, "working")
      const ack = resultOf(yield* conn.call("tasks/cancel", { taskId: id }, { meta: EXT }))
      assert.strictEqual(ack.resultType, "complete")
      const done = yield* bounded(pollUntil(conn, id, terminal))
      assert.strictEqual(done.status, "cancelled")
      assert.strictEqual(yield* Ref.get(finalized), 1)
      assert.isUndefined(done.result)
    }))

  it.effect("a tool error completes the task with isError; an McpError fails it with the JSON-RPC error", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "errs",
        version: "1",
        tasks: {},
        tools: [
          Tool.fromJsonSchema({
            name: "toolError",
            task: "optional",
            handler: () => Effect.fail(new Tool.ToolError({ message: "nope" }))
          }),
          Tool.fromJsonSchema({
            name: "protocolError",
            task: "optional",
            handler: () => Effect.fail(JsonRpc.McpError.invalidParams("bad input", { field: "x" }))
          })
        ]
      })
      const conn = yield* modern(server)
      const a = yield* settle(conn, taskIdOf(yield* call(conn, "toolError")), terminal)
      assert.strictEqual(a.status, "completed")
      assert.strictEqual(get(a, "result", "isError"), true)
      const b = yield* settle(conn, taskIdOf(yield* call(conn, "protocolError")), terminal)
      assert.strictEqual(b.status, "failed")
      expect(b.error).toEqual({ code: -32602, message: "bad input", data: { field: "x" } })
      assert.strictEqual(b.statusMessage, "bad input")
      assert.isUndefined(b.result)
    }))

  it.effect("tasks/update answers an elicitation: input_required with inputRequests, then the task resumes", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* makeTasksServer(yield* Ref.make(0)))
      const id = taskIdOf(yield* call(conn, "confirm", {}, EXT_ELICIT))
      const asked = yield* settle(conn, id, (t) => t.status === "input_required")
      const keys = keysOf(asked.inputRequests)
      assert.strictEqual(keys.length, 1)
      const key = keys[0] ?? ""
      expect(get(asked, "inputRequests", key)).toEqual({
        method: "elicitation/create",
        params: { message: "Proceed?", requestedSchema: NAME_SCHEMA }
      })
      // polling again shows the same question; an unknown key is ignored
      expect(keysOf((yield* getTask(conn, id)).inputRequests)).toEqual(keys)
      const ignored = resultOf(
        yield* conn.call("tasks/update", { taskId: id, inputResponses: { nope: { x: 1 } } }, { meta: EXT })
      )
      expect([...keysOf(ignored)].sort()).toEqual(["_meta", "resultType"])
      assert.strictEqual((yield* getTask(conn, id)).status, "input_required")
      yield* conn.call("tasks/update", {
        taskId: id,
        inputResponses: { [key]: { action: "accept", content: { name: "Ada" } } }
      }, { meta: EXT })
      const done = yield* settle(conn, id, terminal)
      assert.strictEqual(done.status, "completed")
      assert.strictEqual(get(done, "result", "content", 0, "text"), "confirmed Ada")
    }))

  it.effect("two questions at once: a partial tasks/update keeps the task input_required with the other key", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "multi",
        version: "1",
        tasks: {},
        tools: [Tool.fromJsonSchema({
          name: "two",
          task: "optional",
          handler: () =>
            Effect.map(
              Input.all({
                a: Input.elicit("A?", NAME_SCHEMA, { key: "a" }),
                b: Input.elicit("B?", NAME_SCHEMA, { key: "b" })
              }),
              ({ a, b }) => `${String(a.content?.name)}+${String(b.content?.name)}`
            )
        })]
      })
      const conn = yield* modern(server)
      const id = taskIdOf(yield* call(conn, "two", {}, EXT_ELICIT))
      const asked = yield* settle(conn, id, (t) => t.status === "input_required")
      expect([...keysOf(asked.inputRequests)].sort()).toEqual(["a", "b"])
      yield* conn.call("tasks/update", {
        taskId: id,
        inputResponses: { a: { action: "accept", content: { name: "x" } } }
      }, {
        meta: EXT
      })
      const partial = yield* getTask(conn, id)
      assert.strictEqual(partial.status, "input_required")
      expect(keysOf(partial.inputRequests)).toEqual(["b"])
      yield* conn.call("tasks/update", {
        taskId: id,
        inputResponses: { b: { action: "accept", content: { name: "y" } } }
      }, {
        meta: EXT
      })
      const done = yield* settle(conn, id, terminal)
      assert.strictEqual(get(done, "result", "content", 0, "text"), "x+y")
    }))
})

describe("Tasks: gating, errors, ttl, limits", () => {
  it.effect("tasks/* need the extension (-32021), a modern request (-32601 in legacy) and the option (-32601)", () =>
    Effect.gen(function*() {
      const server = yield* makeTasksServer(yield* Ref.make(0))
      const conn = yield* modern(server)
      for (
        const [method, params] of [
          ["tasks/get", { taskId: "x" }],
          ["tasks/update", { taskId: "x", inputResponses: {} }],
          ["tasks/cancel", { taskId: "x" }]
        ] as const
      ) {
        const e = errorOf(yield* conn.call(method, params))
        assert.strictEqual(e.code, -32021, method)
        const unknown = yield* conn.call(method, params, { meta: EXT })
        assert.strictEqual(errorOf(unknown).code, -32602, method)
        assert.strictEqual(unknown.status, 200)
      }
      assert.strictEqual(errorOf(yield* conn.call("tasks/result", { taskId: "x" }, { meta: EXT })).code, -32601)
      assert.strictEqual(errorOf(yield* conn.call("tasks/list", {}, { meta: EXT })).code, -32601)
      const old = yield* legacy(server, "2025-11-25")
      assert.strictEqual(errorOf(yield* old.call("tasks/get", { taskId: "x" })).code, -32601)
      const plain = yield* modern(yield* McpServer.make({ name: "p", version: "1" }))
      assert.strictEqual(errorOf(yield* plain.call("tasks/get", { taskId: "x" }, { meta: EXT })).code, -32601)
      assert.strictEqual(errorOf(yield* conn.call("tasks/get", {}, { meta: EXT })).code, -32602)
      assert.strictEqual(
        errorOf(yield* conn.call("tasks/update", { taskId: "x", inputResponses: 3 }, { meta: EXT })).code,
        -32602
      )
    }))

  it.effect("subscriptions/listen asking for taskIds without the extension: -32021", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "l",
        version: "1",
        tasks: {},
        listChanged: true,
        tools: [Tool.fromJsonSchema({ name: "t", handler: () => "t" })]
      })
      const conn = yield* modern(server)
      const reply = yield* conn.call("subscriptions/listen", {
        notifications: { taskIds: ["x"], toolsListChanged: true }
      })
      const e = errorOf(reply)
      assert.strictEqual(e.code, -32021)
      expect(e.data).toEqual({ requiredCapabilities: { extensions: { [Task.EXTENSION_ID]: {} } } })
    }))

  it.effect("HTTP headers: Mcp-Name must carry the taskId on tasks/get (-32020 otherwise)", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* makeTasksServer(yield* Ref.make(0)))
      const id = taskIdOf(yield* call(conn, "steps", { n: 0, delayMs: 0 }))
      const headers = (name: string) => ({
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tasks/get",
        "mcp-name": name
      })
      const ok = yield* conn.call("tasks/get", { taskId: id }, { meta: EXT, headers: headers(id) })
      assert.strictEqual(resultOf(ok).taskId, id)
      const bad = yield* conn.call("tasks/get", { taskId: id }, { meta: EXT, headers: headers("other") })
      assert.strictEqual(errorOf(bad).code, -32020)
      assert.strictEqual(bad.status, 400)
    }))

  it.effect("ttl: a finished task is kept for its ttl, then unknown (-32602); a running one is stopped at its end", () =>
    Effect.gen(function*() {
      const finalized = yield* Ref.make(0)
      const conn = yield* modern(yield* makeTasksServer(finalized, { ttl: "1 minute" }))
      const done = taskIdOf(yield* call(conn, "steps", { n: 0, delayMs: 0 }))
      const running = taskIdOf(yield* call(conn, "hang"))
      yield* settle(conn, done, terminal)
      assert.strictEqual((yield* getTask(conn, done)).ttlMs, 60_000)
      yield* TestClock.adjust("59 seconds")
      assert.strictEqual((yield* getTask(conn, done)).status, "completed")
      assert.strictEqual((yield* getTask(conn, running)).status, "working")
      yield* TestClock.adjust("1 second")
      for (const id of [done, running]) {
        const e = errorOf(yield* conn.call("tasks/get", { taskId: id }, { meta: EXT }))
        assert.strictEqual(e.code, -32602)
        assert.strictEqual(e.message, "Failed to retrieve task: Task not found")
      }
      for (let i = 0; i < 100 && (yield* Ref.get(finalized)) === 0; i++) yield* Effect.yieldNow()
      assert.strictEqual(yield* Ref.get(finalized), 1)
    }))

  it.effect("maxTasks: a finished task makes room; when all run, optional runs in the request and required is -32603", () =>
    Effect.gen(function*() {
      const conn = yield* modern(yield* makeTasksServer(yield* Ref.make(0), { maxTasks: 2 }))
      const first = taskIdOf(yield* call(conn, "steps", { n: 0, delayMs: 0 }))
      yield* settle(conn, first, terminal)
      const a = taskIdOf(yield* call(conn, "hang"))
      const b = taskIdOf(yield* call(conn, "hang"))
      // the finished task was dropped to make room for b
      assert.strictEqual(errorOf(yield* conn.call("tasks/get", { taskId: first }, { meta: EXT })).code, -32602)
      const sync = yield* call(conn, "steps", { n: 0, delayMs: 0 })
      assert.strictEqual(resultOf(sync).resultType, "complete")
      assert.strictEqual(textAt(sync), "done 0 steps")
      const full = errorOf(yield* call(conn, "must"))
      assert.strictEqual(full.code, -32603)
      yield* conn.call("tasks/cancel", { taskId: a }, { meta: EXT })
      yield* settle(conn, a, terminal)
      taskIdOf(yield* call(conn, "must"))
      assert.strictEqual((yield* getTask(conn, b)).status, "working")
    }))

  it.effect("a TaskStore in make's context replaces the in-memory default", () =>
    Effect.gen(function*() {
      const inner = yield* Task.makeMemoryStore
      const writes = yield* Ref.make<ReadonlyArray<string>>([])
      const note = (what: string) => Ref.update(writes, (w) => [...w, what])
      const store: Task.TaskStoreShape = {
        create: (record, limit, now) => Effect.zipRight(note("create"), inner.create(record, limit, now)),
        get: inner.get,
        modify: (taskId, now, f) => Effect.zipRight(note("modify"), inner.modify(taskId, now, f))
      }
      const server = yield* makeTasksServer(yield* Ref.make(0)).pipe(Effect.provideService(Task.TaskStore, store))
      const conn = yield* modern(server)
      const id = taskIdOf(yield* call(conn, "steps", { n: 0, delayMs: 0 }))
      const done = yield* settle(conn, id, terminal)
      assert.strictEqual(done.status, "completed")
      const seen = yield* Ref.get(writes)
      assert.strictEqual(seen[0], "create")
      assert.include(seen, "modify")
      const inStore = yield* inner.get(id, 0)
      assert.strictEqual(inStore._tag === "Some" ? inStore.value.status : undefined, "completed")
    }))

  it.effect("server shutdown interrupts running tasks (finalizers run; status cancelled)", () =>
    Effect.gen(function*() {
      const finalized = yield* Ref.make(0)
      const server = yield* makeTasksServer(finalized)
      const conn = yield* modern(server)
      const id = taskIdOf(yield* call(conn, "hang"))
      yield* McpServer.shutdown(server)
      const done = yield* settle(conn, id, terminal)
      assert.strictEqual(done.status, "cancelled")
      assert.strictEqual(yield* Ref.get(finalized), 1)
    }))

  it.effect("a task is bound to the authenticated caller that created it", () =>
    Effect.gen(function*() {
      const server = yield* makeTasksServer(yield* Ref.make(0))
      const as = (subject: string) => ({ auth: { subject, scopes: [], claims: {} } })
      const meta = { [KEY.protocolVersion]: "2026-07-28", ...EXT }
      const created = yield* dispatchChecked(server, "2026-07-28", {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "hang", arguments: {}, _meta: meta }
      }, as("alice"))
      const id = taskIdOf(created)
      const ask = (subject: string) =>
        dispatchChecked(server, "2026-07-28", {
          jsonrpc: "2.0",
          id: 2,
          method: "tasks/get",
          params: { taskId: id, _meta: meta }
        }, as(subject))
      assert.strictEqual(resultOf(yield* ask("alice")).status, "working")
      assert.strictEqual(errorOf(yield* ask("mallory")).code, -32602)
      yield* McpServer.shutdown(server)
    }))
})

describe("Tasks: client", () => {
  const connect = (server: McpServer.McpServer, options: McpClient.Options = {}) =>
    Effect.flatMap(InProcess.client(server), (t) => McpClient.connect(t, options))

  it.scopedLive("callTool polls a task to its end and answers its elicitation with onElicit", () =>
    Effect.gen(function*() {
      const server = yield* makeTasksServer(yield* Ref.make(0))
      const asked = yield* Ref.make(0)
      const client = yield* connect(server, {
        tasks: true,
        onElicit: () =>
          Effect.as(Ref.update(asked, (n) => n + 1), { action: "accept" as const, content: { name: "Bo" } })
      })
      assert.isTrue(client.tasks.supported)
      assert.strictEqual(Content.textOf(yield* bounded(client.callTool("confirm"))), "confirmed Bo")
      assert.strictEqual(yield* Ref.get(asked), 1)
      assert.strictEqual(
        Content.textOf(yield* bounded(client.callTool("steps", { n: 2, delayMs: 10 }))),
        "done 2 steps"
      )
      const created = yield* client.tasks.callTool("steps", { n: 1, delayMs: 10 })
      assert.strictEqual(Task.isCreateTaskResult(created) ? created.status : undefined, "working")
    }))

  it.scopedLive("client.tasks: get, cancel, and awaitResult failing with Cancelled / the task's McpError", () =>
    Effect.gen(function*() {
      const finalized = yield* Ref.make(0)
      const server = yield* makeTasksServer(finalized)
      const client = yield* connect(server, { tasks: true })
      const created = yield* client.tasks.callTool("hang")
      if (!Task.isCreateTaskResult(created)) return assert.fail("expected a task")
      assert.strictEqual((yield* client.tasks.get(created.taskId)).status, "working")
      const waiting = yield* Effect.fork(client.tasks.awaitResult(created.taskId))
      yield* client.tasks.cancel(created.taskId)
      const outcome = yield* bounded(Effect.flip(waiting.await.pipe(Effect.flatten)))
      assert.strictEqual(outcome._tag === "ClientError" ? outcome.reason : outcome._tag, "Cancelled")
      assert.strictEqual(yield* Ref.get(finalized), 1)
      const missing = yield* Effect.flip(client.tasks.get("nope"))
      assert.strictEqual(missing._tag === "McpError" ? missing.code : 0, -32602)
      const failing = yield* McpServer.make({
        name: "f",
        version: "1",
        tasks: {},
        tools: [
          Tool.fromJsonSchema({
            name: "f",
            task: "required",
            handler: () => Effect.fail(JsonRpc.McpError.internalError("boom"))
          })
        ]
      })
      const other = yield* connect(failing, { tasks: true })
      const e = yield* bounded(Effect.flip(other.callTool("f")))
      assert.strictEqual(e._tag === "McpError" ? e.message : e._tag, "boom")
      const bare = yield* connect(failing)
      const missingCap = yield* Effect.flip(bare.callTool("f"))
      assert.strictEqual(missingCap._tag === "McpError" ? missingCap.code : 0, -32021)
    }))

  it.scopedLive("awaitResult is bounded: maxPolls and timeout fail with ClientError Timeout", () =>
    Effect.gen(function*() {
      const server = yield* makeTasksServer(yield* Ref.make(0))
      const client = yield* connect(server, { tasks: true })
      const created = yield* client.tasks.callTool("hang")
      if (!Task.isCreateTaskResult(created)) return assert.fail("expected a task")
      const polls = yield* Effect.flip(client.tasks.awaitResult(created.taskId, { maxPolls: 3 }))
      assert.strictEqual(polls._tag === "ClientError" ? polls.reason : polls._tag, "Timeout")
      const timed = yield* Effect.flip(client.tasks.awaitResult(created.taskId, { timeout: "50 millis" }))
      assert.strictEqual(timed._tag === "ClientError" ? timed.reason : timed._tag, "Timeout")
      yield* client.tasks.cancel(created.taskId)
    }))
})
