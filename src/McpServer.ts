/**
 * The MCP server as an Effect service: {@link McpServer} is both the service's type and its
 * `Context.Tag`. {@link layer} builds it, the definition Layers ({@link tool}, {@link resource},
 * {@link resourceTemplate}, {@link prompt}, {@link skill}, {@link part}) register into it from
 * anywhere in an application, and each transport has a Layer that serves it
 * (`StreamableHttp.layer`, `StreamableHttp.layerServer`, `Stdio.layerServer`,
 * `InProcess.clientFromService`). {@link make} is the same server as a plain Effect, for code that does
 * not compose Layers; the transports' plain functions (`StreamableHttp.serve`, `Stdio.run`,
 * `InProcess.client`) take its value.
 *
 * The core is {@link dispatch}: one JSON-RPC message in, at most one out; every transport wraps
 * it. Definitions live in immutable snapshots (a request reads one and keeps it).
 *
 * Serves 2026-07-28 (modern: `_meta` on each request, `server/discover`, `resultType`, caching
 * hints) and 2025-11-25 / 2025-06-18 (legacy: `initialize`, sessions) at once; each message is
 * routed by its own shape (MCP 2026-07-28, Basic, Versioning: a request carries its version in `_meta`).
 *
 * Guide: [Servers](https://github.com/presa-mcp/presa-mcp/blob/main/docs/servers.md).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import * as Errors from "./Errors.js"
import { erase } from "./internal/erase.js"
import * as Connection from "./internal/server/connection.js"
import * as internal from "./internal/server/dispatch.js"
import * as Headers from "./internal/server/headerAgreement.js"
import * as Provide from "./internal/server/provide.js"
import * as Service from "./internal/server/service.js"
import * as Visibility from "./internal/server/visibility.js"
import * as JsonRpc from "./JsonRpc.js"
import type * as McpSchema from "./McpSchema.js"
import type * as Middleware from "./Middleware.js"
import type * as Part from "./Part.js"
import type * as Prompt from "./Prompt.js"
import type { RequestContext, RequestContextShape } from "./RequestContext.js"
import type * as Resource from "./Resource.js"
import type * as Skill from "./Skill.js"
import type * as Tool from "./Tool.js"

/**
 * Server options: the server's `Implementation` (`name`, `version`, `title`, `description`,
 * `websiteUrl`, `icons`), its initial definitions (`tools`, `resources`, `resourceTemplates`,
 * `prompts`, `skills`), what it advertises (`logging`, `listChanged`, `subscribe`, `tasks`), and
 * how it answers (`pageSize`, `cache`, `versions`, `validate`, `validator`, `exposeErrorMessages`,
 * `inputState`, `middleware`, `telemetry`). Each field is documented where it is declared: its
 * unit, its default, what it changes on the wire.
 *
 * The type parameters are the definitions' and middlewares' types ({@link make} infers them to
 * compute the services the server needs); their defaults are definitions that need no services.
 *
 * @since 0.1.0
 * @category models
 */
export type Options<
  T extends Tool.Any = Tool.Tool,
  Res extends Resource.AnyResource = Resource.Resource,
  Tpl extends Resource.AnyTemplate = Resource.ResourceTemplate,
  P extends Prompt.Any = Prompt.Prompt,
  M extends Middleware.Any = Middleware.Middleware
> = internal.Options<T, Res, Tpl, P, M>

/**
 * The server: the service every transport serves, and its `Context.Tag` (`yield* McpServer`
 * in an app built with {@link layer}). Its internals (the snapshot state, the change bus, the
 * shutdown signal, the keys that sign `requestState`) are not part of its type: definitions
 * change only through the `add*` / `remove*` methods, which validate them.
 *
 * - `info`: its `Implementation`; `versions`: the revisions served, newest first;
 * - `dispatch(message, options?)`: one decoded JSON-RPC message in, the reply with its HTTP status
 *   (or none) out — see {@link dispatch}; `handleMessage` yields only the reply;
 * - `snapshot`: what it serves now ({@link Snapshot}); `changes`: the snapshot, then each new one;
 * - `capabilities`: what it advertises now (see {@link capabilities});
 * - `addTool` / `removeTool`, `addResource` / `removeResource`, `addResourceTemplate` /
 *   `removeResourceTemplate`, `addPrompt` / `removePrompt`, `addSkill` / `removeSkill`: live
 *   changes (fail with `DefinitionError`; listening clients get a list change). An `add*` call
 *   requires the services the definition's handlers need besides `RequestContext`, captures its
 *   environment and gives it to the handlers beneath the request's own. The module functions
 *   ({@link addTool}, …) also subtract the services the server already offers (`Services`);
 *   the Layers ({@link tool}, …) do this from an application's Layer graph;
 * - `listChanged(kind)`, `resourceUpdated(uri)`: announce changes the server cannot see;
 * - `shutdown`: ends every open `subscriptions/listen` gracefully (see {@link shutdown}); the
 *   Layer runs it when its scope closes.
 *
 * `Services` (type-level only, on the brand) are the services its handlers can count on: what
 * {@link make} required from its environment and what its middlewares provide. It is
 * contravariant, so a `McpServer<Db>` is a `McpServer` (transports, and the Tag, take any server).
 *
 * The type is branded ({@link TypeId}): only {@link make} and {@link layer} build a server. A
 * hand-made value does not type-check; one that copies the brand (a spread of a server) dies with
 * a defect the moment a transport or a module function reaches for the server behind it.
 *
 * @since 0.1.0
 * @category models
 */
export interface McpServer<Services = never> {
  /** The brand: only {@link make} (and {@link layer}) build a server; `Services` lives here, type-level only. */
  readonly [TypeId]: { readonly _Services: (_: Services) => void }
  readonly info: McpSchema.Implementation
  readonly versions: ReadonlyArray<McpSchema.ProtocolVersion>
  readonly dispatch: (message: unknown, options?: DispatchOptions) => Effect.Effect<Option.Option<Reply>>
  readonly handleMessage: (
    message: unknown,
    options?: DispatchOptions
  ) => Effect.Effect<Option.Option<JsonRpc.Response>>
  readonly snapshot: Effect.Effect<Snapshot>
  readonly changes: Stream.Stream<Snapshot>
  readonly capabilities: Effect.Effect<McpSchema.ServerCapabilities>
  readonly addTool: <T extends Tool.Any>(
    tool: T
  ) => Effect.Effect<void, DefinitionError, Exclude<Tool.Services<T>, RequestContext>>
  readonly removeTool: (name: string) => Effect.Effect<void, DefinitionError>
  readonly addResource: <D extends Resource.AnyResource>(
    resource: D
  ) => Effect.Effect<void, DefinitionError, Exclude<Resource.Services<D>, RequestContext>>
  readonly removeResource: (uri: string) => Effect.Effect<void, DefinitionError>
  readonly addResourceTemplate: <D extends Resource.AnyTemplate>(
    template: D
  ) => Effect.Effect<void, DefinitionError, Exclude<Resource.Services<D>, RequestContext>>
  readonly removeResourceTemplate: (uriTemplate: string) => Effect.Effect<void, DefinitionError>
  readonly addPrompt: <P extends Prompt.Any>(
    prompt: P
  ) => Effect.Effect<void, DefinitionError, Exclude<Prompt.Services<P>, RequestContext>>
  readonly removePrompt: (name: string) => Effect.Effect<void, DefinitionError>
  readonly addSkill: (skill: Skill.Skill) => Effect.Effect<void, DefinitionError>
  readonly removeSkill: (uri: string) => Effect.Effect<void, DefinitionError>
  readonly listChanged: (kind: "tools" | "prompts" | "resources") => Effect.Effect<void>
  readonly resourceUpdated: (uri: string) => Effect.Effect<void>
  readonly shutdown: Effect.Effect<void>
}

/**
 * The brand of {@link McpServer} (as `HttpLayerRouter.TypeId` brands its router).
 *
 * @since 0.2.0
 * @category symbols
 */
export const TypeId: typeof Service.TypeId = Service.TypeId

/**
 * @since 0.2.0
 * @category symbols
 */
export type TypeId = typeof TypeId

/**
 * The server's `Context.Tag` (key `"presa-mcp/McpServer"`): provided by {@link layer} (or by
 * `Layer.succeed(McpServer, server)` for a server made with {@link make}), required by the
 * definition Layers and the transport Layers. It sees the server without its `Services`.
 *
 * @since 0.2.0
 * @category tags
 */
export const McpServer: Context.Tag<McpServer, McpServer> = Context.GenericTag<McpServer>("presa-mcp/McpServer")

/**
 * What a server serves at one moment, as clients see it (before per-caller visibility): the wire
 * form of each tool, resource, resource template, prompt and skill (its SKILL.md resource), in the
 * order they were added. `revision` grows by one with each change.
 *
 * @since 0.2.0
 * @category models
 */
export interface Snapshot {
  readonly revision: number
  readonly tools: ReadonlyArray<McpSchema.Tool>
  readonly resources: ReadonlyArray<McpSchema.Resource>
  readonly resourceTemplates: ReadonlyArray<McpSchema.ResourceTemplate>
  readonly prompts: ReadonlyArray<McpSchema.Prompt>
  readonly skills: ReadonlyArray<McpSchema.Resource>
}

/**
 * What {@link make} requires from its environment for these definitions and middlewares: the
 * services the handlers need (besides `RequestContext`) that no middleware provides, and the
 * middlewares' own requirements.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Requirements<T, Res, Tpl, P, M> = internal.Requirements<T, Res, Tpl, P, M>

/**
 * The services the handlers of a server built from these definitions and middlewares can count on
 * (its {@link Requirements} and what the middlewares provide).
 *
 * @since 0.1.0
 * @category type-level
 */
export type Services<T, Res, Tpl, P, M> = internal.ServerServices<T, Res, Tpl, P, M>

/**
 * A legacy session: the state one `initialize` creates (one stdio process, one HTTP
 * `Mcp-Session-Id`, one in-process connection).
 *
 * @since 0.1.0
 * @category models
 */
export type Session = internal.Session

/**
 * Options of one {@link handleMessage} call: `session` (the connection's legacy session),
 * `headers` (HTTP request headers: enables the 2026-07-28 header checks), `notify` (where
 * request-scoped notifications go).
 *
 * @since 0.1.0
 * @category models
 */
export type DispatchOptions = internal.DispatchOptions

/**
 * A response and the HTTP status the spec gives it (`status` is 400 for `_meta`, header,
 * version and envelope errors, 404 for -32601, 200 otherwise).
 *
 * @since 0.1.0
 * @category models
 */
export type Reply = internal.Reply

/**
 * A definition was refused (a non-object `inputSchema` root, a bad URI template, a duplicate
 * name or URI; MCP Apps: a view whose URI is not `ui://`, an `App.tool` linking a view the server
 * does not serve). `kind` says which definition, `name` its name or URI. Declared in `Errors`.
 *
 * @since 0.1.0
 * @category errors
 */
export const DefinitionError: typeof Errors.DefinitionError = Errors.DefinitionError

/**
 * @since 0.1.0
 * @category errors
 */
export type DefinitionError = Errors.DefinitionError

/**
 * The protocol error type (re-exported from `JsonRpc`): fail a handler with it to answer with a
 * JSON-RPC error; use its constructors (`McpError.invalidParams`, `McpError.resourceNotFound`, …).
 *
 * @since 0.1.0
 * @category errors
 */
export const McpError = JsonRpc.McpError

/**
 * @since 0.1.0
 * @category errors
 */
export type McpError = JsonRpc.McpError

/**
 * Builds a server as a plain Effect (for code that does not compose Layers; {@link layer} is the
 * same as a Layer). Fails with `DefinitionError` when a definition is refused.
 *
 * Services: the definitions' handlers may need services besides `RequestContext` (their `R`), and
 * middlewares may provide some and require others. `make` requires from its environment exactly
 * {@link Requirements} (the handlers' services no middleware provides, plus the middlewares' own),
 * captures that environment (`Effect.context`) and provides it to every request, beneath the
 * request's own (its span, the transport's services) and what the middlewares provide. So handlers can use the app's services (a database layer), and
 * {@link layer} composes into larger Effect apps. Middlewares written inline as plain functions
 * provide nothing at the type level: declare what a middleware provides with
 * `Middleware.provide` / `Middleware.make`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <
  T extends Tool.Any = Tool.Tool,
  Res extends Resource.AnyResource = Resource.Resource,
  Tpl extends Resource.AnyTemplate = Resource.ResourceTemplate,
  P extends Prompt.Any = Prompt.Prompt,
  M extends Middleware.Any = Middleware.Middleware
>(
  options: Options<T, Res, Tpl, P, M>
): Effect.Effect<McpServer<Services<T, Res, Tpl, P, M>>, DefinitionError, Requirements<T, Res, Tpl, P, M>> =>
  Service.make(options)

/**
 * A new legacy session for a connection.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeSession: Effect.Effect<Session> = internal.makeSession

/**
 * Handles one decoded JSON value and yields the reply with its HTTP status, or none (for
 * notifications and responses). Never fails: bad input becomes a JSON-RPC error
 * (-32700/-32600 without id, -32601, -32602, -32020, -32021, -32022, -32603), a tool's
 * `ToolError`/argument error/defect becomes an `isError` result. A one-shot connection
 * (`presa-mcp/Connection`) runs it in the caller's fiber (interrupting it cancels the request). The
 * reply is a value the caller encodes: a handler's result JSON cannot carry (a `BigInt`, a cycle)
 * makes `JSON.stringify` throw there; a connection's transports check that encoding and answer
 * -32603 (or an `isError` result for `tools/call`) instead. A transport that reads a stream of
 * messages wants `Connection.make` instead (in-flight table, cancellation, server→client requests,
 * checked encoding).
 *
 * @since 0.1.0
 * @category combinators
 */
export const dispatch: (
  server: McpServer,
  message: unknown,
  options?: DispatchOptions
) => Effect.Effect<Option.Option<Reply>> = (server, message, options) =>
  Service.withInternal(server, (s) => Connection.dispatchOnce(s, JsonRpc.classify(message), options))

/**
 * The core: one JSON-RPC message in, at most one out. `message` is any decoded JSON value;
 * the result is the response to send, or none for notifications and responses.
 *
 * @since 0.1.0
 * @category combinators
 */
export const handleMessage = (
  server: McpServer,
  message: unknown,
  options?: DispatchOptions
): Effect.Effect<Option.Option<JsonRpc.Response>> =>
  Effect.map(dispatch(server, message, options), Option.map((r) => r.message))

/**
 * The 2026-07-28 HTTP header ↔ body agreement rule (SEP-2243): `MCP-Protocol-Version`,
 * `Mcp-Method`, `Mcp-Name` (and `Mcp-Param-*` when `inputSchema` of the called tool is given)
 * must be present and equal the body. Returns the -32020 `McpError` (HTTP 400), or none. Header
 * names are case-insensitive, values case-sensitive (trimmed); `=?base64?…?=` values are decoded.
 * Non-modern bodies and bodies missing required `_meta` keys are not judged here: the dispatcher
 * answers those with -32602 first.
 *
 * @since 0.1.0
 * @category combinators
 */
export const checkHeaders: (
  message: unknown,
  headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>,
  inputSchema?: JsonRpc.JsonObject
) => Option.Option<JsonRpc.McpError> = Headers.check

/**
 * The capabilities a server advertises now (derived from its definitions: `tools` only with
 * tools, `resources` with resources or templates, `prompts`, `completions` when any `complete`
 * exists, `logging` only with `logging: true`).
 *
 * @since 0.1.0
 * @category combinators
 */
export const capabilities = (server: McpServer): Effect.Effect<McpSchema.ServerCapabilities> => server.capabilities

/**
 * Adds a tool (an `Effect` over the snapshot `Ref`; requests in flight keep their snapshot).
 * Fails with `DefinitionError` on a duplicate name or a bad schema.
 *
 * Services: the add call requires the services the tool needs that the server does not offer
 * (see {@link McpServer}); it captures its environment and the handler sees it beneath the
 * request's (the same holds for every `add*`).
 *
 * @since 0.1.0
 * @category combinators
 */
export const addTool = <S, R>(
  server: McpServer<S>,
  tool: Tool.Tool<R>
): Effect.Effect<void, DefinitionError, Exclude<R, S | RequestContext>> =>
  Effect.flatMap(
    Effect.context<never>(),
    (context) => internal.addTool(Service.internal(server), Provide.tool(context, tool))
  )

/**
 * Removes a tool by name (no-op when absent).
 *
 * @since 0.1.0
 * @category combinators
 */
export const removeTool = (server: McpServer, name: string): Effect.Effect<void, DefinitionError> =>
  server.removeTool(name)

/**
 * Adds a static resource. Fails with `DefinitionError` on a duplicate URI.
 *
 * @since 0.1.0
 * @category combinators
 */
export const addResource = <S, R>(
  server: McpServer<S>,
  resource: Resource.Resource<R>
): Effect.Effect<void, DefinitionError, Exclude<R, S | RequestContext>> =>
  Effect.flatMap(
    Effect.context<never>(),
    (context) => internal.addResource(Service.internal(server), Provide.resource(context, resource))
  )

/**
 * Removes a static resource by URI.
 *
 * @since 0.1.0
 * @category combinators
 */
export const removeResource = (server: McpServer, uri: string): Effect.Effect<void, DefinitionError> =>
  server.removeResource(uri)

/**
 * Adds a resource template. Fails with `DefinitionError` on a bad or duplicate template.
 *
 * @since 0.1.0
 * @category combinators
 */
export const addResourceTemplate = <S, R>(
  server: McpServer<S>,
  template: Resource.ResourceTemplate<R>
): Effect.Effect<void, DefinitionError, Exclude<R, S | RequestContext>> =>
  Effect.flatMap(
    Effect.context<never>(),
    (context) => internal.addResourceTemplate(Service.internal(server), Provide.template(context, template))
  )

/**
 * Removes a resource template by its `uriTemplate`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const removeResourceTemplate = (server: McpServer, uriTemplate: string): Effect.Effect<void, DefinitionError> =>
  server.removeResourceTemplate(uriTemplate)

/**
 * Adds a prompt. Fails with `DefinitionError` on a duplicate name.
 *
 * @since 0.1.0
 * @category combinators
 */
export const addPrompt = <S, R>(
  server: McpServer<S>,
  prompt: Prompt.Prompt<R>
): Effect.Effect<void, DefinitionError, Exclude<R, S | RequestContext>> =>
  Effect.flatMap(
    Effect.context<never>(),
    (context) => internal.addPrompt(Service.internal(server), Provide.prompt(context, prompt))
  )

/**
 * Removes a prompt by name.
 *
 * @since 0.1.0
 * @category combinators
 */
export const removePrompt = (server: McpServer, name: string): Effect.Effect<void, DefinitionError> =>
  server.removePrompt(name)

/**
 * The server as a Layer providing {@link McpServer}, built from `options` with {@link make}: it
 * requires {@link Requirements} (provide them with `Layer.provide`, e.g. the app's database
 * layer). When its scope closes it runs `shutdown` (open `subscriptions/listen` requests end with
 * their result). Definitions can come with `options` or from the definition Layers ({@link tool},
 * {@link resource}, …); the service's type does not carry the server's services, so a definition
 * Layer requires what its handlers need.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <
  T extends Tool.Any = Tool.Tool,
  Res extends Resource.AnyResource = Resource.Resource,
  Tpl extends Resource.AnyTemplate = Resource.ResourceTemplate,
  P extends Prompt.Any = Prompt.Prompt,
  M extends Middleware.Any = Middleware.Middleware
>(
  options: Options<T, Res, Tpl, P, M>
): Layer.Layer<McpServer, DefinitionError, Requirements<T, Res, Tpl, P, M>> =>
  Layer.scoped(McpServer, Effect.acquireRelease(make(options), (server) => server.shutdown))

/**
 * Registers a definition for the lifetime of the calling Layer's scope: added when the Layer is
 * built, removed (ignoring a definition already gone) when its scope closes.
 */
const registered = (
  add: (server: McpServer) => Effect.Effect<void, DefinitionError>,
  remove: (server: McpServer) => Effect.Effect<void, DefinitionError>
): Effect.Effect<void, DefinitionError, McpServer | Scope.Scope> =>
  Effect.flatMap(McpServer, (server) => Effect.acquireRelease(add(server), () => Effect.ignore(remove(server))))

/**
 * A Layer that adds a tool to the {@link McpServer} of its context when it is built, and removes
 * it when its scope closes. It requires the services the tool's handler needs besides
 * `RequestContext` (provide them with `Layer.provide`, e.g. a `Greeter` layer): the handler sees
 * them beneath the request's own environment. Fails with `DefinitionError` (duplicate name, bad
 * schema).
 *
 * @example
 * ```ts
 * import * as Context from "effect/Context"
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import * as Schema from "effect/Schema"
 * import { McpServer, Resource, Tool } from "presa-mcp"
 *
 * class Greeter extends Context.Tag("app/Greeter")<Greeter, { readonly greet: (name: string) => string }>() {}
 * const greet = Tool.make({
 *   name: "greet",
 *   parameters: Schema.Struct({ name: Schema.String }),
 *   handler: ({ name }) => Effect.map(Greeter, (g) => g.greet(name))
 * })
 * const readme = Resource.make({ uri: "app://readme", name: "readme", handler: () => "hi" })
 *
 * // Layer<McpServer.McpServer, DefinitionError>: the app, with Greeter provided
 * const App = Layer.mergeAll(McpServer.tool(greet), McpServer.resource(readme)).pipe(
 *   Layer.provide(Layer.succeed(Greeter, { greet: (name) => `Hello, ${name}!` })),
 *   Layer.provideMerge(McpServer.layer({ name: "app", version: "1.0.0" }))
 * )
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const tool = <T extends Tool.Any>(
  tool: T
): Layer.Layer<never, DefinitionError, McpServer | Exclude<Tool.Services<T>, RequestContext>> =>
  Layer.scopedDiscard(
    Effect.flatMap(Effect.context<never>(), (context) => {
      const provided = Provide.tool(context, tool)
      return registered(
        (server) => internal.addTool(Service.internal(server), provided),
        (server) => server.removeTool(tool.name)
      )
    })
  )

/**
 * A Layer that adds a static resource to the {@link McpServer} of its context (removed when its
 * scope closes); it requires what the resource's handler needs besides `RequestContext`. Fails
 * with `DefinitionError` (duplicate URI).
 *
 * @since 0.2.0
 * @category layers
 */
export const resource = <D extends Resource.AnyResource>(
  resource: D
): Layer.Layer<never, DefinitionError, McpServer | Exclude<Resource.Services<D>, RequestContext>> =>
  Layer.scopedDiscard(
    Effect.flatMap(Effect.context<never>(), (context) => {
      const provided = Provide.resource(context, resource)
      return registered(
        (server) => internal.addResource(Service.internal(server), provided),
        (server) => server.removeResource(resource.uri)
      )
    })
  )

/**
 * A Layer that adds a resource template to the {@link McpServer} of its context (removed when
 * its scope closes); it requires what the template's handler and completions need besides
 * `RequestContext`. Fails with `DefinitionError` (bad or duplicate template).
 *
 * @since 0.2.0
 * @category layers
 */
export const resourceTemplate = <D extends Resource.AnyTemplate>(
  template: D
): Layer.Layer<never, DefinitionError, McpServer | Exclude<Resource.Services<D>, RequestContext>> =>
  Layer.scopedDiscard(
    Effect.flatMap(Effect.context<never>(), (context) => {
      const provided = Provide.template(context, template)
      return registered(
        (server) => internal.addResourceTemplate(Service.internal(server), provided),
        (server) => server.removeResourceTemplate(template.uriTemplate)
      )
    })
  )

/**
 * A Layer that adds a prompt to the {@link McpServer} of its context (removed when its scope
 * closes); it requires what the prompt's handler and completions need besides `RequestContext`.
 * Fails with `DefinitionError` (duplicate name).
 *
 * @since 0.2.0
 * @category layers
 */
export const prompt = <P extends Prompt.Any>(
  prompt: P
): Layer.Layer<never, DefinitionError, McpServer | Exclude<Prompt.Services<P>, RequestContext>> =>
  Layer.scopedDiscard(
    Effect.flatMap(Effect.context<never>(), (context) => {
      const provided = Provide.prompt(context, prompt)
      return registered(
        (server) => internal.addPrompt(Service.internal(server), provided),
        (server) => server.removePrompt(prompt.name)
      )
    })
  )

/**
 * A Layer that adds a skill to the {@link McpServer} of its context (its files become resources;
 * removed when its scope closes). Fails with `DefinitionError` only on a clash the server refuses.
 *
 * @since 0.2.0
 * @category layers
 */
export const skill = (skill: Skill.Skill): Layer.Layer<never, DefinitionError, McpServer> =>
  Layer.scopedDiscard(registered((server) => server.addSkill(skill), (server) => server.removeSkill(skill.uri)))

const partEffect = (
  part: Part.Any | Effect.Effect<Part.Any, unknown, unknown>
): Effect.Effect<Part.Any, unknown, unknown> => Effect.isEffect(part) ? part : Effect.succeed(part)

/**
 * A Layer that adds every definition of a part (see the `Part` module) to the {@link McpServer}
 * of its context, and removes them when its scope closes. A part given as an Effect is built
 * first, in the Layer's scope (its requirements and errors are the Layer's). The Layer requires
 * what the part's handlers need besides `RequestContext`. Fails with `DefinitionError` on the
 * first definition the server refuses (those added before it are removed). A part's
 * `instructions` are not used here: the server's instructions come from its options (use
 * `Part.layer` to merge them).
 *
 * @since 0.2.0
 * @category layers
 */
export const part = <P extends Part.Any | Effect.Effect<Part.Any, unknown, unknown>>(
  part: P
): Layer.Layer<
  never,
  DefinitionError | (P extends Effect.Effect<infer _A, infer E, infer _R> ? E : never),
  | McpServer
  | Exclude<Part.Services<P>, RequestContext>
  | Exclude<P extends Effect.Effect<infer _A, infer _E, infer R> ? R : never, Scope.Scope>
> => {
  const built = partEffect(part)
  const layer: Layer.Layer<never, unknown, unknown> = Layer.scopedDiscard(Effect.gen(function*() {
    const p = yield* built
    const context = yield* Effect.context<never>()
    const server = Service.internal(yield* McpServer)
    const add = (
      effect: Effect.Effect<void, DefinitionError>,
      remove: Effect.Effect<void, DefinitionError>
    ) => Effect.acquireRelease(effect, () => Effect.ignore(remove))
    // Resources before tools: a tool linking an MCP Apps view needs the view served first (and
    // is removed before it).
    for (const r of p.resources ?? []) {
      yield* add(internal.addResource(server, Provide.resource(context, r)), server.removeResource(r.uri))
    }
    for (const t of p.resourceTemplates ?? []) {
      yield* add(
        internal.addResourceTemplate(server, Provide.template(context, t)),
        server.removeResourceTemplate(t.uriTemplate)
      )
    }
    for (const t of p.tools ?? []) {
      yield* add(internal.addTool(server, Provide.tool(context, t)), server.removeTool(t.name))
    }
    for (const q of p.prompts ?? []) {
      yield* add(internal.addPrompt(server, Provide.prompt(context, q)), server.removePrompt(q.name))
    }
    for (const k of p.skills ?? []) yield* add(server.addSkill(k), server.removeSkill(k.uri))
  }))
  // The part's own requirements and errors are erased above (its type is a union of a record
  // and an Effect); the signature states them.
  return erase<
    Layer.Layer<
      never,
      DefinitionError | (P extends Effect.Effect<infer _A, infer E, infer _R> ? E : never),
      | McpServer
      | Exclude<Part.Services<P>, RequestContext>
      | Exclude<P extends Effect.Effect<infer _A, infer _E, infer R> ? R : never, Scope.Scope>
    >
  >(layer)
}

/**
 * A change event: a list changed (`tools`, `prompts`, `resources`) or a resource's contents were
 * updated; since 0.2.0 also `TaskStatus`, a task's record changed (see `Cluster.ChangeEvent`).
 *
 * @since 0.1.0
 * @category models
 */
export type ChangeEvent = internal.ChangeEvent

/**
 * Announces that a list changed (the live add/remove calls do this themselves). Modern clients
 * that listen for that kind get `notifications/<kind>/list_changed` tagged with their subscription
 * id; legacy sessions get it when `listChanged` is on (MCP 2026-07-28, Subscriptions; MCP 2025-11-25, list_changed notifications).
 *
 * @since 0.1.0
 * @category combinators
 */
export const listChanged = (server: McpServer, kind: "tools" | "prompts" | "resources"): Effect.Effect<void> =>
  server.listChanged(kind)

/**
 * Announces that a resource's contents changed: `notifications/resources/updated {uri}` to the
 * listen streams and legacy sessions subscribed to `uri`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const resourceUpdated = (server: McpServer, uri: string): Effect.Effect<void> => server.resourceUpdated(uri)

/**
 * Ends every open `subscriptions/listen` gracefully: each gets its result
 * `{resultType: "complete", _meta: {subscriptionId}}` (MCP 2026-07-28, Subscriptions). Transports call it when
 * they stop.
 *
 * @since 0.1.0
 * @category combinators
 */
export const shutdown = (server: McpServer): Effect.Effect<void> => server.shutdown

/**
 * The unsolicited notifications of a legacy session (list changes when `listChanged` is on,
 * resource updates for its subscribed URIs), from `notifications/initialized` on, coalesced (a
 * burst of changes is one notification per kind and URI). The subscription is taken when the
 * Effect runs and lasts while its Scope is open, so no change between subscribing and draining
 * is lost. Transports drain the stream onto the session's channel (the stdio pipe, the HTTP GET
 * stream).
 *
 * @since 0.1.0
 * @category combinators
 */
export const sessionNotifications = (
  server: McpServer,
  session: Session
): Effect.Effect<Stream.Stream<JsonRpc.Notification>, never, Scope.Scope> =>
  Service.withInternal(server, (s) => internal.sessionNotifications(s, session))

/**
 * Sends progress for the request in flight (see `RequestContextShape.progress`): only with a
 * `progressToken`, increasing values, bounded. Yields whether it was sent.
 *
 * @since 0.1.0
 * @category combinators
 */
export const progress = (
  ctx: RequestContextShape,
  value: number,
  options?: { readonly total?: number; readonly message?: string }
): Effect.Effect<boolean> => ctx.progress(value, options)

/**
 * Sends a log message for the request in flight (see `RequestContextShape.log`): at or above the
 * requested level, bounded; a dropped message yields `false`, never an error.
 *
 * @since 0.1.0
 * @category combinators
 */
export const log = (
  ctx: RequestContextShape,
  level: McpSchema.LoggingLevel,
  data: unknown,
  logger?: string
): Effect.Effect<boolean> => ctx.log(level, data, logger)

/**
 * Adds a skill (or replaces the one at the same path): its files become resources, it appears in
 * `skills/list` (unless unlisted), and listening clients get a resources list change. Fails with
 * `DefinitionError` only on a clash the snapshot refuses.
 *
 * @since 0.1.0
 * @category combinators
 */
export const addSkill = (server: McpServer, skill: Skill.Skill): Effect.Effect<void, DefinitionError> =>
  server.addSkill(skill)

/**
 * Removes the skill whose SKILL.md URI is `uri`; its files go with it.
 *
 * @since 0.1.0
 * @category combinators
 */
export const removeSkill = (server: McpServer, uri: string): Effect.Effect<void, DefinitionError> =>
  server.removeSkill(uri)

/**
 * A visibility predicate (for a definition's `visible`) that requires the caller's token to carry
 * every scope in `scopes` (`ctx.auth.scopes`). Callers without them do not see the definition in
 * any list, and naming it gets the same error as an unknown one (no existence leak).
 *
 * @since 0.1.0
 * @category constructors
 */
export const requireScopes: (
  scopes: ReadonlyArray<string>
) => (ctx: RequestContextShape) => boolean | PromiseLike<boolean> | Effect.Effect<boolean> = Visibility.requireScopes
