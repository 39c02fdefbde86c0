/**
 * The client side of MCP authorization (MCP 2025-11-25 and 2026-07-28, Authorization): an OAuth
 * 2.1 provider the Streamable HTTP client calls before each request (the `Authorization` header)
 * and on a `401`/`403` Bearer challenge, built on `oauth4webapi`.
 *
 * On a challenge it discovers the Protected Resource Metadata (RFC 9728: the challenge's
 * `resource_metadata`, then `/.well-known/oauth-protected-resource/<path>`, then the root
 * document) and checks that its `resource` covers the endpoint; discovers the authorization server
 * (RFC 8414 and OpenID Connect Discovery with the path-insertion variants) and checks its
 * `issuer`; identifies the client (a Client ID Metadata Document URL, a pre-registered client, a
 * stored one, dynamic client registration); and obtains a token with the authorization code grant
 * and PKCE S256 (the application's {@link Interaction} shows the authorization page and returns the
 * redirect; the RFC 9207 `iss` is checked), the client credentials grant or the JWT bearer grant
 * (workload identity, enterprise-managed authorization with {@link idJagAssertion}). Tokens carry
 * the RFC 8707 `resource`, may be DPoP-bound (RFC 9449), are kept in a {@link TokenStore} and
 * refreshed when they expire or are refused.
 *
 * Guide: [OAuth client](https://github.com/presa-mcp/presa-mcp/blob/main/docs/oauth.md).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { McpClient, OAuth } from "presa-mcp"
 * import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
 *
 * const program = Effect.gen(function*() {
 *   const auth = yield* OAuth.make({ interaction: OAuth.headless() })
 *   const transport = yield* StreamableHttp.client({ url: "https://mcp.example.com/mcp", auth })
 *   const client = yield* McpClient.connect(transport, { name: "app", version: "1.0.0" })
 *   return yield* client.listAllTools
 * }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory))
 * ```
 *
 * @since 0.2.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as internalError from "./internal/oauth/error.js"

/**
 * Why authorization failed, in `reason`:
 * - `"Discovery"`: no usable Protected Resource Metadata or authorization server metadata (or a
 *   network failure fetching them);
 * - `"ResourceMismatch"`: the metadata's `resource` does not cover the MCP endpoint (RFC 9728 §3.3);
 * - `"IssuerMismatch"`: the authorization server metadata names another issuer (RFC 8414 §3.3),
 *   or the server names none but other authorization servers than `Options.issuer`;
 * - `"PkceUnsupported"`: the server does not list `S256` in `code_challenge_methods_supported`
 *   (MCP Authorization › Authorization Code Protection: the client refuses to proceed);
 * - `"Registration"`: no way to identify the client, or dynamic client registration failed;
 * - `"Authorization"`: the authorization response was an error, or its `state` or RFC 9207 `iss`
 *   was wrong or missing;
 * - `"Token"`: the token endpoint refused (the OAuth `error` code is in `error`);
 * - `"Refused"`: the server answered `403` without `insufficient_scope`, or kept refusing after
 *   `maxAttempts` authorizations;
 * - `"Interaction"`: the application's {@link Interaction} failed or none is configured;
 * - `"Store"`: the {@link TokenStore} could not read or write;
 * - `"UnsafeUrl"`: a URL a server named (a challenge's `resource_metadata`, an authorization
 *   server, a metadata endpoint, a redirect) is not `https:` (plain `http:` only to loopback
 *   unless `allowInsecureHttp`), has another scheme (`javascript:`, `data:`, `file:` …), or points
 *   a client of a public server at a loopback or private address (IP literals and `localhost`);
 *   nothing is sent to it, and an authorization URL is never shown;
 * - `"Limit"`: an answer over 256 KiB, no complete answer within `requestTimeout`, or more than 5
 *   redirects on one metadata request.
 *
 * Messages never contain tokens, codes or client secrets.
 *
 * @since 0.2.0
 * @category errors
 */
export const OAuthError: typeof internalError.OAuthError = internalError.OAuthError

/**
 * @since 0.2.0
 * @category errors
 */
export type OAuthError = internalError.OAuthError

/**
 * Tokens from the token endpoint: `accessToken`, `tokenType` (lowercased, `bearer`),
 * `refreshToken` when issued, `expiresAt` (epoch milliseconds, from `expires_in`) and the granted
 * `scope` (space-separated) when given.
 *
 * @since 0.2.0
 * @category models
 */
export interface Tokens {
  readonly accessToken: string
  readonly tokenType: string
  readonly refreshToken?: string
  readonly expiresAt?: number
  readonly scope?: string
}

/**
 * A client identity at an authorization server: `clientId` (a Client ID Metadata Document URL, a
 * pre-registered id or one from dynamic registration), `clientSecret` for confidential clients and
 * `tokenEndpointAuthMethod` (`none`, `client_secret_basic`, `client_secret_post`,
 * `private_key_jwt`; default: `client_secret_basic` or `client_secret_post` as the server lists
 * them when there is a secret, else `none`).
 *
 * @since 0.2.0
 * @category models
 */
export interface ClientInformation {
  readonly clientId: string
  readonly clientSecret?: string
  readonly tokenEndpointAuthMethod?: string
}

/**
 * What a {@link TokenStore} keeps per MCP endpoint URL: the authorization server's `issuer` the
 * credentials belong to (credentials of another issuer are never sent, SEP-2352), the client
 * identity there, the tokens and the scopes last requested (a step-up requests their union with
 * the new ones, SEP-2350).
 *
 * @since 0.2.0
 * @category models
 */
export interface Credentials {
  readonly issuer: string
  readonly client?: ClientInformation
  readonly tokens?: Tokens
  readonly scopes?: ReadonlyArray<string>
}

/**
 * Where credentials live, keyed by MCP endpoint URL. `get` of an unknown key is `None`. Errors
 * (only from persistent stores) are `OAuthError` `"Store"`.
 *
 * @since 0.2.0
 * @category models
 */
export class TokenStore extends Context.Tag("presa-mcp/OAuth/TokenStore")<TokenStore, {
  readonly get: (key: string) => Effect.Effect<Option.Option<Credentials>, OAuthError>
  readonly set: (key: string, credentials: Credentials) => Effect.Effect<void, OAuthError>
  readonly remove: (key: string) => Effect.Effect<void, OAuthError>
}>() {}

/**
 * A {@link TokenStore} in memory: credentials last as long as the store value. Never fails.
 *
 * @since 0.2.0
 * @category constructors
 */
export const memoryStore: Effect.Effect<TokenStore["Type"]> = Effect.map(
  Ref.make(HashMap.empty<string, Credentials>()),
  (ref) => ({
    get: (key) => Effect.map(Ref.get(ref), HashMap.get(key)),
    set: (key, credentials) => Ref.update(ref, HashMap.set(key, credentials)),
    remove: (key) => Ref.update(ref, HashMap.remove(key))
  })
)

/**
 * {@link memoryStore} as a layer (the default for applications and tests).
 *
 * @since 0.2.0
 * @category layers
 */
export const layerMemory: Layer.Layer<TokenStore> = Layer.effect(TokenStore, memoryStore)

const StoredTokens = Schema.Struct({
  accessToken: Schema.String,
  tokenType: Schema.String,
  refreshToken: Schema.optionalWith(Schema.String, { exact: true }),
  expiresAt: Schema.optionalWith(Schema.Number, { exact: true }),
  scope: Schema.optionalWith(Schema.String, { exact: true })
})
const StoredCredentials = Schema.Struct({
  issuer: Schema.String,
  client: Schema.optionalWith(
    Schema.Struct({
      clientId: Schema.String,
      clientSecret: Schema.optionalWith(Schema.String, { exact: true }),
      tokenEndpointAuthMethod: Schema.optionalWith(Schema.String, { exact: true })
    }),
    { exact: true }
  ),
  tokens: Schema.optionalWith(StoredTokens, { exact: true }),
  scopes: Schema.optionalWith(Schema.Array(Schema.String), { exact: true })
})
const StoreFile = Schema.parseJson(Schema.Record({ key: Schema.String, value: StoredCredentials }))

/**
 * A {@link TokenStore} in one JSON file (for CLIs): read on every `get`, rewritten on every
 * change with permissions `0600` (owner read/write only), created on the first `set`. A missing
 * file is an empty store; an unreadable or malformed one fails with `OAuthError` `"Store"` (its
 * content is never put in the message).
 *
 * @since 0.2.0
 * @category constructors
 */
export const fileStore = (path: string): Effect.Effect<TokenStore["Type"], never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const lock = yield* Effect.makeSemaphore(1)
    const storeError = (what: string) => () => new OAuthError({ reason: "Store", message: `${what} ${path} failed` })
    const read = Effect.gen(function*() {
      if (!(yield* fs.exists(path))) return {}
      const text = yield* fs.readFileString(path)
      return yield* Schema.decode(StoreFile)(text)
    }).pipe(Effect.mapError(storeError("reading the token store")))
    const write = (content: Readonly<Record<string, Credentials>>) =>
      Effect.gen(function*() {
        const text = yield* Schema.encode(StoreFile)(content)
        yield* fs.writeFileString(path, text, { mode: 0o600 })
        yield* fs.chmod(path, 0o600)
      }).pipe(Effect.mapError(storeError("writing the token store")))
    const modify = (f: (m: Readonly<Record<string, Credentials>>) => Record<string, Credentials>) =>
      lock.withPermits(1)(Effect.flatMap(read, (m) => write(f(m))))
    return {
      get: (key) => Effect.map(read, (m) => Option.fromNullable(m[key])),
      set: (key, credentials) => modify((m) => ({ ...m, [key]: credentials })),
      remove: (key) =>
        modify((m) => {
          const { [key]: _, ...rest } = m
          return rest
        })
    }
  })

/**
 * {@link fileStore} as a layer.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerFile = (path: string): Layer.Layer<TokenStore, never, FileSystem.FileSystem> =>
  Layer.effect(TokenStore, fileStore(path))

/**
 * The interactive part of the authorization code flow, supplied by the application:
 * `redirectUri` is the `redirect_uri` registered and sent; `authorize` shows the user the
 * authorization URL (open a browser, print it) and returns the URL the authorization server
 * redirected to (with `code`, `state`, `iss`). Failing with `OAuthError` (`"Interaction"`) ends
 * the authorization. See {@link headless} for tests and machine clients.
 *
 * @since 0.2.0
 * @category models
 */
export interface Interaction {
  readonly redirectUri: string
  readonly authorize: (authorizationUrl: URL) => Effect.Effect<URL, OAuthError>
}

/**
 * An {@link Interaction} with no user: it GETs the authorization URL without following redirects
 * and returns the `Location` the server answered with (for authorization servers that approve
 * without a login page, as in tests). `redirectUri` default `http://localhost:3000/callback`
 * (never contacted). Fails with `OAuthError` `"Interaction"` when the answer is not a redirect.
 *
 * @since 0.2.0
 * @category constructors
 */
export const headless = (options: {
  readonly redirectUri?: string | undefined
  readonly fetch?: typeof globalThis.fetch | undefined
} = {}): Interaction => {
  const fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const interactionError = (message: string) => new OAuthError({ reason: "Interaction", message })
  return {
    redirectUri: options.redirectUri ?? "http://localhost:3000/callback",
    authorize: (url) =>
      Effect.gen(function*() {
        const response = yield* Effect.tryPromise({
          try: (signal) => fetchImpl(url, { redirect: "manual", signal }),
          catch: () => interactionError(`GET ${url.origin}${url.pathname} failed`)
        })
        yield* Effect.promise(() => response.body?.cancel() ?? Promise.resolve())
        const location = response.headers.get("location")
        if (location === null || !URL.canParse(location, url)) {
          return yield* interactionError(
            `the authorization endpoint answered HTTP ${response.status} without a redirect`
          )
        }
        return new URL(location, url)
      })
  }
}

/**
 * A `401`/`403` challenge (`WWW-Authenticate` scheme `Bearer` or `DPoP`) as the HTTP client saw
 * it: `status`, the `resource_metadata`, `scope` (split) and `error` parameters, `sent`, the
 * `Authorization` value the refused request carried (`undefined` when none), and `nonce`, the
 * response's `DPoP-Nonce` header (RFC 9449 §9), when there was one.
 *
 * @since 0.2.0
 * @category models
 */
export interface Challenge {
  readonly status: number
  readonly resourceMetadata: string | undefined
  readonly scopes: ReadonlyArray<string>
  readonly error: string | undefined
  readonly sent: string | undefined
  readonly nonce?: string | undefined
}

/**
 * What the Streamable HTTP client calls (`StreamableHttp.ClientOptions.auth`), per MCP endpoint
 * URL: `headers` gives the headers that authorize one request with HTTP `method` (`POST`, `GET`,
 * `DELETE`): `authorization` (`Bearer …` or `DPoP …`, refreshing an expired token first) and,
 * for a DPoP-bound token, a fresh `dpop` proof (RFC 9449 §7.1); none before any authorization;
 * never fails. `onChallenge` obtains new credentials after a `401`, or a `403`
 * `insufficient_scope` (step-up), or records a `use_dpop_nonce` nonce, and succeeds when the
 * request should be sent again; `maxAttempts` bounds how often one request is re-sent after a
 * challenge (then the request fails with `TransportError` `"Unauthorized"`).
 *
 * @since 0.2.0
 * @category models
 */
export interface Provider {
  readonly headers: (url: string, method: string) => Effect.Effect<Readonly<Record<string, string>>>
  readonly onChallenge: (url: string, challenge: Challenge) => Effect.Effect<void, OAuthError>
  readonly maxAttempts: number
}

/**
 * What an {@link Assertion} is asked for: the authorization server's `issuer` and
 * `tokenEndpoint` (the audience of an assertion, RFC 7523 §3) and the RFC 8707 `resource` of the
 * MCP server.
 *
 * @since 0.2.0
 * @category models
 */
export interface AssertionTarget {
  readonly issuer: string
  readonly tokenEndpoint: string
  readonly resource: string
}

/**
 * Where the JWT of the `jwt_bearer` grant (RFC 7523 §2.1) comes from, asked once per token
 * request: a workload identity token of the platform the client runs on (MCP extension
 * `io.modelcontextprotocol/auth/wif`, SEP-1933; e.g. read from a file the platform mounts), or an
 * Identity Assertion JWT Authorization Grant from the enterprise's identity provider
 * ({@link idJagAssertion}, MCP extension
 * `io.modelcontextprotocol/enterprise-managed-authorization`, SEP-990). Failing with `OAuthError`
 * ends the authorization.
 *
 * @since 0.2.0
 * @category models
 */
export type Assertion = (target: AssertionTarget) => Effect.Effect<string, OAuthError>

/**
 * Options of {@link idJagAssertion}: the identity provider's `tokenEndpoint`, this client's
 * `clientId` there (and `clientSecret`, sent with `client_secret_basic`, when it is confidential),
 * and `idToken`, the user's OpenID Connect ID token from the enterprise single sign-on (a string,
 * or an effect asked on every exchange). `fetch`, `allowInsecureHttp` and `requestTimeout` as in
 * {@link Options}.
 *
 * @since 0.2.0
 * @category models
 */
export interface IdJagOptions {
  readonly tokenEndpoint: string
  readonly clientId: string
  readonly clientSecret?: string | undefined
  readonly idToken: string | Effect.Effect<string, OAuthError>
  readonly fetch?: typeof globalThis.fetch | undefined
  readonly allowInsecureHttp?: boolean | undefined
  readonly requestTimeout?: Duration.DurationInput | undefined
}

/**
 * An {@link Assertion} for enterprise-managed authorization (MCP extension
 * `io.modelcontextprotocol/enterprise-managed-authorization`, SEP-990): an RFC 8693 token
 * exchange at the identity provider's token endpoint (`subject_token` the ID token of type
 * `urn:ietf:params:oauth:token-type:id_token`, `requested_token_type`
 * `urn:ietf:params:oauth:token-type:id-jag`, `audience` the MCP authorization server's issuer,
 * `resource` the MCP server) whose `access_token` is the ID-JAG the `jwt_bearer` grant then
 * presents. A refused exchange fails with `OAuthError` `"Token"` (the OAuth `error` in `error`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const idJagAssertion = (options: IdJagOptions): Assertion => (target) =>
  Effect.flatMap(
    Effect.promise(() => import("./internal/oauth/grants.js")),
    (m) => m.idJag(options, target)
  )

/**
 * A Web Crypto private key for `private_key_jwt` client authentication (RFC 7523 §2.2): a
 * `CryptoKey`, e.g. from `crypto.subtle.importKey` or jose's `importPKCS8`. Declared by its shape
 * so that the package's declarations compile without the DOM library; a value that is not a
 * `CryptoKey` at run time is not used (the client authenticates without it).
 *
 * @since 0.2.0
 * @category models
 */
export interface PrivateKey {
  readonly type: string
  readonly extractable: boolean
  readonly algorithm: { readonly name: string }
  readonly usages: ReadonlyArray<string>
}

/**
 * Options of {@link make}. All optional:
 * - `interaction`: the user step of the authorization code grant; without it a server that needs
 *   a user fails with `"Interaction"`;
 * - `grant`: `"authorization_code"` (default), `"client_credentials"` (machine clients, MCP
 *   extension `io.modelcontextprotocol/oauth-client-credentials`; needs `client`, and
 *   `privateKey` for `private_key_jwt`) or `"jwt_bearer"` (RFC 7523 §2.1, the JWT from
 *   `assertion`: workload identity federation, SEP-1933, or enterprise-managed authorization with
 *   {@link idJagAssertion}, SEP-990; needs `client`); a refused `client_credentials` or
 *   `jwt_bearer` token request is not retried with another grant;
 * - `assertion`: the JWT source of the `jwt_bearer` grant;
 * - `dpop`: DPoP-bound tokens (RFC 9449; MCP extension `io.modelcontextprotocol/auth/dpop`,
 *   SEP-1932): `true` always, `false` never, absent (default) when the authorization server lists
 *   `ES256` in `dpop_signing_alg_values_supported`. One ES256 key pair per provider, made on first
 *   use and kept in memory only (a DPoP-bound token stored by another process is not sent: the
 *   server's challenge starts a new authorization); token requests carry a proof, and
 *   every MCP request a fresh one (`htm`, `htu`, `ath`); `use_dpop_nonce` answers of the token
 *   endpoint (RFC 9449 §8) are retried once, and of the MCP server (§9) within `maxAttempts`,
 *   with the server's nonce;
 * - `clientMetadataUrl`: an HTTPS URL serving this client's Client ID Metadata Document, used as
 *   `client_id` where the server sets `client_id_metadata_document_supported`;
 * - `client`: a pre-registered client (used before dynamic registration);
 * - `issuer`: the issuer identifier of the authorization server `client`, `privateKey` and
 *   `assertion` belong to. Set, the provider uses that one when the Protected Resource Metadata
 *   lists it among others, and fails with `"IssuerMismatch"` before contacting any other (a
 *   hostile MCP server cannot collect the client's secret or an assertion by naming an
 *   authorization server of its own). Default: unset, the first one the server lists;
 * - `privateKey`: the key of `private_key_jwt` client authentication (RFC 7523);
 * - `clientName` (default `"presa-mcp"`) and `applicationType` (default `"native"`, SEP-837) for
 *   dynamic registration, which asks for `authorization_code` and `refresh_token`;
 * - `scopes`: request exactly these instead of the challenge's or the metadata's;
 * - `offlineAccess`: add `offline_access` when the server lists it (default `true`, SEP-2207);
 * - `maxAttempts`: re-sends of one request after challenges, default 3;
 * - `fetch` (default `globalThis.fetch`) and `allowInsecureHttp` (default `false`: plain `http:`
 *   only to `localhost`, `127.0.0.1` and `[::1]`);
 * - `requestTimeout`: one request to a metadata, registration or token endpoint, redirects and
 *   body included (`DurationInput`, default 30 seconds; then `OAuthError` `"Limit"`).
 *
 * Every answer is read up to 256 KiB (`"Limit"` above), a metadata request follows at most 5
 * redirects, and every URL a server names passes the checks of `"UnsafeUrl"`; see the threat
 * model in `docs/oauth.md`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  readonly interaction?: Interaction | undefined
  readonly grant?: "authorization_code" | "client_credentials" | "jwt_bearer" | undefined
  readonly assertion?: Assertion | undefined
  readonly dpop?: boolean | undefined
  readonly clientMetadataUrl?: string | undefined
  readonly client?: ClientInformation | undefined
  readonly issuer?: string | undefined
  readonly privateKey?: PrivateKey | undefined
  readonly clientName?: string | undefined
  readonly applicationType?: "native" | "web" | undefined
  readonly scopes?: ReadonlyArray<string> | undefined
  readonly offlineAccess?: boolean | undefined
  readonly maxAttempts?: number | undefined
  readonly fetch?: typeof globalThis.fetch | undefined
  readonly allowInsecureHttp?: boolean | undefined
  readonly requestTimeout?: Duration.DurationInput | undefined
}

/**
 * Builds a {@link Provider} over the {@link TokenStore} in context. Pass it as
 * `StreamableHttp.client({ url, auth })`. One provider may serve several endpoints; challenges are
 * handled one at a time, and a request refused with a token that has since been replaced is just
 * re-sent.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<Provider, never, TokenStore> =>
  Effect.flatMap(
    TokenStore,
    // `oauth4webapi` is loaded on the first `make`, not when the package root is imported.
    (store) =>
      Effect.flatMap(Effect.promise(() => import("./internal/oauth/provider.js")), (m) => m.make(options, store))
  )
