/**
 * The library's in-process error classes, declared in one public module so that a consumer's
 * declaration emit can name them (`export const server = McpServer.make(…)` in a project with
 * `declaration: true` infers a type that mentions `DefinitionError`; a class declared in an
 * internal module cannot be named from outside the package: TS2742). Each class is also
 * re-exported, with its full documentation, by the module that uses it (`McpServer`,
 * `McpClient`, `McpProxy`, `OAuth`, `Redis`); import it from there.
 *
 * None of these is sent on the wire: protocol errors are `JsonRpc.McpError`, tool failures
 * `Tool.ToolError`.
 *
 * Guide: [Servers, results and errors](https://github.com/presa-mcp/presa-mcp/blob/main/docs/servers.md#results-and-errors).
 *
 * @since 0.2.0
 */
import * as Data from "effect/Data"
import * as Schema from "effect/Schema"
import type * as McpSchema from "./McpSchema.js"

/**
 * A definition was refused when the server was built or changed (a non-object `inputSchema`
 * root, a bad URI template, a duplicate name or URI). `kind` says which definition, `name` its
 * name or URI. Documented on `McpServer.DefinitionError`.
 *
 * @since 0.2.0
 * @category errors
 */
export class DefinitionError extends Data.TaggedError("DefinitionError")<{
  readonly kind: "tool" | "resource" | "resourceTemplate" | "prompt" | "skill"
  readonly name: string
  readonly message: string
}> {}

/**
 * A typed client call whose Schemas did not fit (`reason`: `"Arguments"`, `"Result"`,
 * `"Failure"`). Documented on `McpClient.TypedCallError`.
 *
 * @since 0.2.0
 * @category errors
 */
export class TypedCallError extends Data.TaggedError("TypedCallError")<{
  readonly reason: "Arguments" | "Result" | "Failure"
  /** The tool's or prompt's name, or the template's `uriTemplate`. */
  readonly name: string
  readonly message: string
  /** The result as received (`"Result"`, `"Failure"`). */
  readonly result?: McpSchema.CallToolResult | undefined
  /** The Schema `ParseError`, or the `UriTemplateError` of a template that is not RFC 6570. */
  readonly cause?: unknown
}> {}

/**
 * The client's local failure (`reason`: `"Timeout"`, `"InvalidResult"`, `"NoCommonVersion"`,
 * `"Input"`, `"InputRounds"`, `"Unsupported"`, `"Cancelled"`). Documented on
 * `McpClient.ClientError`.
 *
 * @since 0.2.0
 * @category errors
 */
export class ClientError extends Data.TaggedError("ClientError")<{
  readonly reason:
    | "Timeout"
    | "InvalidResult"
    | "NoCommonVersion"
    | "Input"
    | "InputRounds"
    | "Unsupported"
    | "Cancelled"
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * What a proxied definition is identified by: tools and prompts by name, the rest by URI.
 *
 * @since 0.2.0
 * @category models
 */
export type ProxyDefinitionKind = "tool" | "prompt" | "resource" | "resourceTemplate" | "skill"

/**
 * Two or more proxy backends serve the same identity (`kind` and `name`); `backends` are their
 * prefixes.
 *
 * @since 0.2.0
 * @category models
 */
export interface ProxyCollision {
  readonly kind: ProxyDefinitionKind
  readonly name: string
  readonly backends: ReadonlyArray<string>
}

/**
 * The proxy could not be built (`reason`: `"Prefix"`, `"Collision"`, `"Backend"`). Documented on
 * `McpProxy.ProxyError`.
 *
 * @since 0.2.0
 * @category errors
 */
export class ProxyError extends Data.TaggedError("ProxyError")<{
  readonly reason: "Prefix" | "Collision" | "Backend"
  readonly message: string
  readonly collisions: ReadonlyArray<ProxyCollision>
  readonly backend?: string
  readonly cause?: unknown
}> {}

/**
 * A proxy configuration file could not be read, parsed or decoded (`reason`: `"Read"`, `"Json"`,
 * `"Invalid"`). Documented on `McpProxy.ConfigError`.
 *
 * @since 0.2.0
 * @category errors
 */
export class ConfigError extends Data.TaggedError("ConfigError")<{
  readonly reason: "Read" | "Json" | "Invalid"
  readonly message: string
  /** The offending field, e.g. `mcpServers.files.args[0]` (`""`: the whole file). */
  readonly path: string
  readonly file?: string
  readonly cause?: unknown
}> {}

/**
 * Why OAuth authorization failed; see `OAuth.OAuthError`.
 *
 * @since 0.2.0
 * @category models
 */
export type OAuthReason =
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
  | "UnsafeUrl"
  | "Limit"

/**
 * The OAuth client's typed failure. Documented on `OAuth.OAuthError`.
 *
 * @since 0.2.0
 * @category errors
 */
export class OAuthError extends Data.TaggedError("OAuthError")<{
  readonly reason: OAuthReason
  readonly message: string
  /** The OAuth `error` code of an error response (RFC 6749 §5.2), when there was one. */
  readonly error?: string
}> {}

/**
 * Redis failed a command (not reachable, timed out, or an error reply). In-process only.
 * Documented on `Redis.RedisError`.
 *
 * @since 0.2.0
 * @category errors
 */
export class RedisError extends Schema.TaggedError<RedisError>("presa-mcp/RedisError")("RedisError", {
  operation: Schema.String,
  message: Schema.String
}) {}
