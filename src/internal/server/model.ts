/**
 * Server, session and dispatch types.
 * @internal
 */
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as Cluster from "../../Cluster.js"
import type { InputRequired } from "../../Input.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as JsonSchema from "../../JsonSchema.js"
import * as McpSchema from "../../McpSchema.js"
import type { McpServer as PublicServer } from "../../McpServer.js"
import type * as Prompt from "../../Prompt.js"
import type { AuthInfo, RequestContext, RequestContextShape } from "../../RequestContext.js"
import type * as Resource from "../../Resource.js"
import type * as Skill from "../../Skill.js"
import type * as Task from "../../Task.js"
import type * as Tool from "../../Tool.js"
import type * as Telemetry from "../telemetry.js"
import * as Defs from "./snapshot.js"
import type * as Tasks from "./tasks.js"

type McpError = JsonRpc.McpError

/**
 * Server options (`McpServer.Options`; each field is documented here, where it is declared). The
 * type parameters are the definitions' and middlewares' types, so `McpServer.make` can infer the
 * services they need and provide; their defaults are definitions that need no services.
 */
export interface Options<
  T extends Tool.Any = Tool.Tool,
  Res extends Resource.AnyResource = Resource.Resource,
  Tpl extends Resource.AnyTemplate = Resource.ResourceTemplate,
  P extends Prompt.Any = Prompt.Prompt,
  M extends AnyMiddleware = Middleware
> {
  /**
   * The server's name in its `Implementation`: sent as `serverInfo` (legacy `initialize`) or under
   * `_meta["io.modelcontextprotocol/serverInfo"]` of every modern result.
   */
  readonly name: string
  /** The server's version in its `Implementation` (see {@link Options.name}). */
  readonly version: string
  /** A human-readable name in its `Implementation`. */
  readonly title?: string
  /** A description in its `Implementation`. */
  readonly description?: string
  /** A website in its `Implementation`. */
  readonly websiteUrl?: string
  /** Icons in its `Implementation`. */
  readonly icons?: ReadonlyArray<McpSchema.Icon>
  /** Passed through in `server/discover` (modern) and the `initialize` result (legacy). */
  readonly instructions?: string
  /** The initial tools (more come and go with `addTool` / `McpServer.tool`). */
  readonly tools?: ReadonlyArray<T>
  /** The initial static resources. */
  readonly resources?: ReadonlyArray<Res>
  /** The initial resource templates. */
  readonly resourceTemplates?: ReadonlyArray<Tpl>
  /** The initial prompts. */
  readonly prompts?: ReadonlyArray<P>
  /** Items per list page (`tools/list`, `resources/list`, …), default 100. */
  readonly pageSize?: number
  /**
   * Caching hints on modern `server/discover`, list and read results (MCP 2026-07-28, Caching):
   * `ttlMs` (milliseconds, default 0) and `scope` (default `"private"`).
   */
  readonly cache?: { readonly ttlMs?: number; readonly scope?: McpSchema.CacheScope }
  /** The revisions served, default all of `2026-07-28`, `2025-11-25`, `2025-06-18`. */
  readonly versions?: ReadonlyArray<McpSchema.ProtocolVersion>
  /** Advertise `logging` and accept `logging/setLevel` (legacy), default false. */
  readonly logging?: boolean
  /**
   * Advertise `listChanged` on tools, prompts and resources and announce changes (modern: on the
   * `subscriptions/listen` streams that asked; legacy: on the session), default false. Changes
   * travel on the `Cluster.ChangeBus` of `make`'s context (e.g. `presa-mcp/Redis`, so the
   * instances behind one endpoint hear each other's), else on an in-memory bus of this server.
   */
  readonly listChanged?: boolean
  /**
   * Advertise `resources.subscribe` (legacy `resources/subscribe`, modern `resourceSubscriptions`
   * in listen filters), default false.
   */
  readonly subscribe?: boolean
  /**
   * A tool defect's text is `Name: message` instead of `Name`, default false (`Name` is the
   * error's `name` when it is an identifier of at most 64 characters, else `Error`).
   */
  readonly exposeErrorMessages?: boolean
  /**
   * Check tool arguments before the handler and structured results against `outputSchema`,
   * default true. A `Tool.fromJsonSchema` tool's arguments are checked against its `inputSchema`,
   * a `Tool.make` tool's by its Schema decode (the built-in validator's text when a refused call
   * breaks the derived JSON Schema). A refused call is an `isError` result `Invalid arguments at
   * <pointer>: <message>` (SEP-1303).
   */
  readonly validate?: boolean
  /**
   * Replaces the built-in subset validator (see `presa-mcp/JsonSchemaFull` for full 2020-12): it
   * then runs before every tool's handler, `Tool.make` tools included, and on structured results.
   */
  readonly validator?: JsonSchema.Validator
  /**
   * The HMAC that signs the `requestState` of `input_required` results: `keys` (the first signs,
   * all verify, so keys can be rotated; default a random key per process: give keys when several
   * instances serve one endpoint; empty strings are not keys: they are ignored, and only empty
   * ones mean the random key, with a warning logged) and `ttl` (default 10 minutes).
   */
  readonly inputState?: { readonly keys?: ReadonlyArray<string>; readonly ttl?: Duration.DurationInput }
  /**
   * Skills served with the Skills extension (`io.modelcontextprotocol/skills`, SEP-2640): declares
   * the extension (with `directoryRead`) and `resources`; each file is a resource at
   * `skill://<path>/<file>`; `skills/list`, `skills/get`, `resources/directory/read` are answered.
   */
  readonly skills?: ReadonlyArray<Skill.Skill>
  /**
   * Request middlewares, outermost first (see the `Middleware` module): what they provide is
   * visible to the handlers' types.
   */
  readonly middleware?: ReadonlyArray<M>
  /**
   * Serve the Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663, modern only):
   * `{ttl, pollInterval, maxTasks}` (see `Task.Options`); declares the extension, answers
   * `tasks/get`, `tasks/update`, `tasks/cancel`, and lets tools with a `task` policy answer with a
   * task. Task state lives in the `Task.TaskStore` of `make`'s context, else in memory (a store
   * with `signals`, like `presa-mcp/Redis`'s, serves every task request on any instance).
   */
  readonly tasks?: Task.Options
  /**
   * `{recordToolContent}` (see `Telemetry.Options`): add a tool call's arguments and result to its
   * SERVER span, default false. Spans and metrics need no option (see the `Telemetry` module).
   */
  readonly telemetry?: Telemetry.Options
}

/** Options whatever services their definitions need (what the server stores). */
export type AnyOptions = Options<Tool.Any, Resource.AnyResource, Resource.AnyTemplate, Prompt.Any, AnyMiddleware>

/** The services the definitions' handlers need besides `RequestContext`. */
export type HandlerServices<T, Res, Tpl, P> =
  | Tool.Services<T>
  | Resource.Services<Res>
  | Resource.Services<Tpl>
  | Prompt.Services<P>

/**
 * What `McpServer.make` requires from its environment: the handlers' services that no middleware
 * provides, and the middlewares' own requirements.
 */
export type Requirements<T, Res, Tpl, P, M> =
  | Exclude<HandlerServices<T, Res, Tpl, P>, MiddlewareProvides<M> | RequestContext>
  | MiddlewareRequires<M>

/** The services a server's handlers can count on: its requirements and what its middlewares provide. */
export type ServerServices<T, Res, Tpl, P, M> = Requirements<T, Res, Tpl, P, M> | MiddlewareProvides<M>

/** What a middleware sees of one request. */
export interface MiddlewareRequest {
  readonly method: string
  readonly params: JsonRpc.JsonObject
  readonly ctx: RequestContextShape
}

/** The rest of the chain, as a middleware sees it: it needs the services the middleware provides. */
export type MiddlewareNext<Provides = never> = Effect.Effect<
  JsonRpc.JsonObject,
  JsonRpc.McpError | InputRequired,
  Provides
>

/**
 * A middleware around one request (after era and `_meta` checks, before the handler): it sees
 * the method, the params and the request context, and wraps `next` (the rest of the chain and the
 * handler). It may time or log the call, short-circuit with a result or an `McpError`, or run
 * `next` with the services `Provides` provided; its own Effect needs `Requires`. The optional
 * `~provides` member is type-level only (it keeps `Provides` visible when middlewares are inferred
 * as a union).
 */
export interface Middleware<Provides = never, Requires = never> {
  (
    request: MiddlewareRequest,
    next: MiddlewareNext<Provides>
  ): Effect.Effect<JsonRpc.JsonObject, JsonRpc.McpError | InputRequired, Requires>
  readonly "~provides"?: { readonly provides: Provides } | undefined
}

/** Any middleware, whatever it provides and requires. */
export interface AnyMiddleware {
  (
    request: MiddlewareRequest,
    next: MiddlewareNext
  ): Effect.Effect<JsonRpc.JsonObject, JsonRpc.McpError | InputRequired, unknown>
  readonly "~provides"?: { readonly provides: unknown } | undefined
}

/** The services a middleware (or a union of them) provides to what it wraps. */
export type MiddlewareProvides<M> = M extends { readonly "~provides"?: { readonly provides: infer P } | undefined } ? P
  : never

/** The services a middleware's own Effect (or a union of them) needs. */
export type MiddlewareRequires<M> = M extends (
  request: MiddlewareRequest,
  next: MiddlewareNext
) => Effect.Effect<JsonRpc.JsonObject, JsonRpc.McpError | InputRequired, infer R> ? R
  : never

/** A change to what the server serves (`Cluster.ChangeEvent`). */
export type ChangeEvent = Cluster.ChangeEvent

/**
 * Where change events travel (`Cluster.ChangeBus`): in memory by default (one `PubSub`), or across
 * instances (a Redis channel). Each subscription is a queue that sees every event published after
 * it was made, whichever instance published it.
 */
export type ChangeBus = Cluster.ChangeBusShape

/** The in-memory bus: one unbounded `PubSub` (the behaviour of a single instance). */
export const memoryBus: Effect.Effect<ChangeBus> = Effect.map(PubSub.unbounded<ChangeEvent>(), (pubsub) => ({
  publish: (event) => Effect.asVoid(PubSub.publish(pubsub, event)),
  subscribe: PubSub.subscribe(pubsub)
}))

/**
 * A server's internals: its options, the `SubscriptionRef` of definition snapshots, the change
 * bus, the shutdown signal and the `requestState` keys. Never part of the public type: the
 * library's own modules reach them through `internal(server)` (`./service.ts`).
 */
export interface Core {
  readonly info: McpSchema.Implementation
  /** The options, with the definitions' service types erased (the server provides them). */
  readonly options: Options
  /** The environment `make` captured: provided (under the middlewares) to every request. */
  readonly context: Context.Context<never>
  readonly versions: ReadonlyArray<McpSchema.ProtocolVersion>
  readonly state: SubscriptionRef.SubscriptionRef<Defs.Snapshot>
  /** Change events: list changes and resource updates (`Cluster.ChangeBus` of `make`'s context, else in memory). */
  readonly events: ChangeBus
  /** Completed by `shutdown`: every open `subscriptions/listen` ends gracefully. */
  readonly stopped: Deferred.Deferred<void>
  /** HMAC keys for `requestState` (the first signs, all verify). */
  readonly stateKeys: ReadonlyArray<string>
  /** The Tasks extension's machinery, when the `tasks` option is set. */
  readonly tasks?: Tasks.Runtime | undefined
}

/**
 * The server as the library sees it: the public service (`McpServer.McpServer`, whose methods
 * close over this same object) and its internals. `Services` (type-level only, contravariant) are
 * the services its handlers can count on: what `make` captured from its environment and what its
 * middlewares provide.
 */
export interface Server<Services = never> extends Core, PublicServer<Services> {}

/** What a legacy session knows once `initialize` was answered. */
export interface SessionState {
  readonly protocolVersion: McpSchema.ProtocolVersion
  readonly clientInfo: McpSchema.Implementation | undefined
  readonly clientCapabilities: McpSchema.ClientCapabilities
  readonly initialized: boolean
  readonly logLevel: McpSchema.LoggingLevel | undefined
  readonly subscriptions: ReadonlySet<string>
}

/** A legacy session: one stdio process, or one HTTP `Mcp-Session-Id`. */
export interface Session {
  readonly state: Ref.Ref<SessionState | undefined>
}

export const makeSession: Effect.Effect<Session> = Effect.map(
  Ref.make<SessionState | undefined>(undefined),
  (state) => ({ state })
)

/** HTTP request headers as the platform gives them (names lower-case). */
export type Headers = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/** Options of one dispatch. */
export interface DispatchOptions {
  /** The legacy session of this connection, if the transport has one. */
  readonly session?: Session | undefined
  /** HTTP request headers: enables the 2026-07-28 header checks and header-based era routing. */
  readonly headers?: Headers | undefined
  /** Where request-scoped notifications (progress, log messages) go. */
  readonly notify?: ((notification: JsonRpc.Notification) => Effect.Effect<void>) | undefined
  /**
   * Legacy sessions: sends a server→client request (`elicitation/create`, `sampling/createMessage`,
   * `roots/list`) on the session and yields its result.
   */
  readonly sendRequest?:
    | ((method: string, params: JsonRpc.JsonObject | undefined) => Effect.Effect<JsonRpc.JsonObject, McpError>)
    | undefined
  /** The authenticated caller (HTTP with a token verifier). */
  readonly auth?: AuthInfo | undefined
  /**
   * Completed when the transport serving this request stops: its open `subscriptions/listen`
   * requests end gracefully (with their result). `McpServer.shutdown` ends those of every transport.
   */
  readonly shutdown?: Deferred.Deferred<void> | undefined
  /** The other end of the connection as far as the transport knows it (span and metric attributes). */
  readonly peer?: Telemetry.Peer | undefined
}

/** A response and the HTTP status the spec gives it. */
export interface Reply {
  readonly message: JsonRpc.Response
  readonly status: number
  /** HTTP headers the response carries besides its own (`Retry-After` of a `503`); none by default. */
  readonly headers?: Readonly<Record<string, string>> | undefined
}
