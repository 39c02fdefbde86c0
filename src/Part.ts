/**
 * Parts: a server assembled from pieces owned by different teams. A part is a plain record of
 * definitions (`tools`, `resources`, `resourceTemplates`, `prompts`, `skills`) and optional
 * `instructions`. A part that needs services (a database client, say) or owns resources is built
 * by an Effect: its requirements come from the environment (provide them with Layers) and its
 * finalizers run when the server's scope closes. Its definitions' handlers may also need services
 * per request (`Part<R>`): the server built from parts requires them like `McpServer.make` does
 * (unless a middleware provides them).
 *
 * Guide: [Composition, parts](https://github.com/presa-mcp/presa-mcp/blob/main/docs/composition.md#parts-a-server-from-pieces).
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { erase } from "./internal/erase.js"
import type * as internal from "./internal/server/model.js"
import * as McpServer from "./McpServer.js"
import type * as Middleware from "./Middleware.js"
import type * as Prompt from "./Prompt.js"
import type * as Resource from "./Resource.js"
import type * as Skill from "./Skill.js"
import type * as Tool from "./Tool.js"

/**
 * A part: definitions and optional instructions. `R`: the services its handlers need besides
 * `RequestContext` (default none).
 *
 * @since 0.1.0
 * @category models
 */
export interface Part<R = never> {
  readonly tools?: ReadonlyArray<Tool.Tool<R>>
  readonly resources?: ReadonlyArray<Resource.Resource<R>>
  readonly resourceTemplates?: ReadonlyArray<Resource.ResourceTemplate<R>>
  readonly prompts?: ReadonlyArray<Prompt.Prompt<R>>
  readonly skills?: ReadonlyArray<Skill.Skill>
  readonly instructions?: string
}

/**
 * Any part, whatever services its handlers need.
 *
 * @since 0.1.0
 * @category models
 */
export type Any = Part<unknown>

/**
 * The services a part's handlers need (distributes over a union; a part given as an Effect counts
 * the part it builds).
 *
 * @since 0.1.0
 * @category type-level
 */
export type Services<P> = P extends Effect.Effect<infer Built, infer _E, infer _R> ? Services<Built>
  :
    | (P extends { readonly tools?: infer Ts } ? Tool.Services<Elements<Ts>> : never)
    | (P extends { readonly resources?: infer Rs } ? Resource.Services<Elements<Rs>> : never)
    | (P extends { readonly resourceTemplates?: infer Ts } ? Resource.Services<Elements<Ts>> : never)
    | (P extends { readonly prompts?: infer Ps } ? Prompt.Services<Elements<Ps>> : never)

type Elements<X> = X extends ReadonlyArray<infer E> ? E : never

/** What parts given as Effects may fail with. */
type ErrorOf<P> = P extends Effect.Effect<infer _A, infer E, infer _R> ? E : never

/** What parts given as Effects need to be built. */
type ContextOf<P> = P extends Effect.Effect<infer _A, infer _E, infer R> ? R : never

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
 * Defines a part (identity, for inference of the services its handlers need).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <
  T extends Tool.Any = Tool.Tool,
  Res extends Resource.AnyResource = Resource.Resource,
  Tpl extends Resource.AnyTemplate = Resource.ResourceTemplate,
  P extends Prompt.Any = Prompt.Prompt
>(part: {
  readonly tools?: ReadonlyArray<T>
  readonly resources?: ReadonlyArray<Res>
  readonly resourceTemplates?: ReadonlyArray<Tpl>
  readonly prompts?: ReadonlyArray<P>
  readonly skills?: ReadonlyArray<Skill.Skill>
  readonly instructions?: string
}): Part<internal.HandlerServices<T, Res, Tpl, P>> =>
  // Each definition needs at most the union of the part's services (checked by the inference).
  erase<Part<internal.HandlerServices<T, Res, Tpl, P>>>(part)

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
export const combine = <P extends Any>(parts: ReadonlyArray<P>): Either.Either<Part<Services<P>>, PartError> => {
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
  const combined: Any = {
    tools,
    resources,
    resourceTemplates,
    prompts,
    skills,
    ...(instructions.length > 0 ? { instructions } : {})
  }
  // The union of the parts' definitions needs the union of their services.
  return Either.right(erase<Part<Services<P>>>(combined))
}

/**
 * Renames a part's tools and prompts to `<prefix>_<name>` (resource URIs, templates and skills
 * keep their identities, which are already global).
 *
 * @since 0.1.0
 * @category combinators
 */
export const prefix = <R>(part: Part<R>, prefix: string): Part<R> => ({
  ...part,
  ...(part.tools === undefined ? {} : { tools: part.tools.map((t) => ({ ...t, name: `${prefix}_${t.name}` })) }),
  ...(part.prompts === undefined ? {} : { prompts: part.prompts.map((p) => ({ ...p, name: `${prefix}_${p.name}` })) })
})

/** What {@link server} builds from `Parts` and the options' definitions (its signature, once). */
type ServerOf<
  Parts extends ReadonlyArray<Any | Effect.Effect<Any, unknown, unknown>>,
  T extends Tool.Any,
  Res extends Resource.AnyResource,
  Tpl extends Resource.AnyTemplate,
  P extends Prompt.Any,
  M extends Middleware.Any
> = Effect.Effect<
  McpServer.McpServer<McpServer.Services<T | Tool.Tool<Services<Parts[number]>>, Res, Tpl, P, M>>,
  ErrorOf<Parts[number]> | PartError | McpServer.DefinitionError,
  | McpServer.Requirements<T | Tool.Tool<Services<Parts[number]>>, Res, Tpl, P, M>
  | ContextOf<Parts[number]>
  | Scope.Scope
>

/**
 * Builds a server from parts: each part is a `Part` or an Effect building one (its requirements
 * come from the environment; its finalizers run when the scope closes). `options` give the
 * server's identity and settings; their own definitions come first, then the parts'. Declares
 * the Skills extension only when a part (or `options`) has skills. Like `McpServer.make`, it
 * requires the services the handlers (of `options` and of every part) need that no middleware
 * provides, and provides them to every request.
 *
 * Fails with the parts' errors, `PartError` (duplicates across parts) or `DefinitionError`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const server = <
  const Parts extends ReadonlyArray<Any | Effect.Effect<Any, unknown, unknown>>,
  T extends Tool.Any = Tool.Tool,
  Res extends Resource.AnyResource = Resource.Resource,
  Tpl extends Resource.AnyTemplate = Resource.ResourceTemplate,
  P extends Prompt.Any = Prompt.Prompt,
  M extends Middleware.Any = Middleware.Middleware
>(
  options: McpServer.Options<T, Res, Tpl, P, M>,
  parts: Parts
): ServerOf<Parts, T, Res, Tpl, P, M> =>
  // The parts' requirements and errors are erased inside (a list of records and Effects); the
  // signature states them.
  erase<ServerOf<Parts, T, Res, Tpl, P, M>>(Effect.gen(function*() {
    const list: ReadonlyArray<Any | Effect.Effect<Any, unknown, unknown>> = parts
    const built = yield* Effect.forEach(list, (p) => (Effect.isEffect(p) ? p : Effect.succeed(p)))
    const own: Any = {
      ...(options.tools === undefined ? {} : { tools: options.tools }),
      ...(options.resources === undefined ? {} : { resources: options.resources }),
      ...(options.resourceTemplates === undefined ? {} : { resourceTemplates: options.resourceTemplates }),
      ...(options.prompts === undefined ? {} : { prompts: options.prompts }),
      ...(options.skills === undefined ? {} : { skills: options.skills }),
      ...(options.instructions === undefined ? {} : { instructions: options.instructions })
    }
    const all = yield* combine([own, ...built])
    return yield* McpServer.make<Tool.Any, Resource.AnyResource, Resource.AnyTemplate, Prompt.Any, Middleware.Any>({
      ...options,
      ...all
    })
  }))

/**
 * {@link server} as a Layer providing the `McpServer.McpServer` service (like `McpServer.layer`,
 * it runs the server's `shutdown` when its scope closes); provide the parts' dependencies and the
 * handlers' services to it with `Layer.provide`. To add a part to a server built elsewhere in
 * the application, use `McpServer.part`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <
  const Parts extends ReadonlyArray<Any | Effect.Effect<Any, unknown, unknown>>,
  T extends Tool.Any = Tool.Tool,
  Res extends Resource.AnyResource = Resource.Resource,
  Tpl extends Resource.AnyTemplate = Resource.ResourceTemplate,
  P extends Prompt.Any = Prompt.Prompt,
  M extends Middleware.Any = Middleware.Middleware
>(
  options: McpServer.Options<T, Res, Tpl, P, M>,
  parts: Parts
): Layer.Layer<
  McpServer.McpServer,
  ErrorOf<Parts[number]> | PartError | McpServer.DefinitionError,
  Exclude<
    McpServer.Requirements<T | Tool.Tool<Services<Parts[number]>>, Res, Tpl, P, M> | ContextOf<Parts[number]>,
    Scope.Scope
  >
> =>
  Layer.scoped(
    McpServer.McpServer,
    Effect.tap(server(options, parts), (s) => Effect.addFinalizer(() => s.shutdown))
  )
