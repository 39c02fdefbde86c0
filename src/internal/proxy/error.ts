/**
 * The proxy's errors (declared in the public `Errors` module so that consumers' declaration emit
 * can name them; documented on `McpProxy.ProxyError` and `McpProxy.ConfigError`).
 * @internal
 */
export {
  ConfigError,
  type ProxyCollision as Collision,
  type ProxyDefinitionKind as Kind,
  ProxyError
} from "../../Errors.js"
