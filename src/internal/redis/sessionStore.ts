/**
 * `Cluster.SessionStore` in Redis (documented on `Redis.layerSessionStore`): one key per legacy
 * session, signals between the instances holding it on `<prefix>:sessions`.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Cluster from "../../Cluster.js"
import type { RedisError } from "../../Errors.js"
import * as JsonRpc from "../../JsonRpc.js"
import type { RedisConnectionShape } from "../../Redis.js"
import * as Channel from "./channel.js"
import * as Envelope from "./envelope.js"
import * as SessionRecord from "./sessionRecord.js"

/** What goes on the sessions channel: the sending instance, the session, the signal (a message as its JSON value). */
const SessionMessage = Schema.Struct({
  ...Channel.Origin,
  id: Schema.String,
  signal: Schema.Union(
    Schema.Struct({ _tag: Schema.Literal("State"), state: SessionRecord.Snapshot }),
    Schema.Struct({ _tag: Schema.Literal("Message"), message: Schema.Unknown }),
    Schema.Struct({ _tag: Schema.Literal("Closed") })
  )
})
type SessionMessage = typeof SessionMessage.Type

/** The signal a message carries; `None` for a `Message` that is not a response or a notification. */
const toSignal = (signal: SessionMessage["signal"]): Option.Option<Cluster.SessionSignal> => {
  switch (signal._tag) {
    case "State":
      return Option.some({ _tag: "State", state: SessionRecord.fromStored(signal.state) })
    case "Closed":
      return Option.some({ _tag: "Closed" })
    case "Message": {
      const classified = JsonRpc.classify(signal.message)
      return classified._tag === "Response" || classified._tag === "Notification"
        ? Option.some({ _tag: "Message", message: classified.message })
        : Option.none()
    }
  }
}

const fromSignal = (signal: Cluster.SessionSignal): SessionMessage["signal"] => {
  switch (signal._tag) {
    case "State":
      return { _tag: "State", state: SessionRecord.toStored(signal.state) }
    case "Message":
      return { _tag: "Message", message: signal.message }
    case "Closed":
      return { _tag: "Closed" }
  }
}

const failed = (e: RedisError) => new Cluster.SessionStoreError({ operation: e.operation, message: e.message })

const ttlMs = (ttl: Duration.Duration) => Math.max(1, Math.ceil(Duration.toMillis(ttl)))

/** The queues of the sessions this instance holds, by session id (each holder has one). */
type Holders = Map<string, Set<Queue.Queue<Cluster.SessionSignal>>>

/** A queue of the signals of session `id`, registered in `holders` while the Scope is open. */
const hold = (holders: Holders, id: string) =>
  Effect.acquireRelease(
    Effect.flatMap(Queue.unbounded<Cluster.SessionSignal>(), (queue) =>
      Effect.sync(() => {
        const queues = holders.get(id) ?? new Set()
        queues.add(queue)
        holders.set(id, queues)
        return queue
      })),
    (queue) =>
      Effect.zipRight(
        Effect.sync(() => {
          const queues = holders.get(id)
          queues?.delete(queue)
          if (queues !== undefined && queues.size === 0) holders.delete(id)
        }),
        Queue.shutdown(queue)
      )
  )

export const make = (redis: RedisConnectionShape): Effect.Effect<Cluster.SessionStoreShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const sessionKey = (id: string) => redis.key(`session:${id}`)
    const holders: Holders = new Map()
    const channel = Channel.make(redis, "sessions", SessionMessage)
    yield* channel.consume(({ id, origin, signal }) => {
      const queues = holders.get(id)
      if (origin === redis.instanceId || queues === undefined) return Effect.void
      return Option.match(toSignal(signal), {
        onNone: () => Effect.succeed("malformed" as const),
        onSome: (s) => Effect.forEach(queues, (q) => Queue.offer(q, s), { discard: true })
      })
    })
    const report = yield* Envelope.makeReport
    // A record that does not decode is removed (a client retrying would meet it again until it
    // expires) and fails this load: `503` for this session's request, `404` for the next.
    const unreadable = (id: string, reason: Envelope.Reason, detail: string) =>
      report("session-record", reason, detail).pipe(
        Effect.zipRight(Effect.ignore(redis.run("session remove", (c) => c.del(sessionKey(id))))),
        Effect.zipRight(
          Effect.fail(
            new Cluster.SessionStoreError({
              operation: "session load",
              message: `the stored record of session ${id} is unreadable (${detail}); it was removed`
            })
          )
        )
      )
    const decodeLoaded = (id: string, raw: unknown) => {
      if (typeof raw !== "string") return Effect.succeed(Option.none())
      const decoded = SessionRecord.decode(raw, redis.deployment, redis.maxMessageBytes)
      if (Either.isRight(decoded)) return Effect.succeed(Option.some(SessionRecord.fromStored(decoded.right.snapshot)))
      const { detail, reason } = decoded.left
      return reason === "foreign"
        ? Effect.as(report("session-record", reason, detail), Option.none())
        : unreadable(id, reason, detail)
    }
    const save = (id: string, snapshot: Cluster.SessionSnapshot, ttl: Duration.Duration) =>
      Effect.suspend(() => {
        const text = SessionRecord.encode({ snapshot: SessionRecord.toStored(snapshot) }, redis.deployment)
        if (Envelope.exceeds(text, redis.maxMessageBytes)) {
          return Effect.fail(
            new Cluster.SessionStoreError({
              operation: "session save",
              message: `the session's snapshot is over ${redis.maxMessageBytes} bytes`
            })
          )
        }
        return redis.run("session save", (c) => c.set(sessionKey(id), text, "PX", ttlMs(ttl))).pipe(
          Effect.asVoid,
          Effect.mapError(failed)
        )
      })
    const store: Cluster.SessionStoreShape = {
      save,
      load: (id, ttl) =>
        redis.run("session load", (c) => c.multi().get(sessionKey(id)).pexpire(sessionKey(id), ttlMs(ttl)).exec()).pipe(
          Effect.mapError(failed),
          Effect.flatMap((replies) => decodeLoaded(id, replies?.[0]?.[1]))
        ),
      remove: (id) =>
        redis.run("session remove", (c) => c.del(sessionKey(id))).pipe(Effect.asVoid, Effect.mapError(failed)),
      signal: (id, signal) =>
        channel.publish("session signal", { origin: redis.instanceId, id, signal: fromSignal(signal) }).pipe(
          Effect.mapError(failed)
        ),
      signals: (id) => hold(holders, id)
    }
    return store
  })
