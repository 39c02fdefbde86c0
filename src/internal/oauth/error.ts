/**
 * The OAuth client's typed failure. Documented on `OAuth.OAuthError`.
 *
 * @internal
 */
import * as Data from "effect/Data"

/** Why authorization failed; see `OAuth.OAuthError`. */
export type Reason =
  | "Discovery"
  | "ResourceMismatch"
  | "IssuerMismatch"
  | "PkceUnsupported"
  | "Registration"
  | "Authorization"
  | "Token"
  | "Refused"
  | "Interaction"
  | "Store"

export class OAuthError extends Data.TaggedError("OAuthError")<{
  readonly reason: Reason
  readonly message: string
  /** The OAuth `error` code of an error response (RFC 6749 §5.2), when there was one. */
  readonly error?: string
}> {}
