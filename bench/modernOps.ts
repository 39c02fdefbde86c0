/**
 * Effect operations, fibers and bytes allocated per 2026-07-28 `tools/call` on the server's side,
 * steady figures (they do not move with the machine's load) for the paths `ops.ts` (in-process,
 * through our client) and `httpOps.ts` (legacy HTTP) leave out: `http` (`StreamableHttp.serve`,
 * counted on the listener's fiber as `httpOps.ts` does, with the request metadata headers;
 * allocation includes the `fetch` client) or `dispatch` (`McpServer.handleMessage` in this
 * process), with an echo tool made by `Tool.fromJsonSchema` (`json`) or `Tool.make` (`make`).
 * 3,000 sequential calls after 300 warm-up calls, then 3,000 more under V8's sampling heap profiler.
 *
 *   node --import tsx bench/modernOps.ts http|dispatch json|make
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { McpServer, Tool } from "presa-mcp"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import { OpCounter, sampleAllocations, supervisedBy, totalBytes } from "./lib/measure.js"
import { ECHO_TEXT, MODERN, MODERN_META } from "./lib/shared.js"

const mode = process.argv[2] ?? "http"
const kind = process.argv[3] ?? "json"
const tool = kind === "make"
  ? Tool.make({ name: "echo", parameters: Schema.Struct({ text: Schema.String }), handler: ({ text }) => text })
  : Tool.fromJsonSchema({
    name: "echo",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    handler: (args) => String(args.text)
  })
const counter = new OpCounter()
const scope = Effect.runSync(Scope.make())
const server = await Effect.runPromise(McpServer.make({ name: "ops", version: "0", tools: [tool] }))
const body = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "echo", arguments: { text: ECHO_TEXT }, _meta: MODERN_META }
})
let one: (id: number) => Promise<string>
if (mode === "http") {
  const address = await Effect.runPromise(
    StreamableHttp.serve(server, { port: 0, host: "127.0.0.1" }).pipe(Scope.extend(scope), supervisedBy(counter))
  )
  one = async (id) => {
    const response = await fetch(address.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "echo"
      },
      body: JSON.stringify(body(id))
    })
    return response.text()
  }
} else {
  one = (id) =>
    Effect.runPromise(McpServer.handleMessage(server, body(id)).pipe(supervisedBy(counter))).then((r) =>
      JSON.stringify(r)
    )
}
for (let i = 1; i <= 300; i++) await one(i)
const n = 3000
counter.reset()
for (let i = 0; i < n; i++) {
  const text = await one(1000 + i)
  if (!text.includes(ECHO_TEXT)) throw new Error(text)
}
counter.counting = false
const allocated = totalBytes(
  await sampleAllocations(async () => {
    for (let i = 0; i < n; i++) await one(10_000 + i)
  })
)
console.log(
  `${mode} modern tools/call, ${kind} tool: ${(counter.ops / n).toFixed(1)} Effect ops, ${
    (counter.fibers / n).toFixed(2)
  } fibers; ${(allocated / n / 1024).toFixed(1)} KiB allocated per request (the process${
    mode === "http" ? ", client included" : ""
  })`
)
await Effect.runPromise(Scope.close(scope, Exit.void))
