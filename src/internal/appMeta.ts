/**
 * MCP Apps metadata (`io.modelcontextprotocol/ui`, stable revision 2026-01-26) as every reader in
 * the library sees it: the `App` module (servers and clients), the host bridge (`AppHost`, bundled
 * for the browser: this module imports no Node API) and the proxy. One rule each:
 *
 * - **A tool's `_meta.ui`** ("Resource Discovery"): absent, the tool is visible to the model and to
 *   views (`["model", "app"]`) and links the view of the deprecated flat `_meta["ui/resourceUri"]`,
 *   if any. Present, it must decode as `McpUiToolMeta` (an object; `resourceUri` a string;
 *   `visibility` an array of `"model"` / `"app"`; other keys ignored). When it does not (a
 *   `visibility` of `"app"` instead of `["app"]`, an unknown audience such as `["model", "root"]`,
 *   a `resourceUri` of `3`), the tool is visible to **neither** audience and links no view: the
 *   server declared a restriction the host cannot read, so the host does not guess it away (showing
 *   an app-only tool to the model is exactly what the spec's "Host MUST NOT include…" forbids).
 * - **The host declares the extension** ("Client<>Server Capability Negotiation"): its
 *   `capabilities.extensions["io.modelcontextprotocol/ui"]` decodes as `McpUiClientCapabilities`
 *   and its `mimeTypes` (REQUIRED by the spec) include `text/html;profile=mcp-app`. An empty entry
 *   (`{}`) is not a host that renders views.
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as JsonRpc from "../JsonRpc.js"
import type * as McpSchema from "../McpSchema.js"

/** The extension identifier (spec: Client<>Server Capability Negotiation). */
export const EXTENSION_ID = "io.modelcontextprotocol/ui"

/** The MIME type of an HTML view (spec: UI Resource Format). */
export const MIME_TYPE = "text/html;profile=mcp-app"

/** The deprecated flat tool `_meta` key some hosts still read (spec: Resource Discovery). */
export const LEGACY_RESOURCE_URI_KEY = "ui/resourceUri"

/** `McpUiToolVisibility`. */
export const Visibility = Schema.Literal("model", "app")

/** The default visibility, when `_meta.ui` or its `visibility` is absent. */
export const DEFAULT_VISIBILITY: ReadonlyArray<typeof Visibility.Type> = ["model", "app"]

/** `McpUiToolMeta`. */
export const ToolMeta = Schema.Struct({
  resourceUri: Schema.optional(Schema.String),
  visibility: Schema.optional(Schema.Array(Visibility))
})

/** `McpUiClientCapabilities`. */
export const HostCapability = Schema.Struct({
  mimeTypes: Schema.optional(Schema.Array(Schema.String))
})

const decodeToolMeta = Schema.decodeUnknownOption(ToolMeta)
const decodeHostCapability = Schema.decodeUnknownOption(HostCapability)

/** A tool's `_meta.ui`, read by the rule above: `None` when absent (and no flat key) or malformed. */
export const toolMeta = (meta: JsonRpc.JsonObject | undefined): Option.Option<typeof ToolMeta.Type> => {
  const ui = meta?.ui
  const flat = meta?.[LEGACY_RESOURCE_URI_KEY]
  const legacy = typeof flat === "string" ? { resourceUri: flat } : undefined
  if (ui === undefined) return Option.fromNullable(legacy)
  return Option.map(
    decodeToolMeta(ui),
    (decoded) => decoded.resourceUri === undefined && legacy !== undefined ? { ...decoded, ...legacy } : decoded
  )
}

/** Who may call a tool: the default when `_meta.ui` is absent, none when it is malformed. */
export const visibility = (meta: JsonRpc.JsonObject | undefined): ReadonlyArray<typeof Visibility.Type> =>
  Option.match(toolMeta(meta), {
    onNone: () => meta?.ui === undefined ? DEFAULT_VISIBILITY : [],
    onSome: (decoded) => decoded.visibility ?? DEFAULT_VISIBILITY
  })

/** The view a tool links (`_meta.ui.resourceUri`, else the flat key); none when `_meta.ui` is malformed. */
export const resourceUri = (meta: JsonRpc.JsonObject | undefined): string | undefined =>
  Option.getOrUndefined(toolMeta(meta))?.resourceUri

/** The host's extension settings: `None` when it did not declare the extension or declared a malformed one. */
export const hostCapability = (
  capabilities: McpSchema.ClientCapabilities
): Option.Option<typeof HostCapability.Type> => {
  const settings = capabilities.extensions?.[EXTENSION_ID]
  return settings === undefined ? Option.none() : decodeHostCapability(settings)
}

/** Does the host render views: it declared the extension with {@link MIME_TYPE} among its `mimeTypes`. */
export const supportsViews = (capabilities: McpSchema.ClientCapabilities): boolean =>
  Option.exists(hostCapability(capabilities), (c) => c.mimeTypes?.includes(MIME_TYPE) === true)
