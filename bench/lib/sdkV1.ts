/** The benchmark server written with the official SDK v1 (`@modelcontextprotocol/sdk` 1.32, legacy only). */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import * as z from "zod"
import { BLOB_MIME, BLOB_URI, makeBlob, type ServerArgs, toolDescription, toolName } from "./shared.js"

const echoInput = { text: z.string() }

export const makeServerFactory = (
  args: ServerArgs = { tools: 0, pageSize: undefined, blobBytes: 0 }
): () => McpServer => {
  const blob = args.blobBytes > 0 ? makeBlob(args.blobBytes) : undefined
  return () => {
    const server = new McpServer({ name: "sdk-v1-bench", version: "1.32.2" })
    server.registerTool(
      "echo",
      { description: "Echoes the text back", inputSchema: echoInput },
      ({ text }) => ({ content: [{ type: "text", text }] })
    )
    for (let i = 0; i < args.tools; i++) {
      server.registerTool(
        toolName(i),
        { description: toolDescription(i), inputSchema: echoInput },
        ({ text }) => ({ content: [{ type: "text", text }] })
      )
    }
    if (blob !== undefined) {
      server.registerResource("blob", BLOB_URI, { mimeType: BLOB_MIME }, (uri) => ({
        contents: [{
          uri: uri.href,
          mimeType: BLOB_MIME,
          blob: Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength).toString("base64")
        }]
      }))
    }
    return server
  }
}
