/**
 * A legacy session's standalone GET stream (MCP 2025-11-25, Basic, Transports, "Listening for
 * Messages from the Server", "Resumability and Redelivery"): server messages get per-session event
 * ids, the last `replayBufferSize` are kept for `Last-Event-ID`, and one stream at a time reads the
 * live ones (a new stream ends the previous one).
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as JsonRpc from "../../../../JsonRpc.js"
import type * as Connection from "../../../server/connection.js"
import { type HttpSession, type Log, type StoreState, type StreamEvent, type StreamItem, touch } from "./model.js"

/**
 * A new session's empty log. With a shared store, each instance's stream of a session numbers
 * from its own random start, so a `Last-Event-ID` another instance issued is recognised as
 * foreign (nothing replayed).
 */
export const initialLog = (shared: boolean): Log => {
  const firstId = shared ? 1 + Math.floor(Math.random() * 2 ** 40) : 1
  return { firstId, nextId: firstId, buffer: [] }
}

/** Queues a server message on a session's standalone stream (kept for replay). */
export const publish = (state: StoreState, session: HttpSession, message: JsonRpc.Message): Effect.Effect<void> =>
  session.lock.withPermits(1)(Effect.gen(function*() {
    const max = state.options.replayBufferSize
    const event = yield* Ref.modify(session.log, (log): readonly [StreamEvent, Log] => {
      const ev: StreamEvent = { id: log.nextId, message }
      const buffer = [...log.buffer, ev]
      return [ev, {
        firstId: log.firstId,
        nextId: log.nextId + 1,
        buffer: buffer.length > max ? buffer.slice(-max) : buffer
      }]
    })
    yield* PubSub.publish(session.live, event)
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
 * The session's standalone stream. A new stream ends the previous one (each message goes to one
 * stream). With `lastEventId`, buffered events after it are replayed first. It ends when the
 * session does.
 */
export const stream = (session: HttpSession, lastEventId: number | undefined): Stream.Stream<StreamItem> =>
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
