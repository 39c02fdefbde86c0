/**
 * The method handlers: lists (paged), tools/call, resources/read, prompts/get, completion/complete.
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Content from "../../Content.js"
import type { InputRequired } from "../../Input.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as JsonSchema from "../../JsonSchema.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Prompt from "../../Prompt.js"
import { type RequestContextShape } from "../../RequestContext.js"
import type * as Resource from "../../Resource.js"
import type * as Tool from "../../Tool.js"
import * as UriTemplate from "../../UriTemplate.js"
import * as Skill from "../skill/build.js"
import * as Defs from "./snapshot.js"

import { decodeParams, fail, type Failure } from "./failure.js"
import type { Server } from "./model.js"
import { liftIn } from "./requestContext.js"
import * as Tasks from "./tasks.js"
const { McpError } = JsonRpc
type McpError = JsonRpc.McpError

// ---------------------------------------------------------------------------------------------
// pagination
// ---------------------------------------------------------------------------------------------

const encodeCursor = (key: string, revision: number, offset: number): string =>
  btoa(JSON.stringify({ k: key, r: revision, o: offset })).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")

const CursorJson = Schema.parseJson(Schema.Struct({ k: Schema.String, r: Schema.Int, o: Schema.NonNegativeInt }))

const decodeCursor = (
  cursor: string
): Option.Option<{ readonly k: string; readonly r: number; readonly o: number }> => {
  try {
    return Schema.decodeUnknownOption(CursorJson)(atob(cursor.replace(/-/g, "+").replace(/_/g, "/")))
  } catch {
    return Option.none()
  }
}

export const page = <A>(
  server: Server,
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject,
  items: ReadonlyArray<A>,
  key: string,
  wire: (a: A) => unknown,
  field: string = key
): Effect.Effect<JsonRpc.JsonObject, Failure> =>
  Effect.gen(function*() {
    const { cursor } = yield* decodeParams(McpSchema.PaginatedParams, params)
    let offset = 0
    if (cursor !== undefined) {
      const decoded = decodeCursor(cursor)
      if (
        Option.isNone(decoded) || decoded.value.k !== key || decoded.value.r !== snapshot.revision ||
        decoded.value.o > items.length
      ) {
        return yield* fail(McpError.invalidParams("Invalid cursor", { cursor }))
      }
      offset = decoded.value.o
    }
    const size = Math.max(1, server.options.pageSize ?? 100)
    const slice = items.slice(offset, offset + size).map(wire)
    const next = offset + size
    return next < items.length
      ? { [field]: slice, nextCursor: encodeCursor(key, snapshot.revision, next) }
      : { [field]: slice }
  })

// ---------------------------------------------------------------------------------------------
// tools
// ---------------------------------------------------------------------------------------------

const errorResult = (text: string): McpSchema.CallToolResult => ({ content: [Content.text(text)], isError: true })

const validatorOf = (server: Server): JsonSchema.Validator | undefined =>
  server.options.validate === false ? undefined : server.options.validator ?? JsonSchema.validate

export const callTool = (
  server: Server,
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject,
  ctx: RequestContextShape
): Effect.Effect<JsonRpc.JsonObject, Failure | InputRequired> => {
  const name = params.name
  if (typeof name !== "string") return fail(McpError.invalidParams("Invalid params: name must be a string"))
  const rawArgs = params.arguments
  const tool = snapshot.toolsByName.get(name)
  if (tool === undefined) return fail(McpError.invalidParams(`Unknown tool: ${name}`, { name }))
  if (rawArgs !== undefined && rawArgs !== null && !JsonRpc.isObject(rawArgs)) {
    return fail(McpError.invalidParams("Invalid params: arguments must be an object"))
  }
  const args: JsonRpc.JsonObject = JsonRpc.isObject(rawArgs) ? rawArgs : {}
  const validator = validatorOf(server)
  if (validator !== undefined) {
    const issues = validator(tool.inputSchema, args)
    if (issues.length > 0) return Effect.succeed(errorResult(JsonSchema.formatIssues("Invalid arguments", issues)))
  }
  // Tasks extension: the tool's policy may answer with a task whose handler runs on.
  if (tool.def.task === undefined) return runTool(server, tool, args, ctx)
  return Effect.flatMap(
    Tasks.maybeStart(
      server.tasks,
      tool.def.task,
      args,
      ctx,
      (c: RequestContextShape) => runTool(server, tool, args, c)
    ),
    (task) => Option.isSome(task) ? Effect.succeed(task.value) : runTool(server, tool, args, ctx)
  )
}

/** Runs a tool's handler on validated arguments and maps its outcome to a `CallToolResult`. */
const runTool = (
  server: Server,
  tool: Defs.CompiledTool,
  args: JsonRpc.JsonObject,
  ctx: RequestContextShape
): Effect.Effect<JsonRpc.JsonObject, Failure | InputRequired> => {
  const name = tool.def.name
  const validator = validatorOf(server)
  return liftIn(ctx, () => tool.def.handler(args, ctx)).pipe(
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
        default:
          return Effect.fail(e)
      }
    }),
    Effect.catchAllDefect((defect) =>
      Effect.logError(`tool ${name} failed with a defect`, Cause.die(defect)).pipe(
        Effect.as(errorResult(describeDefect(defect, server.options.exposeErrorMessages === true)))
      )
    ),
    Effect.flatMap((result) => checkToolResult(server, validator, tool, ctx, result))
  )
}

/** The output-schema check, and the legacy shape of `structuredContent`. */
const checkToolResult = (
  server: Server,
  validator: JsonSchema.Validator | undefined,
  tool: Defs.CompiledTool,
  ctx: RequestContextShape,
  result: McpSchema.CallToolResult
): Effect.Effect<JsonRpc.JsonObject> => {
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
  // Legacy revisions require an object `structuredContent` (protocol.md §24.5).
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

const describeDefect = (defect: unknown, expose: boolean): string => {
  const name = defect instanceof Error ? defect.name : "Error"
  if (!expose) return name
  const message = defect instanceof Error ? defect.message : String(defect)
  return message.length > 0 ? `${name}: ${message}` : name
}

const decodeBlocks = Schema.decodeUnknownOption(Schema.Array(McpSchema.ContentBlock), { onExcessProperty: "preserve" })

const toBlocks = (u: ReadonlyArray<unknown>): ReadonlyArray<McpSchema.ContentBlock> =>
  Option.getOrElse(decodeBlocks(u), () => [Content.text(JSON.stringify(u))])

const toCallToolResult = (out: Tool.ToolReturn): McpSchema.CallToolResult => {
  if (out === undefined || out === null) return { content: [] }
  if (typeof out === "string") return { content: [Content.text(out)] }
  if (out instanceof Content.Blocks) return { content: out.blocks }
  if (Array.isArray(out.content)) {
    const { content, ...rest } = out
    return { ...rest, content: toBlocks(content) }
  }
  return { content: [Content.text(JSON.stringify(out))], structuredContent: out }
}

// ---------------------------------------------------------------------------------------------
// resources
// ---------------------------------------------------------------------------------------------

const DecodeContents = Schema.decodeUnknownOption(Schema.Array(McpSchema.ResourceContents), {
  onExcessProperty: "preserve"
})

const toContents = (
  uri: string,
  mimeType: string | undefined,
  out: Resource.ResourceReturn
): Effect.Effect<Option.Option<ReadonlyArray<McpSchema.ResourceContents>>> => {
  if (out === undefined || out === null) return Effect.succeedNone
  if (typeof out === "string" || out instanceof Uint8Array) {
    return Effect.succeed(Option.some([Content.resourceContents(uri, out, mimeType)]))
  }
  const list: unknown = Array.isArray(out) ? out : "contents" in out ? out.contents : undefined
  const decoded = DecodeContents(list)
  return Option.isSome(decoded)
    ? Effect.succeed(decoded)
    : Effect.dieMessage("resource handler returned contents that are not {uri, text} or {uri, blob}")
}

export const readResource = (
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject,
  ctx: RequestContextShape
): Effect.Effect<JsonRpc.JsonObject, Failure | InputRequired> =>
  Effect.gen(function*() {
    const { uri } = yield* decodeParams(McpSchema.ReadResourceParams, params)
    const run = (
      handler: () => ReturnType<Resource.Resource["handler"]>,
      mimeType: string | undefined
    ) =>
      liftIn(ctx, handler).pipe(
        Effect.flatMap((out) => toContents(uri, mimeType, out)),
        Effect.catchTag("McpError", (e) => fail(e))
      )
    for (const s of snapshot.skills) {
      if (uri !== s.skill.uri && !uri.startsWith(Skill.root(s.skill) + "/")) continue
      const file = yield* Skill.read(s.skill, uri)
      if (Option.isSome(file)) return { contents: [Skill.toResourceContents(file.value)] }
    }
    const resource = snapshot.resourcesByUri.get(uri)
    if (resource !== undefined) {
      const contents = yield* run(() => resource.def.handler(uri, ctx), resource.def.mimeType)
      if (Option.isSome(contents)) return { contents: contents.value }
      return yield* fail(McpError.resourceNotFound(uri))
    }
    for (const template of snapshot.templates) {
      const vars = UriTemplate.match(template.parsed, uri)
      if (Option.isNone(vars)) continue
      const contents = yield* run(() => template.def.handler(vars.value, { ...ctx, uri }), template.def.mimeType)
      if (Option.isSome(contents)) return { contents: contents.value }
      return yield* fail(McpError.resourceNotFound(uri))
    }
    return yield* fail(McpError.resourceNotFound(uri))
  })

// ---------------------------------------------------------------------------------------------
// prompts
// ---------------------------------------------------------------------------------------------

const toMessage = (m: Prompt.MessageInput): McpSchema.PromptMessage =>
  typeof m === "string"
    ? { role: "user", content: Content.text(m) }
    : { role: m.role, content: typeof m.content === "string" ? Content.text(m.content) : m.content }

export const getPrompt = (
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject,
  ctx: RequestContextShape
): Effect.Effect<JsonRpc.JsonObject, Failure | InputRequired> =>
  Effect.gen(function*() {
    const decoded = yield* decodeParams(McpSchema.GetPromptParams, params)
    const prompt = snapshot.promptsByName.get(decoded.name)
    if (prompt === undefined) {
      return yield* fail(McpError.invalidParams(`Unknown prompt: ${decoded.name}`, { name: decoded.name }))
    }
    const args = decoded.arguments ?? {}
    for (const a of prompt.def.arguments ?? []) {
      if (a.required === true && args[a.name] === undefined) {
        return yield* fail(McpError.invalidParams(`Missing required argument: ${a.name}`, { argument: a.name }))
      }
    }
    const out = yield* liftIn(ctx, () => prompt.def.handler(args, ctx)).pipe(
      Effect.catchTag("McpError", (e) => fail(e))
    )
    if (typeof out === "string") return { messages: [toMessage(out)] }
    if (Array.isArray(out)) return { messages: out.map(toMessage) }
    const { description, messages } = out as Exclude<Prompt.PromptReturn, string | ReadonlyArray<unknown>>
    return {
      ...(description === undefined ? {} : { description }),
      messages: messages.map(toMessage)
    }
  })

// ---------------------------------------------------------------------------------------------
// completions
// ---------------------------------------------------------------------------------------------

const MAX_COMPLETIONS = 100

export const complete = (
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject,
  ctx: RequestContextShape
): Effect.Effect<JsonRpc.JsonObject, Failure | InputRequired> =>
  Effect.gen(function*() {
    const { argument, context, ref } = yield* decodeParams(McpSchema.CompleteParams, params)
    let completers: Readonly<Record<string, Resource.Complete>> | undefined
    if (ref.type === "ref/prompt") {
      const prompt = snapshot.promptsByName.get(ref.name)
      if (prompt === undefined) {
        return yield* fail(McpError.invalidParams(`Unknown prompt: ${ref.name}`, { name: ref.name }))
      }
      completers = prompt.def.complete
    } else {
      const template = snapshot.templatesByUriTemplate.get(ref.uri)
      if (template === undefined && !snapshot.resourcesByUri.has(ref.uri)) {
        return yield* fail(McpError.invalidParams(`Unknown resource or template: ${ref.uri}`, { uri: ref.uri }))
      }
      completers = template?.def.complete
    }
    const fn = completers?.[argument.name]
    if (fn === undefined) return { completion: { values: [] } }
    const out = yield* liftIn(ctx, () => fn(argument.value, context?.arguments ?? {}, ctx)).pipe(
      Effect.catchTag("McpError", (e) => fail(e))
    )
    const values = Array.isArray(out) ? out : (out as { readonly values: ReadonlyArray<string> }).values
    const total = Array.isArray(out) ? undefined : (out as { readonly total?: number }).total
    const hasMore = Array.isArray(out) ? undefined : (out as { readonly hasMore?: boolean }).hasMore
    if (values.length > MAX_COMPLETIONS) {
      return {
        completion: {
          values: values.slice(0, MAX_COMPLETIONS),
          total: Math.max(total ?? 0, values.length),
          hasMore: true
        }
      }
    }
    return {
      completion: {
        values,
        ...(total === undefined ? {} : { total }),
        ...(hasMore === undefined ? {} : { hasMore })
      }
    }
  })

// ---------------------------------------------------------------------------------------------
// skills (io.modelcontextprotocol/skills)
// ---------------------------------------------------------------------------------------------

/** `skills/get`: the entry of the skill whose SKILL.md is `uri` (listed or not); else -32602. */
export const getSkill = (
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject
): Effect.Effect<JsonRpc.JsonObject, Failure> =>
  Effect.gen(function*() {
    const { uri } = yield* decodeParams(Skill.GetSkillParams, params)
    const found = snapshot.skills.find((s) => s.skill.uri === uri)
    if (found === undefined) return yield* fail(McpError.invalidParams(`No skill is served at ${uri}`, { uri }))
    return { skill: found.entry }
  })

/** `resources/directory/read`: direct children of a skill directory, paged; else -32602. */
export const readDirectory = (
  server: Server,
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject
): Effect.Effect<JsonRpc.JsonObject, Failure> =>
  Effect.gen(function*() {
    const { uri } = yield* decodeParams(Skill.ReadDirectoryParams, params)
    for (const s of snapshot.skills) {
      const children = Skill.children(s.skill, uri)
      if (Option.isSome(children)) {
        return yield* page(server, snapshot, params, children.value, `resources@${uri}`, (r) => r, "resources")
      }
    }
    return yield* fail(McpError.invalidParams(`${uri} is not a directory resource`, { uri }))
  })
