/**
 * The MCP client: connects over any {@link ClientTransport}, detects the server's era
 * (protocol.md §1.2), and offers typed calls.
 *
 * Modern (2026-07-28): every request carries the protocol version, the client's capabilities and
 * info in `params._meta`. Legacy (2025-11-25 / 2025-06-18): an `initialize` handshake first.
 *
 * Beyond plain calls the client answers the server's questions (elicitation, sampling, roots:
 * modern `input_required` rounds and legacy server→client requests alike, see
 * {@link InputHandlers}), routes a call's progress and log messages to per-call hooks
 * ({@link CallOptions}), opens change-notification streams ({@link McpClient.listen}) and can
 * cache list and read results for their `ttlMs` (`Options.cache`).
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as Input from "./Input.js"
import * as internal from "./internal/client/connect.js"
import * as internalError from "./internal/client/error.js"
import * as JsonRpc from "./JsonRpc.js"
import type * as McpSchema from "./McpSchema.js"
import type * as Skill from "./Skill.js"
import type * as Task from "./Task.js"
import type { ClientTransport, RequestOptions, TransportError } from "./Transport.js"

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
 * Answers to the server's questions. Each handler given makes the client declare the matching
 * capability (`elicitation` — `{form: {}, url: {}}` with `elicitUrl`, else `{}` = form only —,
 * `sampling`, `roots`) in every modern request's `_meta` and in the legacy `initialize`; an
 * explicit `Options.capabilities` entry wins over the derived one.
 *
 * - `onElicit(params)`: `elicitation/create`; `params` is `{mode?: "form", message,
 *   requestedSchema}` or `{mode: "url", message, url}` as the server sent it. Yields the
 *   `ElicitResult` (`{action: "accept" | "decline" | "cancel", content?}`).
 * - `onSample(params)`: `sampling/createMessage`; yields a `CreateMessageResult`.
 * - `onRoots()`: `roots/list`; yields a `ListRootsResult`.
 *
 * A handler failing with `McpError`: modern, the call fails with `ClientError` `"Input"` (cause:
 * the error); legacy, the server's request is answered with that error. Answers are checked
 * against the `Input` schemas.
 *
 * @since 0.1.0
 * @category models
 */
export interface InputHandlers {
  readonly onElicit?:
    | ((params: JsonRpc.JsonObject) => Effect.Effect<Input.ElicitResult, JsonRpc.McpError>)
    | undefined
  readonly onSample?:
    | ((params: JsonRpc.JsonObject) => Effect.Effect<Input.CreateMessageResult, JsonRpc.McpError>)
    | undefined
  readonly onRoots?: (() => Effect.Effect<Input.ListRootsResult, JsonRpc.McpError>) | undefined
}

/**
 * Client options.
 *
 * - `name`, `version`: the client's `Implementation` (default `presa-mcp-client` / `0.1.0`);
 * - `capabilities`: the client's capabilities (default `{}`), merged over those the input
 *   handlers imply ({@link InputHandlers});
 * - `versions`: revisions the client will speak (default all three, newest first);
 * - `probeTimeout`: how long the `server/discover` probe waits alone before the legacy
 *   `initialize` is sent too, default 10 seconds (a server started through `npx` may take seconds
 *   to answer). The probe keeps waiting (up to `requestTimeout`): a modern answer that arrives
 *   before the `initialize` answer, or after a failed `initialize`, still makes the client modern
 *   (the `initialize` is then left to finish and its answer dropped, never cancelled). A client
 *   whose `versions` are all modern has no fallback: its probe waits `requestTimeout`;
 * - `requestTimeout`: deadline of every request (each MRTR round on its own; not a listen
 *   stream), default 60 seconds (on expiry the request is cancelled on the wire and the call
 *   fails with `ClientError` "Timeout"); passed to the transport as `RequestOptions.timeout`;
 * - `onElicit`, `onSample`, `onRoots`: see {@link InputHandlers}; `elicitUrl` (default false)
 *   declares URL-mode elicitation too;
 * - `maxInputRounds`: how many `input_required` results one call may answer, default 10; one
 *   more fails the call with `ClientError` "InputRounds";
 * - `cache` (default false): keep the results of `server/discover`, `tools/list`,
 *   `prompts/list`, `resources/list`, `resources/templates/list` and `resources/read` for their
 *   `ttlMs` (modern), keyed by method and params (e.g. `cursor`, `uri`). One client is one
 *   authorization context, so `cacheScope` does not split it. Change notifications seen on a
 *   {@link McpClient.listen} stream drop the matching entries (`resources/updated` drops that
 *   URI's read); a cursor error (-32602 on a page with a cursor) drops that list's pages;
 *   results of calls that went through `input_required` rounds are never kept. Freshness is
 *   measured with `Clock`;
 * - `legacyTtlMs`: milliseconds, default 0: how long legacy results (which carry no `ttlMs`) are
 *   kept when `cache` is on. Legacy change notifications invalidate only while a `listen` is open;
 * - `tasks` (default false): declare the Tasks extension (`io.modelcontextprotocol/tasks`,
 *   SEP-2663) on modern requests. The server may then answer `tools/call` with a task:
 *   {@link McpClient.callTool} polls it to the end (answering its questions with the input
 *   handlers, within `Task.AwaitOptions` defaults) and yields the final result; `client.tasks`
 *   exposes the lifecycle;
 * - `relisten`: how an established {@link McpClient.listen} is re-established after its
 *   connection dropped, a `Schedule` fed with the error (each failed try is fed again; the
 *   schedule restarts once a listen is acknowledged again). Default {@link DEFAULT_RELISTEN}
 *   (100 ms doubling, at most 8 tries in a row); `Schedule.stop` turns it off. Never after
 *   `client.close`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends InputHandlers {
  readonly name?: string
  readonly version?: string
  readonly capabilities?: McpSchema.ClientCapabilities
  readonly versions?: ReadonlyArray<McpSchema.ProtocolVersion>
  readonly probeTimeout?: Duration.DurationInput
  readonly requestTimeout?: Duration.DurationInput
  readonly elicitUrl?: boolean
  readonly maxInputRounds?: number
  readonly cache?: boolean
  readonly legacyTtlMs?: number
  readonly tasks?: boolean
  readonly relisten?: Schedule.Schedule<unknown, CallError>
}

/**
 * One progress update of a call: `notifications/progress` params.
 *
 * @since 0.1.0
 * @category models
 */
export interface Progress {
  readonly progressToken: JsonRpc.RequestId
  readonly progress: number
  readonly total?: number
  readonly message?: string
}

/**
 * One log message of a call: `notifications/message` params.
 *
 * @since 0.1.0
 * @category models
 */
export interface LogMessage {
  readonly level: McpSchema.LoggingLevel
  readonly logger?: string
  readonly data: unknown
}

/**
 * Options of one call (every method that sends a request takes them).
 *
 * - `onNotification`: every notification the server sends for this request (raw);
 * - `onRequest`: answers server→client requests on this request's own channel (HTTP SSE;
 *   default: the client's {@link InputHandlers});
 * - `onProgress`: opts in to progress: the request gets `_meta.progressToken` (`progressToken`
 *   if given, else one the request's `_meta` already has, else a fresh integer: 0, 1, …) and
 *   `notifications/progress` carrying that token reach `onProgress`. Other tokens and values that
 *   do not increase are dropped (logged at debug level). A retried MRTR round restarts the count;
 * - `onLog`: receives the request's `notifications/message` (stdio gives log messages no
 *   request field: every call in flight sees them). Modern servers send them only when
 *   `logLevel` is set too (`_meta["io.modelcontextprotocol/logLevel"]`); legacy servers use the
 *   session level (`logging/setLevel`);
 * - `logLevel`: the minimum level asked for (modern, with `onLog`).
 *
 * @since 0.1.0
 * @category models
 */
export interface CallOptions extends RequestOptions {
  readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined
  readonly onLog?: ((message: LogMessage) => Effect.Effect<void>) | undefined
  readonly logLevel?: McpSchema.LoggingLevel | undefined
  readonly progressToken?: JsonRpc.RequestId | undefined
}

/**
 * What a {@link McpClient.listen} stream carries (the `notifications` param of
 * `subscriptions/listen`): list changes per kind and updates of the given resource URIs.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListenFilter {
  readonly toolsListChanged?: boolean
  readonly promptsListChanged?: boolean
  readonly resourcesListChanged?: boolean
  readonly resourceSubscriptions?: ReadonlyArray<string>
}

/**
 * An open change-notification stream: `acknowledged` is the part of the filter the server will
 * honour; `notifications` yields `notifications/{tools,prompts,resources}/list_changed` and
 * `notifications/resources/updated` (as sent, `_meta` included).
 *
 * It ends when the server ends the subscription gracefully (modern: the listen result, or its
 * `notifications/cancelled`; protocol.md §14: a clean end, so the client does not listen again).
 * When the connection drops instead (HTTP: the listen's SSE response or the legacy GET stream
 * ends or breaks, the server restarts; stdio: the process exits and `Stdio.spawn`'s `restart`
 * starts another), the client listens again with the same filter per `Options.relisten`
 * (legacy: opens the session's channel again and re-sends `resources/subscribe` for the
 * acknowledged URIs), and the stream goes on. Changes in the gap are unknown, so after each
 * re-establishment the client clears its cache and the stream yields one
 * `notifications/<kind>/list_changed` per acknowledged kind and one `notifications/resources/updated`
 * per acknowledged URI, marked `_meta[RESUBSCRIBED] = true` (modern: tagged with the new
 * listen's subscription id): a consumer that refetches on change notifications needs no other
 * code. When `relisten` gives up, or the failure is not a lost connection (a JSON-RPC error, a
 * 401), the stream fails with that error.
 *
 * @since 0.1.0
 * @category models
 */
export interface Subscription {
  readonly acknowledged: ListenFilter
  readonly notifications: Stream.Stream<JsonRpc.Notification, CallError>
}

/**
 * The `_meta` key (value `true`) of the notifications a {@link Subscription} yields after it was
 * re-established: they stand for changes that may have been missed while it was down.
 *
 * @since 0.1.0
 * @category symbols
 */
export const RESUBSCRIBED: "presa-mcp/resubscribed" = internal.RESUBSCRIBED

/**
 * The default `Options.relisten`: 100 ms, doubling, at most 8 tries in a row (about 25 s in all).
 *
 * @since 0.1.0
 * @category symbols
 */
export const DEFAULT_RELISTEN: Schedule.Schedule<unknown, CallError> = internal.DEFAULT_RELISTEN

/**
 * What the client learned when it connected: the era, the protocol version in use, and the
 * server's info, capabilities and instructions.
 *
 * @since 0.1.0
 * @category models
 */
export interface Info {
  readonly era: "modern" | "legacy"
  readonly protocolVersion: string
  readonly serverInfo: McpSchema.Implementation | undefined
  readonly capabilities: McpSchema.ServerCapabilities
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
 * A connected client.
 *
 * Calls that may get `input_required` (`tools/call`, `prompts/get`, `resources/read`, and any
 * `request`) answer each round with the {@link InputHandlers} and retry with a new id, the same
 * params, `inputResponses` and the exact `requestState` (only when the server sent one).
 *
 * @since 0.1.0
 * @category models
 */
export interface McpClient {
  readonly info: Info
  /** Sends any request (with `_meta` added in the modern era) and yields its raw final result. */
  readonly request: (
    method: string,
    params?: JsonRpc.JsonObject,
    options?: CallOptions
  ) => Effect.Effect<JsonRpc.JsonObject, CallError>
  /** Sends a notification. */
  readonly notify: (method: string, params?: JsonRpc.JsonObject) => Effect.Effect<void, TransportError>
  /** One page of `tools/list`. */
  readonly listTools: (cursor?: string) => Effect.Effect<typeof McpSchema.ListToolsResult.Type, CallError>
  /** All pages of `tools/list` (at most 1,000 pages). */
  readonly listAllTools: Effect.Effect<ReadonlyArray<McpSchema.Tool>, CallError>
  readonly listResources: (cursor?: string) => Effect.Effect<typeof McpSchema.ListResourcesResult.Type, CallError>
  readonly listAllResources: Effect.Effect<ReadonlyArray<McpSchema.Resource>, CallError>
  readonly listResourceTemplates: (
    cursor?: string
  ) => Effect.Effect<typeof McpSchema.ListResourceTemplatesResult.Type, CallError>
  readonly listAllResourceTemplates: Effect.Effect<ReadonlyArray<McpSchema.ResourceTemplate>, CallError>
  readonly listPrompts: (cursor?: string) => Effect.Effect<typeof McpSchema.ListPromptsResult.Type, CallError>
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
  /** Closes the transport. */
  readonly close: Effect.Effect<void>
}

/**
 * Connects over `transport`: probes with `server/discover` (modern), falls back to the
 * `initialize` handshake (legacy) on any other error, and yields a client. After `probeTimeout` of
 * silence it sends `initialize` too and takes the first answer, preferring a late modern one (see
 * {@link Options}). On -32022 it retries with a version from `data.supported`. When the transport has
 * `setRequestHandler`, the client installs its answer to server→client requests there (`ping` →
 * `{}`, the {@link InputHandlers}, anything else -32601).
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
export const connect: (transport: ClientTransport, options?: Options) => Effect.Effect<McpClient, CallError> =
  internal.connect

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
