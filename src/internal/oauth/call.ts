/**
 * `oauth4webapi` calls as effects failing with `OAuthError`: the message carries the OAuth
 * `error` and `error_description` of an error response (RFC 6749 §5.2), never a token or secret.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as oauth from "oauth4webapi"
import { OAuthError } from "./error.js"
import { type Http, LimitExceeded } from "./network.js"

const describe = (e: unknown): { readonly message: string; readonly error?: string } =>
  e instanceof oauth.ResponseBodyError
    ? {
      message: `${e.error}${e.error_description === undefined ? "" : `: ${e.error_description}`} (HTTP ${e.status})`,
      error: e.error
    }
    : { message: e instanceof Error ? e.message : "unexpected failure" }

/** Maps a thrown value to `OAuthError` with `reason` (`"Limit"` for a bound), prefixed by `what`. */
export const fail = (reason: OAuthError["reason"], what: string) => (e: unknown): OAuthError => {
  const d = describe(e)
  return new OAuthError({
    reason: e instanceof LimitExceeded ? "Limit" : reason,
    message: `${what}: ${d.message}`,
    ...(d.error === undefined ? {} : { error: d.error })
  })
}

/** Runs one `oauth4webapi` step that does not touch the network. */
export const call = <A>(
  reason: OAuthError["reason"],
  what: string,
  f: () => Promise<A>
): Effect.Effect<A, OAuthError> => Effect.tryPromise({ try: f, catch: fail(reason, what) })

/**
 * Runs one `oauth4webapi` request (pass `signal` in its options): aborted and failed with
 * `OAuthError` `"Limit"` when it has no complete answer within `http.timeout`.
 */
export const request = <A>(
  http: Http,
  reason: OAuthError["reason"],
  what: string,
  f: (signal: AbortSignal) => Promise<A>
): Effect.Effect<A, OAuthError> =>
  Effect.tryPromise({ try: f, catch: fail(reason, what) }).pipe(
    Effect.timeoutFail({
      duration: http.timeout,
      onTimeout: () =>
        new OAuthError({ reason: "Limit", message: `${what}: no answer within ${Duration.format(http.timeout)}` })
    })
  )
