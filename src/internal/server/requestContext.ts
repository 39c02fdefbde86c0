/**
 * The request context handlers get: era, client, progress and log senders, and `ctx.input`.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type { HandlerResult } from "../../Handler.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import { type InputContext, RequestContext, type RequestContextShape } from "../../RequestContext.js"

import type { Era } from "./classify.js"
import type { DispatchOptions, Server } from "./model.js"
import type { MrtrInput } from "./mrtr.js"

/** Bounds on request-scoped notifications: count per request and size of one log message. */
export const MAX_NOTIFICATIONS = 1000
const MAX_LOG_BYTES = 64 * 1024

/**
 * The context of one request. Plain (no Effect): it is built on every request, so it allocates
 * only what every request needs; the `input.state` Ref is made on first use. (The closures come
 * from module-level factories: named closures inside a per-request function cost a
 * `Function.name` definition each under loaders that keep names, such as tsx.)
 */
export const makeContext = (
  server: Server,
  request: JsonRpc.Request,
  era: Era,
  options: DispatchOptions,
  mrtr: MrtrInput | undefined
): RequestContextShape => {
  const params = request.params ?? EMPTY
  const meta = JsonRpc.isObject(params._meta) ? params._meta : EMPTY
  const token = meta[McpSchema.MetaKey.progressToken]
  const progressToken = typeof token === "string" || (typeof token === "number" && Number.isInteger(token))
    ? token
    : undefined
  const notify = options.notify ?? notifyNowhere
  const budget = new Budget()
  return {
    era: era.era,
    protocolVersion: era.protocolVersion,
    clientInfo: era.clientInfo,
    clientCapabilities: era.clientCapabilities,
    requestId: request.id,
    method: request.method,
    meta,
    progressToken,
    notify,
    auth: options.auth,
    input: new Input(
      mrtr?.responses ?? EMPTY,
      mrtr?.state,
      era.era === "legacy" ? options.sendRequest : undefined
    ),
    progress: progressSender(progressToken, notify, budget),
    log: logSender(server, era, meta, options, notify, budget)
  }
}

/**
 * Calls a handler, a visibility predicate or a task policy (`Handler.lift`'s semantics: a throw or
 * a rejected Promise is a defect) with `RequestContext` provided to the Effect it returns. A value
 * or a Promise cannot read the Effect environment, so they skip the provision: it costs a context
 * copy and two fiber-ref writes, about a quarter of a tools/call's CPU.
 */
export const liftIn = <A, E, R>(
  ctx: RequestContextShape,
  run: () => HandlerResult<A, E, R>
): Effect.Effect<A, E, Exclude<R, RequestContext>> => Effect.suspend(() => lifted(ctx, run()))

/** What {@link liftIn} makes of a handler's return value once the handler has been called. */
export const lifted = <A, E, R>(
  ctx: RequestContextShape,
  out: HandlerResult<A, E, R>
): Effect.Effect<A, E, Exclude<R, RequestContext>> => {
  if (Effect.isEffect(out)) return Effect.provideService(out, RequestContext, ctx)
  if (isPromiseLike(out)) return Effect.promise(() => Promise.resolve(out))
  return Effect.succeed(out)
}

/** Is a handler's return value its result itself (neither an Effect nor a Promise)? */
export const isPlain = <A, E, R>(out: HandlerResult<A, E, R>): out is A => !Effect.isEffect(out) && !isPromiseLike(out)

const isPromiseLike = (u: unknown): u is PromiseLike<unknown> =>
  typeof u === "object" && u !== null && "then" in u && typeof u.then === "function"

/** One request's notification budget: how many were sent, and the last progress value. */
class Budget {
  count = 0
  lastProgress = Number.NEGATIVE_INFINITY
  /** Takes one notification from the budget (a progress value must exceed the last one). */
  spend(progress?: number): boolean {
    if (this.count >= MAX_NOTIFICATIONS) return false
    if (progress !== undefined && !(progress > this.lastProgress)) return false
    this.count++
    if (progress !== undefined) this.lastProgress = progress
    return true
  }
}

/** `ctx.input`: the handler's state Ref is made when first read. */
class Input implements InputContext {
  #state: Ref.Ref<unknown> | undefined
  constructor(
    readonly responses: Readonly<Record<string, unknown>>,
    private readonly initialState: unknown,
    readonly sendRequest: InputContext["sendRequest"]
  ) {}
  get state(): Ref.Ref<unknown> {
    return this.#state ??= Ref.unsafeMake<unknown>(this.initialState)
  }
}

const progressSender = (
  progressToken: string | number | undefined,
  notify: RequestContextShape["notify"],
  budget: Budget
): RequestContextShape["progress"] =>
(progress, opts) =>
  progressToken === undefined || !Number.isFinite(progress)
    ? Effect.succeed(false)
    : Effect.suspend(() =>
      budget.spend(progress)
        ? Effect.as(
          notify(JsonRpc.notification(McpSchema.Method.progress, {
            progressToken,
            progress,
            ...(opts?.total === undefined ? {} : { total: opts.total }),
            ...(opts?.message === undefined ? {} : { message: opts.message })
          })),
          true
        )
        : Effect.succeed(false)
    )

const logSender = (
  server: Server,
  era: Era,
  meta: JsonRpc.JsonObject,
  options: DispatchOptions,
  notify: RequestContextShape["notify"],
  budget: Budget
): RequestContextShape["log"] =>
(level, data, logger) =>
  server.options.logging !== true
    ? Effect.succeed(false)
    : Effect.flatMap(threshold(era, meta, options), (min) => {
      if (min === undefined) return Effect.succeed(false)
      if (McpSchema.LOGGING_LEVELS.indexOf(level) < McpSchema.LOGGING_LEVELS.indexOf(min)) {
        return Effect.succeed(false)
      }
      const size = JSON.stringify(data ?? null).length
      if (size > MAX_LOG_BYTES) return Effect.succeed(false)
      if (!budget.spend()) return Effect.succeed(false)
      return Effect.as(
        notify(JsonRpc.notification(McpSchema.Method.message, {
          level,
          data: data ?? null,
          ...(logger === undefined ? {} : { logger })
        })),
        true
      )
    })

/** The lowest level a request's log messages go out at (`undefined`: none go out). */
const threshold = (
  era: Era,
  meta: JsonRpc.JsonObject,
  options: DispatchOptions
): Effect.Effect<McpSchema.LoggingLevel | undefined> =>
  era.era === "modern"
    ? Effect.succeed(McpSchema.LOGGING_LEVELS.find((l) => l === meta[McpSchema.MetaKey.logLevel]))
    : options.session === undefined
    ? Effect.succeed("debug")
    : Effect.map(Ref.get(options.session.state), (s) => s?.logLevel ?? "debug")

const EMPTY: JsonRpc.JsonObject = Object.freeze({})
const notifyNowhere = (): Effect.Effect<void> => Effect.void
