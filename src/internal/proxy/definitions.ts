/**
 * The proxy's definitions: one backend's tools, prompts, resources and templates as ordinary
 * server definitions whose handlers forward to the backend's client (docs/architecture.md).
 *
 * Per call the handler forwards the arguments unchanged, the caller's progress (`ctx.progress`
 * from the backend's `onProgress`), log messages (`ctx.log` at the caller's level), input
 * questions (see `proxyInput`), and — by running the backend call in the handler's own fiber —
 * cancellation. A backend's `McpError` is the handler's `McpError` (same code, message and data);
 * any other failure is -32603 naming the backend.
 * @internal
 */
import type * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { InputRequired } from "../../Input.js"
import type * as Input from "../../Input.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as JsonSchema from "../../JsonSchema.js"
import * as McpClient from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Prompt from "../../Prompt.js"
import type { RequestContextShape } from "../../RequestContext.js"
import type * as Resource from "../../Resource.js"
import type * as Skill from "../../Skill.js"
import * as Tool from "../../Tool.js"
import * as ToolTransform from "../../ToolTransform.js"
import type { TransportError } from "../../Transport.js"
import * as UriTemplate from "../../UriTemplate.js"
import * as Apps from "./apps.js"
import type { Kind } from "./error.js"
import * as ProxyInput from "./input.js"
import { boundedList, type Limits } from "./listing.js"
import * as Names from "./names.js"
import type { UriMapping } from "./uris.js"

type McpError = JsonRpc.McpError

// ---------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------

/** A backend connection as the definitions see it. */
export interface Link {
  readonly prefix: string
  readonly client: McpClient.McpClient
  /** Which connection of the backend this is (0, 1, …: a reconnection makes a new link). */
  readonly generation: number
  /** Which of its tools are served, under which names. */
  readonly tools: {
    readonly include?: ReadonlyArray<string> | undefined
    readonly exclude?: ReadonlyArray<string> | undefined
    readonly rename?: Readonly<Record<string, string>> | undefined
    readonly transform?: Readonly<Record<string, ToolTransform.Transform>> | undefined
  }
  /** Which of its prompts, resources and templates are served (by the backend's names and URIs). */
  readonly filters: Filters
  /** How its resource and template URIs are served (see uris.ts). */
  readonly uris: UriMapping
  /** The proxied calls in flight to this backend (for questions that arrive outside any call). */
  readonly callers: Ref.Ref<ReadonlyArray<ProxyInput.Caller>>
  /** Completed with the reason when this connection is marked down. */
  readonly lost: Deferred.Deferred<string>
  /** Is this connection of the backend down (marked down, or replaced by a newer one)? */
  readonly isDown: Effect.Effect<boolean>
  /** Marks the backend down: its entries are removed (called on a fatal transport failure). */
  readonly down: (reason: string) => Effect.Effect<void>
}

/** An include / exclude list (exact names or URIs); absent: all, none. */
export interface Filter {
  readonly include?: ReadonlyArray<string> | undefined
  readonly exclude?: ReadonlyArray<string> | undefined
}

/** The per-backend filters besides the tools' (documented on `McpProxy.Policy`). */
export interface Filters {
  readonly prompts?: Filter | undefined
  readonly resources?: Filter | undefined
  readonly resourceTemplates?: Filter | undefined
}

/** Does `filter` let `key` through (`include` first, then `exclude`)? */
export const passes = (filter: Filter | undefined, key: string): boolean =>
  (filter?.include === undefined || filter.include.includes(key)) && !(filter?.exclude ?? []).includes(key)

/** A server definition of any kind. */
export type Definition =
  | { readonly _tag: "tool"; readonly def: Tool.Tool }
  | { readonly _tag: "prompt"; readonly def: Prompt.Prompt }
  | { readonly _tag: "resource"; readonly def: Resource.Resource }
  | { readonly _tag: "resourceTemplate"; readonly def: Resource.ResourceTemplate }
  | { readonly _tag: "skill"; readonly def: Skill.Skill }

/** An identity a definition occupies on the proxy. */
export interface Claim {
  readonly kind: Kind
  readonly key: string
}

/**
 * One definition the proxy serves for a backend: `id` is `"<kind> <key>"`; `fingerprint` changes
 * when the backend's description of it changes; `claims` are the identities it occupies (itself,
 * and for a skill every file URI as a resource).
 */
export interface Item {
  readonly kind: Kind
  readonly key: string
  readonly id: string
  readonly fingerprint: string
  readonly claims: ReadonlyArray<Claim>
  readonly definition: Definition
  /** A tool a view of its backend may call by the backend's own name (MCP Apps; see apps.ts). */
  readonly app?: AppTool | undefined
}

/** An app-callable tool of a backend serving views: the name its views know it by and its alias. */
export interface AppTool {
  readonly name: string
  /** Does the backend link a view from this tool (`_meta.ui.resourceUri`)? */
  readonly view: boolean
  /** The definition served under `name` (app-only, for hosts that declare MCP Apps). */
  readonly alias: Tool.Tool
}

/** The three lists a change notification names. */
export type Group = "tools" | "prompts" | "resources"

/** The kinds of definitions each group covers. */
export const GROUP_KINDS: Readonly<Record<Group, ReadonlyArray<Kind>>> = {
  tools: ["tool"],
  prompts: ["prompt"],
  resources: ["resource", "resourceTemplate", "skill"]
}

/** `"<kind> <key>"`. */
export const claimId = (claim: Claim): string => `${claim.kind} ${claim.key}`

/** Builds an item whose only claim is itself. */
export const item = (
  kind: Kind,
  key: string,
  fingerprint: string,
  definition: Definition,
  extra: ReadonlyArray<Claim> = []
): Item => ({
  kind,
  key,
  id: claimId({ kind, key }),
  fingerprint,
  claims: [{ kind, key }, ...extra],
  definition
})

// ---------------------------------------------------------------------------------------------
// errors
// ---------------------------------------------------------------------------------------------

/**
 * A transport failure that means the backend is gone: the connection or process closed, it could
 * not be started, or an HTTP exchange failed without any response (network error).
 */
export const isFatal = (e: TransportError): boolean =>
  e.reason === "Closed" || e.reason === "Spawn" || (e.reason === "Http" && e.status === undefined)

/** -32603 naming the backend, with a fixed message (details go to the log). */
export const unavailable = (prefix: string): McpError =>
  JsonRpc.McpError.internalError(`${Names.backend(prefix)} is unavailable`)

/**
 * The JSON-RPC error a failed backend call becomes: a backend `McpError` as is; a `ClientError`
 * "Input" carrying the `McpError` the caller's side produced (e.g. -32021) as that error; anything
 * else -32603 naming the backend. A fatal transport failure marks the backend down first.
 */
export const toMcpError = (link: Link, e: McpClient.CallError): Effect.Effect<McpError> => {
  switch (e._tag) {
    case "McpError":
      return Effect.succeed(e)
    case "TransportError":
      return Effect.gen(function*() {
        if (isFatal(e)) yield* link.down(`${e.reason}: ${e.message}`)
        else yield* Effect.logWarning(`${Names.logged(link.prefix)}: ${e.message}`)
        return unavailable(link.prefix)
      })
    case "ClientError":
      return Effect.gen(function*() {
        if (
          e.reason === "Input" && e.cause instanceof JsonRpc.McpError && e.cause.message !== ProxyInput.NOT_ANSWERED_YET
        ) {
          return e.cause
        }
        yield* Effect.logWarning(`${Names.logged(link.prefix)}: ${e.reason}: ${e.message}`)
        return e.reason === "Timeout"
          ? JsonRpc.McpError.internalError(`${Names.backend(link.prefix)} did not answer in time`)
          : JsonRpc.McpError.internalError(`${Names.backend(link.prefix)} failed`)
      })
  }
}

const guard = <A>(link: Link, effect: Effect.Effect<A, McpClient.CallError>): Effect.Effect<A, McpError> =>
  Effect.flatMap(link.isDown, (down) =>
    down
      ? Effect.fail(unavailable(link.prefix))
      : effect.pipe(Effect.catchAll((e) => Effect.flatMap(toMcpError(link, e), Effect.fail))))

// ---------------------------------------------------------------------------------------------
// forwarding one call
// ---------------------------------------------------------------------------------------------

/** The level the caller asked for: modern `_meta` log level (absent ⇒ none); legacy: all (the session filters). */
const logLevelOf = (ctx: RequestContextShape): McpSchema.LoggingLevel | undefined =>
  ctx.era === "legacy"
    ? "debug"
    : McpSchema.LOGGING_LEVELS.find((l) => l === ctx.meta[McpSchema.MetaKey.logLevel])

/** The call options that route the backend's progress, logs and questions to the caller. */
const callOptions = (ctx: RequestContextShape, caller: ProxyInput.Caller): McpClient.CallOptions => {
  const level = logLevelOf(ctx)
  return {
    ...(ctx.progressToken === undefined ? {} : {
      onProgress: (p: McpClient.Progress) =>
        Effect.asVoid(ctx.progress(p.progress, {
          ...(p.total === undefined ? {} : { total: p.total }),
          ...(p.message === undefined ? {} : { message: p.message })
        }))
    }),
    ...(level === undefined ? {} : {
      onLog: (m: McpClient.LogMessage) => Effect.asVoid(ctx.log(m.level, m.data, m.logger)),
      logLevel: level
    }),
    onRequest: ProxyInput.requestHandler(caller)
  }
}

/**
 * Runs one backend call for the caller `ctx`. Questions the backend asked that the (modern) caller
 * has not answered end the handler with `InputRequired`, whatever the backend call yielded.
 */
export const forward = <A>(
  link: Link,
  ctx: RequestContextShape,
  run: (options: McpClient.CallOptions) => Effect.Effect<A, McpClient.CallError>
): Effect.Effect<A, McpError | InputRequired> =>
  Effect.gen(function*() {
    if (yield* link.isDown) return yield* unavailable(link.prefix)
    const pending = yield* Ref.make<Readonly<Record<string, Input.InputRequest>>>({})
    const caller: ProxyInput.Caller = { ctx, pending, backend: link.prefix }
    // Registered while in flight: a legacy stdio backend's questions arrive outside any call.
    const outcome = yield* Effect.acquireUseRelease(
      Ref.update(link.callers, (cs) => [...cs, caller]),
      () =>
        run(callOptions(ctx, caller)).pipe(
          Effect.locally(ProxyInput.currentCaller, Option.some(caller)),
          Effect.either
        ),
      () => Ref.update(link.callers, (cs) => cs.filter((c) => c !== caller))
    )
    const asked = yield* Ref.get(pending)
    if (Object.keys(asked).length > 0) return yield* new InputRequired({ requests: asked })
    if (Either.isRight(outcome)) return outcome.right
    return yield* Effect.flatMap(toMcpError(link, outcome.left), Effect.fail)
  })

/** The caller's own `_meta` keys for `tools/call` (reserved `io.modelcontextprotocol/*` keys and the progress token are the proxy's). */
export const forwardedMeta = (ctx: RequestContextShape): JsonRpc.JsonObject | undefined => {
  const own = Object.entries(ctx.meta).filter(([k]) =>
    k !== McpSchema.MetaKey.progressToken && !k.startsWith("io.modelcontextprotocol/")
  )
  return own.length === 0 ? undefined : Object.fromEntries(own)
}

/** A backend result without the fields the proxy's own server sets (`resultType`, caching hints, `serverInfo`). */
export const clean = (result: McpSchema.CallToolResult): McpSchema.CallToolResult => {
  const { _meta, cacheScope: _cacheScope, resultType: _resultType, ttlMs: _ttlMs, ...rest } = result
  if (_meta === undefined) return rest
  const { [McpSchema.MetaKey.serverInfo]: _serverInfo, ...meta } = _meta
  return Object.keys(meta).length === 0 ? rest : { ...rest, _meta: meta }
}

// ---------------------------------------------------------------------------------------------
// definitions
// ---------------------------------------------------------------------------------------------

/** `{[key]: value}`, or `{}` when `value` is undefined (for optional fields under exactOptionalPropertyTypes). */
const opt = <K extends string, V>(key: K, value: V | undefined): { readonly [P in K]?: V } => {
  const out: { [P in K]?: V } = {}
  if (value !== undefined) out[key] = value
  return out
}

const completionsOf = (link: Link): boolean => link.client.info.capabilities.completions !== undefined

const completer = (link: Link, ref: McpClient.CompleteRef, argument: string): Resource.Complete => (value, other) =>
  guard(
    link,
    link.client.complete(ref, argument, value, Object.keys(other).length === 0 ? undefined : other)
  ).pipe(
    Effect.map((c) => ({ values: c.values, ...opt("total", c.total), ...opt("hasMore", c.hasMore) }))
  )

const completers = (
  link: Link,
  ref: McpClient.CompleteRef,
  names: ReadonlyArray<string>
): { readonly complete?: Readonly<Record<string, Resource.Complete>> } =>
  completionsOf(link) && names.length > 0
    ? { complete: Object.fromEntries(names.map((n) => [n, completer(link, ref, n)])) }
    : {}

const skipped = (link: Link, what: string, why: string): Effect.Effect<Option.Option<never>> =>
  Effect.as(Effect.logWarning(`${Names.logged(link.prefix)}: ${what} left out: ${why}`), Option.none())

/** Is the backend's tool `name` served (the link's `include` / `exclude`)? */
const isServed = (link: Link, name: string): boolean =>
  (link.tools.include === undefined || link.tools.include.includes(name)) &&
  !(link.tools.exclude ?? []).includes(name)

/**
 * A backend tool as `<prefix>_<name>` (or `<name>` for the empty prefix; `name` after the link's `rename`, or its `transform`'s
 * name); its schemas, annotations and description unchanged unless the link's `transform` for it
 * derives a tool (`ToolTransform.make`).
 */
export const toolItem = (link: Link, tool: McpSchema.Tool): Effect.Effect<Option.Option<Item>> => {
  if (tool.name.length === 0) return skipped(link, "a tool", "its name is empty")
  if (tool.inputSchema.type !== "object") {
    return skipped(link, `tool ${tool.name}`, "its inputSchema has no root \"type\": \"object\"")
  }
  const renamed = link.tools.rename !== undefined && Object.hasOwn(link.tools.rename, tool.name)
    ? link.tools.rename[tool.name]
    : undefined
  const transform = link.tools.transform !== undefined && Object.hasOwn(link.tools.transform, tool.name)
    ? link.tools.transform[tool.name]
    : undefined
  const name = Names.served(link.prefix, transform?.name ?? renamed ?? tool.name)
  const served: Tool.Tool = {
    name,
    ...opt("title", tool.title),
    ...opt("description", tool.description),
    ...opt("annotations", tool.annotations),
    ...opt("icons", tool.icons),
    ...opt("_meta", tool._meta),
    inputSchema: tool.inputSchema,
    ...opt("outputSchema", tool.outputSchema),
    handler: callBackend(link, tool.name)
  }
  const def = transform === undefined ? served : checked(ToolTransform.make(served, { ...transform, name }))
  return Effect.succeed(Option.some(item("tool", name, JSON.stringify(tool), { _tag: "tool", def })))
}

/**
 * The handler that forwards a call to the backend's tool `name` (with the caller's forwardable
 * `_meta`, through `forward`'s down-backend and error handling), its result cleaned of the
 * backend's own fields.
 */
export const callBackend = (link: Link, name: string): Tool.Tool["handler"] => (args, ctx) => {
  const meta = forwardedMeta(ctx)
  return forward(
    link,
    ctx,
    (options) => link.client.callTool(name, args, meta === undefined ? options : { ...options, _meta: meta })
  ).pipe(Effect.map(clean))
}

/**
 * A transformed tool checks its caller's arguments against its own `inputSchema` (the proxy's
 * server has `validate: false`, and the backend's errors would name the backend's arguments).
 */
const checked = (def: Tool.Tool): Tool.Tool => ({
  ...def,
  handler: (args, ctx) => {
    const issues = JsonSchema.validate(def.inputSchema ?? {}, args)
    return issues.length === 0
      ? def.handler(args, ctx)
      : Effect.fail(new Tool.ToolError({ message: JsonSchema.formatIssues("Invalid arguments", issues) }))
  }
})

/** A backend prompt as `<prefix>_<name>` (`<name>` for the empty prefix); completions go to the backend by its own name. */
export const promptItem = (link: Link, prompt: McpSchema.Prompt): Effect.Effect<Option.Option<Item>> => {
  if (prompt.name.length === 0) return skipped(link, "a prompt", "its name is empty")
  const name = Names.served(link.prefix, prompt.name)
  const def: Prompt.Prompt = {
    name,
    ...opt("title", prompt.title),
    ...opt("description", prompt.description),
    ...opt("arguments", prompt.arguments),
    ...opt("icons", prompt.icons),
    ...opt("_meta", prompt._meta),
    handler: (args, ctx) =>
      forward(link, ctx, (options) => link.client.getPrompt(prompt.name, args, options)).pipe(
        Effect.map((r) => ({ ...opt("description", r.description), messages: r.messages }))
      ),
    ...completers(link, { type: "ref/prompt", name: prompt.name }, (prompt.arguments ?? []).map((a) => a.name))
  }
  return Effect.succeed(Option.some(item("prompt", name, JSON.stringify(prompt), { _tag: "prompt", def })))
}

/**
 * Reads the backend's `uri` (the caller named `asked`, its proxy form); the contents' URIs are
 * given back in the proxy's form. A legacy -32002 becomes -32602 with `data.uri` for a modern caller.
 */
const read = (link: Link, ctx: RequestContextShape, uri: string, asked: string) =>
  forward(link, ctx, (options) => link.client.readResource(uri, options)).pipe(
    Effect.map((r) => ({
      contents: r.contents.map((c) => ({ ...c, uri: link.uris.toProxy(c.uri) ?? c.uri }))
    })),
    Effect.mapError((e) =>
      e._tag === "McpError" && e.code === JsonRpc.ErrorCode.LegacyResourceNotFound && ctx.era === "modern"
        ? JsonRpc.McpError.resourceNotFound(asked)
        : e
    )
  )

/** A backend resource under its URI in the proxy's form (see uris.ts). */
export const resourceItem = (link: Link, resource: McpSchema.Resource): Effect.Effect<Option.Option<Item>> => {
  const uri = link.uris.toProxy(resource.uri)
  if (uri === undefined) return skipped(link, `resource ${resource.uri}`, "its URI has no scheme")
  const def: Resource.Resource = {
    uri,
    name: resource.name,
    ...opt("title", resource.title),
    ...opt("description", resource.description),
    ...opt("mimeType", resource.mimeType),
    ...opt("size", resource.size),
    ...opt("annotations", resource.annotations),
    ...opt("icons", resource.icons),
    ...opt("_meta", resource._meta),
    handler: (asked, ctx) => read(link, ctx, resource.uri, asked)
  }
  return Effect.succeed(Option.some(item("resource", uri, JSON.stringify(resource), { _tag: "resource", def })))
}

/**
 * A backend resource template under its `uriTemplate` in the proxy's form (the scheme must be
 * literal); a read maps the URI back, completions go to the backend under its own template.
 */
export const templateItem = (link: Link, template: McpSchema.ResourceTemplate): Effect.Effect<Option.Option<Item>> => {
  const parsed = UriTemplate.parse(template.uriTemplate)
  if (Either.isLeft(parsed)) return skipped(link, `template ${template.uriTemplate}`, parsed.left.message)
  const uriTemplate = link.uris.toProxy(template.uriTemplate)
  if (uriTemplate === undefined || Either.isLeft(UriTemplate.parse(uriTemplate))) {
    return skipped(link, `template ${template.uriTemplate}`, "its scheme is not literal text")
  }
  const def: Resource.ResourceTemplate = {
    uriTemplate,
    name: template.name,
    ...opt("title", template.title),
    ...opt("description", template.description),
    ...opt("mimeType", template.mimeType),
    ...opt("annotations", template.annotations),
    ...opt("icons", template.icons),
    ...opt("_meta", template._meta),
    handler: (_variables, ctx) => {
      const uri = link.uris.fromProxy(ctx.uri)
      return uri === undefined
        ? Effect.fail(JsonRpc.McpError.resourceNotFound(ctx.uri))
        : read(link, ctx, uri, ctx.uri)
    },
    ...completers(link, { type: "ref/resource", uri: template.uriTemplate }, parsed.right.variables)
  }
  return Effect.succeed(
    Option.some(item("resourceTemplate", uriTemplate, JSON.stringify(template), { _tag: "resourceTemplate", def }))
  )
}

/** The backend's tools within `limits` (those its `include` / `exclude` let through). */
export const listTools = (link: Link, limits: Limits): Effect.Effect<ReadonlyArray<Item>, McpClient.CallError> =>
  boundedList(link, limits, {
    method: McpSchema.Method.toolsList,
    field: "tools",
    schema: McpSchema.Tool,
    typed: (cursor) => Effect.map(link.client.listTools(cursor), (p) => ({ items: p.tools, nextCursor: p.nextCursor }))
  }).pipe(
    Effect.flatMap((tools) =>
      Effect.forEach(
        tools.filter((t) => isServed(link, t.name)),
        (t) => Effect.map(toolItem(link, t), Option.map((it) => Apps.withApps(link, t, it)))
      )
    ),
    Effect.map((items) => items.flatMap(Option.toArray))
  )

/** The backend's prompts within `limits`. */
export const listPrompts = (link: Link, limits: Limits): Effect.Effect<ReadonlyArray<Item>, McpClient.CallError> =>
  boundedList(link, limits, {
    method: McpSchema.Method.promptsList,
    field: "prompts",
    schema: McpSchema.Prompt,
    typed: (cursor) =>
      Effect.map(link.client.listPrompts(cursor), (p) => ({ items: p.prompts, nextCursor: p.nextCursor }))
  }).pipe(
    Effect.flatMap((prompts) =>
      Effect.forEach(prompts.filter((p) => passes(link.filters.prompts, p.name)), (p) => promptItem(link, p))
    ),
    Effect.map((items) => items.flatMap(Option.toArray))
  )

/**
 * The backend's static resources, except those `excluded` (the files of its skills), and its
 * templates, those its filters let through.
 */
export const listResources = (
  link: Link,
  limits: Limits,
  excluded: (uri: string) => boolean
): Effect.Effect<ReadonlyArray<Item>, McpClient.CallError> =>
  Effect.gen(function*() {
    const resources = yield* boundedList(link, limits, {
      method: McpSchema.Method.resourcesList,
      field: "resources",
      schema: McpSchema.Resource,
      typed: (cursor) =>
        Effect.map(link.client.listResources(cursor), (p) => ({ items: p.resources, nextCursor: p.nextCursor }))
    })
    const templates = yield* boundedList(link, limits, {
      method: McpSchema.Method.resourcesTemplatesList,
      field: "resourceTemplates",
      schema: McpSchema.ResourceTemplate,
      typed: (cursor) =>
        Effect.map(
          link.client.listResourceTemplates(cursor),
          (p) => ({ items: p.resourceTemplates, nextCursor: p.nextCursor })
        )
    })
    const fromResources = yield* Effect.forEach(
      resources.filter((r) => !excluded(r.uri) && passes(link.filters.resources, r.uri)),
      (r) => resourceItem(link, r)
    )
    const fromTemplates = yield* Effect.forEach(
      templates.filter((t) => passes(link.filters.resourceTemplates, t.uriTemplate)),
      (t) => templateItem(link, t)
    )
    return [...fromResources, ...fromTemplates].flatMap(Option.toArray)
  })
