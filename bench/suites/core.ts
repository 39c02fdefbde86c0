/**
 * core: in-process `tools/call` round trips per second, sequential, no I/O. Each contender runs in
 * a process of its own (`bench/servers/core-contender.ts`, via `bench/lib/isolated.ts`), so no
 * library's heap and GC land in another's rounds; the rounds still alternate between them.
 *
 * - server only: ours = `McpServer.handleMessage` on a pre-built 2026-07-28 request; SDK v2 =
 *   `serveStdio(factory, {transport})` over the SDK's `InMemoryTransport` pair; SDK v1 =
 *   `McpServer.connect(InMemoryTransport)` (2025-11-25).
 * - client + server: ours = `McpClient` over `InProcess.client` (which JSON-encodes and parses
 *   every message both ways); SDK = its `Client` over `InMemoryTransport` (objects passed by
 *   reference, no serialisation).
 */
import { best, type Contender, interleave, roundsOf } from "../lib/compare.js"
import { type Row, row, type Throughput } from "../lib/harness.js"
import { isolated } from "../lib/isolated.js"

const ROUNDS = 6

const contender = (group: "server-only" | "client-server", name: string): Contender<Throughput> =>
  isolated(name, "core-contender.ts", [group, name])

const perSecond = (t: Throughput): number => t.perSecond
const describe = (t: Throughput): string => t.perSecond.toFixed(0)

export const run = async (): Promise<Array<Row>> => {
  const serverOnly = await interleave(
    "core server-only",
    ["ours", "ours+tracer", "sdk-v2", "sdk-v1"].map((name) => contender("server-only", name)),
    ROUNDS,
    describe
  )
  const both = await interleave(
    "core client+server",
    ["ours", "sdk-v2", "sdk-v1"].map((name) => contender("client-server", name)),
    ROUNDS,
    describe
  )
  const base = { suite: "core", unit: "calls/s", better: "higher" } as const
  const pair = (
    results: typeof serverOnly,
    figure: string,
    official: "sdk-v2" | "sdk-v1",
    note: string
  ): Row => {
    const o = roundsOf(results, "ours")
    const f = roundsOf(results, official)
    return row({
      ...base,
      figure,
      ours: best(o, perSecond, "higher"),
      official: best(f, perSecond, "higher"),
      officialName: official,
      note,
      oursRounds: o.map(perSecond),
      officialRounds: f.map(perSecond)
    })
  }
  return [
    pair(
      serverOnly,
      "server only: tools/call round trips, sequential",
      "sdk-v2",
      "ours: McpServer.handleMessage, 2026-07-28; v2: serveStdio({transport: InMemoryTransport}), raw requests"
    ),
    row({
      ...base,
      figure: "server only, exporting tracer on (OTel SDK, batching, in-memory exporter)",
      ours: best(roundsOf(serverOnly, "ours+tracer"), perSecond, "higher"),
      official: best(roundsOf(serverOnly, "sdk-v2"), perSecond, "higher"),
      officialName: "sdk-v2",
      note: "ours+tracer: handleMessage under NodeSdk.layer (a SERVER span per request, exported); v2: no tracer",
      oursRounds: roundsOf(serverOnly, "ours+tracer").map(perSecond),
      officialRounds: roundsOf(serverOnly, "sdk-v2").map(perSecond)
    }),
    pair(
      serverOnly,
      "server only: tools/call round trips, sequential",
      "sdk-v1",
      "v1: McpServer.connect(InMemoryTransport), raw requests, 2025-11-25"
    ),
    pair(
      both,
      "client+server in-process: callTool, sequential",
      "sdk-v2",
      "ours: McpClient + InProcess.client (JSON round trip per message); v2: Client + InMemoryTransport (no serialisation)"
    ),
    pair(
      both,
      "client+server in-process: callTool, sequential",
      "sdk-v1",
      "v1: Client + InMemoryTransport, 2025-11-25"
    )
  ]
}
