/**
 * The client's answers to a server's questions (MCP 2026-07-28, Multi Round-Trip Requests;
 * MCP 2025-11-25, Elicitation, Sampling, Roots): the `onElicit`, `onSample` and `onRoots`
 * handlers of `McpClient.InputHandlers`, the capabilities they imply, the `inputResponses` of a
 * modern `input_required` round, and legacy server→client requests.
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Input from "../../Input.js"
import * as JsonRpc from "../../JsonRpc.js"
import type { InputHandlers, Options } from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import type { RequestHandler } from "../../Transport.js"

/** The methods a server may ask the client (MRTR `inputRequests`, legacy requests). */
export const InputMethod = {
  elicit: McpSchema.ClientMethod.elicitationCreate,
  sample: McpSchema.ClientMethod.samplingCreateMessage,
  roots: McpSchema.ClientMethod.rootsList
} as const

/** The input handlers and whether URL-mode elicitation is declared (both declared on `McpClient`). */
export type Handlers = InputHandlers & Pick<Options, "elicitUrl">

/** Why a question could not be answered. */
export class InputProblem extends Data.TaggedError("InputProblem")<{
  /** `Unhandled`: unknown method or no handler; `Failed`: the handler failed; `Invalid`: bad question or answer. */
  readonly reason: "Unhandled" | "Failed" | "Invalid"
  readonly method: string
  readonly message: string
  readonly cause?: unknown
}> {}

/** The declared capabilities: those the handlers imply, then `declared` on top (it wins). */
export const capabilities = (
  handlers: Handlers,
  declared: McpSchema.ClientCapabilities
): McpSchema.ClientCapabilities => ({
  ...(handlers.onElicit === undefined ? {} : { elicitation: handlers.elicitUrl === true ? { form: {}, url: {} } : {} }),
  ...(handlers.onSample === undefined ? {} : { sampling: {} }),
  ...(handlers.onRoots === undefined ? {} : { roots: {} }),
  ...declared
})

const encodeAnswer = <A, I>(schema: Schema.Schema<A, I>, method: string) => (value: A) =>
  Schema.encode(schema)(value).pipe(
    Effect.mapError((cause) =>
      new InputProblem({ reason: "Invalid", method, message: `the ${method} handler gave an invalid answer`, cause })
    ),
    Effect.flatMap((encoded: unknown) =>
      JsonRpc.isObject(encoded)
        ? Effect.succeed(encoded)
        : Effect.fail(
          new InputProblem({ reason: "Invalid", method, message: `the ${method} handler gave an invalid answer` })
        )
    )
  )

const failed = (method: string) => (error: JsonRpc.McpError) =>
  new InputProblem({
    reason: "Failed",
    method,
    message: `the ${method} handler failed: ${error.message}`,
    cause: error
  })

const unhandled = (method: string) =>
  new InputProblem({
    reason: "Unhandled",
    method,
    message: Object.values(InputMethod).some((m) => m === method)
      ? `the server asked for ${method}, and the client has no handler for it`
      : `the server asked for an unknown input method ${method}`
  })

/** Answers one question with the matching handler; yields the bare result object. */
export const answer = (
  handlers: Handlers,
  method: string,
  params: JsonRpc.JsonObject | undefined
): Effect.Effect<JsonRpc.JsonObject, InputProblem> => {
  switch (method) {
    case InputMethod.elicit:
      return handlers.onElicit === undefined
        ? Effect.fail(unhandled(method))
        : handlers.onElicit(params ?? {}).pipe(
          Effect.mapError(failed(method)),
          Effect.flatMap(encodeAnswer(Input.ElicitResult, method))
        )
    case InputMethod.sample:
      return handlers.onSample === undefined
        ? Effect.fail(unhandled(method))
        : handlers.onSample(params ?? {}).pipe(
          Effect.mapError(failed(method)),
          Effect.flatMap(encodeAnswer(Input.CreateMessageResult, method))
        )
    case InputMethod.roots:
      return handlers.onRoots === undefined
        ? Effect.fail(unhandled(method))
        : handlers.onRoots().pipe(
          Effect.mapError(failed(method)),
          Effect.flatMap(encodeAnswer(Input.ListRootsResult, method))
        )
    default:
      return Effect.fail(unhandled(method))
  }
}

/** A modern `input_required` result: its questions (maybe none) and its `requestState` (maybe none). */
export interface InputRequired {
  readonly inputRequests: Readonly<Record<string, unknown>> | undefined
  readonly requestState: string | undefined
}

/** Reads an `input_required` result; `undefined` when it is malformed (neither field, or wrong types). */
export const parseInputRequired = (result: JsonRpc.JsonObject): InputRequired | undefined => {
  const requests = result.inputRequests
  const state = result.requestState
  if (requests !== undefined && !JsonRpc.isObject(requests)) return undefined
  if (state !== undefined && typeof state !== "string") return undefined
  if (requests === undefined && state === undefined) return undefined
  return { inputRequests: requests, requestState: state }
}

/**
 * Answers every entry of `inputRequests` (in key order, one at a time: each may ask a user) and
 * yields the `inputResponses` object.
 */
export const fulfil = (
  handlers: Handlers,
  inputRequests: Readonly<Record<string, unknown>>
): Effect.Effect<JsonRpc.JsonObject, InputProblem> =>
  Effect.gen(function*() {
    const out: Record<string, unknown> = {}
    for (const [key, request] of Object.entries(inputRequests)) {
      if (!JsonRpc.isObject(request) || typeof request.method !== "string") {
        return yield* new InputProblem({
          reason: "Invalid",
          method: "",
          message: `inputRequests.${key} is not {method, params?}`
        })
      }
      const params = request.params
      if (params !== undefined && !JsonRpc.isObject(params)) {
        return yield* new InputProblem({
          reason: "Invalid",
          method: request.method,
          message: `inputRequests.${key}.params is not an object`
        })
      }
      out[key] = yield* answer(handlers, request.method, params)
    }
    return out
  })

/**
 * The handler of legacy server→client requests: `ping` → `{}`; `elicitation/create`,
 * `sampling/createMessage`, `roots/list` → the matching handler (none → -32601; its `McpError` →
 * that error; an invalid answer or a defect → -32603); anything else → -32601. `negotiated`
 * reads the session's revision once the handshake chose it: on 2025-03-26, which has no
 * elicitation (MCP 2025-06-18, Key Changes), `elicitation/create` is -32601 as if unhandled.
 */
export const requestHandler = (
  handlers: Handlers,
  negotiated: () => string | undefined
): RequestHandler =>
(request) => {
  if (request.method === McpSchema.Method.ping) return Effect.succeed(JsonRpc.success(request.id, {}))
  const version = negotiated()
  const usable = version !== undefined && McpSchema.isBefore20250618(version)
    ? { ...handlers, onElicit: undefined }
    : handlers
  return answer(usable, request.method, request.params).pipe(
    Effect.map((result): JsonRpc.Response => JsonRpc.success(request.id, result)),
    Effect.catchTag("InputProblem", (problem) =>
      Effect.succeed(JsonRpc.failure(
        request.id,
        problem.reason === "Unhandled"
          ? JsonRpc.McpError.methodNotFound(request.method)
          : problem.cause instanceof JsonRpc.McpError
          ? problem.cause
          : JsonRpc.McpError.internalError(problem.message)
      ))),
    Effect.catchAllDefect((defect) =>
      Effect.logError(`the ${request.method} handler died`, defect).pipe(
        Effect.as(JsonRpc.failure(request.id, JsonRpc.McpError.internalError()))
      )
    )
  )
}
