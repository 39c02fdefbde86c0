/**
 * Malformed tool `_meta` for MCP Apps: each has a `_meta.ui` the official `McpUiToolMeta` schema
 * refuses. The three readers of `_meta.ui` (`App.toolMeta` / `App.isVisibleTo`, `AppHost`'s bridge,
 * `McpProxy`) are each given all of them (test/App.test.ts, test/AppHost.test.ts,
 * test/McpProxyApps.test.ts) and must agree: such a tool is visible to no one and links no view.
 */
import type { JsonRpc } from "presa-mcp"

export const MALFORMED_UI: ReadonlyArray<{ readonly label: string; readonly meta: JsonRpc.JsonObject }> = [
  // the likeliest slip: a string where the spec wants an array (an app-only tool)
  { label: "visibility \"app\"", meta: { ui: { resourceUri: "ui://m/view", visibility: "app" } } },
  // an audience this revision does not define
  { label: "visibility [\"model\", \"root\"]", meta: { ui: { visibility: ["model", "root"] } } },
  { label: "visibility null", meta: { ui: { visibility: null } } },
  { label: "resourceUri 3", meta: { ui: { resourceUri: 3, visibility: ["model", "app"] } } },
  // `ui` is not an object (the deprecated flat key does not rescue it)
  { label: "ui a string", meta: { ui: "ui://m/view", "ui/resourceUri": "ui://m/view" } }
]
