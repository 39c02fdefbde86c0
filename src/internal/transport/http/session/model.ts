/**
 * The legacy (2025-11-25 / 2025-06-18) Streamable HTTP session store's model (MCP 2025-11-25,
 * Basic, Transports, "Session Management"): one `HttpSession` per `Mcp-Session-Id`, the store's
 * interface, and `StoreState`, the record its module functions share:
 *
 * - `store.ts`: `makeStore`, opening sessions (`initialize`, or a replica of another instance's);
 * - `stream.ts`: the standalone GET stream (its events recorded in a `Cluster.EventStore` for `Last-Event-ID`);
 * - `postStream.ts`: a request's POST SSE stream, recorded there too, and its continuation on a GET;
 * - `replica.ts`: a session shared through a `Cluster.SessionStore` (state read and written back);
 * - `signals.ts`: what other instances signal about a session (`State`, `Message`, `Closed`);
 * - `sweep.ts`: every way a session ends (DELETE, idle, eviction, no handshake, the store's end).
 * @internal
 */
import type * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as HashMap from "effect/HashMap"
import type * as Option from "effect/Option"
import type * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as Cluster from "../../../../Cluster.js"
import type * as JsonRpc from "../../../../JsonRpc.js"
import type * as Connection from "../../../server/connection.js"
import type * as Server from "../../../server/dispatch.js"
import type { SessionState } from "../../../server/model.js"
import type { SseFraming } from "../responses.js"

/**
 * A message on a session's standalone stream, with its event id (from the `Cluster.EventStore`;
 * none when the store failed to record it: it is delivered live, not resumable).
 */
export interface StreamEvent {
  readonly id?: number | undefined
  readonly message: JsonRpc.Message
}

/** What the standalone stream yields: replayed events, a priming marker (the latest id so far), then live events. */
export type StreamItem =
  | { readonly _tag: "Priming"; readonly id: number }
  | { readonly _tag: "Event"; readonly event: StreamEvent }

/** The name of a session's standalone stream in the `Cluster.EventStore`. */
export const streamName = (sessionId: string): string => `get:${sessionId}`

/** One legacy session. Everything it holds is released when its `scope` closes. */
export interface HttpSession {
  readonly id: string
  readonly core: Server.Session
  /** The session's connection: its requests in flight and its server→client requests. */
  readonly connection: Connection.Connection
  /** Serialises the standalone stream's events (recording, and opening a stream). */
  readonly lock: Effect.Semaphore
  readonly lastActivityMillis: Ref.Ref<number>
  readonly openStreams: Ref.Ref<number>
  readonly live: PubSub.PubSub<StreamEvent>
  readonly takeover: Ref.Ref<Option.Option<Deferred.Deferred<void>>>
  /**
   * The names (in the `Cluster.EventStore`) of this session's POST streams as this instance
   * records an event on them or ends them: wakes a GET that follows one (`postStream.ts`).
   */
  readonly postEvents: PubSub.PubSub<string>
  /**
   * This session's POST streams that ended with their response, with when (ms), kept for replay:
   * released once older than their retention (`postStream.ts`), the rest when the session ends.
   */
  readonly finishedPostStreams: Ref.Ref<ReadonlyArray<{ readonly name: string; readonly endedAt: number }>>
  readonly closed: Deferred.Deferred<void>
  /**
   * The session's scope, a child of the store's: its connection, its stream's PubSub, its
   * notification feed, its signal listener and its handshake timer live and end here.
   */
  readonly scope: Scope.CloseableScope
  /** The state last read from or written to the shared store (a change since is written back). */
  readonly synced: Ref.Ref<SessionState | undefined>
}

/** Store options (defaults applied by the caller). */
export interface StoreOptions {
  readonly server: Server.Server
  readonly maxSessions: number
  readonly idleTimeout: Duration.Duration
  /** A session whose client has not sent `notifications/initialized` this long after `initialize` is closed. */
  readonly initializeTimeout?: Duration.Duration | undefined
  /** Events kept per session for `Last-Event-ID` by the default in-memory event store. */
  readonly replayBufferSize: number
  /** Where the GET streams' events are kept; none: in memory (`replayBufferSize` events, 10 minutes). */
  readonly events?: Cluster.EventStoreShape | undefined
  /** Options of each session's connection (its `session` is the session's own). */
  readonly connection: Omit<Connection.Options, "session">
  /** Where sessions are shared with other instances; none: this process only. */
  readonly shared?: Cluster.SessionStoreShape | undefined
}

/** The shared store could not be read, or this instance cannot take the session now: `503`. */
export interface Unavailable {
  readonly _tag: "Unavailable"
  readonly reason: string
}

/** The store: sessions in a `Ref<HashMap>` owned by the scope that made it. */
export interface SessionStore {
  /**
   * Registers a session for an answered `initialize`. At `maxSessions` the least recently active
   * idle session (no open GET stream, nothing in flight) is closed to make room; `None` when every
   * session is busy.
   */
  readonly create: (core: Server.Session) => Effect.Effect<Option.Option<HttpSession>>
  /**
   * Looks a session up and marks it active. With a shared store: reads its snapshot there (a
   * session this instance does not hold is loaded; one the store no longer has is closed here).
   */
  readonly get: (id: string) => Effect.Effect<Option.Option<HttpSession>, Unavailable>
  /**
   * Ends a session: interrupts its in-flight requests and its stream, here and (shared store) on
   * every instance. `false` if unknown.
   */
  readonly close: (id: string) => Effect.Effect<boolean>
  /** All live sessions. */
  readonly all: Effect.Effect<ReadonlyArray<HttpSession>>
  /** Queues a server message on a session's standalone stream (kept for replay). */
  readonly publish: (session: HttpSession, message: JsonRpc.Message) => Effect.Effect<void>
  /**
   * The session's standalone stream. A new stream ends the previous one (each message goes to
   * one stream). With `lastEventId`, buffered events after it are replayed first.
   */
  readonly stream: (session: HttpSession, lastEventId: number | undefined) => Stream.Stream<StreamItem>
  /**
   * How a request's POST SSE stream in this session is written: each message recorded in the
   * event store with an id naming the stream (`postStream.ts`); `primes`: the stream opens with a
   * priming event (2025-11-25).
   */
  readonly postStream: (session: HttpSession, primes: boolean) => SseFraming
  /**
   * The continuation of a POST stream on a GET (`Last-Event-ID` of that stream): the SSE frames
   * recorded after `after`, then the rest of the stream as it is recorded, up to its response.
   */
  readonly follow: (session: HttpSession, key: string, after: number) => Stream.Stream<string>
}

/** What the store's module functions share, built once by `makeStore`. */
export interface StoreState {
  readonly options: StoreOptions
  /** The store's scope: each session's scope is a child; closing it ends every session. */
  readonly scope: Scope.Scope
  /** The sessions this instance holds, by id: a session leaves it when it ends, by any path. */
  readonly sessions: Ref.Ref<HashMap.HashMap<string, HttpSession>>
  /** Serialises opening sessions (the `maxSessions` check and the insertion). */
  readonly createLock: Effect.Semaphore
  readonly shared: Cluster.SessionStoreShape | undefined
  /** Where the GET streams' events are kept (`Last-Event-ID` replay). */
  readonly events: Cluster.EventStoreShape
  /**
   * How long a stored session lives in the shared store without a request: the idle timeout
   * (renewed by each request and, while a GET stream is open, by `replica.ts` `keepStreamsAlive`).
   */
  readonly ttl: Duration.Duration
}

/** A session id: 128 random bits from the platform CSPRNG, as a UUID (visible ASCII). */
export const newSessionId = (): string => crypto.randomUUID()

/** Marks a session active now. */
export const touch = (s: HttpSession): Effect.Effect<void> =>
  Effect.clockWith((clock) => Ref.set(s.lastActivityMillis, clock.unsafeCurrentTimeMillis()))

/**
 * Counts a stream of the session as open for the current scope (the idle sweep leaves the
 * session alone meanwhile); its end is the session's latest activity.
 */
export const openStream = (s: HttpSession): Effect.Effect<void, never, Scope.Scope> =>
  Effect.acquireRelease(
    Ref.update(s.openStreams, (n) => n + 1),
    () => Effect.zipRight(Ref.update(s.openStreams, (n) => n - 1), touch(s))
  )

/** Is the session doing nothing: no open GET stream and nothing in flight? */
export const isIdle = (s: HttpSession): Effect.Effect<boolean> =>
  Effect.map(Ref.get(s.openStreams), (streams) => streams === 0 && s.connection.inFlight() === 0)
