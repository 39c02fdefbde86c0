/**
 * MCP Apps (the `io.modelcontextprotocol/ui` extension, SEP-1865, stable revision 2026-01-26):
 * interactive views a host renders in a sandboxed iframe next to a tool's result.
 *
 * - A **view** ({@link view}) is a `ui://` resource served as `text/html;profile=mcp-app` (text or
 *   base64 blob) whose contents carry `_meta.ui` (CSP domains, permissions, dedicated domain,
 *   border preference), declared once and typed ({@link ResourceMeta}).
 * - An **app tool** ({@link tool}) links a view with `_meta.ui.resourceUri` and says who may call
 *   it (`visibility`: `["model", "app"]` by default, `["app"]` for a tool only the view calls).
 *   Schema-first like `Tool.make`: the `success` Schema's encoded value is the `structuredContent`
 *   the view receives; the text content is what a host without the extension shows.
 * - The host's capability ({@link hostCapability}, {@link supportsViews}) is read from the request
 *   context in both eras (legacy: `initialize` capabilities; 2026-07-28: the client capabilities
 *   of each request's `_meta`), so a handler can tell whether a view will be shown.
 * - Client side: {@link toolMeta} decodes a listed tool's `_meta.ui`, {@link readView} reads and
 *   decodes a view; `McpClient.Options.apps` declares the extension.
 *
 * Views and app tools are ordinary resources and tools: they go in `McpServer.make` options, in
 * `Part`s, and in the definition Layers (`McpServer.resource`, `McpServer.tool`, `McpServer.part`).
 * Misuse is a `DefinitionError` when the server is built or changed: a view whose URI is not
 * `ui://`, an app tool linking a view the server does not serve (a view is added before the tools
 * that link it: options and parts do this; with single Layers, provide the view's Layer to the
 * tool's).
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Encoding from "effect/Encoding"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Content from "./Content.js"
import { ClientError } from "./Errors.js"
import { type HandlerResult, lift } from "./Handler.js"
import type { InputRequired } from "./Input.js"
import * as meta from "./internal/appMeta.js"
import { erase } from "./internal/erase.js"
import * as internal from "./internal/server/apps.js"
import * as JsonRpc from "./JsonRpc.js"
import type * as McpClient from "./McpClient.js"
import type * as McpSchema from "./McpSchema.js"
import type { RequestContext, RequestContextShape } from "./RequestContext.js"
import type * as Resource from "./Resource.js"
import * as Tool from "./Tool.js"

/** A definition's per-caller visibility predicate (as `Tool.Tool`'s and `Resource.Resource`'s). */
type Predicate = (ctx: RequestContextShape) => boolean | PromiseLike<boolean> | Effect.Effect<boolean>

// ---------------------------------------------------------------------------------------------
// wire constants and schemas
// ---------------------------------------------------------------------------------------------

/**
 * The extension identifier, `"io.modelcontextprotocol/ui"`: a host declares it under
 * `capabilities.extensions` with its {@link HostCapability} settings (spec: Client<>Server
 * Capability Negotiation).
 *
 * @since 0.2.0
 * @category constants
 */
export const EXTENSION_ID: "io.modelcontextprotocol/ui" = internal.EXTENSION_ID

/**
 * The MIME type of an HTML view, `"text/html;profile=mcp-app"` (spec: UI Resource Format): a
 * view's resource and its contents carry it, and a host lists it in its `mimeTypes`.
 *
 * @since 0.2.0
 * @category constants
 */
export const MIME_TYPE: "text/html;profile=mcp-app" = internal.MIME_TYPE

/**
 * The deprecated flat tool `_meta` key, `"ui/resourceUri"`, which {@link tool} also sets (to the
 * same URI as `_meta.ui.resourceUri`) for hosts that still read it; {@link toolMeta} falls back
 * to it.
 *
 * @since 0.2.0
 * @category constants
 */
export const LEGACY_RESOURCE_URI_KEY: "ui/resourceUri" = internal.LEGACY_RESOURCE_URI_KEY

const Domains = Schema.optional(Schema.Array(Schema.String))

/**
 * `McpUiResourceCsp`: the origins a view needs, which the host turns into its iframe's
 * Content-Security-Policy. Each list empty or absent means none (the host's restrictive default).
 *
 * - `connectDomains`: fetch/XHR/WebSocket origins (`connect-src`);
 * - `resourceDomains`: scripts, images, styles, fonts, media (`script-src`, `img-src`,
 *   `style-src`, `font-src`, `media-src`); wildcard subdomains such as `https://*.example.com`;
 * - `frameDomains`: nested iframes (`frame-src`; absent: `'none'`);
 * - `baseUriDomains`: the document's base URIs (`base-uri`; absent: `'self'`).
 *
 * @since 0.2.0
 * @category models
 */
export const Csp = Schema.Struct({
  connectDomains: Domains,
  resourceDomains: Domains,
  frameDomains: Domains,
  baseUriDomains: Domains
})

/**
 * @since 0.2.0
 * @category models
 */
export type Csp = typeof Csp.Type

const Granted = Schema.optional(Schema.Struct({}))

/**
 * `McpUiResourcePermissions`: browser features a view asks for (Permission Policy `camera`,
 * `microphone`, `geolocation`, `clipboard-write`), each as `{}`. A host MAY grant them; a view
 * should not assume it did.
 *
 * @since 0.2.0
 * @category models
 */
export const Permissions = Schema.Struct({
  camera: Granted,
  microphone: Granted,
  geolocation: Granted,
  clipboardWrite: Granted
})

/**
 * @since 0.2.0
 * @category models
 */
export type Permissions = typeof Permissions.Type

/**
 * `McpUiResourceMeta`, the `_meta.ui` of a view (on its listing and on its contents):
 * `csp` ({@link Csp}), `permissions` ({@link Permissions}), `domain` (a dedicated sandbox origin,
 * in the format the host documents), `prefersBorder` (`true`: the host draws a border and
 * background; `false`: none; absent: the host decides).
 *
 * @since 0.2.0
 * @category models
 */
export const ResourceMeta = Schema.Struct({
  csp: Schema.optional(Csp),
  permissions: Schema.optional(Permissions),
  domain: Schema.optional(Schema.String),
  prefersBorder: Schema.optional(Schema.Boolean)
})

/**
 * @since 0.2.0
 * @category models
 */
export type ResourceMeta = typeof ResourceMeta.Type

/**
 * Who may call a tool: `"model"` (the agent sees and calls it) and/or `"app"` (a view of the same
 * server calls it).
 *
 * @since 0.2.0
 * @category models
 */
export const Visibility: typeof meta.Visibility = meta.Visibility

/**
 * @since 0.2.0
 * @category models
 */
export type Visibility = typeof Visibility.Type

/**
 * The default visibility, `["model", "app"]`.
 *
 * @since 0.2.0
 * @category constants
 */
export const DEFAULT_VISIBILITY: ReadonlyArray<Visibility> = meta.DEFAULT_VISIBILITY

/**
 * `McpUiToolMeta`, the `_meta.ui` of a tool: `resourceUri` (the view that renders its results)
 * and `visibility` (absent: {@link DEFAULT_VISIBILITY}).
 *
 * @since 0.2.0
 * @category models
 */
export const ToolMeta: typeof meta.ToolMeta = meta.ToolMeta

/**
 * @since 0.2.0
 * @category models
 */
export type ToolMeta = typeof ToolMeta.Type

/**
 * `McpUiClientCapabilities`, the settings a host declares under
 * `capabilities.extensions["io.modelcontextprotocol/ui"]`: `mimeTypes`, the view content types
 * it renders (must include {@link MIME_TYPE}).
 *
 * @since 0.2.0
 * @category models
 */
export const HostCapability: typeof meta.HostCapability = meta.HostCapability

/**
 * @since 0.2.0
 * @category models
 */
export type HostCapability = typeof HostCapability.Type

/**
 * The capability a host that renders HTML views declares:
 * `{mimeTypes: ["text/html;profile=mcp-app"]}` (what `McpClient.Options.apps` sends).
 *
 * @since 0.2.0
 * @category constants
 */
export const HOST_CAPABILITY: HostCapability = { mimeTypes: [internal.MIME_TYPE] }

// ---------------------------------------------------------------------------------------------
// server: views
// ---------------------------------------------------------------------------------------------

/**
 * A view's HTML: a string (sent as `text`), bytes (sent as base64 `blob`), or a function of the
 * request context yielding either (a value, a Promise or an Effect needing services `R`; it may
 * fail with `McpError`, which answers the `resources/read`).
 *
 * @since 0.2.0
 * @category models
 */
export type Html<R = never> =
  | string
  | Uint8Array
  | ((ctx: RequestContextShape) => HandlerResult<string | Uint8Array, JsonRpc.McpError | InputRequired, R>)

/**
 * What {@link view} takes: the resource's identity (`uri`, which must start with `ui://`;
 * `name`, `title`, `description`, `icons`, `annotations`, `_meta`, `visible` as for any
 * resource), its `html` ({@link Html}) and its `ui` metadata ({@link ResourceMeta}; default none).
 *
 * @since 0.2.0
 * @category models
 */
export interface ViewOptions<R = never> {
  readonly uri: string
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly icons?: ReadonlyArray<McpSchema.Icon>
  readonly annotations?: McpSchema.Annotations
  readonly _meta?: JsonRpc.JsonObject
  readonly visible?: Predicate
  readonly html: Html<R>
  readonly ui?: ResourceMeta
}

/**
 * A view: a static resource (it goes wherever a `Resource.Resource` goes) whose `mimeType` is
 * {@link MIME_TYPE}, with its `ui` metadata at hand.
 *
 * @since 0.2.0
 * @category models
 */
export interface View<R = never> extends Resource.Resource<R> {
  readonly mimeType: typeof internal.MIME_TYPE
  readonly ui: ResourceMeta
}

const isEmpty = (o: object): boolean => Object.keys(o).length === 0

/**
 * Defines a view. `resources/list` shows it with `mimeType: "text/html;profile=mcp-app"` and,
 * when `ui` is given, `_meta.ui`; `resources/read` answers one contents
 * `{uri, mimeType: "text/html;profile=mcp-app", text | blob, _meta: {ui}}` (`_meta` only when `ui`
 * is given). A URI that does not start with `ui://` is refused with `DefinitionError` when the
 * server is built or the view added.
 *
 * @example
 * ```ts
 * import { App } from "presa-mcp"
 *
 * const board = App.view({
 *   uri: "ui://dice/board",
 *   name: "board",
 *   html: "<!doctype html><html><body><div id=\"result\"></div></body></html>",
 *   ui: { prefersBorder: true, csp: { connectDomains: ["https://api.example.com"] } }
 * })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const view = <R = never>(options: ViewOptions<R>): View<Exclude<R, RequestContext>> => {
  const { html, ui = {}, _meta, ...common } = options
  const contentMeta = isEmpty(ui) ? {} : { _meta: { ui } }
  const listedMeta = isEmpty(ui) ? _meta : { ..._meta, ui }
  const made = {
    ...common,
    mimeType: internal.MIME_TYPE,
    ui,
    ...(listedMeta === undefined ? {} : { _meta: listedMeta }),
    handler: (uri: string, ctx: RequestContextShape) =>
      Effect.map(
        lift(() => typeof html === "function" ? html(ctx) : html),
        (body): ReadonlyArray<McpSchema.ResourceContents> => [
          { ...Content.resourceContents(uri, body, internal.MIME_TYPE), ...contentMeta }
        ]
      ),
    [internal.ViewMark]: true
  }
  // `R` as inferred may include `RequestContext` (always provided): the result type drops it.
  return erase<View<Exclude<R, RequestContext>>>(made)
}

// ---------------------------------------------------------------------------------------------
// server: app tools
// ---------------------------------------------------------------------------------------------

/**
 * What {@link tool} takes: a tool's identity and hints (`name`, `title`, `description`,
 * `annotations`, `icons`, `_meta`, `visible`, `task`: `Tool.Common`, as for `Tool.make`), and:
 *
 * - `view`: the {@link View} that renders its results (its URI becomes `_meta.ui.resourceUri`);
 * - `visibility`: who may call it (default {@link DEFAULT_VISIBILITY}; `["app"]`: only the view);
 * - `parameters`: the arguments' Schema (default none, `{}`);
 * - `success`: the result's Schema; its encoded value is the `structuredContent` the view gets
 *   (a non-object is sent as `{value}`), and the tool's `outputSchema` is derived from it;
 * - `text`: the text content for the model and for hosts without the extension (default: the
 *   JSON of `structuredContent`);
 * - `handler`: gets the decoded arguments and the request context, yields the success value; fails
 *   with `ToolError` (an `isError` result), `McpError` (a JSON-RPC error) or asks for input.
 *
 * @since 0.2.0
 * @category models
 */
export interface AppTool<A, I, O, OI, R = never> extends Tool.Common {
  readonly view: View<unknown>
  readonly visibility?: ReadonlyArray<Visibility>
  readonly parameters?: Schema.Schema<A, I>
  readonly success: Schema.Schema<O, OI>
  readonly text?: (value: O) => string
  readonly handler: (
    args: A,
    ctx: RequestContextShape
  ) => HandlerResult<O, Tool.ToolError | JsonRpc.McpError | InputRequired, R>
}

/**
 * Defines a tool linked to a view. `tools/list` shows it with
 * `_meta.ui = {resourceUri, visibility}` (and the deprecated flat `_meta["ui/resourceUri"]`), an
 * `inputSchema` from `parameters` and an `outputSchema` from `success`; `tools/call` answers
 * `{content: [{type: "text", text}], structuredContent}`.
 *
 * A tool whose `visibility` leaves out `"model"` is listed (and callable) only for hosts that
 * declare the extension with {@link MIME_TYPE} ({@link supportsViews}): a host without it would
 * show the tool to the model, which the server asked it not to. Its own `visible` predicate, if
 * any, is asked after that. A model-visible app tool is served to every host: one without the
 * extension gets the text content.
 *
 * Refused with `DefinitionError` when the server is built or the tool added: the view is not
 * served by the server (add it with the tool, or before).
 *
 * @example
 * ```ts
 * import * as Schema from "effect/Schema"
 * import { App, McpServer } from "presa-mcp"
 *
 * const board = App.view({ uri: "ui://dice/board", name: "board", html: "<!doctype html><html></html>" })
 * const roll = App.tool({
 *   name: "roll",
 *   description: "Rolls dice and shows them on a board",
 *   view: board,
 *   parameters: Schema.Struct({ count: Schema.Int }),
 *   success: Schema.Struct({ dice: Schema.Array(Schema.Int) }),
 *   text: ({ dice }) => `rolled ${dice.join(", ")}`,
 *   handler: ({ count }) => ({ dice: Array.from({ length: count }, () => 1 + Math.floor(Math.random() * 6)) })
 * })
 * const server = McpServer.make({ name: "dice", version: "1.0.0", tools: [roll], resources: [board] })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const tool: {
  <O, OI, R = never>(
    tool: AppTool<Tool.NoArguments, Tool.NoArguments, O, OI, R> & { readonly parameters?: undefined }
  ): Tool.Tool<Exclude<R, RequestContext>>
  <A, I, O, OI, R = never>(
    tool: AppTool<A, I, O, OI, R> & { readonly parameters: Schema.Schema<A, I> }
  ): Tool.Tool<Exclude<R, RequestContext>>
} = <A, I, O, OI, R>(options: AppTool<A, I, O, OI, R>): Tool.Tool<Exclude<R, RequestContext>> => {
  const { _meta, handler, parameters, success, text, view: linked, visibility, visible, ...common } = options
  const who = visibility ?? DEFAULT_VISIBILITY
  const encode = Schema.encode(success)
  const derived = Tool.deriveJsonSchema(success)
  const outputSchema = derived.type === "object"
    ? derived
    : { type: "object", properties: { value: derived }, required: ["value"] }
  const respond = (value: O) =>
    Effect.map(Effect.orDie(encode(value)), (encoded): McpSchema.CallToolResult => {
      const structuredContent = outputSchema === derived && JsonRpc.isObject(encoded) ? encoded : { value: encoded }
      return {
        content: [{ type: "text", text: text === undefined ? JSON.stringify(structuredContent) : text(value) }],
        structuredContent
      }
    })
  const run = (args: A, ctx: RequestContextShape) => Effect.flatMap(lift(() => handler(args, ctx)), respond)
  const made = parameters === undefined
    // No `parameters` (the first overload): `A` is `Tool.NoArguments`, the empty object.
    ? Tool.make({ ...common, handler: (_args, ctx) => run(NO_ARGUMENTS as A, ctx) })
    : Tool.make({ ...common, parameters, handler: run })
  const appOnly = !who.includes("model")
  const gate: Predicate | undefined = appOnly
    ? (ctx) => (supportsViews(ctx) ? (visible === undefined ? true : visible(ctx)) : false)
    : visible
  const linkedTool = {
    ...made,
    outputSchema,
    _meta: {
      ..._meta,
      ui: { resourceUri: linked.uri, visibility: [...who] },
      [internal.LEGACY_RESOURCE_URI_KEY]: linked.uri
    },
    ...(gate === undefined ? {} : { visible: gate }),
    [internal.ToolMark]: true
  }
  return linkedTool
}

const NO_ARGUMENTS: Tool.NoArguments = {}

// ---------------------------------------------------------------------------------------------
// server: the host's capability
// ---------------------------------------------------------------------------------------------

/**
 * The host's `io.modelcontextprotocol/ui` settings for the request being served: from
 * `ctx.clientCapabilities.extensions` (legacy: what the client declared in `initialize`;
 * 2026-07-28: the client capabilities in the request's `_meta`). `None` when the host did not
 * declare the extension, or declared it in a shape that is not {@link HostCapability}.
 *
 * @since 0.2.0
 * @category combinators
 */
export const hostCapability = (
  ctx: { readonly clientCapabilities: McpSchema.ClientCapabilities }
): Option.Option<HostCapability> => meta.hostCapability(ctx.clientCapabilities)

/**
 * Will the host render this server's views? `true` when it declared the extension with
 * {@link MIME_TYPE} among its `mimeTypes` (the spec makes `mimeTypes` REQUIRED: an empty `{}` entry
 * is not enough). A handler uses it to shape its text fallback; a `visible` predicate to offer a
 * tool only to such hosts. The same check decides which callers a proxy (`McpProxy`) lists app-only
 * tools to.
 *
 * @since 0.2.0
 * @category combinators
 */
export const supportsViews = (ctx: { readonly clientCapabilities: McpSchema.ClientCapabilities }): boolean =>
  meta.supportsViews(ctx.clientCapabilities)

// ---------------------------------------------------------------------------------------------
// client: a tool's UI metadata and its view
// ---------------------------------------------------------------------------------------------

/**
 * A listed tool's UI metadata: its `_meta.ui` decoded as {@link ToolMeta}, with `resourceUri`
 * taken from the deprecated flat `_meta["ui/resourceUri"]` when `_meta.ui` has none. `None` when
 * the tool has neither, or its `_meta.ui` is not a valid `McpUiToolMeta` (not an object, a
 * `resourceUri` that is not a string, a `visibility` that is not an array of `"model"` / `"app"`):
 * such a tool links no view and is visible to no one ({@link isVisibleTo}). `AppHost` and
 * `McpProxy` read `_meta.ui` by the same rule.
 *
 * @since 0.2.0
 * @category decoding
 */
export const toolMeta = (tool: { readonly _meta?: JsonRpc.JsonObject | undefined }): Option.Option<ToolMeta> =>
  meta.toolMeta(tool._meta)

/**
 * Does a tool's visibility include `who`? Absent UI metadata or visibility counts as
 * {@link DEFAULT_VISIBILITY} (a host lists for the model only tools visible to `"model"`, and lets
 * a view call only tools visible to `"app"`). A malformed `_meta.ui` ({@link toolMeta} is `None`
 * although `_meta.ui` is present) is visible to no one: the server declared a restriction the
 * host cannot read, and a host that guessed `["model", "app"]` would show an app-only tool to the
 * model (2026-01-26, Visibility: "Host MUST NOT include tools in the agent's tool list when their
 * visibility does not include "model""). `AppHost.visibility` and `McpProxy` apply the same rule.
 *
 * @since 0.2.0
 * @category guards
 */
export const isVisibleTo = (tool: { readonly _meta?: JsonRpc.JsonObject | undefined }, who: Visibility): boolean =>
  meta.visibility(tool._meta).includes(who)

/**
 * A view as a host reads it: `uri`, `mimeType` ({@link MIME_TYPE}), `html` (the text, or the
 * blob decoded from base64 as UTF-8), `ui` (the contents' `_meta.ui`, decoded; `{}` when absent)
 * and the contents' whole `_meta`.
 *
 * @since 0.2.0
 * @category models
 */
export interface ViewContents {
  readonly uri: string
  readonly mimeType: typeof internal.MIME_TYPE
  readonly html: string
  readonly ui: ResourceMeta
  readonly _meta: JsonRpc.JsonObject
}

const decodeResourceMeta = Schema.decodeUnknownEither(ResourceMeta)

const invalid = (uri: string, why: string) =>
  new ClientError({ reason: "InvalidResult", message: `view ${uri}: ${why}` })

/**
 * Decodes a `resources/read` result as a view: its first contents whose `mimeType` is
 * {@link MIME_TYPE}. Fails with `ClientError` "InvalidResult" when there is none, when a blob is
 * not base64, or when `_meta.ui` is not a valid {@link ResourceMeta}.
 *
 * @since 0.2.0
 * @category decoding
 */
export const decodeView = (
  uri: string,
  result: McpSchema.ReadResourceResult
): Either.Either<ViewContents, ClientError> => {
  const contents = result.contents.find((c) => c.mimeType === internal.MIME_TYPE)
  if (contents === undefined) return Either.left(invalid(uri, `no contents of type ${internal.MIME_TYPE}`))
  const html = "text" in contents
    ? Either.right(contents.text)
    : Either.mapLeft(Encoding.decodeBase64String(contents.blob), () => invalid(uri, "blob is not base64"))
  const meta = contents._meta ?? {}
  const ui = meta.ui === undefined
    ? Either.right<ResourceMeta>({})
    : Either.mapLeft(decodeResourceMeta(meta.ui), (e) => invalid(uri, `_meta.ui: ${e.message}`))
  return Either.all({ html, ui }).pipe(
    Either.map(({ html, ui }) => ({ uri: contents.uri, mimeType: internal.MIME_TYPE, html, ui, _meta: meta }))
  )
}

/**
 * Reads a view with `resources/read` and decodes it ({@link decodeView}). Fails with the call's
 * errors (`McpError` -32602 for an unknown URI, `TransportError`, `ClientError`) or with
 * `ClientError` "InvalidResult" when the result is not a view.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Option from "effect/Option"
 * import { App, McpClient } from "presa-mcp"
 *
 * const showable = (client: McpClient.McpClient, toolName: string) =>
 *   Effect.gen(function*() {
 *     const tools = yield* client.listAllTools
 *     const uri = Option.flatMap(
 *       Option.fromNullable(tools.find((t) => t.name === toolName)),
 *       (t) => Option.flatMap(App.toolMeta(t), (m) => Option.fromNullable(m.resourceUri))
 *     )
 *     if (Option.isNone(uri)) return undefined
 *     const view = yield* App.readView(client, uri.value)
 *     return { html: view.html, csp: view.ui.csp }
 *   })
 * ```
 *
 * @since 0.2.0
 * @category combinators
 */
export const readView = (
  client: McpClient.McpClient,
  uri: string
): Effect.Effect<ViewContents, McpClient.CallError> =>
  Effect.flatMap(client.readResource(uri), (result) => decodeView(uri, result))
