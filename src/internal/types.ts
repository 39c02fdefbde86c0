/**
 * Server, session and dispatch types.
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type { InputRequired } from "../Input.js"
import * as JsonRpc from "../JsonRpc.js"
import * as JsonSchema from "../JsonSchema.js"
import * as McpSchema from "../McpSchema.js"
import type * as Prompt from "../Prompt.js"
import type { AuthInfo, RequestContextShape } from "../RequestContext.js"
import type * as Resource from "../Resource.js"
import type * as Skill from "../Skill.js"
import type * as Task from "../Task.js"
import type * as Tool from "../Tool.js"
import * as Defs from "./definitions.js"
import type * as Tasks from "./tasks.js"

type McpError = JsonRpc.McpError

/** Server options (documented on `McpServer.Options`). */
export interface Options {
  readonly name: string
  readonly version: string
  readonly title?: string
  readonly description?: string
  readonly websiteUrl?: string
  readonly icons?: ReadonlyArray<McpSchema.Icon>
  readonly instructions?: string
  readonly tools?: ReadonlyArray<Tool.Tool>
  readonly resources?: ReadonlyArray<Resource.Resource>
  readonly resourceTemplates?: ReadonlyArray<Resource.ResourceTemplate>
  readonly prompts?: ReadonlyArray<Prompt.Prompt>
  readonly pageSize?: number
  readonly cache?: { readonly ttlMs?: number; readonly scope?: McpSchema.CacheScope }
  readonly versions?: ReadonlyArray<McpSchema.ProtocolVersion>
  readonly logging?: boolean
  readonly listChanged?: boolean
  readonly subscribe?: boolean
  readonly exposeErrorMessages?: boolean
  readonly validate?: boolean
  readonly validator?: JsonSchema.Validator
  readonly inputState?: { readonly keys?: ReadonlyArray<string>; readonly ttl?: Duration.DurationInput }
  readonly skills?: ReadonlyArray<Skill.Skill>
  readonly middleware?: ReadonlyArray<Middleware>
  readonly tasks?: Task.Options
}

/**
 * A middleware around one request (after era and `_meta` checks, before the handler): it sees
 * the method, the params and the request context, and wraps `next` (the rest of the chain and the
 * handler). It may time or log the call, short-circuit with a result or an `McpError`, or run
 * `next` with services provided (`Effect.provideService`) that handlers read.
 */
export type Middleware = (
  request: {
    readonly method: string
    readonly params: JsonRpc.JsonObject
    readonly ctx: RequestContextShape
  },
  next: Effect.Effect<JsonRpc.JsonObject, JsonRpc.McpError | InputRequired>
) => Effect.Effect<JsonRpc.JsonObject, JsonRpc.McpError | InputRequired>

/** A change to what the server serves. */
export type ChangeEvent =
  | { readonly _tag: "ListChanged"; readonly kind: "tools" | "prompts" | "resources" }
  | { readonly _tag: "ResourceUpdated"; readonly uri: string }

/** A server value: its options and the `SubscriptionRef` of definition snapshots. */
export interface Server {
  readonly info: McpSchema.Implementation
  readonly options: Options
  readonly versions: ReadonlyArray<McpSchema.ProtocolVersion>
  readonly state: SubscriptionRef.SubscriptionRef<Defs.Snapshot>
  readonly events: PubSub.PubSub<ChangeEvent>
  readonly shutdown: Deferred.Deferred<void>
  /** HMAC keys for `requestState` (the first signs, all verify). */
  readonly stateKeys: ReadonlyArray<string>
  /** The Tasks extension's machinery, when the `tasks` option is set. */
  readonly tasks?: Tasks.Runtime | undefined
}

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

/** Options of one dispatch. */
export interface DispatchOptions {
  /** The legacy session of this connection, if the transport has one. */
  readonly session?: Session | undefined
  /** HTTP request headers: enables the 2026-07-28 header checks and header-based era routing. */
  readonly headers?: Readonly<Record<string, string | ReadonlyArray<string> | undefined>> | undefined
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
}

/** A response and the HTTP status the spec gives it. */
export interface Reply {
  readonly message: JsonRpc.Response
  readonly status: number
}
