/**
 * A consumer library that emits declarations (`declaration: true`) and exports values whose
 * types it leaves to inference: a server, a client, a proxy configuration load and an OAuth
 * interaction, a typed tool call. Their inferred types mention the package's error classes (`DefinitionError`,
 * `ClientError`, `TypedCallError`, `ConfigError`, `OAuthError`), so declaration emit must be able to name them
 * from a public entry point (else TS2742: "cannot be named without a reference to …/internal/…").
 * scripts/package-test.sh emits it under NodeNext (tsconfig.declaration.json). It is never run.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { McpClient, McpServer, Tool, type Transport } from "presa-mcp"
import * as McpProxy from "presa-mcp/McpProxy"
import * as InProcess from "presa-mcp/transport/InProcess"
import * as OAuthLoopback from "presa-mcp/transport/OAuthLoopback"

export const server = McpServer.make({ name: "declaration-consumer", version: "1.0.0" })

export const client = Effect.flatMap(server, (s) => Effect.flatMap(InProcess.client(s), (t) => McpClient.connect(t)))

export const connect = (transport: Transport.ClientTransport) => McpClient.connect(transport)

export const config = McpProxy.loadConfig("proxy.json")

export const interaction = OAuthLoopback.interaction({ open: () => Effect.void })

const add = Tool.make({
  name: "add",
  parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  success: Schema.Struct({ sum: Schema.Number }),
  handler: ({ a, b }) => ({ sum: a + b })
})

/** A typed call: its inferred error type names `TypedCallError` and `ToolError`. */
export const typedCall = (c: McpClient.McpClient) => McpClient.call(c, add, { a: 1, b: 2 })
