/**
 * Seams for running several server instances as one MCP server (behind a plain load balancer).
 *
 * The 2026-07-28 revision is stateless so that a remote server can run as many instances behind a
 * round-robin balancer (MCP 2026-07-28, Overview). What a single instance keeps in memory has to
 * be shared for that: the change events a `subscriptions/listen` stream or a legacy session
 * forwards ({@link ChangeBus}), the task records (`Task.TaskStore`), and the keys that sign
 * `requestState` (the `inputState.keys` option of `McpServer.make`, from configuration).
 *
 * Each seam is a service that `McpServer.make` reads from its context; without it the server keeps
 * the state in memory, exactly as a single instance does. The Streamable HTTP transport reads one
 * more, {@link SessionStore}: legacy sessions (MCP 2025-11-25) whose requests may reach any
 * instance, and {@link EventStore}: the events of their GET streams, for `Last-Event-ID`. `presa-mcp/Redis` provides Redis-backed layers for them, and a {@link Health} check.
 *
 * Guide: [Running several instances](https://github.com/presa-mcp/presa-mcp/blob/main/docs/scale-out.md).
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as internalEventStore from "./internal/eventStore.js"
import type * as JsonRpc from "./JsonRpc.js"
import type * as McpSchema from "./McpSchema.js"

/**
 * A change to what the server serves: a list change of one kind (tools, prompts, resources), an
 * update of one resource's contents (MCP 2026-07-28, Subscriptions), or (since 0.2.0)
 * `TaskStatus`: the record of task `taskId` changed (status, status message, questions, outcome;
 * the Tasks extension, SEP-2663 "Task Status Notifications"). `TaskStatus` carries only the id:
 * each instance with a `subscriptions/listen` for that task re-reads the shared `Task.TaskStore`
 * and sends what `tasks/get` gives. An instance of an older build that does not know the variant
 * ignores it (counted in `presa_mcp.redis.ignored` as `malformed`).
 *
 * @since 0.2.0
 * @category models
 */
export type ChangeEvent =
  | { readonly _tag: "ListChanged"; readonly kind: "tools" | "prompts" | "resources" }
  | { readonly _tag: "ResourceUpdated"; readonly uri: string }
  | { readonly _tag: "TaskStatus"; readonly taskId: string }

/**
 * Where change events travel.
 *
 * - `publish`: announces an event to every subscriber of every instance sharing the bus. It must
 *   not wait on a remote peer that is away: a bus that cannot reach its backend still delivers to
 *   this instance's subscribers and logs the failure.
 * - `subscribe`: a queue (closed with the Scope) of every event published after the call,
 *   whichever instance published it, in the order this instance received them. Each
 *   `subscriptions/listen` request and each legacy session takes one, and coalesces its own
 *   backlog as a single instance does.
 *
 * @since 0.2.0
 * @category models
 */
export interface ChangeBusShape {
  readonly publish: (event: ChangeEvent) => Effect.Effect<void>
  readonly subscribe: Effect.Effect<Queue.Dequeue<ChangeEvent>, never, Scope.Scope>
}

/**
 * The change-event bus as a service. `McpServer.make` uses the one in its context when there is
 * one, else a fresh in-memory bus (one `PubSub` per server).
 *
 * @since 0.2.0
 * @category models
 */
export class ChangeBus extends Context.Tag("presa-mcp/ChangeBus")<ChangeBus, ChangeBusShape>() {}

/**
 * What a legacy session (MCP 2025-11-25, Basic, Transports, "Session Management") carries from one
 * request to the next, as stored for the other instances: the negotiated version, the client's
 * capabilities and info from `initialize`, whether `notifications/initialized` came, the level
 * `logging/setLevel` set, and the URIs of `resources/subscribe`.
 *
 * @since 0.2.0
 * @category models
 */
export interface SessionSnapshot {
  readonly protocolVersion: McpSchema.ProtocolVersion
  readonly clientInfo: McpSchema.Implementation | undefined
  readonly clientCapabilities: McpSchema.ClientCapabilities
  readonly initialized: boolean
  readonly logLevel: McpSchema.LoggingLevel | undefined
  readonly subscriptions: ReadonlyArray<string>
}

/**
 * A message for the other instances that hold a legacy session:
 *
 * - `State`: the session's snapshot changed (the instance holding its GET stream filters
 *   resource updates with it);
 * - `Message`: a client message that may concern a request running on another instance: a
 *   response to a server→client request (`elicitation/create`, `sampling/createMessage`,
 *   `roots/list`), or `notifications/cancelled`;
 * - `Closed`: the session was terminated (`DELETE`, or its handshake timed out): every instance
 *   ends its requests and its GET stream.
 *
 * @since 0.2.0
 * @category models
 */
export type SessionSignal =
  | { readonly _tag: "State"; readonly state: SessionSnapshot }
  | { readonly _tag: "Message"; readonly message: JsonRpc.Response | JsonRpc.Notification }
  | { readonly _tag: "Closed" }

/**
 * A {@link SessionStore} could not reach its backend (or the backend failed the operation).
 *
 * @since 0.2.0
 * @category errors
 */
export class SessionStoreError extends Data.TaggedError("SessionStoreError")<{
  readonly operation: string
  readonly message: string
}> {}

/**
 * Where the legacy sessions of the Streamable HTTP transport live besides this process.
 *
 * - `save(id, snapshot, ttl)`: stores the snapshot; it expires after `ttl` without a `load`.
 * - `load(id, ttl)`: the stored snapshot (`None`: unknown, expired or terminated), and its
 *   expiry is renewed to `ttl`.
 * - `remove(id)`: forgets the session.
 * - `signal(id, signal)`: sends a {@link SessionSignal} to the other instances holding the
 *   session (not to this one).
 * - `signals(id)`: the signals other instances send about the session, as a queue closed with
 *   the Scope.
 *
 * Every operation fails with {@link SessionStoreError} instead of waiting on an absent backend;
 * `load` also fails with it when what the backend holds for the session cannot be read (a corrupt
 * record: that session only).
 *
 * @since 0.2.0
 * @category models
 */
export interface SessionStoreShape {
  readonly save: (
    id: string,
    snapshot: SessionSnapshot,
    ttl: Duration.Duration
  ) => Effect.Effect<void, SessionStoreError>
  readonly load: (
    id: string,
    ttl: Duration.Duration
  ) => Effect.Effect<Option.Option<SessionSnapshot>, SessionStoreError>
  readonly remove: (id: string) => Effect.Effect<void, SessionStoreError>
  readonly signal: (id: string, signal: SessionSignal) => Effect.Effect<void, SessionStoreError>
  readonly signals: (id: string) => Effect.Effect<Queue.Dequeue<SessionSignal>, never, Scope.Scope>
}

/**
 * The legacy session store as a service. The Streamable HTTP handler uses the one in its context
 * when there is one; else sessions live in the handler's memory only (one instance), as without
 * this seam.
 *
 * With a store, a POST, GET or DELETE naming a session this instance does not hold loads it from
 * the store (unknown there too → `404`); every request of a session reads its snapshot first and
 * writes it back when the request changed it (before its response), so the requests of one
 * session may land on any instance. Concurrent changes on two instances: the later write wins.
 * A GET stream's events are kept in the {@link EventStore}: with a shared one (`presa-mcp/Redis`),
 * `Last-Event-ID` replays on any instance; with the default in-memory one, each instance numbers
 * its own events and replays only what it sent.
 *
 * @since 0.2.0
 * @category models
 */
export class SessionStore extends Context.Tag("presa-mcp/SessionStore")<SessionStore, SessionStoreShape>() {}

/**
 * An {@link EventStore} could not reach its backend (or the backend failed the operation).
 *
 * @since 0.2.0
 * @category errors
 */
export class EventStoreError extends Data.TaggedError("EventStoreError")<{
  readonly operation: string
  readonly message: string
}> {}

/**
 * One event of a resumable stream: its id (increasing by one within its stream; the SSE `id` field) and the
 * server message it carries.
 *
 * @since 0.2.0
 * @category models
 */
export interface StoredEvent {
  readonly id: number
  readonly message: JsonRpc.Message
}

/**
 * What {@link EventStoreShape} `replayAfter` finds after a `Last-Event-ID`:
 *
 * - `events`: the events of the stream after that id that are still kept, in order;
 * - `latest`: the stream's latest event id (0: none yet);
 * - `known`: whether the stream issued that id (`false`: it is ahead of the stream, or from before
 *   its start, e.g. another instance's in-memory store, or the stream was never claimed nor
 *   appended to, was released or expired; `events` is then empty);
 * - `gap`: events after that id were dropped by the bounds (count or age) before the client came
 *   back: `events` starts later than the id after it.
 * - `abandoned` (optional): `true` when the stream has no writer any more: the instance that
 *   recorded it released it, or stopped without releasing it (its liveness lapsed, e.g. killed).
 *   Nothing more is appended to it unless an instance claims it: a reader following it for
 *   messages still to come (a request's response) stops. Absent or `false`: a writer may still
 *   append (always so in a single-process store, whose one writer is the process itself: a
 *   released stream is forgotten there, `known` is then `false`).
 *
 * @since 0.2.0
 * @category models
 */
export interface Replay {
  readonly events: ReadonlyArray<StoredEvent>
  readonly latest: number
  readonly known: boolean
  readonly gap: boolean
  readonly abandoned?: boolean | undefined
}

/**
 * Where the events of resumable streams are kept (MCP 2025-11-25, Basic, Transports,
 * "Resumability and Redelivery": event ids are assigned per stream, and `Last-Event-ID` replays
 * only the events of the stream that issued it). A stream is named by the transport: a legacy
 * session's GET stream `get:<session id>`, the SSE stream of one of its POSTed requests
 * `post:<session id>:<key>` (since 0.2.0; `key` is drawn per request, and the stream's SSE ids
 * are `<key>.<id>`).
 *
 * - `append(stream, message)`: records a message and gives its event (the stream's next id).
 *   A stream has one writer at a time: `None` when another instance claimed the stream (its
 *   writer records the same session notifications; nothing is recorded twice).
 * - `claim(stream)`: this instance becomes the stream's writer (the instance serving the stream
 *   now); the stream's latest event id (0: none yet).
 * - `replayAfter(stream, id)`: see {@link Replay}.
 * - `release(stream)`: this instance no longer needs the stream (its session ended here; a
 *   request's stream ended without its response, or its retention after the response passed); a
 *   store shared by several instances keeps it for the others until it expires, with no writer
 *   (the next instance to append or claim becomes it; {@link Replay} `abandoned` until then).
 *
 * Bounds: each stream keeps at most `maxEvents` events (the oldest go first) and none older than
 * `maxAge`. Every operation fails with {@link EventStoreError} rather than wait on an absent
 * backend.
 *
 * @since 0.2.0
 * @category models
 */
export interface EventStoreShape {
  readonly append: (
    stream: string,
    message: JsonRpc.Message
  ) => Effect.Effect<Option.Option<StoredEvent>, EventStoreError>
  readonly claim: (stream: string) => Effect.Effect<number, EventStoreError>
  readonly replayAfter: (stream: string, lastEventId: number) => Effect.Effect<Replay, EventStoreError>
  readonly release: (stream: string) => Effect.Effect<void>
}

/**
 * The event store as a service. The Streamable HTTP handler uses the one in its context when
 * there is one; else an in-memory store ({@link makeMemoryEventStore} with the handler's
 * `replayBufferSize`). `presa-mcp/Redis` provides one on Redis Streams (`Redis.layerEventStore`),
 * so that a legacy session's GET stream resumed on any instance replays what it missed.
 *
 * @since 0.2.0
 * @category models
 */
export class EventStore extends Context.Tag("presa-mcp/EventStore")<EventStore, EventStoreShape>() {}

/**
 * Bounds of an event store, per stream: `maxEvents` (events, default 100) and `maxAge` (default
 * 10 minutes, 600,000 ms; an event older than that is not replayed).
 *
 * @since 0.2.0
 * @category models
 */
export interface EventStoreOptions {
  readonly maxEvents?: number | undefined
  readonly maxAge?: Duration.DurationInput | undefined
}

/**
 * Default `maxEvents` of an event store: 100 events per stream.
 *
 * @since 0.2.0
 * @category constants
 */
export const DEFAULT_MAX_EVENTS = 100

/**
 * Default `maxAge` of an event store: 10 minutes (600,000 ms).
 *
 * @since 0.2.0
 * @category constants
 */
export const DEFAULT_MAX_EVENT_AGE: Duration.DurationInput = "10 minutes"

/**
 * An in-memory {@link EventStoreShape} (one process): streams numbered from 1, or from a random
 * start with `randomStart` (then an id issued by another instance's store is recognised as unknown
 * rather than replayed from the wrong stream). Every append is recorded (one writer: this
 * process); `release` forgets the stream. Ages are read from the Effect `Clock`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeMemoryEventStore = (
  options: EventStoreOptions & { readonly randomStart?: boolean | undefined } = {}
): Effect.Effect<EventStoreShape> => internalEventStore.makeMemory(options)

/**
 * The state of one backend the instance depends on, for a health check: its `name` (e.g.
 * `"redis"`) and whether it is reachable now.
 *
 * @since 0.2.0
 * @category models
 */
export interface HealthCheck {
  readonly name: string
  readonly up: Effect.Effect<boolean>
}

/**
 * The backends of this instance a health endpoint reports (`StreamableHttp`'s `healthPath`
 * option): `presa-mcp/Redis` provides one named `redis`.
 *
 * @since 0.2.0
 * @category models
 */
export class Health extends Context.Tag("presa-mcp/Health")<Health, ReadonlyArray<HealthCheck>>() {}
