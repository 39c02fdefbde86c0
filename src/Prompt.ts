/**
 * Prompt definitions: plain records with a handler. Arguments are declared as an Effect Schema
 * struct (`parameters`: the `arguments` list is derived and the handler gets them decoded and
 * typed) or as the wire's `arguments` array (the handler gets the strings as sent).
 *
 * Spec: Server › Prompts (unknown prompt and missing required argument are -32602).
 *
 * Guide: [Servers, prompts](https://github.com/presa-mcp/presa-mcp/blob/main/docs/servers.md#prompts).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import * as S from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { type DefinitionServices, type HandlerResult, lift } from "./Handler.js"
import type { InputRequired } from "./Input.js"
import { erase } from "./internal/erase.js"
import { defined } from "./internal/record.js"
import * as JsonRpc from "./JsonRpc.js"
import type * as McpSchema from "./McpSchema.js"
import type { RequestContext, RequestContextShape } from "./RequestContext.js"
import type { Complete } from "./Resource.js"
import { formatParseError } from "./Tool.js"

/**
 * A message a prompt handler may return: a string (a user text message), or
 * `{role, content}` where `content` is a string (text) or a content block.
 *
 * @since 0.1.0
 * @category models
 */
export type MessageInput = string | {
  readonly role: "user" | "assistant"
  readonly content: string | McpSchema.ContentBlock
}

/**
 * What a prompt handler may return: a string → one user message; an array of messages; or an
 * object with `messages` (and optional `description`) → as is.
 *
 * @since 0.1.0
 * @category models
 */
export type PromptReturn =
  | string
  | ReadonlyArray<MessageInput>
  | { readonly description?: string; readonly messages: ReadonlyArray<MessageInput> }

/**
 * A prompt: `{name, title?, description?, arguments?, handler(args, ctx), complete?}`. Required
 * arguments are checked before the handler runs (-32602 naming the missing one). `R`: the services
 * its handler (and completion functions) need besides `RequestContext` (default none).
 *
 * @since 0.1.0
 * @category models
 */
export interface Prompt<R = never> {
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly arguments?: ReadonlyArray<McpSchema.PromptArgument>
  readonly icons?: ReadonlyArray<McpSchema.Icon>
  readonly _meta?: JsonRpc.JsonObject
  /**
   * Per-caller visibility: when it yields `false` the definition is absent from every list and,
   * named directly, gets the same error as one that does not exist. A predicate that fails hides it.
   */
  readonly visible?: (ctx: RequestContextShape) => boolean | PromiseLike<boolean> | Effect.Effect<boolean>
  readonly handler: (
    args: Readonly<Record<string, string>>,
    ctx: RequestContextShape
  ) => HandlerResult<PromptReturn, JsonRpc.McpError | InputRequired, R>
  readonly complete?: Readonly<Record<string, Complete<R>>>
}

/**
 * Any prompt, whatever services it needs (the constraint `McpServer.make` infers against).
 *
 * @since 0.1.0
 * @category models
 */
export type Any = Prompt<unknown>

/**
 * The services a prompt's handler and completion functions need besides `RequestContext`
 * (distributes over a union of prompts).
 *
 * @since 0.1.0
 * @category type-level
 */
export type Services<P> = DefinitionServices<P>

/**
 * A prompt whose arguments are an Effect Schema struct: `parameters` (decoded type `A`; its encoded
 * form `I` has string fields, as `prompts/get` sends them). The shape {@link make} takes besides
 * the plain {@link Prompt}.
 *
 * @since 0.2.0
 * @category models
 */
export interface SchemaPrompt<A, I extends Readonly<Record<string, string | undefined>>, R = never> {
  readonly name: string
  readonly title?: string
  readonly description?: string
  /**
   * The arguments: a struct (`Schema.Struct`, possibly transformed) whose encoded fields are
   * strings. Each property becomes a `PromptArgument`: its key the `name`, `required` unless the
   * property is optional, `title` / `description` from the property's annotations.
   */
  readonly parameters: Schema.Schema<A, I>
  readonly icons?: ReadonlyArray<McpSchema.Icon>
  readonly _meta?: JsonRpc.JsonObject
  /** As {@link Prompt.visible}. */
  readonly visible?: (ctx: RequestContextShape) => boolean | PromiseLike<boolean> | Effect.Effect<boolean>
  readonly handler: (
    args: A,
    ctx: RequestContextShape
  ) => HandlerResult<PromptReturn, JsonRpc.McpError | InputRequired, R>
  /** Completion functions, per argument name. */
  readonly complete?: { readonly [K in keyof I & string]?: Complete<R> }
}

/**
 * What a client and a server share about a prompt: its `name` and the Schema of its arguments
 * (decoded `A`, encoded `I`: strings, as `prompts/get` sends them). A {@link make} prompt with
 * `parameters` is one; `McpClient.prompt` encodes typed arguments with it.
 *
 * @since 0.2.0
 * @category models
 */
export interface Definition<A, I extends Readonly<Record<string, string | undefined>>> {
  readonly name: string
  readonly parameters: Schema.Schema<A, I>
}

/**
 * A client-side prompt {@link Definition} without a handler (identity, for inference): the Schema a
 * client gets a prompt with when it does not import the server's `Prompt.make` value.
 *
 * @since 0.2.0
 * @category constructors
 */
export const definition = <A, I extends Readonly<Record<string, string | undefined>>>(
  definition: Definition<A, I>
): Definition<A, I> => definition

/**
 * Defines a prompt, in one of two forms:
 *
 * - with `parameters`, an Effect Schema struct: the `arguments` list of `prompts/list` is derived
 *   from it (see {@link SchemaPrompt.parameters}) and the handler gets the arguments decoded, typed
 *   `A`. A missing required argument is -32602 naming it (before decoding, as for any prompt);
 *   arguments that do not decode are -32602 `Invalid arguments at <pointer>: <message>` (MCP
 *   2026-07-28, Server › Prompts › Error Handling: invalid arguments are -32602).
 * - with an `arguments` array (or none): the handler gets the arguments as sent (strings).
 *
 * With `parameters` the value keeps them, so it is also a {@link Definition} for `McpClient.prompt`.
 *
 * Infers the services `R` the handler (and completion functions) need besides `RequestContext`.
 *
 * @example
 * ```ts
 * import * as Schema from "effect/Schema"
 * import { Prompt } from "presa-mcp"
 *
 * const greet = Prompt.make({
 *   name: "greet",
 *   parameters: Schema.Struct({
 *     who: Schema.String.annotations({ description: "Whom to greet" }),
 *     times: Schema.optional(Schema.NumberFromString)
 *   }),
 *   handler: ({ who, times }) => `Say hello to ${who}${times === undefined ? "" : ` ${times} times`}.`
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: {
  <A, I extends Readonly<Record<string, string | undefined>>, R = never>(
    prompt: SchemaPrompt<A, I, R>
  ): Prompt<Exclude<R, RequestContext>> & Definition<A, I>
  <R = never>(prompt: Prompt<R>): Prompt<Exclude<R, RequestContext>>
} = <A, I extends Readonly<Record<string, string | undefined>>, R>(
  prompt: SchemaPrompt<A, I, R> | Prompt<R>
): Prompt<Exclude<R, RequestContext>> & Definition<A, I> =>
  // `R` as inferred may include `RequestContext` (always provided): the result type drops it (the
  // plain form has no `parameters`: its overload says so).
  erase<Prompt<Exclude<R, RequestContext>> & Definition<A, I>>("parameters" in prompt ? fromSchema(prompt) : prompt)

const fromSchema = <A, I extends Readonly<Record<string, string | undefined>>, R>(
  prompt: SchemaPrompt<A, I, R>
): Prompt<R> & Definition<A, I> => {
  const { complete, handler, parameters, ...common } = prompt
  const decode = S.decodeUnknown(parameters)
  return {
    ...common,
    // kept for `McpClient.prompt` (never on the wire: the server lists `arguments`)
    parameters,
    arguments: deriveArguments(parameters),
    ...(complete === undefined ? {} : { complete: defined(complete) }),
    handler: (args, ctx) =>
      decode(args).pipe(
        Effect.mapError((e) =>
          JsonRpc.McpError.invalidParams(formatParseError("Invalid arguments", e), { name: prompt.name })
        ),
        Effect.flatMap((decoded) => lift(() => handler(decoded, ctx)))
      )
  }
}

/**
 * The `arguments` list of a struct schema: one entry per property of its type side (keys are the
 * same on the encoded side for `Schema.Struct`), in declaration order. `title` / `description`: the
 * property signature's annotations, else its schema's (the member other than `undefined` of an
 * optional one), leaving out the generic ones effect's built-in schemas carry ("a string").
 */
const deriveArguments = <A, I>(parameters: Schema.Schema<A, I>): ReadonlyArray<McpSchema.PromptArgument> =>
  SchemaAST.getPropertySignatures(parameters.ast).map((ps) => {
    const type = definedMember(ps.type)
    const title = annotation(SchemaAST.getTitleAnnotation, ps, type, DEFAULT_TITLES)
    const description = annotation(SchemaAST.getDescriptionAnnotation, ps, type, DEFAULT_DESCRIPTIONS)
    return {
      name: String(ps.name),
      ...(title === undefined ? {} : { title }),
      ...(description === undefined ? {} : { description }),
      required: !ps.isOptional
    }
  })

const definedMember = (ast: SchemaAST.AST): SchemaAST.AST => {
  if (!SchemaAST.isUnion(ast)) return ast
  const [only, ...rest] = ast.types.filter((t) => !SchemaAST.isUndefinedKeyword(t))
  return only !== undefined && rest.length === 0 ? only : ast
}

const annotation = (
  get: (annotated: SchemaAST.Annotated) => Option.Option<string>,
  ps: SchemaAST.PropertySignature,
  type: SchemaAST.AST,
  defaults: ReadonlySet<string>
): string | undefined =>
  Option.getOrUndefined(Option.orElse(get(ps), () => Option.filter(get(type), (v) => !defaults.has(v))))

const BUILT_INS: ReadonlyArray<SchemaAST.Annotated> = [
  S.String,
  S.Number,
  S.Boolean,
  S.BigInt,
  S.Int,
  S.NumberFromString,
  S.BooleanFromString,
  S.Trim,
  S.Trimmed,
  S.NonEmptyString,
  S.NonEmptyTrimmedString,
  S.Lowercase,
  S.Uppercase,
  S.UUID,
  S.ULID,
  S.Date,
  S.DateFromString,
  S.URL
].map((schema) => schema.ast)

const DEFAULT_TITLES: ReadonlySet<string> = new Set(
  BUILT_INS.flatMap((ast) => Option.toArray(SchemaAST.getTitleAnnotation(ast)))
)

const DEFAULT_DESCRIPTIONS: ReadonlySet<string> = new Set(
  BUILT_INS.flatMap((ast) => Option.toArray(SchemaAST.getDescriptionAnnotation(ast)))
)
