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
import { OpCounter, printSites, sampleAllocations, supervisedBy, totalBytes } from "./lib/measure.js"
import { makeServer } from "./lib/ours.js"
import { ECHO_TEXT } from "./lib/shared.js"

const mode = process.argv[2] ?? "inprocess"
const calls = Math.min(100_000, Math.max(100, Number(process.argv[3] ?? 5000)))

// OPS_TRACE=1: print each operation of one call after the warm-up (stderr).
let tracing = false
const counter = new OpCounter((effect) => {
  if (!tracing) return
  const e = effect as { _op?: string; effect_instruction_i0?: unknown; effect_instruction_i1?: unknown }
  const f = (u: unknown) => typeof u === "function" ? String(u).slice(0, 100).replace(/\s+/g, " ") : ""
  process.stderr.write(`  ${e._op} ${f(e.effect_instruction_i0)} | ${f(e.effect_instruction_i1)}\n`)
})

// The server is built outside the client's Scope, as `bench/suites/core.ts` and `hot.ts` build it:
// a Scope in the environment `make` captures would be provided to every request.
// OPS_SERVER_IN_SCOPE=1: built inside it (an app's server, whose Layer has a Scope), and the calls
// made in the Scope's environment.
const scope = Effect.runSync(Scope.make())
const server = await Effect.runPromise(
  process.env.OPS_SERVER_IN_SCOPE === undefined ? makeServer() : makeServer().pipe(Scope.extend(scope))
)
const client = await Effect.runPromise(
  Effect.gen(function*() {
    if (mode === "stdio") {
      const { args, command } = serverCommand("ours-stdio.ts", [], "ops-stdio-server")
      return yield* McpClient.connect(yield* Stdio.spawn({ command, args, stderr: () => Effect.void }))
    }
    return yield* McpClient.connect(yield* InProcess.client(server))
  }).pipe(Scope.extend(scope))
)
const one = client.callTool("echo", { text: ECHO_TEXT })
// With OPS_SERVER_IN_SCOPE=1 the calls run in the Scope's environment too (an app whose server and
// callers share its Scope), provided once per loop.
const inScope = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  process.env.OPS_SERVER_IN_SCOPE === undefined ? effect : Effect.provideService(effect, Scope.Scope, scope)
const loop = inScope(Effect.gen(function*() {
  for (let i = 0; i < calls; i++) yield* one
}))
await Effect.runPromise(Effect.gen(function*() {
  for (let i = 0; i < 500; i++) yield* one
}))

await Effect.runPromise(loop.pipe(supervisedBy(counter)))

if (process.env.OPS_TRACE !== undefined) {
  counter.counting = false
  tracing = true
  await Effect.runPromise(one.pipe(supervisedBy(counter)))
  tracing = false
}

const allocated = await sampleAllocations(() => Effect.runPromise(loop))

// OPS_SITES=1: the allocation sites (function, file:line) by bytes per call (stderr).
if (process.env.OPS_SITES !== undefined) printSites(allocated, calls, 50)

console.log(
  `${mode} callTool: ${(counter.ops / calls).toFixed(1)} Effect ops, ${(counter.fibers / calls).toFixed(2)} fibers, ` +
    `${(totalBytes(allocated) / calls / 1024).toFixed(1)} KiB allocated per call (this process)`
)
await Effect.runPromise(Scope.close(scope, Exit.void))
