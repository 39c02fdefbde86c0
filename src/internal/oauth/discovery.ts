/**
 * OAuth discovery for the client provider (documented on `OAuth.make`): the Protected Resource
 * Metadata (RFC 9728) in the order of MCP 2025-11-25, Authorization › Protected Resource Metadata
 * Discovery Requirements, and the authorization server metadata (RFC 8414, OpenID Connect
 * Discovery) in the order of MCP 2025-11-25, Authorization › Authorization Server Metadata
 * Discovery, each checked against what asked for it (RFC 9728 §3.3 `resource`, RFC 8414 §3.3
 * `issuer`); every URL a server names passes the URL policy of `network` before it is fetched.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as oauth from "oauth4webapi"
import { OAuthError } from "./error.js"
import { checkUrl, get, type Http } from "./network.js"

/** The fields of a Protected Resource Metadata document the client uses (RFC 9728 §2). */
export const ResourceMetadata = Schema.Struct({
  resource: Schema.String,
  authorization_servers: Schema.optional(Schema.Array(Schema.String)),
  scopes_supported: Schema.optional(Schema.Array(Schema.String))
})
export type ResourceMetadata = typeof ResourceMetadata.Type

/**
 * The well-known PRM locations for the MCP endpoint `server`, in order: path-based, then root
 * (MCP 2025-11-25, Authorization › Protected Resource Metadata Discovery Requirements).
 */
export const resourceMetadataUrls = (server: URL): ReadonlyArray<URL> => {
  const path = server.pathname.replace(/\/$/, "")
  const root = new URL("/.well-known/oauth-protected-resource", server.origin)
  return path === "" ? [root] : [new URL(`/.well-known/oauth-protected-resource${path}`, server.origin), root]
}

/**
 * Whether the PRM `resource` covers the MCP endpoint: same origin, and the endpoint's path is the
 * resource's path or below it (RFC 9728 §3.3 and §7.3; a root document names the origin).
 */
export const resourceCovers = (resource: string, server: URL): boolean => {
  const r = URL.canParse(resource) ? new URL(resource) : undefined
  if (r === undefined || r.origin !== server.origin) return false
  const base = r.pathname.replace(/\/$/, "")
  const path = server.pathname.replace(/\/$/, "")
  return path === base || path.startsWith(`${base}/`)
}

/**
 * The Protected Resource Metadata: from the challenge's `resource_metadata` URL, else the
 * well-known locations. `None` when no location has one (a pre-2025-06-18 server). A document
 * whose `resource` does not cover the endpoint fails with `"ResourceMismatch"`.
 */
export const discoverResource = (
  http: Http,
  server: URL,
  fromChallenge: string | undefined
): Effect.Effect<Option.Option<ResourceMetadata>, OAuthError> =>
  Effect.gen(function*() {
    const candidates = [
      ...(fromChallenge !== undefined && URL.canParse(fromChallenge)
        ? [yield* checkUrl(http, server, fromChallenge, "the challenge's resource_metadata")]
        : []),
      ...resourceMetadataUrls(server)
    ]
    const tried = new Set<string>()
    for (const url of candidates) {
      if (tried.has(url.href)) continue
      tried.add(url.href)
      const response = yield* get(http, server, url)
      if (response.status !== 200) {
        yield* Effect.promise(() => response.body?.cancel() ?? Promise.resolve())
        continue
      }
      const body = yield* Effect.tryPromise({
        try: () => response.json(),
        catch: () => new OAuthError({ reason: "Discovery", message: `${url.href} is not JSON` })
      })
      const prm = yield* Schema.decodeUnknown(ResourceMetadata)(body).pipe(
        Effect.mapError(() =>
          new OAuthError({ reason: "Discovery", message: `${url.href} is not a Protected Resource Metadata document` })
        )
      )
      if (!resourceCovers(prm.resource, server)) {
        return yield* new OAuthError({
          reason: "ResourceMismatch",
          message: `the protected resource metadata names ${prm.resource}, which does not cover ${server.href}`
        })
      }
      return Option.some(prm)
    }
    return Option.none()
  })

/**
 * The authorization server metadata locations for `issuer`, in order (MCP 2025-11-25,
 * Authorization › Authorization Server Metadata Discovery): with a path, RFC 8414 path insertion,
 * OpenID Connect path insertion, OpenID Connect path appending; without, the two root documents.
 */
export const authorizationServerUrls = (issuer: URL): ReadonlyArray<URL> => {
  const path = issuer.pathname.replace(/\/$/, "")
  return path === ""
    ? [
      new URL("/.well-known/oauth-authorization-server", issuer.origin),
      new URL("/.well-known/openid-configuration", issuer.origin)
    ]
    : [
      new URL(`/.well-known/oauth-authorization-server${path}`, issuer.origin),
      new URL(`/.well-known/openid-configuration${path}`, issuer.origin),
      new URL(`${path}/.well-known/openid-configuration`, issuer.origin)
    ]
}

/**
 * The authorization server's metadata: the first location that answers 200, its `issuer` checked
 * against `issuer` (RFC 8414 §3.3: a mismatch fails with `"IssuerMismatch"`, nothing else is
 * tried) and its endpoints by the URL policy (`"UnsafeUrl"`). `None` when no location answers. `checkIssuer: false` is for a server without
 * Protected Resource Metadata (MCP 2025-03-26, Authorization §2.3.2), whose metadata is looked up
 * at the MCP server's own origin, not from an issuer identifier, so there is nothing to compare.
 */
export const discoverAuthorizationServer = (
  http: Http,
  server: URL,
  issuer: string,
  checkIssuer = true
): Effect.Effect<Option.Option<oauth.AuthorizationServer>, OAuthError> =>
  Effect.gen(function*() {
    if (!URL.canParse(issuer)) {
      return yield* new OAuthError({ reason: "Discovery", message: `invalid authorization server ${issuer}` })
    }
    const expected = yield* checkUrl(http, server, issuer, "the authorization server")
    for (const url of authorizationServerUrls(expected)) {
      const response = yield* get(http, server, url)
      if (response.status !== 200) {
        yield* Effect.promise(() => response.body?.cancel() ?? Promise.resolve())
        continue
      }
      const published = checkIssuer ? undefined : yield* Effect.promise(() =>
        response.clone().json().then(
          (b: unknown) =>
            typeof b === "object" && b !== null && "issuer" in b && typeof b.issuer === "string" &&
              URL.canParse(b.issuer)
              ? new URL(b.issuer)
              : undefined,
          () => undefined
        )
      )
      const as = yield* Effect.tryPromise({
        try: () => oauth.processDiscoveryResponse(published ?? expected, response),
        catch: (e) =>
          e instanceof oauth.OperationProcessingError && e.code === oauth.JSON_ATTRIBUTE_COMPARISON
            ? new OAuthError({
              reason: "IssuerMismatch",
              message: `the metadata at ${url.href} names another issuer than ${issuer}`
            })
            : new OAuthError({
              reason: "Discovery",
              message: `${url.href}: ${e instanceof Error ? e.message : "invalid metadata"}`
            })
      })
      return Option.some(yield* checkEndpoints(http, server, as))
    }
    return Option.none()
  })

const ENDPOINTS = ["authorization_endpoint", "token_endpoint", "registration_endpoint"] as const

/**
 * The endpoints the client contacts or shows the user (`authorization_endpoint` goes to the
 * browser), each through the URL policy: `as`, or `OAuthError` `"UnsafeUrl"`.
 */
export const checkEndpoints = (
  http: Http,
  server: URL,
  as: oauth.AuthorizationServer
): Effect.Effect<oauth.AuthorizationServer, OAuthError> =>
  Effect.as(
    Effect.forEach(ENDPOINTS, (name) => {
      const value = as[name]
      return value === undefined ? Effect.void : checkUrl(http, server, value, `the ${name} of ${as.issuer}`)
    }, { discard: true }),
    as
  )
