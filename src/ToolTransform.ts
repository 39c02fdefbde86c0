/**
 * Tool transformation: a new tool derived from an existing one (a `Tool.make` or
 * `Tool.fromJsonSchema` tool of ours, or a backend's tool in the proxy) with a new name, title or
 * description, arguments renamed, arguments hidden from the caller and filled by the server (a
 * constant, or an Effect computed per request), argument defaults and narrowed schemas, and an
 * optional wrapper around the call that reads and rewrites the arguments and the result.
 *
 * The derived tool is an ordinary tool definition (`Tool.Tool`): put it in a `Part`, in a server's
 * `tools`, in `McpServer.tool`, or let the proxy build it from its configuration file
 * (`McpProxy.Config`'s `tools` block, docs/tool-transform.md).
 *
 * Spec: Server › Tools (2026-07-28 and 2025-11-25); SEP-1303 (argument errors are tool results).
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { dual } from "effect/Function"
import * as ParseResult from "effect/ParseResult"
import { type HandlerResult, lift } from "./Handler.js"
import type { InputRequired } from "./Input.js"
import { erase } from "./internal/erase.js"
import * as ToolArguments from "./internal/server/toolArguments.js"
import { toCallToolResult } from "./internal/server/tools.js"
import * as JsonRpc from "./JsonRpc.js"
import type * as McpSchema from "./McpSchema.js"
import type { RequestContext, RequestContextShape } from "./RequestContext.js"
import * as Tool from "./Tool.js"

/**
 * How one argument of the original tool (named by its original name) is offered to callers:
 *
 * - `name`: the caller's name for it (renamed in `inputSchema`'s `properties`, `required` and
 *   `dependentRequired`, at the root and in its `allOf` / `anyOf` / `oneOf` / `if` / `then` /
 *   `else` / `not`);
 * - `description`: replaces the property's `description`;
 * - `schema`: replaces the property's JSON Schema (a narrower one: `enum`, `maximum`, …); the
 *   original's own check still runs on the value;
 * - `default`: published as the property's `default`, the argument becomes optional, and a call
 *   that leaves it out gets it;
 * - `required`: `true` adds it to `required`, `false` takes it out (the original must then accept
 *   its absence).
 *
 * @since 0.2.0
 * @category models
 */
export interface VisibleArgument {
  readonly hide?: false | undefined
  readonly name?: string | undefined
  readonly description?: string | undefined
  readonly schema?: JsonRpc.JsonObject | undefined
  readonly default?: unknown
  readonly required?: boolean | undefined
}

/**
 * An argument the caller does not see (gone from `inputSchema`'s `properties` and `required`)
 * and the server fills: `value`, a constant, or `compute`, run per call with the request context
 * (the caller's `ctx.auth`, a service of `R`). A caller that sends it gets an `isError` result
 * naming it. `compute` may fail with `ToolError` (an `isError` result) or `McpError` (a JSON-RPC
 * error).
 *
 * @since 0.2.0
 * @category models
 */
export type HiddenArgument<R = never> =
  | { readonly hide: true; readonly value: unknown }
  | {
    readonly hide: true
    readonly compute: (
      ctx: RequestContextShape
    ) => Effect.Effect<unknown, Tool.ToolError | JsonRpc.McpError, R | RequestContext>
  }

/**
 * An argument's transformation: {@link VisibleArgument} or {@link HiddenArgument}.
 *
 * @since 0.2.0
 * @category models
 */
export type Argument<R = never> = VisibleArgument | HiddenArgument<R>

/**
 * What a wrapper ({@link Transform}'s `around`) gets for one call:
 *
 * - `arguments`: the caller's arguments, by the caller's names, defaults filled in, already
 *   checked against the derived `inputSchema`;
 * - `forward(args?)`: calls the original with `args` (default `arguments`) by the caller's names:
 *   renamed back, hidden arguments filled, the original's own check applied (its errors name the
 *   caller's arguments). Yields the original's `CallToolResult` (an `isError` result included);
 *   fails with what the original fails with;
 * - `forwardRaw(args)`: calls the original with `args` by its own names, nothing renamed or filled;
 * - `ctx`: the request context.
 *
 * @since 0.2.0
 * @category models
 */
export interface Call {
  readonly arguments: JsonRpc.JsonObject
  readonly forward: (args?: JsonRpc.JsonObject) => Effect.Effect<McpSchema.CallToolResult, CallError, RequestContext>
  readonly forwardRaw: (args: JsonRpc.JsonObject) => Effect.Effect<McpSchema.CallToolResult, CallError, RequestContext>
  readonly ctx: RequestContextShape
}

/**
 * What a tool call may fail with: `ToolError` (→ `isError` result), `McpError` (→ JSON-RPC
 * error), `InputRequired` (client input, see `Input`).
 *
 * @since 0.2.0
 * @category models
 */
export type CallError = Tool.ToolError | JsonRpc.McpError | InputRequired

/**
 * A tool's transformation. Every field is optional; what is not given is the original's.
 *
 * - `name`, `title`, `description`, `annotations`, `icons`, `_meta`: the derived tool's;
 * - `arguments`: by the original's argument names (see {@link Argument});
 * - `outputSchema`: the derived tool's (`null`: none); give it when `around` changes the
 *   structured result's shape;
 * - `around`: runs instead of the original; it may call it (`forward`) and returns what a tool
 *   handler returns (see `Tool.ToolReturn`). `R`: the services `around` and `compute` need.
 *
 * @since 0.2.0
 * @category models
 */
export interface Transform<R = never> {
  readonly name?: string | undefined
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly annotations?: McpSchema.ToolAnnotations | undefined
  readonly icons?: ReadonlyArray<McpSchema.Icon> | undefined
  readonly _meta?: JsonRpc.JsonObject | undefined
  readonly arguments?: Readonly<Record<string, Argument<R>>> | undefined
  readonly outputSchema?: JsonRpc.JsonObject | null | undefined
  readonly around?:
    | ((call: Call) => HandlerResult<Tool.ToolReturn, CallError, R>)
    | undefined
}

/** The transformation's arguments, indexed both ways. */
interface Plan<R> {
  /** original name → caller's name (visible arguments). */
  readonly toCaller: ReadonlyMap<string, string>
  /** caller's name → original name (visible arguments). */
  readonly toOriginal: ReadonlyMap<string, string>
  /** original name → hidden argument. */
  readonly hidden: ReadonlyMap<string, HiddenArgument<R>>
  /** original name → visible argument. */
  readonly visible: ReadonlyMap<string, VisibleArgument>
}

const isHidden = <R>(arg: Argument<R>): arg is HiddenArgument<R> => arg.hide === true

const planOf = <R>(args: Readonly<Record<string, Argument<R>>>): Plan<R> => {
  const toCaller = new Map<string, string>()
  const toOriginal = new Map<string, string>()
  const hidden = new Map<string, HiddenArgument<R>>()
  const visible = new Map<string, VisibleArgument>()
  for (const [original, arg] of Object.entries(args)) {
    if (isHidden(arg)) {
      hidden.set(original, arg)
      continue
    }
    const caller = arg.name ?? original
    visible.set(original, arg)
    toCaller.set(original, caller)
    toOriginal.set(caller, original)
  }
  return { toCaller, toOriginal, hidden, visible }
}

// ---------------------------------------------------------------------------------------------
// schemas
// ---------------------------------------------------------------------------------------------

const SUBSCHEMA_LISTS = ["allOf", "anyOf", "oneOf"] as const
const SUBSCHEMAS = ["if", "then", "else", "not"] as const

const strings = (u: unknown): ReadonlyArray<string> =>
  Array.isArray(u) ? u.filter((s): s is string => typeof s === "string") : []

/** One argument's property schema after its transformation. */
const propertyOf = (original: unknown, arg: VisibleArgument | undefined): unknown => {
  if (arg === undefined) return original
  const base = arg.schema ?? original
  if (!JsonRpc.isObject(base)) return base
  return {
    ...base,
    ...(arg.description === undefined ? {} : { description: arg.description }),
    ...(arg.default === undefined ? {} : { default: arg.default })
  }
}

/** A schema node whose `properties` / `required` / `dependentRequired` name the tool's arguments. */
const renameNode = <R>(node: JsonRpc.JsonObject, plan: Plan<R>, root: boolean): JsonRpc.JsonObject => {
  const out: Record<string, unknown> = { ...node }
  const callerOf = (k: string): string | undefined => plan.hidden.has(k) ? undefined : plan.toCaller.get(k) ?? k
  if (JsonRpc.isObject(node.properties) || (root && plan.visible.size > 0)) {
    const properties: Record<string, unknown> = {}
    const listed = JsonRpc.isObject(node.properties) ? node.properties : {}
    for (const [k, v] of Object.entries(listed)) {
      const caller = callerOf(k)
      if (caller !== undefined) properties[caller] = root ? propertyOf(v, plan.visible.get(k)) : v
    }
    if (root) {
      // An argument given a schema that the original does not list becomes a property.
      for (const [original, arg] of plan.visible) {
        if (!Object.hasOwn(listed, original) && arg.schema !== undefined) {
          properties[plan.toCaller.get(original) ?? original] = propertyOf(arg.schema, arg)
        }
      }
    }
    out.properties = properties
  }
  if (Array.isArray(node.required) || root) {
    const required = new Set(
      strings(node.required).flatMap((k) => {
        const caller = callerOf(k)
        return caller === undefined ? [] : [caller]
      })
    )
    if (root) {
      for (const [original, arg] of plan.visible) {
        const caller = plan.toCaller.get(original) ?? original
        if (arg.default !== undefined || arg.required === false) required.delete(caller)
        else if (arg.required === true) required.add(caller)
      }
    }
    if (required.size > 0 || Array.isArray(node.required)) out.required = [...required]
    if (required.size === 0 && !Array.isArray(node.required)) delete out.required
  }
  if (JsonRpc.isObject(node.dependentRequired)) {
    const dependent: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(node.dependentRequired)) {
      const caller = callerOf(k)
      if (caller !== undefined) {
        dependent[caller] = strings(v).flatMap((d) => {
          const c = callerOf(d)
          return c === undefined ? [] : [c]
        })
      }
    }
    out.dependentRequired = dependent
  }
  for (const key of SUBSCHEMA_LISTS) {
    const list = node[key]
    if (Array.isArray(list)) out[key] = list.map((s) => JsonRpc.isObject(s) ? renameNode(s, plan, false) : s)
  }
  for (const key of SUBSCHEMAS) {
    const sub = node[key]
    if (JsonRpc.isObject(sub)) out[key] = renameNode(sub, plan, false)
  }
  return out
}

/**
 * A root that is only a `$ref` into its own `$defs` (what `Tool.make` derives from a `Schema.Class`
 * or an identified Struct) with the definition inlined, so its properties can be renamed; `$defs`
 * stay for the other references.
 */
const inlineRootRef = (schema: JsonRpc.JsonObject): JsonRpc.JsonObject => {
  const ref = schema.$ref
  if (typeof ref !== "string" || !ref.startsWith("#/$defs/") || JsonRpc.isObject(schema.properties)) return schema
  const name = ref.slice("#/$defs/".length).replace(/~1/g, "/").replace(/~0/g, "~")
  const defs = schema.$defs
  const target = JsonRpc.isObject(defs) && Object.hasOwn(defs, name) ? defs[name] : undefined
  if (!JsonRpc.isObject(target)) return schema
  const { $ref: _ref, ...rest } = schema
  return { ...rest, ...target }
}

/**
 * The `inputSchema` of a tool derived from one whose `inputSchema` is `schema` with `args`
 * (see {@link Argument}): hidden arguments gone from `properties`, `required` and
 * `dependentRequired`, renamed arguments renamed in all three (at the root and in its
 * `allOf` / `anyOf` / `oneOf` / `if` / `then` / `else` / `not`), descriptions, defaults and narrowed
 * schemas applied. Pure; the input is not modified.
 *
 * @since 0.2.0
 * @category combinators
 */
export const inputSchema = <R>(
  schema: JsonRpc.JsonObject,
  args: Readonly<Record<string, Argument<R>>>
): JsonRpc.JsonObject => renameNode(inlineRootRef(schema), planOf(args), true)

// ---------------------------------------------------------------------------------------------
// calls
// ---------------------------------------------------------------------------------------------

const pointer = (key: string): string => "/" + key.replace(/~/g, "~0").replace(/\//g, "~1")

const invalid = (key: string, message: string): Tool.ToolError =>
  new Tool.ToolError({ message: `Invalid arguments at ${pointer(key)}: ${message}` })

/** The caller's arguments with the defaults of those left out. */
const withDefaults = <R>(args: JsonRpc.JsonObject, plan: Plan<R>): JsonRpc.JsonObject => {
  let out: Record<string, unknown> | undefined
  for (const [original, arg] of plan.visible) {
    const caller = plan.toCaller.get(original) ?? original
    if (arg.default !== undefined && !Object.hasOwn(args, caller)) {
      out ??= { ...args }
      out[caller] = arg.default
    }
  }
  return out ?? args
}

/**
 * The caller's arguments by the original's names, hidden ones filled; a caller's argument that is
 * hidden, or an original name the transformation renamed, is refused with its name.
 */
const toOriginalArgs = <R>(
  args: JsonRpc.JsonObject,
  plan: Plan<R>,
  ctx: RequestContextShape
): Effect.Effect<JsonRpc.JsonObject, Tool.ToolError | JsonRpc.McpError, R | RequestContext> =>
  Effect.gen(function*() {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(args)) {
      const original = plan.toOriginal.get(k)
      if (original !== undefined) {
        out[original] = v
        continue
      }
      if (plan.hidden.has(k)) {
        return yield* invalid(k, `${JSON.stringify(k)} is set by the server and cannot be given`)
      }
      const renamed = plan.toCaller.get(k)
      if (renamed !== undefined) {
        return yield* invalid(
          k,
          `unknown argument ${JSON.stringify(k)} (this tool calls it ${JSON.stringify(renamed)})`
        )
      }
      out[k] = v
    }
    for (const [original, arg] of plan.hidden) {
      out[original] = "compute" in arg
        ? yield* arg.compute(ctx)
        : arg.value
    }
    return out
  })

/** The original's Schema-decode error with the caller's argument names. */
const decodeError = <R>(error: unknown, plan: Plan<R>): Tool.ToolError => {
  if (!ParseResult.isParseError(error)) return new Tool.ToolError({ message: "Invalid arguments" })
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const message = issues.map((issue, i) => {
    const [head, ...rest] = issue.path
    const first = head === undefined
      ? undefined
      : typeof head === "string" && plan.hidden.has(head)
      ? `${head} (set by the server)`
      : typeof head === "string"
      ? plan.toCaller.get(head) ?? head
      : String(head)
    const path = first === undefined ? "/" : [first, ...rest.map(String)].map(pointer).join("")
    return `${i === 0 ? "Invalid arguments at" : "at"} ${path}: ${issue.message}`
  }).join("; ")
  return new Tool.ToolError({ message })
}

/** Calls the original with arguments by its own names: a `Tool.make` original decodes them first. */
const callOriginal = <R0, R>(
  original: Tool.JsonTool<R0>,
  plan: Plan<R>,
  args: JsonRpc.JsonObject,
  ctx: RequestContextShape
): HandlerResult<Tool.ToolReturn, CallError, R0> => {
  const schema = ToolArguments.lookup(original.handler)
  if (schema === undefined) return original.handler(args, ctx)
  const decoded = schema.decode(args)
  if (Either.isLeft(decoded)) return Effect.fail(decodeError(decoded.left, plan))
  // The registered `run` is the original's handler after its decode: same services `R0`.
  return erase<{ run: (value: unknown, ctx: RequestContextShape) => HandlerResult<Tool.ToolReturn, CallError, R0> }>(
    schema
  ).run(decoded.right, ctx)
}

// ---------------------------------------------------------------------------------------------
// constructors
// ---------------------------------------------------------------------------------------------

const opt = <K extends string, V>(key: K, value: V | undefined): { readonly [P in K]?: V } => {
  const out: { [P in K]?: V } = {}
  if (value !== undefined) out[key] = value
  return out
}

/**
 * Derives a tool from `tool` with `transform` (see {@link Transform}). The derived tool:
 *
 * - lists the transformed `inputSchema` ({@link inputSchema}) and `outputSchema` (the original's
 *   unless `transform.outputSchema` says otherwise), with the new name, title and description;
 * - on a call, the server checks the caller's arguments against the derived `inputSchema` (errors
 *   name the caller's arguments); then defaults are filled, a caller's hidden argument is refused
 *   (`isError` result `Invalid arguments at /<name>: "<name>" is set by the server and cannot be
 *   given`), arguments are renamed back, hidden ones filled (`value`, or `compute` per request) and
 *   the original runs — a `Tool.make` original decodes them with its Schema, and its errors name
 *   the caller's arguments too;
 * - with `around`, the wrapper runs instead and may call the original (`forward`).
 *
 * Keeps the original's `annotations`, `icons`, `_meta`, `visible` and `task` unless overridden.
 * Errors of a call: the original's, `compute`'s and `around`'s (`ToolError` → `isError` result,
 * `McpError` → JSON-RPC error). Data-first and data-last (`pipe(tool, ToolTransform.make({...}))`).
 *
 * @example
 * ```ts
 * import * as Schema from "effect/Schema"
 * import { Tool, ToolTransform } from "presa-mcp"
 *
 * const search = Tool.make({
 *   name: "search",
 *   parameters: Schema.Struct({ q: Schema.String, tenant: Schema.String }),
 *   handler: ({ q, tenant }) => `${tenant}: ${q}`
 * })
 *
 * const find = ToolTransform.make(search, {
 *   name: "find",
 *   description: "Finds documents",
 *   arguments: { q: { name: "query" }, tenant: { hide: true, value: "acme" } }
 * })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const make: {
  <R = never>(
    transform: Transform<R>
  ): <R0>(tool: Tool.JsonTool<R0>) => Tool.JsonTool<Exclude<R0 | R, RequestContext>>
  <R0, R = never>(tool: Tool.JsonTool<R0>, transform: Transform<R>): Tool.JsonTool<Exclude<R0 | R, RequestContext>>
} = dual(
  2,
  <R0, R>(tool: Tool.JsonTool<R0>, transform: Transform<R>): Tool.JsonTool<Exclude<R0 | R, RequestContext>> => {
    const plan = planOf(transform.arguments ?? {})
    const derivedInput = renameNode(inlineRootRef(tool.inputSchema ?? { type: "object", properties: {} }), plan, true)
    const outputSchema = transform.outputSchema === null ? undefined : transform.outputSchema ?? tool.outputSchema
    const { handler: _handler, inputSchema: _input, outputSchema: _output, ...common } = tool
    const forwardRaw = (args: JsonRpc.JsonObject, ctx: RequestContextShape) =>
      lift(() => callOriginal(tool, plan, args, ctx)).pipe(Effect.map(toCallToolResult))
    const forward = (args: JsonRpc.JsonObject, ctx: RequestContextShape) =>
      Effect.flatMap(toOriginalArgs(withDefaults(args, plan), plan, ctx), (original) => forwardRaw(original, ctx))
    const around = transform.around
    const derived: Tool.JsonTool<R0 | R> = {
      ...common,
      name: transform.name ?? tool.name,
      ...opt("title", transform.title ?? tool.title),
      ...opt("description", transform.description ?? tool.description),
      ...opt("annotations", transform.annotations ?? tool.annotations),
      ...opt("icons", transform.icons ?? tool.icons),
      ...opt("_meta", transform._meta ?? tool._meta),
      inputSchema: derivedInput,
      ...opt("outputSchema", outputSchema),
      handler: (args, ctx) => {
        const given = withDefaults(args, plan)
        if (around !== undefined) {
          // `forward` and `forwardRaw` need the original's services `R0`, which the derived tool requires.
          const call = erase<Call>({
            arguments: given,
            forward: (a?: JsonRpc.JsonObject) => forward(a ?? given, ctx),
            forwardRaw: (a: JsonRpc.JsonObject) => forwardRaw(a, ctx),
            ctx
          })
          return around(call)
        }
        if (plan.hidden.size === 0 && plan.toOriginal.size === 0) return callOriginal(tool, plan, given, ctx)
        return Effect.flatMap(
          toOriginalArgs(given, plan, ctx),
          (original) => lift(() => callOriginal(tool, plan, original, ctx))
        )
      }
    }
    // The derived handler needs the original's services and the transformation's.
    return erase<Tool.JsonTool<Exclude<R0 | R, RequestContext>>>(derived)
  }
)
