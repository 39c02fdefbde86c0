/**
 * `Task.TaskSignals` over the channel `<prefix>:tasks`: a message names the task whose record
 * changed; every instance of the deployment hears it (the sender too).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type { RedisConnectionShape } from "../../Redis.js"
import type * as Task from "../../Task.js"
import * as Channel from "./channel.js"

const TaskSignal = Schema.Struct({ ...Channel.Origin, taskId: Schema.String })

export const make = (redis: RedisConnectionShape): Task.TaskSignals => {
  const channel = Channel.make(redis, "tasks", TaskSignal)
  return {
    send: (taskId) =>
      channel.publish("signal", { origin: redis.instanceId, taskId }).pipe(
        Effect.catchTag("RedisError", (e) =>
          Effect.logWarning("Redis task signal not sent", { taskId, reason: e.message }))
      ),
    subscribe: Effect.gen(function*() {
      const queue = yield* Effect.acquireRelease(Queue.unbounded<string>(), Queue.shutdown)
      yield* channel.consume(({ taskId }) => Effect.asVoid(Queue.offer(queue, taskId)))
      return queue
    })
  }
}
