/**
 * Tool definitions: plain records with a handler. A tool declares its arguments as an Effect Schema
 * (`parameters`, see {@link make}: the handler gets them decoded and typed) or, explicitly, as a raw
 * JSON Schema (`inputSchema`, see {@link fromJsonSchema}).
 *
 * Spec: Server › Tools (2026-07-28 and 2025-11-25); SEP-1303 (argument errors are tool results).
 *
 * Guide: [Servers, tools](https://github.com/presa-mcp/presa-mcp/blob/main/docs/servers.md#tools).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as JSONSchema from "effect/JSONSchema"
import * as ParseResult from "effect/ParseResult"
import type * as Schema from "effect/Schema"
import * as S from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { Blocks } from "./Content.js"
import { type HandlerResult, lift, type Services as HandlerServices } from "./Handler.js"
import type { InputRequired } from "./Input.js"
import { erase } from "./internal/erase.js"
import * as ToolArguments from "./internal/server/toolArguments.js"
import * as JsonRpc from "./JsonRpc.js"
import type * as McpSchema from "./McpSchema.js"
import type { RequestContext, RequestContextShape } from "./RequestContext.js"
import type * as Task from "./Task.js"

/**
 * A failure the model can act on. In a tool handler's fail channel it becomes a
 * `CallToolResult` with `isError: true` whose text is `message` (or `content`, when given).
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolError extends S.TaggedError<ToolError>("presa-mcp/ToolError")("ToolError", {
  message: S.String,
  content: S.optional(S.Array(S.Unknown)),
  structuredContent: S.optional(S.Unknown)
}) {}

/**
 * What a tool handler may return (docs/architecture.md, "Handler results"):
 * - a string → one text block;
 * - `Content.blocks([...])` → those blocks;
 * - an object with a `content` array → that result as is (`structuredContent`, `isError` kept);
 * - any other plain object → `structuredContent` plus a text block with its JSON;
 * - `undefined` / `null` → an empty result (`content: []`).
 *
 * @since 0.1.0
 * @category models
 */
export type ToolReturn =
  | string
  | Blocks
  | McpSchema.CallToolResult
  | JsonRpc.JsonObject
  | null
  | undefined
  | void

/**
 * A tool handler: gets the (validated) arguments and the request context. Its errors: `ToolError`
 * (→ `isError` result) or `McpError` (→ JSON-RPC error). Anything thrown is a defect. `R`: the
 * services its Effect needs besides `RequestContext` (default none; see `McpServer.make`).
 *
 * @since 0.1.0
 * @category models
 */
export type Handler<A, R = never> = (
  args: A,
  ctx: RequestContextShape
) => HandlerResult<ToolReturn, ToolError | JsonRpc.McpError | InputRequired, R>

/**
 * What every tool form has besides its arguments, result and handler: `name`, `title`,
 * `description`, `annotations`, `icons`, `_meta` (the `Tool` of `tools/list`, MCP 2025-11-25,
 * Server Features, Tools), `visible` and `task`. `JsonTool`, `TypedTool` and `App.AppTool` extend it.
 *
 * @since 0.2.0
 * @category models
 */
export interface Common {
  /** Unique per server; SHOULD be 1–128 chars of `[A-Za-z0-9_.-]`. */
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly annotations?: McpSchema.ToolAnnotations
  readonly icons?: ReadonlyArray<McpSchema.Icon>
  readonly _meta?: JsonRpc.JsonObject
  /**
   * Per-caller visibility: when it yields `false` the definition is absent from every list and,
   * named directly, gets the same error as one that does not exist. A predicate that fails hides it.
   */
  readonly visible?: (ctx: RequestContextShape) => boolean | PromiseLike<boolean> | Effect.Effect<boolean>
  /**
   * Tasks extension (SEP-2663, modern only, needs the server's `tasks` option): whether a call
   * may be answered with a task while the handler runs on — `"sync"` (default), `"optional"`,
   * `"required"` (-32021 for a client without the extension) or a function deciding per call
   * (see `Task.Policy`).
   */
  readonly task?: Task.Policy
}

/**
 * A tool with a JSON Schema: `inputSchema` (root `type: "object"`; default: no arguments),
 * `outputSchema` (structured results are checked against it).
 *
 * @since 0.1.0
 * @category models
 */
export interface JsonTool<R = never> extends Common {
  readonly inputSchema?: JsonRpc.JsonObject
  readonly outputSchema?: JsonRpc.JsonObject
  readonly handler: Handler<JsonRpc.JsonObject, R>
}

/**
 * A tool whose arguments (and optionally result) are Effect Schemas: `parameters` (decoded type
 * `A`, encoded `I`; default: no arguments) and `success` (its encoded form becomes
 * `structuredContent`). The shape {@link make} takes.
 *
 * @since 0.1.0
 * @category models
 */
export interface TypedTool<A, I, O, OI, R = never, E = never, EI = never> extends Common {
  readonly parameters?: Schema.Schema<A, I>
  readonly success?: Schema.Schema<O, OI>
  /**
   * The tool's typed failures: a value of `E` the handler fails with (one that `Schema.is(failure)`
   * accepts) is answered as an `isError: true` result whose `structuredContent` is its encoding
   * (and whose text is that JSON), so a typed client ({@link Definition}, `McpClient.call`) decodes
   * it back to `E`. Give it an object encoding (a `Schema.TaggedError`, a struct): legacy revisions
   * drop a non-object `structuredContent`, and the client then gets a `ToolError`. Default: none.
   */
  readonly failure?: Schema.Schema<E, EI>
  readonly handler: (
    args: A,
    ctx: RequestContextShape
  ) => HandlerResult<NoInfer<O> | ToolReturn, ToolError | JsonRpc.McpError | InputRequired | NoInfer<E>, R>
}

/**
 * What a client and a server share about a tool: its `name` and Schemas. `parameters` (decoded `A`,
 * encoded `I`) encodes a typed call's arguments (absent: no arguments, `{}`); `success` (decoded `O`)
 * decodes its `structuredContent` (absent: the call yields the raw `CallToolResult`); `failure`
 * (decoded `E`) decodes the `structuredContent` of an `isError: true` result. A {@link make} tool is
 * one (the same value serves the server and `McpClient.call`); a client that has only the Schemas
 * (a shared package, a foreign server's tool) writes the record itself, or with {@link definition}.
 *
 * @since 0.2.0
 * @category models
 */
export interface Definition<A, I, O = never, OI = never, E = never, EI = never> {
  readonly name: string
  readonly parameters?: Schema.Schema<A, I> | undefined
  readonly success?: Schema.Schema<O, OI> | undefined
  readonly failure?: Schema.Schema<E, EI> | undefined
}

/**
 * A {@link make} tool: a JSON Schema tool for the server that keeps its Schemas, so that the same
 * value is a {@link Definition} for a typed client call.
 *
 * @since 0.2.0
 * @category models
 */
export type SchemaTool<A, I, O, OI, E, EI, R = never> = JsonTool<R> & Definition<A, I, O, OI, E, EI>

/**
 * A client-side tool {@link Definition} without a handler (identity, for inference): the Schemas a
 * client calls a tool with when it does not import the server's `Tool.make` value.
 *
 * @example
 * ```ts
 * import * as Schema from "effect/Schema"
 * import { Tool } from "presa-mcp"
 *
 * const add = Tool.definition({
 *   name: "add",
 *   parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
 *   success: Schema.Struct({ sum: Schema.Number })
 * })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const definition = <A, I, O = never, OI = never, E = never, EI = never>(
  definition: Definition<A, I, O, OI, E, EI> & { readonly parameters: Schema.Schema<A, I> }
): Definition<A, I, O, OI, E, EI> => definition

/**
 * A tool definition as the server takes it: a JSON Schema tool. Schema tools ({@link make}) compile
 * to one. `R`: the services its handler needs besides `RequestContext` (default none).
 *
 * @since 0.1.0
 * @category models
 */
export type Tool<R = never> = JsonTool<R>

/**
 * Any tool, whatever services it needs (the constraint `McpServer.make` infers tools against).
 *
 * @since 0.1.0
 * @category models
 */
export type Any = JsonTool<unknown>

/**
 * The services a tool's handler needs besides `RequestContext` (distributes over a union of tools).
 *
 * @since 0.1.0
 * @category type-level
 */
export type Services<T> = T extends { readonly handler: infer H } ? HandlerServices<H> : never

/**
 * Defines a tool from a raw JSON Schema (`inputSchema`, `outputSchema`): the handler gets the
 * arguments as a `JsonObject` that the server has validated against `inputSchema` (an invalid call
 * is an `isError` result `Invalid arguments at <pointer>: <message>`, in every era; SEP-1303). Identity at
 * run time; infers the services `R` its handler needs besides `RequestContext`. Use it for a schema
 * that comes from elsewhere (a proxy, a file, a spec fixture); {@link make} derives the schema from
 * an Effect Schema and types the arguments.
 *
 * @example
 * ```ts
 * import { Tool } from "presa-mcp"
 *
 * const echo = Tool.fromJsonSchema({
 *   name: "echo",
 *   inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
 *   handler: (args) => String(args.text)
 * })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromJsonSchema = <R = never>(tool: JsonTool<R>): JsonTool<Exclude<R, RequestContext>> =>
  // `R` as inferred may include `RequestContext` (always provided): the result type drops it.
  erase<JsonTool<Exclude<R, RequestContext>>>(tool)

/**
 * Defines a tool from Effect Schemas: the handler gets its arguments decoded with `parameters`,
 * typed `A` (no `parameters`: no arguments, `{}`). `inputSchema` (and `outputSchema` from
 * `success`) are derived with `JSONSchema.make` (2020-12 target, `$schema` left out so the MCP
 * default dialect applies). The server checks the arguments once, with the `parameters` decode
 * (excess properties refused, as the derived `additionalProperties: false` says); a call it refuses
 * is an `isError` result whose text is the built-in validator's on the derived JSON Schema when that
 * finds the problem (the same messages as a {@link fromJsonSchema} tool), else the decode's
 * `Invalid arguments at <pointer>: <message>`. With a custom `validator` the server runs it first,
 * as for any tool; with `validate: false` only the decode checks. With `success`, the handler's
 * value is encoded with it and sent as `structuredContent` (plus its JSON as text; a non-object
 * success is sent as `{value}`). Infers the services `R` its handler needs besides
 * `RequestContext`.
 *
 * @example
 * ```ts
 * import * as Schema from "effect/Schema"
 * import { Tool } from "presa-mcp"
 *
 * const add = Tool.make({
 *   name: "add",
 *   description: "Adds numbers",
 *   parameters: Schema.Struct({ numbers: Schema.Array(Schema.Number) }),
 *   success: Schema.Struct({ sum: Schema.Number }),
 *   handler: ({ numbers }) => ({ sum: numbers.reduce((a, b) => a + b, 0) })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: {
  <O = never, OI = never, R = never, E = never, EI = never>(
    tool: TypedTool<NoArguments, NoArguments, O, OI, R, E, EI> & { readonly parameters?: undefined } & NotJsonSchema
  ): SchemaTool<NoArguments, NoArguments, O, OI, E, EI, Exclude<R, RequestContext>>
  <A, I, O = never, OI = never, R = never, E = never, EI = never>(
    tool: TypedTool<A, I, O, OI, R, E, EI> & { readonly parameters: Schema.Schema<A, I> } & NotJsonSchema
  ): SchemaTool<A, I, O, OI, E, EI, Exclude<R, RequestContext>>
} = <A, I, O, OI, R, E, EI>(
  tool: TypedTool<A, I, O, OI, R, E, EI>
): SchemaTool<A, I, O, OI, E, EI, Exclude<R, RequestContext>> => {
  // Untyped callers of the 0.1 API (`make({ inputSchema, handler })`): serve it as the raw JSON
  // Schema tool it is instead of dropping the schema.
  if (tool.parameters === undefined && isJsonTool(tool)) return fromJsonSchema(tool)
  const { failure, handler: typedHandler, parameters, success, ...common } = tool
  // Without `failure`, `E` is `never` (only `failure` infers it): the handler is closed as it is.
  const handler: ClosedHandler<A, O, R> = failure === undefined
    ? erase<ClosedHandler<A, O, R>>(typedHandler)
    : withFailure(typedHandler, failure)
  // No `parameters` (the first overload): `A` is `NoArguments`, the empty object.
  const noArguments = NO_ARGUMENTS as A
  const decode = parameters === undefined ? undefined : S.decodeUnknown(parameters)
  const encode = success === undefined ? undefined : S.encode(success)
  const derivedOutput = success === undefined ? undefined : deriveJsonSchema(success)
  // structuredContent must be an object: a non-object success is sent as `{value}`.
  const wrapOutput = derivedOutput !== undefined && derivedOutput.type !== "object"
  const outputSchema = derivedOutput === undefined
    ? undefined
    : wrapOutput
    ? { type: "object", properties: { value: derivedOutput }, required: ["value"] }
    : derivedOutput
  const inputSchema = parameters === undefined ? EMPTY_OBJECT : deriveInputSchema(parameters)
  // A handler's value that is not a `ToolReturn` form (`isSuccessValue`) is its success value.
  const asSuccess = (out: NoInfer<O> | ToolReturn): O => out as O
  // The result as the server takes it: `success`-encoded when it is a success value.
  const finish = (out: NoInfer<O> | ToolReturn): Effect.Effect<ToolReturn> =>
    encode === undefined || !isSuccessValue(out)
      ? Effect.succeed(asToolReturn(out))
      : encode(asSuccess(out)).pipe(
        Effect.orDie,
        Effect.map((encoded) => wrapOutput ? { value: encoded } : asToolReturn(encoded))
      )
  const encodeNow = success === undefined ? undefined : S.encodeEither(success)
  // The handler once the arguments are decoded. A plain value (neither an Effect nor a Promise) is
  // returned as a plain value when it needs no encoding or encodes synchronously, so the server
  // answers it in the step that called the handler; a throw is the caller's defect, as `lift` makes it.
  const run = (
    value: A,
    ctx: RequestContextShape
  ): HandlerResult<ToolReturn, ToolError | JsonRpc.McpError | InputRequired, R> => {
    const out = handler(value, ctx)
    if (Effect.isEffect(out) || isPromiseLike(out)) return Effect.flatMap(lift(() => out), finish)
    if (encodeNow === undefined || !isSuccessValue(out)) return asToolReturn(out)
    const encoded = encodeNow(asSuccess(out))
    return Either.isRight(encoded) ? (wrapOutput ? { value: encoded.right } : asToolReturn(encoded.right)) : finish(out)
  }
  const compiled: JsonTool<R> = {
    ...common,
    inputSchema,
    ...(outputSchema === undefined ? {} : { outputSchema }),
    handler: (args, ctx) =>
      (decode === undefined
        ? Effect.succeed(noArguments)
        : decode(args).pipe(
          Effect.mapError((e) => new ToolError({ message: formatParseError("Invalid arguments", e) }))
        )).pipe(Effect.flatMap((value) => lift(() => run(value, ctx))))
  }
  // The server validates these arguments with the Schema decode alone (internal/server/toolArguments.ts).
  const decodeStrict = parameters === undefined
    ? () => Either.right(noArguments)
    : S.decodeUnknownEither(parameters, { onExcessProperty: "error" })
  ToolArguments.register(compiled.handler, { inputSchema, decode: decodeStrict, run })
  // The Schemas stay on the value (never on the wire: the server builds the wire `Tool` field by
  // field), so that it is a `Definition` for `McpClient.call`.
  return {
    ...fromJsonSchema(compiled),
    ...(parameters === undefined ? {} : { parameters }),
    ...(success === undefined ? {} : { success }),
    ...(failure === undefined ? {} : { failure })
  }
}

/**
 * A handler whose failures of `failure`'s type become `ToolError`s carrying their encoding as
 * `structuredContent` (its JSON as the text). An error that is not one (or does not encode) passes.
 */
type ClosedHandler<A, O, R> = (
  args: A,
  ctx: RequestContextShape
) => HandlerResult<O | ToolReturn, ToolError | JsonRpc.McpError | InputRequired, R>

const withFailure = <A, O, R, E, EI>(
  handler: (
    args: A,
    ctx: RequestContextShape
  ) => HandlerResult<O | ToolReturn, ToolError | JsonRpc.McpError | InputRequired | E, R>,
  failure: Schema.Schema<E, EI>
): ClosedHandler<A, O, R> => {
  const isFailure = S.is(failure)
  const encode = S.encodeEither(failure)
  const toToolError = (e: E): ToolError => {
    const encoded = encode(e)
    const structuredContent = Either.isRight(encoded) ? encoded.right : undefined
    return new ToolError({
      message: structuredContent === undefined ? String(e) : JSON.stringify(structuredContent),
      ...(structuredContent === undefined ? {} : { structuredContent })
    })
  }
  return (args, ctx) => {
    const out = handler(args, ctx)
    if (!Effect.isEffect(out)) return out
    return Effect.catchIf(
      lift(() => out),
      (e): e is E => !isOwnError(e) && isFailure(e),
      (e) => Effect.fail(toToolError(e))
    )
  }
}

const isOwnError = (e: unknown): boolean =>
  typeof e === "object" && e !== null && "_tag" in e &&
  (e._tag === "ToolError" || e._tag === "McpError" || e._tag === "InputRequired")

const NO_ARGUMENTS: NoArguments = {}

/**
 * What `make` says to a raw JSON Schema: the compiler's error names the constructor to use.
 *
 * @since 0.2.0
 * @category models
 */
export interface NotJsonSchema {
  readonly inputSchema?:
    "Tool.make takes `parameters` (an Effect Schema): a raw JSON Schema goes through Tool.fromJsonSchema"
}

const isJsonTool = (tool: object): tool is JsonTool<never> =>
  "inputSchema" in tool && typeof tool.inputSchema === "object" && tool.inputSchema !== null

/**
 * The arguments of a {@link make} tool without `parameters`: none.
 *
 * @since 0.2.0
 * @category models
 */
export type NoArguments = Readonly<Record<never, never>>

const EMPTY_OBJECT: JsonRpc.JsonObject = { type: "object", properties: {} }

/** An empty struct derives to `anyOf: [object, array]`; a tool without parameters takes `{}`. */
const deriveInputSchema = <A, I>(parameters: Schema.Schema<A, I>): JsonRpc.JsonObject => {
  const ast = parameters.ast
  if (
    SchemaAST.isTypeLiteral(ast) && ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0
  ) return EMPTY_OBJECT
  return deriveJsonSchema(parameters)
}

const isPromiseLike = (u: unknown): u is PromiseLike<unknown> =>
  typeof u === "object" && u !== null && "then" in u && typeof u.then === "function"

const isSuccessValue = (u: unknown): boolean => !(u instanceof Blocks) && u !== undefined && u !== null

const asToolReturn = (u: unknown): ToolReturn => {
  if (u === undefined || u === null || typeof u === "string" || u instanceof Blocks) return u
  if (JsonRpc.isObject(u)) return u
  return { value: u }
}

/**
 * The JSON Schema of an Effect Schema, as a tool's `inputSchema`/`outputSchema`: `JSONSchema.make`
 * (2020-12 target, `$schema` left out so the MCP default dialect applies) with every definition
 * inlined where it is used, so a model reads one self-contained schema: a `Schema.Class`, a branded
 * or an identified schema (`Schema.Int`) appears in place, never as a `$ref`. Only recursive
 * definitions (a `Schema.suspend` that reaches itself) stay in `$defs`, referenced as
 * `#/$defs/<identifier>`; `$defs` is absent when there are none.
 *
 * @since 0.1.0
 * @category encoding
 */
export const deriveJsonSchema = <A, I>(schema: Schema.Schema<A, I>): JsonRpc.JsonObject => {
  const { $defs, $schema: _ignored, ...rest } = JSONSchema.make(schema, { target: "jsonSchema2020-12" })
  return $defs === undefined ? rest : inlineDefinitions(rest, $defs)
}

const DEFS_PREFIX = "#/$defs/"

/** `root` with each `$ref` into `defs` replaced by the definition, except the recursive ones. */
const inlineDefinitions = (
  root: JsonRpc.JsonObject,
  defs: Readonly<Record<string, unknown>>
): JsonRpc.JsonObject => {
  const refsOf = (node: unknown, out: Set<string>): Set<string> => {
    if (Array.isArray(node)) { for (const item of node) refsOf(item, out) }
    else if (JsonRpc.isObject(node)) {
      for (const [key, value] of Object.entries(node)) {
        if (key === "$ref" && typeof value === "string" && value.startsWith(DEFS_PREFIX)) {
          out.add(value.slice(DEFS_PREFIX.length))
        } else refsOf(value, out)
      }
    }
    return out
  }
  const edges = new Map(Object.entries(defs).map(([name, def]) => [name, refsOf(def, new Set())]))
  // A definition is recursive when it reaches itself through the references of its definitions.
  const reaches = (from: string, target: string, seen: Set<string>): boolean => {
    for (const next of edges.get(from) ?? []) {
      if (next === target) return true
      if (!seen.has(next)) {
        seen.add(next)
        if (reaches(next, target, seen)) return true
      }
    }
    return false
  }
  const recursive = new Set([...edges.keys()].filter((name) => reaches(name, name, new Set())))
  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline)
    if (!JsonRpc.isObject(node)) return node
    const ref = node.$ref
    if (typeof ref === "string" && ref.startsWith(DEFS_PREFIX)) {
      const name = ref.slice(DEFS_PREFIX.length)
      if (!recursive.has(name) && Object.hasOwn(defs, name)) {
        const { $ref: _ref, ...siblings } = node
        const target = inline(defs[name])
        return JsonRpc.isObject(target) ? { ...target, ...mapValues(siblings, inline) } : target
      }
    }
    return mapValues(node, inline)
  }
  // A recursive root (an identified `Schema.suspend` itself) is given in place once: the root of
  // an `inputSchema` must be the object schema, not a reference.
  const rootRef = typeof root.$ref === "string" && root.$ref.startsWith(DEFS_PREFIX)
    ? root.$ref.slice(DEFS_PREFIX.length)
    : undefined
  const rootDef = rootRef === undefined ? undefined : defs[rootRef]
  const inlined = rootRef !== undefined && JsonRpc.isObject(rootDef)
    ? { ...mapValues(rootDef, inline), ...mapValues(omitRef(root), inline) }
    : mapValues(root, inline)
  if (recursive.size === 0) return inlined
  // Only the recursive definitions the (inlined) schema still references stay, with theirs.
  const kept: Record<string, unknown> = {}
  const keep = (name: string): void => {
    if (Object.hasOwn(kept, name) || !recursive.has(name)) return
    kept[name] = inline(defs[name])
    for (const next of refsOf(kept[name], new Set())) keep(next)
  }
  for (const name of refsOf(inlined, new Set())) keep(name)
  return Object.keys(kept).length === 0 ? inlined : { ...inlined, $defs: kept }
}

const omitRef = ({ $ref: _ref, ...rest }: JsonRpc.JsonObject): JsonRpc.JsonObject => rest

const mapValues = (node: JsonRpc.JsonObject, f: (value: unknown) => unknown): JsonRpc.JsonObject => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) out[key] = f(value)
  return out
}

/**
 * `"<prefix> at /a/0: message"` from a Schema `ParseError` (paths as JSON Pointers), worded as the
 * built-in JSON Schema validator words its issues: one message per path, `expected <what>, got
 * <value>` (`"Invalid arguments at /limit: expected a number between 1 and 100, got 500"`), the
 * alternatives of a union joined (`expected "a", "b" or a number, got true`) with the `undefined`
 * of an optional property left out, `is required` for a missing property, `is not allowed` for an
 * excess one. A message annotation (`Schema.filter(..., { message })`) is kept as written.
 *
 * @since 0.1.0
 * @category encoding
 */
export const formatParseError = (prefix: string, error: ParseResult.ParseError): string => {
  const groups: Array<{ readonly path: string; readonly messages: Array<string> }> = []
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const path = issue.path.length === 0
      ? "/"
      : issue.path.map((k) => "/" + String(k).replace(/~/g, "~0").replace(/\//g, "~1")).join("")
    const last = groups[groups.length - 1]
    if (last !== undefined && last.path === path) last.messages.push(issue.message)
    else groups.push({ path, messages: [issue.message] })
  }
  return groups.map((group, i) => `${i === 0 ? `${prefix} at` : "at"} ${group.path}: ${humane(group.messages)}`)
    .join("; ")
}

const EXPECTED = /^Expected ([\s\S]+), actual ([\s\S]+)$/

/** One path's messages as one: the `Expected X, actual Y` of a union's members merged. */
const humane = (messages: ReadonlyArray<string>): string => {
  const parsed = messages.map((message) => EXPECTED.exec(message))
  if (parsed.every((m) => m !== null)) {
    const actual = parsed[0]?.[2] ?? ""
    const described = [...new Set(parsed.map((m) => describeExpected(m?.[1] ?? "")))]
    const wanted = described.length > 1 ? described.filter((d) => d !== "undefined") : described
    return `expected ${joinAlternatives(wanted)}, got ${actual}`
  }
  return [...new Set(messages.map(rephrase))].join("; ")
}

const rephrase = (message: string): string => {
  if (message === "is missing") return "is required"
  if (message.startsWith("is unexpected")) return "is not allowed"
  const m = EXPECTED.exec(message)
  return m === null ? message : `expected ${describeExpected(m[1] ?? "")}, got ${m[2] ?? ""}`
}

const ARTICLES: Readonly<Record<string, string>> = {
  string: "a string",
  number: "a number",
  boolean: "a boolean",
  bigint: "a bigint",
  object: "an object",
  symbol: "a symbol"
}

/** Effect's expected type as a person names it: `string` → `a string`; a brand left out. */
const describeExpected = (expected: string): string => {
  const plain = expected.replace(/ & Brand<[^>]*>/g, "")
  return ARTICLES[plain] ?? plain
}

const joinAlternatives = (items: ReadonlyArray<string>): string =>
  items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`
