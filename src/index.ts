/**
 * presa-mcp: an Effect-native Model Context Protocol library.
 *
 * @since 0.1.0
 */

/** @since 0.2.0 */
export * as App from "./App.js"
/** @since 0.2.0 */
export * as AppHost from "./AppHost.js"
/** @since 0.1.0 */
export * as Auth from "./Auth.js"
/** @since 0.2.0 */
export * as Cluster from "./Cluster.js"
/** @since 0.2.0 */
export * as Connection from "./Connection.js"
/** @since 0.1.0 */
export * as Content from "./Content.js"
/** @since 0.2.0 */
export * as Errors from "./Errors.js"
/** @since 0.1.0 */
export * as Handler from "./Handler.js"
/** @since 0.2.0 */
export * as IdentityProvider from "./IdentityProvider.js"
/** @since 0.1.0 */
export * as JsonRpc from "./JsonRpc.js"
/** @since 0.1.0 */
export * as Input from "./Input.js"
/** @since 0.1.0 */
export * as JsonSchema from "./JsonSchema.js"
/** @since 0.1.0 */
export * as McpClient from "./McpClient.js"
/** @since 0.1.0 */
export * as McpProxy from "./McpProxy.js"
/** @since 0.1.0 */
export * as McpSchema from "./McpSchema.js"
/** @since 0.1.0 */
export * as McpServer from "./McpServer.js"
/** @since 0.1.0 */
export * as Middleware from "./Middleware.js"
/** @since 0.2.0 */
export * as OAuth from "./OAuth.js"
/** @since 0.1.0 */
export * as Part from "./Part.js"
/** @since 0.1.0 */
export * as Prompt from "./Prompt.js"
/** @since 0.1.0 */
export * as RequestContext from "./RequestContext.js"
/** @since 0.1.0 */
export * as Resource from "./Resource.js"
/** @since 0.1.0 */
export * as Skill from "./Skill.js"
/** @since 0.1.0 */
export * as Task from "./Task.js"
/** @since 0.2.0 */
export * as Telemetry from "./Telemetry.js"
/** @since 0.2.0 */
export * as Testing from "./Testing.js"
/** @since 0.1.0 */
export * as Tool from "./Tool.js"
/** @since 0.2.0 */
export * as ToolTransform from "./ToolTransform.js"
/** @since 0.1.0 */
export * as Transport from "./Transport.js"
/** @since 0.1.0 */
export * as UriTemplate from "./UriTemplate.js"
/** @since 0.1.0 */
export * as InProcess from "./transport/InProcess.js"
