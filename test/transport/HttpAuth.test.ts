/**
 * The HTTP server as an OAuth 2.1 resource server (protocol.md §20): 401 challenges, invalid
 * tokens, per-component scopes through visibility (no existence leak), required scopes (403),
 * the RFC 9728 metadata document. Keys are generated in the test; no network beyond loopback.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as jose from "jose"
import { Auth, Content, McpClient, McpServer, Skill, Tool } from "presa-mcp"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"

const ISSUER = "https://auth.example.com"
const RESOURCE = "https://mcp.example.com/mcp"

const keys = Effect.promise(() => jose.generateKeyPair("ES256"))

const token = (key: jose.CryptoKey, claims: jose.JWTPayload, exp: string | number = "5m") =>
  Effect.promise(() =>
    new jose.SignJWT({ iss: ISSUER, aud: RESOURCE, sub: "alice", ...claims })
      .setProtectedHeader({ alg: "ES256" })
      .setIssuedAt()
      .setExpirationTime(exp)
      .sign(key)
  )

const modernBody = (method: string, params: Record<string, unknown> = {}) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
      }
    }
  })

const post = (url: string, headers: Record<string, string>, body: string) =>
  Effect.promise(() =>
    fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/list",
        ...headers
      },
      body
    })
  )

const setup = (requiredScopes?: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const { privateKey, publicKey } = yield* keys
    const secretSkill = yield* Skill.make("secret-skill", {
      "SKILL.md": "---\nname: secret-skill\ndescription: Admins only\n---\nbody\n"
    }, { requiredScopes: ["mcp:admin"] })
    const server = yield* McpServer.make({
      name: "protected",
      version: "1",
      tools: [
        Tool.fromJsonSchema({ name: "hello", handler: (_a, ctx) => `hello ${ctx.auth?.subject ?? "nobody"}` }),
        Tool.fromJsonSchema({
          name: "admin",
          visible: McpServer.requireScopes(["mcp:admin"]),
          handler: () => "admin ok"
        })
      ],
      skills: [secretSkill]
    })
    const config: Auth.ResourceServer = {
      resource: RESOURCE,
      authorizationServers: [ISSUER],
      scopesSupported: ["mcp:read", "mcp:admin"],
      ...(requiredScopes === undefined ? {} : { requiredScopes }),
      verifier: Auth.jwtVerifier({ issuer: ISSUER, audience: RESOURCE, keys: [publicKey] })
    }
    const address = yield* StreamableHttp.serve(server, { port: 0, auth: config })
    return { url: address.url, privateKey, config }
  })

describe("Streamable HTTP resource server", () => {
  it.scopedLive("no token → 401 with a challenge naming the metadata URL; the metadata document is served", () =>
    Effect.gen(function*() {
      const { url } = yield* setup()
      const res = yield* post(url, {}, modernBody("tools/list"))
      assert.strictEqual(res.status, 401)
      assert.strictEqual(
        res.headers.get("www-authenticate"),
        `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`
      )
      const meta = yield* Effect.promise(() =>
        fetch(new URL("/.well-known/oauth-protected-resource/mcp", url)).then((r) => r.json())
      )
      expect(meta).toEqual({
        resource: RESOURCE,
        authorization_servers: [ISSUER],
        scopes_supported: ["mcp:read", "mcp:admin"],
        bearer_methods_supported: ["header"]
      })
    }))

  it.scopedLive("expired, wrong audience, wrong issuer, alg none, another key → 401 invalid_token", () =>
    Effect.gen(function*() {
      const { privateKey, url } = yield* setup()
      const other = yield* keys
      const bad = [
        yield* token(privateKey, {}, Math.floor(Date.now() / 1000) - 3600),
        yield* token(privateKey, { aud: "https://elsewhere.example.com/mcp" }),
        yield* token(privateKey, { iss: "https://evil.example.com" }),
        new jose.UnsecuredJWT({ iss: ISSUER, aud: RESOURCE, sub: "alice" }).setExpirationTime("5m").encode(),
        yield* token(other.privateKey, {})
      ]
      // the same claims, correctly signed, are accepted: each refusal above is for its one defect
      const good = yield* token(privateKey, {})
      assert.strictEqual((yield* post(url, { authorization: `Bearer ${good}` }, modernBody("tools/list"))).status, 200)
      for (const t of bad) {
        const res = yield* post(url, { authorization: `Bearer ${t}` }, modernBody("tools/list"))
        assert.strictEqual(res.status, 401)
        assert.include(res.headers.get("www-authenticate") ?? "", `error="invalid_token"`)
      }
    }))

  it.scopedLive("a token without mcp:admin neither lists nor calls the admin tool (-32602 Unknown tool); with it, both work", () =>
    Effect.gen(function*() {
      const { privateKey, url } = yield* setup()
      const reader = yield* token(privateKey, { scope: "mcp:read" })
      const admin = yield* token(privateKey, { scope: "mcp:read mcp:admin" })
      const asReader = yield* McpClient.connect(
        yield* StreamableHttp.client({ url, headers: { authorization: `Bearer ${reader}` } })
      )
      expect((yield* asReader.listAllTools).map((t) => t.name)).toEqual(["hello"])
      assert.strictEqual(Content.textOf(yield* asReader.callTool("hello")), "hello alice")
      const e = yield* Effect.flip(asReader.callTool("admin"))
      assert.strictEqual(e._tag, "McpError")
      if (e._tag === "McpError") {
        assert.strictEqual(e.code, -32602)
        assert.strictEqual(e.message, "Unknown tool: admin")
      }
      expect(yield* asReader.listSkills).toEqual([])
      const asAdmin = yield* McpClient.connect(
        yield* StreamableHttp.client({ url, headers: { authorization: `Bearer ${admin}` } })
      )
      expect((yield* asAdmin.listAllTools).map((t) => t.name)).toEqual(["hello", "admin"])
      assert.strictEqual(Content.textOf(yield* asAdmin.callTool("admin")), "admin ok")
      expect((yield* asAdmin.listSkills).map((s) => s.uri)).toEqual(["skill://secret-skill/SKILL.md"])
    }))

  it.scopedLive("scopes every request needs: a valid token without them → 403 insufficient_scope", () =>
    Effect.gen(function*() {
      const { privateKey, url } = yield* setup(["mcp:read"])
      const none = yield* token(privateKey, { scope: "other" })
      const res = yield* post(url, { authorization: `Bearer ${none}` }, modernBody("tools/list"))
      assert.strictEqual(res.status, 403)
      const challenge = res.headers.get("www-authenticate") ?? ""
      assert.include(challenge, `error="insufficient_scope"`)
      assert.include(challenge, `scope="mcp:read"`)
      const ok = yield* token(privateKey, { scope: "mcp:read" })
      assert.strictEqual((yield* post(url, { authorization: `Bearer ${ok}` }, modernBody("tools/list"))).status, 200)
    }))

  it.scopedLive("our client without a token fails with a typed Unauthorized error carrying the challenge", () =>
    Effect.gen(function*() {
      const { url } = yield* setup(["mcp:read"])
      const e = yield* Effect.flip(McpClient.connect(yield* StreamableHttp.client({ url })))
      assert.strictEqual(e._tag, "TransportError")
      if (e._tag === "TransportError") {
        assert.strictEqual(e.reason, "Unauthorized")
        assert.strictEqual(e.status, 401)
        expect(e.challenge).toEqual({
          resourceMetadata: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
          scopes: ["mcp:read"],
          error: undefined
        })
      }
    }))
})
