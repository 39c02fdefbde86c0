/**
 * One exchange under `ClientOptions.auth` (MCP 2025-11-25 and 2026-07-28, Authorization): a
 * `401`/`403` challenge runs the provider's `onChallenge` and the exchange runs again, at most
 * `maxAttempts` times (Authorization › Scope Challenge Handling: a client that keeps being
 * refused stops instead of looping). Used for POSTed requests and the legacy standalone GET.
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
