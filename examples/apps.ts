/**
 * An MCP Apps server (examples/apps-definitions.ts) over stdio or Streamable HTTP.
 *
 *   npx tsx examples/apps.ts --stdio
 *   npx tsx examples/apps.ts [--port 3000] [--host 127.0.0.1]        (PORT / HOST env too)
 *   ... --connect-domain https://api.example.com                     (repeatable: the view's CSP)
 *
 * HTTP is the default. In HTTP mode one line with the URL goes to stderr; SIGINT/SIGTERM stop it.
 * In stdio mode stdout carries only MCP messages. See it rendered: `presa-mcp app` (docs/apps.md).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { parseArgs } from "node:util"
import { makeAppsServer } from "./apps-definitions.js"

const { values } = parseArgs({
  options: {
    stdio: { type: "boolean", default: false },
    http: { type: "boolean", default: false },
    port: { type: "string" },
    host: { type: "string" },
    "connect-domain": { type: "string", multiple: true }
  }
})
const connectDomains = values["connect-domain"] ?? []

if (values.stdio) {
  const Stdio = await import("presa-mcp/transport/Stdio")
  NodeRuntime.runMain(Effect.flatMap(makeAppsServer(connectDomains), (server) => Stdio.run(server)), {
    disablePrettyLogger: true
  })
} else {
  const StreamableHttp = await import("presa-mcp/transport/StreamableHttp")
  const port = Number(values.port ?? process.env.PORT ?? 3000)
  const host = values.host ?? process.env.HOST ?? "127.0.0.1"
  const main = Effect.gen(function*() {
    const server = yield* makeAppsServer(connectDomains)
    const address = yield* StreamableHttp.serve(server, { port, host })
    yield* Console.error(`presa-apps MCP server listening on ${address.url}`)
    return yield* Effect.never
  }).pipe(
    Effect.scoped,
    Effect.catchTag("ServeError", (e) =>
      Console.error(`cannot listen on ${host}:${port}: ${String(e.cause)}`).pipe(
        Effect.zipRight(Effect.sync(() => {
          process.exitCode = 1
        }))
      ))
  )
  NodeRuntime.runMain(main)
}
