/**
 * The refresh token grant (OAuth 2.1 §4.3) with the RFC 8707 `resource`; the new tokens are
 * stored under the endpoint's key.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as oauth from "oauth4webapi"
import type { Credentials, Tokens } from "../../../OAuth.js"
import type { ProviderState, Target } from "../state.js"
import { asClient, clientAuth, dpopFor, tokenCall, tokenOptions, toTokens } from "../token.js"

/** `None` when there is nothing to refresh or the refresh fails (then the caller authorizes again). */
export const refresh = (
  state: ProviderState,
  key: string,
  target: Target,
  stored: Credentials
): Effect.Effect<Option.Option<Tokens>> =>
  Effect.gen(function*() {
    const refreshToken = stored.tokens?.refreshToken
    const client = stored.client
    if (refreshToken === undefined || client === undefined || stored.issuer !== target.as.issuer) {
      return Option.none<Tokens>()
    }
    const as = target.as
    const dpop = yield* dpopFor(state, as)
    // A DPoP-bound refresh token of a public client is bound to the key (RFC 9449 §5): a
    // provider that lost its key (a new process) cannot use it.
    if (stored.tokens?.tokenType === "dpop" && dpop === undefined) return Option.none<Tokens>()
    const result = yield* tokenCall(state, "refresh", dpop, async (signal) =>
      oauth.processRefreshTokenResponse(
        as,
        asClient(client),
        await oauth.refreshTokenGrantRequest(
          as,
          asClient(client),
          clientAuth(as, client, state.options.privateKey),
          refreshToken,
          { ...tokenOptions(state, as, dpop, signal), additionalParameters: { resource: target.resource } }
        )
      ))
    const tokens = toTokens(yield* Clock.currentTimeMillis, result, stored.tokens)
    yield* state.store.set(key, { ...stored, tokens })
    return Option.some(tokens)
  }).pipe(
    Effect.catchAll((e) =>
      Effect.as(Effect.logDebug(`OAuth: refresh failed (${e.message}); authorizing again`), Option.none<Tokens>())
    )
  )
