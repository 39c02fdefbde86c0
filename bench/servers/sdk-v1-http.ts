/**
 * Benchmark server, official SDK v1 on HTTP with sessions: one `StreamableHTTPServerTransport`
 * (`sessionIdGenerator: randomUUID`, `enableJsonResponse: true`) per `initialize`, looked up by
 * `Mcp-Session-Id`. Prints `LISTENING <url>` on stderr; SIGTERM stops it.
 */
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js"
import { randomUUID } from "node:crypto"
import * as Http from "node:http"
import { makeServerFactory } from "../lib/sdkV1.js"
import { parseServerArgs } from "../lib/shared.js"

const makeServer = makeServerFactory(parseServerArgs(process.argv.slice(2)))
const sessions = new Map<string, StreamableHTTPServerTransport>()

const readBody = (req: Http.IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

const fail = (res: Http.ServerResponse, status: number, code: number, message: string): void => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }))
}

const handle = async (req: Http.IncomingMessage, res: Http.ServerResponse): Promise<void> => {
  if (req.url !== "/mcp") return void res.writeHead(404).end()
  const header = req.headers["mcp-session-id"]
  const sessionId = Array.isArray(header) ? header[0] : header
  const existing = sessionId === undefined ? undefined : sessions.get(sessionId)
  if (req.method !== "POST") {
    if (existing === undefined) return fail(res, 400, -32000, "No session")
    return existing.handleRequest(req, res)
  }
  let body: unknown
  try {
    body = JSON.parse(await readBody(req))
  } catch {
    return fail(res, 400, -32700, "Parse error")
  }
  if (existing !== undefined) return existing.handleRequest(req, res, body)
  if (sessionId !== undefined) return fail(res, 404, -32001, "Session not found")
  if (!isInitializeRequest(body)) return fail(res, 400, -32000, "Bad Request: no session and not initialize")
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: true,
    onsessioninitialized: (id) => {
      sessions.set(id, transport)
    }
  })
  transport.onclose = () => {
    if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
  }
  await makeServer().connect(transport)
  await transport.handleRequest(req, res, body)
}

const httpServer = Http.createServer((req, res) => {
  handle(req, res).catch((error: unknown) => {
    process.stderr.write(`[sdk-v1-http] request failed: ${String(error)}\n`)
    if (!res.headersSent) fail(res, 500, -32603, "Internal error")
    else res.end()
  })
})
httpServer.listen(0, "127.0.0.1", () => {
  const address = httpServer.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  process.stderr.write(`LISTENING http://127.0.0.1:${port}/mcp\n`)
})
process.on("SIGTERM", () => {
  for (const transport of sessions.values()) void transport.close()
  httpServer.close(() => process.exit(0))
  httpServer.closeAllConnections()
})
