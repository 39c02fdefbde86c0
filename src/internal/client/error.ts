/**
 * The client's local failure type (declared in the public `Errors` module so that consumers'
 * declaration emit can name it; documented on `McpClient.ClientError`).
 * @internal
 */
export { ClientError } from "../../Errors.js"
