/**
 * The MCP vocabulary: protocol versions, method names, `_meta` keys and the wire types of
 * 2026-07-28 and 2025-11-25 / 2025-06-18 as Effect Schemas. Every method string and `_meta` key is
 * written once, here.
 *
 * Incoming data is decoded with these schemas at the boundary; unknown fields are kept
 * (`onExcessProperty: "preserve"`) so nothing a peer sent is silently dropped.
 *
 * Guide: [Architecture](https://github.com/presa-mcp/presa-mcp/blob/main/docs/architecture.md).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The modern (stateless) revision.
 *
 * @since 0.1.0
 * @category symbols
 */
export const MODERN_VERSION = "2026-07-28"

/**
 * Every revision this library implements, newest first: the modern one, then the handshake
 * ("legacy") revisions.
 *
 * @since 0.1.0
 * @category symbols
 */
export const ALL_VERSIONS: ReadonlyArray<ProtocolVersion> = ["2026-07-28", "2025-11-25", "2025-06-18"]

/**
 * A revision this library implements.
 *
 * @since 0.1.0
 * @category models
 */
export type ProtocolVersion = "2026-07-28" | "2025-11-25" | "2025-06-18"

/**
 * Is `v` a modern revision (version and capabilities in each request's `_meta`)?
 *
 * @since 0.1.0
 * @category guards
 */
export const isModernVersion = (v: string): boolean => v >= MODERN_VERSION && /^\d{4}-\d{2}-\d{2}$/.test(v)

/**
 * Is `v` one of the revisions this library implements?
 *
 * @since 0.1.0
 * @category guards
 */
export const isProtocolVersion = (v: unknown): v is ProtocolVersion =>
  v === "2026-07-28" || v === "2025-11-25" || v === "2025-06-18"

/**
 * The revisions an `McpClient` speaks, newest first: {@link ALL_VERSIONS} and 2025-03-26, which
 * a client accepts when a server answers `initialize` with it (many deployed servers still do;
 * MCP 2025-03-26, Basic › Lifecycle › Version Negotiation). Servers of this library never serve
 * 2025-03-26: a client asking for it gets the server's latest handshake revision.
 *
 * On a 2025-03-26 session the client sends no `MCP-Protocol-Version` header (that revision has
 * none; MCP 2025-06-18, Transports › Protocol Version Header: a server without it assumes
 * 2025-03-26), checks no `outputSchema` and answers `elicitation/create` with -32601 (neither
 * exists there), and reads a JSON-RPC batch from the server message by message.
 *
 * @since 0.2.0
 * @category symbols
 */
export const CLIENT_VERSIONS: ReadonlyArray<ClientProtocolVersion> = [...ALL_VERSIONS, "2025-03-26"]

/**
 * A revision an `McpClient` speaks: a {@link ProtocolVersion}, or 2025-03-26 (client only, see
 * {@link CLIENT_VERSIONS}).
 *
 * @since 0.2.0
 * @category models
 */
export type ClientProtocolVersion = ProtocolVersion | "2025-03-26"

/**
 * Is `v` (a negotiated revision) older than 2025-06-18, i.e. 2025-03-26? Such a session lacks
 * what 2025-06-18 added: the `MCP-Protocol-Version` HTTP header, structured tool output
 * (`outputSchema`, `structuredContent`), elicitation, `title` fields, resource links; and it
 * allows JSON-RPC batches (MCP 2025-06-18, Key Changes).
 *
 * @since 0.2.0
 * @category guards
 */
export const isBefore20250618 = (v: string): boolean => v < "2025-06-18"

/**
 * The namespaced `_meta` keys of 2026-07-28 (MCP 2026-07-28, Basic, `_meta`).
 *
 * @since 0.1.0
 * @category symbols
 */
export const MetaKey = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  logLevel: "io.modelcontextprotocol/logLevel",
  serverInfo: "io.modelcontextprotocol/serverInfo",
  subscriptionId: "io.modelcontextprotocol/subscriptionId",
  progressToken: "progressToken"
} as const

/**
 * Method and notification names, as the spec spells them (the Skills and Tasks extensions' own
 * methods are `Skill.Method` and `Task.Method`).
 *
 * @since 0.1.0
 * @category symbols
 */
export const Method = {
  initialize: "initialize",
  initialized: "notifications/initialized",
  ping: "ping",
  discover: "server/discover",
  toolsList: "tools/list",
  toolsCall: "tools/call",
  resourcesList: "resources/list",
  resourcesTemplatesList: "resources/templates/list",
  resourcesRead: "resources/read",
  resourcesSubscribe: "resources/subscribe",
  resourcesUnsubscribe: "resources/unsubscribe",
  promptsList: "prompts/list",
  promptsGet: "prompts/get",
  complete: "completion/complete",
  loggingSetLevel: "logging/setLevel",
  subscriptionsListen: "subscriptions/listen",
  cancelled: "notifications/cancelled",
  progress: "notifications/progress",
  message: "notifications/message",
  toolsListChanged: "notifications/tools/list_changed",
  promptsListChanged: "notifications/prompts/list_changed",
  resourcesListChanged: "notifications/resources/list_changed",
  resourcesUpdated: "notifications/resources/updated",
  subscriptionsAcknowledged: "notifications/subscriptions/acknowledged"
} as const

/**
 * The methods a server sends to a client (MCP 2025-11-25, Client Features: Elicitation, Sampling,
 * Roots): legacy server→client requests, and the `inputRequests` of a 2026-07-28
 * `input_required` result (MCP 2026-07-28, Multi Round-Trip Requests). Every module that names
 * one reads it here.
 *
 * @since 0.2.0
 * @category symbols
 */
export const ClientMethod = {
  elicitationCreate: "elicitation/create",
  samplingCreateMessage: "sampling/createMessage",
  rootsList: "roots/list"
} as const

/**
 * A method a server sends to a client (one of {@link ClientMethod}).
 *
 * @since 0.2.0
 * @category models
 */
export type ClientMethod = typeof ClientMethod[keyof typeof ClientMethod]

/**
 * Log levels, lowest first (RFC 5424 names).
 *
 * @since 0.1.0
 * @category symbols
 */
export const LOGGING_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const

/**
 * A log level.
 *
 * @since 0.1.0
 * @category models
 */
export type LoggingLevel = typeof LOGGING_LEVELS[number]

const OpenRecord = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/**
 * `Implementation`: who a client or server is (`name`, `version` required).
 *
 * @since 0.1.0
 * @category models
 */
export const Implementation = Schema.Struct({
  name: Schema.String,
  version: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  websiteUrl: Schema.optional(Schema.String)
}, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type Implementation = typeof Implementation.Type

/**
 * `Icon`: `{src, mimeType?, sizes?, theme?}`.
 *
 * @since 0.1.0
 * @category models
 */
export const Icon = Schema.Struct({
  src: Schema.String,
  mimeType: Schema.optional(Schema.String),
  sizes: Schema.optional(Schema.Array(Schema.String)),
  theme: Schema.optional(Schema.Literal("light", "dark"))
})

/**
 * @since 0.1.0
 * @category models
 */
export type Icon = typeof Icon.Type

/**
 * `Annotations` on content and resources: `audience`, `priority` (0..1), `lastModified` (ISO 8601).
 *
 * @since 0.1.0
 * @category models
 */
export const Annotations = Schema.Struct({
  audience: Schema.optional(Schema.Array(Schema.Literal("user", "assistant"))),
  priority: Schema.optional(Schema.Number),
  lastModified: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Annotations = typeof Annotations.Type

const contentBase = {
  annotations: Schema.optional(Annotations),
  _meta: Schema.optional(OpenRecord)
}

/**
 * `text` content block.
 *
 * @since 0.1.0
 * @category models
 */
export const TextContent = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String, ...contentBase })

/**
 * `image` content block (`data` is base64).
 *
 * @since 0.1.0
 * @category models
 */
export const ImageContent = Schema.Struct({
  type: Schema.Literal("image"),
  data: Schema.String,
  mimeType: Schema.String,
  ...contentBase
})

/**
 * `audio` content block (`data` is base64).
 *
 * @since 0.1.0
 * @category models
 */
export const AudioContent = Schema.Struct({
  type: Schema.Literal("audio"),
  data: Schema.String,
  mimeType: Schema.String,
  ...contentBase
})

/**
 * `resource_link` content block.
 *
 * @since 0.1.0
 * @category models
 */
export const ResourceLink = Schema.Struct({
  type: Schema.Literal("resource_link"),
  uri: Schema.String,
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  mimeType: Schema.optional(Schema.String),
  size: Schema.optional(Schema.Number),
  icons: Schema.optional(Schema.Array(Icon)),
  ...contentBase
})

/**
 * Text resource contents: `{uri, mimeType?, text}`.
 *
 * @since 0.1.0
 * @category models
 */
export const TextResourceContents = Schema.Struct({
  uri: Schema.String,
  mimeType: Schema.optional(Schema.String),
  text: Schema.String,
  _meta: Schema.optional(OpenRecord)
})

/**
 * Binary resource contents: `{uri, mimeType?, blob}` (`blob` is base64).
 *
 * @since 0.1.0
 * @category models
 */
export const BlobResourceContents = Schema.Struct({
  uri: Schema.String,
  mimeType: Schema.optional(Schema.String),
  blob: Schema.String,
  _meta: Schema.optional(OpenRecord)
})

/**
 * Resource contents: text or blob.
 *
 * @since 0.1.0
 * @category models
 */
export const ResourceContents = Schema.Union(TextResourceContents, BlobResourceContents)

/**
 * @since 0.1.0
 * @category models
 */
export type ResourceContents = typeof ResourceContents.Type

/**
 * `resource` (embedded resource) content block.
 *
 * @since 0.1.0
 * @category models
 */
export const EmbeddedResource = Schema.Struct({
  type: Schema.Literal("resource"),
  resource: ResourceContents,
  ...contentBase
})

/**
 * Any content block.
 *
 * @since 0.1.0
 * @category models
 */
export const ContentBlock = Schema.Union(TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)

/**
 * @since 0.1.0
 * @category models
 */
export type ContentBlock = typeof ContentBlock.Type

/**
 * `CallToolResult`: `content` (required), `structuredContent?`, `isError?`.
 *
 * @since 0.1.0
 * @category models
 */
export const CallToolResult = Schema.Struct({
  content: Schema.Array(ContentBlock),
  structuredContent: Schema.optional(Schema.Unknown),
  isError: Schema.optional(Schema.Boolean),
  _meta: Schema.optional(OpenRecord)
}, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type CallToolResult = typeof CallToolResult.Type

/**
 * `ToolAnnotations` (hints only).
 *
 * @since 0.1.0
 * @category models
 */
export const ToolAnnotations = Schema.Struct({
  title: Schema.optional(Schema.String),
  readOnlyHint: Schema.optional(Schema.Boolean),
  destructiveHint: Schema.optional(Schema.Boolean),
  idempotentHint: Schema.optional(Schema.Boolean),
  openWorldHint: Schema.optional(Schema.Boolean)
})

/**
 * @since 0.1.0
 * @category models
 */
export type ToolAnnotations = typeof ToolAnnotations.Type

/**
 * `Tool` as listed by `tools/list`.
 *
 * @since 0.1.0
 * @category models
 */
export const Tool = Schema.Struct({
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  inputSchema: OpenRecord,
  outputSchema: Schema.optional(OpenRecord),
  annotations: Schema.optional(ToolAnnotations),
  icons: Schema.optional(Schema.Array(Icon)),
  _meta: Schema.optional(OpenRecord)
}, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type Tool = typeof Tool.Type

/**
 * `Resource` as listed by `resources/list`.
 *
 * @since 0.1.0
 * @category models
 */
export const Resource = Schema.Struct({
  uri: Schema.String,
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  mimeType: Schema.optional(Schema.String),
  size: Schema.optional(Schema.Number),
  annotations: Schema.optional(Annotations),
  icons: Schema.optional(Schema.Array(Icon)),
  _meta: Schema.optional(OpenRecord)
}, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type Resource = typeof Resource.Type

/**
 * `ResourceTemplate` as listed by `resources/templates/list`.
 *
 * @since 0.1.0
 * @category models
 */
export const ResourceTemplate = Schema.Struct({
  uriTemplate: Schema.String,
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  mimeType: Schema.optional(Schema.String),
  annotations: Schema.optional(Annotations),
  icons: Schema.optional(Schema.Array(Icon)),
  _meta: Schema.optional(OpenRecord)
}, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type ResourceTemplate = typeof ResourceTemplate.Type

/**
 * `PromptArgument`.
 *
 * @since 0.1.0
 * @category models
 */
export const PromptArgument = Schema.Struct({
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  required: Schema.optional(Schema.Boolean)
})

/**
 * @since 0.1.0
 * @category models
 */
export type PromptArgument = typeof PromptArgument.Type

/**
 * `Prompt` as listed by `prompts/list`.
 *
 * @since 0.1.0
 * @category models
 */
export const Prompt = Schema.Struct({
  name: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  arguments: Schema.optional(Schema.Array(PromptArgument)),
  icons: Schema.optional(Schema.Array(Icon)),
  _meta: Schema.optional(OpenRecord)
}, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type Prompt = typeof Prompt.Type

/**
 * `PromptMessage`: `{role, content}`.
 *
 * @since 0.1.0
 * @category models
 */
export const PromptMessage = Schema.Struct({ role: Schema.Literal("user", "assistant"), content: ContentBlock })

/**
 * @since 0.1.0
 * @category models
 */
export type PromptMessage = typeof PromptMessage.Type

/**
 * `GetPromptResult`.
 *
 * @since 0.1.0
 * @category models
 */
export const GetPromptResult = Schema.Struct({
  description: Schema.optional(Schema.String),
  messages: Schema.Array(PromptMessage),
  _meta: Schema.optional(OpenRecord)
}, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type GetPromptResult = typeof GetPromptResult.Type

/**
 * `ReadResourceResult`.
 *
 * @since 0.1.0
 * @category models
 */
export const ReadResourceResult = Schema.Struct({
  contents: Schema.Array(ResourceContents),
  _meta: Schema.optional(OpenRecord)
}, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type ReadResourceResult = typeof ReadResourceResult.Type

/**
 * `CompleteResult`: `{completion: {values (≤ 100), total?, hasMore?}}`.
 *
 * @since 0.1.0
 * @category models
 */
export const CompleteResult = Schema.Struct({
  completion: Schema.Struct({
    values: Schema.Array(Schema.String),
    total: Schema.optional(Schema.Number),
    hasMore: Schema.optional(Schema.Boolean)
  })
}, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type CompleteResult = typeof CompleteResult.Type

/**
 * `ServerCapabilities` (an open object).
 *
 * @since 0.1.0
 * @category models
 */
export const ServerCapabilities = Schema.Struct({
  tools: Schema.optional(OpenRecord),
  resources: Schema.optional(OpenRecord),
  prompts: Schema.optional(OpenRecord),
  completions: Schema.optional(OpenRecord),
  logging: Schema.optional(OpenRecord),
  experimental: Schema.optional(OpenRecord),
  extensions: Schema.optional(OpenRecord)
}, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type ServerCapabilities = typeof ServerCapabilities.Type

/**
 * `ClientCapabilities` (an open object).
 *
 * @since 0.1.0
 * @category models
 */
export const ClientCapabilities = Schema.Struct({
  roots: Schema.optional(OpenRecord),
  sampling: Schema.optional(OpenRecord),
  elicitation: Schema.optional(OpenRecord),
  experimental: Schema.optional(OpenRecord),
  extensions: Schema.optional(OpenRecord)
}, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type ClientCapabilities = typeof ClientCapabilities.Type

/**
 * `EmptyResult`: a result with nothing but the common fields (`_meta`; `resultType` from
 * 2026-07-28 on, which the server adds): `ping`, `logging/setLevel`, `resources/subscribe`,
 * `resources/unsubscribe`, `subscriptions/listen` (its `_meta` carries the subscription id).
 *
 * @since 0.1.0
 * @category models
 */
export const EmptyResult = Schema.Struct({ _meta: Schema.optional(OpenRecord) }, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type EmptyResult = typeof EmptyResult.Type

/**
 * `DiscoverResult` (2026-07-28).
 *
 * @since 0.1.0
 * @category models
 */
export const DiscoverResult = Schema.Struct({
  supportedVersions: Schema.Array(Schema.String),
  capabilities: ServerCapabilities,
  instructions: Schema.optional(Schema.String)
}, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type DiscoverResult = typeof DiscoverResult.Type

/**
 * `InitializeResult` (legacy).
 *
 * @since 0.1.0
 * @category models
 */
export const InitializeResult = Schema.Struct({
  protocolVersion: Schema.String,
  capabilities: ServerCapabilities,
  serverInfo: Implementation,
  instructions: Schema.optional(Schema.String)
}, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type InitializeResult = typeof InitializeResult.Type

const paginated = { nextCursor: Schema.optional(Schema.String) }

/**
 * `ListToolsResult`.
 *
 * @since 0.1.0
 * @category models
 */
export const ListToolsResult = Schema.Struct({ tools: Schema.Array(Tool), ...paginated }, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type ListToolsResult = typeof ListToolsResult.Type

/**
 * `ListResourcesResult`.
 *
 * @since 0.1.0
 * @category models
 */
export const ListResourcesResult = Schema.Struct({ resources: Schema.Array(Resource), ...paginated }, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type ListResourcesResult = typeof ListResourcesResult.Type

/**
 * `ListResourceTemplatesResult`.
 *
 * @since 0.1.0
 * @category models
 */
export const ListResourceTemplatesResult = Schema.Struct(
  { resourceTemplates: Schema.Array(ResourceTemplate), ...paginated },
  OpenRecord
)

/**
 * @since 0.1.0
 * @category models
 */
export type ListResourceTemplatesResult = typeof ListResourceTemplatesResult.Type

/**
 * `ListPromptsResult`.
 *
 * @since 0.1.0
 * @category models
 */
export const ListPromptsResult = Schema.Struct({ prompts: Schema.Array(Prompt), ...paginated }, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type ListPromptsResult = typeof ListPromptsResult.Type

// ---------------------------------------------------------------------------------------------
// Request params (decoded by the server)
// ---------------------------------------------------------------------------------------------

/**
 * `tools/call` params. `arguments` is left open: the server checks it is an object (or absent /
 * `null`, both read as `{}`) and then validates it against the tool's input schema.
 *
 * @since 0.1.0
 * @category models
 */
export const CallToolParams = Schema.Struct({ name: Schema.String, arguments: Schema.optional(Schema.Unknown) })

/**
 * `resources/read` params.
 *
 * @since 0.1.0
 * @category models
 */
export const ReadResourceParams = Schema.Struct({ uri: Schema.String })

/**
 * `prompts/get` params. `arguments` values must be strings.
 *
 * @since 0.1.0
 * @category models
 */
export const GetPromptParams = Schema.Struct({
  name: Schema.String,
  arguments: Schema.optional(Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })))
})

/**
 * A paginated list request's params: `cursor?`.
 *
 * @since 0.1.0
 * @category models
 */
export const PaginatedParams = Schema.Struct({ cursor: Schema.optional(Schema.String) })

/**
 * `completion/complete` params.
 *
 * @since 0.1.0
 * @category models
 */
export const CompleteParams = Schema.Struct({
  ref: Schema.Union(
    Schema.Struct({ type: Schema.Literal("ref/prompt"), name: Schema.String }),
    Schema.Struct({ type: Schema.Literal("ref/resource"), uri: Schema.String })
  ),
  argument: Schema.Struct({ name: Schema.String, value: Schema.String }),
  context: Schema.optional(Schema.Struct({
    arguments: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
  }))
})

/**
 * `initialize` params (legacy).
 *
 * @since 0.1.0
 * @category models
 */
export const InitializeParams = Schema.Struct({
  protocolVersion: Schema.String,
  capabilities: ClientCapabilities,
  clientInfo: Implementation
})

/**
 * `logging/setLevel` params (legacy).
 *
 * @since 0.1.0
 * @category models
 */
export const SetLevelParams = Schema.Struct({ level: Schema.Literal(...LOGGING_LEVELS) })

/**
 * `notifications/cancelled` params.
 *
 * @since 0.1.0
 * @category models
 */
export const CancelledParams = Schema.Struct({
  requestId: Schema.Union(Schema.String, Schema.Number),
  reason: Schema.optional(Schema.String)
})

/**
 * The `cacheScope` hint.
 *
 * @since 0.1.0
 * @category models
 */
export type CacheScope = "public" | "private"
