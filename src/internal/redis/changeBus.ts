/**
 * `Cluster.ChangeBus` over the channel `<prefix>:changes` (documented on `Redis.layerChangeBus`).
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Cluster from "../../Cluster.js"
import type { RedisError } from "../../Errors.js"
import type { RedisConnectionShape } from "../../Redis.js"
import * as Channel from "./channel.js"
import * as Outbox from "./outbox.js"

const ChangeEvent = Schema.Union(
  Schema.Struct({ _tag: Schema.Literal("ListChanged"), kind: Schema.Literal("tools", "prompts", "resources") }),
  Schema.Struct({ _tag: Schema.Literal("ResourceUpdated"), uri: Schema.String }),
  // since 0.2.0: an older build fails to decode it and ignores the message (Envelope "malformed")
  Schema.Struct({ _tag: Schema.Literal("TaskStatus"), taskId: Schema.String })
)

/** What goes on the channel: the publishing instance and the event. */
const ChangeMessage = Schema.Struct({ ...Channel.Origin, event: ChangeEvent })

const EVERYTHING: ReadonlyArray<Cluster.ChangeEvent> = [
  { _tag: "ListChanged", kind: "tools" },
  { _tag: "ListChanged", kind: "prompts" },
  { _tag: "ListChanged", kind: "resources" }
]

/**
 * After an outage others' events may have been lost, so every list is announced as changed
 * (a recovery: ready again after having been ready once, not the first connection).
 */
const announceRecoveries = (redis: RedisConnectionShape, local: PubSub.PubSub<Cluster.ChangeEvent>) =>
  redis.changes.pipe(
    Stream.changes,
    Stream.mapAccum({ wasReady: false, lost: false }, (s, ready) => {
      const recovered = ready && s.lost
      const next = ready ? { wasReady: true, lost: false } : { wasReady: s.wasReady, lost: s.wasReady }
      return [next, recovered] as const
    }),
    Stream.filter((recovered) => recovered),
    Stream.runForEach(() => PubSub.publishAll(local, EVERYTHING)),
    Effect.forkScoped
  )

/**
 * Publishes the outbox in order, oldest first, until it is empty or a PUBLISH fails (then the
 * rest waits for the next try). One flush at a time (`lock`), so events leave in order.
 */
const flusher = (
  outbox: Ref.Ref<Outbox.Outbox>,
  lock: Effect.Semaphore,
  send: (event: Cluster.ChangeEvent) => Effect.Effect<void, RedisError>
) => {
  const step: Effect.Effect<boolean> = Effect.gen(function*() {
    const { entries } = yield* Ref.get(outbox)
    const [first] = entries
    if (first === undefined) return false
    return yield* send(first.event).pipe(
      // unless the bound dropped it meanwhile
      Effect.zipRight(Ref.update(outbox, (o) => o.entries[0] === first ? Outbox.shift(o) : o)),
      Effect.as(true),
      Effect.catchTag("RedisError", () => Effect.succeed(false))
    )
  })
  return (retry: boolean) =>
    lock.withPermits(1)(Effect.gen(function*() {
      const before = yield* Ref.get(outbox)
      // bounded: at most one PUBLISH per pending event
      for (let i = 0; i < before.entries.length + 1; i++) {
        if (!(yield* step)) break
      }
      const after = yield* Ref.get(outbox)
      if (retry && before.entries.length > 0 && after.entries.length === 0) {
        yield* Effect.logInfo("Redis change bus: pending change events published", {
          published: before.entries.length,
          droppedPastBound: after.dropped
        })
        yield* Ref.update(outbox, (o) => o.entries.length === 0 ? Outbox.empty : o)
      }
    }))
}

const messageBytes = (event: Cluster.ChangeEvent): number =>
  new TextEncoder().encode(JSON.stringify(event)).length + 128

export const make = (redis: RedisConnectionShape): Effect.Effect<Cluster.ChangeBusShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const local = yield* PubSub.unbounded<Cluster.ChangeEvent>()
    const channel = Channel.make(redis, "changes", ChangeMessage)
    yield* channel.consume(({ event, origin }) =>
      origin === redis.instanceId ? Effect.void : Effect.asVoid(PubSub.publish(local, event))
    )
    yield* announceRecoveries(redis, local)
    const outbox = yield* Ref.make(Outbox.empty)
    const flush = flusher(
      outbox,
      yield* Effect.makeSemaphore(1),
      (event) => channel.publish("publish", { origin: redis.instanceId, event })
    )
    // Pending events are retried every heartbeat once the connection has been ready for two
    // heartbeats: the other instances reconnect within about a second of Redis coming back, and a
    // message published before they subscribe again would be lost to them.
    const readySince = yield* Ref.make<number | undefined>(undefined)
    yield* redis.changes.pipe(
      Stream.changes,
      Stream.runForEach((ready) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.set(readySince, ready ? now : undefined))
      ),
      Effect.forkScoped
    )
    const settled = Effect.map(
      Effect.all([Ref.get(readySince), Clock.currentTimeMillis]),
      ([since, now]) => since !== undefined && now - since >= 2 * redis.heartbeatMs
    )
    yield* Effect.all([Ref.get(outbox), settled]).pipe(
      Effect.flatMap(([o, ok]) => o.entries.length > 0 && ok ? flush(true) : Effect.void),
      Effect.repeat(Schedule.spaced(Duration.millis(redis.heartbeatMs))),
      Effect.forkScoped
    )
    const publish = (event: Cluster.ChangeEvent): Effect.Effect<void> =>
      Effect.gen(function*() {
        yield* PubSub.publish(local, event)
        const bytes = messageBytes(event)
        if (bytes > redis.maxMessageBytes) {
          // the others would ignore it: never sent, never kept
          return yield* Effect.logWarning("Redis change bus: event over maxMessageBytes not shared", {
            event: event._tag,
            maxMessageBytes: redis.maxMessageBytes
          })
        }
        const pending = yield* Ref.modify(outbox, (o) => {
          const next = Outbox.append(o, { event, bytes })
          return [o.entries.length, next] as const
        })
        // with events pending, this one waits its turn (the retry above keeps the order)
        if (pending === 0) yield* flush(false)
        const left = (yield* Ref.get(outbox)).entries.length
        if (left > 0 && pending === 0) {
          yield* Effect.logWarning(
            "Redis change bus: event not shared with other instances yet; kept in the outbox and retried",
            { event: event._tag, pending: left }
          )
        }
      })
    return { publish, subscribe: PubSub.subscribe(local) }
  })
