/**
 * stdio: `tools/call` round trips per second over a pipe to a separate server process, sequential
 * and with 32 calls in flight. Each library's own client drives its own server (ours: `Stdio.spawn`
 * + `McpClient`; SDK: its `Client` + `StdioClientTransport`); the cross pairing SDK v2 client →
 * our server, compared with SDK v2 client → SDK v2 server, isolates the server + transport side.
 * The same client against `canned-stdio.ts` (a server that does no MCP work: it parses each line
 * and answers a fixed result) gives that pairing's ceiling: what the SDK v2 client and the pipe
 * cost by themselves, so the highest ratio any server can reach on those rows.
 * Ours and SDK v2 speak 2026-07-28, SDK v1 2025-11-25; against SDK v1 there are two rows: ours
 * speaking 2026-07-28, and `ours-2025` (our client pinned to 2025-11-25, SDK v1's revision) for
 * the like-for-like row that issue #24's 2025-era target reads.
 */
import { Client as ClientV2 } from "@modelcontextprotocol/client"
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { McpClient } from "presa-mcp"
import * as Stdio from "presa-mcp/transport/Stdio"
import { best, type Contender, interleave, roundsOf } from "../lib/compare.js"
import { effectBounded } from "../lib/effectLoop.js"
import { type Bounds, type Row, row, runBounded, serverCommand, type Throughput, withTimeout } from "../lib/harness.js"
import { ECHO_TEXT, isEcho, LEGACY, MODERN } from "../lib/shared.js"

const WARMUP: Bounds = { maxMs: 1000, maxCount: 20_000 }
const ROUND: Bounds = { maxMs: 800, maxCount: 100_000 }
const ROUNDS = 5
const IN_FLIGHT = 32
const CONNECT_TIMEOUT = 15_000

interface Round {
  readonly sequential: Throughput
  readonly concurrent: Throughput
}

/** A contender whose calls are Promises (the SDK clients). */
const promiseContender = (
  name: string,
  connect: () => Promise<{ readonly call: () => Promise<unknown>; readonly close: () => Promise<void> }>
): Contender<Round> => ({
  name,
  open: async () => {
    const { call, close } = await withTimeout(connect(), CONNECT_TIMEOUT, `${name} connect`)
    const first = await call()
    if (!isEcho(first)) throw new Error(`${name}: unexpected result ${JSON.stringify(first)}`)
    await runBounded(call, IN_FLIGHT, WARMUP)
    return {
      measure: async () => ({
        sequential: await runBounded(call, 1, ROUND),
        concurrent: await runBounded(call, IN_FLIGHT, ROUND)
      }),
      close
    }
  }
})

const sdkV2 = (name: string, script: string): Contender<Round> =>
  promiseContender(name, async () => {
    const { args, command } = serverCommand(script)
    const client = new ClientV2({ name: "presa-bench", version: "0.0.0" }, {
      versionNegotiation: { mode: { pin: MODERN } }
    })
    await client.connect(new StdioV2({ command, args, stderr: "pipe" }))
    if (client.getProtocolEra() !== "modern") throw new Error(`${name}: not modern`)
    return {
      call: () => client.callTool({ name: "echo", arguments: { text: ECHO_TEXT } }),
      close: () => client.close()
    }
  })

const sdkV1: Contender<Round> = promiseContender("sdk-v1", async () => {
  const { args, command } = serverCommand("sdk-v1-stdio.ts")
  const client = new ClientV1({ name: "presa-bench", version: "0.0.0" })
  await client.connect(new StdioV1({ command, args, stderr: "pipe" }))
  return {
    call: () => client.callTool({ name: "echo", arguments: { text: ECHO_TEXT } }),
    close: () => client.close()
  }
})

/**
 * Our client and server speaking `version` (checked): the client with its default options for
 * 2026-07-28 (which it negotiates first), pinned with `versions` for 2025-11-25.
 */
const oursOf = (name: string, version: typeof MODERN | typeof LEGACY): Contender<Round> => ({
  name,
  open: async () => {
    const scope = Effect.runSync(Scope.make())
    const { args, command } = serverCommand("ours-stdio.ts")
    const client = await withTimeout(
      Effect.runPromise(
        Stdio.spawn({ command, args, stderr: () => Effect.void }).pipe(
          Effect.flatMap((transport) =>
            McpClient.connect(transport, version === MODERN ? {} : { versions: [version] })
          ),
          Scope.extend(scope)
        )
      ),
      CONNECT_TIMEOUT,
      `${name} connect`
    )
    if (client.info.protocolVersion !== version) {
      throw new Error(`${name} stdio client: speaks ${client.info.protocolVersion}, not ${version}`)
    }
    const call = client.callTool("echo", { text: ECHO_TEXT })
    if (!isEcho(await Effect.runPromise(call))) throw new Error(`${name} stdio client: unexpected result`)
    await Effect.runPromise(effectBounded(call, IN_FLIGHT, WARMUP))
    return {
      measure: () =>
        Effect.runPromise(Effect.all({
          sequential: effectBounded(call, 1, ROUND),
          concurrent: effectBounded(call, IN_FLIGHT, ROUND)
        })),
      close: () => Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
})

const seq = (r: Round): number => r.sequential.perSecond
const conc = (r: Round): number => r.concurrent.perSecond

export const run = async (): Promise<Array<Row>> => {
  const results = await interleave(
    "stdio",
    [
      oursOf("ours", MODERN),
      oursOf("ours-2025", LEGACY),
      sdkV2("sdk-v2", "sdk-v2-stdio.ts"),
      sdkV1,
      sdkV2("sdk-v2→ours", "ours-stdio.ts"),
      sdkV2("sdk-v2→canned", "canned-stdio.ts")
    ],
    ROUNDS,
    (r) => `${seq(r).toFixed(0)} seq, ${conc(r).toFixed(0)} ×${IN_FLIGHT}`
  )
  const pair = (oursName: string, officialName: string, figure: string, note: string): Array<Row> => {
    const o = roundsOf(results, oursName)
    const f = roundsOf(results, officialName)
    return ([["sequential", seq], [`${IN_FLIGHT} in flight`, conc]] as const).map(([mode, get]) =>
      row({
        suite: "stdio",
        figure: `${figure}, ${mode}`,
        unit: "calls/s",
        better: "higher",
        ours: best(o, get, "higher"),
        official: best(f, get, "higher"),
        officialName,
        note,
        oursRounds: o.map(get),
        officialRounds: f.map(get)
      })
    )
  }
  return [
    ...pair(
      "ours",
      "sdk-v2",
      "own client ↔ own server",
      "ours: Stdio.spawn + McpClient; v2: Client pinned to 2026-07-28"
    ),
    ...pair(
      "ours",
      "sdk-v1",
      "own client ↔ own server",
      "ours 2026-07-28 (the _meta envelope on every request) vs v1 2025-11-25: Client + StdioClientTransport"
    ),
    ...pair(
      "ours-2025",
      "sdk-v1",
      "own client ↔ own server, both 2025-11-25",
      "ours: Stdio.spawn + McpClient with versions [2025-11-25]; v1: Client + StdioClientTransport"
    ),
    ...pair(
      "sdk-v2→ours",
      "sdk-v2",
      "SDK v2 client → server",
      "same client (SDK v2, 2026-07-28): ours = our server, official = SDK v2 server"
    ),
    ...pair(
      "sdk-v2→canned",
      "sdk-v2",
      "ceiling: SDK v2 client → canned server",
      "same client; ours = canned-stdio.ts (no MCP work, fixed replies): the highest ratio any server reaches on the row above"
    )
  ]
}
