/**
 * The OAuth 2.1 client provider behind `OAuth.make` (documented there): what the Streamable HTTP
 * client asks before a request (the `Authorization` value, refreshed when it expires) and on a
 * `401`/`403` Bearer challenge (discover, identify the client, obtain a token), built on
 * `oauth4webapi` for the protocol steps (MCP 2025-11-25 and 2026-07-28, Authorization).
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as oauth from "oauth4webapi"
import type {
  Challenge,
  ClientInformation,
  Credentials,
  Options,
  PrivateKey,
  Provider,
  Tokens,
  TokenStore
} from "../../OAuth.js"
import { call, fail } from "./call.js"
import * as Discovery from "./discovery.js"
import * as Dpop from "./dpop.js"
import { OAuthError } from "./error.js"
import { JWT_BEARER } from "./grants.js"

/** Refresh this long before `expiresAt` (milliseconds). */
const EXPIRY_SKEW_MS = 30_000
/** Default `Options.maxAttempts`. */
export const DEFAULT_MAX_ATTEMPTS = 3

const OFFLINE_ACCESS = "offline_access"

/** The fields of a client registration response the client uses (RFC 7591 §3.2.1). */
const Registered = Schema.Struct({
  client_id: Schema.String,
  client_secret: Schema.optionalWith(Schema.String, { exact: true }),
  token_endpoint_auth_method: Schema.optionalWith(Schema.String, { exact: true })
})

/** An OAuth error response body (RFC 6749 §5.2). */
const ErrorBody = Schema.Struct({ error: Schema.String })

/** What one authorization needs about the protected resource. */
interface Target {
  readonly server: URL
  /** RFC 8707 `resource`: the PRM `resource`, else the endpoint without its fragment. */
  readonly resource: string
  readonly as: oauth.AuthorizationServer
  readonly prmScopes: ReadonlyArray<string> | undefined
}

const canonical = (url: URL): string => {
  const u = new URL(url.href)
  u.hash = ""
  return u.href
}

const union = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set([...a, ...b])]

/** A token endpoint response as stored `Tokens`; keeps the old refresh token when none came back. */
const toTokens = (now: number, r: oauth.TokenEndpointResponse, previous: Tokens | undefined): Tokens => {
  const refresh = r.refresh_token ?? previous?.refreshToken
  return {
    accessToken: r.access_token,
    tokenType: r.token_type,
    ...(refresh === undefined ? {} : { refreshToken: refresh }),
    ...(r.expires_in === undefined ? {} : { expiresAt: now + r.expires_in * 1000 }),
    ...(r.scope === undefined ? {} : { scope: r.scope })
  }
}

/**
 * The token endpoint authentication of a client (RFC 6749 §2.3, RFC 7523 §2.2): the registered
 * method, else `client_secret_basic` / `client_secret_post` (whichever the server lists, basic
 * first) with a secret, `none` without.
 */
const clientAuth = (
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

/**
 * `client_secret_basic` (RFC 6749 §2.3.1): id and secret form-encoded (WHATWG
 * `application/x-www-form-urlencoded`, which keeps `-`, `.`, `_` and `*` as they are, so servers
 * that skip the decoding still see ids made of those), then Base64 in `Authorization: Basic`.
 */
const secretBasic = (secret: string): oauth.ClientAuth => (_as, client, _body, headers) => {
  const encode = (s: string) => new URLSearchParams([["", s]]).toString().slice(1)
  headers.set("authorization", `Basic ${btoa(`${encode(client.client_id)}:${encode(secret)}`)}`)
}

const asClient = (c: ClientInformation): oauth.Client => ({ client_id: c.clientId })

export const make = (options: Options, store: TokenStore["Type"]): Effect.Effect<Provider> =>
  Effect.gen(function*() {
    const http = Discovery.makeHttp(options.fetch, options.allowInsecureHttp === true)
    const lock = yield* Effect.makeSemaphore(1)
    /** Authorization server metadata by issuer, and the last target per endpoint. */
    const targets = yield* Ref.make(HashMap.empty<string, Target>())
    const grant = options.grant ?? "authorization_code"
    const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS

    const opts = (url: string | URL | undefined) => Discovery.requestOptions(http, url)

    /** The DPoP key pair and nonces, made when a first token request needs them. */
    let dpopState: Dpop.Dpop | undefined
    const dpopFor = (as: oauth.AuthorizationServer) =>
      Effect.gen(function*() {
        const wanted = options.dpop ?? (as.dpop_signing_alg_values_supported ?? []).includes(Dpop.ALG)
        if (!wanted) return undefined
        if (dpopState === undefined) dpopState = yield* Dpop.make
        return dpopState
      })
    /** Token endpoint options: the network ones and, when DPoP is used, the proof handle. */
    const tokenOpts = (as: oauth.AuthorizationServer, dpop: Dpop.Dpop | undefined) => ({
      ...opts(as.token_endpoint),
      ...(dpop === undefined ? {} : { DPoP: dpop.handle })
    })
    /**
     * One token request and its response; a `use_dpop_nonce` answer (RFC 9449 §8) is retried once,
     * `oauth4webapi`'s handle then carries the server's nonce.
     */
    const tokenCall = <A>(what: string, dpop: Dpop.Dpop | undefined, f: () => Promise<A>) =>
      call("Token", what, () =>
        f().catch((e: unknown) =>
          dpop !== undefined && oauth.isDPoPNonceError(e) ? f() : Promise.reject(e)
        ))

    const load = (key: string) => store.get(key)
    const save = (key: string, c: Credentials) => store.set(key, c)

    /** PRM, then the authorization server (with the 2025-03-26 fallbacks when there is no PRM). */
    const discover = (server: URL, challenge: Challenge | undefined) =>
      Effect.gen(function*() {
        const prm = yield* Discovery.discoverResource(http, server, challenge?.resourceMetadata)
        const issuer = Option.match(prm, {
          onNone: () => server.origin,
          onSome: (p) => p.authorization_servers?.[0]
        })
        if (issuer === undefined) {
          return yield* new OAuthError({
            reason: "Discovery",
            message: "the protected resource metadata lists no authorization server"
          })
        }
        const found = yield* Discovery.discoverAuthorizationServer(http, issuer, Option.isSome(prm))
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
        const target: Target = {
          server,
          resource: Option.match(prm, { onNone: () => canonical(server), onSome: (p) => p.resource }),
          as,
          prmScopes: Option.getOrUndefined(prm)?.scopes_supported
        }
        yield* Ref.update(targets, HashMap.set(server.href, target))
        return target
      })

    /**
     * Scopes to request (MCP 2025-11-25, Authorization › Scope Selection Strategy): the
     * application's, else the challenge's `scope`, else the PRM `scopes_supported`, else none;
     * a step-up adds the previously requested ones (SEP-2350); `offline_access` is added when
     * the authorization server lists it and a refresh token may be issued (SEP-2207).
     */
    const selectScopes = (target: Target, challenge: Challenge | undefined, previous: ReadonlyArray<string>) => {
      const base = options.scopes ??
        (challenge !== undefined && challenge.scopes.length > 0
          ? challenge.scopes
          : target.prmScopes ?? [])
      const stepUp = challenge?.error === "insufficient_scope"
      let scopes = stepUp ? union(previous, base) : base
      if (
        scopes.length > 0 && grant === "authorization_code" && options.offlineAccess !== false &&
        (target.as.scopes_supported ?? []).includes(OFFLINE_ACCESS)
      ) scopes = union(scopes, [OFFLINE_ACCESS])
      return scopes
    }

    /**
     * The client identity at this authorization server, in the order of MCP 2025-11-25,
     * Authorization › Client Registration Approaches: a Client ID Metadata Document URL when the
     * server supports them, the pre-registered client, a client stored for this issuer, dynamic
     * client registration (RFC 7591).
     */
    const identify = (target: Target, stored: Credentials | undefined, redirectUri: string) =>
      Effect.gen(function*() {
        const as = target.as
        if (options.clientMetadataUrl !== undefined && as.client_id_metadata_document_supported === true) {
          return { clientId: options.clientMetadataUrl, tokenEndpointAuthMethod: "none" } satisfies ClientInformation
        }
        if (options.client !== undefined) return options.client
        if (stored?.client !== undefined && stored.issuer === as.issuer) return stored.client
        if (as.registration_endpoint === undefined) {
          return yield* new OAuthError({
            reason: "Registration",
            message: `${as.issuer} offers no dynamic client registration and no client is configured` +
              (options.clientMetadataUrl === undefined ? "" : " (it does not accept Client ID Metadata Documents)")
          })
        }
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
        const response = yield* call(
          "Registration",
          "dynamic client registration",
          () => oauth.dynamicClientRegistrationRequest(as, metadata, opts(as.registration_endpoint))
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
          catch: () => new OAuthError({ reason: "Registration", message: "the registration response is not JSON" })
        }).pipe(
          Effect.flatMap(Schema.decodeUnknown(Registered)),
          Effect.mapError(() =>
            new OAuthError({ reason: "Registration", message: "the registration response has no client_id" })
          )
        )
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

    /** The authorization code grant with PKCE S256 (OAuth 2.1 §4.1, MCP Authorization › PKCE). */
    const authorizationCode = (target: Target, stored: Credentials | undefined, scopes: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const interaction = options.interaction
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
        const client = yield* identify(target, stored, interaction.redirectUri)
        const verifier = oauth.generateRandomCodeVerifier()
        const codeChallenge = yield* call("Authorization", "PKCE", () => oauth.calculatePKCECodeChallenge(verifier))
        const state = oauth.generateRandomState()
        const url = new URL(as.authorization_endpoint)
        url.searchParams.set("response_type", "code")
        url.searchParams.set("client_id", client.clientId)
        url.searchParams.set("redirect_uri", interaction.redirectUri)
        url.searchParams.set("code_challenge", codeChallenge)
        url.searchParams.set("code_challenge_method", "S256")
        url.searchParams.set("state", state)
        if (scopes.length > 0) url.searchParams.set("scope", scopes.join(" "))
        url.searchParams.set("resource", target.resource)
        const callback = yield* interaction.authorize(url)
        // RFC 9207 `iss` (exact comparison), `state`, and an `error` response.
        const params = yield* Effect.try({
          try: () => oauth.validateAuthResponse(as, asClient(client), callback, state),
          catch: fail("Authorization", "the authorization response was refused")
        })
        const dpop = yield* dpopFor(as)
        const tokens = yield* tokenCall("token request", dpop, async () =>
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
              { ...tokenOpts(as, dpop), additionalParameters: { resource: target.resource } }
            )
          ))
        return { client, tokens }
      })

    /** The client credentials grant (MCP extension io.modelcontextprotocol/oauth-client-credentials). */
    const clientCredentials = (target: Target, scopes: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const client = options.client
        if (client === undefined) {
          return yield* new OAuthError({
            reason: "Registration",
            message: "the client_credentials grant needs a pre-registered client"
          })
        }
        const as = target.as
        const parameters: Record<string, string> = { resource: target.resource }
        if (scopes.length > 0) parameters.scope = scopes.join(" ")
        const dpop = yield* dpopFor(as)
        const tokens = yield* tokenCall("client credentials token request", dpop, async () =>
          oauth.processClientCredentialsResponse(
            as,
            asClient(client),
            await oauth.clientCredentialsGrantRequest(
              as,
              asClient(client),
              clientAuth(as, client, options.privateKey),
              parameters,
              tokenOpts(as, dpop)
            )
          ))
        return { client, tokens }
      })

    /**
     * The JWT bearer grant (RFC 7523 §2.1) with the application's assertion: a workload identity
     * token (MCP extension io.modelcontextprotocol/auth/wif, SEP-1933) or an ID-JAG (MCP extension
     * io.modelcontextprotocol/enterprise-managed-authorization, SEP-990). A refusal is final: the
     * same assertion is not sent again and no other grant is tried.
     */
    const jwtBearer = (target: Target, scopes: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const client = options.client
        if (client === undefined) {
          return yield* new OAuthError({ reason: "Registration", message: "the jwt_bearer grant needs a client" })
        }
        const source = options.assertion
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
        const dpop = yield* dpopFor(as)
        const tokens = yield* tokenCall("jwt-bearer token request", dpop, async () =>
          oauth.processGenericTokenEndpointResponse(
            as,
            asClient(client),
            await oauth.genericTokenEndpointRequest(
              as,
              asClient(client),
              clientAuth(as, client, options.privateKey),
              JWT_BEARER,
              parameters,
              tokenOpts(as, dpop)
            )
          ))
        return { client, tokens }
      })

    /** A refresh token grant (OAuth 2.1 §4.3); `None` when there is nothing to refresh or it fails. */
    const refresh = (key: string, target: Target, stored: Credentials) =>
      Effect.gen(function*() {
        const refreshToken = stored.tokens?.refreshToken
        const client = stored.client
        if (refreshToken === undefined || client === undefined || stored.issuer !== target.as.issuer) {
          return Option.none<Tokens>()
        }
        const as = target.as
        const dpop = yield* dpopFor(as)
        // A DPoP-bound refresh token of a public client is bound to the key (RFC 9449 §5): a
        // provider that lost its key (a new process) cannot use it.
        if (stored.tokens?.tokenType === "dpop" && dpop === undefined) return Option.none<Tokens>()
        const result = yield* tokenCall("refresh", dpop, async () =>
          oauth.processRefreshTokenResponse(
            as,
            asClient(client),
            await oauth.refreshTokenGrantRequest(
              as,
              asClient(client),
              clientAuth(as, client, options.privateKey),
              refreshToken,
              { ...tokenOpts(as, dpop), additionalParameters: { resource: target.resource } }
            )
          ))
        const tokens = toTokens(yield* Clock.currentTimeMillis, result, stored.tokens)
        yield* save(key, { ...stored, tokens })
        return Option.some(tokens)
      }).pipe(
        Effect.catchAll((e) =>
          Effect.as(Effect.logDebug(`OAuth: refresh failed (${e.message}); authorizing again`), Option.none<Tokens>())
        )
      )

    const header = (t: Tokens): string => `${t.tokenType.toLowerCase() === "dpop" ? "DPoP" : "Bearer"} ${t.accessToken}`

    /** The stored tokens for `url`, refreshed first when they expire (`undefined`: none). */
    const currentTokens = (url: string): Effect.Effect<Tokens | undefined> =>
      Effect.gen(function*() {
        const stored = Option.getOrUndefined(yield* load(url))
        const tokens = stored?.tokens
        if (stored === undefined || tokens === undefined) return undefined
        const now = yield* Clock.currentTimeMillis
        if (tokens.expiresAt === undefined || tokens.expiresAt - EXPIRY_SKEW_MS > now) return tokens
        const target = Option.getOrUndefined(HashMap.get(yield* Ref.get(targets), new URL(url).href))
        if (target === undefined) return tokens
        const refreshed = yield* lock.withPermits(1)(refresh(url, target, stored))
        return Option.getOrElse(refreshed, () => tokens)
      }).pipe(Effect.catchAll(() => Effect.succeed(undefined)))

    /**
     * `Authorization` and, for a DPoP-bound token, a fresh `DPoP` proof for this request (RFC 9449
     * §7.1). A DPoP-bound token without this provider's key (stored by another process) is not
     * sent: the server's challenge then starts a new authorization.
     */
    const headers = (url: string, method: string): Effect.Effect<Readonly<Record<string, string>>> =>
      Effect.gen(function*() {
        const tokens = yield* currentTokens(url)
        if (tokens === undefined) return {}
        if (tokens.tokenType.toLowerCase() !== "dpop") return { authorization: header(tokens) }
        const dpop = dpopState
        if (dpop === undefined) return {}
        return { authorization: header(tokens), dpop: yield* dpop.proof(method, url, tokens.accessToken) }
      })

    const onChallenge = (url: string, challenge: Challenge): Effect.Effect<void, OAuthError> =>
      lock.withPermits(1)(Effect.gen(function*() {
        // RFC 9449 §9: the MCP server wants its nonce in the proof; the request is sent again.
        if (challenge.error === "use_dpop_nonce" && challenge.nonce !== undefined && dpopState !== undefined) {
          dpopState.setNonce(url, challenge.nonce)
          return
        }
        const storedBefore = Option.getOrUndefined(yield* load(url))
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
        const server = new URL(url)
        // Discovery runs again on every challenge: the resource may have moved to another
        // authorization server (SEP-2352), whose credentials are then not reused.
        const target = yield* discover(server, challenge)
        const stored = storedBefore !== undefined && storedBefore.issuer === target.as.issuer ? storedBefore : undefined
        if (stored !== undefined && challenge.status === 401) {
          const refreshed = yield* refresh(url, target, stored)
          if (Option.isSome(refreshed) && header(refreshed.value) !== challenge.sent) return
        }
        const scopes = selectScopes(target, challenge, stored?.scopes ?? [])
        const outcome = grant === "client_credentials"
          ? yield* clientCredentials(target, scopes)
          : grant === "jwt_bearer"
          ? yield* jwtBearer(target, scopes)
          : yield* authorizationCode(target, stored, scopes)
        const now = yield* Clock.currentTimeMillis
        yield* save(url, {
          issuer: target.as.issuer,
          client: outcome.client,
          tokens: toTokens(now, outcome.tokens, undefined),
          scopes
        })
      }))

    return { headers, onChallenge, maxAttempts }
  })
