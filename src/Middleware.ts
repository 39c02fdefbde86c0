/**
 * Request middleware: an Effect function around one request, on every transport and in both eras
 * (after the era and `_meta` checks, before the handler; list methods included). Middlewares run
 * in the order given: the first one is the outermost.
 *
 * A middleware sees `{method, params, ctx}` and `next` (the rest of the chain). It can time or
 * log the call, short-circuit with its own result or an `McpError`, or run `next` with services
 * provided. What it provides is typed: `Middleware<Provides, Requires>` provides `Provides` to
 * what it wraps and needs `Requires` itself. Build one with {@link provide} (a service computed
 * per request, e.g. the current user from `ctx.auth`) or {@link make} (the general form: annotate
 * `next` with `Middleware.Next<Provides>`). A handler that `yield*`s a provided service then
 * compiles and `McpServer.make` does not require that service from its environment (see
 * `McpServer.make`). Plain functions are middlewares that provide nothing (and, written inline in
 * `middleware: [...]`, require nothing); mixed with providing middlewares in one list, wrap them
 * in {@link make} so the list's types stay exact.
 *
 * Every middleware runs on every request, so a service one provides is there for every handler;
 * its requirements come from the server's environment (not from other middlewares). A middleware
 * reads the request context from `request.ctx` (the `RequestContext` service is provided to
 * handlers, not to middlewares).
 *
 * Guide: [Composition](https://github.com/presa-mcp/presa-mcp/blob/main/docs/composition.md).
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type { InputRequired } from "./Input.js"
import type * as internal from "./internal/server/model.js"
import * as JsonRpc from "./JsonRpc.js"
import type { RequestContextShape } from "./RequestContext.js"

/**
 * A middleware (see the module doc): `(request, next) => Effect`. `next` needs the services the
 * middleware provides (`Provides`); the middleware's Effect needs `Requires`. Both may fail with
 * `McpError` (a JSON-RPC error) or `Input.InputRequired` (let it pass). The optional `~provides`
 * member is type-level only.
 *
 * @since 0.1.0
 * @category models
 */
export type Middleware<Provides = never, Requires = never> = internal.Middleware<Provides, Requires>

/**
 * Any middleware, whatever it provides and requires (the constraint `McpServer.make` infers
 * middlewares against).
 *
 * @since 0.1.0
 * @category models
 */
export type Any = internal.AnyMiddleware

/**
 * What a middleware sees of one request: `method`, `params` (the request's params object, `{}`
 * when absent) and `ctx` (the request context).
 *
 * @since 0.1.0
 * @category models
 */
export type Request = internal.MiddlewareRequest

/**
 * The rest of the chain as a middleware sees it: an Effect yielding the result object, failing
 * with `McpError` or `InputRequired`, and needing the services `Provides` the middleware provides.
 *
 * @since 0.1.0
 * @category models
 */
export type Next<Provides = never> = internal.MiddlewareNext<Provides>

/**
 * The services a middleware (or a union of middlewares) provides to what it wraps.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Provides<M> = internal.MiddlewareProvides<M>

/**
 * The services a middleware's own Effect (or a union of middlewares') needs.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Requires<M> = internal.MiddlewareRequires<M>

/**
 * The general form: a middleware from a function. Annotate `next` with `Middleware.Next<Provides>`
 * to declare what it provides (the function must then eliminate `Provides` from `next`, e.g. with
 * `Effect.provideService`); `Requires` is inferred from what its Effect needs.
 *
 * @example
 * ```ts
 * import * as Context from "effect/Context"
 * import * as Effect from "effect/Effect"
 * import { Middleware } from "presa-mcp"
 *
 * class Tenant extends Context.Tag("app/Tenant")<Tenant, { readonly id: string }>() {}
 *
 * const tenant = Middleware.make((request, next: Middleware.Next<Tenant>) =>
 *   Effect.provideService(next, Tenant, { id: request.ctx.auth?.subject ?? "public" }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <Provides = never, Requires = never>(
  f: (
    request: Request,
    next: Next<Provides>
  ) => Effect.Effect<JsonRpc.JsonObject, JsonRpc.McpError | InputRequired, Requires>
): Middleware<Provides, Requires> => f

/**
 * A middleware that provides the service `tag` to everything it wraps, computed per request by
 * `f` (which may fail with `McpError` to refuse the request, and may need services `Requires`).
 *
 * @example
 * ```ts
 * import * as Context from "effect/Context"
 * import * as Effect from "effect/Effect"
 * import { McpServer, Middleware } from "presa-mcp"
 *
 * class CurrentUser extends Context.Tag("app/CurrentUser")<CurrentUser, { readonly id: string }>() {}
 *
 * const currentUser = Middleware.provide(CurrentUser, (request) =>
 *   request.ctx.auth === undefined
 *     ? Effect.fail(McpServer.McpError.invalidParams("sign in first"))
 *     : Effect.succeed({ id: request.ctx.auth.subject }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const provide = <I, S, Requires = never>(
  tag: Context.Tag<I, S>,
  f: (request: Request) => Effect.Effect<S, JsonRpc.McpError | InputRequired, Requires>
): Middleware<I, Requires> =>
(request, next) => Effect.flatMap(f(request), (service) => Effect.provideService(next, tag, service))

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
