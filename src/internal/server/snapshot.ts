/**
 * Compiled definitions and the immutable snapshot a request reads.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { DefinitionError } from "../../Errors.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as JsonSchema from "../../JsonSchema.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as Prompt from "../../Prompt.js"
import type * as Resource from "../../Resource.js"
import type * as Skill from "../../Skill.js"
import type * as Tool from "../../Tool.js"
import * as UriTemplate from "../../UriTemplate.js"
import * as SkillInternal from "../skill/build.js"
import * as Apps from "./apps.js"
import * as HeaderRules from "./headerAgreement.js"
import * as ToolArguments from "./toolArguments.js"

/** A definition was refused (declared in the public `Errors` module; documented on `McpServer.DefinitionError`). */
export { DefinitionError }

/** A tool as a request finds it: its definition, its wire form and what each call reads, worked out once. */
export interface CompiledTool {
  readonly def: Tool.Tool
  readonly inputSchema: JsonRpc.JsonObject
  readonly wire: McpSchema.Tool
  /** The `x-mcp-header` parameters of `inputSchema` (SEP-2243): what the 2026-07-28 HTTP header check compares. */
  readonly headerParams: ReadonlyArray<HeaderRules.HeaderParam>
  /** The check of a call's arguments, chosen for the server's validator (`./toolArguments.ts`). */
  readonly check: ToolArguments.Check
}

/** @internal */
export interface CompiledTemplate {
  readonly def: Resource.ResourceTemplate
  readonly parsed: UriTemplate.UriTemplate
  readonly wire: McpSchema.ResourceTemplate
}

/** @internal */
export interface CompiledSkill {
  readonly skill: Skill.Skill
  readonly entry: Skill.SkillEntry
  /** The SKILL.md resource as `resources/list` shows it. */
  readonly wire: McpSchema.Resource
}

/** Computes a skill's entry (digests) once, when it is added. */
export const compileSkill = (skill: Skill.Skill): Effect.Effect<CompiledSkill> =>
  Effect.map(SkillInternal.entry(skill), (entry) => ({
    skill,
    entry,
    wire: {
      uri: skill.uri,
      name: skill.name,
      description: skill.frontmatter.description,
      mimeType: "text/markdown"
    }
  }))

/** @internal */
export interface CompiledResource {
  readonly def: Resource.Resource
  readonly wire: McpSchema.Resource
}

/** @internal */
export interface CompiledPrompt {
  readonly def: Prompt.Prompt
  readonly wire: McpSchema.Prompt
}

/** The definitions of a snapshot (or of a caller's view of one), in the order they were added. */
export interface Definitions {
  readonly tools: ReadonlyArray<CompiledTool>
  readonly resources: ReadonlyArray<CompiledResource>
  readonly templates: ReadonlyArray<CompiledTemplate>
  readonly prompts: ReadonlyArray<CompiledPrompt>
  readonly skills: ReadonlyArray<CompiledSkill>
}

/**
 * Lookups by identity, built once per snapshot (and per caller's view): a request names a tool,
 * prompt, resource or template and finds it without a linear search.
 */
export interface Indexes {
  readonly toolsByName: ReadonlyMap<string, CompiledTool>
  readonly promptsByName: ReadonlyMap<string, CompiledPrompt>
  readonly resourcesByUri: ReadonlyMap<string, CompiledResource>
  readonly templatesByUriTemplate: ReadonlyMap<string, CompiledTemplate>
}

/** @internal */
export interface Snapshot extends Definitions, Indexes {
  readonly revision: number
  /** Does any definition declare per-caller visibility? (Derived once, when the snapshot is built.) */
  readonly hasVisibility: boolean
}

/** The lookups of a set of definitions (identities are unique: `build` refuses duplicates). */
export const indexes = (defs: Definitions): Indexes => ({
  toolsByName: new Map(defs.tools.map((t) => [t.def.name, t])),
  promptsByName: new Map(defs.prompts.map((p) => [p.def.name, p])),
  resourcesByUri: new Map(defs.resources.map((r) => [r.def.uri, r])),
  templatesByUriTemplate: new Map(defs.templates.map((t) => [t.def.uriTemplate, t]))
})

/** @internal */
export const emptySnapshot: Snapshot = {
  revision: 0,
  tools: [],
  resources: [],
  templates: [],
  prompts: [],
  skills: [],
  toolsByName: new Map(),
  promptsByName: new Map(),
  resourcesByUri: new Map(),
  templatesByUriTemplate: new Map(),
  hasVisibility: false
}

/** The validator of a server's options: `undefined` with `validate: false`, else `validator` or the built-in one. */
export const validatorOf = (options: {
  readonly validate?: boolean | undefined
  readonly validator?: JsonSchema.Validator | undefined
}): JsonSchema.Validator | undefined =>
  options.validate === false ? undefined : options.validator ?? JsonSchema.validate

const EMPTY_INPUT: JsonRpc.JsonObject = { type: "object", properties: {} }

const pick = <T extends object, K extends keyof T>(obj: T, keys: ReadonlyArray<K>): Partial<Pick<T, K>> => {
  const out: Partial<Pick<T, K>> = {}
  for (const k of keys) if (obj[k] !== undefined) out[k] = obj[k]
  return out
}

/**
 * Compiles a tool for a server whose argument validator is `validator` (`undefined`:
 * `validate: false`).
 */
export const compileTool = (
  def: Tool.Tool,
  validator: JsonSchema.Validator | undefined
): Either.Either<CompiledTool, DefinitionError> => {
  const inputSchema = def.inputSchema ?? EMPTY_INPUT
  const fail = (message: string) => Either.left(new DefinitionError({ kind: "tool", name: def.name, message }))
  if (def.name.length === 0) return fail("tool name must not be empty")
  if (inputSchema.type !== "object") return fail("inputSchema must have a root \"type\": \"object\"")
  if (def.outputSchema !== undefined && !JsonRpc.isObject(def.outputSchema)) {
    return fail("outputSchema must be a JSON Schema object")
  }
  const wire: McpSchema.Tool = {
    name: def.name,
    ...pick(def, ["title", "description", "annotations", "icons", "_meta"]),
    inputSchema,
    ...(def.outputSchema === undefined ? {} : { outputSchema: def.outputSchema })
  }
  return Either.right({
    def,
    inputSchema,
    wire,
    headerParams: HeaderRules.headerParams(inputSchema),
    check: ToolArguments.compile(def, inputSchema, validator)
  })
}

/** @internal */
export const compileResource = (def: Resource.Resource): CompiledResource => ({
  def,
  wire: {
    uri: def.uri,
    name: def.name,
    ...pick(def, ["title", "description", "mimeType", "size", "annotations", "icons", "_meta"])
  } satisfies McpSchema.Resource
})

/** @internal */
export const compileTemplate = (def: Resource.ResourceTemplate): Either.Either<CompiledTemplate, DefinitionError> =>
  UriTemplate.parse(def.uriTemplate).pipe(
    Either.mapLeft((e) => new DefinitionError({ kind: "resourceTemplate", name: def.name, message: e.message })),
    Either.map((parsed) => ({
      def,
      parsed,
      wire: {
        uriTemplate: def.uriTemplate,
        name: def.name,
        ...pick(def, ["title", "description", "mimeType", "annotations", "icons", "_meta"])
      }
    }))
  )

/** @internal */
export const compilePrompt = (def: Prompt.Prompt): CompiledPrompt => ({
  def,
  wire: {
    name: def.name,
    ...pick(def, ["title", "description", "icons", "_meta"]),
    ...(def.arguments === undefined ? {} : { arguments: def.arguments })
  } satisfies McpSchema.Prompt
})

const duplicate = <A>(
  items: ReadonlyArray<A>,
  key: (a: A) => string
): Option.Option<string> => {
  const seen = new Set<string>()
  for (const item of items) {
    const k = key(item)
    if (seen.has(k)) return Option.some(k)
    seen.add(k)
  }
  return Option.none()
}

/**
 * Builds a snapshot (`validator`: the server's argument validator, `undefined` with
 * `validate: false`; see {@link validatorOf}).
 */
export const build = (
  defs: {
    readonly tools?: ReadonlyArray<Tool.Tool> | undefined
    readonly resources?: ReadonlyArray<Resource.Resource> | undefined
    readonly resourceTemplates?: ReadonlyArray<Resource.ResourceTemplate> | undefined
    readonly prompts?: ReadonlyArray<Prompt.Prompt> | undefined
    readonly skills?: ReadonlyArray<CompiledSkill> | undefined
  },
  revision: number,
  validator: JsonSchema.Validator | undefined
): Either.Either<Snapshot, DefinitionError> =>
  Either.gen(function*() {
    const tools = yield* Either.all((defs.tools ?? []).map((tool) => compileTool(tool, validator)))
    const templates = yield* Either.all((defs.resourceTemplates ?? []).map(compileTemplate))
    const resources = (defs.resources ?? []).map(compileResource)
    const prompts = (defs.prompts ?? []).map(compilePrompt)
    const checks = [
      ["tool", duplicate(tools, (t) => t.def.name)],
      ["resource", duplicate(resources, (r) => r.def.uri)],
      ["resourceTemplate", duplicate(templates, (t) => t.def.uriTemplate)],
      ["prompt", duplicate(prompts, (p) => p.def.name)],
      ["skill", duplicate(defs.skills ?? [], (s) => s.skill.uri)]
    ] as const
    for (const [kind, dup] of checks) {
      if (Option.isSome(dup)) {
        return yield* Either.left(new DefinitionError({ kind, name: dup.value, message: `duplicate ${kind}` }))
      }
    }
    // MCP Apps: a view's URI is ui://, an App tool links a view the set serves (./apps.ts).
    const misuse = Apps.check({ tools, resources, templates })
    if (Option.isSome(misuse)) return yield* Either.left(misuse.value)
    const skills = defs.skills ?? []
    const hasVisibility = tools.some((t) => t.def.visible !== undefined) ||
      resources.some((r) => r.def.visible !== undefined) ||
      templates.some((t) => t.def.visible !== undefined) ||
      prompts.some((p) => p.def.visible !== undefined) ||
      skills.some((s) => s.skill.requiredScopes.length > 0)
    const defined = { tools, resources, templates, prompts, skills }
    return { revision, ...defined, ...indexes(defined), hasVisibility }
  })
