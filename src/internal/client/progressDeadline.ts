/**
 * A `tools/call` whose deadline progress extends (MCP 2026-07-28, Progress: "the receiver MAY
 * reset its timeout on each progress notification … SHOULD enforce a maximum timeout"): the
 * request's own `timeout` is an idle bound, started again by each `notifications/progress` that
 * carries the call's token, and the transport enforces the absolute cap. Both run on `Clock`, so
 * `TestClock` moves them.
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as JsonRpc from "../../JsonRpc.js"
import type { CallError } from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import { ClientError } from "./error.js"

/** Default `Options.maxTotalTimeout`: 10 minutes (600,000 ms). */
export const DEFAULT_MAX_TOTAL = Duration.minutes(10)

type OnNotification = (notification: JsonRpc.Notification) => Effect.Effect<void>

/**
 * Runs `run` (one exchange, given the notification hook and the transport's deadline) with the
 * idle bound `idle` restarted by the progress of `token`, and `cap` as the transport's deadline.
 * Past the idle bound the exchange is interrupted (cancelled the transport's way) and the call
 * fails with `ClientError` "Timeout"; past the cap, the transport's timeout does the same.
 */
export const extendedByProgress = <A>(
  method: string,
  token: JsonRpc.RequestId,
  idle: Duration.Duration,
  cap: Duration.Duration,
  onNotification: OnNotification | undefined,
  run: (onNotification: OnNotification | undefined, deadline: Duration.Duration) => Effect.Effect<A, CallError>
): Effect.Effect<A, CallError> => {
  if (!Duration.isFinite(idle) || Duration.greaterThanOrEqualTo(idle, cap)) {
    return run(onNotification, Duration.min(idle, cap))
  }
  const idleMillis = Duration.toMillis(idle)
  return Effect.gen(function*() {
    const last = yield* Ref.make(yield* Clock.currentTimeMillis)
    const touch = (n: JsonRpc.Notification): Effect.Effect<void> =>
      n.method === McpSchema.Method.progress && n.params?.progressToken === token
        ? Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.set(last, now))
        : Effect.void
    const hook: OnNotification = onNotification === undefined
      ? touch
      : (n) => Effect.zipRight(touch(n), onNotification(n))
    // one sleep per progress-extended window; ends when the exchange does (the race interrupts it)
    const watch: Effect.Effect<never, ClientError> = Effect.flatMap(
      Effect.zipWith(Ref.get(last), Clock.currentTimeMillis, (at, now) => at + idleMillis - now),
      (remaining) =>
        remaining <= 0
          ? Effect.fail(
            new ClientError({
              reason: "Timeout",
              message: `${method} timed out (no progress for ${Duration.format(idle)})`
            })
          )
          : Effect.zipRight(Effect.sleep(Duration.millis(remaining)), watch)
    )
    return yield* Effect.raceFirst(run(hook, cap), watch)
  })
}
