/**
 * `Cluster.ChangeBus` over the channel `<prefix>:changes` (documented on `Redis.layerChangeBus`).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Cluster from "../../Cluster.js"
import type { RedisConnectionShape } from "../../Redis.js"
import * as Channel from "./channel.js"

const ChangeEvent = Schema.Union(
  Schema.Struct({ _tag: Schema.Literal("ListChanged"), kind: Schema.Literal("tools", "prompts", "resources") }),
  Schema.Struct({ _tag: Schema.Literal("ResourceUpdated"), uri: Schema.String })
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

export const make = (redis: RedisConnectionShape): Effect.Effect<Cluster.ChangeBusShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const local = yield* PubSub.unbounded<Cluster.ChangeEvent>()
    const channel = Channel.make(redis, "changes", ChangeMessage)
    yield* channel.consume(({ event, origin }) =>
      origin === redis.instanceId ? Effect.void : Effect.asVoid(PubSub.publish(local, event))
    )
    yield* announceRecoveries(redis, local)
    const publish = (event: Cluster.ChangeEvent): Effect.Effect<void> =>
      PubSub.publish(local, event).pipe(
        Effect.zipRight(
          channel.publish("publish", { origin: redis.instanceId, event }).pipe(
            Effect.catchTag("RedisError", (e) =>
              Effect.logWarning("Redis change bus: event not shared with other instances", {
                event: event._tag,
                reason: e.message
              }))
          )
        ),
        Effect.asVoid
      )
    return { publish, subscribe: PubSub.subscribe(local) }
  })
