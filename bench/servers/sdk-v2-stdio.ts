/**
 * Benchmark server, official SDK v2 on stdio (`serveStdio`: the opening message picks the era):
 * `node --import tsx bench/servers/sdk-v2-stdio.ts [--tools N] [--blob-bytes N]`. Exits when stdin ends.
 */
import { serveStdio } from "@modelcontextprotocol/server/stdio"
import { makeServerFactory } from "../lib/sdkV2.js"
import { parseServerArgs } from "../lib/shared.js"

const factory = makeServerFactory(parseServerArgs(process.argv.slice(2)))
const handle = serveStdio(factory, { onerror: (error) => process.stderr.write(`[sdk-v2-stdio] ${error.message}\n`) })
process.stdin.on("end", () => {
  void handle.close().finally(() => process.exit(0))
})
