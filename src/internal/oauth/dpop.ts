/**
 * DPoP (RFC 9449; MCP extension `io.modelcontextprotocol/auth/dpop`, SEP-1932) for the client
 * provider, documented on `OAuth.Options.dpop`: one ES256 key pair per provider; token requests
 * get their proof from `oauth4webapi`'s DPoP handle over that key pair (which also keeps the
 * token endpoint's nonce, RFC 9449 §8), and requests to the MCP server a proof of their own
 * (RFC 9449 §4.2, §7.1: `htm`, `htu` without query and fragment, `ath`, the MCP server's last
 * `DPoP-Nonce`, §9). The private key never leaves Web Crypto (it is not extractable).
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as oauth from "oauth4webapi"

/** The one algorithm this client signs proofs with (RFC 9449 §4.2: asymmetric; ES256 is JWA's recommended+). */
export const ALG = "ES256"

const b64u = (bytes: Uint8Array): string => {
  let s = ""
  for (const b of bytes) s += String.fromCharCode(b)
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
}
const text = (s: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(s)

export interface Dpop {
  /** The handle `oauth4webapi` token requests take (`DPoP` request option). */
  readonly handle: oauth.DPoPHandle
  /** A fresh proof for one request to the MCP server with this access token. */
  readonly proof: (method: string, url: string, accessToken: string) => Effect.Effect<string>
  /** Remembers a `DPoP-Nonce` of the MCP server at `url` (per origin). */
  readonly setNonce: (url: string, nonce: string) => void
  /** The nonce last remembered for the origin of `url`. */
  readonly nonce: (url: string) => string | undefined
}

export const make: Effect.Effect<Dpop> = Effect.gen(function*() {
  const keyPair = yield* Effect.promise(() => oauth.generateKeyPair(ALG, { extractable: false }))
  const jwk = yield* Effect.promise(() => crypto.subtle.exportKey("jwk", keyPair.publicKey))
  const header = b64u(text(JSON.stringify({
    typ: "dpop+jwt",
    alg: ALG,
    jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }
  })))
  const handle = oauth.DPoP({}, keyPair)
  const nonces = new Map<string, string>()
  const nonce = (url: string) => nonces.get(new URL(url).origin)
  return {
    handle,
    nonce,
    setNonce: (url, value) => {
      nonces.set(new URL(url).origin, value)
    },
    proof: (method, url, accessToken) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.promise(async () => {
          const target = new URL(url)
          const ath = b64u(new Uint8Array(await crypto.subtle.digest("SHA-256", text(accessToken))))
          const n = nonce(url)
          const payload = b64u(text(JSON.stringify({
            jti: b64u(crypto.getRandomValues(new Uint8Array(16))),
            htm: method,
            htu: `${target.origin}${target.pathname}`,
            iat: Math.floor(now / 1000),
            ath,
            ...(n === undefined ? {} : { nonce: n })
          })))
          const input = `${header}.${payload}`
          // Web Crypto's ECDSA signature is the raw `r || s` JWS expects (RFC 7518 §3.4).
          const signature = await crypto.subtle.sign(
            { name: "ECDSA", hash: "SHA-256" },
            keyPair.privateKey,
            text(input)
          )
          return `${input}.${b64u(new Uint8Array(signature))}`
        }))
  }
})
