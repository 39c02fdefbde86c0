/**
 * Where a stdio round trip's CPU goes, per side: each library's own client drives its own stdio
 * server (as the `stdio` suite's "own client ↔ own server" rows do), 2 s of warm-up then 4 s
 * measured, and it prints the calls/s and the user and system µs per call of the client process
 * (this one) and of the server process (all its threads, from /proc). The sequential row's time
 * per call is about the sum of both sides plus two wake-ups, so this tells which side a gap is on.
 * `ours-2025`: our client pinned to 2025-11-25 (SDK v1's revision), against the same server.
 * Linux only.
 *
 *   npm run build && npx tsc -p tsconfig.bench.json
 *   TSX_TSCONFIG_PATH=tsconfig.bench.json node --import tsx bench/pairCpu.ts ours|ours-2025|sdk-v1|sdk-v2 [in flight, default 1]
 */
import { Client as ClientV2 } from "@modelcontextprotocol/client"
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { readdirSync, readFileSync } from "node:fs"
import { McpClient } from "presa-mcp"
import * as Stdio from "presa-mcp/transport/Stdio"
import { effectBounded } from "./lib/effectLoop.js"
import { readCpuMicros, runBounded, serverCommand, type Throughput } from "./lib/harness.js"
import { ECHO_TEXT, LEGACY, MODERN } from "./lib/shared.js"

const which = process.argv[2] ?? "ours"
const inFlight = Number(process.argv[3] ?? 1)
const call = { name: "echo", arguments: { text: ECHO_TEXT } }

const connect = async (): Promise<
  { readonly run: (ms: number) => Promise<Throughput>; readonly close: () => Promise<void> }
> => {
  if (which === "ours" || which === "ours-2025") {
    const scope = Effect.runSync(Scope.make())
    const { args, command } = serverCommand("ours-stdio.ts")
    const client = await Effect.runPromise(
      Stdio.spawn({ command, args, stderr: () => Effect.void }).pipe(
        Effect.flatMap((transport) =>
          McpClient.connect(transport, which === "ours-2025" ? { versions: [LEGACY] } : {})
        ),
        Scope.extend(scope)
      )
    )
    const op = client.callTool(call.name, call.arguments)
    return {
      run: (ms) => Effect.runPromise(effectBounded(op, inFlight, { maxMs: ms, maxCount: 10_000_000 })),
      close: () => Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
  if (which === "sdk-v1" || which === "sdk-v2") {
    const { args, command } = serverCommand(`${which}-stdio.ts`)
    const client = which === "sdk-v1"
      ? new ClientV1({ name: "presa-bench", version: "0.0.0" })
      : new ClientV2({ name: "presa-bench", version: "0.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } })
    await client.connect(
      which === "sdk-v1"
        ? new StdioV1({ command, args, stderr: "pipe" })
        : new StdioV2({ command, args, stderr: "pipe" })
    )
    return {
      run: (ms) => runBounded(() => client.callTool(call), inFlight, { maxMs: ms, maxCount: 10_000_000 }),
      close: () => client.close()
    }
  }
  throw new Error(`unknown pair ${which}: ours, ours-2025, sdk-v1 or sdk-v2`)
}

/** The pids of this process's children (the server). */
const children = (): Array<number> =>
  readdirSync("/proc/self/task").flatMap((tid) =>
    readFileSync(`/proc/self/task/${tid}/children`, "utf8").trim().split(" ").filter((s) => s !== "").map(Number)
  )

const pair = await connect()
const [server] = children()
if (server === undefined) throw new Error("no server process")
await pair.run(2000)
const client0 = process.cpuUsage()
const server0 = readCpuMicros(`/proc/${server}/stat`)
const t = await pair.run(4000)
const client = process.cpuUsage(client0)
const server1 = readCpuMicros(`/proc/${server}/stat`)
const perCall = (us: number) => (us / t.count).toFixed(1)
console.log(
  `${which}, ${inFlight} in flight: ${t.perSecond.toFixed(0)} calls/s; client user ${perCall(client.user)} µs, system ${
    perCall(client.system)
  } µs per call; server user ${perCall(server1.user - server0.user)} µs, system ${
    perCall(server1.system - server0.system)
  } µs per call`
)
await pair.close()
process.exit(0)
