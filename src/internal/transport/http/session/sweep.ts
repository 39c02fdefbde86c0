/**
 * Every way a legacy session ends (MCP 2025-11-25, Basic, Transports, "Session Management"):
 * `DELETE` (`close`: here, in the shared store and on the other instances), idle expiry (the
 * sweep), eviction at `maxSessions`, no `notifications/initialized` in time (the handshake timer),
 * a `Closed` signal or a session the shared store no longer has (`closeLocal`), and the store's end.
 * Each path removes the session from the store's map and closes its scope, which releases all it
 * holds (connection, stream, feed, timers); nothing outside that scope refers to a session.
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import { type HttpSession, isIdle, type StoreState } from "./model.js"

/** Ends a session on this instance only (eviction, idle, the store's end, a remote `Closed`). */
export const closeLocal = (state: StoreState, id: string): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    const removed = yield* Ref.modify(state.sessions, (m) => [HashMap.get(m, id), HashMap.remove(m, id)] as const)
    if (Option.isNone(removed)) return false
    yield* Scope.close(removed.value.scope, Exit.void)
    return true
  })

/** Terminates a session: here, in the shared store, and on the instances that hold it. */
export const close = (state: StoreState, id: string): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    const found = yield* closeLocal(state, id)
    const shared = state.shared
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

/** The store's end: every session held here ends (added as the store scope's finalizer). */
export const closeAll = (state: StoreState): Effect.Effect<void> =>
  Effect.flatMap(
    Ref.get(state.sessions),
    (m) => Effect.forEach(HashMap.keys(m), (id) => closeLocal(state, id), { discard: true })
  )

/** Closes the least recently active idle session here; `false` when every session is busy. */
export const evictOne = (state: StoreState): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    let oldest: { readonly id: string; readonly at: number } | undefined
    for (const s of HashMap.values(yield* Ref.get(state.sessions))) {
      if (!(yield* isIdle(s))) continue
      const at = yield* Ref.get(s.lastActivityMillis)
      if (oldest === undefined || at < oldest.at) oldest = { id: s.id, at }
    }
    if (oldest === undefined) return false
    yield* closeLocal(state, oldest.id)
    yield* Effect.logDebug(`Streamable HTTP: session ${oldest.id} closed to make room (maxSessions reached)`)
    return true
  })

/**
 * With a finite idle timeout: every half timeout (10 ms to 1 minute), the sessions idle (no open
 * GET stream, nothing in flight) for the timeout are closed here (with a shared store the session
 * may be in use on another instance). Runs in the store's scope.
 */
export const sweepIdle = (state: StoreState): Effect.Effect<void> => {
  const idleTimeout = state.options.idleTimeout
  if (!Duration.isFinite(idleTimeout)) return Effect.void
  const timeoutMillis = Duration.toMillis(idleTimeout)
  const every = Duration.millis(Math.max(10, Math.min(timeoutMillis / 2, 60_000)))
  const sweep = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    for (const s of HashMap.values(yield* Ref.get(state.sessions))) {
      const idle = now - (yield* Ref.get(s.lastActivityMillis)) >= timeoutMillis
      if (!idle) continue
      if (!(yield* isIdle(s))) continue
      yield* closeLocal(state, s.id)
      yield* Effect.logDebug(`Streamable HTTP: session ${s.id} closed after ${Duration.format(idleTimeout)} idle`)
    }
  })
  return Effect.asVoid(Effect.forkIn(Effect.forever(Effect.zipRight(Effect.sleep(every), sweep)), state.scope))
}

/** Has the client sent `notifications/initialized` (to this instance, or to another one)? */
const initializedAnywhere = (state: StoreState, s: HttpSession): Effect.Effect<boolean> =>
  Effect.flatMap(Ref.get(s.core.state), (current) => {
    if (current !== undefined && current.initialized) return Effect.succeed(true)
    if (state.shared === undefined) return Effect.succeed(false)
    // the store unreadable: keep the session rather than close one that may be in use
    return state.shared.load(s.id, state.ttl).pipe(
      Effect.map(Option.match({ onNone: () => false, onSome: (snapshot) => snapshot.initialized })),
      Effect.orElseSucceed(() => true)
    )
  })

/**
 * A client that never completes the handshake holds a slot only `initializeTimeout`: then the
 * session is closed unless `notifications/initialized` reached this or another instance. The
 * timer lives in the session's scope, so a session that ends first takes it along (a timer in the
 * store's scope kept every ended session reachable until it fired); the close itself runs in the
 * store's scope, as closing the session interrupts the timer.
 */
export const handshakeTimer = (state: StoreState, session: HttpSession): Effect.Effect<void> => {
  const initializeTimeout = state.options.initializeTimeout
  if (initializeTimeout === undefined || !Duration.isFinite(initializeTimeout)) return Effect.void
  const expire = Effect.zipRight(
    close(state, session.id),
    Effect.logDebug(
      `Streamable HTTP: session ${session.id} closed: no notifications/initialized within ${
        Duration.format(initializeTimeout)
      }`
    )
  )
  return Effect.asVoid(Effect.forkIn(
    Effect.sleep(initializeTimeout).pipe(
      Effect.zipRight(initializedAnywhere(state, session)),
      Effect.flatMap((initialized) => initialized ? Effect.void : Effect.forkIn(expire, state.scope))
    ),
    session.scope
  ))
}
