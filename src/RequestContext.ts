/**
 * The request context of the request being served.
 *
 * One primary way to reach it: the handler's last argument, `ctx` (tools, resources, templates,
 * prompts, completions, `visible` predicates; middlewares get it as `req.ctx`). The
 * {@link RequestContext} service holds the same object for code a handler calls that should not
 * take `ctx` as a parameter (a helper several tools share, the `Input` functions); every request
 * provides it, and it never counts among a definition's required services.
 *
 * Guide: [Input, progress, tasks and change notifications](https://github.com/presa-mcp/presa-mcp/blob/main/docs/input-progress-tasks.md).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Ref from "effect/Ref"
import type * as JsonRpc from "./JsonRpc.js"
import type * as McpSchema from "./McpSchema.js"

/**
 * What a handler knows about the request it serves.
 *
 * - `era`: `"modern"` (2026-07-28, metadata in each request) or `"legacy"` (a handshake session);
 * - `protocolVersion`: the request's (modern) or the session's negotiated (legacy) version;
 * - `clientInfo`, `clientCapabilities`: from the request's `_meta` (modern) or from `initialize`
 *   (legacy); self-reported, for display and logging only;
 * - `meta`: the request's whole `params._meta` (`{}` when absent);
 * - `progressToken`: `_meta.progressToken` when the client asked for progress;
 * - `notify`: sends a request-scoped notification (progress, log message) on the request's
 *   stream; a no-op where the transport has no stream for it.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestContextShape {
  readonly era: "modern" | "legacy"
  readonly protocolVersion: string
  readonly requestId: JsonRpc.RequestId
  readonly method: string
  readonly clientInfo: McpSchema.Implementation | undefined
  readonly clientCapabilities: McpSchema.ClientCapabilities
  readonly meta: JsonRpc.JsonObject
  readonly progressToken: string | number | undefined
  readonly notify: (notification: JsonRpc.Notification) => Effect.Effect<void>
  /**
   * Sends `notifications/progress` for this request: only when it carried a `progressToken`
   * (echoed with its exact type), only when `progress` is greater than the last one sent, at most
   * 1,000 notifications per request. Yields `true` when sent, `false` when dropped (never fails).
   */
  readonly progress: (
    progress: number,
    options?: { readonly total?: number; readonly message?: string }
  ) => Effect.Effect<boolean>
  /**
   * Sends `notifications/message` for this request when the server has `logging: true` and the
   * level is at or above the requested one: modern — the request's `_meta` log level (absent ⇒
   * nothing is sent); legacy — the session's `logging/setLevel` (default: every level). `data`
   * over 64 KiB of JSON, or more than 1,000 notifications per request, are dropped. Yields `true`
   * when sent, `false` when dropped (never fails).
   */
  readonly log: (level: McpSchema.LoggingLevel, data: unknown, logger?: string) => Effect.Effect<boolean>
  /** Client input for this request (see the `Input` module). */
  readonly input: InputContext
  /**
   * The authenticated caller, when the transport verified a token (HTTP with a resource-server
   * configuration): `subject`, granted `scopes`, and the token's `claims`. `undefined` otherwise.
   */
  readonly auth: AuthInfo | undefined
}

/**
 * Who the caller is, as a token verifier established it.
 *
 * @since 0.1.0
 * @category models
 */
export interface AuthInfo {
  readonly subject: string
  readonly scopes: ReadonlyArray<string>
  readonly claims: JsonRpc.JsonObject
}

/**
 * The request context as an Effect service, for code a handler calls that should not take the
 * handler's `ctx` argument as a parameter: `yield* RequestContext` yields the same object. Inside
 * a handler, prefer `ctx`. Every request provides it; definitions' and `McpServer.make`'s
 * required services never include it.
 *
 * @since 0.1.0
 * @category models
 */
export class RequestContext extends Context.Tag("presa-mcp/RequestContext")<RequestContext, RequestContextShape>() {}

/**
 * The input side of a request (elicitation, sampling, roots), used by the `Input` module.
 *
 * - `responses`: answers the client gave so far (modern: `inputResponses` merged with the answers
 *   carried in `requestState`);
 * - `state`: the handler's own state, carried in `requestState` across rounds (modern);
 * - `sendRequest`: legacy only — sends a server→client request on the session and waits for its
 *   result; absent where the transport cannot carry one.
 *
 * @since 0.1.0
 * @category models
 */
export interface InputContext {
  readonly responses: Readonly<Record<string, unknown>>
  readonly state: Ref.Ref<unknown>
  readonly sendRequest:
    | ((method: string, params: JsonRpc.JsonObject | undefined) => Effect.Effect<JsonRpc.JsonObject, JsonRpc.McpError>)
    | undefined
}
