/**
 * @effect/ai Toolkit → MCP tools: each user-defined tool of a toolkit as a `Tool.fromJsonSchema`
 * tool whose handler runs the toolkit's handler. Public surface: src/AiToolkit.ts.
 * @internal
 */
import * as AiError from "@effect/ai/AiError"
import * as AiTool from "@effect/ai/Tool"
import type * as Toolkit from "@effect/ai/Toolkit"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as Content from "../../Content.js"
import type { DefinitionError } from "../../Errors.js"
import * as JsonRpc from "../../JsonRpc.js"
import type * as McpSchema from "../../McpSchema.js"
import * as McpServer from "../../McpServer.js"
import * as Tool from "../../Tool.js"
import { erase } from "../erase.js"

/** The services the handlers of a toolkit's tools need (their dependencies and schemas' context). */
export type Requirements<Tools extends Record<string, AiTool.Any>> = AiTool.Requirements<Tools[keyof Tools]>

/**
 * `WithHandler.handle` as it runs: it decodes `params` itself with the tool's `parametersSchema`
 * (`Schema.decodeUnknown`, failing with `AiError.MalformedOutput`), so it takes the encoded
 * arguments a caller sends, whatever its signature says, and fails with the tool's failure
 * (`failureMode: "error"`) or an `AiError`.
 */
interface Handle<R> {
  readonly handle: (name: string, params: unknown) => Effect.Effect<AiTool.HandlerResult<AiTool.Any>, unknown, R>
}

const EMPTY_OBJECT: JsonRpc.JsonObject = { type: "object", properties: {} }

const isEmptyStruct = (ast: SchemaAST.AST): boolean =>
  SchemaAST.isTypeLiteral(ast) && ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0

const isVoid = (ast: SchemaAST.AST): boolean => SchemaAST.isVoidKeyword(ast) || SchemaAST.isUndefinedKeyword(ast)

/** `outputSchema` and whether a value is sent as `{value}` (structuredContent must be an object). */
export const outputOf = (
  success: SchemaAST.AST
): { readonly schema: JsonRpc.JsonObject; readonly wrap: boolean } | undefined => {
  if (isVoid(success)) return undefined
  const derived = Tool.deriveJsonSchema(Schema.make(success))
  return derived.type === "object"
    ? { schema: derived, wrap: false }
    : { schema: { type: "object", properties: { value: derived }, required: ["value"] }, wrap: true }
}

const annotationsOf = (tool: AiTool.Any): McpSchema.ToolAnnotations | undefined => {
  // Set on the tool, not their defaults (a `Context.Reference` always reads as set).
  const has = (tag: { readonly key: string }): boolean => tool.annotations.unsafeMap.has(tag.key)
  const hints: { -readonly [K in keyof McpSchema.ToolAnnotations]: McpSchema.ToolAnnotations[K] } = {}
  if (has(AiTool.Readonly)) hints.readOnlyHint = Context.get(tool.annotations, AiTool.Readonly)
  if (has(AiTool.Destructive)) hints.destructiveHint = Context.get(tool.annotations, AiTool.Destructive)
  if (has(AiTool.Idempotent)) hints.idempotentHint = Context.get(tool.annotations, AiTool.Idempotent)
  if (has(AiTool.OpenWorld)) hints.openWorldHint = Context.get(tool.annotations, AiTool.OpenWorld)
  return Object.keys(hints).length === 0 ? undefined : hints
}

const text = (encoded: unknown): string => typeof encoded === "string" ? encoded : JSON.stringify(encoded) ?? ""

/** A failure the model reads: `isError`, its encoded form as text (and as structuredContent when an object). */
const toolError = (encoded: unknown): Tool.ToolError =>
  new Tool.ToolError({
    message: text(encoded),
    ...(JsonRpc.isObject(encoded) ? { structuredContent: encoded } : {})
  })

const toMcpTool = <R>(handled: Handle<R>, tool: AiTool.Any): Tool.Tool<R> => {
  // The schemas' ASTs: what the toolkit's own encoding runs on.
  const output = outputOf(tool.successSchema.ast)
  const failureSchema = Schema.make(tool.failureSchema.ast)
  const encodeFailure = Schema.encodeUnknown(failureSchema)
  const isFailure = Schema.is(failureSchema)
  const title = Context.getOption(tool.annotations, AiTool.Title)
  const annotations = annotationsOf(tool)
  const description = tool.description ?? AiTool.getDescriptionFromSchemaAst(tool.parametersSchema.ast)
  return Tool.fromJsonSchema<R>({
    name: tool.name,
    ...(title._tag === "Some" ? { title: title.value } : {}),
    ...(description === undefined ? {} : { description }),
    ...(annotations === undefined ? {} : { annotations }),
    inputSchema: isEmptyStruct(tool.parametersSchema.ast)
      ? EMPTY_OBJECT
      : Tool.deriveJsonSchema(Schema.make(tool.parametersSchema.ast)),
    ...(output === undefined ? {} : { outputSchema: output.schema }),
    handler: (args) =>
      handled.handle(tool.name, args).pipe(
        Effect.catchAll((error): Effect.Effect<never, Tool.ToolError> => {
          // Checked first: a failure schema may accept anything (Schema.Unknown).
          if (AiError.isAiError(error)) {
            // MalformedOutput: the arguments failed the parameters Schema (a check the derived
            // JSON Schema cannot state, e.g. a filter); anything else (the result failed its
            // Schema) is the toolkit's bug.
            if (error._tag !== "MalformedOutput") return Effect.die(error)
            const message = ParseResult.isParseError(error.cause)
              ? Tool.formatParseError("Invalid arguments", error.cause)
              : "Invalid arguments"
            return Effect.fail(new Tool.ToolError({ message }))
          }
          return isFailure(error)
            ? Effect.flatMap(Effect.orDie(encodeFailure(error)), (encoded) => Effect.fail(toolError(encoded)))
            : Effect.die(error)
        }),
        Effect.flatMap(({ encodedResult, isFailure }): Effect.Effect<McpSchema.CallToolResult, Tool.ToolError> => {
          if (isFailure) return Effect.fail(toolError(encodedResult))
          if (output === undefined) return Effect.succeed({ content: [] })
          const structuredContent = output.wrap ? { value: encodedResult } : encodedResult
          return Effect.succeed({ content: [Content.text(text(encodedResult))], structuredContent })
        })
      )
  })
}

/** The user-defined tools of `toolkit` as MCP tools (provider-defined tools run at the provider: left out). */
export const toTools = <Tools extends Record<string, AiTool.Any>>(
  toolkit: Toolkit.Toolkit<Tools>
): Effect.Effect<ReadonlyArray<Tool.Tool<Requirements<Tools>>>, never, AiTool.HandlersFor<Tools>> =>
  Effect.map(toolkit, (handled) =>
    Object.values(handled.tools).filter(AiTool.isUserDefined).map((tool) =>
      // `handle` decodes its arguments itself (see `Handle`): typed here as what it takes.
      toMcpTool(erase<Handle<Requirements<Tools>>>(handled), tool)
    ))

/** A Layer registering every tool of `toolkit` (as `McpServer.tool` does one). */
export const layer = <Tools extends Record<string, AiTool.Any>>(
  toolkit: Toolkit.Toolkit<Tools>
): Layer.Layer<never, DefinitionError, McpServer.McpServer | AiTool.HandlersFor<Tools> | Requirements<Tools>> =>
  Layer.unwrapEffect(
    Effect.map(toTools(toolkit), (tools) => Layer.mergeAll(Layer.empty, ...tools.map((tool) => McpServer.tool(tool))))
  )
