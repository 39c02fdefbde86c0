/**
 * Asking the client for input inside a handler: elicitation (a form or a URL), sampling (a model
 * completion) and roots. One API serves both eras:
 *
 * - 2026-07-28 (modern): the server never sends requests. A question without an answer ends the
 *   call with `resultType: "input_required"`, the questions and a signed `requestState`; the
 *   client retries with `inputResponses`, and the handler runs again and gets the answers
 *   (multi round-trip requests, MCP 2026-07-28, Basic, "Multi Round-Trip Requests"). Allowed on `tools/call`, `prompts/get`,
 *   `resources/read`.
 * - legacy (2025-11-25 / 2025-06-18): the question is a real `elicitation/create`,
 *   `sampling/createMessage` or `roots/list` request sent to the client on the session
 *   (MCP 2025-11-25, Client Features), answered before the handler goes on.
 *
 * A question needs the matching client capability (`elicitation` — `url` for URL mode —,
 * `sampling`, `roots`); without it the call fails with `McpError` -32021 and
 * `data.requiredCapabilities`.
 *
 * Guide: [Input, progress, tasks and change notifications](https://github.com/presa-mcp/presa-mcp/blob/main/docs/input-progress-tasks.md).
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as JsonRpc from "./JsonRpc.js"
import * as McpSchema from "./McpSchema.js"
import { RequestContext } from "./RequestContext.js"

/**
 * One question for the client: `{method, params?}` (no `jsonrpc`, no `id`).
 *
 * @since 0.1.0
 * @category models
 */
export interface InputRequest {
  readonly method: McpSchema.ClientMethod
  readonly params?: JsonRpc.JsonObject
}

/**
 * The handler needs answers it does not have yet (modern era). Not an error for the client: the
 * server turns it into an `input_required` result. Handlers let it pass through their fail
 * channel.
 *
 * @since 0.1.0
 * @category errors
 */
export class InputRequired extends Data.TaggedError("InputRequired")<{
  readonly requests: Readonly<Record<string, InputRequest>>
}> {}

/**
 * `ElicitResult`: `{action: "accept" | "decline" | "cancel", content?}`.
 *
 * @since 0.1.0
 * @category models
 */
export const ElicitResult = Schema.Struct({
  action: Schema.Literal("accept", "decline", "cancel"),
  content: Schema.optional(Schema.Record({
    key: Schema.String,
    value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Array(Schema.String))
  }))
}, Schema.Record({ key: Schema.String, value: Schema.Unknown }))

/**
 * @since 0.1.0
 * @category models
 */
export type ElicitResult = typeof ElicitResult.Type

/**
 * `CreateMessageResult`: `{role, content, model, stopReason?}`.
 *
 * @since 0.1.0
 * @category models
 */
export const CreateMessageResult = Schema.Struct({
  role: Schema.Literal("user", "assistant"),
  content: Schema.Unknown,
  model: Schema.String,
  stopReason: Schema.optional(Schema.String)
}, Schema.Record({ key: Schema.String, value: Schema.Unknown }))

/**
 * @since 0.1.0
 * @category models
 */
export type CreateMessageResult = typeof CreateMessageResult.Type

/**
 * `ListRootsResult`: `{roots: [{uri, name?}]}`.
 *
 * @since 0.1.0
 * @category models
 */
export const ListRootsResult = Schema.Struct({
  roots: Schema.Array(Schema.Struct({ uri: Schema.String, name: Schema.optional(Schema.String) }))
}, Schema.Record({ key: Schema.String, value: Schema.Unknown }))

/**
 * @since 0.1.0
 * @category models
 */
export type ListRootsResult = typeof ListRootsResult.Type

/**
 * What asking may fail with: `InputRequired` (modern: not answered yet) or `McpError` (-32021
 * when the client lacks the capability, -32602 when its answer is malformed, a legacy client's
 * error).
 *
 * @since 0.1.0
 * @category errors
 */
export type InputError = InputRequired | JsonRpc.McpError

const fnv = (s: string): string => {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0).toString(16).padStart(8, "0")
}

const requiredCapability = (request: InputRequest): { readonly [k: string]: JsonRpc.JsonObject } | undefined => {
  switch (request.method) {
    case McpSchema.ClientMethod.elicitationCreate:
      return request.params?.mode === "url" ? { elicitation: { url: {} } } : { elicitation: {} }
    case McpSchema.ClientMethod.samplingCreateMessage:
      return { sampling: {} }
    case McpSchema.ClientMethod.rootsList:
      return { roots: {} }
  }
}

const hasCapability = (caps: McpSchema.ClientCapabilities, request: InputRequest): boolean => {
  switch (request.method) {
    case McpSchema.ClientMethod.elicitationCreate: {
      if (caps.elicitation === undefined) return false
      if (request.params?.mode === "url") return caps.elicitation.url !== undefined
      // `{}` means form only; a client that lists only `url` cannot answer a form.
      return caps.elicitation.form !== undefined || caps.elicitation.url === undefined
    }
    case McpSchema.ClientMethod.samplingCreateMessage:
      return caps.sampling !== undefined
    case McpSchema.ClientMethod.rootsList:
      return caps.roots !== undefined
  }
}

/**
 * Asks one question under `key` (unique per request; the default is derived from the question, so
 * it is stable across rounds) and decodes the answer with `schema`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ask = <A, I>(
  request: InputRequest,
  schema: Schema.Schema<A, I>,
  key?: string
): Effect.Effect<A, InputError, RequestContext> =>
  Effect.gen(function*() {
    const ctx = yield* RequestContext
    if (!hasCapability(ctx.clientCapabilities, request)) {
      return yield* JsonRpc.McpError.missingClientCapability(requiredCapability(request) ?? {})
    }
    const decode = (u: unknown) =>
      Schema.decodeUnknown(schema)(u).pipe(
        Effect.mapError(() => JsonRpc.McpError.invalidParams(`Invalid response to ${request.method}`))
      )
    if (ctx.era === "legacy") {
      if (ctx.input.sendRequest === undefined) {
        return yield* JsonRpc.McpError.internalError("This transport cannot send requests to the client")
      }
      return yield* decode(yield* ctx.input.sendRequest(request.method, request.params))
    }
    const k = key ?? `${request.method.split("/")[0]}-${fnv(JSON.stringify(request.params ?? {}))}`
    const answer = ctx.input.responses[k]
    if (answer === undefined) return yield* new InputRequired({ requests: { [k]: request } })
    return yield* decode(answer)
  })

/**
 * Asks the user for a form (`elicitation/create`, form mode): `requestedSchema` is a flat object
 * schema of primitive properties (MCP 2026-07-28, Client Features, Elicitation). Yields the `ElicitResult`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const elicit = (
  message: string,
  requestedSchema: JsonRpc.JsonObject,
  options?: { readonly key?: string }
): Effect.Effect<ElicitResult, InputError, RequestContext> =>
  ask(
    { method: McpSchema.ClientMethod.elicitationCreate, params: { message, requestedSchema } },
    ElicitResult,
    options?.key
  )

/**
 * Asks the user to open a URL (`elicitation/create`, URL mode; needs the client's
 * `elicitation.url`). `accept` only means the user agreed to open it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const elicitUrl = (
  message: string,
  url: string,
  options?: { readonly key?: string }
): Effect.Effect<ElicitResult, InputError, RequestContext> =>
  ask(
    { method: McpSchema.ClientMethod.elicitationCreate, params: { mode: "url", message, url } },
    ElicitResult,
    options?.key
  )

/**
 * Asks the client's model for a completion (`sampling/createMessage`). `messages` are
 * `{role, content}` with content blocks; `maxTokens` is required.
 *
 * @since 0.1.0
 * @category constructors
 */
export const sample = (
  messages: ReadonlyArray<{ readonly role: "user" | "assistant"; readonly content: unknown }>,
  options: {
    readonly maxTokens: number
    readonly systemPrompt?: string
    readonly temperature?: number
    readonly stopSequences?: ReadonlyArray<string>
    readonly modelPreferences?: JsonRpc.JsonObject
    readonly key?: string
  }
): Effect.Effect<CreateMessageResult, InputError, RequestContext> => {
  const { key, ...rest } = options
  return ask(
    { method: McpSchema.ClientMethod.samplingCreateMessage, params: { messages, ...rest } },
    CreateMessageResult,
    key
  )
}

/**
 * Asks the client for its roots (`roots/list`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const roots = (
  options?: { readonly key?: string }
): Effect.Effect<ListRootsResult, InputError, RequestContext> =>
  ask({ method: McpSchema.ClientMethod.rootsList, params: {} }, ListRootsResult, options?.key)

/**
 * Asks several questions at once: a record of `Input` effects. Modern: every unanswered question
 * is sent in one `input_required` result. Yields the record of answers.
 *
 * @since 0.1.0
 * @category combinators
 */
export const all = <T extends Readonly<Record<string, Effect.Effect<unknown, InputError, RequestContext>>>>(
  inputs: T
): Effect.Effect<{ readonly [K in keyof T]: Effect.Effect.Success<T[K]> }, InputError, RequestContext> =>
  Effect.gen(function*() {
    const requests: Record<string, InputRequest> = {}
    const values: Record<string, unknown> = {}
    for (const [name, input] of Object.entries(inputs)) {
      const r = yield* Effect.either(input)
      if (r._tag === "Right") values[name] = r.right
      else if (r.left._tag === "McpError") return yield* r.left
      else Object.assign(requests, r.left.requests)
    }
    if (Object.keys(requests).length > 0) return yield* new InputRequired({ requests })
    return values as { readonly [K in keyof T]: Effect.Effect.Success<T[K]> }
  })

/**
 * The handler's own state carried across rounds in `requestState` (modern), or `undefined`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const getState: Effect.Effect<unknown, never, RequestContext> = Effect.flatMap(
  RequestContext,
  (ctx) => Ref.get(ctx.input.state)
)

/**
 * Sets the handler's own state (any JSON value): it is signed into the next `requestState`, so the
 * client's retry brings it back (and a tampered copy is refused with -32602).
 *
 * @since 0.1.0
 * @category combinators
 */
export const setState = (state: unknown): Effect.Effect<void, never, RequestContext> =>
  Effect.flatMap(RequestContext, (ctx) => Ref.set(ctx.input.state, state))
