/**
 * The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663; 2026-07-28 only): a `tools/call`
 * may be answered at once with a task handle (`resultType: "task"`) while the tool runs on; the
 * client polls `tasks/get` until the task is terminal, answers the task's questions with
 * `tasks/update` and may ask for cancellation with `tasks/cancel`.
 *
 * Server side: give the server a `tasks` option ({@link Options}) and a tool a `task` policy
 * ({@link Policy}). Task state is kept by a {@link TaskStore} (in memory by default). Client side:
 * `McpClient.connect(transport, {tasks: true})` declares the extension; `McpClient.callTool` then
 * polls a task to completion transparently, and `client.tasks` ({@link TaskClient}) exposes the
 * lifecycle.
 *
 * Guide: [Tasks](https://github.com/presa-mcp/presa-mcp/blob/main/docs/input-progress-tasks.md#tasks-long-running-tools).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { HandlerResult } from "./Handler.js"
import type { InputRequest, InputRequired } from "./Input.js"
import type * as JsonRpc from "./JsonRpc.js"
import type { CallError } from "./McpClient.js"
import type * as McpSchema from "./McpSchema.js"
import type { RequestContextShape } from "./RequestContext.js"

/**
 * The extension identifier, declared under `capabilities.extensions` (server: `server/discover`;
 * client: each request's `_meta["io.modelcontextprotocol/clientCapabilities"]`), settings `{}`.
 *
 * @since 0.1.0
 * @category constants
 */
export const EXTENSION_ID = "io.modelcontextprotocol/tasks"

/**
 * The methods the extension adds (SEP-2663). `tasks/result` and `tasks/list` of the 2025-11-25
 * experimental tasks do not exist here (-32601).
 *
 * @since 0.1.0
 * @category constants
 */
export const Method = {
  get: "tasks/get",
  update: "tasks/update",
  cancel: "tasks/cancel"
} as const

/**
 * The method of the extension's status notification (SEP-2663 "Task Status Notifications"):
 * `notifications/tasks`, whose params are a complete {@link DetailedTask}, the same as `tasks/get`
 * gives at that moment. A server sends it on a `subscriptions/listen` stream for the ids the
 * client listed in `notifications.taskIds` and the server acknowledged (`McpClient.listen` with
 * `taskIds`; read one with {@link fromNotification}).
 *
 * @since 0.2.0
 * @category constants
 */
export const STATUS_NOTIFICATION = "notifications/tasks"

/**
 * A task's status. `completed`, `failed` and `cancelled` are terminal: the task no longer changes.
 *
 * @since 0.1.0
 * @category models
 */
export type Status = "working" | "input_required" | "completed" | "failed" | "cancelled"

/**
 * Is the status terminal (`completed`, `failed`, `cancelled`)?
 *
 * @since 0.1.0
 * @category predicates
 */
export const isTerminal = (status: Status): boolean =>
  status === "completed" || status === "failed" || status === "cancelled"

/**
 * How a tool is run for a modern client (SEP-2663 lets the server decide per request):
 *
 * - `"sync"` (the default): always answered with the tool's result;
 * - `"optional"`: a task when the request declares the extension, else the result;
 * - `"required"`: a task when the request declares the extension, else `McpError` -32021 with
 *   `data.requiredCapabilities.extensions["io.modelcontextprotocol/tasks"]` (legacy sessions too:
 *   the extension does not exist there, so a legacy client never declares it);
 * - a function of the arguments and the request context yielding one of those, decided per call.
 *   It runs in the request, before any task exists, so it may ask the client with `Input.*`
 *   (multi round-trip, SEP-2663 "resolve all MRTR exchanges synchronously before responding with
 *   a CreateTaskResult"); the answers it gathered are given to the task, so the handler asking the
 *   same questions gets them at once.
 *
 * @since 0.1.0
 * @category models
 */
export type Policy =
  | "sync"
  | "optional"
  | "required"
  | ((
    args: JsonRpc.JsonObject,
    ctx: RequestContextShape
  ) => HandlerResult<"sync" | "optional" | "required", JsonRpc.McpError | InputRequired>)

/**
 * The server's `tasks` option; setting it advertises the extension.
 *
 * - `ttl`: how long a task exists, from its creation (default 1 hour). It is sent as `ttlMs`. A
 *   task still running when it elapses is interrupted; a finished one is retained until then, and
 *   afterwards `tasks/get` answers -32602 as for an unknown task;
 * - `pollInterval`: the suggested polling interval, sent as `pollIntervalMs` (default 1 second);
 * - `maxTasks`: how many tasks (running or retained) the server holds (default 1,000). When full,
 *   the oldest finished task is dropped to make room; when every held task is still running, an
 *   `optional` tool runs synchronously and a `required` one fails with `McpError` -32603.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly ttl?: Duration.DurationInput
  readonly pollInterval?: Duration.DurationInput
  readonly maxTasks?: number
}

// ---------------------------------------------------------------------------------------------
// wire shapes (SEP-2663 §Tasks; the 2026-07-28 schema does not define them)
// ---------------------------------------------------------------------------------------------

const Json = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/**
 * `Task`: `taskId`, `status`, `statusMessage?`, `createdAt`/`lastUpdatedAt` (ISO 8601), `ttlMs`
 * (integer milliseconds from creation, or `null` for unlimited), `pollIntervalMs?`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Task = Schema.Struct({
  taskId: Schema.String,
  status: Schema.Literal("working", "input_required", "completed", "failed", "cancelled"),
  statusMessage: Schema.optional(Schema.String),
  createdAt: Schema.String,
  lastUpdatedAt: Schema.String,
  ttlMs: Schema.NullOr(Schema.Int),
  pollIntervalMs: Schema.optional(Schema.Int)
}, Json)

/**
 * @since 0.1.0
 * @category models
 */
export type Task = typeof Task.Type

/**
 * `DetailedTask`, the `tasks/get` result: a `Task` plus `inputRequests` (when `input_required`),
 * `result` (the tool's `CallToolResult`, when `completed`) or `error` (the JSON-RPC error, when
 * `failed`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const DetailedTask = Schema.Struct({
  ...Task.fields,
  inputRequests: Schema.optional(Json),
  result: Schema.optional(Json),
  error: Schema.optional(
    Schema.Struct({ code: Schema.Int, message: Schema.String, data: Schema.optional(Schema.Unknown) })
  )
}, Json)

/**
 * @since 0.1.0
 * @category models
 */
export type DetailedTask = typeof DetailedTask.Type

const decodeDetailed = Schema.decodeUnknownOption(DetailedTask)

/**
 * The task a `notifications/tasks` ({@link STATUS_NOTIFICATION}) carries, decoded with
 * {@link DetailedTask} (its `_meta`, e.g. the listen's subscription id, left out: what remains is
 * what `tasks/get` gives). `None` for another method or params that are not a `DetailedTask`.
 *
 * @since 0.2.0
 * @category decoding
 */
export const fromNotification = (notification: JsonRpc.Notification): Option.Option<DetailedTask> => {
  if (notification.method !== STATUS_NOTIFICATION || notification.params === undefined) return Option.none()
  const { _meta, ...task } = notification.params
  return decodeDetailed(task)
}

/**
 * `CreateTaskResult`: a flat `Result & Task` with `resultType: "task"`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateTaskResult = Schema.Struct({
  ...Task.fields,
  resultType: Schema.Literal("task")
}, Json)

/**
 * @since 0.1.0
 * @category models
 */
export type CreateTaskResult = typeof CreateTaskResult.Type

/**
 * Is this `tools/call` answer a task handle (`resultType: "task"`) rather than the tool's result?
 *
 * @since 0.1.0
 * @category predicates
 */
export const isCreateTaskResult = (
  result: CreateTaskResult | McpSchema.CallToolResult
): result is CreateTaskResult => result.resultType === "task"

// ---------------------------------------------------------------------------------------------
// state
// ---------------------------------------------------------------------------------------------

/**
 * What the server keeps about one task (times are epoch milliseconds):
 *
 * - `inputRequests`: the questions still unanswered (`input_required` only);
 * - `answers`: every answer delivered by `tasks/update` so far (keys are unique over the task's life);
 * - `result` / `error`: the `CallToolResult` / JSON-RPC error once `completed` / `failed`;
 * - `subject`: the authenticated caller that created it (HTTP with a token verifier), if any:
 *   other callers are told the task does not exist.
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskRecord {
  readonly taskId: string
  readonly status: Status
  readonly statusMessage?: string | undefined
  readonly createdAt: number
  readonly lastUpdatedAt: number
  readonly ttlMs: number
  readonly pollIntervalMs: number
  readonly expiresAt: number
  readonly inputRequests?: Readonly<Record<string, InputRequest>> | undefined
  readonly answers: Readonly<Record<string, unknown>>
  readonly result?: JsonRpc.JsonObject | undefined
  readonly error?: JsonRpc.ErrorObject | undefined
  readonly subject?: string | undefined
}

/**
 * Where task state lives. Every operation is atomic per store. A record whose `expiresAt` is not
 * after `now` is gone: `get` and `modify` yield `None` (and may drop it).
 *
 * - `create`: adds a record unless `limit` live records are held; to make room it drops the
 *   finished record that expires first. Yields `false` when every held record is unfinished.
 * - `get`: the live record.
 * - `modify`: replaces the live record with `f(record)`; yields the new one.
 *
 * Every operation fails with {@link TaskStoreError} (since 0.2.0) when the store cannot be
 * reached, instead of waiting on it; a store kept in memory never fails. The server then answers
 * the request -32603 ("Task store unavailable"), and a change of a task it runs (its end, a
 * question, progress) is kept by the instance and written when the store is back (see
 * docs/scale-out.md, "When Redis is away"). Other faults (a corrupt record) are defects of the
 * request that met them.
 *
 * The running handlers (fibers) are not in the store: they belong to the server instance that
 * created the task. A store shared by several instances serves `tasks/get` anywhere. With
 * `signals` (since 0.2.0), `tasks/update` and `tasks/cancel` reach the handler from any instance:
 * the instance that changed the record sends the task id, and the one running the task re-reads
 * the record (a `cancelled` task's fiber is interrupted, an answered one resumes). Without
 * `signals` they reach the handler only on its own instance — route them there with the
 * `Mcp-Name: <taskId>` header (SEP-2663 "Streamable HTTP: Routing Headers").
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskStoreShape {
  readonly create: (record: TaskRecord, limit: number, now: number) => Effect.Effect<boolean, TaskStoreError>
  readonly get: (taskId: string, now: number) => Effect.Effect<Option.Option<TaskRecord>, TaskStoreError>
  readonly modify: (
    taskId: string,
    now: number,
    f: (record: TaskRecord) => TaskRecord
  ) => Effect.Effect<Option.Option<TaskRecord>, TaskStoreError>
  readonly signals?: TaskSignals | undefined
}

/**
 * A {@link TaskStore} could not reach its backend (or the backend failed the operation):
 * `operation` names it (`"get"`, `"modify"`, …), `message` says why. In-process only: a request
 * that meets it is answered -32603 with the message "Task store unavailable" (nothing of this
 * error is sent).
 *
 * @since 0.2.0
 * @category errors
 */
export class TaskStoreError extends Data.TaggedError("TaskStoreError")<{
  readonly operation: string
  readonly message: string
}> {}

/**
 * Task-change signals between instances sharing a store: `send(taskId)` tells every instance
 * (this one included) that the record of `taskId` changed; `subscribe` is a queue of the task ids
 * sent from the call on (closed with the Scope). Delivery is best effort: a lost signal leaves a
 * cancelled task's handler running until it ends or its ttl passes (its record stays `cancelled`).
 *
 * @since 0.2.0
 * @category models
 */
export interface TaskSignals {
  readonly send: (taskId: string) => Effect.Effect<void>
  readonly subscribe: Effect.Effect<Queue.Dequeue<string>, never, Scope.Scope>
}

/**
 * The task store as a service. `McpServer.make` uses the one in its context when there is one,
 * else a fresh in-memory store ({@link makeMemoryStore}).
 *
 * @since 0.1.0
 * @category models
 */
export class TaskStore extends Context.Tag("presa-mcp/TaskStore")<TaskStore, TaskStoreShape>() {}

/**
 * An in-memory store: one `Ref` of a `HashMap` of records.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemoryStore: Effect.Effect<TaskStoreShape> = Effect.map(
  Ref.make(HashMap.empty<string, TaskRecord>()),
  (ref): TaskStoreShape => {
    const live = (m: HashMap.HashMap<string, TaskRecord>, now: number) => HashMap.filter(m, (r) => r.expiresAt > now)
    return {
      create: (record, limit, now) =>
        Ref.modify(ref, (all) => {
          let m = live(all, now)
          if (HashMap.size(m) >= limit) {
            const finished = Array.from(HashMap.values(m)).filter((r) => isTerminal(r.status))
              .sort((a, b) => a.expiresAt - b.expiresAt)
            for (const r of finished) {
              if (HashMap.size(m) < limit) break
              m = HashMap.remove(m, r.taskId)
            }
            if (HashMap.size(m) >= limit) return [false, m]
          }
          return [true, HashMap.set(m, record.taskId, record)]
        }),
      get: (taskId, now) =>
        Effect.map(Ref.get(ref), (m) => Option.filter(HashMap.get(m, taskId), (r) => r.expiresAt > now)),
      modify: (taskId, now, f) =>
        Ref.modify(ref, (m) => {
          const current = Option.filter(HashMap.get(m, taskId), (r) => r.expiresAt > now)
          if (Option.isNone(current)) return [Option.none(), HashMap.remove(m, taskId)]
          const next = f(current.value)
          return [Option.some(next), HashMap.set(m, taskId, next)]
        })
    }
  }
)

/**
 * A layer providing a fresh in-memory {@link TaskStore}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<TaskStore> = Layer.effect(TaskStore, makeMemoryStore)

// ---------------------------------------------------------------------------------------------
// client
// ---------------------------------------------------------------------------------------------

/**
 * Bounds of waiting for a task's end: `timeout` (default 10 minutes) and `maxPolls` (default
 * 10,000 `tasks/get` requests). Between polls the client waits the task's `pollIntervalMs`
 * (default 1 second when the server gives none), kept within 10 ms – 60 s. Exceeding a bound
 * fails with `ClientError` `Timeout`. Giving `maxPolls` makes `awaitResult` poll only (no
 * `notifications/tasks`; since 0.2.0).
 *
 * @since 0.1.0
 * @category models
 */
export interface AwaitOptions {
  readonly timeout?: Duration.DurationInput
  readonly maxPolls?: number
}

/**
 * The client side of the extension (`client.tasks`). Every method needs a modern connection to a
 * server that declares the extension and a client that declares it (`McpClient.Options.tasks`);
 * the server answers -32021 to a client that does not.
 *
 * - `supported`: does the server declare the extension?
 * - `callTool`: `tools/call` that yields what the server chose: a `CreateTaskResult` or the
 *   `CallToolResult` (input rounds before the task are answered with the client's handlers);
 * - `get`: `tasks/get`, the `DetailedTask` (-32602 for an unknown or expired task);
 * - `update`: `tasks/update` with `inputResponses` (an acknowledgement);
 * - `cancel`: `tasks/cancel` (an acknowledgement; the task becomes `cancelled` eventually, or
 *   finishes otherwise if it was already done);
 * - `awaitResult`: waits until the task is terminal, answering `input_required`
 *   questions with the client's `onElicit` / `onSample` / `onRoots` (each key once) through
 *   `tasks/update`; yields the `CallToolResult` of a `completed` task, fails with the task's
 *   `McpError` when it `failed`, and with `ClientError` `Cancelled` when it was cancelled.
 *   Since 0.2.0 it first opens a `subscriptions/listen` with `taskIds: [taskId]`: when the server
 *   acknowledges the id, the task's `notifications/tasks` drive it (no `tasks/get`, except one when
 *   no notification came within 1 second of the ack: a server need not send the current state on
 *   listen); else (no listen, the id not acknowledged, the stream ended) it polls `tasks/get`. With
 *   `maxPolls` given it only polls.
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskClient {
  readonly supported: boolean
  readonly callTool: (
    name: string,
    args?: JsonRpc.JsonObject
  ) => Effect.Effect<CreateTaskResult | McpSchema.CallToolResult, CallError>
  readonly get: (taskId: string) => Effect.Effect<DetailedTask, CallError>
  readonly update: (
    taskId: string,
    inputResponses: Readonly<Record<string, unknown>>
  ) => Effect.Effect<void, CallError>
  readonly cancel: (taskId: string) => Effect.Effect<void, CallError>
  readonly awaitResult: (
    taskId: string,
    options?: AwaitOptions
  ) => Effect.Effect<McpSchema.CallToolResult, CallError>
}
