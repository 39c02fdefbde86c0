/** Bounded measurement loops for Effect-based clients (our library). */
import * as Effect from "effect/Effect"
import type { Bounds, Throughput } from "./harness.js"

/** `concurrency` fibers run `op` until `maxCount` operations were started or `maxMs` passed. */
export const effectBounded = <E, R>(
  op: Effect.Effect<unknown, E, R>,
  concurrency: number,
  bounds: Bounds
): Effect.Effect<Throughput, E, R> =>
  Effect.suspend(() => {
    const start = performance.now()
    const deadline = start + bounds.maxMs
    let started = 0
    let done = 0
    const worker = Effect.whileLoop({
      while: () => started < bounds.maxCount && performance.now() < deadline,
      body: () => {
        started++
        return Effect.tap(op, () => {
          done++
        })
      },
      step: () => undefined
    })
    return Effect.all(Array.from({ length: concurrency }, () => worker), { concurrency: "unbounded", discard: true })
      .pipe(
        Effect.map(() => {
          const ms = performance.now() - start
          return { count: done, ms, perSecond: (done * 1000) / ms }
        })
      )
  })
