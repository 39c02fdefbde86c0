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
import * as Option from "effect/Option"
import * as jose from "jose"
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { Auth, McpClient, McpServer, OAuth, Tool } from "presa-mcp"
import { TransportError } from "presa-mcp/Transport"
import * as OAuthLoopback from "presa-mcp/transport/OAuthLoopback"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import * as WebHandler from "presa-mcp/WebHandler"

interface AsOptions {
  /** Where the PRM is served: the path-based location (default) or only the root. */
  readonly prmAt?: "path" | "root" | "none"
  /** Where the AS metadata is served (the issuer is `<origin>/as`). */
  readonly metadataAt?: "oauth" | "oidc-insert" | "oidc-append" | "root"
  readonly cimd?: boolean
  readonly registration?: boolean
  readonly pkce?: ReadonlyArray<string> | null
  /** An `issuer` in the metadata that is not the one the PRM names. */
  readonly lieIssuer?: boolean
  /** The `iss` in the redirect: correct (default), wrong, or left out. */
  readonly iss?: "correct" | "wrong" | "omit"
  readonly resourceOverride?: string
  readonly authMethods?: ReadonlyArray<string>
  readonly prmScopes?: ReadonlyArray<string>
  readonly asScopes?: ReadonlyArray<string>
  readonly expiresIn?: number
  /** tools/call needs this scope; a token without it gets 403 insufficient_scope. */
  readonly callScope?: string
  /** Every request with a token is refused with 403 insufficient_scope. */
  readonly alwaysForbid?: boolean
}

interface Recorded {
  readonly authorizations: Array<URLSearchParams>
  readonly tokens: Array<{ readonly body: URLSearchParams; readonly authorization: string | undefined }>
  readonly registrations: Array<Record<string, unknown>>
  readonly metadataPaths: Array<string>
}

const CLIENT_SECRET = "s3cret-value-never-logged"
const CIMD_URL = "https://client.example.com/metadata.json"

const readBody = (req: Http.IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

const json = (res: Http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(JSON.stringify(body))
}

const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url")

/** The authorization server and the protected MCP server, in the test's scope. */
const setup = (o: AsOptions = {}) =>
  Effect.gen(function*() {
    const { privateKey, publicKey } = yield* Effect.promise(() => jose.generateKeyPair("ES256"))
    const rec: Recorded = { authorizations: [], tokens: [], registrations: [], metadataPaths: [] }
    const state = { origin: "", challenges: new Map<string, string>(), codes: new Map<string, string>() }
    const mounted: { web?: WebHandler.WebHandler } = {}
    let counter = 0

    const mint = (scope: string, resource: string) =>
      new jose.SignJWT({ scope })
        .setProtectedHeader({ alg: "ES256" })
        .setIssuer(`${state.origin}/as`)
        .setAudience(resource)
        .setSubject("alice")
        .setIssuedAt()
        .setExpirationTime("5m")
        .sign(privateKey)

    const issue = async (res: Http.ServerResponse, scope: string, resource: string) => {
      counter++
      json(res, 200, {
        access_token: await mint(scope, resource),
        token_type: "Bearer",
        expires_in: o.expiresIn ?? 3600,
        refresh_token: `refresh-${counter}`,
        ...(scope === "" ? {} : { scope })
      })
    }

    const asMetadata = () => ({
      issuer: o.lieIssuer === true ? "https://attacker.example.com" : `${state.origin}/as`,
      authorization_endpoint: `${state.origin}/as/authorize`,
      token_endpoint: `${state.origin}/as/token`,
      ...(o.registration === false ? {} : { registration_endpoint: `${state.origin}/as/register` }),
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"],
      token_endpoint_auth_methods_supported: o.authMethods ?? ["none", "client_secret_basic"],
      authorization_response_iss_parameter_supported: true,
      ...(o.pkce === null ? {} : { code_challenge_methods_supported: o.pkce ?? ["S256"] }),
      ...(o.cimd === true ? { client_id_metadata_document_supported: true } : {}),
      ...(o.asScopes === undefined ? {} : { scopes_supported: o.asScopes })
    })
    const metadataPath = o.metadataAt === "root"
      ? "/.well-known/oauth-authorization-server"
      : o.metadataAt === "oidc-insert"
      ? "/.well-known/openid-configuration/as"
      : o.metadataAt === "oidc-append"
      ? "/as/.well-known/openid-configuration"
      : "/.well-known/oauth-authorization-server/as"
    const prmPath = o.prmAt === "root"
      ? "/.well-known/oauth-protected-resource"
      : "/.well-known/oauth-protected-resource/mcp"

    const handle = async (req: Http.IncomingMessage, res: Http.ServerResponse) => {
      const url = new URL(req.url ?? "/", state.origin)
      const body = await readBody(req)
      if (req.method === "GET" && url.pathname.includes(".well-known")) {
        if (url.pathname === prmPath && o.prmAt !== "none") {
          return json(res, 200, {
            resource: o.resourceOverride ?? (o.prmAt === "root" ? state.origin : `${state.origin}/mcp`),
            authorization_servers: [`${state.origin}/as`],
            ...(o.prmScopes === undefined ? {} : { scopes_supported: o.prmScopes })
          })
        }
        if (url.pathname === metadataPath) {
          rec.metadataPaths.push(url.pathname)
          return json(res, 200, asMetadata())
        }
        rec.metadataPaths.push(`404 ${url.pathname}`)
        return json(res, 404, { error: "not_found" })
      }
      if (url.pathname === "/as/authorize") {
        rec.authorizations.push(url.searchParams)
        const code = `code-${rec.authorizations.length}`
        state.challenges.set(code, url.searchParams.get("code_challenge") ?? "")
        state.codes.set(code, url.searchParams.get("scope") ?? "")
        const redirect = new URL(url.searchParams.get("redirect_uri") ?? "")
        redirect.searchParams.set("code", code)
        redirect.searchParams.set("state", url.searchParams.get("state") ?? "")
        if (o.iss !== "omit") {
          redirect.searchParams.set("iss", o.iss === "wrong" ? "https://evil.example" : `${state.origin}/as`)
        }
        res.writeHead(302, { location: redirect.href })
        return res.end()
      }
      if (url.pathname === "/as/register") {
        const metadata = JSON.parse(body.toString("utf8")) as Record<string, unknown>
        rec.registrations.push(metadata)
        const confidential = metadata.token_endpoint_auth_method !== "none"
        return json(res, 201, {
          ...metadata,
          client_id: `dcr-client-${rec.registrations.length}`,
          ...(confidential ? { client_secret: CLIENT_SECRET } : {})
        })
      }
      if (url.pathname === "/as/token") {
        const form = new URLSearchParams(body.toString("utf8"))
        rec.tokens.push({ body: form, authorization: req.headers.authorization })
        const resource = form.get("resource") ?? ""
        switch (form.get("grant_type")) {
          case "authorization_code": {
            const code = form.get("code") ?? ""
            if (state.challenges.get(code) !== s256(form.get("code_verifier") ?? "")) {
              return json(res, 400, { error: "invalid_grant" })
            }
            return issue(res, state.codes.get(code) ?? "", resource)
          }
          case "refresh_token":
            return issue(res, "mcp:read", resource)
          case "client_credentials":
            return issue(res, form.get("scope") ?? "", resource)
        }
        return json(res, 400, { error: "unsupported_grant_type" })
      }
      const web = mounted.web
      if (url.pathname === "/mcp" && web !== undefined) {
        const authorization = req.headers.authorization
        const challenge = (scope: string) =>
          `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${state.origin}${prmPath}"`
        if (authorization !== undefined && (o.alwaysForbid === true || o.callScope !== undefined)) {
          const token = authorization.replace(/^Bearer /, "")
          const scopes = String(jose.decodeJwt(token).scope ?? "").split(" ")
          const method = String((JSON.parse(body.toString("utf8")) as { method?: unknown }).method)
          if (o.alwaysForbid === true) {
            return json(res, 403, { error: "insufficient_scope" }, { "www-authenticate": challenge("mcp:admin") })
          }
          if (method === "tools/call" && o.callScope !== undefined && !scopes.includes(o.callScope)) {
            return json(res, 403, { error: "insufficient_scope" }, { "www-authenticate": challenge(o.callScope) })
          }
        }
        const headers = new Headers()
        for (const [k, v] of Object.entries(req.headers)) {
          if (typeof v === "string") headers.set(k, v)
        }
        const response = await web(
          new Request(url, {
            method: req.method ?? "GET",
            headers,
            ...(body.length > 0 ? { body: new Uint8Array(body) } : {})
          })
        )
        const out: Record<string, string> = {}
        response.headers.forEach((v, k) => {
          out[k] = v
        })
        res.writeHead(response.status, out)
        return res.end(Buffer.from(await response.arrayBuffer()))
      }
      json(res, 404, { error: "not_found" })
    }

    const server = yield* Effect.acquireRelease(
      Effect.async<Http.Server>((resume) => {
        const s = Http.createServer((req, res) => {
          handle(req, res).catch(() => {
            if (!res.headersSent) res.writeHead(500)
            res.end()
          })
        })
        s.listen(0, "127.0.0.1", () => resume(Effect.succeed(s)))
      }),
      (s) =>
        Effect.async<void>((resume) => {
          s.closeAllConnections()
          s.close(() => resume(Effect.void))
        })
    )
    state.origin = `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`
    const mcp = yield* McpServer.make({
      name: "protected",
      version: "1",
      tools: [Tool.fromJsonSchema({ name: "whoami", handler: (_a, ctx) => `hello ${ctx.auth?.subject ?? "nobody"}` })]
    })
    // The token audience is the resource the PRM names (a root PRM names the origin).
    const resource = o.prmAt === "root" ? state.origin : `${state.origin}/mcp`
    const web = WebHandler.toWebHandler(mcp, {
      auth: {
        resource,
        authorizationServers: [`${state.origin}/as`],
        verifier: Auth.jwtVerifier({ issuer: `${state.origin}/as`, audience: resource, keys: [publicKey] })
      }
    })
    mounted.web = web
    yield* Effect.addFinalizer(() => Effect.promise(() => web.dispose()))
    return { url: `${state.origin}/mcp`, origin: state.origin, rec }
  })

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
