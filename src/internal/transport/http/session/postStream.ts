/**
 * A legacy request's POST SSE stream, resumable (MCP 2025-11-25, Basic, Transports, "Sending
 * Messages to the Server", "Resumability and Redelivery"): each message of the stream (progress,
 * log messages, server→client requests, the response) is recorded in the `Cluster.EventStore`
 * under the stream's own name before it is written, and its SSE event id names the stream
 * (`<key>.<n>`: `key` 32 hex digits drawn for the stream, `n` the store's id). A GET carrying
 * such an id as `Last-Event-ID` is that stream's continuation (`follow`): the events recorded
 * after it, then the rest of the stream as it is recorded (on this instance or another one
 * sharing the store), up to the response; it carries none of the standalone stream's messages.
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../../../JsonRpc.js"
import type { SseFraming } from "../responses.js"
import * as Http from "../wire.js"
import { type HttpSession, openStream, type StoreState } from "./model.js"

/**
 * How long a finished POST stream stays replayable here after its response (unless the session
 * ends first): the event store's default `maxAge`, 10 minutes. It is released when another of
 * the session's streams ends after that, or when the session ends.
 */
export const RETENTION: Duration.Duration = Duration.minutes(10)

/** How often a GET following a POST stream another instance records reads the store. */
export const FOLLOW_POLL: Duration.Duration = Duration.millis(250)

/**
 * How long a GET follows a POST stream that records nothing new before it ends (with a `retry`
 * field: the client reconnects with its `Last-Event-ID`): 10 minutes.
 */
export const FOLLOW_QUIET: Duration.Duration = Duration.minutes(10)

/** The `retry` (ms) a GET that stopped following a quiet POST stream sends before it ends. */
export const FOLLOW_RETRY_MS = 1000

/** The name of a POST stream in the `Cluster.EventStore`. */
export const streamName = (sessionId: string, key: string): string => `post:${sessionId}:${key}`

/** The SSE event id of event `n` of the POST stream `key`. */
export const eventId = (key: string, n: number): string => `${key}.${n}`

const POST_ID = /^([0-9a-f]{32})\.(\d{1,15})$/

/**
 * A `Last-Event-ID` as this server issues them: a standalone stream's (digits), a POST stream's
 * (`<key>.<n>`), or one it cannot have issued (replays nothing).
 */
export type LastEventId =
  | { readonly _tag: "Standalone"; readonly id: number }
  | { readonly _tag: "Post"; readonly key: string; readonly id: number }
  | { readonly _tag: "Unknown" }

/** Reads a `Last-Event-ID` header value (absent: `Unknown`). */
export const parseLastEventId = (raw: string | undefined): LastEventId => {
  if (raw === undefined) return { _tag: "Unknown" }
  if (/^\d{1,15}$/.test(raw)) return { _tag: "Standalone", id: Number(raw) }
  const post = POST_ID.exec(raw)
  const key = post?.[1]
  const n = post?.[2]
  return key === undefined || n === undefined ? { _tag: "Unknown" } : { _tag: "Post", key, id: Number(n) }
}

/** A response (the request's: the only one a POST stream carries) ends the stream. */
const isResponse = (message: JsonRpc.Message): boolean => !("method" in message)

/** A fresh stream key: 128 random bits as 32 hex digits. */
const newKey = (): string => crypto.randomUUID().replaceAll("-", "")

/**
 * The framing of one request's POST stream in `session`: its messages recorded and written one
 * at a time, in order. The stream is claimed in the store at its first message (a priming event
 * `<key>.<latest>` first when `primes`); a store failure is logged and the message is written
 * without an id (not resumable). When the request ends with its response on the stream, the
 * stream is kept for {@link RETENTION} (`finished`); without one (cancelled,
 * interrupted), at once: a GET following it ends.
 */
export const recorder = (state: StoreState, session: HttpSession, primes: boolean): SseFraming => {
  const lock = Effect.unsafeMakeSemaphore(1)
  // drawn when the stream opens (most legacy requests are answered with one JSON body)
  let key = ""
  let name = ""
  // undefined: not opened yet; false: the store failed, the stream goes on without ids
  let resumable: boolean | undefined
  const open = (writeFrames: (frames: string) => Effect.Effect<void>) =>
    Effect.matchEffect(
      Effect.suspend(() => {
        key = newKey()
        name = streamName(session.id, key)
        return state.events.claim(name)
      }),
      {
        onFailure: (e) =>
          Effect.zipRight(
            Effect.logWarning(
              `Streamable HTTP: session ${session.id} request stream not recorded for resumption: ${e.message}`
            ),
            Effect.sync(() => {
              resumable = false
            })
          ),
        onSuccess: (latest) => {
          resumable = true
          return primes ? writeFrames(Http.ssePriming(eventId(key, latest))) : Effect.void
        }
      }
    )
  const record = (message: JsonRpc.Message, text: string, writeFrames: (frames: string) => Effect.Effect<void>) =>
    Effect.flatMap(Effect.either(state.events.append(name, message)), (appended) => {
      if (Either.isLeft(appended)) {
        return Effect.zipRight(
          Effect.logWarning(
            `Streamable HTTP: session ${session.id} event not recorded for resumption: ${appended.left.message}`
          ),
          writeFrames(Http.sseEvent(text))
        )
      }
      const id = Option.map(appended.right, (e) => eventId(key, e.id))
      return Effect.zipRight(
        writeFrames(Http.sseEvent(text, Option.getOrUndefined(id))),
        PubSub.publish(session.postEvents, name)
      )
    })
  return {
    write: (message, text, writeFrames) =>
      lock.withPermits(1)(Effect.suspend(() => {
        const opened = resumable === undefined ? open(writeFrames) : Effect.void
        return Effect.zipRight(
          opened,
          Effect.suspend(() =>
            resumable === true ? record(message, text, writeFrames) : writeFrames(Http.sseEvent(text))
          )
        )
      })),
    done: (replied) =>
      Effect.suspend(() => {
        if (resumable !== true) return Effect.void
        return replied
          ? finished(state, session, name)
          : Effect.zipRight(state.events.release(name), PubSub.publish(session.postEvents, name))
      })
  }
}

/**
 * Keeps the POST stream `name`, ended with its response, for {@link RETENTION}; the session's
 * streams that ended longer ago than that are released now.
 */
const finished = (state: StoreState, session: HttpSession, name: string): Effect.Effect<void> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const cutoff = now - Duration.toMillis(RETENTION)
    return Effect.flatMap(
      Ref.modify(session.finishedPostStreams, (streams) => {
        const expired = streams.filter((s) => s.endedAt < cutoff)
        return [expired, [...streams.filter((s) => s.endedAt >= cutoff), { name, endedAt: now }]] as const
      }),
      (expired) => Effect.forEach(expired, (s) => state.events.release(s.name), { discard: true })
    )
  })

/** Releases the POST streams the session still keeps (its end). */
export const releaseAll = (state: StoreState, session: HttpSession): Effect.Effect<void> =>
  Effect.flatMap(
    Ref.getAndSet(session.finishedPostStreams, []),
    (streams) => Effect.forEach(streams, (s) => state.events.release(s.name), { discard: true })
  )

/** Where a GET following a POST stream is: the last id it sent, and when the stream last moved (ms). */
interface Cursor {
  readonly after: number
  readonly movedAt: number
  readonly first: boolean
}

/**
 * A GET's continuation of the POST stream `key` of `session` after event `after`: the recorded
 * events after it, then each new one as it is recorded (woken by this instance's recorder, or
 * every {@link FOLLOW_POLL} for another instance's), up to and including the response; then the
 * response ends. An id the stream did not issue (unknown, expired, another session's) or a store
 * failure replays nothing and ends the response at once; when nothing is to be replayed yet, the
 * response opens with a `: ping` comment (its headers go out at once). It ends too, after the events still
 * recorded, when the store says the stream is abandoned (`Cluster.Replay` `abandoned`: the
 * instance running the request stopped, e.g. killed, its liveness lapsed, or released the stream
 * without a response): the response ends without the request's response, which is how "cannot be
 * resumed further" looks to a client (it tries again within its bounds, then gives up). It ends
 * when the session ends, and after {@link FOLLOW_QUIET} without a new event (a `retry` field
 * first). It counts as an open stream of the session (the idle sweep leaves the session alone
 * meanwhile).
 */
export const follow = (
  state: StoreState,
  session: HttpSession,
  key: string,
  after: number
): Stream.Stream<string> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const name = streamName(session.id, key)
    yield* openStream(session)
    const woken = yield* PubSub.subscribe(session.postEvents)
    const wake = Effect.race(
      Effect.repeat(Queue.take(woken), { until: (n) => n === name }),
      Effect.sleep(FOLLOW_POLL)
    )
    const quietMs = Duration.toMillis(FOLLOW_QUIET)
    const step = (cursor: Cursor) =>
      Effect.gen(function*() {
        if (!cursor.first) yield* wake
        const found = yield* Effect.either(state.events.replayAfter(name, cursor.after))
        if (Either.isLeft(found)) {
          yield* Effect.logWarning(
            `Streamable HTTP: session ${session.id} request stream not resumed: ${found.left.message}`
          )
          return [[], Option.none()] as const
        }
        const replay = found.right
        if (!replay.known) {
          yield* Effect.logDebug(
            `Streamable HTTP: session ${session.id}: Last-Event-ID ${
              eventId(key, cursor.after)
            } not issued by a request stream kept here, nothing replayed`
          )
          return [[], Option.none()] as const
        }
        if (cursor.first && replay.gap) {
          yield* Effect.logDebug(
            `Streamable HTTP: session ${session.id}: request stream events after ${cursor.after} expired, replaying what is kept`
          )
        }
        const end = replay.events.findIndex((e) => isResponse(e.message))
        const events = end === -1 ? replay.events : replay.events.slice(0, end + 1)
        const frames = events.map((e) => Http.sseEvent(JsonRpc.encode(e.message), eventId(key, e.id)))
        if (end !== -1) return [frames, Option.none()] as const
        if (replay.abandoned === true) {
          yield* Effect.logDebug(
            `Streamable HTTP: session ${session.id}: request stream ${key} has no writer any more (its instance stopped or released it) and no response: the GET ends`
          )
          return [frames, Option.none()] as const
        }
        const now = yield* Clock.currentTimeMillis
        const last = events[events.length - 1]
        if (last !== undefined) return [frames, Option.some({ after: last.id, movedAt: now, first: false })] as const
        if (now - cursor.movedAt >= quietMs) {
          return [[...frames, Http.sseRetry(FOLLOW_RETRY_MS)], Option.none()] as const
        }
        // nothing to replay yet: a comment, so that the response (its status and headers) goes out now
        return [cursor.first ? [Http.ssePing] : frames, Option.some({ ...cursor, first: false })] as const
      })
    const movedAt = yield* Clock.currentTimeMillis
    return Stream.paginateChunkEffect<Cursor, string, never, never>(
      { after, movedAt, first: true },
      (cursor) => Effect.map(step(cursor), ([frames, next]) => [Chunk.fromIterable(frames), next] as const)
    ).pipe(Stream.interruptWhen(Deferred.await(session.closed)))
  }))
