/**
 * Identity-provider presets for the resource server (`Auth.ResourceServer`, MCP 2025-11-25, Basic,
 * Authorization): one call per provider gives its issuer, its JWKS URL, the audience to require
 * and the mapping of its token's claims to the caller's scopes (what `McpServer.requireScopes`
 * and `requiredScopes` check). Auth0, Clerk, WorkOS AuthKit, Keycloak, Microsoft Entra ID, Google
 * and any OpenID Connect issuer (discovered from its `/.well-known/openid-configuration`).
 *
 * Each preset takes the provider's own coordinates (domain, realm, tenant, …); `authority` (where
 * the provider has one fixed host) points it elsewhere, e.g. a sovereign cloud or a local test
 * issuer. The token shapes each preset expects, with their sources, are in
 * docs/identity-providers.md.
 *
 * @since 0.2.0
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Auth from "./Auth.js"
import * as Jwt from "./internal/auth/jwt.js"
import * as JsonRpc from "./JsonRpc.js"

/**
 * A configured provider: `name` (`"auth0"`, `"clerk"`, …), `issuer` (the token's `iss`, published
 * as the authorization server in the Protected Resource Metadata; the first one where several are
 * accepted: Google's two forms, several Entra tenants), `jwksUrl` (its signing keys,
 * fetched and cached by `jose`), `audience` (the `aud` required; `undefined` only for Clerk with
 * `authorizedParties`) and `verifier` (for `Auth.ResourceServer`).
 *
 * @since 0.2.0
 * @category models
 */
export interface Provider {
  readonly name: string
  readonly issuer: string
  readonly jwksUrl: string
  readonly audience: string | ReadonlyArray<string> | undefined
  readonly verifier: Auth.Verifier
}

/**
 * What every preset accepts besides its own coordinates:
 *
 * - `scopes`: replaces the preset's mapping from the verified claims to the caller's scopes;
 * - `algorithms`: allowed signature algorithms (default `["RS256", "ES256", "EdDSA"]`);
 * - `clockTolerance`: allowed clock skew for `exp` / `nbf` (default 30 seconds).
 *
 * @since 0.2.0
 * @category models
 */
export interface Common {
  readonly scopes?: ((claims: JsonRpc.JsonObject) => ReadonlyArray<string>) | undefined
  readonly algorithms?: ReadonlyArray<string> | undefined
  readonly clockTolerance?: Duration.DurationInput | undefined
}

/** `https://<host>` from a bare host, or the URL as given (without a trailing slash). */
const baseUrl = (hostOrUrl: string): string =>
  (/^https?:\/\//i.test(hostOrUrl) ? hostOrUrl : `https://${hostOrUrl}`).replace(/\/+$/, "")

/** The union of the scopes each `read` finds in the claims, in order, without duplicates. */
const union = (claims: JsonRpc.JsonObject, ...reads: ReadonlyArray<(c: JsonRpc.JsonObject) => unknown>) => [
  ...new Set(reads.flatMap((read) => Jwt.scopeList(read(claims))))
]

const at = (value: unknown, ...path: ReadonlyArray<string>): unknown => {
  let cur = value
  for (const key of path) cur = JsonRpc.isObject(cur) && Object.hasOwn(cur, key) ? cur[key] : undefined
  return cur
}

const make = (
  name: string,
  options: Common,
  settings: {
    readonly issuer: string | ReadonlyArray<string>
    readonly jwksUrl: string
    readonly audience: string | ReadonlyArray<string> | undefined
    readonly scopes: (claims: JsonRpc.JsonObject) => ReadonlyArray<string>
    readonly check?: ((claims: JsonRpc.JsonObject) => string | undefined) | undefined
  }
): Provider => ({
  name,
  issuer: typeof settings.issuer === "string" ? settings.issuer : settings.issuer[0] ?? "",
  jwksUrl: settings.jwksUrl,
  audience: settings.audience,
  verifier: Jwt.make({
    issuer: settings.issuer,
    audience: settings.audience,
    jwksUrl: settings.jwksUrl,
    algorithms: options.algorithms,
    clockTolerance: options.clockTolerance,
    scopes: options.scopes ?? settings.scopes,
    check: settings.check
  }, (message) => new Auth.InvalidToken({ reason: "invalid", message }))
})

/**
 * The resource server configuration for `provider`: `resource` (this server's MCP endpoint URL),
 * the provider's issuer as the one authorization server, and optional `scopesSupported` /
 * `requiredScopes` (see `Auth.ResourceServer`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const resourceServer = (provider: Provider, options: {
  readonly resource: string
  readonly scopesSupported?: ReadonlyArray<string> | undefined
  readonly requiredScopes?: ReadonlyArray<string> | undefined
}): Auth.ResourceServer => ({
  resource: options.resource,
  authorizationServers: [provider.issuer],
  ...(options.scopesSupported === undefined ? {} : { scopesSupported: options.scopesSupported }),
  ...(options.requiredScopes === undefined ? {} : { requiredScopes: options.requiredScopes }),
  verifier: provider.verifier
})

/**
 * Auth0: `domain` is the tenant's domain (`acme.us.auth0.com`, a custom domain, or a URL);
 * issuer `https://<domain>/` (with the trailing slash Auth0 puts in `iss`), keys at
 * `/.well-known/jwks.json`, `audience` the API Identifier. Scopes: the space-separated `scope`
 * plus the `permissions` array RBAC adds ("Add Permissions in the Access Token").
 *
 * @since 0.2.0
 * @category constructors
 */
export const auth0 = (options: Common & { readonly domain: string; readonly audience: string }): Provider => {
  const base = baseUrl(options.domain)
  return make("auth0", options, {
    issuer: `${base}/`,
    jwksUrl: `${base}/.well-known/jwks.json`,
    audience: options.audience,
    scopes: (c) => union(c, (x) => x.scope, (x) => x.permissions)
  })
}

/**
 * Clerk: `issuer` is the instance's Frontend API URL (`https://<name>.clerk.accounts.dev` or the
 * production domain); keys at `/.well-known/jwks.json`. Clerk session tokens carry no `aud`:
 * give `authorizedParties` (the origins allowed in `azp`; a token without `azp`, or with another,
 * is refused), or an `audience` when the token is minted with one (a JWT template, an OAuth
 * access token); both may be given. Scopes: the space-separated `scope` (OAuth access tokens).
 *
 * @since 0.2.0
 * @category constructors
 */
export const clerk = (
  options:
    & Common
    & { readonly issuer: string }
    & (
      | { readonly audience: string; readonly authorizedParties?: ReadonlyArray<string> | undefined }
      | { readonly audience?: undefined; readonly authorizedParties: ReadonlyArray<string> }
    )
): Provider => {
  const base = baseUrl(options.issuer)
  const parties = options.authorizedParties
  return make("clerk", options, {
    issuer: base,
    jwksUrl: `${base}/.well-known/jwks.json`,
    audience: options.audience,
    scopes: (c) => union(c, (x) => x.scope),
    check: parties === undefined ? undefined : (c) =>
      typeof c.azp === "string" && parties.includes(c.azp)
        ? undefined
        : `unexpected "azp" claim value (authorized parties: ${parties.join(", ")})`
  })
}

/**
 * WorkOS AuthKit as the MCP authorization server: `domain` is the AuthKit domain
 * (`<subdomain>.authkit.app` or a custom one, or a URL); issuer `https://<domain>`, keys at
 * `/oauth2/jwks`, `audience` the MCP resource (the "MCP Resource Indicator" set in WorkOS).
 * Scopes: the space-separated `scope` plus the `permissions` array of WorkOS roles.
 *
 * @since 0.2.0
 * @category constructors
 */
export const workos = (options: Common & { readonly domain: string; readonly audience: string }): Provider => {
  const base = baseUrl(options.domain)
  return make("workos", options, {
    issuer: base,
    jwksUrl: `${base}/oauth2/jwks`,
    audience: options.audience,
    scopes: (c) => union(c, (x) => x.scope, (x) => x.permissions)
  })
}

/**
 * Keycloak: `url` is the server's base URL (`https://sso.example.com`, with any context path such
 * as `/auth`), `realm` the realm; issuer `<url>/realms/<realm>`, keys at
 * `/protocol/openid-connect/certs`, `audience` the client the token is for (Keycloak adds it to
 * `aud` with an audience mapper). Scopes: the space-separated `scope`, plus the realm roles
 * (`realm_access.roles`) with `realmRoles: true` and a client's roles
 * (`resource_access.<client>.roles`) with `clientRoles: "<client>"`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const keycloak = (
  options: Common & {
    readonly url: string
    readonly realm: string
    readonly audience: string
    readonly realmRoles?: boolean | undefined
    readonly clientRoles?: string | undefined
  }
): Provider => {
  const issuer = `${baseUrl(options.url)}/realms/${encodeURIComponent(options.realm)}`
  const client = options.clientRoles
  return make("keycloak", options, {
    issuer,
    jwksUrl: `${issuer}/protocol/openid-connect/certs`,
    audience: options.audience,
    scopes: (c) =>
      union(
        c,
        (x) => x.scope,
        (x) => options.realmRoles === true ? at(x, "realm_access", "roles") : undefined,
        (x) => client === undefined ? undefined : at(x, "resource_access", client, "roles")
      )
  })
}

/**
 * Microsoft Entra ID, v2.0 access tokens: `tenant` is the directory (tenant) ID, or several for
 * a multi-tenant API; issuer `<authority>/<tenant>/v2.0` (one per tenant; `tid` must name the same
 * tenant and `ver` be `"2.0"`), keys at `<authority>/<tenant>/discovery/v2.0/keys` (`common` for
 * several tenants), `audience` the API's application (client) ID, which v2.0 tokens carry in
 * `aud` (also accepted: the Application ID URI, `audience` may list both). `authority` defaults
 * to `https://login.microsoftonline.com`. Scopes: the delegated `scp` (space-separated) plus the
 * application `roles` array.
 *
 * @since 0.2.0
 * @category constructors
 */
export const entra = (
  options: Common & {
    readonly tenant: string | ReadonlyArray<string>
    readonly audience: string | ReadonlyArray<string>
    readonly authority?: string | undefined
  }
): Provider => {
  const authority = baseUrl(options.authority ?? "https://login.microsoftonline.com")
  const tenants = typeof options.tenant === "string" ? [options.tenant] : options.tenant
  const keysTenant = tenants.length === 1 && tenants[0] !== undefined ? tenants[0] : "common"
  return make("entra", options, {
    issuer: tenants.map((t) => `${authority}/${t}/v2.0`),
    jwksUrl: `${authority}/${keysTenant}/discovery/v2.0/keys`,
    audience: options.audience,
    scopes: (c) => union(c, (x) => x.scp, (x) => x.roles),
    check: (c) => {
      if (c.ver !== "2.0") return `expected a v2.0 token ("ver": "2.0")`
      if (typeof c.tid !== "string" || !tenants.includes(c.tid)) return `unexpected "tid" claim value`
      return c.iss === `${authority}/${c.tid}/v2.0` ? undefined : `the "iss" claim does not name the token's tenant`
    }
  })
}

/**
 * Google ID tokens (Google's access tokens are opaque, not JWTs): `clientId` is the OAuth client
 * ID the token's `aud` must be; issuer `https://accounts.google.com` (also `accounts.google.com`),
 * keys at `https://www.googleapis.com/oauth2/v3/certs`. `authorizedParties`: the client IDs
 * allowed in `azp` when present; `hostedDomain`: the Google Workspace domain `hd` must be.
 * `issuer` / `jwksUrl` point it elsewhere. Scopes: none by default (ID tokens carry none; give
 * `scopes` to derive some, e.g. from `hd` or `email`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const google = (
  options: Common & {
    readonly clientId: string
    readonly authorizedParties?: ReadonlyArray<string> | undefined
    readonly hostedDomain?: string | undefined
    readonly issuer?: string | undefined
    readonly jwksUrl?: string | undefined
  }
): Provider => {
  const parties = options.authorizedParties ?? [options.clientId]
  return make("google", options, {
    issuer: options.issuer === undefined ? ["https://accounts.google.com", "accounts.google.com"] : options.issuer,
    jwksUrl: options.jwksUrl ?? "https://www.googleapis.com/oauth2/v3/certs",
    audience: options.clientId,
    scopes: () => [],
    check: (c) => {
      if (c.azp !== undefined && (typeof c.azp !== "string" || !parties.includes(c.azp))) {
        return `unexpected "azp" claim value`
      }
      if (options.hostedDomain !== undefined && c.hd !== options.hostedDomain) return `unexpected "hd" claim value`
      return undefined
    }
  })
}

/**
 * The OpenID Connect discovery of {@link oidc} failed: `issuer` and why (the document could not
 * be fetched, is not the expected JSON, or names another issuer).
 *
 * @since 0.2.0
 * @category errors
 */
export class DiscoveryError extends Schema.TaggedError<DiscoveryError>("presa-mcp/IdentityProvider/DiscoveryError")(
  "DiscoveryError",
  { issuer: Schema.String, message: Schema.String }
) {}

const Discovery = Schema.Struct({ issuer: Schema.String, jwks_uri: Schema.String })

/**
 * Any OpenID Connect issuer: fetches `<issuer>/.well-known/openid-configuration` (OpenID Connect
 * Discovery 1.0 §4; `issuer` without its trailing slash, then the path) once, checks that its
 * `issuer` is the one given (§4.3) and takes its `jwks_uri`. `audience` is required. Scopes: the
 * `scopeClaim` (default `scope`; a space-separated string or an array) or `scopes`.
 * Fails with `DiscoveryError` (HTTP error, not JSON, missing fields, another issuer). Network:
 * one GET, bounded by `timeout` (default 10 seconds).
 *
 * @since 0.2.0
 * @category constructors
 */
export const oidc = (
  options: Common & {
    readonly issuer: string
    readonly audience: string | ReadonlyArray<string>
    readonly scopeClaim?: string | undefined
    readonly timeout?: Auth.JwtOptions["clockTolerance"] | undefined
  }
): Effect.Effect<Provider, DiscoveryError> =>
  Effect.gen(function*() {
    const url = `${options.issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`
    const fail = (message: string) => new DiscoveryError({ issuer: options.issuer, message })
    const body = yield* Effect.tryPromise({
      try: async (signal) => {
        const response = await fetch(url, { signal, headers: { accept: "application/json" } })
        if (!response.ok) throw new Error(`${url} answered HTTP ${response.status}`)
        const json: unknown = await response.json()
        return json
      },
      catch: (e) => fail(e instanceof Error ? e.message : `${url} could not be read`)
    }).pipe(
      Effect.timeoutFail({
        duration: options.timeout ?? "10 seconds",
        onTimeout: () => fail(`${url} did not answer in time`)
      })
    )
    const doc = yield* Schema.decodeUnknown(Discovery)(body).pipe(
      Effect.mapError(() => fail(`${url} is not an OpenID Provider configuration (issuer, jwks_uri)`))
    )
    if (doc.issuer !== options.issuer) {
      return yield* fail(`${url} names the issuer ${JSON.stringify(doc.issuer)}, not ${JSON.stringify(options.issuer)}`)
    }
    const claim = options.scopeClaim ?? "scope"
    return make("oidc", options, {
      issuer: doc.issuer,
      jwksUrl: doc.jwks_uri,
      audience: options.audience,
      scopes: (c) => Jwt.scopeList(Object.hasOwn(c, claim) ? c[claim] : undefined)
    })
  })
