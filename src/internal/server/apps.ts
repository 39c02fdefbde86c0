/**
 * MCP Apps (`io.modelcontextprotocol/ui`, stable 2026-01-26) as the server's snapshot sees it: the
 * marks the `App` module puts on the definitions it builds, and the build-time checks over a whole
 * definition set (a view's URI is `ui://`; a tool made by `App.tool` links a view the server serves).
 *
 * Only definitions the `App` module made are checked: a tool a proxy forwards with its backend's
 * `_meta.ui` links a view the backend may serve without listing it (the spec lets a server leave
 * UI-only resources out of `resources/list`), so it is not this server's to refuse.
 * @internal
 */
import * as Option from "effect/Option"
import { DefinitionError } from "../../Errors.js"
import * as JsonRpc from "../../JsonRpc.js"
import type * as Resource from "../../Resource.js"
import type * as Tool from "../../Tool.js"
import * as UriTemplate from "../../UriTemplate.js"

export { EXTENSION_ID, LEGACY_RESOURCE_URI_KEY, MIME_TYPE } from "../appMeta.js"

/** The scheme every view URI starts with. */
export const SCHEME = "ui://"

/** Set on a resource record `App.view` built (a view, whose URI must be `ui://`). */
export const ViewMark: unique symbol = Symbol.for("presa-mcp/App/view")

/** Set on a tool record `App.tool` built (a tool whose `_meta.ui.resourceUri` must be served). */
export const ToolMark: unique symbol = Symbol.for("presa-mcp/App/tool")

/** `_meta.ui.resourceUri` of a tool's `_meta`, when it is a string. */
export const linkedUri = (meta: JsonRpc.JsonObject | undefined): string | undefined => {
  const ui = meta?.ui
  if (!JsonRpc.isObject(ui)) return undefined
  return typeof ui.resourceUri === "string" ? ui.resourceUri : undefined
}

interface Compiled {
  readonly tools: ReadonlyArray<{ readonly def: Tool.Tool }>
  readonly resources: ReadonlyArray<{ readonly def: Resource.Resource }>
  readonly templates: ReadonlyArray<{ readonly parsed: UriTemplate.UriTemplate }>
}

/**
 * The first misuse in a definition set: a view whose URI is not `ui://`; an `App.tool` linking a
 * URI that is not `ui://` or that no static resource or template of the set serves.
 */
export const check = (defs: Compiled): Option.Option<DefinitionError> => {
  for (const { def } of defs.resources) {
    if (ViewMark in def && !def.uri.startsWith(SCHEME)) {
      return Option.some(
        new DefinitionError({
          kind: "resource",
          name: def.uri,
          message: `an MCP Apps view's URI must start with ${SCHEME}`
        })
      )
    }
  }
  for (const { def } of defs.tools) {
    if (!(ToolMark in def)) continue
    const uri = linkedUri(def._meta)
    const fail = (message: string) => Option.some(new DefinitionError({ kind: "tool", name: def.name, message }))
    if (uri === undefined || !uri.startsWith(SCHEME)) {
      return fail(`_meta.ui.resourceUri must be a ${SCHEME} URI`)
    }
    const served = defs.resources.some((r) => r.def.uri === uri) ||
      defs.templates.some((t) => Option.isSome(UriTemplate.match(t.parsed, uri)))
    if (!served) {
      return fail(
        `links the view ${uri}, which the server does not serve (add the view with the tool, or before it)`
      )
    }
  }
  return Option.none()
}
