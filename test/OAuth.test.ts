/**
 * The OAuth client provider (issue #21; MCP 2025-11-25 and 2026-07-28, Authorization) against an
 * authorization server of the test's own that issues ES256 JWTs with `jose`, in front of a
 * protected MCP server (our `WebHandler` with `Auth.jwtVerifier`), both on one `node:http`
 * listener on 127.0.0.1 port 0. The authorization server approves at once and redirects, so the
 * headless interaction completes the code flow. Every OAuth request the client makes is recorded
 * and asserted on.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as jose from "jose"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { InProcess, McpClient, OAuth } from "presa-mcp"
import * as McpProxy from "presa-mcp/McpProxy"
import { TransportError } from "presa-mcp/Transport"
import * as OAuthLoopback from "presa-mcp/transport/OAuthLoopback"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import {
  AS_NONCE,
  type AsOptions,
  CIMD_URL,
  CLIENT_SECRET,
  JWT_BEARER,
  RS_NONCE,
  s256,
  setup,
  TOKEN_EXCHANGE
} from "./support/AuthorizationServer.js"

const connect = (url: string, options: OAuth.Options) =>
  Effect.gen(function*() {
    const auth = yield* OAuth.make(options)
    const transport = yield* StreamableHttp.client({ url, auth })
    return yield* McpClient.connect(transport, { name: "oauth-test", version: "0", versions: ["2026-07-28"] })
  })

const headless = { interaction: OAuth.headless() }

/** The `OAuthError` inside a failed call's `TransportError` "Unauthorized". */
const oauthFailure = (e: unknown): OAuth.OAuthError => {
  assert.instanceOf(e, TransportError)
  assert.strictEqual(e.reason, "Unauthorized")
  assert.instanceOf(e.cause, OAuth.OAuthError)
  return e.cause
}

const whoami = (client: McpClient.McpClient) =>
  Effect.map(client.callTool("whoami", {}), (r) => JSON.stringify(r.content))

describe("OAuth client provider", () => {
  it.live("DCR + PKCE S256 + resource indicator, AS metadata by RFC 8414 path insertion", () =>
    Effect.gen(function*() {
      const { rec, url, origin } = yield* setup()
      const client = yield* connect(url, headless)
      expect(yield* whoami(client)).toContain("hello alice")
      assert.strictEqual(rec.registrations.length, 1)
      assert.strictEqual(rec.registrations[0]?.token_endpoint_auth_method, "none")
      assert.deepStrictEqual(rec.registrations[0]?.grant_types, ["authorization_code", "refresh_token"])
      assert.strictEqual(rec.authorizations.length, 1)
      const authz = rec.authorizations[0]
      assert.strictEqual(authz?.get("code_challenge_method"), "S256")
      assert.strictEqual(authz?.get("client_id"), "dcr-client-1")
      assert.strictEqual(authz?.get("resource"), url)
      assert.isNull(authz?.get("scope") ?? null, "no scope anywhere: the parameter is omitted")
      const token = rec.tokens[0]
      assert.strictEqual(token?.body.get("grant_type"), "authorization_code")
      assert.strictEqual(s256(token?.body.get("code_verifier") ?? ""), authz?.get("code_challenge"))
      assert.strictEqual(token?.body.get("resource"), url)
      assert.deepStrictEqual(rec.metadataPaths, ["/.well-known/oauth-authorization-server/as"])
      assert.isTrue(origin.startsWith("http://127.0.0.1:"))
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("PRM only at the root, AS metadata only by OpenID Connect path appending: found in the spec's order", () =>
    Effect.gen(function*() {
      const { rec, url } = yield* setup({ prmAt: "root", metadataAt: "oidc-append" })
      const client = yield* connect(url, headless)
      expect(yield* whoami(client)).toContain("hello alice")
      assert.deepStrictEqual(rec.metadataPaths, [
        "404 /.well-known/oauth-authorization-server/as",
        "404 /.well-known/openid-configuration/as",
        "/as/.well-known/openid-configuration"
      ])
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("no PRM (MCP 2025-03-26 server): AS metadata at the server's origin, resource = the endpoint", () =>
    Effect.gen(function*() {
      const { rec, url } = yield* setup({ prmAt: "none", metadataAt: "root" })
      const client = yield* connect(url, headless)
      expect(yield* whoami(client)).toContain("hello alice")
      assert.deepStrictEqual(rec.metadataPaths, [
        "404 /.well-known/oauth-protected-resource/mcp", // the challenge's, also the path-based one: once
        "404 /.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server"
      ])
      assert.strictEqual(rec.authorizations[0]?.get("resource"), url)
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("CIMD: the metadata document URL is the client_id; no registration", () =>
    Effect.gen(function*() {
      const { rec, url } = yield* setup({ cimd: true })
      const client = yield* connect(url, { ...headless, clientMetadataUrl: CIMD_URL })
      expect(yield* whoami(client)).toContain("hello alice")
      assert.strictEqual(rec.registrations.length, 0)
      assert.strictEqual(rec.authorizations[0]?.get("client_id"), CIMD_URL)
      assert.strictEqual(rec.tokens[0]?.body.get("client_id"), CIMD_URL)
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("pre-registered confidential client: client_secret_basic, no registration, secret not in errors", () =>
    Effect.gen(function*() {
      const { rec, url } = yield* setup({ authMethods: ["client_secret_basic"] })
      const client = yield* connect(url, { ...headless, client: { clientId: "pre", clientSecret: CLIENT_SECRET } })
      expect(yield* whoami(client)).toContain("hello alice")
      assert.strictEqual(rec.registrations.length, 0)
      const basic = rec.tokens[0]?.authorization ?? ""
      // RFC 6749 §2.3.1: id and secret are form-encoded before Base64.
      const [id, secret] = Buffer.from(basic.replace(/^Basic /, ""), "base64").toString().split(":")
      assert.deepStrictEqual([id, decodeURIComponent(secret ?? "")], ["pre", CLIENT_SECRET])
      assert.isNull(rec.tokens[0]?.body.get("client_secret") ?? null)
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("client_secret_post when it is the only method the server lists", () =>
    Effect.gen(function*() {
      const { rec, url } = yield* setup({ authMethods: ["client_secret_post"] })
      const client = yield* connect(url, headless)
      expect(yield* whoami(client)).toContain("hello alice")
      assert.strictEqual(rec.registrations[0]?.token_endpoint_auth_method, "client_secret_post")
      assert.strictEqual(rec.tokens[0]?.body.get("client_secret"), CLIENT_SECRET)
      assert.isUndefined(rec.tokens[0]?.authorization)
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("an expiring token is refreshed before the next request (refresh_token grant with resource)", () =>
    Effect.gen(function*() {
      const { rec, url } = yield* setup({ expiresIn: 1 })
      const client = yield* connect(url, headless)
      expect(yield* whoami(client)).toContain("hello alice")
      const grants = rec.tokens.map((t) => t.body.get("grant_type"))
      assert.strictEqual(grants[0], "authorization_code")
      assert.isTrue(grants.slice(1).includes("refresh_token"), `grants: ${grants.join(", ")}`)
      const refresh = rec.tokens.find((t) => t.body.get("grant_type") === "refresh_token")
      assert.strictEqual(refresh?.body.get("refresh_token"), "refresh-1")
      assert.strictEqual(refresh?.body.get("resource"), url)
      assert.strictEqual(rec.authorizations.length, 1, "refreshing needs no new authorization")
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("scopes: from PRM scopes_supported, plus offline_access the AS lists", () =>
    Effect.gen(function*() {
      const { rec, url } = yield* setup({ prmScopes: ["mcp:read"], asScopes: ["mcp:read", "offline_access"] })
      const client = yield* connect(url, headless)
      expect(yield* whoami(client)).toContain("hello alice")
      assert.strictEqual(rec.authorizations[0]?.get("scope"), "mcp:read offline_access")
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("step-up: 403 insufficient_scope re-authorizes with the union of the scopes, then succeeds", () =>
    Effect.gen(function*() {
      const { rec, url } = yield* setup({ prmScopes: ["mcp:read"], callScope: "mcp:write" })
      const client = yield* connect(url, headless)
      expect(yield* whoami(client)).toContain("hello alice")
      assert.deepStrictEqual(rec.authorizations.map((a) => a.get("scope")), ["mcp:read", "mcp:read mcp:write"])
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("a server that keeps refusing: at most maxAttempts authorizations, then Unauthorized", () =>
    Effect.gen(function*() {
      const { rec, url } = yield* setup({ alwaysForbid: true })
      const auth = yield* OAuth.make(headless)
      const transport = yield* StreamableHttp.client({ url, auth })
      const e = yield* Effect.flip(
        McpClient.connect(transport, { name: "oauth-test", version: "0", versions: ["2026-07-28"] })
      )
      assert.instanceOf(e, TransportError)
      assert.strictEqual(e.reason, "Unauthorized")
      assert.strictEqual(e.status, 403)
      assert.strictEqual(rec.authorizations.length, 3)
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("client credentials (machine client): no interaction, grant with resource and secret", () =>
    Effect.gen(function*() {
      const { rec, url } = yield* setup({ authMethods: ["client_secret_basic"] })
      const client = yield* connect(url, {
        grant: "client_credentials",
        client: { clientId: "machine", clientSecret: CLIENT_SECRET }
      })
      expect(yield* whoami(client)).toContain("hello alice")
      assert.strictEqual(rec.authorizations.length, 0)
      assert.strictEqual(rec.tokens[0]?.body.get("grant_type"), "client_credentials")
      assert.strictEqual(rec.tokens[0]?.body.get("resource"), url)
      assert.isTrue(rec.tokens[0]?.authorization?.startsWith("Basic "))
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("jwt_bearer with a workload identity JWT (SEP-1933): RFC 7523 grant, public client, no interaction", () =>
    Effect.gen(function*() {
      const { rec, url, workloadJwt } = yield* setup({ authMethods: ["none"], registration: false })
      const jwt = yield* Effect.promise(() => workloadJwt())
      const targets: Array<OAuth.AssertionTarget> = []
      const client = yield* connect(url, {
        grant: "jwt_bearer",
        client: { clientId: "workload-client", tokenEndpointAuthMethod: "none" },
        assertion: (target) => Effect.sync(() => (targets.push(target), jwt))
      })
      expect(yield* whoami(client)).toContain("hello alice")
      assert.strictEqual(rec.authorizations.length + rec.registrations.length, 0)
      assert.strictEqual(rec.tokens.length, 1)
      const form = rec.tokens[0]?.body
      assert.strictEqual(form?.get("grant_type"), JWT_BEARER)
      assert.strictEqual(form?.get("assertion"), jwt)
      assert.strictEqual(form?.get("client_id"), "workload-client")
      assert.strictEqual(form?.get("resource"), url)
      assert.deepStrictEqual(targets, [{
        issuer: `${new URL(url).origin}/as`,
        tokenEndpoint: `${new URL(url).origin}/as/token`,
        resource: url
      }])
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("jwt_bearer refused (invalid_grant): one token request, no retry, no other grant, typed Token error", () =>
    Effect.gen(function*() {
      const { rec, url, workloadJwt } = yield* setup({ authMethods: ["none"], registration: false })
      const jwt = yield* Effect.promise(() => workloadJwt("https://wrong.example"))
      const e = yield* Effect.flip(connect(url, {
        ...headless,
        grant: "jwt_bearer",
        client: { clientId: "workload-client", tokenEndpointAuthMethod: "none" },
        assertion: () => Effect.succeed(jwt)
      }))
      const cause = oauthFailure(e)
      assert.strictEqual(cause.reason, "Token")
      assert.strictEqual(cause.error, "invalid_grant")
      expect(cause.message).not.toContain(jwt)
      assert.deepStrictEqual(rec.tokens.map((t) => t.body.get("grant_type")), [JWT_BEARER])
      assert.strictEqual(rec.authorizations.length, 0)
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("enterprise-managed (SEP-990): RFC 8693 exchange at the IdP for an ID-JAG, then jwt_bearer with client_secret_basic", () =>
    Effect.gen(function*() {
      const { idToken, origin, rec, url } = yield* setup({ authMethods: ["client_secret_basic"] })
      const client = yield* connect(url, {
        grant: "jwt_bearer",
        client: { clientId: "xaa-client", clientSecret: CLIENT_SECRET },
        assertion: OAuth.idJagAssertion({
          tokenEndpoint: `${origin}/idp/token`,
          clientId: "idp-client",
          idToken: Effect.promise(() => idToken())
        })
      })
      expect(yield* whoami(client)).toContain("hello alice")
      assert.strictEqual(rec.exchanges.length, 1)
      const exchange = rec.exchanges[0]
      assert.strictEqual(exchange?.get("grant_type"), TOKEN_EXCHANGE)
      assert.strictEqual(exchange?.get("requested_token_type"), "urn:ietf:params:oauth:token-type:id-jag")
      assert.strictEqual(exchange?.get("subject_token_type"), "urn:ietf:params:oauth:token-type:id_token")
      assert.strictEqual(exchange?.get("audience"), `${origin}/as`)
      assert.strictEqual(exchange?.get("resource"), url)
      assert.strictEqual(exchange?.get("client_id"), "idp-client")
      const token = rec.tokens[0]
      assert.strictEqual(token?.body.get("grant_type"), JWT_BEARER)
      assert.strictEqual(jose.decodeProtectedHeader(token?.body.get("assertion") ?? "").typ, "oauth-id-jag+jwt")
      assert.isTrue(token?.authorization?.startsWith("Basic "))
      assert.strictEqual(rec.authorizations.length + rec.registrations.length, 0)
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("DPoP (RFC 9449): proof at the token endpoint, DPoP-bound token, a fresh proof (htm, htu, ath) per MCP request", () =>
    Effect.gen(function*() {
      const { origin, rec, url } = yield* setup({ dpop: "plain" })
      const client = yield* connect(url, headless)
      expect(yield* whoami(client)).toContain("hello alice")
      const token = rec.proofs.filter((p) => p.where === "token")
      const mcp = rec.proofs.filter((p) => p.where === "mcp")
      assert.strictEqual(token.length, 1)
      assert.strictEqual(token[0]?.htu, `${origin}/as/token`)
      assert.isAtLeast(mcp.length, 2)
      for (const p of mcp) {
        assert.strictEqual(p.htm, "POST")
        assert.strictEqual(p.htu, url)
        assert.strictEqual(p.jkt, token[0]?.jkt, "every proof is made with the key the token is bound to")
        assert.isUndefined(p.nonce)
      }
      assert.strictEqual(new Set(mcp.map((p) => p.jti)).size, mcp.length, "no proof is sent twice")
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("DPoP nonces: use_dpop_nonce from the token endpoint (§8) and the MCP server (§9) are retried with the nonce", () =>
    Effect.gen(function*() {
      const { rec, url } = yield* setup({ dpop: "nonce" })
      const client = yield* connect(url, headless)
      expect(yield* whoami(client)).toContain("hello alice")
      const token = rec.proofs.filter((p) => p.where === "token")
      const mcp = rec.proofs.filter((p) => p.where === "mcp")
      assert.deepStrictEqual(token.map((p) => p.nonce), [undefined, AS_NONCE])
      assert.strictEqual(mcp[0]?.nonce, undefined)
      assert.isAtLeast(mcp.length, 3)
      for (const p of mcp.slice(1)) assert.strictEqual(p.nonce, RS_NONCE)
      assert.strictEqual(rec.authorizations.length, 1, "a nonce challenge needs no new authorization")
      assert.strictEqual(new Set(mcp.map((p) => p.jti)).size, mcp.length)
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("a 401 on the legacy standalone GET stream starts authorization (refresh) and the GET is sent again", () =>
    Effect.gen(function*() {
      const { rec, url } = yield* setup({ refuseFirstGet: true })
      const auth = yield* OAuth.make(headless)
      const transport = yield* StreamableHttp.client({ url, auth })
      yield* McpClient.connect(transport, { name: "oauth-test", version: "0", versions: ["2025-11-25"] })
      const open = transport.sessionNotifications
      assert.isDefined(open)
      if (open !== undefined) yield* open
      assert.deepStrictEqual(rec.gets, [401, 200])
      assert.deepStrictEqual(rec.tokens.map((t) => t.body.get("grant_type")), ["authorization_code", "refresh_token"])
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("proxy: an HTTP backend with an oauth block (client_credentials) by the default provider", () =>
    Effect.gen(function*() {
      const { rec, url } = yield* setup({ authMethods: ["client_secret_basic"] })
      const config = yield* McpProxy.decodeConfig({
        mcpServers: {
          prot: { url, oauth: { grant: "client_credentials", clientId: "machine", clientSecret: CLIENT_SECRET } }
        }
      })
      const proxy = yield* McpProxy.fromConfig(config)
      const front = yield* McpClient.connect(yield* InProcess.client(proxy))
      const result = yield* front.callTool("prot_whoami", {})
      expect(JSON.stringify(result.content)).toContain("hello alice")
      assert.deepStrictEqual(rec.tokens.map((t) => t.body.get("grant_type")), ["client_credentials"])
      assert.isTrue(rec.tokens[0]?.authorization?.startsWith("Basic "))
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("proxy: the oauth option builds the provider (authorization code, pre-registered client from the block)", () =>
    Effect.gen(function*() {
      const { rec, url } = yield* setup()
      const config = yield* McpProxy.decodeConfig({ mcpServers: { prot: { url, oauth: { clientId: "pre" } } } })
      const asked: Array<string> = []
      const proxy = yield* McpProxy.fromConfig(config, {
        oauth: (name, backend, settings) =>
          Effect.gen(function*() {
            asked.push(`${name} ${backend}`)
            const store = yield* OAuth.memoryStore
            return yield* OAuth.make({
              ...headless,
              ...(settings.clientId === undefined ? {} : { client: { clientId: settings.clientId } })
            }).pipe(Effect.provideService(OAuth.TokenStore, store))
          })
      })
      const front = yield* McpClient.connect(yield* InProcess.client(proxy))
      const result = yield* front.callTool("prot_whoami", {})
      expect(JSON.stringify(result.content)).toContain("hello alice")
      assert.deepStrictEqual(asked, [`prot ${url}`])
      assert.strictEqual(rec.authorizations[0]?.get("client_id"), "pre")
      assert.strictEqual(rec.registrations.length, 0)
    }).pipe(Effect.scoped))

  it("proxy config: an oauth block with a wrong grant names its field", () => {
    const decoded = McpProxy.decodeConfig({
      mcpServers: { prot: { url: "https://mcp.example.com/mcp", oauth: { grant: "password" } } }
    })
    assert.isTrue(Either.isLeft(decoded))
    if (Either.isLeft(decoded)) expect(decoded.left.message).toContain("oauth")
  })

  it.live("loopback interaction: the browser's redirect reaches the listener on 127.0.0.1", () =>
    Effect.gen(function*() {
      const { rec, url } = yield* setup()
      const opened: Array<string> = []
      const interaction = yield* OAuthLoopback.interaction({
        // The "browser": follows the authorization server's redirect to the loopback listener.
        open: (authorizationUrl) =>
          Effect.promise(async () => {
            opened.push(authorizationUrl.href)
            const page = await fetch(authorizationUrl)
            opened.push(await page.text())
          }),
        timeout: "10 seconds"
      })
      expect(interaction.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/)
      const client = yield* connect(url, { interaction })
      expect(yield* whoami(client)).toContain("hello alice")
      assert.strictEqual(rec.authorizations[0]?.get("redirect_uri"), interaction.redirectUri)
      assert.deepStrictEqual(rec.registrations[0]?.redirect_uris, [interaction.redirectUri])
      expect(opened[1]).toContain("Authorization finished")
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  it.live("loopback interaction: a user who never comes back ends with Interaction, not a hang", () =>
    Effect.gen(function*() {
      const { url } = yield* setup()
      const interaction = yield* OAuthLoopback.interaction({ open: () => Effect.void, timeout: "300 millis" })
      const cause = oauthFailure(yield* Effect.flip(connect(url, { interaction })))
      assert.strictEqual(cause.reason, "Interaction")
    }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory)))

  describe("servers that lie are refused with the typed error", () => {
    const refused = (o: AsOptions, reason: OAuth.OAuthError["reason"]) =>
      Effect.gen(function*() {
        const { rec, url } = yield* setup(o)
        const e = yield* Effect.flip(connect(url, headless))
        const cause = oauthFailure(e)
        assert.strictEqual(cause.reason, reason, cause.message)
        expect(cause.message).not.toContain(CLIENT_SECRET)
        return rec
      }).pipe(Effect.scoped, Effect.provide(OAuth.layerMemory))

    it.live("issuer mismatch in the AS metadata (RFC 8414 §3.3): no authorization request", () =>
      Effect.map(
        refused({ lieIssuer: true }, "IssuerMismatch"),
        (rec) => assert.strictEqual(rec.authorizations.length, 0)
      ))

    it.live("no PKCE S256 support: refused before any authorization request", () =>
      Effect.map(refused({ pkce: null }, "PkceUnsupported"), (rec) => assert.strictEqual(rec.authorizations.length, 0)))

    it.live("PKCE plain only: refused", () =>
      Effect.map(
        refused({ pkce: ["plain"] }, "PkceUnsupported"),
        (rec) => assert.strictEqual(rec.authorizations.length, 0)
      ))

    it.live("PRM resource that does not cover the endpoint (RFC 9728 §3.3)", () =>
      Effect.map(
        refused({ resourceOverride: "https://evil.example.com/mcp" }, "ResourceMismatch"),
        (rec) => assert.strictEqual(rec.registrations.length + rec.authorizations.length, 0)
      ))

    it.live("wrong iss in the authorization response (RFC 9207): no token request", () =>
      Effect.map(refused({ iss: "wrong" }, "Authorization"), (rec) => assert.strictEqual(rec.tokens.length, 0)))

    it.live("iss missing although advertised (RFC 9207 §2.4): no token request", () =>
      Effect.map(refused({ iss: "omit" }, "Authorization"), (rec) => assert.strictEqual(rec.tokens.length, 0)))

    it.live("no registration endpoint and no client configured", () =>
      Effect.map(
        refused({ registration: false }, "Registration"),
        (rec) => assert.strictEqual(rec.authorizations.length, 0)
      ))
  })

  it.live("the file store keeps credentials with 0600 permissions and reads them back", () =>
    Effect.gen(function*() {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "presa-oauth-"))
      const file = Path.join(dir, "tokens.json")
      const store = yield* OAuth.fileStore(file)
      assert.isTrue(Option.isNone(yield* store.get("https://mcp.example.com/mcp")))
      const credentials: OAuth.Credentials = {
        issuer: "https://as.example.com",
        client: { clientId: "c", clientSecret: CLIENT_SECRET },
        tokens: { accessToken: "at", tokenType: "bearer", refreshToken: "rt", expiresAt: 1 },
        scopes: ["mcp:read"]
      }
      yield* store.set("https://mcp.example.com/mcp", credentials)
      assert.strictEqual(Fs.statSync(file).mode & 0o777, 0o600)
      const again = yield* OAuth.fileStore(file)
      assert.deepStrictEqual(yield* again.get("https://mcp.example.com/mcp"), Option.some(credentials))
      yield* again.remove("https://mcp.example.com/mcp")
      assert.isTrue(Option.isNone(yield* store.get("https://mcp.example.com/mcp")))
      Fs.writeFileSync(file, "{not json")
      const e = yield* Effect.flip(store.get("x"))
      assert.strictEqual(e.reason, "Store")
      Fs.rmSync(dir, { recursive: true, force: true })
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})
