/**
 * Benchmark server, official SDK v1 on stdio (legacy revisions only):
 * `node --import tsx bench/servers/sdk-v1-stdio.ts [--tools N] [--blob-bytes N]`. Exits when stdin ends.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { makeServerFactory } from "../lib/sdkV1.js"
import { parseServerArgs } from "../lib/shared.js"

const server = makeServerFactory(parseServerArgs(process.argv.slice(2)))()
const transport = new StdioServerTransport()
transport.onclose = () => process.exit(0)
process.stdin.on("end", () => process.exit(0))
await server.connect(transport)
