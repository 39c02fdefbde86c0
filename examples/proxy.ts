/**
 * A proxy in front of two servers, served as one over Streamable HTTP or stdio.
 *
 *   npx tsx examples/proxy.ts                              (http://127.0.0.1:3100/mcp)
 *   npx tsx examples/proxy.ts --port 3200 [--host 127.0.0.1]
 *   npx tsx examples/proxy.ts --stdio
 *   npx tsx examples/proxy.ts --spawn-library              (the library as a child process over stdio)
 *
 * Backends: the reference library (prefix `library`: tools `library_add`, `library_logo`, prompt
 * `library_introduce`, resource `file://library//readme.txt` (its `file:///readme.txt`), template
 * `people://library/{id}`, skill `skill://code-review/SKILL.md`), in process or spawned
 * (`examples/library.ts --stdio`; a child that dies is spawned again), and a small clock server in
 * process (prefix `clock`: tool `clock_now`).
 *
 * In HTTP mode one line with the URL goes to stderr; in stdio mode stdout carries only MCP messages.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { InProcess, McpClient, McpServer, Tool } from "presa-mcp"
import * as McpProxy from "presa-mcp/McpProxy"
import * as Stdio from "presa-mcp/transport/Stdio"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import { makeLibrary } from "./library-definitions.js"

const { values } = parseArgs({
  options: {
    stdio: { type: "boolean", default: false },
    port: { type: "string" },
    host: { type: "string" },
    "spawn-library": { type: "boolean", default: false }
  }
})

const now = Tool.fromJsonSchema({
  name: "now",
  description: "The current time (ISO 8601, UTC).",
  annotations: { readOnlyHint: true },
  handler: () => Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())
})

const makeClock = McpServer.make({ name: "clock", version: "0.1.0", listChanged: true, tools: [now] })

/**
 * The library as a backend: a server in this process, or `examples/library.ts --stdio` as a child
 * (connected again by the proxy when it dies: `connect`).
 */
const connectLibrary = (input: McpProxy.InputOptions) =>
  values["spawn-library"]
    ? Effect.gen(function*() {
      const transport = yield* Stdio.spawn({
        command: process.execPath,
        args: ["--import", "tsx", fileURLToPath(new URL("./library.ts", import.meta.url)), "--stdio"],
        stderr: "inherit"
      })
      return yield* McpClient.connect(transport, input)
    })
    : Effect.flatMap(
      Effect.orDie(makeLibrary), // the definitions are ours: a mistake in them is a defect
      (server) => Effect.flatMap(InProcess.client(server), (transport) => McpClient.connect(transport, input))
    )

const makeProxy = Effect.gen(function*() {
  const library = yield* connectLibrary(McpProxy.inputHandlers)
  const clock = yield* McpClient.connect(yield* InProcess.client(yield* makeClock), McpProxy.inputHandlers)
  return yield* McpProxy.make([{ prefix: "library", client: library, connect: connectLibrary }, {
    prefix: "clock",
    client: clock
  }], {
    name: "presa-proxy-example",
    version: "0.1.0",
    pingInterval: "30 seconds"
  })
})

if (values.stdio) {
  NodeRuntime.runMain(
    Effect.flatMap(makeProxy, (proxy) => Stdio.run(proxy)).pipe(
      Effect.scoped,
      // stdout is the wire: a startup failure is logged (on stderr), never reported by runMain
      Effect.catchAll((e) =>
        Effect.logError(`the proxy could not start: ${e.message}`).pipe(
          Effect.zipRight(Effect.sync(() => {
            process.exitCode = 1
          }))
        )
      ),
      Effect.provide(Stdio.layerLogger)
    ),
    { disablePrettyLogger: true }
  )
} else {
  const port = Number(values.port ?? process.env.PORT ?? 3100)
  const host = values.host ?? process.env.HOST ?? "127.0.0.1"
  const main = Effect.gen(function*() {
    const proxy = yield* makeProxy
    const address = yield* StreamableHttp.serve(proxy, { port, host })
    yield* Console.error(`presa proxy listening on ${address.url}`)
    return yield* Effect.never
  }).pipe(Effect.scoped)
  NodeRuntime.runMain(main)
}
