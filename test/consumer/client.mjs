// Spawns server.mjs with plain `node`, calls its tool over stdio and prints one JSON line:
// {era, protocolVersion, server, tools, structuredContent}. Exits 1 on any failure.
import * as Effect from "effect/Effect"
import { fileURLToPath } from "node:url"
import { McpClient } from "presa-mcp"
import * as Stdio from "presa-mcp/transport/Stdio"

const serverFile = fileURLToPath(new URL("./server.mjs", import.meta.url))

const program = Effect.gen(function*() {
  const transport = yield* Stdio.spawn({ command: process.execPath, args: [serverFile] })
  const client = yield* McpClient.connect(transport)
  const tools = (yield* client.listAllTools).map((t) => t.name)
  const result = yield* client.callTool("add", { numbers: [1, 2, 3] })
  return {
    era: client.info.era,
    protocolVersion: client.info.protocolVersion,
    server: client.info.serverInfo?.name,
    tools,
    structuredContent: result.structuredContent
  }
}).pipe(Effect.scoped, Effect.timeout("60 seconds"))

Effect.runPromise(program).then(
  (out) => console.log(JSON.stringify(out)),
  (error) => {
    console.error(error)
    process.exitCode = 1
  }
)
