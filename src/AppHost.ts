/**
 * The host side of MCP Apps (the `io.modelcontextprotocol/ui` extension, SEP-1865, stable revision
 * 2026-01-26): what a chat client, an IDE or a dev page needs to show a server's interactive view.
 *
 * - {@link make} is the bridge between one view (the HTML of a `ui://` resource, rendered in a
 *   sandboxed iframe) and one server. It speaks the view protocol ("Communication Protocol":
 *   JSON-RPC 2.0 over `postMessage`) on a {@link Port}: it answers `ui/initialize` with the host
 *   context and capabilities, relays the view's `tools/call` and `resources/read` to the server
 *   under the visibility rule, hands `ui/open-link`, `ui/message`, `ui/update-model-context`,
 *   logging and size changes to the host's callbacks, and sends the host's notifications (tool
 *   input, partial input, result, cancellation, host-context changes, teardown).
 * - {@link contentSecurityPolicy} builds the iframe's Content-Security-Policy from the view's
 *   `_meta.ui.csp` (the spec's restrictive default when none is declared, never looser than declared).
 * - {@link visibility} and {@link resourceUri} read a tool's `_meta.ui`.
 *
 * Platform-neutral: no Node API, so the same module runs in a browser page (the `presa-mcp app`
 * dev host bundles it into its page) and in Node. The server side is any {@link Server}: an
 * `McpClient` satisfies it, and so does a small object that forwards to a backend over HTTP.
 *
 * @since 0.2.0
 */
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/appHost/bridge.js"
import * as csp from "./internal/appHost/csp.js"
import * as AppMeta from "./internal/appMeta.js"
import type * as McpSchema from "./McpSchema.js"

/**
 * The MCP Apps revision this host speaks, `"2026-01-26"`: the `protocolVersion` of its
 * `ui/initialize` answer.
 *
 * @since 0.2.0
 * @category symbols
 */
export const PROTOCOL_VERSION: string = internal.PROTOCOL_VERSION

/**
 * The MIME type of a view's HTML, `text/html;profile=mcp-app` (2026-01-26, "UI Resource Format").
 *
 * @since 0.2.0
 * @category symbols
 */
export const MIME_TYPE: "text/html;profile=mcp-app" = AppMeta.MIME_TYPE

/**
 * The extension's identifier, `io.modelcontextprotocol/ui`: a host declares it in its client
 * capabilities (`extensions`), with `{ mimeTypes: [MIME_TYPE] }`.
 *
 * @since 0.2.0
 * @category symbols
 */
export const EXTENSION_ID: "io.modelcontextprotocol/ui" = AppMeta.EXTENSION_ID

/**
 * A postMessage-style channel to one view. `postMessage` sends one JSON-RPC message (a plain
 * object, structured-cloned by the platform); `subscribe` registers a listener for the view's
 * messages and returns the function that removes it. In a page: `iframe.contentWindow.postMessage(m,
 * "*")` and a `message` listener on `window` that keeps only events whose `source` is that
 * `contentWindow` (the view's origin is opaque in a sandbox without `allow-same-origin`, hence `"*"`).
 *
 * @since 0.2.0
 * @category models
 */
export interface Port extends internal.Port {}

/**
 * What a server call may fail with: a `JsonRpc.McpError` (the server's JSON-RPC error, relayed to
 * the view as it is) or any other tagged failure (relayed as -32603 with a fixed message, so
 * transport details never reach the view). `McpClient.CallError` fits.
 *
 * @since 0.2.0
 * @category models
 */
export type ServerError = internal.ServerError

/**
 * The view's own server, as the bridge needs it: `tools/call` and `resources/read`. An
 * `McpClient` connected to the server satisfies it as it is; a page can pass an object whose
 * methods forward to a backend that holds the client.
 *
 * @since 0.2.0
 * @category models
 */
export interface Server extends internal.Server {}

/**
 * Who may call a tool (`_meta.ui.visibility`): `"model"` (the agent) and/or `"app"` (views of the
 * same server).
 *
 * @since 0.2.0
 * @category models
 */
export type Visibility = internal.Visibility

/**
 * A size the view reports with `ui/notifications/size-changed`: CSS pixels, each optional.
 *
 * @since 0.2.0
 * @category models
 */
export interface SizeChange extends internal.SizeChange {}

/**
 * How to build a bridge ({@link make}).
 *
 * - `port`, `server`: the view and its server.
 * - `tool`: the tool whose view this is (sent as `hostContext.toolInfo.tool`).
 * - `tools`: the server's tools (`tools/list`); the view may call only those whose
 *   {@link visibility} includes `"app"`. Any other name, unknown names included, is refused with
 *   JSON-RPC -32602 before the server sees it (2026-01-26, Visibility: "Host MUST reject
 *   `tools/call` requests from apps for tools that don't include "app"").
 * - `resolveTool`: finds the tool a view's `tools/call` names in `tools` (default: the tool of that
 *   exact name). A host in front of a server that renames tools (a proxy prefixing them) passes the
 *   proxy's mapping here; the call is then sent under the resolved tool's name, and the visibility
 *   rule is checked on the resolved tool.
 * - `hostInfo`: the `ui/initialize` answer's `hostInfo` (default `presa-mcp-app-host`).
 * - `hostContext`: fields of `hostContext` (theme, locale, timeZone, containerDimensions, …);
 *   `displayMode: "inline"` and `availableDisplayModes: ["inline"]` unless given, `toolInfo` always
 *   from `tool`.
 * - `approvedCsp`: what the host applied (`hostCapabilities.sandbox.csp`), e.g. the `approved`
 *   lists of {@link contentSecurityPolicy}.
 * - `onOpenLink` (http(s) URLs only; other schemes are -32602), `onMessage` (`ui/message`
 *   params), `onUpdateModelContext`: each one given declares the matching host capability
 *   (`openLinks`, `message`, `updateModelContext`); without it the request is -32601. Fail with
 *   `McpError` to refuse (the spec's "-32000 denied" is the host's choice of code).
 * - `onLog`: the view's `notifications/message` params. `onSizeChange`: the view's size (apply
 *   it to the iframe when the container is flexible: 2026-01-26, Container Dimensions).
 * - `onRequestTeardown`: the view asked to be closed (`ui/notifications/request-teardown`).
 * - `onCall`: every request from the view, before it is answered (an audit trail).
 *
 * @since 0.2.0
 * @category models
 */
export interface Options extends internal.Options {}

/**
 * A running bridge.
 *
 * - `initialized`: completes when the view sent `ui/notifications/initialized`.
 * - `appInfo`: the view's `appInfo` from `ui/initialize`, once received.
 * - `sendToolInput`, `sendToolInputPartial`, `sendToolResult`, `sendToolCancelled`,
 *   `setHostContext`: the host's notifications (`ui/notifications/tool-input`, `…/tool-input-partial`,
 *   `…/tool-result`, `…/tool-cancelled`, `…/host-context-changed`). Each waits for `initialized`
 *   (the host sends nothing before it); call them in protocol order (input before result).
 * - `teardown`: sends the `ui/resource-teardown` request once (later calls do nothing) and waits for
 *   the view's answer; fails with the view's `McpError`. It waits for `initialized` too: add a
 *   timeout (`Effect.timeout`) before removing the iframe.
 *
 * @since 0.2.0
 * @category models
 */
export interface Bridge extends internal.Bridge {}

/**
 * Starts a bridge on `options.port` for as long as the Scope is open (closing it removes the
 * listener and stops the fibers answering the view).
 *
 * Messages from the view are checked with `JsonRpc.classify`: an invalid request is answered with
 * -32600, an invalid notification is dropped, bad params are -32602, an unknown method -32601.
 * Each request runs in its own fiber, so a slow tool call does not hold `ping` back. Answered
 * requests: `ui/initialize`, `ping`, `tools/call` (visibility rule, see {@link Options}),
 * `resources/read`, `ui/open-link`, `ui/message`, `ui/update-model-context`,
 * `ui/request-display-mode` (answers the current mode, `inline`). Never fails.
 *
 * @example
 * import * as Effect from "effect/Effect"
 * import * as AppHost from "presa-mcp/AppHost"
 * import type * as McpClient from "presa-mcp/McpClient"
 * import type * as McpSchema from "presa-mcp/McpSchema"
 *
 * // Shows `result` in the view behind `port`, for the tool `tool` of the server behind `client`.
 * export const show = (
 *   port: AppHost.Port,
 *   client: McpClient.McpClient,
 *   tool: McpSchema.Tool,
 *   args: { readonly [key: string]: unknown },
 *   result: McpSchema.CallToolResult
 * ) =>
 *   Effect.gen(function*() {
 *     const tools = yield* client.listAllTools
 *     const bridge = yield* AppHost.make({ port, server: client, tool, tools })
 *     yield* bridge.sendToolInput(args)
 *     yield* bridge.sendToolResult(result)
 *   })
 *
 * @since 0.2.0
 * @category constructors
 */
export const make: (options: Options) => Effect.Effect<Bridge, never, Scope.Scope> = internal.make

/**
 * A tool's `_meta.ui.visibility` (2026-01-26, "Resource Discovery" › Visibility): `["model", "app"]`
 * when `_meta.ui` or its `visibility` is absent; `[]` (no one) when `_meta.ui` is malformed — not an
 * object, or not a valid `McpUiToolMeta` (a `visibility` that is not an array of `"model"` /
 * `"app"`, such as `"app"` or `["model", "root"]`; a `resourceUri` that is not a string). A host
 * cannot read the restriction the server meant, so it does not let the model or a view call the
 * tool. The same rule as `App.isVisibleTo` and `McpProxy`.
 *
 * @since 0.2.0
 * @category combinators
 */
export const visibility: (tool: McpSchema.Tool) => ReadonlyArray<Visibility> = internal.visibility

/**
 * The view a tool links: `_meta.ui.resourceUri`, else the deprecated flat `_meta["ui/resourceUri"]`;
 * `undefined` when neither is a string, or when `_meta.ui` is malformed (see {@link visibility};
 * `App.toolMeta` is the same reading).
 *
 * @since 0.2.0
 * @category combinators
 */
export const resourceUri: (tool: McpSchema.Tool) => string | undefined = internal.resourceUri

/**
 * One of the four declared lists of `_meta.ui.csp`.
 *
 * @since 0.2.0
 * @category models
 */
export type CspField = csp.CspField

/**
 * A declared CSP entry that was left out: its field, the value (quoted up to 256 characters) and why.
 *
 * @since 0.2.0
 * @category models
 */
export interface CspRejection extends csp.Rejected {}

/**
 * A built Content-Security-Policy: `policy` (the header value, on one line), `approved` (the
 * origins used, per field), `rejected` (declared entries left out) and `declared` (whether
 * `_meta.ui.csp` was an object).
 *
 * @since 0.2.0
 * @category models
 */
export interface ContentSecurityPolicy extends csp.Policy {}

/**
 * The view iframe's Content-Security-Policy from its `_meta.ui.csp` (any JSON: the server's word).
 *
 * Undeclared (not an object): the spec's restrictive default (2026-01-26, "UI Resource Format" ›
 * Host Behavior) — `default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self'
 * 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'` — plus
 * `frame-src 'none'; object-src 'none'; base-uri 'self'` (Sandbox proxy, 5). Declared:
 * `resourceDomains` extend `script-src`, `style-src`, `img-src`, `media-src` and `font-src`;
 * `connectDomains` are `connect-src` (exactly those: no `'self'`); `frameDomains` are `frame-src`;
 * `baseUriDomains` are `base-uri`. Each entry must be an `http`, `https`, `ws` or `wss` origin
 * (`scheme://host[:port][/path]`, the host a DNS name with an optional leading `*.` label, an IPv4
 * or bracketed IPv6 address); anything else — `*`, a bare scheme, a keyword, a quote, `;`, `,`,
 * white space, a non-string — is rejected and listed in `rejected`, so the policy never allows what
 * was not declared. At most 64 entries per field, 512 characters each.
 *
 * @since 0.2.0
 * @category constructors
 */
export const contentSecurityPolicy: (csp: unknown) => ContentSecurityPolicy = csp.build
