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
 * - {@link layerEventStore}: the events of legacy sessions' GET streams (and of their requests'
 *   SSE streams) in Redis Streams, so a stream resumed with `Last-Event-ID` on any instance
 *   replays what the client missed.
 * - {@link layerHealth}: the `redis` check of a health endpoint.
 * - {@link layer}: all of them, over one {@link layerConnection}.
 *
 * Signing keys for `requestState` are configuration, not Redis state: give every instance the same
 * `inputState.keys` (`McpServer.make`), and a multi round-trip retry may land on any instance.
 *
 * Failure behaviour: commands are not queued while Redis is away (they fail at once, or after
 * `commandTimeout`), so no MCP request waits on Redis. Stateless requests keep working; change
 * events still reach this instance's subscribers (and are published for the others when Redis is
 * back, see {@link layerChangeBus}); task requests fail with -32603 until Redis is
 * back; a legacy session keeps working on the instance that holds it, others answer its requests
 * `503`, and no new session opens (`503`). The connection state is logged on every change and readable as {@link RedisConnection}'s
 * `healthy`. When Redis returns, the subscriptions are renewed and every local subscriber gets a
 * list change of each kind (events of other instances may have been lost meanwhile).
 *
 * What an instance reads from Redis is untrusted input: every message and stored record is
 * stamped with the `deployment` (see {@link ConnectionOptions}), bounded by `maxMessageBytes` and
 * decoded with Schema; what is not this deployment's is ignored and counted in {@link ignored},
 * and a corrupt record fails only the task or session it belongs to. Isolate deployments with
 * distinct prefixes, and name each deployment (`docs/scale-out.md`).
 *
 * Requires the `ioredis` package (an optional peer dependency).
 *
 * Guide: [Running several instances](https://github.com/presa-mcp/presa-mcp/blob/main/docs/scale-out.md).
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Metric from "effect/Metric"
import type * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { Redis as IORedis } from "ioredis"
import * as Cluster from "./Cluster.js"
import * as Errors from "./Errors.js"
import * as internalChangeBus from "./internal/redis/changeBus.js"
import * as internalConnection from "./internal/redis/connection.js"
import * as Envelope from "./internal/redis/envelope.js"
import * as internalEventStore from "./internal/redis/eventStore.js"
import * as internalSessionStore from "./internal/redis/sessionStore.js"
import * as internalTaskStore from "./internal/redis/taskStore.js"
import * as Task from "./Task.js"

/**
 * Options of {@link layerConnection}.
 *
 * - `url`: `redis://[user:password@]host:port[/db]` (or `rediss://`).
 * - `prefix`: the prefix of every key and channel; default `"presa-mcp"`. Instances of one server
 *   share it; different servers (or environments) on one Redis use different prefixes.
 * - `deployment`: the name of the deployment, stamped into every message and stored record;
 *   default the `prefix`. Instances of one server share it. A message or record stamped with
 *   another name (another deployment sharing the prefix by mistake) is ignored and counted in
 *   {@link ignored}: give each deployment its own name as a second guard besides the prefix.
 * - `instanceId`: this instance's name in task ownership and heartbeats; default a random UUID.
 * - `commandTimeout`: how long one command may take before it fails; default 2 seconds.
 * - `heartbeat`: how often the instance refreshes its liveness key; default 1 second. The key
 *   lives five heartbeats: an instance silent that long is taken as stopped (its unfinished tasks
 *   read `failed`).
 * - `maxMessageBytes`: bytes (UTF-8), default 8 MiB (8,388,608; at least 1,024): the largest
 *   pub/sub message and stored record this instance reads. A larger message is ignored and
 *   counted; a larger stored record reads as corrupt (see {@link layerTaskStore},
 *   {@link layerSessionStore}); this instance never writes one (a task record that would be
 *   larger, e.g. with a huge result, is stored `failed` with a message saying so).
 *
 * @since 0.2.0
 * @category models
 */
export interface ConnectionOptions {
  readonly url: string
  readonly prefix?: string | undefined
  readonly deployment?: string | undefined
  readonly instanceId?: string | undefined
  readonly commandTimeout?: Duration.DurationInput | undefined
  readonly heartbeat?: Duration.DurationInput | undefined
  readonly maxMessageBytes?: number | undefined
}

/**
 * Redis failed a command (not reachable, timed out, or an error reply), or a message to publish
 * was over `maxMessageBytes`. `operation` names the command (`"publish"`, `"session load"`, …).
 * In-process only.
 *
 * @since 0.2.0
 * @category errors
 */
export const RedisError: typeof Errors.RedisError = Errors.RedisError

/**
 * @since 0.2.0
 * @category errors
 */
export type RedisError = Errors.RedisError

/**
 * The shared connection of the Redis layers.
 *
 * - `run(operation, f)`: runs one command (or transaction) on the command connection; fails with
 *   {@link RedisError} at once when Redis is not connected, after `commandTimeout` otherwise.
 * - `channel(name)`: the messages of one pub/sub channel (the prefix is added), as a queue closed
 *   with the Scope; subscribed again after each reconnection (messages sent meanwhile are lost).
 *   Messages over `maxMessageBytes` are left out (and counted in {@link ignored}).
 * - `healthy`: whether both connections (commands and pub/sub) are ready now; `changes` streams it.
 * - `key(name)`: `name` under the prefix.
 * - `instanceId`, `deployment`, `heartbeatMs` (milliseconds), `maxMessageBytes` (bytes): the
 *   options as resolved.
 *
 * @since 0.2.0
 * @category models
 */
export interface RedisConnectionShape {
  readonly instanceId: string
  readonly deployment: string
  readonly key: (name: string) => string
  readonly heartbeatMs: number
  readonly maxMessageBytes: number
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

/**
 * Two connections to Redis (commands, pub/sub), closed with the layer. Building waits for the
 * first connection at most `commandTimeout`; it also builds while Redis is down (the instance
 * starts degraded), and the client reconnects on its own, every 0.1 to 1 second. State changes
 * are logged (`Effect.logWarning` when lost, `Effect.logInfo` when back).
 *
 * @since 0.2.0
 * @category layers
 */
export const layerConnection = (options: ConnectionOptions): Layer.Layer<RedisConnection> =>
  Layer.scoped(RedisConnection, internalConnection.make(options))

/**
 * `presa_mcp.redis.ignored`: a counter (Effect `Metric`, read by the app's metric exporter or
 * with `Metric.value`) of what an instance read from Redis and ignored because it is not its
 * deployment's. Labels:
 *
 * - `source`: the channel (`changes`, `tasks`, `sessions`) or the stored record
 *   (`session-record`, `task-record`, `event`);
 * - `reason`: `oversized` (over `maxMessageBytes`), `malformed` (not JSON, not this version's
 *   format, or a `sessions` message carrying something other than a response or a notification),
 *   `foreign` (stamped with another `deployment`).
 *
 * Nothing ignored changes what the instance serves: its definitions are its own, a message only
 * ever announces a change or wakes a request. The first ignored value of each source and reason
 * is logged as a warning (per reader), the next ones at debug level.
 *
 * @since 0.2.0
 * @category models
 */
export const ignored: Metric.Metric.Counter<number> = Envelope.ignored

/**
 * A {@link Cluster.ChangeBus} over the Redis channel `<prefix>:changes`. An event is delivered to
 * this instance's subscribers at once and published for the others, which ignore their own
 * messages (and messages that are not their deployment's: see {@link ignored}). An event over
 * `maxMessageBytes` is logged and not shared. An event whose PUBLISH failed (Redis away) is kept
 * in a local outbox, in order, and published again every heartbeat once the connection has been
 * ready for two heartbeats; equal pending events are kept once, and at most 1,000 events and 1 MiB
 * are kept: past that the oldest pending `ResourceUpdated` is dropped and a `ListChanged` of
 * `resources` stands for it, or the oldest pending `TaskStatus` is dropped (a listener re-reads
 * its tasks on an interval anyway; list changes are never dropped). When the connection comes
 * back, local subscribers also get a `ListChanged` of each kind.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerChangeBus: Layer.Layer<Cluster.ChangeBus, never, RedisConnection> = Layer.scoped(
  Cluster.ChangeBus,
  Effect.flatMap(RedisConnection, internalChangeBus.make)
)

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
 * - A Redis error is the store's `Task.TaskStoreError` (since 0.2.0; before, a defect): a request
 *   is answered -32603 ("Task store unavailable"), nothing waits longer than `commandTimeout`; a
 *   change a task running here makes meanwhile is kept by the server and written when Redis is
 *   back (docs/scale-out.md, "When Redis is away"), and written again whole when Redis lost the
 *   record (a restart without persistence).
 * - The heartbeat key is also refreshed as soon as the connection is ready again, and an instance
 *   reads another's task as stopped only once it has itself reached Redis for five heartbeats
 *   (since its connection was ready and since its last failed command): an outage may outlive the
 *   keys (since 0.2.0).
 * - A stored record that does not decode (corrupt, over `maxMessageBytes`) is a defect of the
 *   request reading that task only (-32603; the log names the task); a record stamped with another
 *   deployment reads as absent. Both are counted in {@link ignored}.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerTaskStore: Layer.Layer<Task.TaskStore, never, RedisConnection> = Layer.scoped(
  Task.TaskStore,
  Effect.flatMap(RedisConnection, internalTaskStore.make)
)

/**
 * A {@link Cluster.SessionStore} in Redis: each legacy session is the key `<prefix>:session:<id>`
 * (its snapshot as JSON, expiring after the idle timeout without a request), and the signals
 * between the instances that hold it travel on the channel `<prefix>:sessions` (each instance
 * keeps those of the sessions it holds). Operations fail with `Cluster.SessionStoreError` while
 * Redis is away (after at most `commandTimeout`). A stored snapshot that does not decode
 * (corrupt, over `maxMessageBytes`) fails the `load` of that session only, with a
 * `SessionStoreError` naming it (`503` for that request), and is removed (the next request of the
 * session gets `404`, and its client starts a new session); a snapshot stamped with another
 * deployment reads as absent. Both are counted in {@link ignored}.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerSessionStore: Layer.Layer<Cluster.SessionStore, never, RedisConnection> = Layer.scoped(
  Cluster.SessionStore,
  Effect.flatMap(RedisConnection, internalSessionStore.make)
)

/**
 * A {@link Cluster.EventStore} on Redis Streams: the events of each resumable stream (a legacy
 * session's GET stream, `get:<session id>`; one of its requests' SSE streams,
 * `post:<session id>:<key>`) are the stream key `<prefix>:events:<stream>` (XADD; replayed with
 * XRANGE), numbered by the counter `<prefix>:events:<stream>:n`, so an id issued on one instance
 * is understood on every other.
 *
 * - Bounds (`Cluster.EventStoreOptions`): at most `maxEvents` entries per stream (default 100;
 *   exact `MAXLEN` trimming on each append) and none older than `maxAge` (default 10 minutes:
 *   `MINID` trimming on each append, and older entries are not replayed). A GET stream's keys
 *   expire a day (or `maxAge`, if longer) after its last append or claim; a request's stream's
 *   `maxAge` after (a day if `maxAge` is infinite), and once expired a late append does not
 *   recreate it (its message is sent without an id).
 * - One writer per stream, `<prefix>:events:<stream>:writer`: the instance that last opened the
 *   session's GET stream (or, before any, the first to record); for a request's stream, the
 *   instance running the request. Every instance holding the session
 *   sees the same notifications; only the writer records them, so each is recorded once. Each
 *   instance refreshes `<prefix>:events:alive:<instanceId>` every `heartbeat`; when a writer's key
 *   expired (five heartbeats: it stopped), the next instance holding the session to record becomes
 *   the writer. `release` gives the stream up (the writer key is deleted if it is this
 *   instance's). A stream without a live writer replays with `abandoned: true`
 *   (`Cluster.Replay`, since 0.2.0): a GET following a request's stream then ends.
 * - Each entry is stamped with the `deployment`; an entry of another deployment, or one that does
 *   not decode, is not replayed (counted in {@link ignored}, source `event`).
 * - While Redis is away, operations fail with `Cluster.EventStoreError`: an event is still sent
 *   live on an open stream here, without an id; a stream opened then has no replay.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerEventStore = (
  options: Cluster.EventStoreOptions = {}
): Layer.Layer<Cluster.EventStore, never, RedisConnection> =>
  Layer.scoped(Cluster.EventStore, Effect.flatMap(RedisConnection, (redis) => internalEventStore.make(redis, options)))

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
 * Options of {@link layer}: those of {@link layerConnection}, and `events`: the bounds of
 * {@link layerEventStore}.
 *
 * @since 0.2.0
 * @category models
 */
export type Options = ConnectionOptions & { readonly events?: Cluster.EventStoreOptions | undefined }

/**
 * Everything an instance shares through Redis: the change bus, the task store, the legacy
 * session store, the event store of resumable streams, the `redis` health check and the
 * connection (for its `healthy` state). Provide
 * it around the whole program that makes and serves the server (the connections close with the
 * layer); give every instance of the deployment the same `prefix`, `deployment` and
 * `inputState.keys`.
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
 * }).pipe(
 *   Effect.scoped,
 *   Effect.provide(Redis.layer({ url: "redis://127.0.0.1:6379", prefix: "demo", deployment: "demo-prod" }))
 * )
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (
  options: Options
): Layer.Layer<
  Cluster.ChangeBus | Task.TaskStore | Cluster.SessionStore | Cluster.EventStore | Cluster.Health | RedisConnection
> =>
  Layer.mergeAll(layerChangeBus, layerTaskStore, layerSessionStore, layerEventStore(options.events), layerHealth).pipe(
    Layer.provideMerge(layerConnection(options))
  )
