/**
 * The authorization code grant with PKCE S256 (OAuth 2.1 §4.1, MCP Authorization › PKCE): the
 * application's `Interaction` shows the authorization URL and returns the redirect, whose `state`
 * and RFC 9207 `iss` are checked before the code is exchanged.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as oauth from "oauth4webapi"
import type { Credentials } from "../../../OAuth.js"
import { call, fail } from "../call.js"
import { OAuthError } from "../error.js"
import { identify } from "../registration.js"
import type { ProviderState, Target } from "../state.js"
import { asClient, clientAuth, dpopFor, tokenCall, tokenOptions } from "../token.js"
import type { Outcome } from "./outcome.js"

export const authorizationCode = (
  state: ProviderState,
  target: Target,
  stored: Credentials | undefined,
  scopes: ReadonlyArray<string>
): Effect.Effect<Outcome, OAuthError> =>
  Effect.gen(function*() {
    const interaction = state.options.interaction
    if (interaction === undefined) {
      return yield* new OAuthError({
        reason: "Interaction",
        message: "the server requires user authorization and no interaction was configured"
      })
    }
    const as = target.as
    if (!(as.code_challenge_methods_supported ?? []).includes("S256")) {
      return yield* new OAuthError({
        reason: "PkceUnsupported",
        message: `${as.issuer} does not advertise PKCE S256 (code_challenge_methods_supported)`
      })
    }
    if (as.authorization_endpoint === undefined) {
      return yield* new OAuthError({ reason: "Discovery", message: `${as.issuer} has no authorization_endpoint` })
    }
    const client = yield* identify(state, target, stored, interaction.redirectUri)
    const verifier = oauth.generateRandomCodeVerifier()
    const codeChallenge = yield* call("Authorization", "PKCE", () => oauth.calculatePKCECodeChallenge(verifier))
    const expectedState = oauth.generateRandomState()
    const url = new URL(as.authorization_endpoint)
    url.searchParams.set("response_type", "code")
    url.searchParams.set("client_id", client.clientId)
    url.searchParams.set("redirect_uri", interaction.redirectUri)
    url.searchParams.set("code_challenge", codeChallenge)
    url.searchParams.set("code_challenge_method", "S256")
    url.searchParams.set("state", expectedState)
    if (scopes.length > 0) url.searchParams.set("scope", scopes.join(" "))
    url.searchParams.set("resource", target.resource)
    const callback = yield* interaction.authorize(url)
    // RFC 9207 `iss` (exact comparison), `state`, and an `error` response.
    const params = yield* Effect.try({
      try: () => oauth.validateAuthResponse(as, asClient(client), callback, expectedState),
      catch: fail("Authorization", "the authorization response was refused")
    })
    const dpop = yield* dpopFor(state, as)
    const tokens = yield* tokenCall(state, "token request", dpop, async (signal) =>
      oauth.processAuthorizationCodeResponse(
        as,
        asClient(client),
        await oauth.authorizationCodeGrantRequest(
          as,
          asClient(client),
          clientAuth(as, client, undefined),
          params,
          interaction.redirectUri,
          verifier,
          { ...tokenOptions(state, as, dpop, signal), additionalParameters: { resource: target.resource } }
        )
      ))
    return { client, tokens }
  })
