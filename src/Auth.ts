/**
 * Authorization for the Streamable HTTP server as an OAuth 2.1 **resource server** (MCP
 * authorization, MCP 2025-11-25, Basic, Authorization): token verification (JWT via `jose`, or any Effect), the
 * Protected Resource Metadata document (RFC 9728), and the `WWW-Authenticate` challenges of
 * RFC 6750 (401 for a missing/invalid token, 403 `insufficient_scope`).
 *
 * Per-component required scopes are visibility predicates (`McpServer.requireScopes`): a caller
 * without the scopes does not see the component and naming it gets the same error as an unknown
 * one. The verified caller is `ctx.auth` in every handler.
 *
 * We are not an authorization server: issuing tokens is out of scope.
 *
 * Guide: [Authorization](https://github.com/presa-mcp/presa-mcp/blob/main/docs/authorization.md).
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as jose from "jose"
import * as Jwt from "./internal/auth/jwt.js"
import * as JsonRpc from "./JsonRpc.js"
import type { AuthInfo } from "./RequestContext.js"

/**
 * Why a token was refused. `reason` distinguishes a missing token from an invalid one (both
 * answer 401).
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidToken extends Data.TaggedError("InvalidToken")<{
  readonly reason: "missing" | "invalid"
  readonly message: string
}> {}

/**
 * A token verifier: from the bearer token to the caller (`subject`, `scopes`, `claims`), or
 * `InvalidToken`.
 *
 * @since 0.1.0
 * @category models
 */
export type Verifier = (token: string) => Effect.Effect<AuthInfo, InvalidToken>

/**
 * Resource-server configuration for the HTTP layer.
 *
 * - `resource`: the protected resource's canonical URL (the MCP endpoint, e.g.
 *   `https://mcp.example.com/mcp`); tokens must be minted for it (audience);
 * - `authorizationServers`: issuer URLs (≥ 1) published in the metadata;
 * - `scopesSupported`: scopes published in the metadata (optional);
 * - `requiredScopes`: scopes every request needs (default none; per-component scopes use
 *   visibility);
 * - `verifier`: the token verifier (see {@link jwtVerifier}).
 *
 * @since 0.1.0
 * @category models
 */
export interface ResourceServer {
  readonly resource: string
  readonly authorizationServers: ReadonlyArray<string>
  readonly scopesSupported?: ReadonlyArray<string>
  readonly requiredScopes?: ReadonlyArray<string>
  readonly verifier: Verifier
}

/**
 * The well-known path of the Protected Resource Metadata for a resource URL (RFC 9728 §3.1):
 * `/.well-known/oauth-protected-resource` followed by the resource's path (`/mcp` →
 * `/.well-known/oauth-protected-resource/mcp`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const metadataPath = (resource: string): `/${string}` => {
  const path = new URL(resource).pathname.replace(/\/$/, "")
  return `/.well-known/oauth-protected-resource${path}`
}

/**
 * The metadata document's URL (same origin as the resource).
 *
 * @since 0.1.0
 * @category constructors
 */
export const metadataUrl = (resource: string): string => new URL(metadataPath(resource), resource).toString()

/**
 * The Protected Resource Metadata document (RFC 9728 §2): `resource`, `authorization_servers`,
 * `scopes_supported`, `bearer_methods_supported: ["header"]`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const metadata = (config: ResourceServer): JsonRpc.JsonObject => ({
  resource: config.resource,
  authorization_servers: config.authorizationServers,
  ...(config.scopesSupported === undefined ? {} : { scopes_supported: config.scopesSupported }),
  bearer_methods_supported: ["header"]
})

const quote = (s: string): string => `"${s.replace(/["\\]/g, "\\$&")}"`

/**
 * The `WWW-Authenticate` challenge (RFC 6750 §3): for 401 (`error` absent for a missing token,
 * `invalid_token` otherwise) and 403 (`insufficient_scope` with every scope the operation needs),
 * always naming the metadata URL.
 *
 * @since 0.1.0
 * @category constructors
 */
export const challenge = (config: ResourceServer, options: {
  readonly error?: "invalid_token" | "insufficient_scope"
  readonly description?: string
  readonly scopes?: ReadonlyArray<string>
}): string => {
  const parts = [`resource_metadata=${quote(metadataUrl(config.resource))}`]
  if (options.error !== undefined) parts.unshift(`error=${quote(options.error)}`)
  const scopes = options.scopes ?? config.requiredScopes ?? []
  if (scopes.length > 0) parts.push(`scope=${quote(scopes.join(" "))}`)
  if (options.description !== undefined) parts.push(`error_description=${quote(options.description)}`)
  return `Bearer ${parts.join(", ")}`
}

/**
 * Reads the bearer token of an `Authorization` header value (RFC 6750 §2.1), or fails with
 * `InvalidToken` "missing".
 *
 * @since 0.1.0
 * @category decoding
 */
export const bearer = (authorization: string | undefined): Effect.Effect<string, InvalidToken> => {
  const m = authorization === undefined ? null : /^Bearer\s+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(authorization)
  return m === null || m[1] === undefined
    ? Effect.fail(new InvalidToken({ reason: "missing", message: "a bearer token is required" }))
    : Effect.succeed(m[1])
}

/**
 * JWT verifier options: `issuer`, `audience` (default: the resource URL given to
 * {@link jwtVerifier}'s caller — pass it explicitly), `algorithms` allow-list (default
 * `["RS256", "ES256", "EdDSA"]`; `none` is never accepted), `clockTolerance` (default 30 seconds),
 * and keys: `jwksUrl` (fetched and cached by `jose`, refreshed on an unknown `kid`) or static
 * `keys` (`CryptoKey`s or `KeyObject`s) or a `jose` key resolver.
 *
 * @since 0.1.0
 * @category models
 */
export interface JwtOptions {
  readonly issuer: string | ReadonlyArray<string>
  readonly audience: string
  readonly algorithms?: ReadonlyArray<string>
  readonly clockTolerance?: Duration.DurationInput
  readonly jwksUrl?: string
  readonly keys?: ReadonlyArray<jose.CryptoKey | jose.KeyObject | Uint8Array>
  /** The claim holding scopes: `scope` (space-separated, default) or `scp` (array). */
  readonly scopeClaim?: string
}

/**
 * A JWT verifier built on `jose`: checks the signature (allowed algorithms only), `iss`, `aud`
 * (the resource), `exp`/`nbf` with bounded clock skew. The caller's `subject` is `sub`, `scopes`
 * come from `scope`/`scp`, `claims` is the payload. Any failure is `InvalidToken` "invalid".
 * For a known identity provider's token shape, see the `IdentityProvider` presets.
 *
 * @since 0.1.0
 * @category constructors
 */
export const jwtVerifier = (options: JwtOptions): Verifier =>
  Jwt.make({
    ...options,
    scopes: (claims) => {
      const claim = options.scopeClaim ?? "scope"
      return Jwt.scopeList((Object.hasOwn(claims, claim) ? claims[claim] : undefined) ?? claims.scp)
    }
  }, (message) => new InvalidToken({ reason: "invalid", message }))
