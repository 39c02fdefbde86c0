/**
 * MCP Apps through the proxy (the `io.modelcontextprotocol/ui` extension, revision 2026-01-26;
 * docs/proxy.md, "MCP Apps"). A backend's tool keeps its `_meta.ui` with `resourceUri` (and the
 * deprecated flat `ui/resourceUri`) rewritten to the view's URI in the proxy's form, so the host
 * reads the view through the proxy. Visibility:
 *
 * - an app-only tool (`_meta.ui.visibility` without `"model"`) is listed only to callers that
 *   declare the extension (no other host can run the view that calls it);
 * - views know their tools by their own server's names (`roll`), the proxy serves `apps_roll`:
 *   for a backend that links a view from at least one tool, each of its tools a view may call
 *   (visibility with `"app"`, the default) is also served under the backend's own name — an
 *   alias, app-only, listed only to callers declaring the extension — when exactly one backend
 *   offers that name and it is in no backend's prefix namespace. The alias forwards to the
 *   backend under its own name with the arguments as sent.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Ref from "effect/Ref"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import * as McpServer from "../../McpServer.js"
import type * as Middleware from "../../Middleware.js"
import type { RequestContextShape } from "../../RequestContext.js"
import type * as Tool from "../../Tool.js"
import * as AppMeta from "../appMeta.js"
import { namespaceOf, type State } from "./backends.js"
import { type AppTool, callBackend, type Item, type Link } from "./definitions.js"
import * as Names from "./names.js"

/**
 * The caller renders views: it declared the extension with `text/html;profile=mcp-app` among its
 * `mimeTypes` (either era; the library's one rule, internal/appMeta.ts, as `App.supportsViews`).
 */
export const declaresApps = (ctx: RequestContextShape): boolean => AppMeta.supportsViews(ctx.clientCapabilities)

/** `_meta` with the view URIs in the proxy's form (`ui.resourceUri`, flat `ui/resourceUri`). */
const rewriteMeta = (link: Link, meta: JsonRpc.JsonObject): JsonRpc.JsonObject => {
  const map = (u: string) => link.uris.toProxy(u) ?? u
  const out: Record<string, unknown> = { ...meta }
  const ui = meta.ui
  if (JsonRpc.isObject(ui) && typeof ui.resourceUri === "string") out.ui = { ...ui, resourceUri: map(ui.resourceUri) }
  const flat = meta[AppMeta.LEGACY_RESOURCE_URI_KEY]
  if (typeof flat === "string") out[AppMeta.LEGACY_RESOURCE_URI_KEY] = map(flat)
  return out
}

/**
 * The proxy's tool item of a backend's `tool` with MCP Apps applied: `_meta` rewritten, an
 * app-only tool visible to Apps hosts only, and the alias a view calls (when `"app"` may: the
 * default, also for a tool without `_meta.ui`).
 */
export const withApps = (link: Link, tool: McpSchema.Tool, it: Item): Item => {
  if (it.definition._tag !== "tool") return it
  // the served definition's `_meta` (the backend's, or what a transformation made of it)
  const served = it.definition.def._meta
  // the library's one reading of `_meta.ui`: a malformed one is visible to no one (internal/appMeta.ts)
  const visibility = AppMeta.visibility(served)
  const meta = served === undefined ? undefined : rewriteMeta(link, served)
  const def: Tool.Tool = {
    ...it.definition.def,
    ...(meta === undefined ? {} : { _meta: meta }),
    ...(visibility.includes("model") ? {} : { visible: declaresApps })
  }
  const app: AppTool | undefined = visibility.includes("app")
    ? { name: tool.name, view: AppMeta.resourceUri(served) !== undefined, alias: aliasOf(link, tool, meta ?? {}) }
    : undefined
  return { ...it, definition: { _tag: "tool", def }, app }
}

const aliasOf = (link: Link, tool: McpSchema.Tool, meta: JsonRpc.JsonObject): Tool.Tool => {
  const ui = JsonRpc.isObject(meta.ui) ? meta.ui : {}
  return {
    name: tool.name,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    ...(tool.description === undefined ? {} : { description: tool.description }),
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
    _meta: { ...meta, ui: { ...ui, visibility: ["app"] } },
    visible: declaresApps,
    handler: callBackend(link, tool.name)
  }
}

/** An alias served: its backend and the item's fingerprint with the connection it calls. */
export interface Alias {
  readonly prefix: string
  readonly fingerprint: string
}

/**
 * The aliases served (by name), and the names several backends with views offer (not served:
 * the prefixed names of each offer), for a clear error.
 */
export interface AliasState {
  readonly served: ReadonlyMap<string, Alias>
  readonly ambiguous: ReadonlyMap<string, ReadonlyArray<string>>
}

export type Aliases = Ref.Ref<AliasState>

export const makeAliases: Effect.Effect<Aliases> = Ref.make<AliasState>({ served: new Map(), ambiguous: new Map() })

/**
 * A `tools/call` naming a tool several backends with views offer is answered -32602 naming the
 * prefixed tools (the proxy cannot tell which backend's view sent it).
 */
export const ambiguousViewTools = (aliases: Aliases): Middleware.Middleware => (request, next) => {
  const name = request.params.name
  if (request.method !== McpSchema.Method.toolsCall || typeof name !== "string") return next
  return Effect.flatMap(Ref.get(aliases), (state): typeof next => {
    const offers = state.ambiguous.get(name)
    return offers === undefined ? next : Effect.fail(
      JsonRpc.McpError.invalidParams(
        `Unknown tool: ${name} (backends with views offer it as ${
          offers.join(", ")
        }; the proxy cannot tell which one a view means)`
      )
    )
  })
}

/**
 * Serves the aliases the backends' current items call for (under the state's lock): per name,
 * the one backend with views offering it, unless another backend does too (logged) or the name is
 * in a backend's namespace.
 */
export const syncAliases = (state: State): Effect.Effect<void> =>
  Effect.gen(function*() {
    const all = yield* Ref.get(state.backends)
    const offers = new Map<string, Array<{ readonly prefix: string; readonly it: Item; readonly app: AppTool }>>()
    for (const [prefix, s] of all) {
      if (s.status === "down") continue
      const items = [...s.served.values()]
      if (!items.some((it) => it.app?.view === true)) continue
      for (const it of items) {
        if (it.app === undefined || namespaceOf(all.keys(), it.app.name) !== undefined) continue
        offers.set(it.app.name, [...(offers.get(it.app.name) ?? []), { prefix, it, app: it.app }])
      }
    }
    const wanted = new Map<string, { readonly alias: Alias; readonly def: Tool.Tool }>()
    const before = yield* Ref.get(state.aliases)
    const ambiguous = new Map<string, ReadonlyArray<string>>()
    for (const [name, by] of offers) {
      const [only, ...others] = by
      if (only === undefined) continue
      if (others.length > 0) {
        ambiguous.set(name, by.map((b) => b.it.key))
        if (before.ambiguous.has(name)) continue
        yield* Effect.logWarning(
          `MCP Apps: tool ${name} is offered to views by backends ${
            by.map((b) => b.prefix).join(", ")
          }: not served under that name (call the prefixed tools)`
        )
        continue
      }
      const generation = all.get(only.prefix)?.generation ?? 0
      wanted.set(name, {
        alias: { prefix: only.prefix, fingerprint: `${generation} ${only.it.fingerprint}` },
        def: only.app.alias
      })
    }
    const current = before.served
    for (const [name, alias] of current) {
      const next = wanted.get(name)
      if (next !== undefined && next.alias.prefix === alias.prefix && next.alias.fingerprint === alias.fingerprint) {
        continue
      }
      yield* McpServer.removeTool(state.server, name).pipe(Effect.ignore)
    }
    const served = new Map<string, Alias>()
    for (const [name, next] of wanted) {
      const alias = current.get(name)
      if (alias !== undefined && next.alias.prefix === alias.prefix && next.alias.fingerprint === alias.fingerprint) {
        served.set(name, alias)
        continue
      }
      const added = yield* Effect.either(McpServer.addTool(state.server, next.def))
      if (Either.isRight(added)) served.set(name, next.alias)
      else {
        const backend = Names.logged(next.alias.prefix)
        yield* Effect.logWarning(`MCP Apps: alias ${name} of ${backend}: ${added.left.message}`)
      }
    }
    yield* Ref.set(state.aliases, { served, ambiguous })
  })
