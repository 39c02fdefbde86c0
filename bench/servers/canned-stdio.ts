/**
 * The ceiling of the "SDK v2 client → server" stdio rows: a server that does no MCP work at all.
 * It splits stdin into lines, parses each, and answers `server/discover`, `tools/list` and the
 * echo `tools/call` with fixed results (the ones our server gives), in plain Node. Driving it with
 * the SDK v2 client measures what that client and the pipe cost by themselves: no server, ours
 * or anyone's, can make the row's ratio higher than this server's.
 * `node --import tsx bench/servers/canned-stdio.ts`. Exits when stdin ends.
 */
const META = { "io.modelcontextprotocol/serverInfo": { name: "presa-bench", version: "0.0.0" } }
const RESULTS: Record<string, (params: Record<string, unknown> | undefined) => unknown> = {
  "server/discover": () => ({
    resultType: "complete",
    supportedVersions: ["2026-07-28", "2025-11-25", "2025-06-18"],
    capabilities: { tools: {} },
    _meta: META,
    ttlMs: 0,
    cacheScope: "private"
  }),
  "tools/list": () => ({
    resultType: "complete",
    tools: [{
      name: "echo",
      description: "Echoes the text back",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] }
    }],
    _meta: META,
    ttlMs: 0,
    cacheScope: "private"
  }),
  "tools/call": (params) => {
    const args = params?.arguments
    const text = typeof args === "object" && args !== null && "text" in args ? String(args.text) : ""
    return { resultType: "complete", content: [{ type: "text", text }], _meta: META }
  }
}

const answer = (line: string): string | undefined => {
  const message: unknown = JSON.parse(line)
  if (typeof message !== "object" || message === null || !("id" in message) || !("method" in message)) return
  const { id, method } = message
  const params = "params" in message && typeof message.params === "object" && message.params !== null
    ? Object.fromEntries(Object.entries(message.params))
    : undefined
  const result = typeof method === "string" ? RESULTS[method] : undefined
  return JSON.stringify(
    result === undefined
      ? { jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } }
      : { jsonrpc: "2.0", id, result: result(params) }
  )
}

let buffered = ""
process.stdin.setEncoding("utf8")
process.stdin.on("data", (chunk: string) => {
  buffered += chunk
  let out = ""
  let newline = buffered.indexOf("\n")
  while (newline >= 0) {
    const line = buffered.slice(0, newline).trim()
    buffered = buffered.slice(newline + 1)
    const reply = line === "" ? undefined : answer(line)
    if (reply !== undefined) out += reply + "\n"
    newline = buffered.indexOf("\n")
  }
  if (out !== "") process.stdout.write(out)
})
process.stdin.on("end", () => process.exit(0))
