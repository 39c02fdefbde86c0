/**
 * The Tasks extension, server side (SEP-2663): deciding a tool call's mode, creating a task and
 * running its handler in a fiber, and `tasks/get`, `tasks/update`, `tasks/cancel`.
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberMap from "effect/FiberMap"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import type { InputRequired } from "../../Input.js"
import * as JsonRpc from "../../JsonRpc.js"
import type * as McpSchema from "../../McpSchema.js"
import { type RequestContextShape } from "../../RequestContext.js"
import * as Task from "../../Task.js"
import { quote } from "../quote.js"
import { fail, type Failure } from "./failure.js"
import { liftIn } from "./requestContext.js"
import * as TaskWrites from "./taskWrites.js"

const { McpError } = JsonRpc
type McpError = JsonRpc.McpError

/** Rounds of questions one task may ask before it fails. */
const MAX_INPUT_ROUNDS = 100

/** One server's task machinery: settings, the store, and the handlers running here. */
export interface Runtime {
  readonly ttlMs: number
  readonly pollIntervalMs: number
  readonly maxTasks: number
  readonly store: Task.TaskStoreShape
  /** The changes of the tasks running here, kept while the store is unavailable (`taskWrites.ts`). */
  readonly writes: TaskWrites.Writes
  readonly fibers: FiberMap.FiberMap<string>
  /** Tasks waiting for answers: completed when `tasks/update` answered every open question. */
  readonly waiting: Ref.Ref<HashMap.HashMap<string, Deferred.Deferred<void>>>
  readonly shutdown: Deferred.Deferred<void>
  /** Announces that a task's record changed (a `TaskStatus` change event on the server's bus). */
  readonly changed: (taskId: string) => Effect.Effect<void>
}

const millis = (d: Duration.DurationInput | undefined, fallback: Duration.DurationInput): number =>
  Math.max(1, Math.floor(Duration.toMillis(Duration.decode(d ?? fallback))))

export const makeRuntime = (
  options: Task.Options,
  shutdown: Deferred.Deferred<void>,
  changed: (taskId: string) => Effect.Effect<void>
): Effect.Effect<Runtime> =>
  Effect.gen(function*() {
    const provided = yield* Effect.serviceOption(Task.TaskStore)
    const store = Option.isSome(provided) ? provided.value : yield* Task.makeMemoryStore
    // The map's scope is never closed: each task fiber ends on its own (done, cancelled, expired,
    // or server shutdown), and the map drops it then.
    const scope = yield* Scope.make()
    const fibers = yield* FiberMap.make<string>().pipe(Scope.extend(scope))
    const maxTasks = Math.max(1, Math.floor(options.maxTasks ?? 1000))
    const writes = yield* TaskWrites.make(store, maxTasks, changed)
    // kept changes are written when the store is back, until the server shuts down (an instance
    // that stops with changes kept loses them: its tasks then read failed, "instance stopped")
    yield* writes.retry.pipe(Effect.raceFirst(Deferred.await(shutdown)), Effect.forkDaemon)
    const runtime: Runtime = {
      ttlMs: millis(options.ttl, "1 hour"),
      pollIntervalMs: millis(options.pollInterval, "1 second"),
      maxTasks,
      store,
      writes,
      fibers,
      waiting: yield* Ref.make(HashMap.empty<string, Deferred.Deferred<void>>()),
      shutdown,
      changed
    }
    const signals = store.signals
    if (signals !== undefined) {
      // Changes made on other instances (a shared store): until the server shuts down.
      const queue = yield* signals.subscribe.pipe(Scope.extend(scope))
      yield* Queue.take(queue).pipe(
        Effect.flatMap((taskId) =>
          // a store that fails on one task (unreachable, a corrupt record) must not end the loop
          applySignal(runtime, taskId).pipe(
            Effect.catchAllCause((cause) => Effect.logWarning("Task signal not applied", { taskId }, cause))
          )
        ),
        Effect.forever,
        Effect.raceFirst(Deferred.await(shutdown)),
        Effect.ensuring(Scope.close(scope, Exit.void)),
        Effect.forkDaemon
      )
    }
    return runtime
  })

/**
 * A task's record changed on another instance: if this instance runs it, a `cancelled` record
 * interrupts its fiber and a `working` one wakes a handler waiting for answers.
 */
const applySignal = (runtime: Runtime, taskId: string): Effect.Effect<void, Task.TaskStoreError> =>
  Effect.gen(function*() {
    const fiber = yield* FiberMap.get(runtime.fibers, taskId).pipe(Effect.option)
    if (Option.isNone(fiber)) return
    const now = yield* Clock.currentTimeMillis
    const record = yield* runtime.store.get(taskId, now)
    if (Option.isNone(record) || record.value.status === "cancelled") {
      yield* Fiber.interruptFork(fiber.value)
      return
    }
    if (record.value.status === "working") yield* wakeLocal(runtime, taskId)
  })

const wakeLocal = (runtime: Runtime, taskId: string): Effect.Effect<boolean> =>
  Effect.flatMap(Ref.get(runtime.waiting), (m) =>
    Option.match(HashMap.get(m, taskId), {
      onNone: () => Effect.succeed(false),
      onSome: (wake) => Effect.as(Deferred.succeed(wake, undefined), true)
    }))

const declares = (ctx: RequestContextShape): boolean => {
  const ext = ctx.era === "modern" ? ctx.clientCapabilities.extensions : undefined
  return ext !== undefined && JsonRpc.isObject(ext[Task.EXTENSION_ID])
}

const missingExtension = () =>
  McpError.missingClientCapability(
    { extensions: { [Task.EXTENSION_ID]: {} } },
    `Missing required client capability: extension ${Task.EXTENSION_ID}`
  )

const iso = (ms: number): string => new Date(ms).toISOString()

/** The wire `Task` (plus the status's payload when `detailed`). */
export const toWire = (r: Task.TaskRecord, detailed: boolean): Task.DetailedTask => ({
  taskId: r.taskId,
  status: r.status,
  ...(r.statusMessage === undefined ? {} : { statusMessage: r.statusMessage }),
  createdAt: iso(r.createdAt),
  lastUpdatedAt: iso(r.lastUpdatedAt),
  ttlMs: r.ttlMs,
  pollIntervalMs: r.pollIntervalMs,
  ...(detailed && r.status === "input_required" ? { inputRequests: r.inputRequests ?? {} } : {}),
  ...(detailed && r.status === "completed" && r.result !== undefined ? { result: r.result } : {}),
  ...(detailed && r.status === "failed" && r.error !== undefined ? { error: r.error } : {})
})

/** A tool call run by the dispatcher: `ctx` is the one its handler gets. */
export type Execute = (ctx: RequestContextShape) => Effect.Effect<McpSchema.CallToolResult, Failure | InputRequired>

/**
 * Decides how a tool call runs. `None`: run it in the request as usual. `Some`: a task was
 * created (its handler runs in a fiber) and this is the `CreateTaskResult`.
 */
export const maybeStart = (
  runtime: Runtime | undefined,
  policy: Task.Policy | undefined,
  args: JsonRpc.JsonObject,
  ctx: RequestContextShape,
  execute: Execute
): Effect.Effect<Option.Option<Task.CreateTaskResult>, Failure | InputRequired> =>
  Effect.gen(function*() {
    if (policy === undefined || policy === "sync") return Option.none()
    const mode = typeof policy === "function"
      ? yield* liftIn(ctx, () => policy(args, ctx)).pipe(
        Effect.catchTag("McpError", (e) => fail(e))
      )
      : policy
    if (mode === "sync") return Option.none()
    if (runtime === undefined || !declares(ctx)) {
      return mode === "required" ? yield* fail(missingExtension()) : Option.none()
    }
    const now = yield* Clock.currentTimeMillis
    const record: Task.TaskRecord = {
      taskId: crypto.randomUUID(),
      status: "working",
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: runtime.ttlMs,
      pollIntervalMs: runtime.pollIntervalMs,
      expiresAt: now + runtime.ttlMs,
      answers: {},
      subject: ctx.auth?.subject
    }
    // SEP-2663: the task exists (tasks/get resolves) before the CreateTaskResult is sent.
    // Full, or the store unavailable: an optional tool runs in the request instead.
    const created = yield* runtime.store.create(record, runtime.maxTasks, now).pipe(
      Effect.catchTag("TaskStoreError", () => Effect.succeed(undefined))
    )
    if (created !== true) {
      if (mode === "optional") return Option.none()
      return yield* fail(
        created === undefined
          ? storeUnavailable()
          : McpError.internalError("Too many tasks in progress; try again later")
      )
    }
    yield* runtime.writes.start(record)
    yield* FiberMap.run(
      runtime.fibers,
      record.taskId,
      Effect.ensuring(run(runtime, record, ctx, execute), runtime.writes.ended(record.taskId))
    )
    return Option.some<Task.CreateTaskResult>({ resultType: "task", ...toWire(record, false) })
  })

/** A request met an unavailable store: -32603, nothing of the store's own error sent. */
const storeUnavailable = () => McpError.internalError("Task store unavailable; try again later")

/**
 * Changes a live record on behalf of a request (`tasks/update`, `tasks/cancel`); a change (not a
 * record `f` left as it was) is announced to listeners. A task's own changes go through
 * `runtime.writes` (kept while the store is unavailable).
 */
const modify = (runtime: Runtime, taskId: string, f: (r: Task.TaskRecord, now: number) => Task.TaskRecord) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const [next, changed] = yield* TaskWrites.modifyTracked(runtime.store, taskId, now, (r) => f(r, now))
    if (Option.isSome(next) && changed) yield* runtime.changed(taskId)
    return next
  })

/** Moves an unfinished task to a terminal state (a finished one stays as it is). */
const finishing = (change: Partial<Task.TaskRecord>) => (r: Task.TaskRecord, now: number): Task.TaskRecord =>
  Task.isTerminal(r.status) ? r : { ...r, ...change, inputRequests: undefined, lastUpdatedAt: now }

/** The task's own end (from its fiber): kept and written later when the store is unavailable. */
const finish = (runtime: Runtime, taskId: string, change: Partial<Task.TaskRecord>) =>
  runtime.writes.write(taskId, finishing(change))

/**
 * The task's fiber: runs the handler; a question ends a round (as in a multi round-trip
 * request): the task is `input_required` until `tasks/update` answered every open question, then
 * the handler runs again with every answer so far. Interrupted by `tasks/cancel`, the end of the
 * ttl, or the server's shutdown; the handler's finalizers run before the task reads `cancelled`.
 */
const run = (
  runtime: Runtime,
  record: Task.TaskRecord,
  request: RequestContextShape,
  execute: Execute
): Effect.Effect<void> => {
  const { taskId } = record
  // Progress becomes the status message (SEP-2663 has no progress notifications for tasks).
  const progress: RequestContextShape["progress"] = (value, options) =>
    !Number.isFinite(value)
      ? Effect.succeed(false)
      : Effect.map(
        runtime.writes.write(taskId, (r, now) =>
          r.status !== "working" ? r : {
            ...r,
            statusMessage: options?.message ??
              (options?.total === undefined ? `${value}` : `${value}/${options.total}`),
            lastUpdatedAt: now
          }, true),
        Option.isSome
      )
  const contextWith = (responses: Readonly<Record<string, unknown>>): RequestContextShape => ({
    ...request,
    notify: () => Effect.void,
    log: () => Effect.succeed(false),
    progress,
    input: { responses, state: request.input.state, sendRequest: undefined }
  })
  const loop = Effect.gen(function*() {
    let answers: Readonly<Record<string, unknown>> = {}
    for (let round = 0; round <= MAX_INPUT_ROUNDS; round++) {
      const outcome = yield* Effect.either(execute(contextWith({ ...request.input.responses, ...answers })))
      if (outcome._tag === "Right") {
        yield* finish(runtime, taskId, {
          status: "completed",
          result: { resultType: "complete", ...outcome.right }
        })
        return
      }
      const e = outcome.left
      if (e._tag === "Failure") {
        yield* finish(runtime, taskId, {
          status: "failed",
          statusMessage: e.error.message,
          error: e.error.toErrorObject()
        })
        return
      }
      const wake = yield* Deferred.make<void>()
      yield* Ref.update(runtime.waiting, (m) => HashMap.set(m, taskId, wake))
      const asked = yield* runtime.writes.write(taskId, (r, now) =>
        Task.isTerminal(r.status) ? r : {
          ...r,
          status: "input_required",
          inputRequests: e.requests,
          lastUpdatedAt: now
        })
      if (Option.isNone(asked) || Task.isTerminal(asked.value.status)) return
      yield* Deferred.await(wake).pipe(
        Effect.ensuring(Ref.update(runtime.waiting, (m) => HashMap.remove(m, taskId)))
      )
      // the answers were just written to the store: read them back (while it is reachable again)
      const current = yield* Effect.flatMap(Clock.currentTimeMillis, (now) => runtime.store.get(taskId, now)).pipe(
        Effect.retry({ schedule: TaskWrites.retrySchedule, while: (e) => e._tag === "TaskStoreError" })
      )
      if (Option.isNone(current)) return
      answers = current.value.answers
    }
    yield* finish(runtime, taskId, {
      status: "failed",
      statusMessage: `The task asked for input more than ${MAX_INPUT_ROUNDS} times`,
      error: McpError.internalError(`The task asked for input more than ${MAX_INPUT_ROUNDS} times`).toErrorObject()
    })
  })
  return loop.pipe(
    Effect.onInterrupt(() => finish(runtime, taskId, { status: "cancelled", statusMessage: "The task was cancelled" })),
    Effect.raceFirst(Effect.sleep(Duration.millis(record.ttlMs))),
    Effect.raceFirst(Deferred.await(runtime.shutdown)),
    // a defect outside the handler (the handler's own are tool results): the task failed
    Effect.catchAllCause(() =>
      finish(runtime, taskId, {
        status: "failed",
        statusMessage: "Internal error",
        error: McpError.internalError().toErrorObject()
      })
    ),
    Effect.asVoid
  )
}

/**
 * `subscriptions/listen` asking for `notifications.taskIds` from a request that does not declare
 * the extension: -32021 (SEP-2663 "Task Status Notifications"). A declaring client gets
 * `notifications/tasks` for the ids it may read (`taskNotifications.ts`).
 */
export const listenRequires = (
  runtime: Runtime | undefined,
  params: JsonRpc.JsonObject,
  ctx: RequestContextShape
): McpError | undefined =>
  runtime !== undefined && JsonRpc.isObject(params.notifications) && params.notifications.taskIds !== undefined &&
    !declares(ctx)
    ? missingExtension()
    : undefined

/** `tasks/*` need the extension declared by the request itself: else -32021 (SEP-2663). */
export const requireExtension = (ctx: RequestContextShape): McpError | undefined =>
  declares(ctx) ? undefined : missingExtension()

// ---------------------------------------------------------------------------------------------
// tasks/get, tasks/update, tasks/cancel
// ---------------------------------------------------------------------------------------------

/** `tasks/get` and `tasks/cancel` params. */
export const TaskIdParams = Schema.Struct({ taskId: Schema.String })

/** `tasks/update` params. */
export const UpdateParams = Schema.Struct({
  taskId: Schema.String,
  inputResponses: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

const notFound = (taskId: string) =>
  fail(McpError.invalidParams("Failed to retrieve task: Task not found", { taskId: quote(taskId) }))

/**
 * The caller's live task, or -32602 (unknown, expired, or another caller's). A task running here
 * whose changes wait for the store reads as this instance knows it (those changes applied).
 */
export const lookup = (
  runtime: Runtime,
  taskId: string,
  ctx: RequestContextShape
): Effect.Effect<Task.TaskRecord, Failure | Task.TaskStoreError> =>
  Effect.gen(function*() {
    const kept = yield* runtime.writes.kept(taskId)
    const found = Option.isSome(kept)
      ? kept
      : yield* Effect.flatMap(Clock.currentTimeMillis, (now) => runtime.store.get(taskId, now))
    if (Option.isNone(found) || (found.value.subject !== undefined && found.value.subject !== ctx.auth?.subject)) {
      return yield* notFound(taskId)
    }
    return found.value
  })

/** A store that cannot be reached fails the request with -32603. */
const answerUnavailable = <A>(effect: Effect.Effect<A, Failure | Task.TaskStoreError>): Effect.Effect<A, Failure> =>
  Effect.catchTag(effect, "TaskStoreError", () => fail(storeUnavailable()))

/** The caller's task with its status's payload; the store's unavailability stays apart (listeners retry). */
export const read = (
  runtime: Runtime,
  taskId: string,
  ctx: RequestContextShape
): Effect.Effect<Task.DetailedTask, Failure | Task.TaskStoreError> =>
  Effect.map(lookup(runtime, taskId, ctx), (r) => toWire(r, true))

/** `tasks/get`: the caller's task, with its status's payload. */
export const get = (
  runtime: Runtime,
  { taskId }: typeof TaskIdParams.Type,
  ctx: RequestContextShape
): Effect.Effect<Task.DetailedTask, Failure> => answerUnavailable(read(runtime, taskId, ctx))

/**
 * `tasks/update`: answers to the task's open questions. Answers to keys that are not open are
 * ignored (SEP-2663); the task resumes when every open question has an answer.
 */
export const update = (
  runtime: Runtime,
  { inputResponses, taskId }: typeof UpdateParams.Type,
  ctx: RequestContextShape
): Effect.Effect<McpSchema.EmptyResult, Failure> =>
  answerUnavailable(Effect.gen(function*() {
    yield* lookup(runtime, taskId, ctx)
    const updated = yield* modify(runtime, taskId, (r, now) => {
      const open = r.inputRequests ?? {}
      const given = Object.entries(inputResponses).filter(([k]) => k in open)
      if (r.status !== "input_required" || given.length === 0) return r
      const left = Object.fromEntries(Object.entries(open).filter(([k]) => !(k in inputResponses)))
      const done = Object.keys(left).length === 0
      return {
        ...r,
        answers: { ...r.answers, ...Object.fromEntries(given) },
        status: done ? "working" : "input_required",
        inputRequests: done ? undefined : left,
        lastUpdatedAt: now
      }
    })
    if (Option.isSome(updated) && updated.value.status === "working") {
      const woken = yield* wakeLocal(runtime, taskId)
      if (!woken && runtime.store.signals !== undefined) yield* runtime.store.signals.send(taskId)
    }
    return {}
  }))

/**
 * `tasks/cancel`: cooperative and eventually consistent (SEP-2663): the ack does not wait for the
 * handler's finalizers; the task reads `cancelled` once they ran.
 */
export const cancel = (
  runtime: Runtime,
  { taskId }: typeof TaskIdParams.Type,
  ctx: RequestContextShape
): Effect.Effect<McpSchema.EmptyResult, Failure> =>
  answerUnavailable(Effect.gen(function*() {
    const record = yield* lookup(runtime, taskId, ctx)
    if (Task.isTerminal(record.status)) return {}
    const fiber = yield* FiberMap.get(runtime.fibers, taskId).pipe(Effect.option)
    if (Option.isSome(fiber)) yield* Fiber.interruptFork(fiber.value)
    else {
      yield* modify(runtime, taskId, finishing({ status: "cancelled", statusMessage: "The task was cancelled" }))
      // a shared store: the instance running the task interrupts it
      if (runtime.store.signals !== undefined) yield* runtime.store.signals.send(taskId)
    }
    return {}
  }))
