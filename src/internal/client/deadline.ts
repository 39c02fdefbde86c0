/**
 * `RequestOptions.timeout` for transports whose request runs in the caller's fiber (in-process:
 * the server's handler; HTTP: the fetch and its stream): the request runs in one child fiber
 * next to a plain timer. (`Effect.timeoutFail` races two fibers, one of them a `sleep`.)
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { TransportError } from "../../Transport.js"
import { MAX_TIMER_MILLIS, rootFork, startTimer } from "../runtime.js"

export { MAX_TIMER_MILLIS }

/** The failure of a request past its `timeout`. */
export const timeoutError = (method: string): TransportError =>
  new TransportError({ reason: "Timeout", message: `${method} timed out` })

/**
 * `self`, failing with `TransportError` "Timeout" once `timeout` passes (no bound when
 * `undefined` or infinite). On the deadline the child is interrupted (which cancels the request
 * the transport's way) before the failure is seen; interrupting the caller interrupts the child.
 */
export const withTimeout = <A>(
  self: Effect.Effect<A, TransportError>,
  method: string,
  timeout: Duration.DurationInput | undefined
): Effect.Effect<A, TransportError> => {
  if (timeout === undefined) return self
  const duration = Duration.decode(timeout)
  if (!Duration.isFinite(duration)) return self
  const millis = Duration.toMillis(duration)
  if (millis > MAX_TIMER_MILLIS) {
    return Effect.timeoutFail(self, { duration, onTimeout: () => timeoutError(method) })
  }
  return Effect.flatMap(Effect.runtime<never>(), (runtime) =>
    Effect.async<A, TransportError>((resume) => {
      const fiber = rootFork(runtime)(self)
      // Done already (an in-process request often completes synchronously): no timer, and no
      // canceller (an `Effect.async` that returns one is wrapped in an interrupt handler).
      const exit = fiber.unsafePoll()
      if (exit !== null) return resume(exit)
      let done = false
      const cancelTimer = startTimer(millis, () => {
        if (done) return
        done = true
        resume(Effect.zipRight(Fiber.interrupt(fiber), Effect.fail(timeoutError(method))))
      })
      fiber.addObserver((exit) => {
        cancelTimer()
        if (done) return
        done = true
        resume(exit)
      })
      return Fiber.interrupt(fiber)
    }))
}
