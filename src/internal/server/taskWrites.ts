/**
 * The writes of the tasks this instance runs (Tasks extension): each change a task's own fiber
 * makes to its record (progress, a question, its end) goes through here. When the store cannot be
 * reached (`Task.TaskStoreError`) the change is kept, in order, with what this instance knows of
 * the record, and written when the store is back: retried after 100 ms, doubling up to 1 s between
 * tries. A change is announced (`changed`: the `TaskStatus` change event) once it is written.
 * Bounds: a task's changes are kept until its ttl ends (then the task is gone anyway); consecutive
 * progress changes coalesce (the last one wins); at most `maxTasks` ended tasks keep changes (past
 * that the one expiring first loses them, logged). Documented in docs/scale-out.md ("When Redis is
 * away").
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Task from "../../Task.js"

/** One change of a record (its time already taken); `progress`: a progress change, which a later one replaces. */
interface Change {
  readonly apply: (record: Task.TaskRecord) => Task.TaskRecord
  readonly progress: boolean
}

/** One task run here: what this instance knows of its record (pending changes applied), the changes not written yet. */
interface Entry {
  readonly known: Task.TaskRecord
  readonly pending: ReadonlyArray<Change>
  readonly running: boolean
}

/** Between two tries of the pending changes: 100 ms, doubling, at most 1 s. */
export const retrySchedule: Schedule.Schedule<unknown> = Schedule.exponential(Duration.millis(100)).pipe(
  Schedule.union(Schedule.spaced(Duration.seconds(1)))
)

export interface Writes {
  /** A task started here: its changes go through {@link Writes.write} from now on. */
  readonly start: (record: Task.TaskRecord) => Effect.Effect<void>
  /**
   * Changes the task's record with `f` (given the record and the time of the change). Yields the
   * record as written, or as this instance knows it when the change is kept for later; `None` when
   * the task is gone (expired). Fails only with a defect of the store (a corrupt record).
   */
  readonly write: (
    taskId: string,
    f: (record: Task.TaskRecord, now: number) => Task.TaskRecord,
    progress?: boolean
  ) => Effect.Effect<Option.Option<Task.TaskRecord>>
  /** The task's fiber ended: its entry goes once its changes are written. */
  readonly ended: (taskId: string) => Effect.Effect<void>
  /** The record as this instance knows it while changes of it wait to be written, else `None`. */
  readonly kept: (taskId: string) => Effect.Effect<Option.Option<Task.TaskRecord>>
  /** Writes the kept changes whenever there are some; forever (the caller forks and ends it). */
  readonly retry: Effect.Effect<never>
}

/**
 * `store.modify`, and whether `f` changed the record (a store may retry `f` on a conflicting
 * write: the last run decides). Only a change is worth announcing to listeners.
 */
export const modifyTracked = (
  store: Task.TaskStoreShape,
  taskId: string,
  now: number,
  f: (record: Task.TaskRecord) => Task.TaskRecord
): Effect.Effect<readonly [Option.Option<Task.TaskRecord>, boolean], Task.TaskStoreError> =>
  Effect.suspend(() => {
    let changed = false
    return Effect.map(
      store.modify(taskId, now, (r) => {
        const next = f(r)
        changed = next !== r
        return next
      }),
      (stored) => [stored, changed] as const
    )
  })

const applyAll = (changes: ReadonlyArray<Change>, record: Task.TaskRecord): Task.TaskRecord =>
  changes.reduce((r, c) => c.apply(r), record)

export const make = (
  store: Task.TaskStoreShape,
  maxTasks: number,
  changed: (taskId: string) => Effect.Effect<void>
): Effect.Effect<Writes> =>
  Effect.gen(function*() {
    const entries = yield* Ref.make(HashMap.empty<string, Entry>())
    const wake = yield* Queue.sliding<void>(1)
    const lock = yield* Effect.makeSemaphore(1)

    /** Writes the task's pending changes, oldest first, in one change of the stored record. */
    const flush = (taskId: string): Effect.Effect<Option.Option<Task.TaskRecord>, Task.TaskStoreError> =>
      lock.withPermits(1)(Effect.gen(function*() {
        const entry = HashMap.get(yield* Ref.get(entries), taskId)
        if (Option.isNone(entry)) return Option.none()
        const { known, pending: batch } = entry.value
        if (batch.length === 0) return Option.some(known)
        const now = yield* Clock.currentTimeMillis
        const [stored, modified] = yield* modifyTracked(store, taskId, now, (r) => applyAll(batch, r))
        // the record is gone while the task lives (a Redis that restarted empty): written again
        // from what this instance knows, so its end is not lost
        const written = Option.isSome(stored) || known.expiresAt <= now
          ? stored
          : (yield* store.create(known, maxTasks, now))
          ? Option.some(known)
          : Option.none()
        const wrote = modified || (Option.isNone(stored) && Option.isSome(written))
        const after = yield* Ref.modify(entries, (m) => {
          const current = HashMap.get(m, taskId)
          if (Option.isNone(current)) return [Option.none<Task.TaskRecord>(), m]
          const rest = current.value.pending.filter((c) => !batch.includes(c))
          if (Option.isNone(written) || (rest.length === 0 && !current.value.running)) {
            return [Option.map(written, (r) => applyAll(rest, r)), HashMap.remove(m, taskId)]
          }
          const next = applyAll(rest, written.value)
          return [Option.some(next), HashMap.set(m, taskId, { ...current.value, known: next, pending: rest })]
        })
        if (wrote) yield* changed(taskId)
        return after
      }))

    /** Drops the changes of tasks whose ttl ended; writes the others. `false` when the store failed. */
    const flushAll = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const expired = yield* Ref.modify(entries, (m) => {
        const gone = HashMap.filter(m, (e) => e.known.expiresAt <= now)
        return [HashMap.size(gone), HashMap.filter(m, (e) => e.known.expiresAt > now)]
      })
      if (expired > 0) {
        yield* Effect.logWarning("Task changes dropped: their tasks expired before the store was back", { expired })
      }
      const waiting = HashMap.keys(HashMap.filter(yield* Ref.get(entries), (e) => e.pending.length > 0))
      for (const taskId of waiting) {
        const ok = yield* flush(taskId).pipe(
          Effect.as(true),
          Effect.catchTag("TaskStoreError", () => Effect.succeed(false))
        )
        if (!ok) return false
        yield* Effect.logInfo("Task change written after the task store came back", { taskId })
      }
      return true
    })

    const start = (record: Task.TaskRecord): Effect.Effect<void> =>
      Effect.gen(function*() {
        const lost = yield* Ref.modify(entries, (m) => {
          const ended = Array.from(HashMap.values(m)).filter((e) => !e.running)
            .sort((a, b) => a.known.expiresAt - b.known.expiresAt)
          const drop = ended.slice(0, Math.max(0, ended.length - maxTasks + 1)).map((e) => e.known.taskId)
          const kept = drop.reduce((acc, id) => HashMap.remove(acc, id), m)
          return [drop, HashMap.set(kept, record.taskId, { known: record, pending: [], running: true })]
        })
        if (lost.length > 0) {
          yield* Effect.logWarning("Task changes dropped: too many ended tasks wait for the task store", {
            taskIds: lost
          })
        }
      })

    const write: Writes["write"] = (taskId, f, progress = false) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const change: Change = { apply: (r) => f(r, now), progress }
        const queued = yield* Ref.modify(entries, (m) => {
          const entry = HashMap.get(m, taskId)
          if (Option.isNone(entry)) return [Option.none<boolean>(), m]
          const { known, pending } = entry.value
          const last = pending.at(-1)
          const next = progress && last?.progress === true ? [...pending.slice(0, -1), change] : [...pending, change]
          return [
            Option.some(pending.length > 0),
            HashMap.set(m, taskId, { ...entry.value, known: change.apply(known), pending: next })
          ]
        })
        // not a task running here (its ttl ended and its kept changes were dropped): a plain change,
        // dropped when the store is unavailable (the task is gone anyway)
        if (Option.isNone(queued)) {
          return yield* store.modify(taskId, now, change.apply).pipe(
            Effect.catchTag("TaskStoreError", () => Effect.succeed(Option.none()))
          )
        }
        // changes already wait for the store: this one waits behind them (the retry keeps the order)
        if (queued.value) {
          yield* Queue.offer(wake, undefined)
          return yield* known(taskId)
        }
        return yield* flush(taskId).pipe(
          Effect.catchTag("TaskStoreError", (e) =>
            Effect.zipRight(
              Effect.logWarning("Task store unavailable: the task's change is kept and written when it is back", {
                taskId,
                reason: e.message
              }),
              Effect.zipRight(Queue.offer(wake, undefined), known(taskId))
            ))
        )
      })

    const known = (taskId: string): Effect.Effect<Option.Option<Task.TaskRecord>> =>
      Effect.map(Ref.get(entries), (m) => Option.map(HashMap.get(m, taskId), (e) => e.known))

    const ended = (taskId: string): Effect.Effect<void> =>
      Ref.update(entries, (m) =>
        Option.match(HashMap.get(m, taskId), {
          onNone: () => m,
          onSome: (e) =>
            e.pending.length === 0 ? HashMap.remove(m, taskId) : HashMap.set(m, taskId, { ...e, running: false })
        }))

    const retry: Effect.Effect<never> = Queue.take(wake).pipe(
      Effect.zipRight(Effect.repeat(flushAll, { schedule: retrySchedule, until: (ok) => ok })),
      Effect.forever
    )

    return {
      start,
      write,
      ended,
      kept: (taskId) =>
        Effect.map(Ref.get(entries), (m) =>
          Option.flatMap(HashMap.get(m, taskId), (e) =>
            e.pending.length > 0 ? Option.some(e.known) : Option.none())),
      retry
    }
  })
