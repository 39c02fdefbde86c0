/**
 * A consumer library that emits declarations (`declaration: true`) and exports values whose
 * types it leaves to inference: a server, a client, a proxy configuration load and an OAuth
 * interaction. Their inferred types mention the package's error classes (`DefinitionError`,
 * `ClientError`, `ConfigError`, `OAuthError`), so declaration emit must be able to name them
 * from a public entry point (else TS2742: "cannot be named without a reference to …/internal/…").
 * scripts/package-test.sh emits it under NodeNext (tsconfig.declaration.json). It is never run.
 */
import * as Effect from "effect/Effect"
import { McpClient, McpServer, type Transport } from "presa-mcp"
import * as McpProxy from "presa-mcp/McpProxy"
import * as InProcess from "presa-mcp/transport/InProcess"
import * as OAuthLoopback from "presa-mcp/transport/OAuthLoopback"

export const server = McpServer.make({ name: "declaration-consumer", version: "1.0.0" })

export const client = Effect.flatMap(server, (s) => Effect.flatMap(InProcess.client(s), (t) => McpClient.connect(t)))

export const connect = (transport: Transport.ClientTransport) => McpClient.connect(transport)

export const config = McpProxy.loadConfig("proxy.json")

export const interaction = OAuthLoopback.interaction({ open: () => Effect.void })
