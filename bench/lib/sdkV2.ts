/** The benchmark server written with the official SDK v2 (`@modelcontextprotocol/server` 2.4). */
import { McpServer } from "@modelcontextprotocol/server"
import * as z from "zod"
import { BLOB_MIME, BLOB_URI, makeBlob, type ServerArgs, toolDescription, toolName } from "./shared.js"

const echoInput = z.object({ text: z.string() })

export const makeServerFactory = (
  args: ServerArgs = { tools: 0, pageSize: undefined, blobBytes: 0 }
): () => McpServer => {
  const blob = args.blobBytes > 0 ? makeBlob(args.blobBytes) : undefined
  return () => {
    const server = new McpServer({ name: "sdk-v2-bench", version: "2.4.0" })
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
          // encoded per call, as ours does from the handler's Uint8Array
          blob: Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength).toString("base64")
        }]
      }))
    }
    return server
  }
}
