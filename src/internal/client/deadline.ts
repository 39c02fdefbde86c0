/**
 * `RequestOptions.timeout`: its bound in milliseconds and its failure, which the client
 * connection core (`connection`) uses for stdio and HTTP; and `withTimeout` for the in-process
 * transport, whose request runs in the caller's fiber (the server's handler): the request runs in
 * one child fiber next to a plain timer. (`Effect.timeoutFail` races two fibers, one of them a
 * `sleep`.) Under a `Clock` that is not the live one (`TestClock` in `it.effect`, or any clock a
 * program provides) the deadline is `Effect.timeoutFail` on that clock instead, so a test moves
 * it with `TestClock.adjust`.
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Runtime from "effect/Runtime"
import { TransportError } from "../../Transport.js"
import { MAX_TIMER_MILLIS, rootFork, startTimer } from "../runtime.js"

export { MAX_TIMER_MILLIS }

/** `RequestOptions.timeout` in milliseconds; `undefined`: no bound (absent, infinite, or beyond a timer's range). */
export const timeoutMillis = (timeout: Duration.DurationInput | undefined): number | undefined => {
  if (timeout === undefined) return undefined
  const duration = Duration.decode(timeout)
  if (!Duration.isFinite(duration)) return undefined
  const millis = Duration.toMillis(duration)
  return millis > MAX_TIMER_MILLIS ? undefined : millis
}

/** The clock of the live services: a fiber whose clock is another one (a `TestClock`) runs its deadlines on it. */
const LIVE_CLOCK = Context.get(DefaultServices.liveServices, Clock.Clock)

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
  // built only when the deadline runs on the fiber's clock (not on every call's path)
  const onClock = () => Effect.timeoutFail(self, { duration, onTimeout: () => timeoutError(method) })
  if (millis > MAX_TIMER_MILLIS) return onClock()
  return Effect.withFiberRuntime<A, TransportError>((caller, status) => {
    if (Context.get(caller.currentDefaultServices, Clock.Clock) !== LIVE_CLOCK) return onClock()
    const fiber = rootFork(Runtime.make({
      context: caller.currentContext,
      runtimeFlags: status.runtimeFlags,
      fiberRefs: caller.getFiberRefs()
    }))(self)
    // Done already (an in-process request often completes synchronously): its Exit is the answer,
    // with no timer and no `Effect.async` (whose resumption is a scheduler step of its own).
    const exit = fiber.unsafePoll()
    if (exit !== null) return exit
    // The deadline starts here, not in the wait below, so the request stays bounded even if this
    // fiber is interrupted before it reaches the wait (then the wait's canceller never runs).
    let outcome: Effect.Effect<A, TransportError> | undefined
    let resume: ((effect: Effect.Effect<A, TransportError>) => void) | undefined
    const settle = (effect: Effect.Effect<A, TransportError>): void => {
      if (outcome !== undefined) return
      outcome = effect
      if (resume !== undefined) resume(effect)
    }
    const cancelTimer = startTimer(millis, () => {
      fiber.unsafeInterruptAsFork(caller.id())
      settle(Effect.zipRight(Fiber.await(fiber), Effect.fail(timeoutError(method))))
    })
    fiber.addObserver((exit) => {
      cancelTimer()
      settle(exit)
    })
    return Effect.async<A, TransportError>((resumeWith) => {
      // Settled meanwhile: no canceller (an `Effect.async` that returns one is wrapped in an
      // interrupt handler).
      if (outcome !== undefined) return resumeWith(outcome)
      resume = resumeWith
      return Fiber.interrupt(fiber)
    })
  })
}
