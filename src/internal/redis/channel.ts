/**
 * Reading and writing one pub/sub channel of the deployment: each message is an envelope (see
 * `envelope.ts`) with the sending instance (`origin`); what is not ours is ignored and counted,
 * the rest handed to a consumer in order.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { RedisError } from "../../Errors.js"
import type { RedisConnectionShape } from "../../Redis.js"
import * as Envelope from "./envelope.js"

/** The members every channel message has besides its body: the instance that sent it. */
export const Origin = { origin: Schema.String }

/**
 * A channel of messages matching `schema` (a struct with {@link Origin}): `consume` runs
 * `handle` on each message of this deployment, in order, until the Scope closes (a `handle`
 * that finds a decoded message unusable returns a `Reason` to have it ignored and counted);
 * `publish` sends a message to every instance of the deployment (this one hears it too), and
 * fails with `RedisError` when Redis does, or when the message is over `maxMessageBytes` (the
 * others would ignore it).
 */
export const make = <A extends { readonly origin: string }, I extends object>(
  redis: RedisConnectionShape,
  name: string,
  schema: Schema.Schema<A, I>
) => {
  const decode = Envelope.decode(schema)
  const encodeEnvelope = Envelope.encode(schema)
  const consume = (
    handle: (message: A) => Effect.Effect<void | Envelope.Reason>
  ): Effect.Effect<void, never, Scope.Scope> =>
    Effect.gen(function*() {
      const report = yield* Envelope.makeReport
      const raw = yield* redis.channel(name)
      yield* Queue.take(raw).pipe(
        Effect.flatMap((text) => {
          const decoded = decode(text, redis.deployment, redis.maxMessageBytes)
          if (Either.isLeft(decoded)) return report(name, decoded.left.reason, decoded.left.detail)
          return Effect.flatMap(
            handle(decoded.right),
            (outcome) =>
              outcome === undefined ? Effect.void : report(name, outcome, "not a message this instance can use")
          )
        }),
        Effect.forever,
        Effect.forkScoped
      )
    })
  const channel = redis.key(name)
  const publish = (operation: string, message: A): Effect.Effect<void, RedisError> =>
    Effect.suspend(() => {
      const text = encodeEnvelope(message, redis.deployment)
      return Envelope.exceeds(text, redis.maxMessageBytes)
        ? Effect.fail(new RedisError({ operation, message: `message over ${redis.maxMessageBytes} bytes not sent` }))
        : Effect.asVoid(redis.run(operation, (c) => c.publish(channel, text)))
    })
  return { consume, publish }
}
