/**
 * What a handler may return: a value, a Promise of it, or an Effect. The server lifts all three
 * into an Effect; a thrown exception or rejected Promise is a defect (see the error model in
 * docs/architecture.md).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { RequestContext } from "./RequestContext.js"

/**
 * A handler's return: `A`, `Promise<A>`, or `Effect<A, E, RequestContext>`.
 *
 * @since 0.1.0
 * @category models
 */
export type HandlerResult<A, E> = A | PromiseLike<A> | Effect.Effect<A, E, RequestContext>

const isPromiseLike = (u: unknown): u is PromiseLike<unknown> =>
  typeof u === "object" && u !== null && "then" in u && typeof u.then === "function"

/**
 * Lifts a handler call into an Effect. A synchronous throw and a rejected Promise become defects.
 *
 * @since 0.1.0
 * @category combinators
 */
export const lift = <A, E>(run: () => HandlerResult<A, E>): Effect.Effect<A, E, RequestContext> =>
  Effect.suspend(() => {
    const out = run()
    if (Effect.isEffect(out)) return out
    if (isPromiseLike(out)) return Effect.promise(() => Promise.resolve(out))
    return Effect.succeed(out)
  })
