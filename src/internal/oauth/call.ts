/**
 * `oauth4webapi` calls as effects failing with `OAuthError`: the message carries the OAuth
 * `error` and `error_description` of an error response (RFC 6749 §5.2), never a token or secret.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as oauth from "oauth4webapi"
import { OAuthError } from "./error.js"

const describe = (e: unknown): { readonly message: string; readonly error?: string } =>
  e instanceof oauth.ResponseBodyError
    ? {
      message: `${e.error}${e.error_description === undefined ? "" : `: ${e.error_description}`} (HTTP ${e.status})`,
      error: e.error
    }
    : { message: e instanceof Error ? e.message : "unexpected failure" }

/** Maps a thrown value to `OAuthError` with `reason`, prefixed by `what`. */
export const fail = (reason: OAuthError["reason"], what: string) => (e: unknown): OAuthError => {
  const d = describe(e)
  return new OAuthError({
    reason,
    message: `${what}: ${d.message}`,
    ...(d.error === undefined ? {} : { error: d.error })
  })
}

/** Runs one `oauth4webapi` step. */
export const call = <A>(
  reason: OAuthError["reason"],
  what: string,
  f: () => Promise<A>
): Effect.Effect<A, OAuthError> => Effect.tryPromise({ try: f, catch: fail(reason, what) })
