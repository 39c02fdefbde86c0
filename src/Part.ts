/**
 * Parts: a server assembled from pieces owned by different teams. A part is a plain record of
 * definitions (`tools`, `resources`, `resourceTemplates`, `prompts`, `skills`) and optional
 * `instructions`. A part that needs services (a database client, say) or owns resources is built
 * by an Effect: its requirements come from the environment (provide them with Layers) and its
 * finalizers run when the server's scope closes.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as McpServer from "./McpServer.js"
import type * as Prompt from "./Prompt.js"
import type * as Resource from "./Resource.js"
import type * as Skill from "./Skill.js"
import type * as Tool from "./Tool.js"

/**
 * A part: definitions and optional instructions.
 *
 * @since 0.1.0
 * @category models
 */
export interface Part {
  readonly tools?: ReadonlyArray<Tool.Tool>
  readonly resources?: ReadonlyArray<Resource.Resource>
  readonly resourceTemplates?: ReadonlyArray<Resource.ResourceTemplate>
  readonly prompts?: ReadonlyArray<Prompt.Prompt>
  readonly skills?: ReadonlyArray<Skill.Skill>
  readonly instructions?: string
}

/**
 * Parts could not be combined: `duplicates` names every clash, as `"<kind> <identity>"`
 * (`"tool add"`, `"resource file:///a"`, `"resourceTemplate x://{id}"`, `"prompt greet"`,
 * `"skill skill://a/SKILL.md"`).
 *
 * @since 0.1.0
 * @category errors
 */
export class PartError extends Data.TaggedError("PartError")<{
  readonly duplicates: ReadonlyArray<string>
  readonly message: string
}> {}

/**
 * Defines a part (identity, for inference).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (part: Part): Part => part

const dupes = <A>(kind: string, items: ReadonlyArray<A>, key: (a: A) => string): ReadonlyArray<string> => {
  const seen = new Set<string>()
  const out = new Set<string>()
  for (const item of items) {
    const k = key(item)
    if (seen.has(k)) out.add(`${kind} ${k}`)
    seen.add(k)
  }
  return [...out]
}

/**
 * Concatenates parts in order and joins their instructions (blank line between). Fails with
 * `PartError` naming every duplicate tool or prompt name, resource URI, URI template and skill URI.
 *
 * @since 0.1.0
 * @category combinators
 */
export const combine = (parts: ReadonlyArray<Part>): Either.Either<Part, PartError> => {
  const tools = parts.flatMap((p) => p.tools ?? [])
  const resources = parts.flatMap((p) => p.resources ?? [])
  const resourceTemplates = parts.flatMap((p) => p.resourceTemplates ?? [])
  const prompts = parts.flatMap((p) => p.prompts ?? [])
  const skills = parts.flatMap((p) => p.skills ?? [])
  const duplicates = [
    ...dupes("tool", tools, (t) => t.name),
    ...dupes("resource", resources, (r) => r.uri),
    ...dupes("resourceTemplate", resourceTemplates, (t) => t.uriTemplate),
    ...dupes("prompt", prompts, (p) => p.name),
    ...dupes("skill", skills, (s) => s.uri)
  ]
  if (duplicates.length > 0) {
    return Either.left(new PartError({ duplicates, message: `duplicate definitions: ${duplicates.join(", ")}` }))
  }
  const instructions = parts.flatMap((p) => (p.instructions === undefined ? [] : [p.instructions])).join("\n\n")
  return Either.right({
    tools,
    resources,
    resourceTemplates,
    prompts,
    skills,
    ...(instructions.length > 0 ? { instructions } : {})
  })
}

/**
 * Renames a part's tools and prompts to `<prefix>_<name>` (resource URIs, templates and skills
 * keep their identities, which are already global).
 *
 * @since 0.1.0
 * @category combinators
 */
export const prefix = (part: Part, prefix: string): Part => ({
  ...part,
  ...(part.tools === undefined ? {} : { tools: part.tools.map((t) => ({ ...t, name: `${prefix}_${t.name}` })) }),
  ...(part.prompts === undefined ? {} : { prompts: part.prompts.map((p) => ({ ...p, name: `${prefix}_${p.name}` })) })
})

/**
 * Builds a server from parts: each part is a `Part` or an Effect building one (its requirements
 * `R` come from the environment; its finalizers run when the scope closes). `options` give the
 * server's identity and settings; their own definitions come first, then the parts'. Declares
 * the Skills extension only when a part (or `options`) has skills.
 *
 * Fails with the parts' errors, `PartError` (duplicates across parts) or `DefinitionError`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const server = <E = never, R = never>(
  options: McpServer.Options,
  parts: ReadonlyArray<Part | Effect.Effect<Part, E, R>>
): Effect.Effect<McpServer.McpServer, E | PartError | McpServer.DefinitionError, R | Scope.Scope> =>
  Effect.gen(function*() {
    const built = yield* Effect.forEach(parts, (p) => (Effect.isEffect(p) ? p : Effect.succeed(p)))
    const own: Part = {
      ...(options.tools === undefined ? {} : { tools: options.tools }),
      ...(options.resources === undefined ? {} : { resources: options.resources }),
      ...(options.resourceTemplates === undefined ? {} : { resourceTemplates: options.resourceTemplates }),
      ...(options.prompts === undefined ? {} : { prompts: options.prompts }),
      ...(options.skills === undefined ? {} : { skills: options.skills }),
      ...(options.instructions === undefined ? {} : { instructions: options.instructions })
    }
    const all = yield* combine([own, ...built])
    return yield* McpServer.make({ ...options, ...all })
  })

/**
 * {@link server} as a Layer providing `McpServer.McpServerService`; provide the parts'
 * dependencies to it with `Layer.provide`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E = never, R = never>(
  options: McpServer.Options,
  parts: ReadonlyArray<Part | Effect.Effect<Part, E, R>>
): Layer.Layer<McpServer.McpServerService, E | PartError | McpServer.DefinitionError, Exclude<R, Scope.Scope>> =>
  Layer.scoped(McpServer.McpServerService, server(options, parts))
