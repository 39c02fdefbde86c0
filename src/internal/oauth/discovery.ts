/**
 * OAuth discovery for the client provider (documented on `OAuth.make`): the Protected Resource
 * Metadata (RFC 9728) in the order of MCP 2025-11-25, Authorization › Protected Resource Metadata
 * Discovery Requirements, and the authorization server metadata (RFC 8414, OpenID Connect
 * Discovery) in the order of MCP 2025-11-25, Authorization › Authorization Server Metadata
 * Discovery, each checked against what asked for it (RFC 9728 §3.3 `resource`, RFC 8414 §3.3
 * `issuer`).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as oauth from "oauth4webapi"
import { OAuthError } from "./error.js"

/** The fields of a Protected Resource Metadata document the client uses (RFC 9728 §2). */
export const ResourceMetadata = Schema.Struct({
  resource: Schema.String,
  authorization_servers: Schema.optional(Schema.Array(Schema.String)),
  scopes_supported: Schema.optional(Schema.Array(Schema.String))
})
export type ResourceMetadata = typeof ResourceMetadata.Type

/** How the client reaches the network: the fetch to use and the `oauth4webapi` request options. */
export interface Http {
  readonly fetch: typeof globalThis.fetch
  /** Whether `http:` is allowed for this URL (loopback, or the application allowed it). */
  readonly insecureAllowed: (url: URL) => boolean
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"])

/** `http:` only to loopback hosts unless the application allows it (OAuth 2.1 §1.5). */
export const makeHttp = (fetchImpl: typeof globalThis.fetch | undefined, allowInsecure: boolean): Http => ({
  fetch: fetchImpl ?? ((input, init) => globalThis.fetch(input, init)),
  insecureAllowed: (url) => url.protocol === "https:" || allowInsecure || LOOPBACK.has(url.hostname)
})

/** The `oauth4webapi` request options for `url`: our fetch, and `http:` where allowed. */
export const requestOptions = (http: Http, url: URL | string | undefined) => {
  const target = url === undefined ? undefined : new URL(url)
  return {
    [oauth.customFetch]: http.fetch,
    ...(target !== undefined && target.protocol === "http:" && http.insecureAllowed(target)
      ? { [oauth.allowInsecureRequests]: true }
      : {})
  }
}

const get = (http: Http, url: URL): Effect.Effect<Response, OAuthError> =>
  Effect.tryPromise({
    try: (signal) => http.fetch(url, { headers: { accept: "application/json" }, signal }),
    catch: (e) =>
      new OAuthError({
        reason: "Discovery",
        message: `GET ${url.href} failed: ${e instanceof Error ? e.message : "network error"}`
      })
  })

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
      ...(fromChallenge !== undefined && URL.canParse(fromChallenge) ? [new URL(fromChallenge)] : []),
      ...resourceMetadataUrls(server)
    ]
    const tried = new Set<string>()
    for (const url of candidates) {
      if (tried.has(url.href)) continue
      tried.add(url.href)
      const response = yield* get(http, url)
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
 * tried). `None` when no location answers. `checkIssuer: false` is for a server without
 * Protected Resource Metadata (MCP 2025-03-26, Authorization §2.3.2), whose metadata is looked up
 * at the MCP server's own origin, not from an issuer identifier, so there is nothing to compare.
 */
export const discoverAuthorizationServer = (
  http: Http,
  issuer: string,
  checkIssuer = true
): Effect.Effect<Option.Option<oauth.AuthorizationServer>, OAuthError> =>
  Effect.gen(function*() {
    if (!URL.canParse(issuer)) {
      return yield* new OAuthError({ reason: "Discovery", message: `invalid authorization server ${issuer}` })
    }
    const expected = new URL(issuer)
    for (const url of authorizationServerUrls(expected)) {
      const response = yield* get(http, url)
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
      return Option.some(
        yield* Effect.tryPromise({
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
      )
    }
    return Option.none()
  })
