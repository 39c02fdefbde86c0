/**
 * JWT verification on `jose` for `Auth.jwtVerifier` and the identity-provider presets
 * (`IdentityProvider`): signature (allowed algorithms only), `iss`, `aud` (when given), `exp` /
 * `nbf` with bounded clock skew, then the caller's own claim checks and scope mapping.
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as jose from "jose"
import type { InvalidToken as InvalidTokenType, Verifier } from "../../Auth.js"
import type * as JsonRpc from "../../JsonRpc.js"

/** What a verifier checks. */
export interface Options {
  readonly issuer: string | ReadonlyArray<string>
  /** `undefined`: `aud` is not checked (the caller's `check` must bind the token otherwise). */
  readonly audience: string | ReadonlyArray<string> | undefined
  readonly algorithms?: ReadonlyArray<string> | undefined
  readonly clockTolerance?: Duration.DurationInput | undefined
  readonly jwksUrl?: string | undefined
  readonly keys?: ReadonlyArray<jose.CryptoKey | jose.KeyObject | Uint8Array> | undefined
  /** The caller's scopes from the verified payload. */
  readonly scopes: (claims: JsonRpc.JsonObject) => ReadonlyArray<string>
  /** A further check of the verified payload: a message refuses the token. */
  readonly check?: ((claims: JsonRpc.JsonObject) => string | undefined) | undefined
}

/** `value` as a list of scopes: a space-separated string or an array of strings (else none). */
export const scopeList = (value: unknown): ReadonlyArray<string> => {
  if (typeof value === "string") return value.split(" ").filter((s) => s.length > 0)
  if (Array.isArray(value)) return value.filter((s): s is string => typeof s === "string")
  return []
}

/** A verifier; `InvalidToken` is passed in (the class lives in `Auth`, which imports this module). */
export const make = (
  options: Options,
  invalid: (message: string) => InvalidTokenType
): Verifier => {
  const algorithms = [...(options.algorithms ?? ["RS256", "ES256", "EdDSA"])].filter((a) => a !== "none")
  const jwksUrl = options.jwksUrl === undefined ? undefined : new URL(options.jwksUrl)
  // `jose` (46 modules) is loaded on the first verification, not when the library is imported.
  let loaded: Promise<{ readonly jose: typeof jose; readonly remote: jose.JWTVerifyGetKey | undefined }> | undefined
  const load = () =>
    loaded ??= import("jose").then((jose) => ({
      jose,
      remote: jwksUrl === undefined ? undefined : jose.createRemoteJWKSet(jwksUrl)
    }))
  const audience = options.audience
  const verifyOptions: jose.JWTVerifyOptions = {
    issuer: typeof options.issuer === "string" ? options.issuer : [...options.issuer],
    ...(audience === undefined ? {} : { audience: typeof audience === "string" ? audience : [...audience] }),
    algorithms,
    clockTolerance: Math.floor(Duration.toSeconds(Duration.decode(options.clockTolerance ?? "30 seconds")))
  }
  const tryKeys = async (token: string): Promise<jose.JWTVerifyResult> => {
    const { jose, remote } = await load()
    if (remote !== undefined) return jose.jwtVerify(token, remote, verifyOptions)
    let last: unknown = new Error("no verification key configured")
    for (const key of options.keys ?? []) {
      try {
        return await jose.jwtVerify(token, key, verifyOptions)
      } catch (e) {
        last = e
      }
    }
    throw last
  }
  return (token) =>
    Effect.tryPromise({
      try: () => tryKeys(token),
      catch: (e) => invalid(e instanceof Error ? e.message : "invalid token")
    }).pipe(
      Effect.flatMap(({ payload }) => {
        const claims: JsonRpc.JsonObject = { ...payload }
        if (typeof payload.sub !== "string") return Effect.fail(invalid("the token has no subject"))
        const refused = options.check?.(claims)
        if (refused !== undefined) return Effect.fail(invalid(refused))
        return Effect.succeed({ subject: payload.sub, scopes: options.scopes(claims), claims })
      })
    )
}
