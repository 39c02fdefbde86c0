/**
 * The OAuth 2.1 client provider behind `OAuth.make` (documented there): what the Streamable HTTP
 * client asks before a request (the `Authorization` value, refreshed when it expires) and on a
 * `401`/`403` Bearer challenge (discover, identify the client, obtain a token), built on
 * `oauth4webapi` for the protocol steps (MCP 2025-11-25 and 2026-07-28, Authorization). The
 * provider is a {@link ProviderState} record; discovery (`target`), client identification
 * (`registration`) and each grant (`flows/*`) are module functions over it.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type { Challenge, Options, Provider, Tokens, TokenStore } from "../../OAuth.js"
import { OAuthError } from "./error.js"
import { authorizationCode } from "./flows/authorizationCode.js"
import { clientCredentials } from "./flows/clientCredentials.js"
import { jwtBearer } from "./flows/jwtBearer.js"
import { refresh } from "./flows/refresh.js"
import * as State from "./state.js"
import type { ProviderState } from "./state.js"
import { discover, selectScopes } from "./target.js"
import { currentDpop, header, toTokens } from "./token.js"

/** Refresh this long before `expiresAt` (milliseconds). */
const EXPIRY_SKEW_MS = 30_000

/** The stored tokens for `url`, refreshed first when they expire (`undefined`: none). */
const currentTokens = (state: ProviderState, url: string): Effect.Effect<Tokens | undefined> =>
  Effect.gen(function*() {
    const stored = Option.getOrUndefined(yield* state.store.get(url))
    const tokens = stored?.tokens
    if (stored === undefined || tokens === undefined) return undefined
    const now = yield* Clock.currentTimeMillis
    if (tokens.expiresAt === undefined || tokens.expiresAt - EXPIRY_SKEW_MS > now) return tokens
    const target = Option.getOrUndefined(HashMap.get(yield* Ref.get(state.targets), new URL(url).href))
    if (target === undefined) return tokens
    const refreshed = yield* state.lock.withPermits(1)(refresh(state, url, target, stored))
    return Option.getOrElse(refreshed, () => tokens)
  }).pipe(Effect.catchAll(() => Effect.succeed(undefined)))

/**
 * `Authorization` and, for a DPoP-bound token, a fresh `DPoP` proof for this request (RFC 9449
 * §7.1). A DPoP-bound token without this provider's key (stored by another process) is not
 * sent: the server's challenge then starts a new authorization.
 */
const headers = (
  state: ProviderState,
  url: string,
  method: string
): Effect.Effect<Readonly<Record<string, string>>> =>
  Effect.gen(function*() {
    const tokens = yield* currentTokens(state, url)
    if (tokens === undefined) return {}
    if (tokens.tokenType.toLowerCase() !== "dpop") return { authorization: header(tokens) }
    const dpop = yield* currentDpop(state)
    if (dpop === undefined) return {}
    return { authorization: header(tokens), dpop: yield* dpop.proof(method, url, tokens.accessToken) }
  })

/** Obtains new credentials for `url` after `challenge` (see `OAuth.Provider.onChallenge`). */
const onChallenge = (state: ProviderState, url: string, challenge: Challenge): Effect.Effect<void, OAuthError> =>
  state.lock.withPermits(1)(Effect.gen(function*() {
    // RFC 9449 §9: the MCP server wants its nonce in the proof; the request is sent again.
    const dpop = yield* currentDpop(state)
    if (challenge.error === "use_dpop_nonce" && challenge.nonce !== undefined && dpop !== undefined) {
      dpop.setNonce(url, challenge.nonce)
      return
    }
    const storedBefore = Option.getOrUndefined(yield* state.store.get(url))
    const current = storedBefore?.tokens === undefined ? undefined : header(storedBefore.tokens)
    // Another request already obtained a new token while this one waited: just retry.
    if (current !== undefined && current !== challenge.sent) return
    if (challenge.status === 403 && challenge.error !== "insufficient_scope") {
      return yield* new OAuthError({
        reason: "Refused",
        message: `the server refused the request (HTTP 403${
          challenge.error === undefined ? "" : ` ${challenge.error}`
        })`,
        ...(challenge.error === undefined ? {} : { error: challenge.error })
      })
    }
    // Discovery runs again on every challenge: the resource may have moved to another
    // authorization server (SEP-2352), whose credentials are then not reused.
    const target = yield* discover(state, new URL(url), challenge)
    const stored = storedBefore !== undefined && storedBefore.issuer === target.as.issuer ? storedBefore : undefined
    if (stored !== undefined && challenge.status === 401) {
      const refreshed = yield* refresh(state, url, target, stored)
      if (Option.isSome(refreshed) && header(refreshed.value) !== challenge.sent) return
    }
    const scopes = selectScopes(state, target, challenge, stored?.scopes ?? [])
    const outcome = state.grant === "client_credentials"
      ? yield* clientCredentials(state, target, scopes)
      : state.grant === "jwt_bearer"
      ? yield* jwtBearer(state, target, scopes)
      : yield* authorizationCode(state, target, stored, scopes)
    const now = yield* Clock.currentTimeMillis
    yield* state.store.set(url, {
      issuer: target.as.issuer,
      client: outcome.client,
      tokens: toTokens(now, outcome.tokens, undefined),
      scopes
    })
  }))

export const make = (options: Options, store: TokenStore["Type"]): Effect.Effect<Provider> =>
  Effect.map(State.make(options, store), (state) => ({
    headers: (url, method) => headers(state, url, method),
    onChallenge: (url, challenge) => onChallenge(state, url, challenge),
    maxAttempts: state.maxAttempts
  }))
