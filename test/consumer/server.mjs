// A stdio MCP server as a consumer writes it in plain JavaScript: run with `node server.mjs`
// (no loader); the package resolves through its `exports` map to dist/.
import { NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { McpServer, Tool } from "presa-mcp"
import * as Stdio from "presa-mcp/transport/Stdio"

const add = Tool.make({
  name: "add",
  parameters: Schema.Struct({ numbers: Schema.Array(Schema.Number) }),
  success: Schema.Struct({ sum: Schema.Number }),
  handler: ({ numbers }) => Effect.succeed({ sum: numbers.reduce((a, n) => a + n, 0) })
})

NodeRuntime.runMain(
  Effect.flatMap(McpServer.make({ name: "consumer-server", version: "1.0.0", tools: [add] }), (server) =>
    Stdio.run(server)),
  { disablePrettyLogger: true }
)
