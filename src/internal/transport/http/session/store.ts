/**
 * The legacy (2025-11-25 / 2025-06-18) Streamable HTTP session store (MCP 2025-11-25, Basic,
 * Transports, "Session Management"): one entry per `Mcp-Session-Id`, each with its own scope, its
 * connection (`server/connection.ts`: the requests in flight, `notifications/cancelled`, the
 * server→client requests waiting for the client's answer) and its standalone GET stream
 * (`stream.ts`).
 *
 * With a `Cluster.SessionStore` (several instances behind one endpoint), a session is also stored
 * there (`replica.ts`, `signals.ts`); `DELETE` reaches every instance (`sweep.ts`).
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Cluster from "../../../../Cluster.js"
import * as Connection from "../../../server/connection.js"
import type * as Server from "../../../server/dispatch.js"
import {
  type HttpSession,
  newSessionId,
  type SessionStore,
  type StoreOptions,
  type StoreState,
  type StreamEvent,
  streamName,
  touch,
  type Unavailable
} from "./model.js"
import * as PostStream from "./postStream.js"
import { getShared, keepStreamsAlive, sharedConnection, sync, toSnapshot } from "./replica.js"
import { listen } from "./signals.js"
import { feed, publish, stream } from "./stream.js"
import { close, closeAll, evictOne, handshakeTimer, sweepIdle } from "./sweep.js"

/** How long a stored session lives without a request when the idle timeout is infinite. */
const SHARED_TTL_CAP = Duration.days(1)

/**
 * Builds the store in the current scope: its sessions end when that scope closes, and its
 * background loops (the idle sweep; with a shared store, the refresher of streaming sessions)
 * run there.
 */
export const makeStore = (options: StoreOptions): Effect.Effect<SessionStore, never, Scope.Scope> =>
  Effect.gen(function*() {
    const state: StoreState = {
      options,
      scope: yield* Effect.scope,
      sessions: yield* Ref.make(HashMap.empty<string, HttpSession>()),
      createLock: yield* Effect.makeSemaphore(1),
      shared: options.shared,
      events: options.events ?? (yield* Cluster.makeMemoryEventStore({
        maxEvents: options.replayBufferSize,
        // with a shared session store, an id another instance issued is not replayed from this one's log
        randomStart: options.shared !== undefined
      })),
      ttl: Duration.isFinite(options.idleTimeout) ? options.idleTimeout : SHARED_TTL_CAP
    }
    yield* Effect.addFinalizer(() => closeAll(state))
    yield* sweepIdle(state)
    if (state.shared !== undefined) yield* keepStreamsAlive(state, state.shared)
    return {
      create: (core) => create(state, core),
      get: (id) => get(state, id),
      close: (id) => close(state, id),
      all: Effect.map(Ref.get(state.sessions), (m) => Array.from(HashMap.values(m))),
      publish: (session, message) => publish(state, session, message),
      stream: (session, lastEventId) => stream(state, session, lastEventId),
      postStream: (session, primes) => PostStream.recorder(state, session, primes),
      follow: (session, key, after) => PostStream.follow(state, session, key, after)
    }
  })

/** Registers a session for an answered `initialize` (stored first when the store is shared). */
const create = (state: StoreState, core: Server.Session): Effect.Effect<Option.Option<HttpSession>> =>
  Effect.gen(function*() {
    const id = newSessionId()
    const shared = state.shared
    if (shared !== undefined) {
      const current = yield* Ref.get(core.state)
      if (current !== undefined) {
        const stored = yield* Effect.either(shared.save(id, toSnapshot(current), state.ttl))
        if (stored._tag === "Left") {
          // other instances could not find it: no session rather than one that works by chance
          yield* Effect.logWarning(
            `Streamable HTTP: no session opened, the session store failed: ${stored.left.message}`
          )
          return Option.none()
        }
      }
    }
    return yield* open(state, id, core, false)
  })

/** Looks a session up and marks it active (with a shared store: `replica.ts` `getShared`). */
const get = (state: StoreState, id: string): Effect.Effect<Option.Option<HttpSession>, Unavailable> =>
  state.shared === undefined
    ? getLocal(state, id)
    : getShared(state, state.shared, id, (core) => open(state, id, core, true))

// This instance's sessions only (no shared store): the lookup and the touch, in two steps.
const getLocal = (state: StoreState, id: string): Effect.Effect<Option.Option<HttpSession>> =>
  Effect.flatMap(Ref.get(state.sessions), (m): Effect.Effect<Option.Option<HttpSession>> => {
    const local = HashMap.get(m, id)
    return Option.isSome(local) ? Effect.as(touch(local.value), local) : Effect.succeed(local)
  })

/**
 * Opens a session on this instance: a new one (`initialize`) or a replica of one another
 * instance opened (loaded from the shared store). At `maxSessions` an idle session is evicted
 * first; `None` when every session is busy.
 */
const open = (
  state: StoreState,
  id: string,
  core: Server.Session,
  replica: boolean
): Effect.Effect<Option.Option<HttpSession>> =>
  state.createLock.withPermits(1)(Effect.gen(function*() {
    const existing = HashMap.get(yield* Ref.get(state.sessions), id)
    if (Option.isSome(existing)) return existing
    if (HashMap.size(yield* Ref.get(state.sessions)) >= state.options.maxSessions && !(yield* evictOne(state))) {
      return Option.none()
    }
    const { base, session } = yield* makeSession(state, id, core)
    yield* Scope.addFinalizer(session.scope, PubSub.shutdown(session.live))
    yield* Scope.addFinalizer(session.scope, PubSub.shutdown(session.postEvents))
    yield* Scope.addFinalizer(session.scope, PostStream.releaseAll(state, session))
    if (state.shared !== undefined) yield* listen(state, state.shared, session, base)
    yield* Ref.update(state.sessions, (m) => HashMap.set(m, session.id, session))
    yield* feed(state, session, base)
    if (!replica) yield* handshakeTimer(state, session)
    return Option.some(session)
  }))

/**
 * A session's record in a new child scope of the store's, with its connection (`base`: the
 * connection itself; the session's `connection` wraps it when the store is shared).
 */
const makeSession = (
  state: StoreState,
  id: string,
  core: Server.Session
): Effect.Effect<{ readonly base: Connection.Connection; readonly session: HttpSession }> =>
  Effect.gen(function*() {
    const shared = state.shared
    const scope = yield* Scope.fork(state.scope, ExecutionStrategy.sequential)
    const base = yield* Connection.make(state.options.server, {
      ...state.options.connection,
      session: core,
      // unique across the instances of a shared session: a response may reach any of them
      ...(shared === undefined ? {} : { clientRequestIdPrefix: `${crypto.randomUUID().slice(0, 8)}-` })
    }).pipe(Scope.extend(scope))
    const closed = yield* Deferred.make<void>()
    yield* Scope.addFinalizer(scope, Deferred.succeed(closed, undefined))
    yield* Scope.addFinalizer(scope, state.events.release(streamName(id)))
    const syncThis: Effect.Effect<void> = Effect.suspend(() => sync(state, session))
    const session: HttpSession = {
      id,
      core,
      connection: shared === undefined ? base : sharedConnection({ id, sync: syncThis }, base, shared),
      lock: yield* Effect.makeSemaphore(1),
      lastActivityMillis: yield* Ref.make(yield* Clock.currentTimeMillis),
      openStreams: yield* Ref.make(0),
      live: yield* PubSub.unbounded<StreamEvent>(),
      postEvents: yield* PubSub.unbounded<string>(),
      finishedPostStreams: yield* Ref.make<ReadonlyArray<{ readonly name: string; readonly endedAt: number }>>([]),
      takeover: yield* Ref.make(Option.none<Deferred.Deferred<void>>()),
      closed,
      scope,
      synced: yield* Ref.make(yield* Ref.get(core.state))
    }
    return { base, session }
  })
