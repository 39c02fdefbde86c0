/**
 * The client's identity at an authorization server, in the order of MCP 2025-11-25,
 * Authorization › Client Registration Approaches: a Client ID Metadata Document URL when the
 * server supports them, the pre-registered client, a client stored for this issuer, dynamic
 * client registration (RFC 7591).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as oauth from "oauth4webapi"
import type { ClientInformation, Credentials } from "../../OAuth.js"
import { request } from "./call.js"
import { OAuthError } from "./error.js"
import * as Network from "./network.js"
import type { ProviderState, Target } from "./state.js"

/** The fields of a client registration response the client uses (RFC 7591 §3.2.1). */
const Registered = Schema.Struct({
  client_id: Schema.String,
  client_secret: Schema.optionalWith(Schema.String, { exact: true }),
  token_endpoint_auth_method: Schema.optionalWith(Schema.String, { exact: true }),
  redirect_uris: Schema.optionalWith(Schema.Array(Schema.String), { exact: true })
})

/** An OAuth error response body (RFC 6749 §5.2). */
const ErrorBody = Schema.Struct({ error: Schema.String })

const registrationError = (message: string) => new OAuthError({ reason: "Registration", message })

/** Dynamic client registration (RFC 7591) at `as` for `redirectUri`. */
const register = (state: ProviderState, as: oauth.AuthorizationServer, redirectUri: string) =>
  Effect.gen(function*() {
    const options = state.options
    const supported = as.token_endpoint_auth_methods_supported ?? ["client_secret_basic"]
    const method = supported.includes("none")
      ? "none"
      : supported.includes("client_secret_basic")
      ? "client_secret_basic"
      : supported.includes("client_secret_post")
      ? "client_secret_post"
      : "none"
    const metadata = {
      client_name: options.clientName ?? "presa-mcp",
      redirect_uris: [redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: method,
      application_type: options.applicationType ?? "native"
    }
    const response = yield* request(
      state.http,
      "Registration",
      "dynamic client registration",
      (signal) =>
        oauth.dynamicClientRegistrationRequest(
          as,
          metadata,
          Network.requestOptions(state.http, as.registration_endpoint, signal)
        )
    )
    // Decoded here rather than by `oauth4webapi`, which also requires `client_secret_expires_at`
    // with a secret (RFC 7591 §3.2.1): registration servers that leave it out are common.
    if (response.status !== 200 && response.status !== 201) {
      const body = yield* Effect.promise(() => response.json().catch(() => undefined))
      const code = Schema.decodeUnknownOption(ErrorBody)(body).pipe(Option.map((b) => b.error))
      return yield* new OAuthError({
        reason: "Registration",
        message: `dynamic client registration refused (HTTP ${response.status}${
          Option.match(code, {
            onNone: () => "",
            onSome: (c) => ` ${c}`
          })
        })`,
        ...Option.match(code, { onNone: () => ({}), onSome: (error) => ({ error }) })
      })
    }
    const registered = yield* Effect.tryPromise({
      try: () => response.json(),
      catch: () => registrationError("the registration response is not JSON")
    }).pipe(
      Effect.flatMap(Schema.decodeUnknown(Registered)),
      Effect.mapError(() => registrationError("the registration response has no client_id"))
    )
    // RFC 7591 §3.2.1 lets the server change metadata it echoes; a changed redirect URI would send
    // the authorization code elsewhere, so the client does not use that registration.
    const echoed = registered.redirect_uris
    if (echoed !== undefined && (echoed.length !== 1 || echoed[0] !== redirectUri)) {
      return yield* registrationError(
        `the registration response changed the redirect URI (sent ${redirectUri}; the response lists another)`
      )
    }
    const secret = registered.client_secret
    const registeredMethod = registered.token_endpoint_auth_method
    return {
      clientId: registered.client_id,
      ...(secret === undefined ? {} : { clientSecret: secret }),
      ...(registeredMethod === undefined ? (secret === undefined ? { tokenEndpointAuthMethod: "none" } : {}) : {
        tokenEndpointAuthMethod: registeredMethod
      })
    } satisfies ClientInformation
  })

/** The client identity at `target`'s authorization server (see the module header). */
export const identify = (
  state: ProviderState,
  target: Target,
  stored: Credentials | undefined,
  redirectUri: string
): Effect.Effect<ClientInformation, OAuthError> =>
  Effect.gen(function*() {
    const options = state.options
    const as = target.as
    if (options.clientMetadataUrl !== undefined && as.client_id_metadata_document_supported === true) {
      return { clientId: options.clientMetadataUrl, tokenEndpointAuthMethod: "none" } satisfies ClientInformation
    }
    if (options.client !== undefined) return options.client
    if (stored?.client !== undefined && stored.issuer === as.issuer) return stored.client
    if (as.registration_endpoint === undefined) {
      return yield* registrationError(
        `${as.issuer} offers no dynamic client registration and no client is configured` +
          (options.clientMetadataUrl === undefined ? "" : " (it does not accept Client ID Metadata Documents)")
      )
    }
    return yield* register(state, as, redirectUri)
  })
