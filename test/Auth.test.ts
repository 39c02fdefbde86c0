/**
 * The resource-server pieces: JWT verification (keys generated here, no network), challenges and
 * the RFC 9728 metadata document.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as jose from "jose"
import { Auth } from "presa-mcp"

const ISSUER = "https://auth.example.com"
const RESOURCE = "https://mcp.example.com/mcp"

const setup = Effect.promise(async () => {
  const { privateKey, publicKey } = await jose.generateKeyPair("ES256")
  const other = await jose.generateKeyPair("ES256")
  const sign = (claims: jose.JWTPayload, options: { key?: jose.CryptoKey; exp?: string | number } = {}) =>
    new jose.SignJWT(claims)
      .setProtectedHeader({ alg: "ES256" })
      .setIssuedAt()
      .setExpirationTime(options.exp ?? "5m")
      .sign(options.key ?? privateKey)
  return { publicKey, other, sign }
})

describe("Auth.jwtVerifier", () => {
  it.live("accepts a valid token: subject, scopes, claims", () =>
    Effect.gen(function*() {
      const { publicKey, sign } = yield* setup
      const verify = Auth.jwtVerifier({ issuer: ISSUER, audience: RESOURCE, keys: [publicKey] })
      const token = yield* Effect.promise(() =>
        sign({ sub: "alice", iss: ISSUER, aud: RESOURCE, scope: "mcp:read mcp:admin" })
      )
      const who = yield* verify(token)
      assert.strictEqual(who.subject, "alice")
      expect(who.scopes).toEqual(["mcp:read", "mcp:admin"])
      assert.strictEqual(who.claims.iss, ISSUER)
    }))

  it.live("refuses expired, wrong audience, wrong issuer, alg none and a token signed by another key", () =>
    Effect.gen(function*() {
      const { other, publicKey, sign } = yield* setup
      const verify = Auth.jwtVerifier({ issuer: ISSUER, audience: RESOURCE, keys: [publicKey] })
      const base = { sub: "alice", iss: ISSUER, aud: RESOURCE }
      const expired = yield* Effect.promise(() => sign(base, { exp: Math.floor(Date.now() / 1000) - 3600 }))
      const wrongAud = yield* Effect.promise(() => sign({ ...base, aud: "https://elsewhere.example.com/mcp" }))
      const wrongIss = yield* Effect.promise(() => sign({ ...base, iss: "https://evil.example.com" }))
      const otherKey = yield* Effect.promise(() => sign(base, { key: other.privateKey }))
      const none = new jose.UnsecuredJWT(base).setIssuedAt().setExpirationTime("5m").encode()
      for (const token of [expired, wrongAud, wrongIss, otherKey, none, "not-a-jwt"]) {
        const e = yield* Effect.flip(verify(token))
        assert.strictEqual(e._tag, "InvalidToken")
        assert.strictEqual(e.reason, "invalid")
      }
    }))
})

describe("Auth challenges and metadata", () => {
  const config: Auth.ResourceServer = {
    resource: RESOURCE,
    authorizationServers: [ISSUER],
    scopesSupported: ["mcp:read", "mcp:admin"],
    verifier: () => Effect.fail(new Auth.InvalidToken({ reason: "invalid", message: "x" }))
  }

  it("metadata has the RFC 9728 fields; its URL is the well-known path plus the resource path", () => {
    const doc = Auth.metadata(config)
    assert.strictEqual(doc.resource, RESOURCE)
    expect(doc.authorization_servers).toEqual([ISSUER])
    expect(doc.scopes_supported).toEqual(["mcp:read", "mcp:admin"])
    expect(doc.bearer_methods_supported).toEqual(["header"])
    assert.strictEqual(Auth.metadataUrl(RESOURCE), "https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
  })

  it("challenges name the metadata URL, the error and the scopes", () => {
    assert.strictEqual(
      Auth.challenge(config, {}),
      `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`
    )
    assert.strictEqual(
      Auth.challenge(config, { error: "insufficient_scope", scopes: ["mcp:admin"] }),
      `Bearer error="insufficient_scope", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp:admin"`
    )
  })

  it.effect("bearer reads the token or fails with reason missing", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* Auth.bearer("Bearer abc.def-ghi"), "abc.def-ghi")
      assert.strictEqual((yield* Effect.flip(Auth.bearer(undefined))).reason, "missing")
      assert.strictEqual((yield* Effect.flip(Auth.bearer("Basic xyz"))).reason, "missing")
    }))
})
