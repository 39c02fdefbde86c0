/**
 * A legacy session shared through a `Cluster.SessionStore` (several instances behind one
 * endpoint): an instance that does not hold a session named by a request loads it (a replica with
 * its own connection and GET stream); every request reads the stored snapshot first and writes it
 * back when it changed it; the client's responses and `notifications/cancelled` are passed to the
 * other instances (the request they concern may run there).
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Cluster from "../../../../Cluster.js"
import * as McpSchema from "../../../../McpSchema.js"
import * as Connection from "../../../server/connection.js"
import type * as Server from "../../../server/dispatch.js"
import type { SessionState } from "../../../server/model.js"
import { type HttpSession, type StoreState, touch, type Unavailable } from "./model.js"
import { closeLocal } from "./sweep.js"

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

/** Writes the session's state to the shared store when a request changed it, and tells the others. */
export const sync = (state: StoreState, s: HttpSession): Effect.Effect<void> => {
  const shared = state.shared
  return shared === undefined ? Effect.void : Effect.gen(function*() {
    const current = yield* Ref.get(s.core.state)
    const last = yield* Ref.getAndSet(s.synced, current)
    if (current === last || current === undefined) return
    const snapshot = toSnapshot(current)
    yield* shared.save(s.id, snapshot, state.ttl).pipe(
      Effect.zipRight(shared.signal(s.id, { _tag: "State", state: snapshot })),
      Effect.catchAll((e) =>
        Effect.logWarning(`Streamable HTTP: session ${s.id} state not shared with other instances: ${e.message}`)
      )
    )
  })
}

/**
 * A state read from the shared store replaces this instance's copy, unless a request here
 * changed it and has not written it yet (its write comes before its response).
 */
export const adopt = (s: HttpSession, snapshot: Cluster.SessionSnapshot): Effect.Effect<void> =>
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
export const sharedConnection = (
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
 * Looks a session up in the shared store (`get` with one): a session held here adopts the stored
 * state; one the store no longer has is closed here; one only the store has is opened here as a
 * replica with `openReplica`.
 */
export const getShared = (
  state: StoreState,
  shared: Cluster.SessionStoreShape,
  id: string,
  openReplica: (core: Server.Session) => Effect.Effect<Option.Option<HttpSession>>
): Effect.Effect<Option.Option<HttpSession>, Unavailable> =>
  Effect.gen(function*() {
    const local = HashMap.get(yield* Ref.get(state.sessions), id)
    const loaded = yield* Effect.either(shared.load(id, state.ttl))
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
      if (Option.isSome(local)) yield* closeLocal(state, id)
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
    const replica = yield* openReplica(core)
    if (Option.isNone(replica)) {
      return yield* Effect.fail<Unavailable>({ _tag: "Unavailable", reason: "too many sessions on this instance" })
    }
    yield* touch(replica.value)
    return replica
  })

/**
 * A session whose GET stream is open here stays alive in the shared store without requests: its
 * entry is read (which renews its ttl) every third of the ttl. Runs in the store's scope.
 */
export const keepStreamsAlive = (state: StoreState, shared: Cluster.SessionStoreShape): Effect.Effect<void> => {
  const every = Duration.millis(Math.max(10, Math.min(Duration.toMillis(state.ttl) / 3, 60_000)))
  const refresh = Effect.gen(function*() {
    for (const s of HashMap.values(yield* Ref.get(state.sessions))) {
      if ((yield* Ref.get(s.openStreams)) === 0) continue
      yield* Effect.ignore(shared.load(s.id, state.ttl))
    }
  })
  return Effect.asVoid(Effect.forkIn(Effect.forever(Effect.zipRight(Effect.sleep(every), refresh)), state.scope))
}
