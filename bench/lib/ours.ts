/**
 * The benchmark server built with our library (the same definitions in every suite). It imports
 * the modules it uses (`presa-mcp/McpServer`, …), as a server would: the package root re-exports
 * every module, client and proxy included.
 */
import type * as Effect from "effect/Effect"
import * as McpServer from "presa-mcp/McpServer"
import * as Resource from "presa-mcp/Resource"
import * as Tool from "presa-mcp/Tool"
import {
  BLOB_MIME,
  BLOB_URI,
  ECHO_INPUT_SCHEMA,
  makeBlob,
  type ServerArgs,
  toolDescription,
  toolName
} from "./shared.js"

const echoHandler = (args: { readonly [key: string]: unknown }): string =>
  typeof args.text === "string" ? args.text : ""

export const makeServer = (
  args: ServerArgs = { tools: 0, pageSize: undefined, blobBytes: 0 }
): Effect.Effect<McpServer.McpServer, McpServer.DefinitionError> => {
  const tools: Array<Tool.Tool> = [
    Tool.fromJsonSchema({
      name: "echo",
      description: "Echoes the text back",
      inputSchema: ECHO_INPUT_SCHEMA,
      handler: echoHandler
    })
  ]
  for (let i = 0; i < args.tools; i++) {
    tools.push(Tool.fromJsonSchema({
      name: toolName(i),
      description: toolDescription(i),
      inputSchema: ECHO_INPUT_SCHEMA,
      handler: echoHandler
    }))
  }
  const resources: Array<Resource.Resource> = []
  if (args.blobBytes > 0) {
    const blob = makeBlob(args.blobBytes)
    resources.push(Resource.make({ uri: BLOB_URI, name: "blob", mimeType: BLOB_MIME, handler: () => blob }))
  }
  return McpServer.make({
    name: "presa-bench",
    version: "0.0.0",
    tools,
    resources,
    ...(args.pageSize === undefined ? {} : { pageSize: args.pageSize })
  })
}
