/**
 * Requests of a client: one exchange on the wire, the first round's `_meta` (modern keys,
 * progress token, log level), the `input_required` rounds of a call (MCP 2026-07-28, Multi
 * Round-Trip Requests), the per-call hooks (`routing.ts`) and the result cache (MCP 2026-07-28,
 * Caching). Plain functions over the client's `Setup` / `State`.
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as JsonRpc from "../../JsonRpc.js"
import type { CallError, CallOptions } from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import type { RequestOptions, TransportError } from "../../Transport.js"
import * as Telemetry from "../telemetry.js"
import * as Cache from "./cache.js"
import { ClientError } from "./error.js"
import * as ClientInput from "./input.js"
import * as ProgressDeadline from "./progressDeadline.js"
import { hasHooks, makeRouter } from "./routing.js"
import type { Setup, State } from "./state.js"

/** A fresh request id of this client. */
export const newId = (setup: Setup): Effect.Effect<number> => Effect.sync(() => setup.counters.nextId++)

/**
 * One request on the wire: its raw result (any `resultType`), or the peer's error as
 * `McpError`. The transport bounds the wait (`RequestOptions.timeout`): no fiber per request.
 * A transport timeout becomes `ClientError` "Timeout".
 */
export const exchange = (
  setup: Setup,
  id: JsonRpc.RequestId,
  method: string,
  params: JsonRpc.JsonObject | undefined,
  requestOptions: RequestOptions | undefined,
  deadline: Duration.Duration
): Effect.Effect<JsonRpc.JsonObject, CallError> =>
  // The request's CLIENT span, whose `traceparent` goes in `params._meta` (internal/telemetry.ts).
  Telemetry.clientRequest(
    method,
    params,
    id,
    setup.protocolVersion,
    setup.transport.peer,
    setup.options.telemetry,
    (traced) =>
      setup.transport.request(JsonRpc.request(id, method, traced), {
        onNotification: requestOptions?.onNotification,
        onRequest: requestOptions?.onRequest ?? setup.answerServer,
        timeout: deadline
      }),
    // in the telemetry's own step (bench/README.md, "Issue #24: in-process, session 8")
    (exit) => settleExchange(method, exit)
  )

/**
 * The transport's answer as the request's outcome: the result, the peer's error as `McpError`, a
 * transport timeout as `ClientError` "Timeout"; a cause without a failure (a defect, an
 * interruption) as it is.
 */
const settleExchange = (
  method: string,
  exit: Exit.Exit<JsonRpc.Response, TransportError>
): Exit.Exit<JsonRpc.JsonObject, CallError> => {
  if (Exit.isSuccess(exit)) {
    const response = exit.value
    return JsonRpc.isErrorResponse(response)
      ? Exit.fail(JsonRpc.McpError.fromErrorObject(response.error))
      : Exit.succeed(response.result)
  }
  const failure = Cause.failureOrCause(exit.cause)
  if (Either.isRight(failure)) return Exit.failCause(failure.right)
  const e = failure.left
  return Exit.fail(e.reason === "Timeout" ? new ClientError({ reason: "Timeout", message: `${method} timed out` }) : e)
}

/**
 * `result` when it is final (`resultType` absent or `"complete"`, MCP 2026-07-28, Overview ›
 * ResultType), else `ClientError` "InvalidResult".
 */
export const checkComplete = (
  method: string,
  result: JsonRpc.JsonObject
): Effect.Effect<JsonRpc.JsonObject, ClientError> => {
  const resultType = result.resultType
  return resultType === undefined || resultType === "complete"
    ? Effect.succeed(result)
    : Effect.fail(
      new ClientError({
        reason: "InvalidResult",
        message: `${method}: unsupported resultType ${JSON.stringify(resultType)}`
      })
    )
}

/** A single request whose result must be final (the probe, the handshake): no `_meta` added. */
export const send = (
  setup: Setup,
  method: string,
  params: JsonRpc.JsonObject | undefined,
  deadline: Duration.Duration = setup.timeout
): Effect.Effect<JsonRpc.JsonObject, CallError> =>
  Effect.flatMap(newId(setup), (id) => exchange(setup, id, method, params, undefined, deadline)).pipe(
    Effect.flatMap((result) => checkComplete(method, result))
  )

/** The first round's params and the progress token they carry. */
interface First {
  readonly params: JsonRpc.JsonObject | undefined
  readonly token: JsonRpc.RequestId | undefined
}

/**
 * The first round's params: the caller's, plus `_meta` (modern keys, progress token, log
 * level). Synchronous: call it inside the Effect that sends (it may take a progress token).
 */
const firstParams = (
  state: State,
  params: JsonRpc.JsonObject | undefined,
  callOptions: CallOptions
): First => {
  const own = params !== undefined && JsonRpc.isObject(params._meta) ? params._meta : undefined
  const ownToken = own?.[McpSchema.MetaKey.progressToken]
  const token = callOptions.onProgress === undefined
    ? (JsonRpc.isRequestId(ownToken) ? ownToken : undefined)
    : callOptions.progressToken ?? (JsonRpc.isRequestId(ownToken) ? ownToken : state.counters.nextToken++)
  const logLevel = state.isModern && callOptions.onLog !== undefined ? callOptions.logLevel : undefined
  const ownModernMeta = state.ownModernMeta
  if (own === undefined && token === undefined && logLevel === undefined) {
    return { params: ownModernMeta === undefined ? params : { ...params, _meta: ownModernMeta }, token }
  }
  const meta: JsonRpc.JsonObject = {
    ...own,
    ...(token === undefined ? {} : { [McpSchema.MetaKey.progressToken]: token }),
    ...(logLevel === undefined ? {} : { [McpSchema.MetaKey.logLevel]: logLevel }),
    ...ownModernMeta
  }
  return {
    params: Object.keys(meta).length === 0 ? params : { ...params, _meta: meta },
    token
  }
}

/** A call's final result, and whether it went through `input_required` rounds (never cached). */
interface Outcome {
  readonly result: JsonRpc.JsonObject
  readonly usedInput: boolean
}

/**
 * The params of round `n + 1` after round `n` answered `result` (not final): the first round's
 * params with the `inputResponses` the input handlers give and the server's exact `requestState`.
 * Fails with `ClientError` "InvalidResult" (unknown `resultType`, malformed `input_required`),
 * "InputRounds" (past `maxInputRounds`) or "Input" (a question the handlers cannot answer).
 */
const nextRound = (
  state: State,
  method: string,
  params: JsonRpc.JsonObject | undefined,
  n: number,
  result: JsonRpc.JsonObject
): Effect.Effect<JsonRpc.JsonObject, CallError> =>
  Effect.gen(function*() {
    const resultType = result.resultType
    if (resultType !== "input_required") {
      return yield* new ClientError({
        reason: "InvalidResult",
        message: `${method}: unsupported resultType ${JSON.stringify(resultType)}`
      })
    }
    const asked = ClientInput.parseInputRequired(result)
    if (asked === undefined) {
      return yield* new ClientError({
        reason: "InvalidResult",
        message: `${method}: an input_required result needs inputRequests or requestState`
      })
    }
    if (n + 1 > state.maxInputRounds) {
      return yield* new ClientError({
        reason: "InputRounds",
        message: `${method}: the server asked for input more than ${state.maxInputRounds} times`
      })
    }
    const inputResponses = asked.inputRequests === undefined
      ? undefined
      : yield* ClientInput.fulfil(state.handlers, asked.inputRequests).pipe(
        Effect.mapError((problem) =>
          new ClientError({ reason: "Input", message: `${method}: ${problem.message}`, cause: problem.cause })
        )
      )
    const requestState = asked.requestState
    return {
      ...params,
      ...(inputResponses === undefined ? {} : { inputResponses }),
      ...(requestState === undefined ? {} : { requestState })
    }
  })

/**
 * Sends `method` until its result is final, answering `input_required` rounds, and continues
 * with `done` (the final result, and whether input rounds were answered): one continuation per
 * round, whatever the caller makes of the result (bench/README.md, "Issue #24: client").
 */
const rounds = <A>(
  state: State,
  method: string,
  params: JsonRpc.JsonObject | undefined,
  token: JsonRpc.RequestId | undefined,
  callOptions: CallOptions,
  done: (result: JsonRpc.JsonObject, usedInput: boolean) => Effect.Effect<A, CallError>
): Effect.Effect<A, CallError> => {
  const deadline = callOptions.timeout === undefined ? state.timeout : Duration.decode(callOptions.timeout)
  const exchangeWith = (retry: JsonRpc.JsonObject | undefined) =>
  (
    onNotification: ((notification: JsonRpc.Notification) => Effect.Effect<void>) | undefined,
    bound: Duration.Duration
  ) =>
    exchange(
      state,
      state.counters.nextId++,
      method,
      retry,
      { onNotification, onRequest: callOptions.onRequest },
      bound
    )
  // a tools/call that carries a progress token: progress extends its deadline, up to the cap
  const extended = token !== undefined && method === McpSchema.Method.toolsCall &&
    (callOptions.resetTimeoutOnProgress ?? state.resetTimeoutOnProgress)
  const send =
    (retry: JsonRpc.JsonObject | undefined) =>
    (onNotification: ((notification: JsonRpc.Notification) => Effect.Effect<void>) | undefined) =>
      extended
        ? ProgressDeadline.extendedByProgress(
          method,
          token,
          deadline,
          callOptions.maxTotalTimeout === undefined
            ? state.maxTotalTimeout
            : Duration.decode(callOptions.maxTotalTimeout),
          onNotification,
          exchangeWith(retry)
        )
        : exchangeWith(retry)(onNotification, deadline)
  const round = (n: number, retry: JsonRpc.JsonObject | undefined): Effect.Effect<A, CallError> =>
    // without hooks there is no router to make (one Effect step less per call); `round` runs
    // only when its Effect does (in `call`'s suspend, `cachedCall`'s gen, the previous round's flatMap)
    Effect.flatMap(
      hasHooks(callOptions) ? Effect.flatMap(makeRouter(token, callOptions), send(retry)) : send(retry)(undefined),
      (result): Effect.Effect<A, CallError> => {
        const resultType = result.resultType
        if (resultType === undefined || resultType === "complete") return done(result, n > 0)
        // Tasks extension: a CreateTaskResult answers only tools/call, and only a declaring client.
        if (resultType === "task" && method === McpSchema.Method.toolsCall && state.declaresTasks && state.isModern) {
          return done(result, true)
        }
        return Effect.flatMap(nextRound(state, method, params, n, result), (next) => round(n + 1, next))
      }
    )
  return round(0, params)
}

const toOutcome = (result: JsonRpc.JsonObject, usedInput: boolean): Effect.Effect<Outcome> =>
  Effect.succeed({ result, usedInput })

/**
 * A call through the cache: a fresh entry answers it; otherwise the result is stored for its
 * `ttlMs` (legacy: `Options.legacyTtlMs`) unless the call went through input rounds or a change
 * notification dropped its group meanwhile. A cursor error (-32602 on a page with a cursor)
 * drops the list's pages.
 */
const cachedCall = (
  state: State,
  cache: Cache.Cache,
  method: string,
  params: JsonRpc.JsonObject | undefined,
  callOptions: CallOptions
): Effect.Effect<JsonRpc.JsonObject, CallError> =>
  Effect.gen(function*() {
    const first = firstParams(state, params, callOptions)
    const hit = yield* cache.lookup(method, first.params)
    if (Option.isSome(hit)) return hit.value
    const generation = yield* cache.generation(method, first.params)
    const outcome = yield* rounds(state, method, first.params, first.token, callOptions, toOutcome).pipe(
      Effect.tapError((e) =>
        e._tag === "McpError" && e.code === JsonRpc.ErrorCode.InvalidParams &&
          Cache.LISTS.has(method) && typeof params?.cursor === "string"
          ? cache.dropList(method)
          : Effect.void
      )
    )
    if (!outcome.usedInput) {
      const ttl = state.isModern ? Cache.ttlOf(outcome.result) : Math.max(0, state.options.legacyTtlMs ?? 0)
      yield* cache.store(method, first.params, outcome.result, ttl, generation)
    }
    return outcome.result
  })

/**
 * A request with the client's `_meta` and hooks, its `input_required` rounds answered: its final
 * raw result (`resultType` "task" only for a `tools/call` of a client declaring Tasks).
 */
export const call = (
  state: State,
  method: string,
  params: JsonRpc.JsonObject | undefined,
  callOptions: CallOptions = {}
): Effect.Effect<JsonRpc.JsonObject, CallError> => callThen(state, method, params, callOptions, Effect.succeed)

/**
 * {@link call} continued with `then` on its final raw result (a decoder): on the common path (no
 * cache) `then` is the round's own continuation, not one more step.
 */
export const callThen = <A>(
  state: State,
  method: string,
  params: JsonRpc.JsonObject | undefined,
  callOptions: CallOptions,
  then: (result: JsonRpc.JsonObject) => Effect.Effect<A, CallError>
): Effect.Effect<A, CallError> => {
  const cache = state.cache
  if (cache !== undefined && Cache.CACHEABLE.has(method)) {
    return Effect.flatMap(cachedCall(state, cache, method, params, callOptions), then)
  }
  // the common path: no cache, no Effect.gen
  return Effect.suspend(() => {
    const first = firstParams(state, params, callOptions)
    return rounds(state, method, first.params, first.token, callOptions, then)
  })
}
