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
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as JsonRpc from "./JsonRpc.js"
import * as McpSchema from "./McpSchema.js"
import { RequestContext } from "./RequestContext.js"
import { deriveJsonSchema } from "./Tool.js"

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
 * The encoded shape of a form {@link elicit} may ask for: a flat record of the values elicitation
 * allows (MCP 2025-11-25 / 2026-07-28, Elicitation › Requested Schema): strings (plain, with a
 * `format`, or one of an enum), numbers, booleans, and arrays of strings (a multi-select enum).
 * A Schema whose encoded side is nested is refused by the compiler.
 *
 * @since 0.2.0
 * @category models
 */
export type ElicitForm = Readonly<Record<string, string | number | boolean | ReadonlyArray<string> | undefined>>

/**
 * The answer to a Schema-first {@link elicit}: `accept` with the form's `content` decoded, or
 * `decline` / `cancel` (no content).
 *
 * @since 0.2.0
 * @category models
 */
export type ElicitAnswer<A> =
  | { readonly action: "accept"; readonly content: A }
  | { readonly action: "decline" | "cancel" }

/**
 * A Schema {@link elicit} cannot send as a form: its JSON Schema is not an object of primitive
 * properties (`property` names the first one that is not: a nested object, a union of different
 * types, an array of anything but an enum of strings, a recursive reference). A programming
 * error: {@link elicit} dies with it (a tool answers `isError` naming `ElicitSchemaError`, the cause
 * is logged); {@link requestedSchema} returns it, to check a Schema ahead (in a test).
 *
 * @since 0.2.0
 * @category errors
 */
export class ElicitSchemaError extends Data.TaggedError("ElicitSchemaError")<{
  readonly message: string
  readonly property?: string
}> {}

const PRIMITIVE_KEYWORDS: Readonly<Record<string, ReadonlyArray<string>>> = {
  string: ["type", "title", "description", "minLength", "maxLength", "format", "default", "enum", "enumNames", "oneOf"],
  number: ["type", "title", "description", "minimum", "maximum", "default"],
  integer: ["type", "title", "description", "minimum", "maximum", "default"],
  boolean: ["type", "title", "description", "default"],
  array: ["type", "title", "description", "minItems", "maxItems", "items", "default"]
}

const pick = (node: JsonRpc.JsonObject, keys: ReadonlyArray<string>): JsonRpc.JsonObject => {
  const out: Record<string, unknown> = {}
  for (const key of keys) if (node[key] !== undefined) out[key] = node[key]
  return out
}

/** An enum of strings (`enum`, or `anyOf` of `const`s as titled options), as elicitation's `enum`. */
const stringEnum = (node: JsonRpc.JsonObject): JsonRpc.JsonObject | undefined => {
  if (node.type === "string" && Array.isArray(node.enum) && node.enum.every((v) => typeof v === "string")) {
    return pick(node, ["type", "enum", "title", "description"])
  }
  if (Array.isArray(node.anyOf)) {
    const members = node.anyOf.map((m) => JsonRpc.isObject(m) ? stringEnum(m) : undefined)
    const values = members.flatMap((m) => Array.isArray(m?.enum) ? m.enum : [undefined])
    if (values.length > 0 && values.every((v) => typeof v === "string")) {
      return { type: "string", enum: values, ...pick(node, ["title", "description"]) }
    }
  }
  return undefined
}

/** One property of the form as elicitation allows it, or why not. */
const primitiveProperty = (name: string, node: unknown): Either.Either<JsonRpc.JsonObject, ElicitSchemaError> => {
  const refuse = (what: string) =>
    Either.left(
      new ElicitSchemaError({
        property: name,
        message: `property "${name}" ${what}: elicitation allows only strings, numbers, booleans and enums`
      })
    )
  if (!JsonRpc.isObject(node)) return refuse("has no schema")
  const asEnum = stringEnum(node)
  if (asEnum !== undefined) return Either.right(asEnum)
  const type = node.type
  if (typeof type !== "string") return refuse(node.$ref !== undefined ? "is recursive" : "is a union of types")
  if (type === "array") {
    const items = JsonRpc.isObject(node.items) ? stringEnum(node.items) : undefined
    return items === undefined
      ? refuse("is an array of anything but an enum of strings")
      : Either.right({ ...pick(node, PRIMITIVE_KEYWORDS.array ?? []), items: pick(items, ["type", "enum"]) })
  }
  const keywords = PRIMITIVE_KEYWORDS[type]
  if (keywords === undefined) return refuse(`is of type ${type}`)
  return Either.right(withoutFilterTitle(pick(node, keywords)))
}

/**
 * Effect titles a built-in filter after its call (`between(0, 150)`, `int`): a form's user would
 * read that as the field's label, so it is left out (the filter's description stays).
 */
const withoutFilterTitle = (node: JsonRpc.JsonObject): JsonRpc.JsonObject => {
  const { title, ...rest } = node
  return typeof title === "string" && (/^[a-z][A-Za-z]*\(.*\)$/.test(title) || FILTER_TITLES.has(title)) ? rest : node
}

const FILTER_TITLES: ReadonlySet<string> = new Set(
  [Schema.Int, Schema.NonNegativeInt, Schema.NonNegative, Schema.Positive, Schema.Finite, Schema.NonEmptyString]
    .flatMap((schema) => Option.toArray(SchemaAST.getTitleAnnotation(schema.ast)))
)

/**
 * The `requestedSchema` {@link elicit} sends for `schema`: its JSON Schema (`Tool.deriveJsonSchema`)
 * cut down to what elicitation allows: `{type: "object", properties, required?}` where each
 * property keeps only its form keywords (`title`, `description`, `default`; `minLength`,
 * `maxLength`, `format` for strings; `minimum`, `maximum` for numbers; `enum` for a union of string
 * literals; `items: {type: "string", enum}` for an array of one). A string `format` (`email`,
 * `uri`, `date`, `date-time`) comes from a `jsonSchema` annotation:
 * `Schema.String.annotations({ jsonSchema: { format: "email" } })`.
 *
 * Fails with `ElicitSchemaError` when the Schema is not such a flat form (see there).
 *
 * @since 0.2.0
 * @category encoding
 */
export const requestedSchema = <A, I extends ElicitForm>(
  schema: Schema.Schema<A, I>
): Either.Either<JsonRpc.JsonObject, ElicitSchemaError> => {
  const derived = deriveJsonSchema(schema)
  if (derived.type !== "object" || !JsonRpc.isObject(derived.properties)) {
    return Either.left(new ElicitSchemaError({ message: "an elicitation form must be a struct of properties" }))
  }
  const properties: Record<string, unknown> = {}
  for (const [name, node] of Object.entries(derived.properties)) {
    const property = primitiveProperty(name, node)
    if (Either.isLeft(property)) return Either.left(property.left)
    properties[name] = property.right
  }
  const required = Array.isArray(derived.required) ? derived.required : []
  return Either.right({ type: "object", properties, ...(required.length === 0 ? {} : { required }) })
}

const answerSchema = <A, I>(content: Schema.Schema<A, I>) =>
  Schema.Union(
    Schema.Struct({ action: Schema.Literal("accept"), content }),
    Schema.Struct({ action: Schema.Literal("decline", "cancel") })
  )

/**
 * Asks the user for a form (`elicitation/create`, form mode; MCP 2026-07-28, Client Features,
 * Elicitation), in one of two forms:
 *
 * - Schema-first: `schema` is an Effect Schema of a flat form ({@link ElicitForm}: strings, numbers,
 *   booleans, enums; a nested one does not compile). The `requestedSchema` sent is derived from it
 *   ({@link requestedSchema}); the answer is an {@link ElicitAnswer}: `accept` with the `content`
 *   decoded by `schema`, or `decline` / `cancel`. Content that does not decode fails with
 *   `McpError` -32602 (as any malformed answer). A Schema whose JSON Schema is not a flat form (a
 *   refinement to an object, say) dies with `ElicitSchemaError`.
 * - Raw: `requestedSchema` is the JSON Schema as sent (a flat object schema of primitive
 *   properties); yields the `ElicitResult` as the client answered it.
 *
 * Modern era: an `input_required` round (the answer arrives on the retry); legacy: an
 * `elicitation/create` request on the session. Fails with `McpError` -32021 when the client did not
 * declare `elicitation`.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 * import { Input, Tool } from "presa-mcp"
 *
 * const book = Tool.make({
 *   name: "book",
 *   handler: () =>
 *     Effect.gen(function*() {
 *       const answer = yield* Input.elicit(
 *         "Where to?",
 *         Schema.Struct({ city: Schema.String, nights: Schema.Int, seat: Schema.Literal("aisle", "window") })
 *       )
 *       return answer.action === "accept" ? `Booked ${answer.content.nights} nights in ${answer.content.city}` : "Not booked"
 *     })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export function elicit<A, I extends ElicitForm>(
  message: string,
  schema: Schema.Schema<A, I>,
  options?: { readonly key?: string }
): Effect.Effect<ElicitAnswer<A>, InputError, RequestContext>
export function elicit(
  message: string,
  requestedSchema: JsonRpc.JsonObject,
  options?: { readonly key?: string }
): Effect.Effect<ElicitResult, InputError, RequestContext>
export function elicit<A, I extends ElicitForm>(
  message: string,
  schema: Schema.Schema<A, I> | JsonRpc.JsonObject,
  options?: { readonly key?: string }
): Effect.Effect<ElicitAnswer<A> | ElicitResult, InputError, RequestContext> {
  if (!isSchema(schema)) {
    return ask(
      { method: McpSchema.ClientMethod.elicitationCreate, params: { message, requestedSchema: schema } },
      ElicitResult,
      options?.key
    )
  }
  return Either.match(requestedSchema(schema), {
    onLeft: (error) => Effect.die(error),
    onRight: (derived) =>
      ask(
        { method: McpSchema.ClientMethod.elicitationCreate, params: { message, requestedSchema: derived } },
        answerSchema(schema),
        options?.key
      )
  })
}

const isSchema = <A, I>(u: Schema.Schema<A, I> | JsonRpc.JsonObject): u is Schema.Schema<A, I> => Schema.isSchema(u)

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
