/**
 * How a tool call's arguments are checked, chosen once per tool when the snapshot is built (for the
 * server's `validate` / `validator` options):
 * - a JSON Schema tool (`Tool.fromJsonSchema`): the validator, then the handler on the arguments as
 *   they are;
 * - a `Tool.make` tool with the built-in validator: its Schema decode alone (excess properties
 *   refused, as the derived `additionalProperties: false` does), and the handler runs on the
 *   decoded value. Only when the decode fails is the JSON Schema walked, for the error's text: the
 *   validator's issues if it finds any, else the handler's own decode reports (as before, when
 *   both ran on every call);
 * - with `validate: false`, nothing before the handler (a `Tool.make` handler still decodes);
 *   with a custom `validator`, that validator before every handler.
 * @internal
 */
import * as Either from "effect/Either"
import * as JsonRpc from "../../JsonRpc.js"
import * as JsonSchema from "../../JsonSchema.js"
import type { RequestContextShape } from "../../RequestContext.js"
import type * as Tool from "../../Tool.js"
import { erase } from "../erase.js"

/** What a tool's handler returns. */
export type HandlerOutput = ReturnType<Tool.Tool["handler"]>

/** A checked call: run the handler on the arguments as they are (`undefined`), refuse it, or run the decoded value. */
export type Checked =
  | undefined
  | { readonly _tag: "Invalid"; readonly text: string }
  | { readonly _tag: "Decoded"; readonly run: (ctx: RequestContextShape) => HandlerOutput }

/** Checks the arguments of one call (an object: `tools/call` has refused anything else). */
export type Check = (args: JsonRpc.JsonObject) => Checked

/** What `Tool.make` registers for the handler it builds: its `inputSchema`, its decode, the rest of the handler. */
interface SchemaArguments {
  /** The JSON Schema derived from `parameters`: the check stands for it only while the tool keeps it. */
  readonly inputSchema: JsonRpc.JsonObject
  /** `parameters`' decode, synchronous, excess properties refused; `Left` also for a Schema that needs async work. */
  readonly decode: (args: JsonRpc.JsonObject) => Either.Either<unknown, unknown>
  /** The handler once the arguments are decoded. */
  readonly run: (value: unknown, ctx: RequestContextShape) => HandlerOutput
}

/** Keyed by the handler `Tool.make` built: a tool whose handler was replaced is a JSON Schema tool again. */
const schemaTools = new WeakMap<object, SchemaArguments>()

/**
 * Registers the handler `Tool.make` built. `R`: the services its Effect needs, erased as the tool's
 * own type erases them.
 */
export const register = <A, R>(handler: object, args: {
  readonly inputSchema: JsonRpc.JsonObject
  readonly decode: (args: JsonRpc.JsonObject) => Either.Either<A, unknown>
  readonly run: (value: A, ctx: RequestContextShape) => ReturnType<Tool.JsonTool<R>["handler"]>
}): void => {
  schemaTools.set(handler, erase<SchemaArguments>(args))
}

/**
 * The same registration for a handler that wraps a registered one (`wrapped`) and runs `run`
 * through `around` (a definition added with the environment of its add call).
 */
export const registerWrapped = (
  handler: object,
  wrapped: object,
  around: (output: () => HandlerOutput) => HandlerOutput
): void => {
  const schema = schemaTools.get(wrapped)
  if (schema === undefined) return
  schemaTools.set(handler, { ...schema, run: (value, ctx) => around(() => schema.run(value, ctx)) })
}

/**
 * The decode and the rest of a `Tool.make` handler (`undefined` for any other handler), for a
 * derived tool that calls it (`ToolTransform`).
 */
export const lookup = (handler: object): {
  readonly decode: (args: JsonRpc.JsonObject) => Either.Either<unknown, unknown>
  readonly run: (value: unknown, ctx: RequestContextShape) => HandlerOutput
} | undefined => schemaTools.get(handler)

const NONE: Check = () => undefined

/** The check of a tool's arguments for a server's validator (`undefined`: `validate: false`). */
export const compile = (
  def: Tool.Tool,
  inputSchema: JsonRpc.JsonObject,
  validator: JsonSchema.Validator | undefined
): Check => {
  if (validator === undefined) return NONE
  const schema = schemaTools.get(def.handler)
  if (validator === JsonSchema.validate && schema !== undefined && schema.inputSchema === inputSchema) {
    return (args) => {
      const decoded = schema.decode(args)
      if (Either.isRight(decoded)) {
        const value = decoded.right
        return { _tag: "Decoded", run: (ctx) => schema.run(value, ctx) }
      }
      return invalid(validator(inputSchema, args))
    }
  }
  return (args) => invalid(validator(inputSchema, args))
}

const invalid = (issues: ReadonlyArray<JsonSchema.Issue>): Checked =>
  issues.length === 0 ? undefined : { _tag: "Invalid", text: JsonSchema.formatIssues("Invalid arguments", issues) }
