/**
 * Tools (MCP 2026-07-28, Tools): `tools/list`, and `tools/call` (argument
 * validation, the tool's handler, result and error mapping, output-schema checks), with the legacy
 * shapes of tools and results.
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Content from "../../Content.js"
import type { InputRequired } from "../../Input.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as JsonSchema from "../../JsonSchema.js"
import * as McpSchema from "../../McpSchema.js"
import { type RequestContextShape } from "../../RequestContext.js"
import type * as Task from "../../Task.js"
import type * as Tool from "../../Tool.js"
import { quote } from "../quote.js"
import { fail, Failure } from "./failure.js"
import type { Server } from "./model.js"
import { nextCursor, page } from "./paging.js"
import { isPlain, lifted } from "./requestContext.js"
import * as Defs from "./snapshot.js"
import * as Tasks from "./tasks.js"
import type * as ToolArguments from "./toolArguments.js"

const { McpError } = JsonRpc

const errorResult = (text: string): McpSchema.CallToolResult => ({ content: [Content.text(text)], isError: true })

/**
 * `tools/list`, paged. A legacy caller does not see an `outputSchema` whose root is not an object
 * (see `legacyTool`).
 */
export const listTools = (
  server: Server,
  snapshot: Defs.Snapshot,
  { cursor }: typeof McpSchema.PaginatedParams.Type,
  ctx: RequestContextShape
): Either.Either<McpSchema.ListToolsResult, Failure> =>
  Either.map(
    page(server, snapshot, cursor, snapshot.tools, "tools", (t) => ctx.era === "legacy" ? legacyTool(t.wire) : t.wire),
    (p) => ({ tools: p.items, ...nextCursor(p) })
  )

/** `tools/call` params once `name` is known to be a string (`arguments` is checked after the lookup). */
export type CallParams = JsonRpc.JsonObject & { readonly name: string }

/**
 * The `tools/call` params decoder: a guard, not a Schema decode (this is the hot path; the params
 * object is passed on as it is). Only `name` is checked here: an unknown tool is reported before
 * malformed `arguments`.
 */
export const decodeCallParams = (params: JsonRpc.JsonObject): Either.Either<CallParams, Failure> =>
  isCallParams(params)
    ? Either.right(params)
    : Either.left(new Failure(McpError.invalidParams("Invalid params: name must be a string")))

const isCallParams = (params: JsonRpc.JsonObject): params is CallParams => typeof params.name === "string"

/**
 * `tools/call` (MCP 2026-07-28, Tools): `tool` is the tool the request names, found once when it
 * was dispatched (`undefined`: none, or hidden from this caller). Checks the arguments (the tool's
 * compiled check: a failure is an `isError` result), and runs the tool, or starts a task (Tasks
 * extension).
 */
export const callTool = (
  server: Server,
  tool: Defs.CompiledTool | undefined,
  params: CallParams,
  ctx: RequestContextShape
): Effect.Effect<McpSchema.CallToolResult | Task.CreateTaskResult, Failure | InputRequired> => {
  const name = params.name
  const rawArgs = params.arguments
  if (tool === undefined) return fail(McpError.invalidParams(`Unknown tool: ${quote(name)}`, { name: quote(name) }))
  if (rawArgs !== undefined && rawArgs !== null && !JsonRpc.isObject(rawArgs)) {
    return fail(McpError.invalidParams("Invalid params: arguments must be an object"))
  }
  const args: JsonRpc.JsonObject = JsonRpc.isObject(rawArgs) ? rawArgs : {}
  const checked = tool.check(args)
  if (checked?._tag === "Invalid") return Effect.succeed(errorResult(checked.text))
  // Tasks extension: the tool's policy may answer with a task whose handler runs on.
  if (tool.def.task === undefined) return runTool(server, tool, args, checked, ctx)
  return Effect.flatMap(
    Tasks.maybeStart(
      server.tasks,
      tool.def.task,
      args,
      ctx,
      (c: RequestContextShape) => runTool(server, tool, args, checked, c)
    ),
    (task): Effect.Effect<McpSchema.CallToolResult | Task.CreateTaskResult, Failure | InputRequired> =>
      Option.isSome(task) ? Effect.succeed(task.value) : runTool(server, tool, args, checked, ctx)
  )
}

/**
 * Runs a tool's handler on checked arguments (`checked`: its decoded value, when the check decoded
 * them) and maps its outcome to a `CallToolResult`. A handler that returns its result itself
 * (neither an Effect nor a Promise) is answered in the same step, without the combinators an
 * Effect's outcome goes through (bench/README.md, "Issue #24: server core"); a throw is a defect
 * on either path (`Handler.lift`'s semantics).
 */
const runTool = (
  server: Server,
  tool: Defs.CompiledTool,
  args: JsonRpc.JsonObject,
  checked: Exclude<ToolArguments.Checked, { readonly _tag: "Invalid" }>,
  ctx: RequestContextShape
): Effect.Effect<McpSchema.CallToolResult, Failure | InputRequired> =>
  Effect.suspend(() => {
    const validator = Defs.validatorOf(server.options)
    let out: ToolArguments.HandlerOutput
    try {
      out = checked === undefined ? tool.def.handler(args, ctx) : checked.run(ctx)
    } catch (defect) {
      return toolDefect(server, validator, tool, ctx, defect)
    }
    if (isPlain(out)) {
      let result: McpSchema.CallToolResult
      try {
        result = toCallToolResult(out)
      } catch (defect) {
        return toolDefect(server, validator, tool, ctx, defect)
      }
      return checkToolResult(server, validator, tool, ctx, result)
    }
    return lifted(ctx, out).pipe(
      Effect.map(toCallToolResult),
      Effect.catchAll((e): Effect.Effect<McpSchema.CallToolResult, Failure | InputRequired> => {
        switch (e._tag) {
          case "ToolError":
            return Effect.succeed({
              content: e.content === undefined ? [Content.text(e.message)] : toBlocks(e.content),
              ...(e.structuredContent === undefined ? {} : { structuredContent: e.structuredContent }),
              isError: true
            })
          case "McpError":
            return fail(e)
          case "InputRequired":
            return Effect.fail(e)
          default:
            // untyped code failed with a type no handler declares: a defect (below), never input_required
            return Effect.die(e)
        }
      }),
      Effect.catchAllDefect((defect) => defectResult(server, tool, defect)),
      Effect.flatMap((result) => checkToolResult(server, validator, tool, ctx, result))
    )
  })

/** A tool's defect: logged, answered with an `isError` result naming it. */
const defectResult = (
  server: Server,
  tool: Defs.CompiledTool,
  defect: unknown
): Effect.Effect<McpSchema.CallToolResult> =>
  Effect.logError(`tool ${tool.def.name} failed with a defect`, Cause.die(defect)).pipe(
    Effect.as(errorResult(describeDefect(defect, server.options.exposeErrorMessages === true)))
  )

/** A defect thrown by a handler that returned no Effect: as {@link defectResult}, then the result check. */
const toolDefect = (
  server: Server,
  validator: JsonSchema.Validator | undefined,
  tool: Defs.CompiledTool,
  ctx: RequestContextShape,
  defect: unknown
): Effect.Effect<McpSchema.CallToolResult> =>
  Effect.flatMap(defectResult(server, tool, defect), (result) => checkToolResult(server, validator, tool, ctx, result))

/** The output-schema check, and the legacy shape of `structuredContent`. */
const checkToolResult = (
  server: Server,
  validator: JsonSchema.Validator | undefined,
  tool: Defs.CompiledTool,
  ctx: RequestContextShape,
  result: McpSchema.CallToolResult
): Effect.Effect<McpSchema.CallToolResult> => {
  if (validator !== undefined && tool.def.outputSchema !== undefined && result.isError !== true) {
    const issues = result.structuredContent === undefined
      ? [{ path: "", message: "structuredContent is missing" }]
      : validator(tool.def.outputSchema, result.structuredContent)
    if (issues.length > 0) {
      return Effect.as(
        Effect.logError(
          `tool ${tool.def.name}: ${JsonSchema.formatIssues("result does not match outputSchema", issues)}`
        ),
        errorResult(JsonSchema.formatIssues("Tool result does not match its outputSchema", issues))
      )
    }
  }
  // Legacy revisions require an object `structuredContent` (MCP 2025-11-25, Tools ›
  // Structured Content).
  if (ctx.era === "legacy" && result.structuredContent !== undefined && !JsonRpc.isObject(result.structuredContent)) {
    const { structuredContent: _dropped, ...rest } = result
    return Effect.succeed(rest)
  }
  return Effect.succeed(result)
}

/** Legacy revisions require an object root `outputSchema`: a non-object one is not advertised. */
export const legacyTool = (tool: McpSchema.Tool): McpSchema.Tool => {
  if (tool.outputSchema === undefined || tool.outputSchema.type === "object") return tool
  const { outputSchema: _dropped, ...rest } = tool
  return rest
}

/** An identifier of at most 64 characters: what a defect's `name` may show on the wire. */
const ERROR_NAME = /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/

/**
 * A defect's class name for the wire. `name` is a plain property a custom error class may fill
 * with anything (a user id, a path); only an identifier of at most 64 characters goes out, anything
 * else reads `Error` (issue #20, "Defect names").
 */
const defectName = (defect: unknown): string => {
  if (!(defect instanceof Error)) return "Error"
  const name: unknown = defect.name
  return typeof name === "string" && ERROR_NAME.test(name) ? name : "Error"
}

const describeDefect = (defect: unknown, expose: boolean): string => {
  const name = defectName(defect)
  if (!expose) return name
  const message = defect instanceof Error ? defect.message : String(defect)
  return message.length > 0 ? `${name}: ${message}` : name
}

const decodeBlocks = Schema.decodeUnknownOption(Schema.Array(McpSchema.ContentBlock), { onExcessProperty: "preserve" })

const toBlocks = (u: ReadonlyArray<unknown>): ReadonlyArray<McpSchema.ContentBlock> =>
  Option.getOrElse(decodeBlocks(u), () => [Content.text(JSON.stringify(u))])

/** A handler's value as the `CallToolResult` it answers (also for `ToolTransform`'s `forward`). */
export const toCallToolResult = (out: Tool.ToolReturn): McpSchema.CallToolResult => {
  if (out === undefined || out === null) return { content: [] }
  if (typeof out === "string") return { content: [Content.text(out)] }
  if (out instanceof Content.Blocks) return { content: out.blocks }
  if (Array.isArray(out.content)) {
    const { content, ...rest } = out
    return { ...rest, content: toBlocks(content) }
  }
  return { content: [Content.text(JSON.stringify(out))], structuredContent: out }
}
