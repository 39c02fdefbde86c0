/**
 * `Task.TaskStore` in Redis (documented on `Redis.layerTaskStore`): one key per task, optimistic
 * transactions, a heartbeat key per instance, signals on `<prefix>:tasks`.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { ChainableCommander } from "ioredis"
import type { RedisError } from "../../Errors.js"
import type { RedisConnectionShape } from "../../Redis.js"
import * as Task from "../../Task.js"
import * as Envelope from "./envelope.js"
import * as TaskRecord from "./taskRecord.js"
import * as TaskSignals from "./taskSignals.js"

const STOPPED = "The server instance running the task stopped"

/** Conflicting writes a change retries before it gives up. */
const MAX_RETRIES = 20

/** Keys and limits of one instance's store. */
interface Keys {
  readonly self: string
  readonly task: (taskId: string) => string
  readonly alive: (instanceId: string) => string
  readonly running: string
  readonly aliveMs: number
}

const keysOf = (redis: RedisConnectionShape): Keys => ({
  self: redis.instanceId,
  task: (taskId) => redis.key(`task:${taskId}`),
  alive: (instanceId) => redis.key(`alive:${instanceId}`),
  running: redis.key(`running:${redis.instanceId}`),
  aliveMs: redis.heartbeatMs * 5
})

/**
 * This instance is alive while its key is: refreshed every heartbeat and as soon as the connection
 * is ready again (after an outage longer than five heartbeats the key has lapsed: the sooner it is
 * back, the shorter the time others may take this instance's tasks for stopped), removed with the
 * Scope.
 */
const heartbeat = (
  redis: RedisConnectionShape,
  keys: Keys,
  failed: Effect.Effect<void>
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const beat = redis.run("heartbeat", (c) => c.set(keys.alive(keys.self), "1", "PX", keys.aliveMs)).pipe(
      Effect.catchTag("RedisError", () => failed)
    )
    yield* beat.pipe(Effect.repeat(Schedule.spaced(Duration.millis(redis.heartbeatMs))), Effect.forkScoped)
    yield* redis.changes.pipe(
      Stream.changes,
      Stream.filter((ready) => ready),
      Stream.runForEach(() => beat),
      Effect.forkScoped
    )
    yield* Effect.addFinalizer(() =>
      redis.run("stop", (c) => c.del(keys.alive(keys.self))).pipe(Effect.catchTag("RedisError", () => Effect.void))
    )
  })

/** Redis errors are the store's `TaskStoreError` (the request answers -32603; a task's own change waits). */
const toStoreError = <A>(effect: Effect.Effect<A, RedisError>): Effect.Effect<A, Task.TaskStoreError> =>
  Effect.mapError(effect, (e) => new Task.TaskStoreError({ operation: e.operation, message: e.message }))

/** What one optimistic change found. */
type Attempt =
  | { readonly _tag: "Done"; readonly record: Option.Option<Task.TaskRecord>; readonly foreign: boolean }
  | { readonly _tag: "Conflict" }
  | { readonly _tag: "Unreadable"; readonly reason: Envelope.Reason; readonly detail: string }

export const make = (redis: RedisConnectionShape): Effect.Effect<Task.TaskStoreShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const keys = keysOf(redis)
    // When a command last failed (epoch ms), and since when the connection is ready (undefined
    // while it is not). Another instance's heartbeat key may have lapsed during an outage (Redis
    // down or frozen): until this instance has reached Redis for as long as a key lives, a missing
    // key does not yet mean its instance stopped (it may not have reconnected yet, with a task's
    // end still to write).
    const lastFailure = yield* Ref.make(0)
    const readySince = yield* Ref.make<number | undefined>(undefined)
    const failed = Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.set(lastFailure, now))
    yield* redis.changes.pipe(
      Stream.changes,
      Stream.runForEach((ready) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.set(readySince, ready ? now : undefined))
      ),
      Effect.forkScoped
    )
    const settled = (now: number) =>
      Effect.map(
        Effect.all([Ref.get(readySince), Ref.get(lastFailure)]),
        ([since, failure]) => since !== undefined && now - since >= keys.aliveMs && now - failure >= keys.aliveMs
      )
    const unavailable = <A>(effect: Effect.Effect<A, RedisError>): Effect.Effect<A, Task.TaskStoreError> =>
      toStoreError(Effect.tapError(effect, () => failed))
    yield* heartbeat(redis, keys, failed)
    const report = yield* Envelope.makeReport
    const read = (raw: string | null) => TaskRecord.read(raw, redis.deployment, redis.maxMessageBytes)
    // A corrupt record fails the request that reads it (and only that task): -32603, logged.
    const unreadable = (taskId: string, reason: Envelope.Reason, detail: string) =>
      Effect.zipRight(
        report("task-record", reason, detail),
        Effect.dieMessage(`Task store: the stored record of task ${taskId} is unreadable (${detail})`)
      )
    const foreign = (found: boolean) =>
      found ? report("task-record", "foreign", "stamped with another deployment") : Effect.void
    // Transactions share the command connection: one at a time per instance (WATCH is per connection).
    const lock = yield* Effect.makeSemaphore(1)
    const write = (owner: string, record: Task.TaskRecord, now: number) => (m: ChainableCommander) => {
      const text = TaskRecord.write(owner, record, redis.deployment, redis.maxMessageBytes)
      m.set(keys.task(record.taskId), text, "PX", Math.max(1, record.expiresAt - now))
      // our task and our liveness in one transaction: right after Redis restarted empty, a task
      // written before the next heartbeat would otherwise read as stopped on another instance
      if (owner === keys.self) m.set(keys.alive(keys.self), "1", "PX", keys.aliveMs)
      if (owner === keys.self && Task.isTerminal(record.status)) m.zrem(keys.running, record.taskId)
      return m
    }
    const modifyOnce = (
      taskId: string,
      now: number,
      f: (stored: TaskRecord.Stored) => Task.TaskRecord
    ): Effect.Effect<Attempt, RedisError> =>
      redis.run("modify", async (c): Promise<Attempt> => {
        const key = keys.task(taskId)
        await c.watch(key)
        const found = read(await c.get(key))
        const current = TaskRecord.live(found, now)
        if (found._tag === "Unreadable" || Option.isNone(current)) {
          await c.unwatch()
          return found._tag === "Unreadable" ? found : {
            _tag: "Done",
            record: Option.none(),
            foreign: found._tag === "None" && found.foreign
          }
        }
        const next = f(current.value)
        const done = await write(current.value.owner, next, now)(c.multi()).exec()
        // null: the key changed since WATCH (another instance wrote it): try again
        return done === null ? { _tag: "Conflict" } : { _tag: "Done", record: Option.some(next), foreign: false }
      })
    const modifyStored = (
      taskId: string,
      now: number,
      f: (stored: TaskRecord.Stored) => Task.TaskRecord
    ): Effect.Effect<Option.Option<Task.TaskRecord>, Task.TaskStoreError> =>
      modifyOnce(taskId, now, f).pipe(
        lock.withPermits(1),
        Effect.repeat({ until: (a): boolean => a._tag !== "Conflict", times: MAX_RETRIES }),
        unavailable,
        Effect.flatMap((a) => {
          switch (a._tag) {
            case "Conflict":
              return Effect.dieMessage(`Task store: too many conflicting writes to task ${taskId}`)
            case "Unreadable":
              return unreadable(taskId, a.reason, a.detail)
            case "Done":
              return Effect.as(foreign(a.foreign), a.record)
          }
        })
      )
    const get = (taskId: string, now: number): Effect.Effect<Option.Option<Task.TaskRecord>, Task.TaskStoreError> =>
      Effect.gen(function*() {
        const found = read(yield* unavailable(redis.run("get", (c) => c.get(keys.task(taskId)))))
        if (found._tag === "Unreadable") return yield* unreadable(taskId, found.reason, found.detail)
        if (found._tag === "None") yield* foreign(found.foreign)
        const stored = TaskRecord.live(found, now)
        if (Option.isNone(stored)) return Option.none()
        const { owner, record } = stored.value
        if (Task.isTerminal(record.status) || owner === keys.self) return Option.some(record)
        const alive = yield* unavailable(redis.run("alive", (c) => c.exists(keys.alive(owner))))
        if (alive > 0 || !(yield* settled(now))) return Option.some(record)
        return yield* modifyStored(taskId, now, (s) =>
          Task.isTerminal(s.record.status) ? s.record : {
            ...s.record,
            status: "failed",
            statusMessage: STOPPED,
            inputRequests: undefined,
            error: { code: -32603, message: STOPPED },
            lastUpdatedAt: now
          })
      })
    const store: Task.TaskStoreShape = {
      create: (record, limit, now) =>
        unavailable(
          redis.run("create", async (c) => {
            await c.zremrangebyscore(keys.running, "-inf", now)
            if ((await c.zcard(keys.running)) >= limit) return false
            const m = write(keys.self, record, now)(c.multi())
            // a finished record written again (after Redis lost it) is not counted as running
            if (!Task.isTerminal(record.status)) m.zadd(keys.running, record.expiresAt, record.taskId)
            await m.exec()
            return true
          }).pipe(lock.withPermits(1))
        ),
      get,
      modify: (taskId, now, f) => modifyStored(taskId, now, (s) => f(s.record)),
      signals: TaskSignals.make(redis)
    }
    return store
  })
