/**
 * What a challenge is about: the protected resource and its authorization server (discovered
 * anew on every challenge, SEP-2352) and the scopes to ask for (MCP 2025-11-25, Authorization ›
 * Scope Selection Strategy).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as oauth from "oauth4webapi"
import type { Challenge } from "../../OAuth.js"
import * as Discovery from "./discovery.js"
import { OAuthError } from "./error.js"
import type { ProviderState, Target } from "./state.js"

const OFFLINE_ACCESS = "offline_access"

const canonical = (url: URL): string => {
  const u = new URL(url.href)
  u.hash = ""
  return u.href
}

const union = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set([...a, ...b])]

/** Issuer identifiers compared as URLs (as `oauth4webapi` compares them, RFC 8414 §3.3). */
const sameIssuer = (a: string, b: string): boolean =>
  a === b || (URL.canParse(a) && URL.canParse(b) && new URL(a).href === new URL(b).href)

const notConfigured = (named: string, wanted: string) =>
  new OAuthError({
    reason: "IssuerMismatch",
    message: `the server names the authorization server ${named.slice(0, 256)}, not the configured issuer ${wanted}`
  })

/**
 * The authorization server to use among those `listed`: the first, or with `Options.issuer` that
 * one (`"IssuerMismatch"` when it is not listed: nothing is sent to the others).
 */
const chooseIssuer = (state: ProviderState, listed: ReadonlyArray<string>) => {
  const wanted = state.options.issuer
  if (wanted === undefined || listed.length === 0) return Effect.succeed(listed[0])
  const found = listed.find((i) => sameIssuer(i, wanted))
  return found === undefined ? Effect.fail(notConfigured(listed[0] ?? "", wanted)) : Effect.succeed(found)
}

/**
 * PRM, then the authorization server (with the 2025-03-26 fallbacks when there is no PRM); the
 * target is remembered for `server`.
 */
export const discover = (
  state: ProviderState,
  server: URL,
  challenge: Challenge | undefined
): Effect.Effect<Target, OAuthError> =>
  Effect.gen(function*() {
    const http = state.http
    const prm = yield* Discovery.discoverResource(http, server, challenge?.resourceMetadata)
    const issuer = Option.isNone(prm)
      ? server.origin
      : yield* chooseIssuer(state, prm.value.authorization_servers ?? [])
    if (issuer === undefined) {
      return yield* new OAuthError({
        reason: "Discovery",
        message: "the protected resource metadata lists no authorization server"
      })
    }
    const found = yield* Discovery.discoverAuthorizationServer(http, server, issuer, Option.isSome(prm))
    const as: oauth.AuthorizationServer = Option.isSome(found)
      ? found.value
      : Option.isNone(prm)
      // No PRM and no metadata: the default endpoints of MCP 2025-03-26, Authorization
      // §2.3.3 (Fallbacks for Servers without Metadata Discovery), where PKCE was required.
      ? {
        issuer: server.origin,
        authorization_endpoint: new URL("/authorize", server.origin).href,
        token_endpoint: new URL("/token", server.origin).href,
        registration_endpoint: new URL("/register", server.origin).href,
        code_challenge_methods_supported: ["S256"]
      }
      : yield* new OAuthError({
        reason: "Discovery",
        message: `no authorization server metadata found for ${issuer}`
      })
    // Without PRM the issuer comes from the metadata at the server's origin.
    const wanted = state.options.issuer
    if (wanted !== undefined && !sameIssuer(as.issuer, wanted)) return yield* notConfigured(as.issuer, wanted)
    const target: Target = {
      server,
      resource: Option.match(prm, { onNone: () => canonical(server), onSome: (p) => p.resource }),
      as,
      prmScopes: Option.getOrUndefined(prm)?.scopes_supported
    }
    yield* Ref.update(state.targets, HashMap.set(server.href, target))
    return target
  })

/**
 * Scopes to request (MCP 2025-11-25, Authorization › Scope Selection Strategy): the
 * application's, else the challenge's `scope`, else the PRM `scopes_supported`, else none;
 * a step-up adds the previously requested ones (SEP-2350); `offline_access` is added when
 * the authorization server lists it and a refresh token may be issued (SEP-2207).
 */
export const selectScopes = (
  state: ProviderState,
  target: Target,
  challenge: Challenge | undefined,
  previous: ReadonlyArray<string>
): ReadonlyArray<string> => {
  const options = state.options
  const base = options.scopes ??
    (challenge !== undefined && challenge.scopes.length > 0
      ? challenge.scopes
      : target.prmScopes ?? [])
  const stepUp = challenge?.error === "insufficient_scope"
  const scopes = stepUp ? union(previous, base) : base
  return scopes.length > 0 && state.grant === "authorization_code" && options.offlineAccess !== false &&
      (target.as.scopes_supported ?? []).includes(OFFLINE_ACCESS)
    ? union(scopes, [OFFLINE_ACCESS])
    : scopes
}
