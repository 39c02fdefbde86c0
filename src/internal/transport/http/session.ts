/**
 * The legacy (2025-11-25 / 2025-06-18) Streamable HTTP session store (MCP 2025-11-25, Basic,
 * Transports, "Session Management"): one entry per `Mcp-Session-Id`, each with its own scope, its
 * connection (`server/connection.ts`: the requests in flight, `notifications/cancelled`, the
 * server→client requests waiting for the client's answer) and its standalone GET stream (event
 * ids, a bounded replay buffer for `Last-Event-ID`, "Resumability and Redelivery").
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
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as JsonRpc from "../../../JsonRpc.js"
import * as Connection from "../../server/connection.js"
import type * as Server from "../../server/dispatch.js"

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
}

/** The store: sessions in a `Ref<HashMap>` owned by the scope that made it. */
export interface SessionStore {
  /**
   * Registers a session for an answered `initialize`. At `maxSessions` the least recently active
   * idle session (no open GET stream, nothing in flight) is closed to make room; `None` when every
   * session is busy.
   */
  readonly create: (core: Server.Session) => Effect.Effect<Option.Option<HttpSession>>
  /** Looks a session up and marks it active. */
  readonly get: (id: string) => Effect.Effect<Option.Option<HttpSession>>
  /** Ends a session: interrupts its in-flight requests and its stream. `false` if unknown. */
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

export const makeStore = (options: StoreOptions): Effect.Effect<SessionStore, never, Scope.Scope> =>
  Effect.gen(function*() {
    const storeScope = yield* Effect.scope
    const sessions = yield* Ref.make(HashMap.empty<string, HttpSession>())
    const createLock = yield* Effect.makeSemaphore(1)

    const touch = (s: HttpSession) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.set(s.lastActivityMillis, now))

    const close = (id: string): Effect.Effect<boolean> =>
      Effect.gen(function*() {
        const removed = yield* Ref.modify(sessions, (m) => [HashMap.get(m, id), HashMap.remove(m, id)] as const)
        if (Option.isNone(removed)) return false
        yield* Scope.close(removed.value.scope, Exit.void)
        return true
      })

    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Ref.get(sessions), (m) => Effect.forEach(HashMap.keys(m), close, { discard: true }))
    )

    /** Is the session doing nothing: no open GET stream and nothing in flight? */
    const isIdle = (s: HttpSession): Effect.Effect<boolean> =>
      Effect.map(Ref.get(s.openStreams), (streams) => streams === 0 && s.connection.inFlight() === 0)

    /** Closes the least recently active idle session; `false` when every session is busy. */
    const evictOne: Effect.Effect<boolean> = Effect.gen(function*() {
      let oldest: { readonly id: string; readonly at: number } | undefined
      for (const s of HashMap.values(yield* Ref.get(sessions))) {
        if (!(yield* isIdle(s))) continue
        const at = yield* Ref.get(s.lastActivityMillis)
        if (oldest === undefined || at < oldest.at) oldest = { id: s.id, at }
      }
      if (oldest === undefined) return false
      yield* close(oldest.id)
      yield* Effect.logDebug(`Streamable HTTP: session ${oldest.id} closed to make room (maxSessions reached)`)
      return true
    })

    const create = (core: Server.Session): Effect.Effect<Option.Option<HttpSession>> =>
      createLock.withPermits(1)(Effect.gen(function*() {
        if (HashMap.size(yield* Ref.get(sessions)) >= options.maxSessions && !(yield* evictOne)) {
          return Option.none()
        }
        const scope = yield* Scope.fork(storeScope, ExecutionStrategy.sequential)
        const connection = yield* Connection.make(options.server, { ...options.connection, session: core }).pipe(
          Scope.extend(scope)
        )
        const closed = yield* Deferred.make<void>()
        yield* Scope.addFinalizer(scope, Deferred.succeed(closed, undefined))
        const session: HttpSession = {
          id: newSessionId(),
          core,
          connection,
          lock: yield* Effect.makeSemaphore(1),
          lastActivityMillis: yield* Ref.make(yield* Clock.currentTimeMillis),
          openStreams: yield* Ref.make(0),
          log: yield* Ref.make<Log>({ nextId: 1, buffer: [] }),
          live: yield* PubSub.unbounded<StreamEvent>(),
          takeover: yield* Ref.make(Option.none<Deferred.Deferred<void>>()),
          closed,
          scope
        }
        yield* Scope.addFinalizer(scope, PubSub.shutdown(session.live))
        yield* Ref.update(sessions, (m) => HashMap.set(m, session.id, session))
        const feed = yield* connection.sessionNotifications.pipe(Scope.extend(scope))
        yield* Effect.forkIn(Stream.runForEach(feed, (m) => publish(session, m)), scope)
        const initializeTimeout = options.initializeTimeout
        if (initializeTimeout !== undefined && Duration.isFinite(initializeTimeout)) {
          // A client that never completes the handshake holds a slot only this long.
          yield* Effect.forkIn(
            Effect.sleep(initializeTimeout).pipe(
              Effect.zipRight(Ref.get(core.state)),
              Effect.flatMap((state) =>
                state !== undefined && state.initialized ? Effect.void : Effect.zipRight(
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

    const get = (id: string): Effect.Effect<Option.Option<HttpSession>> =>
      Effect.flatMap(Ref.get(sessions), (m): Effect.Effect<Option.Option<HttpSession>> => {
        const s = HashMap.get(m, id)
        return Option.isSome(s) ? Effect.as(touch(s.value), s) : Effect.succeed(s)
      })

    const publish = (session: HttpSession, message: JsonRpc.Message): Effect.Effect<void> =>
      session.lock.withPermits(1)(Effect.gen(function*() {
        const event = yield* Ref.modify(session.log, (log): readonly [StreamEvent, Log] => {
          const ev: StreamEvent = { id: log.nextId, message }
          const buffer = [...log.buffer, ev]
          return [ev, {
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
        const replay = lastEventId === undefined ? [] : log.buffer.filter((e) => e.id > lastEventId)
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
          yield* close(s.id)
          yield* Effect.logDebug(
            `Streamable HTTP: session ${s.id} closed after ${Duration.format(options.idleTimeout)} idle`
          )
        }
      })
      yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(every), sweep)))
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
