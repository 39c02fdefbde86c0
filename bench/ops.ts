/**
 * Counts what one `McpClient.callTool` costs in this process, as steady figures next to
 * `hot.ts`'s µs of CPU (which swing with the machine's load): Effect operations run (every step of
 * every fiber, through a `Supervisor` with op supervision on), fibers started, and bytes allocated
 * (V8's sampling heap profiler, including objects already collected).
 *
 *   npm run build && npx tsc -p tsconfig.bench.json
 *   TSX_TSCONFIG_PATH=tsconfig.bench.json node --import tsx bench/ops.ts inprocess|stdio [calls]
 *
 * `inprocess`: our client and server (`InProcess.client`), both counted. `stdio`: our client only
 * (the server is the spawned `ours-stdio.ts`).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { McpClient } from "presa-mcp"
import * as InProcess from "presa-mcp/transport/InProcess"
import * as Stdio from "presa-mcp/transport/Stdio"
import { serverCommand } from "./lib/harness.js"
import { OpCounter, sampleAllocations, supervisedBy, totalBytes } from "./lib/measure.js"
import { makeServer } from "./lib/ours.js"
import { ECHO_TEXT } from "./lib/shared.js"

const mode = process.argv[2] ?? "inprocess"
const calls = Math.min(100_000, Math.max(100, Number(process.argv[3] ?? 5000)))

const counter = new OpCounter()

const scope = Effect.runSync(Scope.make())
const client = await Effect.runPromise(
  Effect.gen(function*() {
    if (mode === "stdio") {
      const { args, command } = serverCommand("ours-stdio.ts", [], "ops-stdio-server")
      return yield* McpClient.connect(yield* Stdio.spawn({ command, args, stderr: () => Effect.void }))
    }
    return yield* McpClient.connect(yield* InProcess.client(yield* makeServer()))
  }).pipe(Scope.extend(scope))
)
const one = client.callTool("echo", { text: ECHO_TEXT })
const loop = Effect.gen(function*() {
  for (let i = 0; i < calls; i++) yield* one
})
await Effect.runPromise(Effect.gen(function*() {
  for (let i = 0; i < 500; i++) yield* one
}))

await Effect.runPromise(loop.pipe(supervisedBy(counter)))

const allocated = await sampleAllocations(() => Effect.runPromise(loop))

console.log(
  `${mode} callTool: ${(counter.ops / calls).toFixed(1)} Effect ops, ${(counter.fibers / calls).toFixed(2)} fibers, ` +
    `${(totalBytes(allocated) / calls / 1024).toFixed(1)} KiB allocated per call (this process)`
)
await Effect.runPromise(Effect.andThen(client.close, Scope.close(scope, Exit.void)))
