/**
 * The OAuth client against a hostile MCP server or authorization server (issue 34 point 5; the
 * threat model in docs/oauth.md). Each case is played by a real HTTP server on 127.0.0.1 port 0.
 * Cases that need the client to believe it talks to a remote server (a public name such as
 * `mcp.example.com`) give `OAuth.make` an injected `fetch` that records the URL the client asked
 * for and sends the request to the loopback server instead: nothing leaves the machine, and the
 * record shows which URLs the client refused to contact. Those cases call the provider's public
 * `onChallenge` as the Streamable HTTP client does after a `401`.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as jose from "jose"
import * as Http from "node:http"
import type * as Net from "node:net"
import { McpClient, OAuth } from "presa-mcp"
import { TransportError } from "presa-mcp/Transport"
import * as OAuthLoopback from "presa-mcp/transport/OAuthLoopback"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import { setup } from "./support/AuthorizationServer.js"

const MCP = "https://mcp.example.com/mcp"
const PRM_URL = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
const AS = "https://as.example.com"
const AS_METADATA_URL = `${AS}/.well-known/oauth-authorization-server`

const asMetadata = (overrides: Record<string, unknown> = {}) => ({
  issuer: AS,
  authorization_endpoint: `${AS}/authorize`,
  token_endpoint: `${AS}/token`,
  registration_endpoint: `${AS}/register`,
  response_types_supported: ["code"],
  code_challenge_methods_supported: ["S256"],
  token_endpoint_auth_methods_supported: ["none", "client_secret_basic"],
  ...overrides
})

/** How the hostile server answers one request: its original URL, the request and the response. */
type Script = (url: URL, req: Http.IncomingMessage, res: Http.ServerResponse) => void

const json = (res: Http.ServerResponse, body: unknown, status = 200) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

/** The usual honest answers for PRM and AS metadata; `script` decides first (returns true when it answered). */
const honest = (url: URL, res: Http.ServerResponse): void => {
  if (url.href === PRM_URL) return json(res, { resource: MCP, authorization_servers: [AS] })
  if (url.href === AS_METADATA_URL) return json(res, asMetadata())
  json(res, { error: "not_found" }, 404)
}

/**
 * A hostile server on 127.0.0.1 port 0 and a `fetch` that sends every request there, with the
 * URL the client asked for in `x-original-url`; `asked` lists those URLs in order.
 */
const hostile = (script: (url: URL, req: Http.IncomingMessage, res: Http.ServerResponse) => boolean) =>
  Effect.gen(function*() {
    const asked: Array<string> = []
    const handler: Script = (url, req, res) => {
      if (!script(url, req, res)) honest(url, res)
    }
    const server = yield* Effect.acquireRelease(
      Effect.async<Http.Server>((resume) => {
        const s = Http.createServer((req, res) => {
          // Bodies are drained so that a POST is complete before the script answers.
          req.resume()
          req.on("end", () => handler(new URL(String(req.headers["x-original-url"])), req, res))
        })
        s.listen(0, "127.0.0.1", () => resume(Effect.succeed(s)))
      }),
      (s) =>
        Effect.async<void>((resume) => {
          s.closeAllConnections()
          s.close(() => resume(Effect.void))
        })
    )
    const port = (server.address() as Net.AddressInfo).port
    const fetchVia: typeof globalThis.fetch = (input, init) => {
      const original = new URL(input instanceof Request ? input.url : String(input))
      asked.push(original.href)
      const headers = new Headers(init?.headers)
      headers.set("x-original-url", original.href)
      return globalThis.fetch(`http://127.0.0.1:${port}${original.pathname}${original.search}`, { ...init, headers })
    }
    return { asked, fetch: fetchVia }
  })

const challenge = (resourceMetadata?: string): OAuth.Challenge => ({
  status: 401,
  resourceMetadata,
  scopes: [],
  error: undefined,
  sent: undefined
})

/** An interaction that records what it was asked to show and never completes. */
const recordingInteraction = () => {
  const shown: Array<string> = []
  const interaction: OAuth.Interaction = {
    redirectUri: "http://127.0.0.1:9/callback",
    authorize: (url) =>
      Effect.flatMap(
        Effect.sync(() => shown.push(url.href)),
        () => Effect.fail(new OAuth.OAuthError({ reason: "Interaction", message: "test interaction" }))
      )
  }
  return { shown, interaction }
}

/** `onChallenge` for the remote MCP endpoint through the hostile server: its failure. */
const refusal = (
  script: (url: URL, req: Http.IncomingMessage, res: Http.ServerResponse) => boolean,
  options: Partial<OAuth.Options> = {},
  resourceMetadata?: string
) =>
  Effect.gen(function*() {
    const { asked, fetch } = yield* hostile(script)
    const { interaction, shown } = recordingInteraction()
    const store = yield* OAuth.memoryStore
    const auth = yield* OAuth.make({ interaction, fetch, ...options }).pipe(
      Effect.provideService(OAuth.TokenStore, store)
    )
    const error = yield* Effect.flip(auth.onChallenge(MCP, challenge(resourceMetadata)))
    assert.instanceOf(error, OAuth.OAuthError)
    return { error, asked, shown, stored: yield* store.get(MCP) }
  })

describe("OAuth client against a hostile server", () => {
  it.live("control: the honest remote metadata reaches the interaction with an https authorization URL", () =>
    Effect.gen(function*() {
      const { asked, error, shown } = yield* refusal((url, _req, res) => {
        if (url.href !== `${AS}/register`) return false
        json(res, { client_id: "c1", redirect_uris: ["http://127.0.0.1:9/callback"] }, 201)
        return true
      })
      assert.strictEqual(error.reason, "Interaction")
      assert.deepStrictEqual(asked, [PRM_URL, AS_METADATA_URL, `${AS}/register`])
      assert.strictEqual(shown.length, 1)
      expect(shown[0]).toMatch(/^https:\/\/as\.example\.com\/authorize\?/)
    }).pipe(Effect.scoped))

  describe("protected resource metadata (RFC 9728 §3.3)", () => {
    it.live("a resource naming another server: ResourceMismatch, the authorization server is never asked", () =>
      Effect.gen(function*() {
        const { asked, error } = yield* refusal((url, _req, res) => {
          if (url.href !== PRM_URL) return false
          json(res, { resource: "https://other.example.com/mcp", authorization_servers: [AS] })
          return true
        })
        assert.strictEqual(error.reason, "ResourceMismatch")
        assert.deepStrictEqual(asked, [PRM_URL])
      }).pipe(Effect.scoped))

    it.live("a resource on the same host but another path: ResourceMismatch", () =>
      Effect.gen(function*() {
        const { error } = yield* refusal((url, _req, res) => {
          if (url.href !== PRM_URL) return false
          json(res, { resource: "https://mcp.example.com/other", authorization_servers: [AS] })
          return true
        })
        assert.strictEqual(error.reason, "ResourceMismatch")
      }).pipe(Effect.scoped))

    it.live("a challenge's resource_metadata at a cloud metadata address: UnsafeUrl, nothing fetched", () =>
      Effect.gen(function*() {
        const { asked, error } = yield* refusal(
          () => false,
          {},
          "http://169.254.169.254/latest/meta-data/iam/security-credentials/"
        )
        assert.strictEqual(error.reason, "UnsafeUrl")
        expect(error.message).toContain("resource_metadata")
        assert.deepStrictEqual(asked, [])
      }).pipe(Effect.scoped))
  })

  describe("authorization server URL: HTTPS, and not closer to this machine than the MCP server", () => {
    const namedAs = (authorizationServer: string) =>
      refusal((url, _req, res) => {
        if (url.href !== PRM_URL) return false
        json(res, { resource: MCP, authorization_servers: [authorizationServer] })
        return true
      })

    for (
      const [label, as] of [
        ["plain http on a public host", "http://as.example.com"],
        ["loopback (127.0.0.1)", "https://127.0.0.1:8443/as"],
        ["loopback (localhost)", "http://localhost:8080/as"],
        ["loopback (IPv4-mapped IPv6)", "https://[::ffff:127.0.0.1]/as"],
        ["loopback (decimal IPv4 spelling)", "https://2130706433/as"],
        ["private 10/8", "https://10.0.0.7/as"],
        ["private 192.168/16", "https://192.168.1.1/as"],
        ["link-local (cloud metadata)", "https://169.254.169.254/as"],
        ["IPv6 unique local", "https://[fd00::1]/as"],
        ["IPv6 link-local", "https://[fe80::1]/as"],
        ["the unspecified address 0.0.0.0 (reaches this machine)", "https://0.0.0.0/as"],
        ["the unspecified address [::]", "https://[::]/as"],
        ["CGNAT shared 100.64/10", "https://100.64.0.1/as"],
        ["private 172.16/12", "https://172.20.0.1/as"],
        ["not http(s)", "file:///etc/passwd"]
      ] as const
    ) {
      it.live(`${label}: UnsafeUrl, never contacted`, () =>
        Effect.gen(function*() {
          const { asked, error, shown } = yield* namedAs(as)
          assert.strictEqual(error.reason, "UnsafeUrl", error.message)
          assert.deepStrictEqual(asked, [PRM_URL], "only the PRM was fetched")
          assert.deepStrictEqual(shown, [])
        }).pipe(Effect.scoped))
    }

    it.live("public addresses next to the private ranges are contacted (172.32.0.1, 100.128.0.1, 11.0.0.1)", () =>
      Effect.gen(function*() {
        for (const as of ["https://172.32.0.1", "https://100.128.0.1", "https://11.0.0.1"]) {
          const { asked, error } = yield* namedAs(as)
          assert.strictEqual(error.reason, "Discovery", error.message)
          assert.strictEqual(asked[1], `${as}/.well-known/oauth-authorization-server`)
        }
      }).pipe(Effect.scoped))

    it.live("a private MCP server may use an authorization server on the same private network", () =>
      Effect.gen(function*() {
        const { asked, fetch } = yield* hostile((url, _req, res) => {
          if (url.pathname === "/.well-known/oauth-protected-resource/mcp") {
            json(res, { resource: "https://10.0.0.5/mcp", authorization_servers: ["https://10.0.0.6"] })
            return true
          }
          if (url.href === "https://10.0.0.6/.well-known/oauth-authorization-server") {
            json(res, asMetadata({ issuer: "https://10.0.0.6", authorization_endpoint: "https://10.0.0.6/authorize" }))
            return true
          }
          return false
        })
        const { interaction, shown } = recordingInteraction()
        const auth = yield* OAuth.make({ interaction, fetch, client: { clientId: "pre" } }).pipe(
          Effect.provide(OAuth.layerMemory)
        )
        const error = yield* Effect.flip(auth.onChallenge("https://10.0.0.5/mcp", challenge()))
        assert.strictEqual(error.reason, "Interaction")
        assert.deepStrictEqual(asked.slice(0, 2), [
          "https://10.0.0.5/.well-known/oauth-protected-resource/mcp",
          "https://10.0.0.6/.well-known/oauth-authorization-server"
        ])
        expect(shown[0]).toMatch(/^https:\/\/10\.0\.0\.6\/authorize\?/)
      }).pipe(Effect.scoped))

    it.live("metadata endpoints are checked too: a token_endpoint at a private address is UnsafeUrl", () =>
      Effect.gen(function*() {
        const { asked, error } = yield* refusal((url, _req, res) => {
          if (url.href !== AS_METADATA_URL) return false
          json(res, asMetadata({ token_endpoint: "https://10.1.2.3/token" }))
          return true
        }, { grant: "client_credentials", client: { clientId: "machine", clientSecret: "s" } })
        assert.strictEqual(error.reason, "UnsafeUrl")
        expect(error.message).toContain("token_endpoint")
        assert.deepStrictEqual(asked, [PRM_URL, AS_METADATA_URL])
      }).pipe(Effect.scoped))
  })

  describe("a pre-registered client's secret goes only to its own authorization server (Options.issuer)", () => {
    const machine = { grant: "client_credentials", client: { clientId: "machine", clientSecret: "s3cret" } } as const
    const listing =
      (servers: ReadonlyArray<string>) => (url: URL, _req: Http.IncomingMessage, res: Http.ServerResponse) => {
        if (url.href === PRM_URL) {
          json(res, { resource: MCP, authorization_servers: servers })
          return true
        }
        if (url.href === `${AS}/token`) {
          json(res, { error: "invalid_client" }, 401)
          return true
        }
        return false
      }

    it.live("a server naming another authorization server: IssuerMismatch, that server is never contacted", () =>
      Effect.gen(function*() {
        const { asked, error } = yield* refusal(listing(["https://collector.example.net"]), { ...machine, issuer: AS })
        assert.strictEqual(error.reason, "IssuerMismatch")
        assert.deepStrictEqual(asked, [PRM_URL])
      }).pipe(Effect.scoped))

    it.live("without issuer the first listed one is used (the default, documented)", () =>
      Effect.gen(function*() {
        const { asked } = yield* refusal(listing(["https://collector.example.net"]), machine)
        assert.strictEqual(asked[1], "https://collector.example.net/.well-known/oauth-authorization-server")
      }).pipe(Effect.scoped))

    it.live("the configured one is chosen when the server lists it after another", () =>
      Effect.gen(function*() {
        const { asked, error } = yield* refusal(listing(["https://collector.example.net", AS]), {
          ...machine,
          issuer: AS
        })
        assert.strictEqual(error.reason, "Token")
        assert.strictEqual(error.error, "invalid_client")
        assert.deepStrictEqual(asked, [PRM_URL, AS_METADATA_URL, `${AS}/token`])
      }).pipe(Effect.scoped))
  })

  it.live("an issuer that does not match its metadata URL (RFC 8414 §3.3): IssuerMismatch, no other request", () =>
    Effect.gen(function*() {
      const { asked, error, shown } = yield* refusal((url, _req, res) => {
        if (url.href !== AS_METADATA_URL) return false
        json(res, asMetadata({ issuer: "https://attacker.example.com" }))
        return true
      })
      assert.strictEqual(error.reason, "IssuerMismatch")
      assert.deepStrictEqual(asked, [PRM_URL, AS_METADATA_URL])
      assert.deepStrictEqual(shown, [])
    }).pipe(Effect.scoped))

  describe("the authorization URL handed to the browser", () => {
    for (
      const endpoint of [
        "javascript:alert(document.cookie)",
        "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd",
        "http://as.example.com/authorize"
      ]
    ) {
      it.live(`authorization_endpoint ${endpoint.slice(0, 24)}…: UnsafeUrl, the interaction is never asked`, () =>
        Effect.gen(function*() {
          const { error, shown } = yield* refusal((url, _req, res) => {
            if (url.href !== AS_METADATA_URL) return false
            json(res, asMetadata({ authorization_endpoint: endpoint }))
            return true
          }, { client: { clientId: "pre" } })
          assert.strictEqual(error.reason, "UnsafeUrl", error.message)
          expect(error.message).toContain("authorization_endpoint")
          assert.deepStrictEqual(shown, [])
        }).pipe(Effect.scoped))
    }

    it.live("OAuthLoopback opens only https or loopback http: other URLs fail UnsafeUrl before open", () =>
      Effect.gen(function*() {
        const opened: Array<string> = []
        const interaction = yield* OAuthLoopback.interaction({
          open: (url) => Effect.sync(() => void opened.push(url.href)),
          timeout: "50 millis"
        })
        for (
          const url of [
            "javascript:alert(1)",
            "data:text/html,hi",
            "file:///etc/passwd",
            "http://as.example.com/authorize",
            "vbscript:msgbox"
          ]
        ) {
          const e = yield* Effect.flip(interaction.authorize(new URL(url)))
          assert.strictEqual(e.reason, "UnsafeUrl", url)
        }
        assert.deepStrictEqual(opened, [])
        // The ones that may reach a browser do (and then time out: no user here).
        for (const url of ["https://as.example.com/authorize?x=1", "http://127.0.0.1:9/authorize"]) {
          const e = yield* Effect.flip(interaction.authorize(new URL(url)))
          assert.strictEqual(e.reason, "Interaction")
        }
        assert.deepStrictEqual(opened, ["https://as.example.com/authorize?x=1", "http://127.0.0.1:9/authorize"])
      }).pipe(Effect.scoped))
  })

  describe("oversized and slow answers are bounded (256 KiB, requestTimeout)", () => {
    const big = JSON.stringify({ resource: MCP, authorization_servers: [AS], pad: "x".repeat(300 * 1024) })

    it.live("a PRM over 256 KiB with its content-length: Limit", () =>
      Effect.gen(function*() {
        const { error } = yield* refusal((url, _req, res) => {
          if (url.href !== PRM_URL) return false
          res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(big)) })
          res.end(big)
          return true
        })
        assert.strictEqual(error.reason, "Limit")
        expect(error.message).toContain("262144 bytes")
      }).pipe(Effect.scoped))

    it.live("AS metadata over 256 KiB, chunked without a content-length: Limit", () =>
      Effect.gen(function*() {
        const { error } = yield* refusal((url, _req, res) => {
          if (url.href !== AS_METADATA_URL) return false
          res.writeHead(200, { "content-type": "application/json" })
          for (let i = 0; i < 40; i++) res.write("x".repeat(8 * 1024))
          res.end()
          return true
        })
        assert.strictEqual(error.reason, "Limit")
      }).pipe(Effect.scoped))

    it.live("a token response over 256 KiB: Limit (the bound covers oauth4webapi's requests)", () =>
      Effect.gen(function*() {
        const { error } = yield* refusal((url, _req, res) => {
          if (url.href !== `${AS}/token`) return false
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify({ access_token: "a".repeat(300 * 1024), token_type: "bearer" }))
          return true
        }, { grant: "client_credentials", client: { clientId: "machine", clientSecret: "s" } })
        assert.strictEqual(error.reason, "Limit")
      }).pipe(Effect.scoped))

    it.live("a PRM whose body never ends: Limit after requestTimeout", () =>
      Effect.gen(function*() {
        const { error } = yield* refusal((url, _req, res) => {
          if (url.href !== PRM_URL) return false
          res.writeHead(200, { "content-type": "application/json" })
          res.write("{\"resource\":")
          return true
        }, { requestTimeout: "300 millis" })
        assert.strictEqual(error.reason, "Limit")
        expect(error.message).toContain("within")
      }).pipe(Effect.scoped))

    it.live("a token endpoint that never answers: Limit after requestTimeout", () =>
      Effect.gen(function*() {
        const { error, stored } = yield* refusal(
          (url) => url.href === `${AS}/token`, // never answered
          { grant: "client_credentials", client: { clientId: "machine" }, requestTimeout: "300 millis" }
        )
        assert.strictEqual(error.reason, "Limit")
        assert.isTrue(Option.isNone(stored))
      }).pipe(Effect.scoped))
  })

  describe("redirects", () => {
    it.live("a redirect loop on the PRM: Limit after 5 redirects (6 requests)", () =>
      Effect.gen(function*() {
        const { asked, error } = yield* refusal((url, _req, res) => {
          if (url.href !== PRM_URL) return false
          res.writeHead(302, { location: PRM_URL })
          res.end()
          return true
        })
        assert.strictEqual(error.reason, "Limit")
        expect(error.message).toContain("redirects")
        assert.deepStrictEqual(asked, Array.from({ length: 6 }, () => PRM_URL))
      }).pipe(Effect.scoped))

    it.live("a redirect to a private address: UnsafeUrl, the location is never fetched", () =>
      Effect.gen(function*() {
        const { asked, error } = yield* refusal((url, _req, res) => {
          if (url.href !== PRM_URL) return false
          res.writeHead(307, { location: "https://10.1.2.3/prm" })
          res.end()
          return true
        })
        assert.strictEqual(error.reason, "UnsafeUrl")
        assert.deepStrictEqual(asked, [PRM_URL])
      }).pipe(Effect.scoped))

    it.live("a redirect to another public location is followed", () =>
      Effect.gen(function*() {
        const { asked, error } = yield* refusal((url, _req, res) => {
          if (url.href === PRM_URL) {
            res.writeHead(301, { location: "https://docs.example.com/prm.json" })
            res.end()
            return true
          }
          if (url.href === "https://docs.example.com/prm.json") {
            json(res, { resource: MCP, authorization_servers: [AS] })
            return true
          }
          return false
        }, { client: { clientId: "pre" } })
        assert.strictEqual(error.reason, "Interaction")
        assert.deepStrictEqual(asked.slice(0, 3), [PRM_URL, "https://docs.example.com/prm.json", AS_METADATA_URL])
      }).pipe(Effect.scoped))
  })

  it.live("a registration response (RFC 7591) that changes the redirect URI: Registration, no authorization", () =>
    Effect.gen(function*() {
      const { error, shown, stored } = yield* refusal((url, _req, res) => {
        if (url.href !== `${AS}/register`) return false
        json(res, { client_id: "c1", redirect_uris: ["https://attacker.example.com/callback"] }, 201)
        return true
      })
      assert.strictEqual(error.reason, "Registration")
      expect(error.message).toContain("redirect URI")
      assert.deepStrictEqual(shown, [])
      assert.isTrue(Option.isNone(stored))
    }).pipe(Effect.scoped))

  describe("a token obtained for one server is never sent to another (RFC 8707)", () => {
    const connect = (auth: OAuth.Provider, url: string) =>
      Effect.flatMap(
        StreamableHttp.client({ url, auth }),
        (transport) => McpClient.connect(transport, { name: "threats", version: "0", versions: ["2026-07-28"] })
      )

    it.live("one provider, two servers with their own authorization servers: each gets only its own token", () =>
      Effect.gen(function*() {
        const a = yield* setup()
        const b = yield* setup()
        const store = yield* OAuth.memoryStore
        const auth = yield* OAuth.make({ interaction: OAuth.headless() }).pipe(
          Effect.provideService(OAuth.TokenStore, store)
        )
        const clientA = yield* connect(auth, a.url)
        const clientB = yield* connect(auth, b.url)
        yield* clientA.callTool("whoami", {})
        yield* clientB.callTool("whoami", {})
        yield* clientA.callTool("whoami", {})
        for (const [server, rec] of [[a, a.rec], [b, b.rec]] as const) {
          const sent = rec.mcpAuthorizations.filter((h): h is string => h !== undefined)
          assert.isAtLeast(sent.length, 2)
          for (const header of sent) {
            const claims = jose.decodeJwt(header.replace(/^Bearer /, ""))
            assert.strictEqual(claims.iss, `${server.origin}/as`)
            assert.strictEqual(claims.aud, server.url)
          }
          assert.deepStrictEqual(rec.tokens.map((t) => t.body.get("resource")), [server.url])
        }
        const storedA = Option.getOrUndefined(yield* store.get(a.url))
        const storedB = Option.getOrUndefined(yield* store.get(b.url))
        assert.strictEqual(storedA?.issuer, `${a.origin}/as`)
        assert.strictEqual(storedB?.issuer, `${b.origin}/as`)
        assert.notStrictEqual(storedA?.tokens?.accessToken, storedB?.tokens?.accessToken)
      }).pipe(Effect.scoped))

    it.live("a server that redirects a request to another origin: the token is not sent there", () =>
      Effect.gen(function*() {
        // `303 See Other` turns the POST into a GET that fetch follows, dropping `Authorization` on a
        // cross-origin redirect (Fetch standard, HTTP-redirect fetch); a `307` POST is not followed
        // by Node 20's fetch at all (its body was already sent), so it cannot carry the token either.
        const other = yield* setup()
        const a = yield* setup({ redirectCallsTo: other.url })
        const auth = yield* OAuth.make({ interaction: OAuth.headless() }).pipe(Effect.provide(OAuth.layerMemory))
        const client = yield* connect(auth, a.url)
        const result = yield* Effect.either(client.callTool("whoami", {}))
        assert.isTrue(result._tag === "Left" || result.right.isError === true)
        assert.isAtLeast(other.rec.mcpAuthorizations.length, 1, "the redirect was followed")
        assert.deepStrictEqual(other.rec.mcpAuthorizations.filter((h) => h !== undefined), [])
        if (result._tag === "Left") assert.instanceOf(result.left, TransportError)
      }).pipe(Effect.scoped))
  })
})
