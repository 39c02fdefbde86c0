/**
 * One exchange under `ClientOptions.auth` (MCP 2025-11-25 and 2026-07-28, Authorization): a
 * `401`/`403` challenge runs the provider's `onChallenge` and the exchange runs again, at most
 * `maxAttempts` times (Authorization › Scope Challenge Handling: a client that keeps being
 * refused stops instead of looping). Used for POSTed requests and the legacy standalone GET.
 * Also what a refusal with a challenge is (`challengeOf`).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { TransportError } from "../../../../Transport.js"
import type { Client } from "./state.js"

export const withAuthorization = <A>(
  client: Client,
  what: string,
  method: string,
  exchange: Effect.Effect<A, TransportError>
): Effect.Effect<A, TransportError> => {
  const auth = client.options.auth
  if (auth === undefined) return exchange
  const attempt = (n: number): Effect.Effect<A, TransportError> =>
    Effect.gen(function*() {
      const sent = (yield* auth.headers(client.url, method)).authorization
      return yield* exchange.pipe(
        Effect.catchIf(
          (e) => e.reason === "Unauthorized" && e.challenge !== undefined,
          (e) => {
            const challenge = e.challenge
            if (challenge === undefined || n >= auth.maxAttempts) return Effect.fail(e)
            return auth.onChallenge(client.url, { ...challenge, status: e.status ?? 401, sent }).pipe(
              Effect.mapError((cause) =>
                new TransportError({
                  reason: "Unauthorized",
                  message: `authorization for ${what} failed: ${cause.message}`,
                  cause,
                  ...(e.status === undefined ? {} : { status: e.status }),
                  challenge
                })
              ),
              Effect.zipRight(attempt(n + 1))
            )
          }
        )
      )
    })
  return attempt(0)
}

/** The auth-params of a `WWW-Authenticate: Bearer k="v", …` (or `DPoP`) challenge (RFC 6750 §3). */
const bearerParams = (header: string): Readonly<Record<string, string | undefined>> => {
  const out: Record<string, string> = {}
  for (const m of header.matchAll(/([A-Za-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g)) {
    const key = m[1]
    if (key !== undefined) out[key] = (m[2] ?? m[3] ?? "").replace(/\\(.)/g, "$1")
  }
  return out
}

/**
 * `TransportError` `"Unauthorized"` for a `401`/`403` with a `WWW-Authenticate` challenge of the
 * `Bearer` (RFC 6750 §3) or `DPoP` (RFC 9449 §7.1) scheme, with the response's `DPoP-Nonce`
 * (RFC 9449 §9); `undefined` for any other answer.
 */
export const challengeOf = (
  status: number,
  headers: Readonly<Record<string, string | undefined>>,
  what: string
): TransportError | undefined => {
  const authenticate = headers["www-authenticate"]
  if ((status !== 401 && status !== 403) || authenticate === undefined || !/^\s*(Bearer|DPoP)\b/i.test(authenticate)) {
    return undefined
  }
  const params = bearerParams(authenticate)
  const nonce = headers["dpop-nonce"]
  return new TransportError({
    reason: "Unauthorized",
    status,
    message: `HTTP ${status} for ${what}: ${params.error ?? "an access token is required"}`,
    challenge: {
      resourceMetadata: params.resource_metadata,
      scopes: params.scope === undefined ? [] : params.scope.split(" ").filter((s) => s.length > 0),
      error: params.error,
      ...(nonce === undefined ? {} : { nonce })
    }
  })
}
