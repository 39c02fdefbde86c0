/**
 * The MCP client: connects over any {@link ClientTransport}, detects the server's era (MCP
 * 2026-07-28, Versioning and Compatibility › Backward Compatibility with Initialization-Based
 * Versions), and offers typed calls.
 *
 * Modern (2026-07-28): every request carries the protocol version, the client's capabilities and
 * info in `params._meta`. Legacy (2025-11-25 / 2025-06-18, and 2025-03-26 when a server answers
 * with it): an `initialize` handshake first.
 *
 * Beyond plain calls the client answers the server's questions (elicitation, sampling, roots:
 * modern `input_required` rounds and legacy server→client requests alike, see
 * {@link InputHandlers}), routes a call's progress and log messages to per-call hooks
 * ({@link CallOptions}), opens change-notification streams ({@link McpClient.listen}) and can
 * cache list and read results for their `ttlMs` (`Options.cache`).
 *
 * Guide: [Clients](https://github.com/presa-mcp/presa-mcp/blob/main/docs/clients.md).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as Input from "./Input.js"
import * as internal from "./internal/client/connect.js"
import * as internalEra from "./internal/client/eraCache.js"
import * as internalError from "./internal/client/error.js"
import * as internalListen from "./internal/client/listen.js"
import * as internalTyped from "./internal/client/typed.js"
import * as JsonRpc from "./JsonRpc.js"
import type * as JsonSchema from "./JsonSchema.js"
import type * as McpSchema from "./McpSchema.js"
import type * as Prompt from "./Prompt.js"
import type * as Resource from "./Resource.js"
import type * as Skill from "./Skill.js"
import type * as Task from "./Task.js"
import type * as Telemetry from "./Telemetry.js"
import type * as Tool from "./Tool.js"
import { ClientTransport, type RequestOptions, type TransportError } from "./Transport.js"

/**
 * A local client failure, never a peer's JSON-RPC error (that is `McpError`). `reason`:
 *
 * - `"Timeout"`: no reply within the request's deadline (the request was cancelled on the wire);
 * - `"InvalidResult"`: the result could not be decoded, or has an unknown `resultType`, or is a
 *   malformed `input_required` result;
 * - `"NoCommonVersion"`: the server offers only versions this client does not allow;
 * - `"Input"`: the server asked for input the client cannot give (an unknown method, or no
 *   handler for it), or an input handler failed (`cause` is its `McpError`) or answered
 *   something that does not match the result schema;
 * - `"InputRounds"`: the server asked for input more than `maxInputRounds` times in one call;
 * - `"Unsupported"`: the transport lacks what the call needs (legacy `listen` without
 *   `sessionNotifications`);
 * - `"Cancelled"`: a task the client waited for ended `cancelled` (Tasks extension).
 *
 * @since 0.1.0
 * @category errors
 */
export const ClientError: typeof internalError.ClientError = internalError.ClientError

/**
 * @since 0.1.0
 * @category errors
 */
export type ClientError = internalError.ClientError

/**
 * Everything a call may fail with: the peer's `McpError`, a `TransportError`, a `ClientError`.
 *
 * @since 0.1.0
 * @category errors
 */
export type CallError = JsonRpc.McpError | TransportError | ClientError

/**
 * Answers to the server's questions: modern `input_required` rounds (MCP 2026-07-28, Multi
 * Round-Trip Requests) and legacy server→client requests (MCP 2025-11-25, Elicitation, Sampling,
 * Roots) alike. Each handler given makes the client declare the matching capability
 * (`elicitation`, `sampling`, `roots`) in every modern request's `_meta` and in the legacy
 * `initialize`; an explicit `Options.capabilities` entry wins over the derived one.
 *
 * A question without a handler: modern, the call fails with `ClientError` "Input"; legacy, the
 * server's request is answered -32601. A handler failing with `McpError`: modern, the call fails
 * with `ClientError` "Input" (`cause`: the error); legacy, the server's request is answered with
 * that error. Answers are checked against the `Input` schemas: one that does not match fails the
 * call with `ClientError` "Input" (modern) or is answered -32603 (legacy).
 *
 * @since 0.1.0
 * @category models
 */
export interface InputHandlers {
  /**
   * Answers `elicitation/create`. `params` is `{mode?: "form", message, requestedSchema}` or
   * `{mode: "url", message, url}` (URL mode only with `Options.elicitUrl`) as the server sent it;
   * yields the `ElicitResult` (`{action: "accept" | "decline" | "cancel", content?}`). Declares
   * `elicitation` (`{}` = form only; `{form: {}, url: {}}` with `elicitUrl`). Default: none.
   */
  readonly onElicit?:
    | ((params: JsonRpc.JsonObject) => Effect.Effect<Input.ElicitResult, JsonRpc.McpError>)
    | undefined
  /**
   * Answers `sampling/createMessage` (`params` as the server sent them) with a
   * `CreateMessageResult`. Declares `sampling: {}`. Default: none.
   */
  readonly onSample?:
    | ((params: JsonRpc.JsonObject) => Effect.Effect<Input.CreateMessageResult, JsonRpc.McpError>)
    | undefined
  /** Answers `roots/list` with a `ListRootsResult`. Declares `roots: {}`. Default: none. */
  readonly onRoots?: (() => Effect.Effect<Input.ListRootsResult, JsonRpc.McpError>) | undefined
}

/**
 * Client options, given to {@link connect}. Every field is optional; the defaults are on the
 * fields.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends InputHandlers {
  /**
   * The client's `Implementation.name`, sent as `_meta["io.modelcontextprotocol/clientInfo"]`
   * (modern) or `initialize` `clientInfo` (legacy). Default `"presa-mcp-client"`.
   */
  readonly name?: string
  /** The client's `Implementation.version`, sent with `name`. Default `"0.1.0"`. */
  readonly version?: string
  /**
   * The client's capabilities, merged over those the input handlers imply ({@link InputHandlers};
   * an entry here wins) and sent in every modern request's `_meta` and in the legacy `initialize`.
   * Default `{}`.
   */
  readonly capabilities?: McpSchema.ClientCapabilities
  /**
   * The revisions the client will speak; they are tried newest first whatever the order given.
   * Default all four (`McpSchema.CLIENT_VERSIONS`: 2026-07-28, 2025-11-25, 2025-06-18,
   * 2025-03-26). Without a modern one the client skips the `server/discover` probe; without a
   * legacy one it has no `initialize` fallback. `initialize` offers the newest legacy revision
   * allowed, and the session runs at whichever allowed revision the server answers (2025-03-26
   * included: see `McpSchema.CLIENT_VERSIONS` for what the client does differently there). A
   * server that speaks none of them fails {@link connect} with `ClientError` "NoCommonVersion".
   */
  readonly versions?: ReadonlyArray<McpSchema.ClientProtocolVersion>
  /**
   * How long the `server/discover` probe waits before the client takes the server for a legacy
   * one and sends `initialize`. `DurationInput`, default 3 seconds. A client whose `versions` are
   * all modern has no fallback: its probe waits `requestTimeout`.
   */
  readonly probeTimeout?: Duration.DurationInput
  /**
   * The deadline of every request: each MRTR round on its own, and the wait for a listen's
   * acknowledgement (not the listen stream itself). `DurationInput`, default 60 seconds. Passed to
   * the transport as `RequestOptions.timeout`; on expiry the request is cancelled on the wire and
   * the call fails with `ClientError` "Timeout".
   */
  readonly requestTimeout?: Duration.DurationInput
  /**
   * Telemetry (`Telemetry.Options`): `recordToolContent` adds a tool call's arguments and result
   * to its CLIENT span. Default: not recorded. (Since 0.2.0.)
   */
  readonly telemetry?: Telemetry.Options
  /**
   * With `onElicit`, declare URL-mode elicitation too (`elicitation: {form: {}, url: {}}` instead
   * of `{}`). Default `false`; no effect without `onElicit`.
   */
  readonly elicitUrl?: boolean
  /**
   * How many `input_required` results one call may answer (a count; fractions are floored,
   * negatives count as 0). Default 10. One more fails the call with `ClientError` "InputRounds".
   */
  readonly maxInputRounds?: number
  /**
   * Keep the results of `server/discover`, `tools/list`, `prompts/list`, `resources/list`,
   * `resources/templates/list` and `resources/read` for their `ttlMs` (modern; legacy:
   * `legacyTtlMs`), keyed by method and params (e.g. `cursor`, `uri`); MCP 2026-07-28, Caching.
   * One client is one authorization context, so `cacheScope` does not split it. Change
   * notifications seen on a {@link McpClient.listen} stream drop the matching entries
   * (`resources/updated` drops that URI's read); a cursor error (-32602 on a page with a cursor)
   * drops that list's pages; results of calls that went through `input_required` rounds are never
   * kept. Freshness is measured with `Clock`. Default `false`.
   */
  readonly cache?: boolean
  /**
   * How long legacy results (which carry no `ttlMs`) are kept when `cache` is on, in
   * milliseconds (negatives count as 0). Default 0 (not kept). Legacy change notifications
   * invalidate only while a `listen` is open.
   */
  readonly legacyTtlMs?: number
  /**
   * Declare the Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on modern requests.
   * The server may then answer `tools/call` with a task: {@link McpClient.callTool} follows it to
   * the end (`client.tasks.awaitResult`: its `notifications/tasks` when the server acknowledges the
   * task on a listen, else polling; answering its questions with the input handlers, within
   * `Task.AwaitOptions` defaults) and yields the final result; `client.tasks` exposes the
   * lifecycle. Default `false`.
   */
  readonly tasks?: boolean
  /**
   * Declare the MCP Apps extension (`io.modelcontextprotocol/ui`, SEP-1865) with
   * `{mimeTypes: ["text/html;profile=mcp-app"]}` (`App.HOST_CAPABILITY`), in every modern
   * request's `_meta` and in the legacy `initialize`: the client is a host that renders views
   * (servers then list app-only tools to it; see the `App` module). An explicit
   * `capabilities.extensions["io.modelcontextprotocol/ui"]` wins. Default `false`. (Since 0.2.0.)
   */
  readonly apps?: boolean
  /**
   * How an established {@link McpClient.listen} is re-established after its connection dropped:
   * a `Schedule` fed with the error (each failed try is fed again; the schedule restarts once a
   * listen is acknowledged again). Default {@link DEFAULT_RELISTEN} (100 ms doubling, at most 8
   * tries in a row); `Schedule.stop` turns it off. Never once the client's Scope closed. When it gives up,
   * the stream fails with the last error.
   */
  readonly relisten?: Schedule.Schedule<unknown, CallError>
  /**
   * Let progress extend a `tools/call`'s deadline (MCP 2026-07-28, Progress › Timeouts): for a call
   * that carries a progress token (`CallOptions.onProgress`, or a `_meta.progressToken` of its own),
   * `requestTimeout` (or `CallOptions.timeout`) bounds the time *between* progress notifications
   * instead of the whole call, and `maxTotalTimeout` bounds the whole call. On either expiry the
   * request is cancelled on the wire and the call fails with `ClientError` "Timeout". Each MRTR
   * round on its own. Default `true`; `false` makes `requestTimeout` an absolute bound again. Other
   * methods are never extended. (Since 0.2.0.)
   */
  readonly resetTimeoutOnProgress?: boolean
  /**
   * The absolute cap of a progress-extended `tools/call` (see `resetTimeoutOnProgress`).
   * `DurationInput`, default 10 minutes (600,000 ms); `Duration.infinity` removes it. A cap
   * shorter than the deadline is the deadline. (Since 0.2.0.)
   */
  readonly maxTotalTimeout?: Duration.DurationInput
  /**
   * The server's era, known up front: the client skips the `server/discover` probe. `{era:
   * "legacy"}` goes straight to the `initialize` handshake; `{era: "modern"}` speaks the newest
   * modern version allowed at once, with the `info` given (as an earlier `server/discover` gave it:
   * capabilities, server info) or else none (no capabilities known: `tasks` and `skillsSupported`
   * read false). For a gateway worker that connects to a server whose era is known without a
   * probe. Wins over `eraCache`. Default: detect. (Since 0.2.0.)
   */
  readonly era?: EraVerdict
  /**
   * Remember the era each server answered in a cache shared across clients (`makeEraCache`, or
   * one of your own), under `key` (the server's URL, or any name of it): a hit connects without a
   * probe, as `era` does; a miss detects and stores what it found (a modern server's `Info`, or
   * legacy: an error other than a modern one, or no `server/discover` answer within
   * `probeTimeout`). A failed connection stores nothing. Default: none. (Since 0.2.0.)
   */
  readonly eraCache?: { readonly cache: EraCache; readonly key: string }
  /**
   * Checks a tool's `structuredContent` against the `outputSchema` its last `tools/list` listed
   * (MCP 2026-07-28, Tools › Output Schema: clients SHOULD validate). Whatever dialect the schema
   * declares in `$schema` (draft-07 included) is validated, not refused; the built-in
   * `JsonSchema.validate` checks its subset of keywords, `JsonSchemaFull.validate` (own import
   * path) all of them, drafts 4, 7, 2019-09 and 2020-12. A result that does not match (or has no
   * `structuredContent`) fails the call with `ClientError` "InvalidResult"; an `isError` result,
   * and a tool not listed yet, are not checked. Default `JsonSchema.validate`; `() => []` turns
   * the check off. (Since 0.2.0.)
   */
  readonly validator?: JsonSchema.Validator
}

/**
 * What a client knows of a server's era ({@link Options.era}, {@link EraCache}): `legacy`, or
 * `modern` with the server's `Info` when known (what `server/discover` answered).
 *
 * @since 0.2.0
 * @category models
 */
export interface EraVerdict {
  readonly era: "modern" | "legacy"
  readonly info?: Info | undefined
}

/**
 * A cache of era verdicts by server key, shared across clients ({@link Options.eraCache}).
 * `get` yields the verdict stored under a key; `set` stores one; `invalidate` forgets one (e.g.
 * after a server was upgraded). Implement it over a shared store (Redis, …) for workers of a
 * gateway; {@link makeEraCache} is the in-memory one.
 *
 * @since 0.2.0
 * @category models
 */
export interface EraCache {
  readonly get: (key: string) => Effect.Effect<Option.Option<EraVerdict>>
  readonly set: (key: string, verdict: EraVerdict) => Effect.Effect<void>
  readonly invalidate: (key: string) => Effect.Effect<void>
}

/**
 * An in-memory {@link EraCache} (a `Ref` of a `HashMap`), to share among the clients of one
 * process. Entries live until invalidated.
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeEraCache: Effect.Effect<EraCache> = internalEra.make

/**
 * One progress update of a call: `notifications/progress` params (MCP 2026-07-28, Progress).
 *
 * @since 0.1.0
 * @category models
 */
export interface Progress {
  /** The call's token, as its request carried it in `_meta.progressToken`. */
  readonly progressToken: JsonRpc.RequestId
  /** The progress so far (any finite number), strictly increasing within one round. */
  readonly progress: number
  /** The total the progress runs to, when the server knows it. */
  readonly total?: number
  /** A human-readable description of the current step, when the server sent one. */
  readonly message?: string
}

/**
 * One log message of a call: `notifications/message` params (MCP 2026-07-28, Logging).
 *
 * @since 0.1.0
 * @category models
 */
export interface LogMessage {
  /** The severity, one of `McpSchema.LOGGING_LEVELS` (`debug` … `emergency`). */
  readonly level: McpSchema.LoggingLevel
  /** The name of the logger, when the server sent one. */
  readonly logger?: string
  /** The payload as sent (any JSON value). */
  readonly data: unknown
}

/**
 * Options of one call (every method that sends a request takes them). From `RequestOptions`:
 * `onNotification` receives every notification the server sends for this request (raw);
 * `onRequest` answers server→client requests on this request's own channel (HTTP SSE; default:
 * the client's {@link InputHandlers}); `timeout` (`DurationInput`) is this call's deadline in
 * place of `Options.requestTimeout`, each MRTR round on its own: on expiry the request is
 * cancelled on the wire and the call fails with `ClientError` "Timeout".
 *
 * @since 0.1.0
 * @category models
 */
export interface CallOptions extends RequestOptions {
  /**
   * Opts in to progress (MCP 2026-07-28, Progress): the request gets `_meta.progressToken` and
   * the `notifications/progress` carrying that token reach this hook. Other tokens and values
   * that do not increase are dropped (logged at debug level). A retried MRTR round restarts the
   * count. Default: none (no token is added).
   */
  readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined
  /**
   * Receives the request's `notifications/message` (stdio gives log messages no request field:
   * every call in flight sees them). Modern servers send them only when `logLevel` is set too;
   * legacy servers use the session level (`logging/setLevel`). Default: none.
   */
  readonly onLog?: ((message: LogMessage) => Effect.Effect<void>) | undefined
  /**
   * The minimum level asked for, sent as `_meta["io.modelcontextprotocol/logLevel"]` (modern,
   * with `onLog` only; MCP 2026-07-28, Logging). Default: none (the server sends no log messages).
   */
  readonly logLevel?: McpSchema.LoggingLevel | undefined
  /**
   * The progress token to send with `onProgress`. Default: the token the request's own `_meta`
   * already has, else a fresh integer of this client (0, 1, …).
   */
  readonly progressToken?: JsonRpc.RequestId | undefined
  /** This call's `Options.resetTimeoutOnProgress` (`tools/call` only). Default: the client's. */
  readonly resetTimeoutOnProgress?: boolean | undefined
  /** This call's `Options.maxTotalTimeout` (`tools/call` only). Default: the client's. */
  readonly maxTotalTimeout?: Duration.DurationInput | undefined
}

/**
 * What a {@link McpClient.listen} stream carries (the `notifications` param of
 * `subscriptions/listen`, MCP 2026-07-28, Subscriptions): list changes per kind and updates of
 * the given resource URIs. A key left out (or `false`) is not wanted.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListenFilter {
  /** Want `notifications/tools/list_changed`. Default `false`. */
  readonly toolsListChanged?: boolean
  /** Want `notifications/prompts/list_changed`. Default `false`. */
  readonly promptsListChanged?: boolean
  /** Want `notifications/resources/list_changed`. Default `false`. */
  readonly resourcesListChanged?: boolean
  /**
   * The resource URIs whose `notifications/resources/updated` are wanted (legacy: each is
   * `resources/subscribe`d while a listen names it). Default: none.
   */
  readonly resourceSubscriptions?: ReadonlyArray<string>
  /**
   * The task ids whose `notifications/tasks` are wanted (Tasks extension, SEP-2663 "Task Status
   * Notifications"; modern only, and the client must declare the extension, `Options.tasks`, else
   * the server answers `McpError` -32021). Each carries the task's complete `DetailedTask`; read
   * it with `Task.fromNotification`. Acknowledged: the ids the server agreed to notify for (a
   * presa-mcp server: those the caller may `tasks/get`, at most 100, each one's current state
   * sent right after the ack). Default: none. Since 0.2.0.
   */
  readonly taskIds?: ReadonlyArray<string>
}

/**
 * An open change-notification stream.
 *
 * It ends when the server ends the subscription gracefully (modern: the listen result, or its
 * `notifications/cancelled`; MCP 2026-07-28, Subscriptions: a clean end, so the client does not
 * listen again). When the connection drops instead (HTTP: the listen's SSE response or the
 * legacy GET stream ends or breaks, the server restarts; stdio: the process exits and
 * `Stdio.spawn`'s `restart` starts another), the client listens again with the same filter per
 * `Options.relisten` (legacy: opens the session's channel again and re-sends
 * `resources/subscribe` for the acknowledged URIs), and the stream goes on. Changes in the gap
 * are unknown, so after each re-establishment the client clears its cache and the stream yields
 * one `notifications/<kind>/list_changed` per acknowledged kind and one
 * `notifications/resources/updated` per acknowledged URI, marked `_meta[RESUBSCRIBED] = true`
 * (modern: tagged with the new listen's subscription id): a consumer that refetches on change
 * notifications needs no other code. For acknowledged task ids not yet seen terminal, the client
 * reads each task again (`tasks/get`) and yields it as a `notifications/tasks` marked the same
 * way, so a gap never loses a terminal status. When `relisten` gives up, or the failure is not a
 * lost connection (a JSON-RPC error, a 401), the stream fails with that error.
 *
 * `notifications/tasks` (since 0.2.0) are yielded only when their params decode as a
 * `Task.DetailedTask` (others are dropped and logged at debug level), at most once per state of a
 * task and never after its terminal one (a notification that repeats the last one seen, or is
 * older than it by `lastUpdatedAt`, is dropped).
 *
 * @since 0.1.0
 * @category models
 */
export interface Subscription {
  /**
   * The part of the filter the server will honour: modern, as its
   * `notifications/subscriptions/acknowledged` said; legacy, the filter cut down to the server's
   * capabilities (`*.listChanged`, `resources.subscribe`).
   */
  readonly acknowledged: ListenFilter
  /**
   * `notifications/{tools,prompts,resources}/list_changed`, `notifications/resources/updated`
   * and `notifications/tasks` as sent (`_meta` included), until the subscription ends (see above).
   */
  readonly notifications: Stream.Stream<JsonRpc.Notification, CallError>
}

/**
 * The `_meta` key (value `true`) of the notifications a {@link Subscription} yields after it was
 * re-established: they stand for changes that may have been missed while it was down.
 *
 * @since 0.1.0
 * @category symbols
 */
export const RESUBSCRIBED: "presa-mcp/resubscribed" = internalListen.RESUBSCRIBED

/**
 * The default `Options.relisten`: 100 ms, doubling, at most 8 tries in a row (about 25 s in all).
 *
 * @since 0.1.0
 * @category symbols
 */
export const DEFAULT_RELISTEN: Schedule.Schedule<unknown, CallError> = internalListen.DEFAULT_RELISTEN

/**
 * What the client learned when it connected: the era, the protocol version in use, and the
 * server's info, capabilities and instructions.
 *
 * @since 0.1.0
 * @category models
 */
export interface Info {
  /** `"modern"` (2026-07-28: `server/discover` answered) or `"legacy"` (an `initialize` session). */
  readonly era: "modern" | "legacy"
  /**
   * The revision every request speaks (modern) or the session negotiated (legacy): one of
   * `McpSchema.CLIENT_VERSIONS`, `"2025-03-26"` included.
   */
  readonly protocolVersion: string
  /**
   * The server's `Implementation`: modern, `_meta["io.modelcontextprotocol/serverInfo"]` of the
   * `server/discover` result (`undefined` when absent or malformed); legacy, `serverInfo`.
   */
  readonly serverInfo: McpSchema.Implementation | undefined
  /** The server's capabilities (`server/discover` or `initialize` result). */
  readonly capabilities: McpSchema.ServerCapabilities
  /** The server's instructions for the model, when it gave any. */
  readonly instructions: string | undefined
  /** Versions the server said it serves (`server/discover`), or the negotiated one (legacy). */
  readonly supportedVersions: ReadonlyArray<string>
}

/**
 * A completion reference: a prompt by name or a resource (template) by URI.
 *
 * @since 0.1.0
 * @category models
 */
export type CompleteRef = { readonly type: "ref/prompt"; readonly name: string } | {
  readonly type: "ref/resource"
  readonly uri: string
}

/**
 * A connected client: what {@link connect} yields, and the service of the {@link McpClient} Tag
 * (given by {@link layer}).
 *
 * Calls that may get `input_required` (`tools/call`, `prompts/get`, `resources/read`, and any
 * `request`) answer each round with the {@link InputHandlers} and retry with a new id, the same
 * params, `inputResponses` and the exact `requestState` (only when the server sent one).
 *
 * @since 0.1.0
 * @category models
 */
export interface McpClient {
  /** What the client learned when it connected (era, version, the server's info). */
  readonly info: Info
  /** Sends any request (with `_meta` added in the modern era) and yields its raw final result. */
  readonly request: (
    method: string,
    params?: JsonRpc.JsonObject,
    options?: CallOptions
  ) => Effect.Effect<JsonRpc.JsonObject, CallError>
  /** Sends a notification. */
  readonly notify: (method: string, params?: JsonRpc.JsonObject) => Effect.Effect<void, TransportError>
  /**
   * One page of `tools/list`. A tool whose `x-mcp-header` annotations are invalid is left out,
   * with a warning naming it (MCP 2026-07-28, Streamable HTTP › Custom Headers from Tool
   * Parameters).
   */
  readonly listTools: (cursor?: string) => Effect.Effect<typeof McpSchema.ListToolsResult.Type, CallError>
  /** All pages of `tools/list` (at most 1,000 pages). */
  readonly listAllTools: Effect.Effect<ReadonlyArray<McpSchema.Tool>, CallError>
  /** One page of `resources/list`. */
  readonly listResources: (cursor?: string) => Effect.Effect<typeof McpSchema.ListResourcesResult.Type, CallError>
  /** All pages of `resources/list` (at most 1,000 pages). */
  readonly listAllResources: Effect.Effect<ReadonlyArray<McpSchema.Resource>, CallError>
  /** One page of `resources/templates/list`. */
  readonly listResourceTemplates: (
    cursor?: string
  ) => Effect.Effect<typeof McpSchema.ListResourceTemplatesResult.Type, CallError>
  /** All pages of `resources/templates/list` (at most 1,000 pages). */
  readonly listAllResourceTemplates: Effect.Effect<ReadonlyArray<McpSchema.ResourceTemplate>, CallError>
  /** One page of `prompts/list`. */
  readonly listPrompts: (cursor?: string) => Effect.Effect<typeof McpSchema.ListPromptsResult.Type, CallError>
  /** All pages of `prompts/list` (at most 1,000 pages). */
  readonly listAllPrompts: Effect.Effect<ReadonlyArray<McpSchema.Prompt>, CallError>
  /**
   * `tools/call`. A tool's own failure is a result with `isError: true`, not a failed Effect. When
   * the server answers with a task (`Options.tasks`), the task is polled to its end: a `failed`
   * task fails with its `McpError`, a `cancelled` one with `ClientError` "Cancelled".
   */
  readonly callTool: (
    name: string,
    args?: JsonRpc.JsonObject,
    options?: CallOptions & { readonly _meta?: JsonRpc.JsonObject }
  ) => Effect.Effect<McpSchema.CallToolResult, CallError>
  /** `resources/read`. Not found fails with `McpError` -32602 (or a legacy server's -32002). */
  readonly readResource: (uri: string, options?: CallOptions) => Effect.Effect<McpSchema.ReadResourceResult, CallError>
  /** `prompts/get`. */
  readonly getPrompt: (
    name: string,
    args?: Readonly<Record<string, string>>,
    options?: CallOptions
  ) => Effect.Effect<McpSchema.GetPromptResult, CallError>
  /** `completion/complete`. */
  readonly complete: (
    ref: CompleteRef,
    argument: string,
    value: string,
    context?: Readonly<Record<string, string>>
  ) => Effect.Effect<McpSchema.CompleteResult["completion"], CallError>
  /**
   * Opens a change-notification stream for as long as the Scope is open.
   *
   * - Modern: sends `subscriptions/listen {notifications: filter}` (no request deadline) and
   *   waits (at most `requestTimeout`) for `notifications/subscriptions/acknowledged`; the
   *   stream carries the notifications tagged with this listen's
   *   `_meta["io.modelcontextprotocol/subscriptionId"]` (compared as strings) and ends with the
   *   listen result. Closing the Scope cancels it (stdio: `notifications/cancelled`; HTTP: the
   *   SSE response is closed; in-process: the handler is interrupted). A server that does not
   *   serve listen fails it with `McpError` -32601.
   * - Legacy: subscribes to the transport's session notifications (stdio: the process's
   *   notifications; HTTP: the session's GET stream; in-process: the session's stream) and keeps
   *   those the filter asks for; `acknowledged` is the filter cut down to the server's
   *   capabilities (`*.listChanged`, `resources.subscribe`). `resourceSubscriptions` are
   *   `resources/subscribe`d (and unsubscribed when the last listen naming them closes).
   *   Fails with `ClientError` "Unsupported" when the transport has no `sessionNotifications`.
   *
   * The stream is re-established when its connection drops (HTTP reconnect, server restart,
   * stdio process restarted by `Stdio.spawn`'s `restart`), per `Options.relisten`; the cache is
   * then cleared and the stream yields one change per acknowledged kind and URI marked
   * {@link RESUBSCRIBED} (see {@link Subscription}). A graceful end by the server ends it.
   */
  readonly listen: (filter: ListenFilter) => Effect.Effect<Subscription, CallError, Scope.Scope>
  /** Empties the result cache (no-op without `Options.cache`). */
  readonly clearCache: Effect.Effect<void>
  /** Does the server declare the Skills extension (`io.modelcontextprotocol/skills`)? */
  readonly skillsSupported: boolean
  /** All pages of `skills/list` (entries as the server sent them). */
  readonly listSkills: Effect.Effect<ReadonlyArray<Skill.SkillEntry>, CallError>
  /** `skills/get`: the entry of one skill by its SKILL.md URI. */
  readonly getSkill: (uri: string) => Effect.Effect<Skill.SkillEntry, CallError>
  /**
   * Loads a skill: `skills/get`, then reads its SKILL.md and checks size, digest and front matter
   * against the entry. Any mismatch fails with `SkillVerificationError` (never returns content).
   */
  readonly readSkill: (
    uri: string
  ) => Effect.Effect<
    { readonly entry: Skill.SkillEntry; readonly text: string },
    CallError | Skill.SkillVerificationError
  >
  /**
   * Reads one file of a skill and checks it against `entry`: a file the entry does not list fails
   * with reason `unlisted`, a wrong size or digest with `size` / `digest`.
   */
  readonly readSkillFile: (
    entry: Skill.SkillEntry,
    uri: string
  ) => Effect.Effect<McpSchema.ResourceContents, CallError | Skill.SkillVerificationError>
  /** All pages of `resources/directory/read` (needs `directoryRead`). */
  readonly readDirectory: (uri: string) => Effect.Effect<ReadonlyArray<McpSchema.Resource>, CallError>
  /**
   * The Tasks extension (SEP-2663, modern only): `tasks/get`, `tasks/update`, `tasks/cancel`,
   * polling to the end (see `Task.TaskClient`). Needs `Options.tasks`.
   */
  readonly tasks: Task.TaskClient
}

/**
 * The service Tag of a connected client (the service is the {@link McpClient} interface, what
 * {@link connect} yields): `yield* McpClient.McpClient` in a program given {@link layer}.
 *
 * @since 0.2.0
 * @category tags
 */
export const McpClient: Context.Tag<McpClient, McpClient> = Context.GenericTag<McpClient>("presa-mcp/McpClient")

/**
 * A Layer of the {@link McpClient} service: {@link connect}s over the `ClientTransport` it is
 * given (a transport Layer: `Stdio.layerClient`, `StreamableHttp.layerClient`,
 * `InProcess.layerClient`) with `options`. The Layer's Scope owns the connection: closing it closes
 * the client and its transport (stdio: stdin is closed and the process ends; HTTP: a legacy
 * session is ended with DELETE). Fails to build as {@link connect} fails.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import { McpClient } from "presa-mcp"
 * import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
 *
 * const ClientLive = McpClient.layer({ name: "my-app", requestTimeout: "30 seconds" }).pipe(
 *   Layer.provide(StreamableHttp.layerClient({ url: "http://127.0.0.1:3000/mcp" }))
 * )
 * const tools = Effect.gen(function*() {
 *   const client = yield* McpClient.McpClient
 *   return yield* client.listAllTools
 * })
 * const main = tools.pipe(Effect.provide(ClientLive))
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<McpClient, CallError, ClientTransport> =>
  Layer.scoped(
    McpClient,
    Effect.flatMap(ClientTransport, (transport) => connect(transport, options))
  )

/**
 * Connects over `transport`: probes with `server/discover` (modern), falls back to the
 * `initialize` handshake (legacy) on any other error, and yields a client. After `probeTimeout` of
 * silence it sends `initialize` too and takes the first answer, preferring a late modern one (see
 * {@link Options}). On -32022 it retries with a version from `data.supported`. When the transport has
 * `setRequestHandler`, the client installs its answer to server→client requests there (`ping` →
 * `{}`, the {@link InputHandlers}, anything else -32601).
 *
 * The client lives until the Scope closes: a listen is not re-established after that, and a legacy
 * session's duration is recorded then. The transport is not closed by the client: it belongs to its
 * own Scope (`Stdio.spawn`, `StreamableHttp.client`, a transport Layer), usually the same one.
 *
 * Fails with `McpError` (the handshake was refused), `TransportError`, or `ClientError`
 * ("NoCommonVersion" when the server offers only versions this client does not allow).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { InProcess, McpClient, McpServer } from "presa-mcp"
 *
 * const program = Effect.gen(function*() {
 *   const server = yield* McpServer.make({ name: "demo", version: "1.0.0" })
 *   const client = yield* McpClient.connect(yield* InProcess.client(server), {
 *     onElicit: () => Effect.succeed({ action: "accept", content: { name: "Ada" } })
 *   })
 *   return yield* client.callTool("greet", {}, {
 *     onProgress: (p) => Effect.log(`progress ${p.progress}/${p.total ?? "?"}`)
 *   })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const connect: (
  transport: ClientTransport,
  options?: Options
) => Effect.Effect<McpClient, CallError, Scope.Scope> = internal.connect

/**
 * Is this error a "resource not found" from any server generation: -32602 with `data.uri`
 * (SEP-2164), the legacy -32002, or -32602 without `data.uri` whose message says "not found" (the
 * official SDK v1 server answers `Resource <uri> not found` with no `data`)?
 *
 * @since 0.1.0
 * @category guards
 */
export const isResourceNotFound = (error: CallError): boolean =>
  error._tag === "McpError" &&
  (error.code === JsonRpc.ErrorCode.LegacyResourceNotFound ||
    (error.code === JsonRpc.ErrorCode.InvalidParams &&
      ((JsonRpc.isObject(error.data) && "uri" in error.data) || /\bnot found\b/i.test(error.message))))

// ---------------------------------------------------------------------------------------------
// typed calls from shared definitions
// ---------------------------------------------------------------------------------------------

/**
 * A typed call ({@link call}, {@link prompt}, {@link readTemplate}) whose Schemas did not fit. A local
 * failure, never on the wire. `reason`:
 *
 * - `"Arguments"`: the arguments (or URI variables) did not encode with the definition's
 *   `parameters` (a refinement failed, say), or the `uriTemplate` is not RFC 6570: nothing was sent;
 * - `"Result"`: the tool succeeded but its `structuredContent` does not decode with `success`;
 * - `"Failure"`: the tool answered `isError: true` with a `structuredContent` that does not decode
 *   with `failure`.
 *
 * `name` is the tool's or prompt's name (the `uriTemplate` for a template), `result` the result as
 * received ("Result", "Failure"), `cause` the Schema `ParseError` (or `UriTemplateError`); `message`
 * reads as `Tool.formatParseError` words it.
 *
 * @since 0.2.0
 * @category errors
 */
export const TypedCallError: typeof internalTyped.TypedCallError = internalTyped.TypedCallError

/**
 * @since 0.2.0
 * @category errors
 */
export type TypedCallError = internalTyped.TypedCallError

/**
 * What {@link call} yields for a tool definition with success type `O`: `O`, or the whole
 * `CallToolResult` when the definition has no `success` Schema (`O` is `never`).
 *
 * @since 0.2.0
 * @category models
 */
export type Success<O> = internalTyped.Success<O>

/**
 * Calls a tool from a definition both sides share (the server's `Tool.make` value, or a
 * `Tool.Definition` record of Schemas for any server, ours or not): `tools/call` with `args` encoded
 * by `tool.parameters` (no `parameters`: `{}`), yielding the result decoded by `tool.success`.
 *
 * - Success: the `structuredContent` decoded with `success` (a non-object `success` is read from
 *   `{value}`, as `Tool.make` sends it; a result without `structuredContent` is read from the JSON of
 *   its only text block, the spec's backwards-compatible form). Without `success`, the whole
 *   `CallToolResult`.
 * - `isError: true`: fails with the tool's error. With a `failure` Schema and a `structuredContent`,
 *   that content decoded as `E`; otherwise `Tool.ToolError` with the result's text as `message` and
 *   its `content` / `structuredContent` (argument errors, SEP-1303, arrive this way: no
 *   `structuredContent`).
 * - A result that does not decode: `TypedCallError` "Result" / "Failure" (with the raw result);
 *   arguments that do not encode: `TypedCallError` "Arguments", and nothing is sent.
 * - Protocol failures as `client.callTool`: `McpError` (the server's JSON-RPC error: -32602 unknown
 *   tool, -32603 internal error, …), `TransportError`, `ClientError`.
 *
 * `options` are `client.callTool`'s (per-call hooks, `timeout`, `_meta`).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 * import { InProcess, McpClient, McpServer, Tool } from "presa-mcp"
 *
 * const add = Tool.make({
 *   name: "add",
 *   parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
 *   success: Schema.Struct({ sum: Schema.Number }),
 *   handler: ({ a, b }) => ({ sum: a + b })
 * })
 *
 * const program = Effect.gen(function*() {
 *   const server = yield* McpServer.make({ name: "calc", version: "1.0.0", tools: [add] })
 *   const client = yield* McpClient.connect(yield* InProcess.client(server))
 *   const { sum } = yield* McpClient.call(client, add, { a: 1, b: 2 }) // sum: number
 *   return sum
 * })
 * ```
 *
 * @since 0.2.0
 * @category combinators
 */
export const call: <A, I, O = never, OI = never, E = never, EI = never>(
  client: McpClient,
  tool: Tool.Definition<A, I, O, OI, E, EI>,
  args: A,
  options?: CallOptions & { readonly _meta?: JsonRpc.JsonObject }
) => Effect.Effect<Success<O>, E | Tool.ToolError | TypedCallError | CallError> = internalTyped.call

/**
 * Gets a prompt from a definition both sides share (a `Prompt.make` value with `parameters`, or a
 * `Prompt.Definition`): `prompts/get` with `args` encoded by `parameters` to the strings the wire
 * carries (an `undefined` one left out). Yields the `GetPromptResult`.
 *
 * Fails with `TypedCallError` "Arguments" (they do not encode; nothing is sent) or as
 * `client.getPrompt`: `McpError` -32602 (unknown prompt, a missing or invalid argument), …
 *
 * @since 0.2.0
 * @category combinators
 */
export const prompt: <A, I extends Readonly<Record<string, string | undefined>>>(
  client: McpClient,
  definition: Prompt.Definition<A, I>,
  args: A,
  options?: CallOptions
) => Effect.Effect<McpSchema.GetPromptResult, TypedCallError | CallError> = internalTyped.prompt

/**
 * Reads a resource of a template both sides share (a `Resource.template` value with `parameters`, or
 * a `Resource.TemplateDefinition`): the variables are encoded by `parameters` and expanded into the
 * `uriTemplate` (RFC 6570, `UriTemplate.expand`), then `resources/read`. Yields the
 * `ReadResourceResult`.
 *
 * Fails with `TypedCallError` "Arguments" (variables that do not encode, a template that is not
 * RFC 6570; nothing is sent) or as `client.readResource`: `McpError` -32602 with `data.uri` (not
 * found; see {@link isResourceNotFound}), …
 *
 * @since 0.2.0
 * @category combinators
 */
export const readTemplate: <A, I extends Resource.Variables>(
  client: McpClient,
  definition: Resource.TemplateDefinition<A, I>,
  variables: A,
  options?: CallOptions
) => Effect.Effect<McpSchema.ReadResourceResult, TypedCallError | CallError> = internalTyped.readTemplate
