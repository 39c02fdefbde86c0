/**
 * What a handler may return: a value, a Promise of it, or an Effect. The server lifts all three
 * into an Effect; a thrown exception or rejected Promise is a defect (see the error model in
 * docs/architecture.md).
 *
 * A handler's Effect may require `RequestContext` (always provided) and services `R` of its own:
 * definitions carry `R` in their type (`Tool.Tool<R>`, `Resource.Resource<R>`, …), and
 * `McpServer.make` requires from its environment whatever no middleware provides.
 *
 * Guide: [Servers](https://github.com/presa-mcp/presa-mcp/blob/main/docs/servers.md).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { RequestContext } from "./RequestContext.js"

/**
 * A handler's return: `A`, `Promise<A>`, or `Effect<A, E, R | RequestContext>` (`R`: the services
 * the handler needs besides the request context; default none).
 *
 * @since 0.1.0
 * @category models
 */
export type HandlerResult<A, E, R = never> = A | PromiseLike<A> | Effect.Effect<A, E, R | RequestContext>

/**
 * The services a handler function `F` requires besides `RequestContext` (what its returned Effect
 * needs; `never` for values and Promises).
 *
 * @since 0.1.0
 * @category type-level
 */
export type Services<F> = F extends (...args: ReadonlyArray<never>) => infer Out ? ServicesOf<Out> : never

/**
 * The services a definition `D` (prompt, resource, resource template) needs besides
 * `RequestContext`: its handler's and its completion functions' (`complete`). Distributes over a
 * union of definitions.
 *
 * @since 0.1.0
 * @category type-level
 */
export type DefinitionServices<D> = D extends { readonly handler: infer H } ?
    | Services<H>
    | (D extends { readonly complete?: Readonly<Record<string, infer C>> } ? Services<C> : never)
  : never

type ServicesOf<Out> = Out extends Effect.Effect<infer _A, infer _E, infer R> ? Exclude<R, RequestContext> : never

const isPromiseLike = (u: unknown): u is PromiseLike<unknown> =>
  typeof u === "object" && u !== null && "then" in u && typeof u.then === "function"

/**
 * Lifts a handler call into an Effect. A synchronous throw and a rejected Promise become defects.
 *
 * @since 0.1.0
 * @category combinators
 */
export const lift = <A, E, R = never>(
  run: () => HandlerResult<A, E, R>
): Effect.Effect<A, E, R | RequestContext> =>
  Effect.suspend(() => {
    const out = run()
    if (Effect.isEffect(out)) return out
    if (isPromiseLike(out)) return Effect.promise(() => Promise.resolve(out))
    return Effect.succeed(out)
  })
