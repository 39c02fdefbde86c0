// A CommonJS consumer. Node >= 20.19 (and >= 22.12) loads the ES module package with require();
// older Node refuses with ERR_REQUIRE_ESM, the documented outcome there (README "Install").
// Prints one JSON line; exits 1 on anything else.
/* eslint-disable @typescript-eslint/no-require-imports, no-console -- a CommonJS program that prints its result */
"use strict"

const [major, minor] = process.versions.node.split(".").map(Number)
const requireEsm = major >= 23 || (major === 22 && minor >= 12) || (major === 20 && minor >= 19)

let presa
try {
  presa = require("presa-mcp")
} catch (error) {
  if (!requireEsm && error.code === "ERR_REQUIRE_ESM") {
    console.log(JSON.stringify({ require: "ERR_REQUIRE_ESM", node: process.versions.node }))
    process.exit(0)
  }
  throw error
}
const Effect = require("effect/Effect")
const Stdio = require("presa-mcp/transport/Stdio")
const { InProcess, McpClient, McpServer, Tool } = presa

const echo = Tool.fromJsonSchema({ name: "echo", handler: (args) => Effect.succeed(String(args.text)) })
const program = Effect.gen(function*() {
  const server = yield* McpServer.make({ name: "cjs", version: "1.0.0", tools: [echo] })
  const client = yield* McpClient.connect(yield* InProcess.client(server))
  const result = yield* client.callTool("echo", { text: "from require" })
  return { require: "ok", node: process.versions.node, era: client.info.era, text: result.content[0].text }
}).pipe(Effect.scoped)

if (typeof Stdio.spawn !== "function") throw new Error("presa-mcp/transport/Stdio: no spawn")
Effect.runPromise(program).then(
  (out) => console.log(JSON.stringify(out)),
  (error) => {
    console.error(error)
    process.exitCode = 1
  }
)
