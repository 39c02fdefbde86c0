/**
 * The Tasks extension, client side (`io.modelcontextprotocol/tasks`, SEP-2663): `client.tasks` and the polling that
 * `McpClient.callTool` does when a server answers with a task.
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as JsonRpc from "../../JsonRpc.js"
import type { CallError } from "../../McpClient.js"
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
}

/** Is this `tools/call` result a `CreateTaskResult`? */
export const isTaskResult = (result: JsonRpc.JsonObject): boolean => result.resultType === "task"

export const make = (deps: Deps): Task.TaskClient => {
  const get = (taskId: string) => deps.call(Task.Method.get, { taskId }).pipe(Effect.flatMap(decodeDetailedTask))
  const update = (taskId: string, inputResponses: Readonly<Record<string, unknown>>) =>
    Effect.asVoid(deps.call(Task.Method.update, { taskId, inputResponses }))
  const cancel = (taskId: string) => Effect.asVoid(deps.call(Task.Method.cancel, { taskId }))

  const poll = (taskId: string, maxPolls: number) =>
    Effect.gen(function*() {
      const answered = new Set<string>()
      for (let n = 0; n < maxPolls; n++) {
        const task = yield* get(taskId)
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
            // Each key is answered once (SEP-2663: keys are unique over a task's life).
            const open = Object.fromEntries(
              Object.entries(task.inputRequests ?? {}).filter(([key]) => !answered.has(key))
            )
            if (Object.keys(open).length > 0) {
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
              continue
            }
            break
          }
          case "working":
            break
        }
        const interval = Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, task.pollIntervalMs ?? DEFAULT_POLL_MS))
        yield* Effect.sleep(Duration.millis(interval))
      }
      return yield* new ClientError({
        reason: "Timeout",
        message: `task ${taskId} did not finish within ${maxPolls} polls`
      })
    })

  const awaitResult = (taskId: string, options?: Task.AwaitOptions) => {
    const timeout = Duration.decode(options?.timeout ?? "10 minutes")
    const maxPolls = Math.max(1, Math.floor(options?.maxPolls ?? 10_000))
    return poll(taskId, maxPolls).pipe(
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
