/**
 * The typed method table: for each method the server answers once a request's era is known, the
 * revisions that define it, the capability that gates it, whether it may answer `input_required`
 * (multi round-trip) and whether its modern result carries caching hints, its params decoder and
 * its handler. `Results` types every handler's result against the `McpSchema` result types (and the
 * Skills and Tasks extensions' own), so the compiler checks what goes on the wire.
 * The capabilities a server declares (derived once per snapshot) are here too: the gates read
 * them on every request.
 *
 * `initialize` is not here: it is the legacy handshake that establishes the era, answered by
 * dispatch before any routing.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type { InputRequired } from "../../Input.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type { RequestContextShape } from "../../RequestContext.js"
import type * as SkillApi from "../../Skill.js"
import * as Task from "../../Task.js"
import * as Skill from "../skill/build.js"
import { complete } from "./completions.js"
import { fail, Failure, invalidParamsFrom } from "./failure.js"
import type { DispatchOptions, Server } from "./model.js"
import { getPrompt, listPrompts } from "./prompts.js"
import { getSkill, listResources, listSkills, listTemplates, readDirectory, readResource } from "./resources.js"
import type * as Defs from "./snapshot.js"
import { listen, ListenParams, subscribe } from "./subscriptions.js"
import * as Tasks from "./tasks.js"
import { callTool, decodeCallParams, listTools } from "./tools.js"

const { McpError } = JsonRpc
type McpError = JsonRpc.McpError

/** Which revisions define a method: a request of another era naming it is -32601. */
export type Eras = "modern" | "legacy" | "both"

/** One routed request, as a method's handler sees it. */
export interface Call {
  readonly server: Server
  /** The caller's view of the snapshot (hidden definitions filtered out): what handlers work on. */
  readonly snapshot: Defs.Snapshot
  /** The capabilities derived from the whole snapshot. */
  readonly caps: McpSchema.ServerCapabilities
  readonly request: JsonRpc.Request
  readonly options: DispatchOptions
  readonly ctx: RequestContextShape
  /**
   * `tools/call`: the tool the request's `name` names, found once when the request was dispatched
   * (the HTTP header check reads it too); `undefined` when there is none or the caller may not see it.
   */
  readonly tool: Defs.CompiledTool | undefined
}

/** A method's row in the table; `A` is its result type. */
export interface Entry<A> {
  readonly eras: Eras
  /** May the handler answer `input_required` (modern requests only; MCP 2026-07-28, Multi Round-Trip Requests)? */
  readonly mrtr: boolean
  /** Does a modern result carry `ttlMs` and `cacheScope` (MCP 2026-07-28, Caching)? */
  readonly cacheable: boolean
  /** Is the method served with these capabilities (else -32601, HTTP 404)? */
  readonly gate: (caps: McpSchema.ServerCapabilities) => boolean
  /** A client capability the request must declare, checked before the params (else that error). */
  readonly requires: ((call: Call) => McpError | undefined) | undefined
  /** Decodes the params and runs the handler. */
  readonly handle: (call: Call) => Effect.Effect<A, Failure | InputRequired>
}

/** The result type of each method, from `McpSchema` (and the Skills and Tasks extensions). */
export interface Results {
  readonly [McpSchema.Method.discover]: McpSchema.DiscoverResult
  readonly [McpSchema.Method.ping]: McpSchema.EmptyResult
  readonly [McpSchema.Method.toolsList]: McpSchema.ListToolsResult
  readonly [McpSchema.Method.toolsCall]: McpSchema.CallToolResult | Task.CreateTaskResult
  readonly [McpSchema.Method.resourcesList]: McpSchema.ListResourcesResult
  readonly [McpSchema.Method.resourcesTemplatesList]: McpSchema.ListResourceTemplatesResult
  readonly [McpSchema.Method.resourcesRead]: McpSchema.ReadResourceResult
  readonly [McpSchema.Method.resourcesSubscribe]: McpSchema.EmptyResult
  readonly [McpSchema.Method.resourcesUnsubscribe]: McpSchema.EmptyResult
  readonly [McpSchema.Method.promptsList]: McpSchema.ListPromptsResult
  readonly [McpSchema.Method.promptsGet]: McpSchema.GetPromptResult
  readonly [McpSchema.Method.complete]: McpSchema.CompleteResult
  readonly [McpSchema.Method.loggingSetLevel]: McpSchema.EmptyResult
  readonly [McpSchema.Method.subscriptionsListen]: McpSchema.EmptyResult
  readonly [Skill.Method.list]: SkillApi.ListSkillsResult
  readonly [Skill.Method.get]: SkillApi.GetSkillResult
  readonly [Skill.Method.directoryRead]: typeof SkillApi.ReadDirectoryResult.Type
  readonly [Task.Method.get]: Task.DetailedTask
  readonly [Task.Method.update]: McpSchema.EmptyResult
  readonly [Task.Method.cancel]: McpSchema.EmptyResult
}

/** The table: one entry per method, each typed by its result. */
export type Table = { readonly [K in keyof Results]: Entry<Results[K]> }

/** A method as written in the table: its params decoder and a handler of the decoded params. */
interface Spec<P, A> {
  readonly eras: Eras
  readonly mrtr?: boolean
  readonly cacheable?: boolean
  readonly gate?: (caps: McpSchema.ServerCapabilities) => boolean
  readonly requires?: (call: Call) => McpError | undefined
  readonly params: (params: JsonRpc.JsonObject) => Either.Either<P, Failure>
  readonly run: (call: Call, params: P) => Effect.Effect<A, Failure | InputRequired>
}

const EMPTY: JsonRpc.JsonObject = Object.freeze({})
const always = (): boolean => true

const method = <P, A>(spec: Spec<P, A>): Entry<A> => {
  const { params, run } = spec
  return {
    eras: spec.eras,
    mrtr: spec.mrtr ?? false,
    cacheable: spec.cacheable ?? false,
    gate: spec.gate ?? always,
    requires: spec.requires,
    handle: (call) => {
      const decoded = params(call.request.params ?? EMPTY)
      return Either.isLeft(decoded) ? Effect.fail(decoded.left) : run(call, decoded.right)
    }
  }
}

/** A params decoder from a Schema: a failure is -32602 with the issues in `data`. */
const decoder = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (params: JsonRpc.JsonObject): Either.Either<A, Failure> =>
    Either.mapLeft(decode(params), (e) => new Failure(invalidParamsFrom(e), 200))
}

/** The params decoder of a method whose params carry nothing but `_meta`. */
const NO_PARAMS: Either.Either<void, Failure> = Either.void
const noParams = (): Either.Either<void, Failure> => NO_PARAMS

const paginated = decoder(McpSchema.PaginatedParams)
const readParams = decoder(McpSchema.ReadResourceParams)
const getPromptParams = decoder(McpSchema.GetPromptParams)
const completeParams = decoder(McpSchema.CompleteParams)
const setLevelParams = decoder(McpSchema.SetLevelParams)
const listenParams = decoder(ListenParams)
const getSkillParams = decoder(Skill.GetSkillParams)
const readDirectoryParams = decoder(Skill.ReadDirectoryParams)
const taskIdParams = decoder(Tasks.TaskIdParams)
const updateParams = decoder(Tasks.UpdateParams)

const declared = (capability: keyof McpSchema.ServerCapabilities) => (caps: McpSchema.ServerCapabilities): boolean =>
  caps[capability] !== undefined

const listens = (caps: McpSchema.ServerCapabilities): boolean =>
  caps.tools?.listChanged === true || caps.prompts?.listChanged === true ||
  caps.resources?.listChanged === true || caps.resources?.subscribe === true || servesTasks(caps)

const subscribes = (caps: McpSchema.ServerCapabilities): boolean => caps.resources?.subscribe === true

const servesTasks = (caps: McpSchema.ServerCapabilities): boolean => caps.extensions?.[Task.EXTENSION_ID] !== undefined

/**
 * A `tasks/*` method: modern, served when the `tasks` option is set (its capability says so; the
 * handler still narrows `server.tasks`), the extension declared by the request.
 */
const taskMethod = <P, A>(
  params: (params: JsonRpc.JsonObject) => Either.Either<P, Failure>,
  run: (runtime: Tasks.Runtime, params: P, ctx: RequestContextShape) => Effect.Effect<A, Failure>
): Entry<A> =>
  method({
    eras: "modern",
    gate: servesTasks,
    requires: ({ ctx }) => Tasks.requireExtension(ctx),
    params,
    run: ({ ctx, request, server }, p) =>
      server.tasks === undefined ? fail(McpError.methodNotFound(request.method), 404) : run(server.tasks, p, ctx)
  })

const setLevel = (options: DispatchOptions, level: McpSchema.LoggingLevel): Effect.Effect<McpSchema.EmptyResult> =>
  options.session === undefined
    ? Effect.succeed({})
    : Effect.as(Ref.update(options.session.state, (s) => s === undefined ? s : { ...s, logLevel: level }), {})

/**
 * The methods. Gates follow the derived capabilities (MCP 2026-07-28, Discover › Capabilities): a kind
 * with no definitions is not advertised, and its methods are -32601.
 */
export const table: Table = {
  [McpSchema.Method.discover]: method({
    eras: "modern",
    cacheable: true,
    params: noParams,
    run: ({ caps, server }) =>
      Effect.succeed({
        supportedVersions: server.versions,
        capabilities: caps,
        ...(server.options.instructions === undefined ? {} : { instructions: server.options.instructions })
      })
  }),
  [McpSchema.Method.ping]: method({ eras: "legacy", params: noParams, run: () => Effect.succeed({}) }),
  [McpSchema.Method.toolsList]: method({
    eras: "both",
    cacheable: true,
    gate: declared("tools"),
    params: paginated,
    run: ({ ctx, server, snapshot }, p) => listTools(server, snapshot, p, ctx)
  }),
  [McpSchema.Method.toolsCall]: method({
    eras: "both",
    mrtr: true,
    gate: declared("tools"),
    params: decodeCallParams,
    run: ({ ctx, server, tool }, p) => callTool(server, tool, p, ctx)
  }),
  [McpSchema.Method.resourcesList]: method({
    eras: "both",
    cacheable: true,
    gate: declared("resources"),
    params: paginated,
    run: ({ server, snapshot }, p) => listResources(server, snapshot, p)
  }),
  [McpSchema.Method.resourcesTemplatesList]: method({
    eras: "both",
    cacheable: true,
    gate: declared("resources"),
    params: paginated,
    run: ({ server, snapshot }, p) => listTemplates(server, snapshot, p)
  }),
  [McpSchema.Method.resourcesRead]: method({
    eras: "both",
    mrtr: true,
    cacheable: true,
    gate: declared("resources"),
    params: readParams,
    run: ({ ctx, snapshot }, p) => readResource(snapshot, p, ctx)
  }),
  [McpSchema.Method.resourcesSubscribe]: method({
    eras: "legacy",
    gate: subscribes,
    params: readParams,
    run: ({ options }, p) => subscribe(options, p, true)
  }),
  [McpSchema.Method.resourcesUnsubscribe]: method({
    eras: "legacy",
    gate: subscribes,
    params: readParams,
    run: ({ options }, p) => subscribe(options, p, false)
  }),
  [McpSchema.Method.promptsList]: method({
    eras: "both",
    cacheable: true,
    gate: declared("prompts"),
    params: paginated,
    run: ({ server, snapshot }, p) => listPrompts(server, snapshot, p)
  }),
  [McpSchema.Method.promptsGet]: method({
    eras: "both",
    mrtr: true,
    gate: declared("prompts"),
    params: getPromptParams,
    run: ({ ctx, snapshot }, p) => getPrompt(snapshot, p, ctx)
  }),
  [McpSchema.Method.complete]: method({
    eras: "both",
    gate: declared("completions"),
    params: completeParams,
    run: ({ ctx, snapshot }, p) => complete(snapshot, p, ctx)
  }),
  [McpSchema.Method.loggingSetLevel]: method({
    eras: "legacy",
    gate: declared("logging"),
    params: setLevelParams,
    run: ({ options }, { level }) => setLevel(options, level)
  }),
  [McpSchema.Method.subscriptionsListen]: method({
    eras: "modern",
    gate: listens,
    requires: ({ ctx, request, server }) => Tasks.listenRequires(server.tasks, request.params ?? EMPTY, ctx),
    params: listenParams,
    run: ({ caps, ctx, options, request, server }, p) => listen(server, caps, request, ctx, p, options.shutdown)
  }),
  // Skills extension (SEP-2640). Gated on any declared extension, as before the table.
  [Skill.Method.list]: method({
    eras: "both",
    cacheable: true,
    gate: declared("extensions"),
    params: paginated,
    run: ({ server, snapshot }, p) => listSkills(server, snapshot, p)
  }),
  [Skill.Method.get]: method({
    eras: "both",
    cacheable: true,
    gate: declared("extensions"),
    params: getSkillParams,
    run: ({ snapshot }, p) => getSkill(snapshot, p)
  }),
  [Skill.Method.directoryRead]: method({
    eras: "both",
    cacheable: true,
    gate: declared("extensions"),
    params: readDirectoryParams,
    run: ({ server, snapshot }, p) => readDirectory(server, snapshot, p)
  }),
  // Tasks extension (SEP-2663).
  [Task.Method.get]: taskMethod(taskIdParams, Tasks.get),
  [Task.Method.update]: taskMethod(updateParams, Tasks.update),
  [Task.Method.cancel]: taskMethod(taskIdParams, Tasks.cancel)
}

const byName: ReadonlyMap<string, Entry<JsonRpc.JsonObject>> = new Map(
  Object.entries<Entry<JsonRpc.JsonObject>>(table)
)

/** The table's entry for a method name (`undefined`: not a method this server answers after the handshake). */
export const lookup = (name: string): Entry<JsonRpc.JsonObject> | undefined => byName.get(name)

// ---------------------------------------------------------------------------------------------
// what the server declares (its capabilities): what the gates above read
// ---------------------------------------------------------------------------------------------

/** Capabilities per snapshot: derived once, not on every request (a snapshot never changes). */
const capabilitiesCache = new WeakMap<Defs.Snapshot, McpSchema.ServerCapabilities>()

export const capabilities = (server: Server, snapshot: Defs.Snapshot): McpSchema.ServerCapabilities => {
  const cached = capabilitiesCache.get(snapshot)
  if (cached !== undefined) return cached
  const caps = deriveCapabilities(server, snapshot)
  capabilitiesCache.set(snapshot, caps)
  return caps
}

const deriveCapabilities = (server: Server, snapshot: Defs.Snapshot): McpSchema.ServerCapabilities => {
  const caps: Record<string, Record<string, unknown>> = {}
  const listChanged = server.options.listChanged === true ? { listChanged: true } : {}
  if (snapshot.tools.length > 0) caps.tools = { ...listChanged }
  if (snapshot.resources.length > 0 || snapshot.templates.length > 0 || snapshot.skills.length > 0) {
    caps.resources = { ...(server.options.subscribe === true ? { subscribe: true } : {}), ...listChanged }
  }
  if (snapshot.prompts.length > 0) caps.prompts = { ...listChanged }
  const completes = snapshot.prompts.some((p) => p.def.complete !== undefined) ||
    snapshot.templates.some((t) => t.def.complete !== undefined)
  if (completes) caps.completions = {}
  if (server.options.logging === true) caps.logging = {}
  // Skills extension (SEP-2640): declared only when skills are served; settings inline.
  if (snapshot.skills.length > 0) caps.extensions = { [Skill.EXTENSION_ID]: { directoryRead: true } }
  // Tasks extension (SEP-2663): declared when the `tasks` option is set; no settings.
  if (server.tasks !== undefined) caps.extensions = { ...caps.extensions, [Task.EXTENSION_ID]: {} }
  return caps
}
