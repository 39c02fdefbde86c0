/**
 * What the Streamable HTTP handler holds (an explicit record the POST, GET and DELETE handling
 * share) and the lookup of a request's legacy session (MCP 2025-11-25, Basic, Transports,
 * "Session Management"; "Protocol Version Header").
 * @internal
 */
import type * as Headers from "@effect/platform/Headers"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as McpSchema from "../../../McpSchema.js"
import type * as Dispatch from "../../server/dispatch.js"
import * as HeaderRules from "../../server/headerAgreement.js"
import { refuse } from "./responses.js"
import type * as Sessions from "./session.js"

/** The handler's state, built once by `makeHandler`. */
export interface HandlerState {
  readonly server: Dispatch.Server
  readonly store: Sessions.SessionStore
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
  | { readonly _tag: "Refused"; readonly response: HttpServerResponse.HttpServerResponse }

/**
 * Looks up the legacy session named by `Mcp-Session-Id`: 404 when unknown; 503 when a shared
 * session store cannot be read (the session may exist on another instance).
 */
export const sessionOf = (state: HandlerState, headers: Headers.Headers): Effect.Effect<SessionLookup> => {
  const id = HeaderRules.getHeader(headers, HeaderRules.Header.sessionId)
  if (id === undefined || id === "") return Effect.succeed({ _tag: "None" })
  return Effect.gen(function*() {
    const session = yield* Effect.either(state.store.get(id))
    if (session._tag === "Left") {
      return {
        _tag: "Refused",
        response: refuse(503, `Service Unavailable: ${session.left.reason}; try again later`, { "retry-after": "1" })
      } as const
    }
    if (Option.isNone(session.right)) {
      return { _tag: "Refused", response: refuse(404, "Not Found: unknown or terminated session") } as const
    }
    const versionError = yield* checkLegacyVersion(state, session.right.value, headers)
    if (Option.isSome(versionError)) return { _tag: "Refused", response: versionError.value } as const
    return { _tag: "Found", session: session.right.value } as const
  })
}

/**
 * An absent header (or `2025-03-26`, the value the spec assumes when it is absent) → the
 * negotiated version; anything else must equal the negotiated version (an unsupported value, or a
 * supported one that this session did not negotiate → 400).
 */
const checkLegacyVersion = (
  state: HandlerState,
  session: Sessions.HttpSession,
  headers: Headers.Headers
): Effect.Effect<Option.Option<HttpServerResponse.HttpServerResponse>> =>
  Effect.map(Ref.get(session.core.state), (current) => {
    const requested = HeaderRules.getHeader(headers, HeaderRules.Header.protocolVersion)
    const negotiated = current?.protocolVersion
    // `2025-03-26` is what the spec assumes when the header is absent; some SDKs (and the
    // conformance suite 0.1.16) send it explicitly inside a session: treat it like absence.
    if (requested === undefined || requested === negotiated || requested === ASSUMED_VERSION) return Option.none()
    return Option.some(refuse(
      400,
      `Bad Request: ${HeaderRules.Header.protocolVersion} '${requested}' is not this session's negotiated version '${
        negotiated ?? "none"
      }'`,
      {},
      { supported: state.legacyVersions, requested }
    ))
  })
