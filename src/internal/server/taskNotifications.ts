/**
 * Task status notifications on `subscriptions/listen` (Tasks extension, SEP-2663 "Task Status
 * Notifications"): which of the asked `taskIds` a listen honours, and when it sends
 * `notifications/tasks` for them. Documented in docs/input-progress-tasks.md ("Task status
 * notifications").
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type { RequestContextShape } from "../../RequestContext.js"
import * as Task from "../../Task.js"
import * as Tasks from "./tasks.js"

/** Task ids one listen honours at most (the first distinct ones asked; the rest are left out of the ack). */
export const MAX_TASK_IDS = 100

/** What a watch knows of one task: the JSON last sent ("" before the first), when its ttl ends (epoch ms). */
interface Seen {
  readonly sent: string
  readonly expiresAt: number
}

/** The tasks one listen reports on. */
export interface Watch {
  /** The ids honoured: those the caller may `tasks/get` now, distinct, in the order asked. */
  readonly taskIds: ReadonlyArray<string>
  /**
   * Re-reads `taskId` when it is watched (through `tasks/get`'s own path) and sends it when it
   * differs from what was last sent for it; a terminal or expired task is no longer watched. A task
   * that vanished before its ttl ended (a Redis that restarted empty, until the instance running
   * it writes it again) and a store that cannot be reached are read again later. One refresh at a
   * time, so notifications of a task go out in the order read.
   */
  readonly refresh: (taskId: string) => Effect.Effect<void>
  /** Refreshes every watched task (the first call sends each one's current state). */
  readonly refreshAll: Effect.Effect<void>
  /**
   * Refreshes every watched task each poll interval (the server's `tasks.pollInterval`) while
   * any is watched — it catches a change that published nothing: an instance that stopped, a
   * lost change event — then waits forever. Bounded: at most {@link MAX_TASK_IDS} reads a round,
   * and a task is watched at most until its ttl ends.
   */
  readonly recheck: Effect.Effect<never>
}

/**
 * The watch of `asked` for the caller of `ctx`: the ids it may read are honoured (an unknown,
 * expired or another caller's id is left out, not an error), at most {@link MAX_TASK_IDS}.
 * `send` writes one `notifications/tasks`.
 */
export const watch = (
  runtime: Tasks.Runtime,
  asked: ReadonlyArray<string>,
  ctx: RequestContextShape,
  send: (task: Task.DetailedTask) => Effect.Effect<void>
): Effect.Effect<Watch> =>
  Effect.gen(function*() {
    const distinct = Array.from(new Set(asked)).slice(0, MAX_TASK_IDS)
    const found = yield* Effect.forEach(distinct, (taskId) => Effect.option(Tasks.lookup(runtime, taskId, ctx)))
    const records = found.flatMap((r) => Option.isSome(r) ? [r.value] : [])
    const readable = records.map((r) => r.taskId)
    // per watched task: what was last sent ("" before the first), and when its ttl ends (epoch ms)
    const watched = yield* Ref.make(
      HashMap.fromIterable(records.map((r): [string, Seen] => [r.taskId, { sent: "", expiresAt: r.expiresAt }]))
    )
    const lock = yield* Effect.makeSemaphore(1)
    const refresh = (taskId: string): Effect.Effect<void> =>
      lock.withPermits(1)(Effect.gen(function*() {
        const last = HashMap.get(yield* Ref.get(watched), taskId)
        if (Option.isNone(last)) return
        const read = yield* Effect.exit(Tasks.read(runtime, taskId, ctx))
        if (Exit.isFailure(read)) {
          // gone (expired): nothing more to tell; gone before its ttl ended (the store lost it until
          // its instance writes it again) or a store that failed (unreachable): try again later
          const failure = Cause.failureOption(read.cause)
          if (Option.isSome(failure) && failure.value._tag === "Failure") {
            const now = yield* Clock.currentTimeMillis
            if (now >= last.value.expiresAt) return yield* Ref.update(watched, HashMap.remove(taskId))
            return
          }
          return yield* Effect.logWarning("Task status not read for a listener", { taskId }, read.cause)
        }
        const task = read.value
        const seen = JSON.stringify(task)
        if (seen !== last.value.sent) yield* send(task)
        yield* Ref.update(
          watched,
          Task.isTerminal(task.status) ? HashMap.remove(taskId) : HashMap.set(taskId, { ...last.value, sent: seen })
        )
      }))
    const refreshAll = Effect.flatMap(
      Ref.get(watched),
      (m) => Effect.forEach(HashMap.keys(m), refresh, { discard: true })
    )
    const interval = Duration.millis(runtime.pollIntervalMs)
    const recheck = refreshAll.pipe(
      Effect.delay(interval),
      Effect.repeat({ while: () => Effect.map(Ref.get(watched), (m) => HashMap.size(m) > 0) }),
      Effect.zipRight(Effect.never)
    )
    return { taskIds: readable, refresh, refreshAll, recheck }
  })
