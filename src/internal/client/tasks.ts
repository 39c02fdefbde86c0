/**
 * The Tasks extension, client side (`io.modelcontextprotocol/tasks`, SEP-2663): `client.tasks` and the polling that
 * `McpClient.callTool` does when a server answers with a task.
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.js"
import type { CallError, ListenFilter, Subscription } from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import * as Task from "../../Task.js"
import { decoder } from "./decode.js"
import { ClientError } from "./error.js"
import * as ClientInput from "./input.js"

const MIN_POLL_MS = 10
const MAX_POLL_MS = 60_000
const DEFAULT_POLL_MS = 1000

const decodeDetailedTask = decoder(Task.DetailedTask, Task.Method.get)
const decodeTaskResult = decoder(McpSchema.CallToolResult, Task.Method.get)
/** A `tools/call` result that is a task (`resultType: "task"`). */
export const decodeCreateTaskResult = decoder(Task.CreateTaskResult, McpSchema.Method.toolsCall)
/** A final `tools/call` result (never cached: each is its own parse of the wire, so `fresh`). */
export const decodeCallToolResult = decoder(McpSchema.CallToolResult, McpSchema.Method.toolsCall, { fresh: true })

/** What the task client needs from the client it belongs to. */
export interface Deps {
  /** Does the server declare the extension? */
  readonly supported: boolean
  /** A request with the client's `_meta` (and its `input_required` rounds answered). */
  readonly call: (method: string, params: JsonRpc.JsonObject) => Effect.Effect<JsonRpc.JsonObject, CallError>
  readonly handlers: ClientInput.Handlers
  /** `McpClient.listen` (modern clients only): `awaitResult` listens for the task's notifications. */
  readonly listen?: ((filter: ListenFilter) => Effect.Effect<Subscription, CallError, Scope.Scope>) | undefined
}

/** Is this `tools/call` result a `CreateTaskResult`? */
export const isTaskResult = (result: JsonRpc.JsonObject): boolean => result.resultType === "task"

export const make = (deps: Deps): Task.TaskClient => {
  const get = (taskId: string) => deps.call(Task.Method.get, { taskId }).pipe(Effect.flatMap(decodeDetailedTask))
  const update = (taskId: string, inputResponses: Readonly<Record<string, unknown>>) =>
    Effect.asVoid(deps.call(Task.Method.update, { taskId, inputResponses }))
  const cancel = (taskId: string) => Effect.asVoid(deps.call(Task.Method.cancel, { taskId }))

  /**
   * One status of the task: its end (the result, or the failure), or `"answered"` (open
   * questions answered through `tasks/update`, each key once: SEP-2663 keys are unique over a
   * task's life), or `"waiting"`.
   */
  const step =
    (taskId: string, answered: Set<string>) =>
    (task: Task.DetailedTask): Effect.Effect<McpSchema.CallToolResult | "answered" | "waiting", CallError> =>
      Effect.gen(function*() {
        switch (task.status) {
          case "completed":
            return yield* decodeTaskResult(task.result ?? {})
          case "failed": {
            const error = task.error
            return yield* error === undefined
              ? new JsonRpc.McpError({
                code: JsonRpc.ErrorCode.InternalError,
                message: task.statusMessage ?? "The task failed"
              })
              : JsonRpc.McpError.fromErrorObject(error)
          }
          case "cancelled":
            return yield* new ClientError({
              reason: "Cancelled",
              message: `task ${taskId} was cancelled${
                task.statusMessage === undefined ? "" : `: ${task.statusMessage}`
              }`
            })
          case "input_required": {
            const open = Object.fromEntries(
              Object.entries(task.inputRequests ?? {}).filter(([key]) => !answered.has(key))
            )
            if (Object.keys(open).length === 0) return "waiting"
            const responses = yield* ClientInput.fulfil(deps.handlers, open).pipe(
              Effect.mapError((problem) =>
                new ClientError({
                  reason: "Input",
                  message: `task ${taskId}: ${problem.message}`,
                  cause: problem.cause
                })
              )
            )
            yield* update(taskId, responses)
            for (const key of Object.keys(open)) answered.add(key)
            return "answered"
          }
          case "working":
            return "waiting"
        }
      })

  const poll = (taskId: string, maxPolls: number, answered: Set<string>) =>
    Effect.gen(function*() {
      const next = step(taskId, answered)
      for (let n = 0; n < maxPolls; n++) {
        const task = yield* get(taskId)
        const outcome = yield* next(task)
        if (outcome === "answered") continue
        if (outcome !== "waiting") return outcome
        const interval = Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, task.pollIntervalMs ?? DEFAULT_POLL_MS))
        yield* Effect.sleep(Duration.millis(interval))
      }
      return yield* new ClientError({
        reason: "Timeout",
        message: `task ${taskId} did not finish within ${maxPolls} polls`
      })
    })

  /**
   * The task's end from its `notifications/tasks` on a listen naming it; `None` when there is no
   * listen, the server did not acknowledge the id, or the stream ended before the end (then the
   * caller polls). No notification within {@link DEFAULT_POLL_MS} of the ack: one `tasks/get`.
   */
  const watch = (
    listen: NonNullable<Deps["listen"]>,
    taskId: string,
    answered: Set<string>
  ): Effect.Effect<Option.Option<McpSchema.CallToolResult>, CallError> =>
    Effect.scoped(Effect.gen(function*() {
      const subscription = yield* Effect.option(listen({ taskIds: [taskId] }))
      if (Option.isNone(subscription) || !(subscription.value.acknowledged.taskIds ?? []).includes(taskId)) {
        return Option.none()
      }
      const seen = yield* Ref.make(false)
      const statuses = subscription.value.notifications.pipe(
        // a listen that failed (relisten gave up): polling takes over
        Stream.catchAll(() => Stream.empty),
        Stream.filterMap(Task.fromNotification),
        Stream.filter((task) => task.taskId === taskId),
        Stream.tap(() => Ref.set(seen, true))
      )
      const late = Stream.unwrap(Effect.gen(function*() {
        yield* Effect.sleep(Duration.millis(DEFAULT_POLL_MS))
        return (yield* Ref.get(seen)) ? Stream.empty : Stream.fromEffect(get(taskId))
      }))
      return yield* Stream.merge(statuses, late).pipe(
        Stream.mapEffect(step(taskId, answered)),
        Stream.filterMap((outcome) => typeof outcome === "string" ? Option.none() : Option.some(outcome)),
        Stream.runHead
      )
    }))

  const awaitResult = (taskId: string, options?: Task.AwaitOptions) => {
    const timeout = Duration.decode(options?.timeout ?? "10 minutes")
    const maxPolls = Math.max(1, Math.floor(options?.maxPolls ?? 10_000))
    const answered = new Set<string>()
    const listen = deps.listen
    const notified = listen === undefined || options?.maxPolls !== undefined
      ? Effect.succeedNone
      : watch(listen, taskId, answered)
    return notified.pipe(
      Effect.flatMap(Option.match({
        onNone: () => poll(taskId, maxPolls, answered),
        onSome: Effect.succeed
      })),
      Effect.timeoutFail({
        duration: timeout,
        onTimeout: () =>
          new ClientError({
            reason: "Timeout",
            message: `task ${taskId} did not finish within ${Duration.format(timeout)}`
          })
      })
    )
  }

  return {
    supported: deps.supported,
    callTool: (name, args) =>
      deps.call(McpSchema.Method.toolsCall, { name, arguments: args ?? {} }).pipe(
        Effect.flatMap((result): Effect.Effect<Task.CreateTaskResult | McpSchema.CallToolResult, ClientError> =>
          isTaskResult(result)
            ? decodeCreateTaskResult(result)
            : decodeCallToolResult(result)
        )
      ),
    get,
    update,
    cancel,
    awaitResult
  }
}
