/**
 * Identity-provider presets (issue #37, point 4), each against a local fake issuer: an HTTP server
 * on 127.0.0.1 (port 0) that serves its JWKS at the provider's path (and, for the generic OIDC
 * preset, its `/.well-known/openid-configuration`) and signs tokens with `jose` in the provider's
 * shape (`iss` form, `aud`, `scope` vs `scp` vs `permissions` vs Keycloak roles, `azp`, Entra's
 * `tid` / `ver`). For every preset:
 *
 * - a token as the provider mints it is accepted: subject and the scopes the preset maps;
 * - through a Streamable HTTP server configured with `IdentityProvider.resourceServer`, the scoped
 *   tool is listed for that caller, and a token with the wrong audience, the wrong issuer, expired
 *   (or failing the provider's own claim check) answers 401 `error="invalid_token"` naming the
 *   metadata URL; the metadata names the provider's issuer.
 *
 * No network beyond loopback.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as jose from "jose"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { IdentityProvider, McpClient, McpServer, Tool } from "presa-mcp"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"

const RESOURCE = "https://mcp.example.com/mcp"
const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"

/** The fake issuer: serves `documents` by path; signs with one RS256 key (`kid` "k1"). */
const fakeIssuer = (documents: (base: string, jwks: jose.JSONWebKeySet) => Record<string, unknown>) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const { privateKey, publicKey } = await jose.generateKeyPair("RS256")
      const jwk = { ...(await jose.exportJWK(publicKey)), kid: "k1", alg: "RS256", use: "sig" }
      let docs: Record<string, unknown> = {}
      const server = Http.createServer((req, res) => {
        const body = docs[req.url ?? ""]
        res.writeHead(body === undefined ? 404 : 200, { "content-type": "application/json" })
        res.end(JSON.stringify(body ?? { error: "not found" }))
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      docs = documents(base, { keys: [jwk] })
      const sign = (claims: jose.JWTPayload, exp: string | number = "5m") =>
        new jose.SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "k1", typ: "JWT" }).setIssuedAt()
          .setExpirationTime(exp).sign(privateKey)
      return { base, server, sign }
    }),
    ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )

interface Case {
  readonly name: string
  /** Where the fake serves its JWKS (and other documents). */
  readonly documents: (base: string, jwks: jose.JSONWebKeySet) => Record<string, unknown>
  readonly provider: (base: string) => Effect.Effect<IdentityProvider.Provider, unknown>
  /** A token's claims as this provider mints them. */
  readonly claims: (base: string) => jose.JWTPayload
  readonly scopes: ReadonlyArray<string>
  /** The claims that make the audience wrong (default: `aud` elsewhere). */
  readonly wrongAudience?: (base: string) => jose.JWTPayload
  /** More claim sets the preset must refuse (its own checks). */
  readonly alsoRefused?: (base: string) => ReadonlyArray<jose.JWTPayload>
  /** The issuer the metadata publishes. */
  readonly issuer: (base: string) => string
}

const cases: ReadonlyArray<Case> = [
  {
    name: "Auth0 (scope string + RBAC permissions array; iss with a trailing slash)",
    documents: (_, jwks) => ({ "/.well-known/jwks.json": jwks }),
    provider: (base) => Effect.succeed(IdentityProvider.auth0({ domain: base, audience: RESOURCE })),
    claims: (base) => ({
      iss: `${base}/`,
      sub: "auth0|alice",
      aud: [RESOURCE, `${base}/userinfo`],
      azp: "client-1",
      scope: "openid mcp:read",
      permissions: ["mcp:admin"]
    }),
    scopes: ["openid", "mcp:read", "mcp:admin"],
    alsoRefused: (base) => [{ iss: base, sub: "auth0|alice", aud: RESOURCE }],
    issuer: (base) => `${base}/`
  },
  {
    name: "Clerk (no aud; azp checked against the authorized parties)",
    documents: (_, jwks) => ({ "/.well-known/jwks.json": jwks }),
    provider: (base) =>
      Effect.succeed(IdentityProvider.clerk({ issuer: base, authorizedParties: ["https://app.example.com"] })),
    claims: (base) => ({
      iss: base,
      sub: "user_2abc",
      azp: "https://app.example.com",
      sid: "sess_1",
      v: 2,
      scope: "mcp:read mcp:admin"
    }),
    scopes: ["mcp:read", "mcp:admin"],
    wrongAudience: (base) => ({ iss: base, sub: "user_2abc", azp: "https://evil.example.com" }),
    alsoRefused: (base) => [{ iss: base, sub: "user_2abc" }],
    issuer: (base) => base
  },
  {
    name: "WorkOS AuthKit (keys at /oauth2/jwks; permissions array)",
    documents: (_, jwks) => ({ "/oauth2/jwks": jwks }),
    provider: (base) => Effect.succeed(IdentityProvider.workos({ domain: base, audience: RESOURCE })),
    claims: (base) => ({
      iss: base,
      sub: "user_01HBEQ",
      aud: RESOURCE,
      org_id: "org_01",
      role: "admin",
      permissions: ["mcp:read", "mcp:admin"],
      sid: "session_01"
    }),
    scopes: ["mcp:read", "mcp:admin"],
    issuer: (base) => base
  },
  {
    name: "Keycloak (realm issuer, certs endpoint; scope + realm_access.roles + resource_access.<client>.roles)",
    documents: (_, jwks) => ({ "/realms/acme/protocol/openid-connect/certs": jwks }),
    provider: (base) =>
      Effect.succeed(
        IdentityProvider.keycloak({
          url: base,
          realm: "acme",
          audience: "mcp-server",
          realmRoles: true,
          clientRoles: "mcp-server"
        })
      ),
    claims: (base) => ({
      iss: `${base}/realms/acme`,
      sub: "f1c3-uuid",
      aud: ["mcp-server", "account"],
      azp: "mcp-client",
      typ: "Bearer",
      scope: "openid profile",
      realm_access: { roles: ["offline_access", "mcp:read"] },
      resource_access: { "mcp-server": { roles: ["mcp:admin"] }, account: { roles: ["manage-account"] } }
    }),
    scopes: ["openid", "profile", "offline_access", "mcp:read", "mcp:admin"],
    issuer: (base) => `${base}/realms/acme`
  },
  {
    name: "Microsoft Entra ID v2.0 (scp string + roles array; tid, ver, per-tenant issuer)",
    documents: (_, jwks) => ({ [`/${TENANT}/discovery/v2.0/keys`]: jwks }),
    provider: (base) =>
      Effect.succeed(IdentityProvider.entra({ tenant: TENANT, audience: "api-client-id", authority: base })),
    claims: (base) => ({
      iss: `${base}/${TENANT}/v2.0`,
      sub: "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ",
      aud: "api-client-id",
      tid: TENANT,
      ver: "2.0",
      azp: "client-app-id",
      oid: "00000000-0000-0000-66f3-3332eca7ea81",
      scp: "mcp:read mcp:admin",
      roles: ["Tasks.Admin"]
    }),
    scopes: ["mcp:read", "mcp:admin", "Tasks.Admin"],
    alsoRefused: (base) => [
      // a v1.0 token, and a token of another tenant presenting this tenant's issuer
      {
        iss: `${base}/${TENANT}/v2.0`,
        sub: "x",
        aud: "api-client-id",
        tid: TENANT,
        ver: "1.0",
        scp: "mcp:read"
      },
      {
        iss: `${base}/${TENANT}/v2.0`,
        sub: "x",
        aud: "api-client-id",
        tid: "11111111-2222-3333-4444-555555555555",
        ver: "2.0"
      }
    ],
    issuer: (base) => `${base}/${TENANT}/v2.0`
  },
  {
    name: "Google ID token (aud = client ID, azp, hd; no scopes unless mapped)",
    documents: (_, jwks) => ({ "/oauth2/v3/certs": jwks }),
    provider: (base) =>
      Effect.succeed(
        IdentityProvider.google({
          clientId: "123.apps.googleusercontent.com",
          hostedDomain: "example.com",
          issuer: base,
          jwksUrl: `${base}/oauth2/v3/certs`,
          scopes: (claims) => claims.email_verified === true ? ["mcp:read", "mcp:admin"] : []
        })
      ),
    claims: (base) => ({
      iss: base,
      sub: "110169484474386276334",
      aud: "123.apps.googleusercontent.com",
      azp: "123.apps.googleusercontent.com",
      hd: "example.com",
      email: "alice@example.com",
      email_verified: true
    }),
    scopes: ["mcp:read", "mcp:admin"],
    alsoRefused: (base) => [
      {
        iss: base,
        sub: "1",
        aud: "123.apps.googleusercontent.com",
        azp: "999.apps.googleusercontent.com",
        hd: "example.com"
      },
      { iss: base, sub: "1", aud: "123.apps.googleusercontent.com", hd: "elsewhere.com" }
    ],
    issuer: (base) => base
  },
  {
    name: "generic OIDC (jwks_uri discovered from /.well-known/openid-configuration)",
    documents: (base, jwks) => ({
      "/.well-known/openid-configuration": { issuer: base, jwks_uri: `${base}/keys`, token_endpoint: `${base}/token` },
      "/keys": jwks
    }),
    provider: (base) => IdentityProvider.oidc({ issuer: base, audience: RESOURCE }),
    claims: (base) => ({ iss: base, sub: "alice", aud: RESOURCE, scope: "mcp:read mcp:admin" }),
    scopes: ["mcp:read", "mcp:admin"],
    issuer: (base) => base
  }
]

const post = (url: string, token: string) =>
  Effect.promise(() =>
    fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/list",
        authorization: `Bearer ${token}`
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: {
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
          }
        }
      })
    })
  )

const CHALLENGE_METADATA = `resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`

describe("IdentityProvider presets against a local fake issuer", () => {
  for (const c of cases) {
    it.scopedLive(c.name, () =>
      Effect.gen(function*() {
        const issuer = yield* fakeIssuer(c.documents)
        const provider = yield* c.provider(issuer.base)
        const sign = (claims: jose.JWTPayload, exp?: string | number) => Effect.promise(() => issuer.sign(claims, exp))

        // the verifier: subject and scopes
        const good = yield* sign(c.claims(issuer.base))
        const who = yield* provider.verifier(good)
        assert.strictEqual(who.subject, c.claims(issuer.base).sub)
        expect(who.scopes).toEqual(c.scopes)

        // through the HTTP resource server
        const server = yield* McpServer.make({
          name: "protected",
          version: "1",
          tools: [
            Tool.fromJsonSchema({ name: "hello", handler: (_a, ctx) => `hello ${ctx.auth?.subject ?? "nobody"}` }),
            Tool.fromJsonSchema({ name: "admin", visible: McpServer.requireScopes(["mcp:admin"]), handler: () => "ok" })
          ]
        })
        const auth = IdentityProvider.resourceServer(provider, { resource: RESOURCE, scopesSupported: ["mcp:admin"] })
        const { url } = yield* StreamableHttp.serve(server, { port: 0, auth })
        const client = yield* McpClient.connect(
          yield* StreamableHttp.client({ url, headers: { authorization: `Bearer ${good}` } })
        )
        expect((yield* client.listAllTools).map((t) => t.name).sort()).toEqual(["admin", "hello"])
        const meta = yield* Effect.promise(() =>
          fetch(new URL("/.well-known/oauth-protected-resource/mcp", url)).then((r) => r.json())
        )
        expect(meta).toMatchObject({ resource: RESOURCE, authorization_servers: [c.issuer(issuer.base)] })

        const claims = c.claims(issuer.base)
        const refused = [
          yield* sign(c.wrongAudience?.(issuer.base) ?? { ...claims, aud: "https://elsewhere.example.com/mcp" }),
          yield* sign({ ...claims, iss: "https://evil.example.com" }),
          yield* sign(claims, Math.floor(Date.now() / 1000) - 3600),
          ...(yield* Effect.forEach(c.alsoRefused?.(issuer.base) ?? [], (extra) => sign(extra)))
        ]
        for (const token of refused) {
          const e = yield* Effect.flip(provider.verifier(token))
          assert.strictEqual(e.reason, "invalid")
          const res = yield* post(url, token)
          assert.strictEqual(res.status, 401)
          const challenge = res.headers.get("www-authenticate") ?? ""
          assert.include(challenge, `Bearer error="invalid_token"`)
          assert.include(challenge, CHALLENGE_METADATA)
        }
      }))
  }

  it.scopedLive("generic OIDC: a discovery document naming another issuer, or none, is a DiscoveryError", () =>
    Effect.gen(function*() {
      const issuer = yield* fakeIssuer((base, jwks) => ({
        "/.well-known/openid-configuration": { issuer: `${base}/other`, jwks_uri: `${base}/keys` },
        "/keys": jwks
      }))
      const e = yield* Effect.flip(IdentityProvider.oidc({ issuer: issuer.base, audience: RESOURCE }))
      assert.strictEqual(e._tag, "DiscoveryError")
      assert.include(e.message, "names the issuer")
      const missing = yield* Effect.flip(
        IdentityProvider.oidc({ issuer: `${issuer.base}/nowhere`, audience: RESOURCE })
      )
      assert.include(missing.message, "HTTP 404")
    }))
})
