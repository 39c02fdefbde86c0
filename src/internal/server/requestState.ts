/**
 * `requestState` of multi round-trip requests: HMAC-SHA256-signed, bound to the method, the
 * target (tool / prompt name or resource URI) and a digest of the arguments, with an expiry.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const encoder = new TextEncoder()

const b64url = (bytes: Uint8Array): string => {
  let bin = ""
  for (const b of bytes) bin += String.fromCharCode(b)
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
}

const fromB64url = (s: string): Option.Option<Uint8Array<ArrayBuffer>> => {
  try {
    const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"))
    return Option.some(Uint8Array.from(bin, (c) => c.charCodeAt(0)))
  } catch {
    return Option.none()
  }
}

/** The signed payload. */
export const Payload = Schema.Struct({
  /** method */
  m: Schema.String,
  /** tool / prompt name or resource URI */
  n: Schema.String,
  /** digest of the canonical arguments */
  a: Schema.String,
  /** answers gathered in earlier rounds */
  r: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  /** the handler's own state, if it set one */
  s: Schema.optional(Schema.Unknown),
  /** expiry, epoch milliseconds */
  e: Schema.Number
})
export type Payload = typeof Payload.Type

const decodePayload = Schema.decodeUnknownOption(Schema.parseJson(Payload))

/** Stable JSON (sorted keys) for digests. */
export const canonical = (u: unknown): string => {
  if (Array.isArray(u)) return `[${u.map(canonical).join(",")}]`
  if (typeof u === "object" && u !== null) {
    const entries = Object.entries(u).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`
  }
  return JSON.stringify(u) ?? "null"
}

export const digest = (u: unknown): Effect.Effect<string> =>
  Effect.promise(() => crypto.subtle.digest("SHA-256", encoder.encode(canonical(u)))).pipe(
    Effect.map((buf) => b64url(new Uint8Array(buf)))
  )

/** Imported HMAC keys, per server key list (a WeakMap: released with the server). */
const keyCache = new WeakMap<ReadonlyArray<string>, ReadonlyArray<CryptoKey>>()

const importKeys = (secrets: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<CryptoKey>> => {
  const cached = keyCache.get(secrets)
  if (cached !== undefined) return Effect.succeed(cached)
  return Effect.forEach(
    secrets,
    (secret) =>
      Effect.promise(() =>
        crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
          "sign",
          "verify"
        ])
      )
  ).pipe(Effect.tap((keys) => Effect.sync(() => keyCache.set(secrets, keys))))
}

/** A fresh random secret (used when the server was given none). */
export const randomSecret = (): string => b64url(crypto.getRandomValues(new Uint8Array(32)))

/** Signs a payload with the first key: `<payload b64url>.<mac b64url>`. */
export const sign = (keys: ReadonlyArray<string>, payload: Payload): Effect.Effect<string> =>
  Effect.gen(function*() {
    const body = b64url(encoder.encode(JSON.stringify(payload)))
    const [key] = yield* importKeys(keys)
    if (key === undefined) return yield* Effect.dieMessage("no requestState key")
    const mac = yield* Effect.promise(() => crypto.subtle.sign("HMAC", key, encoder.encode(body)))
    return `${body}.${b64url(new Uint8Array(mac))}`
  })

/** Verifies a state with any of the keys (rotation) and decodes it; none when forged or malformed. */
export const verify = (keys: ReadonlyArray<string>, state: string): Effect.Effect<Option.Option<Payload>> =>
  Effect.gen(function*() {
    const [body, mac, ...rest] = state.split(".")
    if (body === undefined || mac === undefined || rest.length > 0) return Option.none()
    const macBytes = fromB64url(mac)
    const bodyBytes = fromB64url(body)
    if (Option.isNone(macBytes) || Option.isNone(bodyBytes)) return Option.none()
    // only the canonical encoding: padding bits a decoder ignores must not yield a second valid state
    if (b64url(macBytes.value) !== mac) return Option.none()
    for (const key of yield* importKeys(keys)) {
      const ok = yield* Effect.promise(() => crypto.subtle.verify("HMAC", key, macBytes.value, encoder.encode(body)))
      if (ok) return decodePayload(new TextDecoder().decode(bodyBytes.value))
    }
    return Option.none()
  })
