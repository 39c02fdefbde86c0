/**
 * What every token request of the client provider shares: client authentication at the token
 * endpoint (RFC 6749 §2.3, RFC 7523 §2.2), the DPoP key pair when one is wanted (RFC 9449), one
 * request with its `use_dpop_nonce` retry, and the stored form of a token response.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as SynchronizedRef from "effect/SynchronizedRef"
import * as oauth from "oauth4webapi"
import type { ClientInformation, PrivateKey, Tokens } from "../../OAuth.js"
import { request } from "./call.js"
import * as Dpop from "./dpop.js"
import type { OAuthError } from "./error.js"
import * as Network from "./network.js"
import type { ProviderState } from "./state.js"

/** A token endpoint response as stored `Tokens`; keeps the old refresh token when none came back. */
export const toTokens = (now: number, r: oauth.TokenEndpointResponse, previous: Tokens | undefined): Tokens => {
  const refresh = r.refresh_token ?? previous?.refreshToken
  return {
    accessToken: r.access_token,
    tokenType: r.token_type,
    ...(refresh === undefined ? {} : { refreshToken: refresh }),
    ...(r.expires_in === undefined ? {} : { expiresAt: now + r.expires_in * 1000 }),
    ...(r.scope === undefined ? {} : { scope: r.scope })
  }
}

/** The `Authorization` value for `t`: `DPoP …` for a DPoP-bound token, else `Bearer …`. */
export const header = (t: Tokens): string =>
  `${t.tokenType.toLowerCase() === "dpop" ? "DPoP" : "Bearer"} ${t.accessToken}`

/**
 * `client_secret_basic` (RFC 6749 §2.3.1): id and secret form-encoded (WHATWG
 * `application/x-www-form-urlencoded`, which keeps `-`, `.`, `_` and `*` as they are, so servers
 * that skip the decoding still see ids made of those), then Base64 in `Authorization: Basic`.
 */
const secretBasic = (secret: string): oauth.ClientAuth => (_as, client, _body, headers) => {
  const encode = (s: string) => new URLSearchParams([["", s]]).toString().slice(1)
  headers.set("authorization", `Basic ${btoa(`${encode(client.client_id)}:${encode(secret)}`)}`)
}

/**
 * The token endpoint authentication of a client (RFC 6749 §2.3, RFC 7523 §2.2): the registered
 * method, else `client_secret_basic` / `client_secret_post` (whichever the server lists, basic
 * first) with a secret, `none` without.
 */
export const clientAuth = (
  as: oauth.AuthorizationServer,
  client: ClientInformation,
  privateKey: PrivateKey | undefined
): oauth.ClientAuth => {
  const supported = as.token_endpoint_auth_methods_supported ?? ["client_secret_basic"]
  const method = client.tokenEndpointAuthMethod ??
    (privateKey !== undefined
      ? "private_key_jwt"
      : client.clientSecret === undefined
      ? "none"
      : supported.includes("client_secret_basic") || !supported.includes("client_secret_post")
      ? "client_secret_basic"
      : "client_secret_post")
  switch (method) {
    case "private_key_jwt":
      return privateKey instanceof CryptoKey ? oauth.PrivateKeyJwt(privateKey) : oauth.None()
    case "client_secret_post":
      return oauth.ClientSecretPost(client.clientSecret ?? "")
    case "client_secret_basic":
      return secretBasic(client.clientSecret ?? "")
    default:
      return oauth.None()
  }
}

export const asClient = (c: ClientInformation): oauth.Client => ({ client_id: c.clientId })

/**
 * The provider's DPoP key pair when tokens from `as` are to be DPoP-bound (`Options.dpop`, else
 * when `as` lists ES256), made on first use; `undefined` when not.
 */
export const dpopFor = (state: ProviderState, as: oauth.AuthorizationServer): Effect.Effect<Dpop.Dpop | undefined> => {
  const wanted = state.options.dpop ?? (as.dpop_signing_alg_values_supported ?? []).includes(Dpop.ALG)
  if (!wanted) return Effect.succeed(undefined)
  return SynchronizedRef.modifyEffect(state.dpop, (current) =>
    Option.match(current, {
      onSome: (d) => Effect.succeed([d, current] as const),
      onNone: () => Effect.map(Dpop.make, (d) => [d, Option.some(d)] as const)
    }))
}

/** The DPoP key pair if one was made (a DPoP-bound token without it is not sent). */
export const currentDpop = (state: ProviderState): Effect.Effect<Dpop.Dpop | undefined> =>
  Effect.map(SynchronizedRef.get(state.dpop), Option.getOrUndefined)

/** Token endpoint options: the network ones and, when DPoP is used, the proof handle. */
export const tokenOptions = (
  state: ProviderState,
  as: oauth.AuthorizationServer,
  dpop: Dpop.Dpop | undefined,
  signal: AbortSignal
) => ({
  ...Network.requestOptions(state.http, as.token_endpoint, signal),
  ...(dpop === undefined ? {} : { DPoP: dpop.handle })
})

/**
 * One token request and its response, bounded in time and bytes (`network`); a `use_dpop_nonce`
 * answer (RFC 9449 §8) is retried once, `oauth4webapi`'s handle then carries the server's nonce.
 */
export const tokenCall = <A>(
  state: ProviderState,
  what: string,
  dpop: Dpop.Dpop | undefined,
  f: (signal: AbortSignal) => Promise<A>
): Effect.Effect<A, OAuthError> =>
  request(
    state.http,
    "Token",
    what,
    (signal) =>
      f(signal).catch((e: unknown) => dpop !== undefined && oauth.isDPoPNonceError(e) ? f(signal) : Promise.reject(e))
  )
