/** protocol.md §19.5: the client leaves out tools whose x-mcp-header annotations are invalid. */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { InProcess, McpClient, McpServer, Tool } from "presa-mcp"

const tool = (name: string, properties: Record<string, unknown>) =>
  Tool.fromJsonSchema({ name, inputSchema: { type: "object", properties }, handler: () => "ok" })

describe("x-mcp-header validation in tools/list", () => {
  it.scoped("keeps valid annotations, drops every kind of invalid one", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "headers",
        version: "1",
        validate: false,
        tools: [
          tool("valid", {
            region: { type: "string", "x-mcp-header": "Region" },
            n: { type: "integer", "x-mcp-header": "N" }
          }),
          tool("plain", { a: { type: "string" } }),
          tool("empty", { a: { type: "string", "x-mcp-header": "" } }),
          tool("number", { a: { type: "number", "x-mcp-header": "Amount" } }),
          tool("object", { a: { type: "object", "x-mcp-header": "Obj" } }),
          tool("dup", { a: { type: "string", "x-mcp-header": "Same" }, b: { type: "string", "x-mcp-header": "same" } }),
          tool("space", { a: { type: "string", "x-mcp-header": "Has Space" } }),
          tool("colon", { a: { type: "string", "x-mcp-header": "a:b" } }),
          tool("unicode", { a: { type: "string", "x-mcp-header": "Région" } }),
          tool("items", { a: { type: "array", items: { type: "string", "x-mcp-header": "Item" } } })
        ]
      })
      const client = yield* McpClient.connect(yield* InProcess.client(server))
      expect((yield* client.listAllTools).map((t) => t.name)).toEqual(["valid", "plain"])
    }))
})
