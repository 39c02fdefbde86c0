/**
 * What a grant yields: the client identity it used and the token endpoint's response.
 *
 * @internal
 */
import type * as oauth from "oauth4webapi"
import type { ClientInformation } from "../../../OAuth.js"

export interface Outcome {
  readonly client: ClientInformation
  readonly tokens: oauth.TokenEndpointResponse
}
