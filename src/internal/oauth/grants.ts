/**
 * Token requests of the MCP authorization extensions that need more than one step, documented
 * on `OAuth.idJagAssertion`: the RFC 8693 token exchange at the enterprise identity provider for
 * an Identity Assertion JWT Authorization Grant (MCP extension
 * `io.modelcontextprotocol/enterprise-managed-authorization`, SEP-990).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as oauth from "oauth4webapi"
import type { AssertionTarget, IdJagOptions } from "../../OAuth.js"
import { call, request } from "./call.js"
import type { OAuthError } from "./error.js"
import * as Network from "./network.js"

/** RFC 8693 §2.1 token exchange grant type. */
export const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
/** RFC 7523 §2.1 JWT bearer grant type. */
export const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
/** SEP-990: the token type of an Identity Assertion JWT Authorization Grant. */
const ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
/** RFC 8693 §3: an OpenID Connect ID token as the subject token. */
const ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"

export const idJag = (options: IdJagOptions, target: AssertionTarget): Effect.Effect<string, OAuthError> =>
  Effect.gen(function*() {
    const http = Network.makeHttp(options)
    const idToken = typeof options.idToken === "string" ? options.idToken : yield* options.idToken
    const idp: oauth.AuthorizationServer = {
      issuer: new URL(options.tokenEndpoint).origin,
      token_endpoint: options.tokenEndpoint
    }
    const client: oauth.Client = { client_id: options.clientId }
    const auth = options.clientSecret === undefined ? oauth.None() : oauth.ClientSecretBasic(options.clientSecret)
    const response = yield* request(
      http,
      "Token",
      "token exchange at the identity provider",
      (signal) =>
        oauth.genericTokenEndpointRequest(
          idp,
          client,
          auth,
          TOKEN_EXCHANGE,
          {
            requested_token_type: ID_JAG,
            audience: target.issuer,
            resource: target.resource,
            subject_token: idToken,
            subject_token_type: ID_TOKEN
          },
          Network.requestOptions(http, options.tokenEndpoint, signal)
        )
    )
    // An exchanged token that is not an access token has `token_type` `N_A` (RFC 8693 §2.2.1).
    const result = yield* call(
      "Token",
      "token exchange response",
      () =>
        oauth.processGenericTokenEndpointResponse(idp, client, response, { recognizedTokenTypes: { n_a: () => {} } })
    )
    return result.access_token
  })
