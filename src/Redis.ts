/**
 * Redis-backed layers for the scale-out seams of `presa-mcp/Cluster`: several server instances
 * behind a plain (round-robin) load balancer act as one MCP server.
 *
 * - {@link layerChangeBus}: list changes and resource updates published by any instance reach
 *   the `subscriptions/listen` streams and legacy sessions of every instance (one Redis pub/sub
 *   channel; each instance also delivers its own events locally, without the round trip).
 * - {@link layerTaskStore}: task records in Redis with their ttl, so `tasks/get`, `tasks/update`
 *   and `tasks/cancel` work on any instance; a cancel or an answer reaches the instance that runs
 *   the task through a pub/sub channel; a task whose instance stopped (its heartbeat key expired)
 *   reads `failed`.
 * - {@link layerSessionStore}: legacy (2025-11-25) sessions in Redis, so the requests of one
 *   session may reach any instance; the client's answers to server→client requests and its
 *   cancellations reach the instance running the request, state changes reach the instance holding
 *   the session's GET stream (pub/sub).
 * - {@link layerHealth}: the `redis` check of a health endpoint.
 * - {@link layer}: all of them, over one {@link layerConnection}.
 *
 * Signing keys for `requestState` are configuration, not Redis state: give every instance the same
 * `inputState.keys` (`McpServer.make`), and a multi round-trip retry may land on any instance.
 *
 * Failure behaviour: commands are not queued while Redis is away (they fail at once, or after
 * `commandTimeout`), so no MCP request waits on Redis. Stateless requests keep working; change
 * events still reach this instance's subscribers; task requests fail with -32603 until Redis is
 * back; a legacy session keeps working on the instance that holds it, others answer its requests
 * `503`, and no new session opens (`503`). The connection state is logged on every change and readable as {@link RedisConnection}'s
 * `healthy`. When Redis returns, the subscriptions are renewed and every local subscriber gets a
 * list change of each kind (events of other instances may have been lost meanwhile).
 *
 * Requires the `ioredis` package (an optional peer dependency).
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { type ChainableCommander, Redis as IORedis } from "ioredis"
import * as Cluster from "./Cluster.js"
import * as JsonRpc from "./JsonRpc.js"
import * as McpSchema from "./McpSchema.js"
import * as Task from "./Task.js"

// ---------------------------------------------------------------------------------------------
// connection
// ---------------------------------------------------------------------------------------------

/**
 * Options of {@link layerConnection}.
 *
 * - `url`: `redis://[user:password@]host:port[/db]` (or `rediss://`).
 * - `prefix`: the prefix of every key and channel; default `"presa-mcp"`. Instances of one server
 *   share it; different servers on one Redis use different prefixes.
 * - `instanceId`: this instance's name in task ownership and heartbeats; default a random UUID.
 * - `commandTimeout`: how long one command may take before it fails; default 2 seconds.
 * - `heartbeat`: how often the instance refreshes its liveness key; default 1 second. The key
 *   lives five heartbeats: an instance silent that long is taken as stopped (its unfinished tasks
 *   read `failed`).
 *
 * @since 0.2.0
 * @category models
 */
export interface ConnectionOptions {
  readonly url: string
  readonly prefix?: string | undefined
  readonly instanceId?: string | undefined
  readonly commandTimeout?: Duration.DurationInput | undefined
  readonly heartbeat?: Duration.DurationInput | undefined
}

/**
 * Redis failed a command (not reachable, timed out, or an error reply). In-process only.
 *
 * @since 0.2.0
 * @category errors
 */
export class RedisError extends Schema.TaggedError<RedisError>("presa-mcp/RedisError")("RedisError", {
  operation: Schema.String,
  message: Schema.String
}) {}

/**
 * The shared connection of the Redis layers.
 *
 * - `run(operation, f)`: runs one command (or transaction) on the command connection; fails with
 *   {@link RedisError} at once when Redis is not connected, after `commandTimeout` otherwise.
 * - `channel(name)`: the messages of one pub/sub channel (the prefix is added), as a queue closed
 *   with the Scope; subscribed again after each reconnection (messages sent meanwhile are lost).
 * - `healthy`: whether both connections (commands and pub/sub) are ready now; `changes` streams it.
 * - `key(name)`: `name` under the prefix.
 *
 * @since 0.2.0
 * @category models
 */
export interface RedisConnectionShape {
  readonly instanceId: string
  readonly key: (name: string) => string
  readonly heartbeatMs: number
  readonly run: <A>(operation: string, f: (client: IORedis) => Promise<A>) => Effect.Effect<A, RedisError>
  readonly channel: (name: string) => Effect.Effect<Queue.Dequeue<string>, never, Scope.Scope>
  readonly healthy: Effect.Effect<boolean>
  readonly changes: Stream.Stream<boolean>
}

/**
 * The connection as a service.
 *
 * @since 0.2.0
 * @category models
 */
export class RedisConnection
  extends Context.Tag("presa-mcp/RedisConnection")<RedisConnection, RedisConnectionShape>()
{}

const errorMessage = (u: unknown): string => u instanceof Error ? u.message : String(u)

/**
 * Two connections to Redis (commands, pub/sub), closed with the layer. Building waits for the
 * first connection at most `commandTimeout`; it also builds while Redis is down (the instance
 * starts degraded), and the client reconnects on its own, every 0.1 to 1 second. State changes are logged (`Effect.logWarning` when lost, `Effect.logInfo` when back).
 *
 * @since 0.2.0
 * @category layers
 */
export const layerConnection = (options: ConnectionOptions): Layer.Layer<RedisConnection> =>
  Layer.scoped(RedisConnection, makeConnection(options))

const makeConnection = (options: ConnectionOptions): Effect.Effect<RedisConnectionShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const prefix = options.prefix ?? "presa-mcp"
    const instanceId = options.instanceId ?? crypto.randomUUID()
    const commandTimeoutMs = Math.max(1, Duration.toMillis(Duration.decode(options.commandTimeout ?? "2 seconds")))
    const heartbeatMs = Math.max(10, Duration.toMillis(Duration.decode(options.heartbeat ?? "1 second")))
    const common = {
      lazyConnect: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (times: number) => Math.min(100 * times, 1000),
      connectTimeout: commandTimeoutMs
    }
    // Commands fail at once while disconnected (nothing queues behind an absent Redis).
    const client = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new IORedis(options.url, { ...common, enableOfflineQueue: false, commandTimeout: commandTimeoutMs })
      ),
      (c) => Effect.sync(() => c.disconnect())
    )
    // The subscriber subscribes to every wanted channel each time it is ready (first connection
    // and reconnections); a SUBSCRIBE sent before the client's ready check would break that check.
    const subscriber = yield* Effect.acquireRelease(
      Effect.sync(() => new IORedis(options.url, { ...common, enableOfflineQueue: false, autoResubscribe: false })),
      (c) => Effect.sync(() => c.disconnect())
    )
    const readyNow = () => client.status === "ready" && subscriber.status === "ready"
    const health = yield* SubscriptionRef.make(false)
    const transitions = yield* Queue.sliding<{ readonly ready: boolean; readonly reason?: string }>(16)
    const onState = (reason?: string) => () => {
      Queue.unsafeOffer(transitions, reason === undefined ? { ready: readyNow() } : { ready: readyNow(), reason })
    }
    for (const c of [client, subscriber]) {
      c.on("ready", onState())
      c.on("close", onState())
      c.on("error", (e: unknown) => onState(errorMessage(e))())
    }
    onState()()
    yield* Queue.take(transitions).pipe(
      Effect.flatMap(({ ready, reason }) =>
        Effect.gen(function*() {
          const before = yield* SubscriptionRef.get(health)
          if (before === ready) return
          yield* SubscriptionRef.set(health, ready)
          if (ready) yield* Effect.logInfo("Redis connection ready", { instanceId })
          else {
            yield* Effect.logWarning("Redis unavailable: shared state degraded, stateless requests continue", {
              instanceId,
              ...(reason === undefined ? {} : { reason })
            })
          }
        })
      ),
      Effect.forever,
      Effect.forkScoped
    )
    // Message routing: one `message` listener, one PubSub per channel.
    const channels = new Map<string, PubSub.PubSub<string>>()
    const incoming = yield* Queue.unbounded<{ readonly channel: string; readonly message: string }>()
    subscriber.on("message", (channel: string, message: string) => {
      Queue.unsafeOffer(incoming, { channel, message })
    })
    yield* Queue.take(incoming).pipe(
      Effect.flatMap(({ channel, message }) => {
        const hub = channels.get(channel)
        return hub === undefined ? Effect.void : PubSub.publish(hub, message)
      }),
      Effect.forever,
      Effect.forkScoped
    )
    yield* Effect.addFinalizer(() =>
      Effect.forEach(channels.values(), (hub) => PubSub.shutdown(hub), { discard: true }).pipe(
        Effect.zipRight(Effect.sync(() => channels.clear()))
      )
    )
    const subscribeAll = (names: ReadonlyArray<string>) => {
      if (subscriber.status !== "ready" || names.length === 0) return
      subscriber.subscribe(...names).catch((e: unknown) =>
        Queue.unsafeOffer(transitions, { ready: readyNow(), reason: errorMessage(e) })
      )
    }
    subscriber.on("ready", () => subscribeAll([...channels.keys()]))
    // The first connection, bounded: commands issued before it is ready would fail.
    yield* Effect.async<void>((resume) => {
      const ready = () => resume(Effect.void)
      if (client.status === "ready") return resume(Effect.void)
      client.once("ready", ready)
      return Effect.sync(() => client.off("ready", ready))
    }).pipe(Effect.timeoutOption(Duration.millis(commandTimeoutMs)))
    const key = (name: string) => `${prefix}:${name}`
    const hubOf = (name: string): Effect.Effect<PubSub.PubSub<string>> =>
      Effect.suspend(() => {
        const full = key(name)
        const existing = channels.get(full)
        if (existing !== undefined) return Effect.succeed(existing)
        return PubSub.unbounded<string>().pipe(
          Effect.tap((hub) =>
            Effect.sync(() => {
              channels.set(full, hub)
              subscribeAll([full])
            })
          )
        )
      })
    return {
      instanceId,
      key,
      heartbeatMs,
      run: <A>(operation: string, f: (c: IORedis) => Promise<A>) =>
        Effect.tryPromise({
          try: () => f(client),
          catch: (e) => new RedisError({ operation, message: errorMessage(e) })
        }),
      channel: (name) => Effect.flatMap(hubOf(name), PubSub.subscribe),
      healthy: SubscriptionRef.get(health),
      changes: health.changes
    }
  })

// ---------------------------------------------------------------------------------------------
// change bus
// ---------------------------------------------------------------------------------------------

const ChangeEventSchema = Schema.Union(
  Schema.Struct({ _tag: Schema.Literal("ListChanged"), kind: Schema.Literal("tools", "prompts", "resources") }),
  Schema.Struct({ _tag: Schema.Literal("ResourceUpdated"), uri: Schema.String })
)

/** What goes on the channel: the publishing instance and the event. */
const BusMessage = Schema.parseJson(Schema.Struct({ origin: Schema.String, event: ChangeEventSchema }))
const decodeBusMessage = Schema.decodeUnknownOption(BusMessage)
const encodeBusMessage = Schema.encodeSync(BusMessage)

/**
 * A {@link Cluster.ChangeBus} over the Redis channel `<prefix>:changes`. An event is delivered to
 * this instance's subscribers at once and published for the others, which ignore their own
 * messages. A failed PUBLISH (Redis away) is logged; the event still reaches this instance. When
 * the connection comes back, local subscribers get a `ListChanged` of each kind.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerChangeBus: Layer.Layer<Cluster.ChangeBus, never, RedisConnection> = Layer.scoped(
  Cluster.ChangeBus,
  Effect.gen(function*() {
    const redis = yield* RedisConnection
    const local = yield* PubSub.unbounded<Cluster.ChangeEvent>()
    const remote = yield* redis.channel("changes")
    const channel = redis.key("changes")
    yield* Queue.take(remote).pipe(
      Effect.flatMap((raw) =>
        Option.match(decodeBusMessage(raw), {
          onNone: () => Effect.logWarning("Redis change bus: undecodable message dropped"),
          onSome: ({ event, origin }) => origin === redis.instanceId ? Effect.void : PubSub.publish(local, event)
        })
      ),
      Effect.forever,
      Effect.forkScoped
    )
    // After an outage: others' events may have been lost, so every list is announced as changed.
    yield* redis.changes.pipe(
      Stream.changes,
      // a recovery: ready again after having been ready once (not the first connection)
      Stream.mapAccum({ wasReady: false, lost: false }, (s, ready) => {
        const recovered = ready && s.lost
        const next = ready ? { wasReady: true, lost: false } : { wasReady: s.wasReady, lost: s.wasReady }
        return [next, recovered] as const
      }),
      Stream.filter((recovered) => recovered),
      Stream.runForEach(() =>
        PubSub.publishAll(local, [
          { _tag: "ListChanged", kind: "tools" } as const,
          { _tag: "ListChanged", kind: "prompts" } as const,
          { _tag: "ListChanged", kind: "resources" } as const
        ])
      ),
      Effect.forkScoped
    )
    const publish = (event: Cluster.ChangeEvent): Effect.Effect<void> =>
      PubSub.publish(local, event).pipe(
        Effect.zipRight(
          redis.run("publish", (c) => c.publish(channel, encodeBusMessage({ origin: redis.instanceId, event }))).pipe(
            Effect.catchTag("RedisError", (e) =>
              Effect.logWarning("Redis change bus: event not shared with other instances", {
                event: event._tag,
                reason: e.message
              }))
          )
        ),
        Effect.asVoid
      )
    return { publish, subscribe: PubSub.subscribe(local) }
  })
)

// ---------------------------------------------------------------------------------------------
// task store
// ---------------------------------------------------------------------------------------------

const Json = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const TaskRecordSchema = Schema.Struct({
  taskId: Schema.String,
  status: Schema.Literal("working", "input_required", "completed", "failed", "cancelled"),
  statusMessage: Schema.optional(Schema.String),
  createdAt: Schema.Number,
  lastUpdatedAt: Schema.Number,
  ttlMs: Schema.Number,
  pollIntervalMs: Schema.Number,
  expiresAt: Schema.Number,
  inputRequests: Schema.optional(Schema.Record({
    key: Schema.String,
    value: Schema.Struct({
      method: Schema.Literal(
        McpSchema.ClientMethod.elicitationCreate,
        McpSchema.ClientMethod.samplingCreateMessage,
        McpSchema.ClientMethod.rootsList
      ),
      params: Schema.optionalWith(Json, { exact: true })
    })
  })),
  answers: Json,
  result: Schema.optional(Json),
  error: Schema.optional(
    Schema.Struct({ code: Schema.Number, message: Schema.String, data: Schema.optional(Schema.Unknown) })
  ),
  subject: Schema.optional(Schema.String)
})

/** A stored task: the record and the instance that runs it. */
const Stored = Schema.parseJson(Schema.Struct({ owner: Schema.String, record: TaskRecordSchema }))
const decodeStored = Schema.decodeUnknownOption(Stored)
const encodeStored = Schema.encodeSync(Stored)

/** The record as JSON (members set to `undefined` are left out). */
const toStored = (owner: string, record: Task.TaskRecord): string => encodeStored({ owner, record })

const fromStored = (raw: string | null): Option.Option<{ readonly owner: string; readonly record: Task.TaskRecord }> =>
  raw === null ? Option.none() : decodeStored(raw)

const STOPPED = "The server instance running the task stopped"

/**
 * A `Task.TaskStore` in Redis, with task signals (`Task.TaskSignals`) on the channel
 * `<prefix>:tasks`.
 *
 * - A record is one key, `<prefix>:task:<taskId>`, expiring with the task (`expiresAt`); a change
 *   is an optimistic transaction (WATCH, then MULTI/EXEC, retried on a conflict at most 20 times).
 * - `limit` (the server's `maxTasks`) counts the unfinished tasks this instance runs; finished
 *   records stay until their ttl.
 * - Each instance refreshes `<prefix>:alive:<instanceId>` every heartbeat; an unfinished task
 *   whose instance's key expired reads `failed` ("The server instance running the task stopped").
 * - Redis errors are defects of the task request: it is answered -32603 (and logged), nothing
 *   waits longer than `commandTimeout`.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerTaskStore: Layer.Layer<Task.TaskStore, never, RedisConnection> = Layer.scoped(
  Task.TaskStore,
  Effect.gen(function*() {
    const redis = yield* RedisConnection
    const self = redis.instanceId
    const taskKey = (taskId: string) => redis.key(`task:${taskId}`)
    const aliveKey = (instanceId: string) => redis.key(`alive:${instanceId}`)
    const runningKey = redis.key(`running:${self}`)
    const signalChannel = redis.key("tasks")
    const aliveMs = redis.heartbeatMs * 5
    // Heartbeat: this instance is alive while its key is.
    yield* redis.run("heartbeat", (c) => c.set(aliveKey(self), "1", "PX", aliveMs)).pipe(
      Effect.catchTag("RedisError", () => Effect.void),
      Effect.repeat(Schedule.spaced(Duration.millis(redis.heartbeatMs))),
      Effect.forkScoped
    )
    yield* Effect.addFinalizer(() =>
      redis.run("stop", (c) => c.del(aliveKey(self))).pipe(Effect.catchTag("RedisError", () => Effect.void))
    )
    // Transactions share the command connection: one at a time per instance (WATCH is per connection).
    const lock = yield* Effect.makeSemaphore(1)
    const orDie = <A>(effect: Effect.Effect<A, RedisError>): Effect.Effect<A> =>
      effect.pipe(
        Effect.catchTag("RedisError", (e) => Effect.dieMessage(`Task store unavailable (${e.operation}): ${e.message}`))
      )
    const write = (owner: string, record: Task.TaskRecord, now: number) => (m: ChainableCommander) => {
      m.set(taskKey(record.taskId), toStored(owner, record), "PX", Math.max(1, record.expiresAt - now))
      // our task and our liveness in one transaction: right after Redis restarted empty, a task
      // written before the next heartbeat would otherwise read as stopped on another instance
      if (owner === self) m.set(aliveKey(self), "1", "PX", aliveMs)
      if (owner === self && Task.isTerminal(record.status)) m.zrem(runningKey, record.taskId)
      return m
    }
    const modifyOnce = (
      taskId: string,
      now: number,
      f: (stored: { readonly owner: string; readonly record: Task.TaskRecord }) => Task.TaskRecord
    ): Effect.Effect<Option.Option<Option.Option<Task.TaskRecord>>, RedisError> =>
      redis.run("modify", async (c) => {
        const key = taskKey(taskId)
        await c.watch(key)
        const current = Option.filter(fromStored(await c.get(key)), (s) => s.record.expiresAt > now)
        if (Option.isNone(current)) {
          await c.unwatch()
          return Option.some(Option.none())
        }
        const next = f(current.value)
        const done = await write(current.value.owner, next, now)(c.multi()).exec()
        // null: the key changed since WATCH (another instance wrote it): try again
        return done === null ? Option.none() : Option.some(Option.some(next))
      })
    const modifyStored = (
      taskId: string,
      now: number,
      f: (stored: { readonly owner: string; readonly record: Task.TaskRecord }) => Task.TaskRecord
    ): Effect.Effect<Option.Option<Task.TaskRecord>> =>
      modifyOnce(taskId, now, f).pipe(
        lock.withPermits(1),
        Effect.repeat({ until: Option.isSome, times: 20 }),
        orDie,
        Effect.flatMap(Option.match({
          onNone: () => Effect.dieMessage(`Task store: too many conflicting writes to task ${taskId}`),
          onSome: Effect.succeed
        }))
      )
    const get = (taskId: string, now: number): Effect.Effect<Option.Option<Task.TaskRecord>> =>
      Effect.gen(function*() {
        const stored = Option.filter(
          fromStored(yield* orDie(redis.run("get", (c) => c.get(taskKey(taskId))))),
          (s) => s.record.expiresAt > now
        )
        if (Option.isNone(stored)) return Option.none()
        const { owner, record } = stored.value
        if (Task.isTerminal(record.status) || owner === self) return Option.some(record)
        const alive = yield* orDie(redis.run("alive", (c) => c.exists(aliveKey(owner))))
        if (alive > 0) return Option.some(record)
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
    const signals: Task.TaskSignals = {
      send: (taskId) =>
        redis.run("signal", (c) => c.publish(signalChannel, taskId)).pipe(
          Effect.catchTag("RedisError", (e) =>
            Effect.logWarning("Redis task signal not sent", { taskId, reason: e.message })),
          Effect.asVoid
        ),
      subscribe: redis.channel("tasks")
    }
    const store: Task.TaskStoreShape = {
      create: (record, limit, now) =>
        orDie(
          redis.run("create", async (c) => {
            await c.zremrangebyscore(runningKey, "-inf", now)
            if ((await c.zcard(runningKey)) >= limit) return false
            await write(self, record, now)(c.multi()).zadd(runningKey, record.expiresAt, record.taskId).exec()
            return true
          }).pipe(lock.withPermits(1))
        ),
      get,
      modify: (taskId, now, f) => modifyStored(taskId, now, (s) => f(s.record)),
      signals
    }
    return store
  })
)

// ---------------------------------------------------------------------------------------------
// legacy sessions
// ---------------------------------------------------------------------------------------------

const SnapshotSchema = Schema.Struct({
  protocolVersion: Schema.Literal("2026-07-28", "2025-11-25", "2025-06-18"),
  clientInfo: Schema.optionalWith(McpSchema.Implementation, { exact: true }),
  clientCapabilities: McpSchema.ClientCapabilities,
  initialized: Schema.Boolean,
  logLevel: Schema.optionalWith(Schema.Literal(...McpSchema.LOGGING_LEVELS), { exact: true }),
  subscriptions: Schema.Array(Schema.String)
})
const StoredSnapshot = Schema.parseJson(SnapshotSchema)
const decodeSnapshot = Schema.decodeUnknownOption(StoredSnapshot)
const encodeSnapshot = Schema.encodeSync(StoredSnapshot)

/** The snapshot as stored: members that are `undefined` are left out. */
const toStoredSnapshot = (s: Cluster.SessionSnapshot): typeof SnapshotSchema.Type => ({
  protocolVersion: s.protocolVersion,
  ...(s.clientInfo === undefined ? {} : { clientInfo: s.clientInfo }),
  clientCapabilities: s.clientCapabilities,
  initialized: s.initialized,
  ...(s.logLevel === undefined ? {} : { logLevel: s.logLevel }),
  subscriptions: s.subscriptions
})

const fromStoredSnapshot = (s: typeof SnapshotSchema.Type): Cluster.SessionSnapshot => ({
  protocolVersion: s.protocolVersion,
  clientInfo: s.clientInfo,
  clientCapabilities: s.clientCapabilities,
  initialized: s.initialized,
  logLevel: s.logLevel,
  subscriptions: s.subscriptions
})

/** What goes on the sessions channel: the sending instance, the session, the signal (a message as its JSON text). */
const SessionMessage = Schema.parseJson(Schema.Struct({
  origin: Schema.String,
  id: Schema.String,
  signal: Schema.Union(
    Schema.Struct({ _tag: Schema.Literal("State"), state: SnapshotSchema }),
    Schema.Struct({ _tag: Schema.Literal("Message"), message: Schema.String }),
    Schema.Struct({ _tag: Schema.Literal("Closed") })
  )
}))
const decodeSessionMessage = Schema.decodeUnknownOption(SessionMessage)
const encodeSessionMessage = Schema.encodeSync(SessionMessage)

const toSignal = (signal: typeof SessionMessage.Type["signal"]): Option.Option<Cluster.SessionSignal> => {
  switch (signal._tag) {
    case "State":
      return Option.some({ _tag: "State", state: fromStoredSnapshot(signal.state) })
    case "Closed":
      return Option.some({ _tag: "Closed" })
    case "Message": {
      const parsed = JsonRpc.parse(signal.message)
      return parsed._tag === "Response" || parsed._tag === "Notification"
        ? Option.some({ _tag: "Message", message: parsed.message })
        : Option.none()
    }
  }
}

/**
 * A {@link Cluster.SessionStore} in Redis: each legacy session is the key `<prefix>:session:<id>`
 * (its snapshot as JSON, expiring after the idle timeout without a request), and the signals
 * between the instances that hold it travel on the channel `<prefix>:sessions` (each instance
 * keeps those of the sessions it holds). Operations fail with `Cluster.SessionStoreError` while
 * Redis is away (after at most `commandTimeout`).
 *
 * @since 0.2.0
 * @category layers
 */
export const layerSessionStore: Layer.Layer<Cluster.SessionStore, never, RedisConnection> = Layer.scoped(
  Cluster.SessionStore,
  Effect.gen(function*() {
    const redis = yield* RedisConnection
    const sessionKey = (id: string) => redis.key(`session:${id}`)
    const channel = redis.key("sessions")
    const holders = new Map<string, Set<Queue.Queue<Cluster.SessionSignal>>>()
    const remote = yield* redis.channel("sessions")
    yield* Queue.take(remote).pipe(
      Effect.flatMap((raw) =>
        Option.match(decodeSessionMessage(raw), {
          onNone: () => Effect.logWarning("Redis session store: undecodable message dropped"),
          onSome: ({ id, origin, signal }) => {
            const queues = holders.get(id)
            if (origin === redis.instanceId || queues === undefined) return Effect.void
            return Option.match(toSignal(signal), {
              onNone: () => Effect.logWarning("Redis session store: undecodable message dropped"),
              onSome: (s) => Effect.forEach(queues, (q) => Queue.offer(q, s), { discard: true })
            })
          }
        })
      ),
      Effect.forever,
      Effect.forkScoped
    )
    const failed = (e: RedisError) => new Cluster.SessionStoreError({ operation: e.operation, message: e.message })
    const ttlMs = (ttl: Duration.Duration) => Math.max(1, Math.ceil(Duration.toMillis(ttl)))
    const store: Cluster.SessionStoreShape = {
      save: (id, snapshot, ttl) =>
        redis.run(
          "session save",
          (c) => c.set(sessionKey(id), encodeSnapshot(toStoredSnapshot(snapshot)), "PX", ttlMs(ttl))
        )
          .pipe(Effect.asVoid, Effect.mapError(failed)),
      load: (id, ttl) =>
        redis.run("session load", (c) => c.multi().get(sessionKey(id)).pexpire(sessionKey(id), ttlMs(ttl)).exec()).pipe(
          Effect.mapError(failed),
          Effect.map((replies) => {
            const raw = replies?.[0]?.[1]
            return typeof raw === "string" ? Option.map(decodeSnapshot(raw), fromStoredSnapshot) : Option.none()
          })
        ),
      remove: (id) =>
        redis.run("session remove", (c) => c.del(sessionKey(id))).pipe(Effect.asVoid, Effect.mapError(failed)),
      signal: (id, signal) =>
        redis.run("session signal", (c) =>
          c.publish(
            channel,
            encodeSessionMessage({
              origin: redis.instanceId,
              id,
              signal: signal._tag === "State"
                ? { _tag: "State", state: toStoredSnapshot(signal.state) }
                : signal._tag === "Message"
                ? { _tag: "Message", message: JsonRpc.encode(signal.message) }
                : { _tag: "Closed" }
            })
          )).pipe(Effect.asVoid, Effect.mapError(failed)),
      signals: (id) =>
        Effect.acquireRelease(
          Effect.flatMap(Queue.unbounded<Cluster.SessionSignal>(), (queue) =>
            Effect.sync(() => {
              const queues = holders.get(id) ?? new Set()
              queues.add(queue)
              holders.set(id, queues)
              return queue
            })),
          (queue) =>
            Effect.zipRight(
              Effect.sync(() => {
                const queues = holders.get(id)
                queues?.delete(queue)
                if (queues !== undefined && queues.size === 0) holders.delete(id)
              }),
              Queue.shutdown(queue)
            )
        )
    }
    return store
  })
)

/**
 * A {@link Cluster.Health} check named `redis`: up while both connections of
 * {@link RedisConnection} are ready.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerHealth: Layer.Layer<Cluster.Health, never, RedisConnection> = Layer.effect(
  Cluster.Health,
  Effect.map(RedisConnection, (redis) => [{ name: "redis", up: redis.healthy }])
)

/**
 * Options of {@link layer}: those of {@link layerConnection}.
 *
 * @since 0.2.0
 * @category models
 */
export type Options = ConnectionOptions

/**
 * Everything an instance shares through Redis: the change bus, the task store, the legacy
 * session store, the `redis` health check and the connection (for its `healthy` state). Provide it around the whole program that makes and serves the server
 * (the connections close with the layer); give every instance the same `inputState.keys` too.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as McpServer from "presa-mcp/McpServer"
 * import * as Redis from "presa-mcp/Redis"
 * import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
 *
 * const main = Effect.gen(function*() {
 *   const server = yield* McpServer.make({
 *     name: "demo",
 *     version: "1.0.0",
 *     inputState: { keys: ["a-secret-shared-by-every-instance"] },
 *     tasks: {}
 *   })
 *   yield* StreamableHttp.serve(server, { port: 3000 })
 *   return yield* Effect.never
 * }).pipe(Effect.scoped, Effect.provide(Redis.layer({ url: "redis://127.0.0.1:6379" })))
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<Cluster.ChangeBus | Task.TaskStore | Cluster.SessionStore | Cluster.Health | RedisConnection> =>
  Layer.mergeAll(layerChangeBus, layerTaskStore, layerSessionStore, layerHealth).pipe(
    Layer.provideMerge(layerConnection(options))
  )
