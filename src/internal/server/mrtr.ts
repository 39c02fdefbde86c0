/**
 * Multi round-trip requests (MCP 2026-07-28, Multi Round-Trip Requests): the answers and
 * the signed `requestState` a retried request carries, and the `input_required` result that asks.
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type { InputRequired } from "../../Input.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import { type RequestContextShape } from "../../RequestContext.js"
import { fail, Failure } from "./failure.js"
import type { Server } from "./model.js"
import * as InputState from "./requestState.js"

const { McpError } = JsonRpc

export interface MrtrInput {
  readonly responses: Readonly<Record<string, unknown>>
  readonly state: unknown
}

/**
 * The input of a first round: a request that carries neither `inputResponses` nor `requestState`
 * (the common case, which the router sees without calling into this module).
 */
export const FIRST_ROUND: MrtrInput = Object.freeze({ responses: Object.freeze({}), state: undefined })

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
  const raw = params.inputResponses
  if (raw !== undefined && !JsonRpc.isObject(raw)) {
    return new Failure(McpError.invalidParams("Invalid params: inputResponses must be an object"))
  }
  const fresh: Readonly<Record<string, unknown>> = raw ?? {}
  const rawState = params.requestState
  if (rawState === undefined) return { responses: fresh, state: undefined }
  return verifyState(server, request, fresh, rawState)
}

const verifyState = (
  server: Server,
  request: JsonRpc.Request,
  fresh: Readonly<Record<string, unknown>>,
  rawState: unknown
): Effect.Effect<MrtrInput, Failure> =>
  Effect.gen(function*() {
    const { args, target } = targetOf(request)
    const invalid = McpError.invalidParams("Invalid requestState")
    if (typeof rawState !== "string") return yield* fail(invalid)
    const payload = yield* InputState.verify(server.stateKeys, rawState)
    if (Option.isNone(payload)) return yield* fail(invalid)
    const now = yield* Clock.currentTimeMillis
    const p = payload.value
    if (p.m !== request.method || p.n !== target || p.e < now) return yield* fail(invalid)
    if (p.a !== (yield* InputState.digest(args))) return yield* fail(invalid)
    return { responses: { ...p.r, ...fresh }, state: p.s }
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
    const { args, target } = targetOf(request)
    const requestState = needsState
      ? yield* InputState.sign(server.stateKeys, {
        m: request.method,
        n: target,
        a: yield* InputState.digest(args),
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
