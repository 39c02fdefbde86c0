/**
 * The JWT bearer grant (RFC 7523 §2.1) with the application's assertion: a workload identity
 * token (MCP extension io.modelcontextprotocol/auth/wif, SEP-1933) or an ID-JAG (MCP extension
 * io.modelcontextprotocol/enterprise-managed-authorization, SEP-990). A refusal is final: the
 * same assertion is not sent again and no other grant is tried.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as oauth from "oauth4webapi"
import { OAuthError } from "../error.js"
import { JWT_BEARER } from "../grants.js"
import type { ProviderState, Target } from "../state.js"
import { asClient, clientAuth, dpopFor, tokenCall, tokenOptions } from "../token.js"
import type { Outcome } from "./outcome.js"

export const jwtBearer = (
  state: ProviderState,
  target: Target,
  scopes: ReadonlyArray<string>
): Effect.Effect<Outcome, OAuthError> =>
  Effect.gen(function*() {
    const client = state.options.client
    if (client === undefined) {
      return yield* new OAuthError({ reason: "Registration", message: "the jwt_bearer grant needs a client" })
    }
    const source = state.options.assertion
    if (source === undefined) {
      return yield* new OAuthError({ reason: "Token", message: "the jwt_bearer grant needs an assertion" })
    }
    const as = target.as
    if (as.token_endpoint === undefined) {
      return yield* new OAuthError({ reason: "Discovery", message: `${as.issuer} has no token_endpoint` })
    }
    const assertion = yield* source({
      issuer: as.issuer,
      tokenEndpoint: as.token_endpoint,
      resource: target.resource
    })
    const parameters: Record<string, string> = { assertion, resource: target.resource }
    if (scopes.length > 0) parameters.scope = scopes.join(" ")
    const dpop = yield* dpopFor(state, as)
    const tokens = yield* tokenCall(state, "jwt-bearer token request", dpop, async (signal) =>
      oauth.processGenericTokenEndpointResponse(
        as,
        asClient(client),
        await oauth.genericTokenEndpointRequest(
          as,
          asClient(client),
          clientAuth(as, client, state.options.privateKey),
          JWT_BEARER,
          parameters,
          tokenOptions(state, as, dpop, signal)
        )
      ))
    return { client, tokens }
  })
