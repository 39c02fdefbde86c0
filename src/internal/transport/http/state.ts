/**
 * What the Streamable HTTP handler holds (an explicit record the POST, GET and DELETE handling
 * share) and the lookup of a request's legacy session (MCP 2025-11-25, Basic, Transports,
 * "Session Management"; "Protocol Version Header").
 * @internal
 */
import type * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as McpSchema from "../../../McpSchema.js"
import type * as Connection from "../../server/connection.js"
import type * as Dispatch from "../../server/dispatch.js"
import * as HeaderRules from "../../server/headerAgreement.js"
import type { Headers, SessionState } from "../../server/model.js"
import { type Answer, type ExchangeArgs, refuse } from "./responses.js"
import type * as Sessions from "./session/model.js"

/**
 * One HTTP request as the endpoint handling reads it. Two adapters build it: the platform's
 * `HttpServerRequest` (`layer`, routers, the web handler) and Node's request/response pair
 * (`StreamableHttp.serve`, `internal/node/httpEndpoint.ts`), so the handling exists once.
 * `R` is what its exchange needs: the platform's a `Scope` (it forks the request and ends its
 * outbox there), Node's nothing (it writes to the response in the request's own fiber).
 */
export interface EndpointRequest<R = never> {
  /** The method, upper case. */
  readonly method: string
  readonly headers: Headers
  /** The peer's address, when the transport knows it. */
  readonly remoteAddress: string | undefined
  /** The body of a request with a declared `Content-Length` (the HTTP parser delivers that many bytes). */
  readonly body: Effect.Effect<Uint8Array, unknown>
  /**
   * The body counted as it streams in (chunked): past `maxBytes` the bytes are read and dropped
   * up to `discardBytes` more, then it fails with `BodyTooLarge` (`wire.ts` `readBounded`).
   */
  readonly bodyBounded: (maxBytes: number, discardBytes: number) => Effect.Effect<Uint8Array, unknown>
  /**
   * Runs one request's exchange (`responses.ts`): the platform's builds a response value from the
   * messages the request writes; Node's writes them to its response as they come (`Sent`).
   */
  readonly exchange: (args: ExchangeArgs) => Effect.Effect<Answer, never, R>
}

/** The handler's state, built once by `makeHandler`. */
export interface HandlerState {
  readonly server: Dispatch.Server
  readonly store: Sessions.SessionStore
  /**
   * The connection of every request without a legacy session of its own (2026-07-28 requests,
   * `initialize`, legacy requests when sessions are off): one bound on them all, `503` beyond it.
   */
  readonly stateless: Connection.Connection
  /** Completed when the handler stops: its open `subscriptions/listen` requests end. */
  readonly stopped: Deferred.Deferred<void>
  /** `false`: legacy requests are served without sessions. */
  readonly sessions: boolean
  readonly maxBodyBytes: number
  readonly keepAlive: Duration.Duration
  readonly allowedOrigins: ReadonlyArray<string> | "any"
  readonly allowedHosts: ReadonlyArray<string> | "any"
  /** The legacy revisions the server speaks, newest first. */
  readonly legacyVersions: ReadonlyArray<McpSchema.ProtocolVersion>
}

/** The version a legacy request without `MCP-Protocol-Version` is assumed to speak (MCP 2025-11-25, "Protocol Version Header"). */
const ASSUMED_VERSION = "2025-03-26"

/** The legacy session `Mcp-Session-Id` names: none, found, or a refusal (404 unknown, 400 version). */
export type SessionLookup =
  | { readonly _tag: "None" }
  | { readonly _tag: "Found"; readonly session: Sessions.HttpSession }
  | { readonly _tag: "Refused"; readonly response: Answer }

/**
 * Looks up the legacy session named by `Mcp-Session-Id`: 404 when unknown; 503 when a shared
 * session store cannot be read (the session may exist on another instance).
 */
export const sessionOf = (state: HandlerState, headers: Headers): Effect.Effect<SessionLookup> => {
  const id = HeaderRules.getHeader(headers, HeaderRules.Header.sessionId)
  if (id === undefined || id === "") return Effect.succeed(NONE)
  // Once per legacy request: plain steps (no generator), the session's state read once.
  return Effect.matchEffect(state.store.get(id), {
    onFailure: (unavailable) =>
      Effect.succeed<SessionLookup>({
        _tag: "Refused",
        response: refuse(503, `Service Unavailable: ${unavailable.reason}; try again later`, { "retry-after": "1" })
      }),
    onSuccess: (found) =>
      Option.isNone(found)
        ? Effect.succeed<SessionLookup>({
          _tag: "Refused",
          response: refuse(404, "Not Found: unknown or terminated session")
        })
        : Effect.map(Ref.get(found.value.core.state), (current): SessionLookup => {
          const versionError = checkLegacyVersion(state, current, headers)
          return versionError === undefined
            ? { _tag: "Found", session: found.value }
            : { _tag: "Refused", response: versionError }
        })
  })
}

const NONE: SessionLookup = { _tag: "None" }

/**
 * An absent header (or `2025-03-26`, the value the spec assumes when it is absent) → the
 * negotiated version; anything else must equal the negotiated version (an unsupported value, or a
 * supported one that this session did not negotiate → 400).
 */
const checkLegacyVersion = (
  state: HandlerState,
  current: SessionState | undefined,
  headers: Headers
): Answer | undefined => {
  const requested = HeaderRules.getHeader(headers, HeaderRules.Header.protocolVersion)
  const negotiated = current?.protocolVersion
  // `2025-03-26` is what the spec assumes when the header is absent; some SDKs (and the
  // conformance suite 0.1.16) send it explicitly inside a session: treat it like absence.
  if (requested === undefined || requested === negotiated || requested === ASSUMED_VERSION) return undefined
  return refuse(
    400,
    `Bad Request: ${HeaderRules.Header.protocolVersion} '${requested}' is not this session's negotiated version '${
      negotiated ?? "none"
    }'`,
    {},
    { supported: state.legacyVersions, requested }
  )
}
