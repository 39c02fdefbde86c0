/**
 * Typed calls from shared definitions (`McpClient.call`, `McpClient.prompt`,
 * `McpClient.readTemplate`): arguments encoded with the definition's Schema, results decoded with
 * it. Plain functions over a connected client; nothing here touches the wire directly.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Content from "../../Content.js"
import { TypedCallError } from "../../Errors.js"
import * as JsonRpc from "../../JsonRpc.js"
import type { CallError, CallOptions, McpClient } from "../../McpClient.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as Prompt from "../../Prompt.js"
import type * as Resource from "../../Resource.js"
import * as Tool from "../../Tool.js"
import * as UriTemplate from "../../UriTemplate.js"

/** See `McpClient.TypedCallError` (declared in the public `Errors` module, as `ClientError` is). */
export { TypedCallError } from "../../Errors.js"

/** What a typed tool call yields: the decoded `success`, or the whole result without one. */
export type Success<O> = [O] extends [never] ? McpSchema.CallToolResult : O

const encodeArguments = <A, I>(
  name: string,
  schema: Schema.Schema<A, I> | undefined,
  args: A
): Effect.Effect<JsonRpc.JsonObject, TypedCallError> => {
  if (schema === undefined) return Effect.succeed({})
  return Schema.encode(schema)(args).pipe(
    Effect.mapError((cause) =>
      new TypedCallError({
        reason: "Arguments",
        name,
        message: Tool.formatParseError("Invalid arguments", cause),
        cause
      })
    ),
    Effect.flatMap((encoded) =>
      JsonRpc.isObject(encoded)
        ? Effect.succeed(encoded)
        : Effect.fail(
          new TypedCallError({ reason: "Arguments", name, message: "Invalid arguments: they must encode to an object" })
        )
    )
  )
}

/**
 * The value a result carries for `schema`: its `structuredContent` (unwrapped from `{value}` when
 * the Schema's JSON Schema is not an object, as `Tool.make` wraps it), else the JSON of its only
 * text block (the spec's backwards-compatible form).
 */
const structuredValue = (schema: Schema.Schema.AnyNoContext, result: McpSchema.CallToolResult): unknown => {
  const structured = result.structuredContent ?? parseText(result)
  return isObjectSchema(schema) || !JsonRpc.isObject(structured) || !("value" in structured)
    ? structured
    : structured.value
}

const parseText = (result: McpSchema.CallToolResult): unknown => {
  const [only, ...rest] = result.content
  if (only === undefined || only.type !== "text" || rest.length > 0) return undefined
  return Either.getOrUndefined(Either.try(() => JSON.parse(only.text) as unknown))
}

const objectSchemas = new WeakMap<object, boolean>()

const isObjectSchema = (schema: Schema.Schema.AnyNoContext): boolean => {
  const known = objectSchemas.get(schema.ast)
  if (known !== undefined) return known
  const isObject = Tool.deriveJsonSchema(schema).type === "object"
  objectSchemas.set(schema.ast, isObject)
  return isObject
}

/** An `isError` result as the tool's typed failure (see `McpClient.call`). */
const failureOf = <E, EI>(
  name: string,
  failure: Schema.Schema<E, EI> | undefined,
  result: McpSchema.CallToolResult
): Effect.Effect<never, E | Tool.ToolError | TypedCallError> => {
  const toolError = new Tool.ToolError({
    message: Content.textOf(result),
    content: result.content,
    ...(result.structuredContent === undefined ? {} : { structuredContent: result.structuredContent })
  })
  if (failure === undefined || result.structuredContent === undefined) return Effect.fail(toolError)
  return Schema.decodeUnknown(failure)(result.structuredContent).pipe(
    Effect.matchEffect({
      onFailure: (cause) =>
        Effect.fail(
          new TypedCallError({
            reason: "Failure",
            name,
            message: Tool.formatParseError(`Tool ${name}: error result does not decode`, cause),
            result,
            cause
          })
        ),
      onSuccess: (e) => Effect.fail(e)
    })
  )
}

export const call = <A, I, O, OI, E, EI>(
  client: McpClient,
  tool: Tool.Definition<A, I, O, OI, E, EI>,
  args: A,
  options?: CallOptions & { readonly _meta?: JsonRpc.JsonObject }
): Effect.Effect<Success<O>, E | Tool.ToolError | TypedCallError | CallError> =>
  encodeArguments(tool.name, tool.parameters, args).pipe(
    Effect.flatMap((encoded) => client.callTool(tool.name, encoded, options)),
    Effect.flatMap((result): Effect.Effect<Success<O>, E | Tool.ToolError | TypedCallError> => {
      if (result.isError === true) return failureOf(tool.name, tool.failure, result)
      const success = tool.success
      // Without `success` the whole result is the value (`Success<never>`).
      if (success === undefined) return Effect.succeed(result as Success<O>)
      return Schema.decodeUnknown(success)(structuredValue(success, result)).pipe(
        Effect.mapError((cause) =>
          new TypedCallError({
            reason: "Result",
            name: tool.name,
            message: Tool.formatParseError(`Tool ${tool.name}: result does not decode`, cause),
            result,
            cause
          })
        ),
        Effect.map((o) => o as Success<O>)
      )
    }),
    Effect.withSpan("McpClient.call", { attributes: { "mcp.tool.name": tool.name } })
  )

export const prompt = <A, I extends Readonly<Record<string, string | undefined>>>(
  client: McpClient,
  definition: Prompt.Definition<A, I>,
  args: A,
  options?: CallOptions
): Effect.Effect<McpSchema.GetPromptResult, TypedCallError | CallError> =>
  encodeArguments(definition.name, definition.parameters, args).pipe(
    Effect.map((encoded) => {
      const strings: Record<string, string> = {}
      for (const [key, value] of Object.entries(encoded)) if (typeof value === "string") strings[key] = value
      return strings
    }),
    Effect.flatMap((strings) => client.getPrompt(definition.name, strings, options))
  )

export const readTemplate = <A, I extends Resource.Variables>(
  client: McpClient,
  definition: Resource.TemplateDefinition<A, I>,
  variables: A,
  options?: CallOptions
): Effect.Effect<McpSchema.ReadResourceResult, TypedCallError | CallError> =>
  Effect.gen(function*() {
    const name = definition.uriTemplate
    const template = yield* UriTemplate.parse(name).pipe(
      Effect.mapError((cause) => new TypedCallError({ reason: "Arguments", name, message: cause.message, cause }))
    )
    const encoded = yield* Schema.encode(definition.parameters)(variables).pipe(
      Effect.mapError((cause) =>
        new TypedCallError({
          reason: "Arguments",
          name,
          message: Tool.formatParseError("Invalid URI variables", cause),
          cause
        })
      )
    )
    return yield* client.readResource(UriTemplate.expand(template, encoded), options)
  })
