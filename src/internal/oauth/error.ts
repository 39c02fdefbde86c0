/**
 * The OAuth client's typed failure (declared in the public `Errors` module so that consumers'
 * declaration emit can name it; documented on `OAuth.OAuthError`).
 *
 * @internal
 */
export { OAuthError, type OAuthReason as Reason } from "../../Errors.js"
