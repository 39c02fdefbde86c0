/**
 * A legacy session's standalone GET stream (MCP 2025-11-25, Basic, Transports, "Listening for
 * Messages from the Server", "Resumability and Redelivery"): server messages are recorded in the
 * `Cluster.EventStore` (which assigns their event ids) for `Last-Event-ID`, and one stream at a
 * time reads the live ones (a new stream ends the previous one). Opening a stream claims the
 * session's stream in the store: this instance records the session's notifications from then on
 * (the other instances holding the session record nothing, so nothing is recorded twice).
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as JsonRpc from "../../../../JsonRpc.js"
import type * as Connection from "../../../server/connection.js"
import {
  type HttpSession,
  openStream,
  type StoreState,
  type StreamEvent,
  type StreamItem,
  streamName
} from "./model.js"

/**
 * Records a server message on a session's standalone stream and hands it to the open stream. Not
 * recorded when another instance claimed the stream (it serves the stream, and records the same
 * notification); a store failure is logged and the message still goes to an open stream here,
 * without an event id.
 */
export const publish = (state: StoreState, session: HttpSession, message: JsonRpc.Message): Effect.Effect<void> =>
  session.lock.withPermits(1)(Effect.gen(function*() {
    const appended = yield* Effect.either(state.events.append(streamName(session.id), message))
    if (Either.isLeft(appended)) {
      yield* Effect.logWarning(
        `Streamable HTTP: session ${session.id} event not recorded for resumption: ${appended.left.message}`
      )
      yield* PubSub.publish(session.live, { message })
      return
    }
    if (Option.isSome(appended.right)) yield* PubSub.publish(session.live, appended.right.value)
  }))

/**
 * Drains the session's notifications (list changes, resource updates: `base.sessionNotifications`)
 * onto its standalone stream, in the session's scope.
 */
export const feed = (
  state: StoreState,
  session: HttpSession,
  base: Connection.Connection
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const notifications = yield* base.sessionNotifications.pipe(Scope.extend(session.scope))
    yield* Effect.forkIn(Stream.runForEach(notifications, (m) => publish(state, session, m)), session.scope)
  })

/**
 * Claims the session's stream and reads what a `Last-Event-ID` replays: the replayed events and
 * the latest id (for the priming event). `None` when the store failed (logged): no replay.
 */
const opening = (
  state: StoreState,
  session: HttpSession,
  lastEventId: number | undefined
): Effect.Effect<Option.Option<{ readonly replay: ReadonlyArray<StreamEvent>; readonly latest: number }>> => {
  const name = streamName(session.id)
  return Effect.gen(function*() {
    const claimed = yield* state.events.claim(name)
    if (lastEventId === undefined) return Option.some({ replay: [], latest: claimed })
    const found = yield* state.events.replayAfter(name, lastEventId)
    if (!found.known) {
      yield* Effect.logDebug(
        `Streamable HTTP: session ${session.id}: Last-Event-ID ${lastEventId} not issued by its stream, nothing replayed`
      )
    } else if (found.gap) {
      yield* Effect.logDebug(
        `Streamable HTTP: session ${session.id}: events after ${lastEventId} expired, replaying what is kept`
      )
    }
    return Option.some({ replay: found.events, latest: Math.max(claimed, found.latest) })
  }).pipe(
    Effect.catchAll((e) =>
      Effect.as(
        Effect.logWarning(`Streamable HTTP: session ${session.id} stream opened without replay: ${e.message}`),
        Option.none()
      )
    )
  )
}

/**
 * The session's standalone stream. A new stream ends the previous one (each message goes to one
 * stream). With `lastEventId`, the recorded events after it are replayed first. It ends when the
 * session does.
 */
export const stream = (
  state: StoreState,
  session: HttpSession,
  lastEventId: number | undefined
): Stream.Stream<StreamItem> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const end = yield* Deferred.make<void>()
    const previous = yield* Ref.getAndSet(session.takeover, Option.some(end))
    if (Option.isSome(previous)) yield* Deferred.succeed(previous.value, undefined)
    yield* openStream(session)
    // Under the lock that `publish` takes: no event is recorded between the replay and the
    // subscription (none is in both, none in neither).
    const { opened, subscription } = yield* session.lock.withPermits(1)(
      Effect.all({ subscription: PubSub.subscribe(session.live), opened: opening(state, session, lastEventId) })
    )
    const latest = Option.match(opened, { onNone: () => -1, onSome: (o) => o.latest })
    const items: ReadonlyArray<StreamItem> = Option.match(opened, {
      onNone: () => [],
      onSome: (o) => [
        ...o.replay.map((event): StreamItem => ({ _tag: "Event", event })),
        { _tag: "Priming", id: o.latest }
      ]
    })
    return Stream.concat(
      Stream.fromIterable(items),
      Stream.fromQueue(subscription).pipe(
        Stream.filter((e) => e.id === undefined || e.id > latest),
        Stream.map((event): StreamItem => ({ _tag: "Event", event }))
      )
    ).pipe(
      Stream.interruptWhen(Deferred.await(end)),
      Stream.interruptWhen(Deferred.await(session.closed))
    )
  }))
