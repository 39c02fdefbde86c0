/**
 * The legacy (2025-11-25 / 2025-06-18) Streamable HTTP session store (MCP 2025-11-25, Basic,
 * Transports, "Session Management"): one entry per `Mcp-Session-Id`, each with its own scope, its
 * connection (`server/connection.ts`: the requests in flight, `notifications/cancelled`, the
 * server→client requests waiting for the client's answer) and its standalone GET stream (event
 * ids, a bounded replay buffer for `Last-Event-ID`, "Resumability and Redelivery").
 *
 * With a `Cluster.SessionStore` (several instances behind one endpoint), a session is also stored
 * there: an instance that does not hold a session named by a request loads it (a replica with its
 * own connection and GET stream); every request reads the stored snapshot first and writes it back
 * when it changed it; the client's responses and `notifications/cancelled` are passed to the other
 * instances (the request they concern may run there); `DELETE` reaches every instance.
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Cluster from "../../../Cluster.js"
import type * as JsonRpc from "../../../JsonRpc.js"
import * as McpSchema from "../../../McpSchema.js"
import * as Connection from "../../server/connection.js"
import type * as Server from "../../server/dispatch.js"
import type { SessionState } from "../../server/model.js"

/** A message on a session's standalone stream, with its per-session event id (1, 2, …). */
export interface StreamEvent {
  readonly id: number
  readonly message: JsonRpc.Message
}

/** What the standalone stream yields: replayed events, a priming marker (the latest id so far), then live events. */
export type StreamItem =
  | { readonly _tag: "Priming"; readonly id: number }
  | { readonly _tag: "Event"; readonly event: StreamEvent }

interface Log {
  /** The id of the log's first event (1 on a single instance). */
  readonly firstId: number
  readonly nextId: number
  readonly buffer: ReadonlyArray<StreamEvent>
}

/** One legacy session. */
export interface HttpSession {
  readonly id: string
  readonly core: Server.Session
  /** The session's connection: its requests in flight and its server→client requests. */
  readonly connection: Connection.Connection
  /** Serialises the standalone stream's event log. */
  readonly lock: Effect.Semaphore
  readonly lastActivityMillis: Ref.Ref<number>
  readonly openStreams: Ref.Ref<number>
  readonly log: Ref.Ref<Log>
  readonly live: PubSub.PubSub<StreamEvent>
  readonly takeover: Ref.Ref<Option.Option<Deferred.Deferred<void>>>
  readonly closed: Deferred.Deferred<void>
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
  readonly replayBufferSize: number
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
}

/** A session id: 128 random bits from the platform CSPRNG, as a UUID (visible ASCII). */
export const newSessionId = (): string => crypto.randomUUID()

/** A session's state as the shared store keeps it. */
export const toSnapshot = (state: SessionState): Cluster.SessionSnapshot => ({
  protocolVersion: state.protocolVersion,
  clientInfo: state.clientInfo,
  clientCapabilities: state.clientCapabilities,
  initialized: state.initialized,
  logLevel: state.logLevel,
  subscriptions: Array.from(state.subscriptions)
})

/** A stored snapshot as a session's state. */
export const fromSnapshot = (snapshot: Cluster.SessionSnapshot): SessionState => ({
  protocolVersion: snapshot.protocolVersion,
  clientInfo: snapshot.clientInfo,
  clientCapabilities: snapshot.clientCapabilities,
  initialized: snapshot.initialized,
  logLevel: snapshot.logLevel,
  subscriptions: new Set(snapshot.subscriptions)
})

/** How long a stored session lives without a request when the idle timeout is infinite. */
const SHARED_TTL_CAP = Duration.days(1)

export const makeStore = (options: StoreOptions): Effect.Effect<SessionStore, never, Scope.Scope> =>
  Effect.gen(function*() {
    const storeScope = yield* Effect.scope
    const sessions = yield* Ref.make(HashMap.empty<string, HttpSession>())
    const createLock = yield* Effect.makeSemaphore(1)
    const shared = options.shared
    // A stored session expires after the idle timeout without a request (renewed by each request
    // and, while a GET stream is open, by the refresher below).
    const ttl = Duration.isFinite(options.idleTimeout) ? options.idleTimeout : SHARED_TTL_CAP

    const touch = (s: HttpSession) =>
      Effect.clockWith((clock) => Ref.set(s.lastActivityMillis, clock.unsafeCurrentTimeMillis()))

    /** Ends a session on this instance only (eviction, idle, the store's end, a remote `Closed`). */
    const closeLocal = (id: string): Effect.Effect<boolean> =>
      Effect.gen(function*() {
        const removed = yield* Ref.modify(sessions, (m) => [HashMap.get(m, id), HashMap.remove(m, id)] as const)
        if (Option.isNone(removed)) return false
        yield* Scope.close(removed.value.scope, Exit.void)
        return true
      })

    /** Terminates a session: here, in the shared store, and on the instances that hold it. */
    const close = (id: string): Effect.Effect<boolean> =>
      Effect.gen(function*() {
        const found = yield* closeLocal(id)
        if (shared !== undefined) {
          yield* shared.remove(id).pipe(
            Effect.zipRight(shared.signal(id, { _tag: "Closed" })),
            Effect.catchAll((e) =>
              Effect.logWarning(`Streamable HTTP: session ${id} not terminated on other instances: ${e.message}`)
            )
          )
        }
        return found
      })

    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Ref.get(sessions), (m) => Effect.forEach(HashMap.keys(m), closeLocal, { discard: true }))
    )

    /** Is the session doing nothing: no open GET stream and nothing in flight? */
    const isIdle = (s: HttpSession): Effect.Effect<boolean> =>
      Effect.map(Ref.get(s.openStreams), (streams) => streams === 0 && s.connection.inFlight() === 0)

    /** Closes the least recently active idle session here; `false` when every session is busy. */
    const evictOne: Effect.Effect<boolean> = Effect.gen(function*() {
      let oldest: { readonly id: string; readonly at: number } | undefined
      for (const s of HashMap.values(yield* Ref.get(sessions))) {
        if (!(yield* isIdle(s))) continue
        const at = yield* Ref.get(s.lastActivityMillis)
        if (oldest === undefined || at < oldest.at) oldest = { id: s.id, at }
      }
      if (oldest === undefined) return false
      yield* closeLocal(oldest.id)
      yield* Effect.logDebug(`Streamable HTTP: session ${oldest.id} closed to make room (maxSessions reached)`)
      return true
    })

    /** Writes the session's state to the shared store when a request changed it, and tells the others. */
    const sync = (s: HttpSession): Effect.Effect<void> =>
      shared === undefined ? Effect.void : Effect.gen(function*() {
        const current = yield* Ref.get(s.core.state)
        const last = yield* Ref.getAndSet(s.synced, current)
        if (current === last || current === undefined) return
        const snapshot = toSnapshot(current)
        yield* shared.save(s.id, snapshot, ttl).pipe(
          Effect.zipRight(shared.signal(s.id, { _tag: "State", state: snapshot })),
          Effect.catchAll((e) =>
            Effect.logWarning(`Streamable HTTP: session ${s.id} state not shared with other instances: ${e.message}`)
          )
        )
      })

    /**
     * A state read from the shared store replaces this instance's copy, unless a request here
     * changed it and has not written it yet (its write comes before its response).
     */
    const adopt = (s: HttpSession, snapshot: Cluster.SessionSnapshot): Effect.Effect<void> =>
      Effect.gen(function*() {
        const current = yield* Ref.get(s.core.state)
        if (current !== (yield* Ref.get(s.synced))) return
        const state = fromSnapshot(snapshot)
        yield* Ref.set(s.core.state, state)
        yield* Ref.set(s.synced, state)
      })

    /**
     * The session's connection as the POST handling sees it: with a shared store, a request's
     * state changes are stored before its response, and the client's responses and cancellations
     * are passed to the other instances.
     */
    const sharedConnection = (
      s: { readonly id: string; readonly sync: Effect.Effect<void> },
      connection: Connection.Connection,
      store: Cluster.SessionStoreShape
    ): Connection.Connection => ({
      ...connection,
      receive: (incoming, outlet = Connection.noOutlet) => {
        const message = incoming.message
        const forward = message._tag === "Response" ||
            (message._tag === "Notification" && message.message.method === McpSchema.Method.cancelled)
          ? store.signal(s.id, { _tag: "Message", message: message.message }).pipe(
            Effect.catchAll((e) =>
              Effect.logWarning(`Streamable HTTP: session ${s.id} message not passed to other instances: ${e.message}`)
            )
          )
          : Effect.void
        const received = connection.receive(incoming, {
          ...outlet,
          reply: (reply, text) => Effect.zipRight(s.sync, outlet.reply(reply, text))
        })
        return message._tag === "Request"
          ? received
          : Effect.zipRight(Effect.zipRight(received, forward), s.sync)
      }
    })

    /**
     * Opens a session on this instance: a new one (`initialize`) or a replica of one another
     * instance opened (loaded from the shared store).
     */
    const open = (id: string, core: Server.Session, replica: boolean): Effect.Effect<Option.Option<HttpSession>> =>
      createLock.withPermits(1)(Effect.gen(function*() {
        const existing = HashMap.get(yield* Ref.get(sessions), id)
        if (Option.isSome(existing)) return existing
        if (HashMap.size(yield* Ref.get(sessions)) >= options.maxSessions && !(yield* evictOne)) {
          return Option.none()
        }
        const scope = yield* Scope.fork(storeScope, ExecutionStrategy.sequential)
        const base = yield* Connection.make(options.server, {
          ...options.connection,
          session: core,
          // unique across the instances of a shared session: a response may reach any of them
          ...(shared === undefined ? {} : { clientRequestIdPrefix: `${crypto.randomUUID().slice(0, 8)}-` })
        }).pipe(Scope.extend(scope))
        const closed = yield* Deferred.make<void>()
        yield* Scope.addFinalizer(scope, Deferred.succeed(closed, undefined))
        const synced = yield* Ref.make(yield* Ref.get(core.state))
        const syncThis: Effect.Effect<void> = Effect.suspend(() => sync(session))
        const session: HttpSession = {
          id,
          core,
          connection: shared === undefined ? base : sharedConnection({ id, sync: syncThis }, base, shared),
          lock: yield* Effect.makeSemaphore(1),
          lastActivityMillis: yield* Ref.make(yield* Clock.currentTimeMillis),
          openStreams: yield* Ref.make(0),
          log: yield* Ref.make<Log>(
            shared === undefined ? { firstId: 1, nextId: 1, buffer: [] } : (() => {
              // each instance's stream of a shared session numbers from its own random start, so a
              // `Last-Event-ID` another instance issued is recognised as foreign (nothing replayed)
              const firstId = 1 + Math.floor(Math.random() * 2 ** 40)
              return { firstId, nextId: firstId, buffer: [] }
            })()
          ),
          live: yield* PubSub.unbounded<StreamEvent>(),
          takeover: yield* Ref.make(Option.none<Deferred.Deferred<void>>()),
          closed,
          scope,
          synced
        }
        yield* Scope.addFinalizer(scope, PubSub.shutdown(session.live))
        if (shared !== undefined) {
          const signals = yield* shared.signals(id).pipe(Scope.extend(scope))
          yield* Effect.forkIn(
            Effect.forever(Effect.flatMap(Queue.take(signals), (signal) => onSignal(session, base, signal))),
            scope
          )
        }
        yield* Ref.update(sessions, (m) => HashMap.set(m, session.id, session))
        const feed = yield* base.sessionNotifications.pipe(Scope.extend(scope))
        yield* Effect.forkIn(Stream.runForEach(feed, (m) => publish(session, m)), scope)
        const initializeTimeout = options.initializeTimeout
        if (!replica && initializeTimeout !== undefined && Duration.isFinite(initializeTimeout)) {
          // A client that never completes the handshake holds a slot only this long.
          yield* Effect.forkIn(
            Effect.sleep(initializeTimeout).pipe(
              Effect.zipRight(initializedAnywhere(session)),
              Effect.flatMap((initialized) =>
                initialized ? Effect.void : Effect.zipRight(
                  close(session.id),
                  Effect.logDebug(
                    `Streamable HTTP: session ${session.id} closed: no notifications/initialized within ${
                      Duration.format(initializeTimeout)
                    }`
                  )
                )
              )
            ),
            storeScope
          )
        }
        return Option.some(session)
      }))

    /** Has the client sent `notifications/initialized` (to this instance, or to another one)? */
    const initializedAnywhere = (s: HttpSession): Effect.Effect<boolean> =>
      Effect.flatMap(Ref.get(s.core.state), (state) => {
        if (state !== undefined && state.initialized) return Effect.succeed(true)
        if (shared === undefined) return Effect.succeed(false)
        // the store unreadable: keep the session rather than close one that may be in use
        return shared.load(s.id, ttl).pipe(
          Effect.map(Option.match({ onNone: () => false, onSome: (snapshot) => snapshot.initialized })),
          Effect.orElseSucceed(() => true)
        )
      })

    const onSignal = (
      s: HttpSession,
      base: Connection.Connection,
      signal: Cluster.SessionSignal
    ): Effect.Effect<void> => {
      switch (signal._tag) {
        case "State":
          return adopt(s, signal.state)
        case "Message": {
          const message = signal.message
          const classified: JsonRpc.Classified = "method" in message
            ? { _tag: "Notification", message }
            : { _tag: "Response", message }
          return base.receive({ message: classified }, Connection.noOutlet)
        }
        case "Closed":
          // not in the session's own scope: closing it interrupts this fiber
          return Effect.asVoid(Effect.forkIn(closeLocal(s.id), storeScope))
      }
    }

    const create = (core: Server.Session): Effect.Effect<Option.Option<HttpSession>> =>
      Effect.gen(function*() {
        const id = newSessionId()
        if (shared !== undefined) {
          const state = yield* Ref.get(core.state)
          if (state !== undefined) {
            const stored = yield* Effect.either(shared.save(id, toSnapshot(state), ttl))
            if (stored._tag === "Left") {
              // other instances could not find it: no session rather than one that works by chance
              yield* Effect.logWarning(
                `Streamable HTTP: no session opened, the session store failed: ${stored.left.message}`
              )
              return Option.none()
            }
          }
        }
        return yield* open(id, core, false)
      })

    // This instance's sessions only (no shared store): the lookup and the touch, in two steps.
    const getLocal = (id: string): Effect.Effect<Option.Option<HttpSession>> =>
      Effect.flatMap(Ref.get(sessions), (m): Effect.Effect<Option.Option<HttpSession>> => {
        const local = HashMap.get(m, id)
        return Option.isSome(local) ? Effect.as(touch(local.value), local) : Effect.succeed(local)
      })

    const get = (id: string): Effect.Effect<Option.Option<HttpSession>, Unavailable> =>
      shared === undefined ? getLocal(id) : getShared(shared, id)

    const getShared = (
      shared: Cluster.SessionStoreShape,
      id: string
    ): Effect.Effect<Option.Option<HttpSession>, Unavailable> =>
      Effect.gen(function*() {
        const local = HashMap.get(yield* Ref.get(sessions), id)
        const loaded = yield* Effect.either(shared.load(id, ttl))
        if (loaded._tag === "Left") {
          if (Option.isNone(local)) {
            return yield* Effect.fail<Unavailable>({
              _tag: "Unavailable",
              reason: `the session store is unavailable (${loaded.left.message})`
            })
          }
          // held here: served with this instance's copy of its state
          yield* Effect.logDebug(`Streamable HTTP: session ${id} served from memory: ${loaded.left.message}`)
          yield* touch(local.value)
          return local
        }
        if (Option.isNone(loaded.right)) {
          // terminated or expired in the store
          if (Option.isSome(local)) yield* closeLocal(id)
          return Option.none()
        }
        if (Option.isSome(local)) {
          yield* adopt(local.value, loaded.right.value)
          yield* touch(local.value)
          return local
        }
        const core: Server.Session = {
          state: yield* Ref.make<SessionState | undefined>(fromSnapshot(loaded.right.value))
        }
        const replica = yield* open(id, core, true)
        if (Option.isNone(replica)) {
          return yield* Effect.fail<Unavailable>({ _tag: "Unavailable", reason: "too many sessions on this instance" })
        }
        yield* touch(replica.value)
        return replica
      })

    const publish = (session: HttpSession, message: JsonRpc.Message): Effect.Effect<void> =>
      session.lock.withPermits(1)(Effect.gen(function*() {
        const event = yield* Ref.modify(session.log, (log): readonly [StreamEvent, Log] => {
          const ev: StreamEvent = { id: log.nextId, message }
          const buffer = [...log.buffer, ev]
          return [ev, {
            firstId: log.firstId,
            nextId: log.nextId + 1,
            buffer: buffer.length > options.replayBufferSize ? buffer.slice(-options.replayBufferSize) : buffer
          }]
        })
        yield* PubSub.publish(session.live, event)
      }))

    const stream = (session: HttpSession, lastEventId: number | undefined): Stream.Stream<StreamItem> =>
      Stream.unwrapScoped(Effect.gen(function*() {
        const end = yield* Deferred.make<void>()
        const previous = yield* Ref.getAndSet(session.takeover, Option.some(end))
        if (Option.isSome(previous)) yield* Deferred.succeed(previous.value, undefined)
        yield* Effect.acquireRelease(
          Ref.update(session.openStreams, (n) => n + 1),
          () => Effect.zipRight(Ref.update(session.openStreams, (n) => n - 1), touch(session))
        )
        // Subscribe first, then read the buffer: an event published in between is in both and
        // is dropped from the live side by its id.
        const subscription = yield* PubSub.subscribe(session.live)
        const log = yield* Ref.get(session.log)
        const issuedHere = lastEventId !== undefined && lastEventId >= log.firstId - 1 && lastEventId < log.nextId
        const replay = issuedHere ? log.buffer.filter((e) => e.id > lastEventId) : []
        const latest = log.nextId - 1
        const items: ReadonlyArray<StreamItem> = [
          ...replay.map((event): StreamItem => ({ _tag: "Event", event })),
          { _tag: "Priming", id: latest }
        ]
        return Stream.concat(
          Stream.fromIterable(items),
          Stream.fromQueue(subscription).pipe(
            Stream.filter((e) => e.id > latest),
            Stream.map((event): StreamItem => ({ _tag: "Event", event }))
          )
        ).pipe(
          Stream.interruptWhen(Deferred.await(end)),
          Stream.interruptWhen(Deferred.await(session.closed))
        )
      }))

    if (Duration.isFinite(options.idleTimeout)) {
      const timeoutMillis = Duration.toMillis(options.idleTimeout)
      const every = Duration.millis(Math.max(10, Math.min(timeoutMillis / 2, 60_000)))
      const sweep = Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        for (const s of HashMap.values(yield* Ref.get(sessions))) {
          const idle = now - (yield* Ref.get(s.lastActivityMillis)) >= timeoutMillis
          if (!idle) continue
          if (!(yield* isIdle(s))) continue
          // here only: with a shared store the session may be in use on another instance
          yield* closeLocal(s.id)
          yield* Effect.logDebug(
            `Streamable HTTP: session ${s.id} closed after ${Duration.format(options.idleTimeout)} idle`
          )
        }
      })
      yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(every), sweep)))
    }

    if (shared !== undefined) {
      // A session whose GET stream is open here stays alive in the store without requests.
      const every = Duration.millis(Math.max(10, Math.min(Duration.toMillis(ttl) / 3, 60_000)))
      const refresh = Effect.gen(function*() {
        for (const s of HashMap.values(yield* Ref.get(sessions))) {
          if ((yield* Ref.get(s.openStreams)) === 0) continue
          yield* Effect.ignore(shared.load(s.id, ttl))
        }
      })
      yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(every), refresh)))
    }

    return {
      create,
      get,
      close,
      all: Effect.map(Ref.get(sessions), (m) => Array.from(HashMap.values(m))),
      publish,
      stream
    }
  })
