/**
 * The request context handlers get, and multi round-trip (input_required) support.
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type { HandlerResult } from "../../Handler.js"
import type { InputRequired } from "../../Input.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import { type InputContext, RequestContext, type RequestContextShape } from "../../RequestContext.js"
import * as InputState from "./requestState.js"

import type { Era } from "./dispatch.js"
import { fail, Failure } from "./failure.js"
import type { DispatchOptions, Server } from "./model.js"
const { McpError } = JsonRpc
type McpError = JsonRpc.McpError

/** Bounds on request-scoped notifications: count per request and size of one log message. */
export const MAX_NOTIFICATIONS = 1000
const MAX_LOG_BYTES = 64 * 1024

export interface MrtrInput {
  readonly responses: Readonly<Record<string, unknown>>
  readonly state: unknown
  readonly target: string
  /** The request arguments (their digest binds a `requestState`; computed only when needed). */
  readonly args: unknown
}

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
): Effect.Effect<A, E, Exclude<R, RequestContext>> =>
  Effect.suspend(() => {
    const out = run()
    if (Effect.isEffect(out)) return Effect.provideService(out, RequestContext, ctx)
    if (isPromiseLike(out)) return Effect.promise(() => Promise.resolve(out))
    return Effect.succeed(out)
  })

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

// ---------------------------------------------------------------------------------------------
// multi round-trip requests (2026-07-28 input_required)
// ---------------------------------------------------------------------------------------------

export const MRTR_METHODS: ReadonlySet<string> = new Set([
  McpSchema.Method.toolsCall,
  McpSchema.Method.promptsGet,
  McpSchema.Method.resourcesRead
])

const targetOf = (request: JsonRpc.Request): { readonly target: string; readonly args: unknown } => {
  const params = request.params ?? {}
  if (request.method === McpSchema.Method.resourcesRead) {
    return { target: typeof params.uri === "string" ? params.uri : "", args: {} }
  }
  return {
    target: typeof params.name === "string" ? params.name : "",
    args: JsonRpc.isObject(params.arguments) ? params.arguments : {}
  }
}

/**
 * Reads `inputResponses` and verifies `requestState` of a modern MRTR-capable request. Without a
 * `requestState` (the common case) the answer is plain: an `MrtrInput` or a `Failure`; with one,
 * an Effect that verifies it.
 */
export const mrtrInput = (
  server: Server,
  request: JsonRpc.Request
): MrtrInput | Failure | Effect.Effect<MrtrInput, Failure> => {
  const params = request.params ?? {}
  const { args, target } = targetOf(request)
  const raw = params.inputResponses
  if (raw !== undefined && !JsonRpc.isObject(raw)) {
    return new Failure(McpError.invalidParams("Invalid params: inputResponses must be an object"))
  }
  const fresh: Readonly<Record<string, unknown>> = raw ?? {}
  const rawState = params.requestState
  if (rawState === undefined) return { responses: fresh, state: undefined, target, args }
  return verifyState(server, request, fresh, rawState, target, args)
}

const verifyState = (
  server: Server,
  request: JsonRpc.Request,
  fresh: Readonly<Record<string, unknown>>,
  rawState: unknown,
  target: string,
  args: unknown
): Effect.Effect<MrtrInput, Failure> =>
  Effect.gen(function*() {
    const invalid = McpError.invalidParams("Invalid requestState")
    if (typeof rawState !== "string") return yield* fail(invalid)
    const payload = yield* InputState.verify(server.stateKeys, rawState)
    if (Option.isNone(payload)) return yield* fail(invalid)
    const now = yield* Clock.currentTimeMillis
    const p = payload.value
    if (p.m !== request.method || p.n !== target || p.e < now) return yield* fail(invalid)
    if (p.a !== (yield* InputState.digest(args))) return yield* fail(invalid)
    return { responses: { ...p.r, ...fresh }, state: p.s, target, args }
  })

export const inputRequiredResult = (
  server: Server,
  request: JsonRpc.Request,
  mrtr: MrtrInput,
  ctx: RequestContextShape,
  e: InputRequired
): Effect.Effect<JsonRpc.JsonObject> =>
  Effect.gen(function*() {
    const appState = yield* Ref.get(ctx.input.state)
    const answered = Object.fromEntries(Object.entries(mrtr.responses).filter(([k]) => !(k in e.requests)))
    const needsState = Object.keys(answered).length > 0 || appState !== undefined
    const now = yield* Clock.currentTimeMillis
    const ttl = Duration.toMillis(Duration.decode(server.options.inputState?.ttl ?? "10 minutes"))
    const requestState = needsState
      ? yield* InputState.sign(server.stateKeys, {
        m: request.method,
        n: mrtr.target,
        a: yield* InputState.digest(mrtr.args),
        r: answered,
        ...(appState === undefined ? {} : { s: appState }),
        e: now + ttl
      })
      : undefined
    return {
      resultType: "input_required",
      inputRequests: e.requests,
      ...(requestState === undefined ? {} : { requestState })
    }
  })
