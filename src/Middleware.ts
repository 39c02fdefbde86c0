/**
 * Request middleware: an Effect function around one request, on every transport and in both eras
 * (after the era and `_meta` checks, before the handler; list methods included). Middlewares run
 * in the order given: the first one is the outermost.
 *
 * A middleware sees `{method, params, ctx}` and `next` (the rest of the chain). It can time or
 * log the call, short-circuit with its own result or an `McpError`, or run `next` with extra
 * services provided (`Effect.provideService(next, Tag, value)`), which handlers then read with
 * `yield* Tag` (their static `R` does not list such services: provide them for every method or
 * read them with `Effect.serviceOption`).
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as internal from "./internal/types.js"
import * as JsonRpc from "./JsonRpc.js"
import type { RequestContextShape } from "./RequestContext.js"

/**
 * A middleware (see the module doc). `next` and the result may fail with `McpError` (a JSON-RPC
 * error) or `Input.InputRequired` (let it pass).
 *
 * @since 0.1.0
 * @category models
 */
export type Middleware = internal.Middleware

/**
 * The JSON-RPC error code of {@link rateLimit} (application-defined, outside the reserved
 * -32768…-32000 range).
 *
 * @since 0.1.0
 * @category symbols
 */
export const RATE_LIMITED = 429

/**
 * Logs each request's method, outcome and duration (milliseconds) at debug level, through Effect's
 * logger (stderr in the stdio binaries).
 *
 * @since 0.1.0
 * @category constructors
 */
export const timing: Middleware = (request, next) =>
  Effect.gen(function*() {
    const start = yield* Clock.currentTimeMillis
    const exit = yield* Effect.exit(next)
    const ms = (yield* Clock.currentTimeMillis) - start
    yield* Effect.logDebug(`${request.method} ${exit._tag === "Success" ? "ok" : "failed"} in ${ms} ms`)
    return yield* exit
  })

/**
 * A per-caller rate limit: a token bucket of `capacity` tokens refilled at `refillPerSecond`,
 * per key (`key(ctx)`; default: the authenticated subject, else the client's name). A request
 * that finds the bucket empty fails with `McpError` code {@link RATE_LIMITED} and
 * `data.retryAfterMs` (integer milliseconds until a token is available). Time comes from `Clock`,
 * so `TestClock` drives it in tests. The buckets live in a `Ref` created by this Effect.
 *
 * @since 0.1.0
 * @category constructors
 */
export const rateLimit = (options: {
  readonly capacity: number
  readonly refillPerSecond: number
  readonly key?: (ctx: RequestContextShape) => string
}): Effect.Effect<Middleware> =>
  Effect.map(
    Ref.make(new Map<string, { readonly tokens: number; readonly at: number }>()),
    (buckets): Middleware => (request, next) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const key = options.key?.(request.ctx) ?? request.ctx.auth?.subject ?? request.ctx.clientInfo?.name ?? ""
        const retryAfterMs = yield* Ref.modify(buckets, (map) => {
          const bucket = map.get(key) ?? { tokens: options.capacity, at: now }
          const tokens = Math.min(
            options.capacity,
            bucket.tokens + ((now - bucket.at) / 1000) * options.refillPerSecond
          )
          const next = new Map(map)
          if (tokens >= 1) {
            next.set(key, { tokens: tokens - 1, at: now })
            return [0, next] as const
          }
          next.set(key, { tokens, at: now })
          return [Math.ceil(((1 - tokens) / options.refillPerSecond) * 1000), next] as const
        })
        if (retryAfterMs > 0) {
          return yield* new JsonRpc.McpError({
            code: RATE_LIMITED,
            message: "Rate limit exceeded",
            data: { retryAfterMs }
          })
        }
        return yield* next
      })
  )
