/**
 * The request context handlers get, and multi round-trip (input_required) support.
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type { InputRequired } from "../Input.js"
import * as JsonRpc from "../JsonRpc.js"
import * as McpSchema from "../McpSchema.js"
import { type RequestContextShape } from "../RequestContext.js"
import * as InputState from "./inputState.js"

import { fail, type Failure } from "./failure.js"
import type { Era } from "./server.js"
import type { DispatchOptions, Server } from "./types.js"
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

export const makeContext = (
  server: Server,
  request: JsonRpc.Request,
  era: Era,
  options: DispatchOptions,
  mrtr: MrtrInput | undefined
): Effect.Effect<RequestContextShape> =>
  Effect.sync(() => {
    const stateRef = Ref.unsafeMake<unknown>(mrtr?.state)
    const params = request.params ?? {}
    const meta = JsonRpc.isObject(params._meta) ? params._meta : {}
    const token = meta[McpSchema.MetaKey.progressToken]
    const progressToken = typeof token === "string" || (typeof token === "number" && Number.isInteger(token))
      ? token
      : undefined
    const notify = options.notify ?? (() => Effect.void)
    const sent = Ref.unsafeMake({ count: 0, lastProgress: Number.NEGATIVE_INFINITY })
    const threshold: Effect.Effect<McpSchema.LoggingLevel | undefined> = era.era === "modern"
      ? Effect.succeed(
        McpSchema.LOGGING_LEVELS.find((l) => l === meta[McpSchema.MetaKey.logLevel])
      )
      : options.session === undefined
      ? Effect.succeed("debug")
      : Effect.map(Ref.get(options.session.state), (s) => s?.logLevel ?? "debug")
    const budget = (progress?: number) =>
      Ref.modify(sent, (s) => {
        if (s.count >= MAX_NOTIFICATIONS) return [false, s]
        if (progress !== undefined && !(progress > s.lastProgress)) return [false, s]
        return [true, { count: s.count + 1, lastProgress: progress ?? s.lastProgress }]
      })
    return {
      ...era,
      requestId: request.id,
      method: request.method,
      meta,
      progressToken,
      notify,
      auth: options.auth,
      input: {
        responses: mrtr?.responses ?? {},
        state: stateRef,
        sendRequest: era.era === "legacy" ? options.sendRequest : undefined
      },
      progress: (progress, opts) =>
        progressToken === undefined || !Number.isFinite(progress)
          ? Effect.succeed(false)
          : Effect.flatMap(budget(progress), (ok) =>
            ok
              ? Effect.as(
                notify(JsonRpc.notification(McpSchema.Method.progress, {
                  progressToken,
                  progress,
                  ...(opts?.total === undefined ? {} : { total: opts.total }),
                  ...(opts?.message === undefined ? {} : { message: opts.message })
                })),
                true
              )
              : Effect.succeed(false)),
      log: (level, data, logger) =>
        Effect.gen(function*() {
          if (server.options.logging !== true) return false
          const min = yield* threshold
          if (min === undefined) return false
          if (McpSchema.LOGGING_LEVELS.indexOf(level) < McpSchema.LOGGING_LEVELS.indexOf(min)) return false
          const size = JSON.stringify(data ?? null).length
          if (size > MAX_LOG_BYTES) return false
          if (!(yield* budget())) return false
          yield* notify(JsonRpc.notification(McpSchema.Method.message, {
            level,
            data: data ?? null,
            ...(logger === undefined ? {} : { logger })
          }))
          return true
        })
    }
  })

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

/** Reads `inputResponses` and verifies `requestState` of a modern MRTR-capable request. */
export const mrtrInput = (server: Server, request: JsonRpc.Request): Effect.Effect<MrtrInput, Failure> =>
  Effect.gen(function*() {
    const params = request.params ?? {}
    const { args, target } = targetOf(request)
    const raw = params.inputResponses
    if (raw !== undefined && !JsonRpc.isObject(raw)) {
      return yield* fail(McpError.invalidParams("Invalid params: inputResponses must be an object"))
    }
    const fresh: Readonly<Record<string, unknown>> = raw ?? {}
    const rawState = params.requestState
    if (rawState === undefined) return { responses: fresh, state: undefined, target, args }
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
