/**
 * The client credentials grant (OAuth 2.1 §4.2; MCP extension
 * io.modelcontextprotocol/oauth-client-credentials): a pre-registered client, no user.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as oauth from "oauth4webapi"
import { OAuthError } from "../error.js"
import type { ProviderState, Target } from "../state.js"
import { asClient, clientAuth, dpopFor, tokenCall, tokenOptions } from "../token.js"
import type { Outcome } from "./outcome.js"

export const clientCredentials = (
  state: ProviderState,
  target: Target,
  scopes: ReadonlyArray<string>
): Effect.Effect<Outcome, OAuthError> =>
  Effect.gen(function*() {
    const client = state.options.client
    if (client === undefined) {
      return yield* new OAuthError({
        reason: "Registration",
        message: "the client_credentials grant needs a pre-registered client"
      })
    }
    const as = target.as
    const parameters: Record<string, string> = { resource: target.resource }
    if (scopes.length > 0) parameters.scope = scopes.join(" ")
    const dpop = yield* dpopFor(state, as)
    const tokens = yield* tokenCall(state, "client credentials token request", dpop, async (signal) =>
      oauth.processClientCredentialsResponse(
        as,
        asClient(client),
        await oauth.clientCredentialsGrantRequest(
          as,
          asClient(client),
          clientAuth(as, client, state.options.privateKey),
          parameters,
          tokenOptions(state, as, dpop, signal)
        )
      ))
    return { client, tokens }
  })
