/**
 * Benchmark server, official SDK v2 on HTTP: `createMcpHandler` (modern stateless; 2025-era
 * requests get its stateless legacy fallback) + `toNodeHandler`, with the SDK's localhost Host /
 * Origin validation (ours checks both too). Prints `LISTENING <url>` on stderr; SIGTERM stops it.
 */
import {
  localhostHostValidation,
  localhostOriginValidation,
  type NodeIncomingMessageLike,
  toNodeHandler
} from "@modelcontextprotocol/node"
import { createMcpHandler } from "@modelcontextprotocol/server"
import * as Http from "node:http"
import { makeServerFactory } from "../lib/sdkV2.js"
import { parseServerArgs } from "../lib/shared.js"

const log = (line: string): void => {
  process.stderr.write(`[sdk-v2-http] ${line}\n`)
}

const handler = createMcpHandler(makeServerFactory(parseServerArgs(process.argv.slice(2))), {
  onerror: (error) => log(error.message)
})
const node = toNodeHandler(handler, { onerror: (error) => log(error.message) })
const validateHost = localhostHostValidation()
const validateOrigin = localhostOriginValidation()

/** `IncomingMessage` → the adapter's structural request shape (exactOptionalPropertyTypes). */
const incoming = (req: Http.IncomingMessage): NodeIncomingMessageLike => ({
  method: req.method ?? "GET",
  url: req.url ?? "/",
  headers: req.headers,
  [Symbol.asyncIterator]: () => req[Symbol.asyncIterator]()
})

const httpServer = Http.createServer((req, res) => {
  if (req.url !== "/mcp") {
    res.writeHead(404).end()
    return
  }
  if (!validateHost(req, res) || !validateOrigin(req, res)) return
  node(incoming(req), res).catch((error: unknown) => {
    log(`request failed: ${String(error)}`)
    if (!res.headersSent) res.writeHead(500)
    res.end()
  })
})
httpServer.listen(0, "127.0.0.1", () => {
  const address = httpServer.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  process.stderr.write(`LISTENING http://127.0.0.1:${port}/mcp\n`)
})
process.on("SIGTERM", () => {
  void handler.close()
  httpServer.close(() => process.exit(0))
  httpServer.closeAllConnections()
})
