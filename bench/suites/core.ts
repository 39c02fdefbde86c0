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
 * - against SDK v1, two rows each: ours speaking 2026-07-28 (as against SDK v2: every request
 *   carries the `_meta` envelope, every result `resultType` and `serverInfo`), and `ours-2025`
 *   speaking SDK v1's own revision, 2025-11-25 (the like-for-like row, which issue #24's 2025-era
 *   target reads).
 *
 * Each contender runs in {@link FORKS} processes, one after another (JMH's "forks"): V8 makes
 * decisions per process that move all of a process's rounds together (which allocation sites it
 * pretenures: bench/README.md, "Issue #24, session 11"), so with one process per contender a
 * run's ratio followed whichever mode each process happened to start in. Each fork opens every
 * contender of its group and alternates their rounds as before; a contender's figure is its best
 * round over all its forks.
 */
import { best, type Contender, interleave, roundsOf } from "../lib/compare.js"
import { type Row, row, type Throughput } from "../lib/harness.js"
import { isolated } from "../lib/isolated.js"

/** Processes per contender, and rounds in each (6 rounds per contender in all, as before). */
const FORKS = 3
const ROUNDS_PER_FORK = 2

const contender = (group: "server-only" | "client-server", name: string): Contender<Throughput> =>
  isolated(name, "core-contender.ts", [group, name])

const perSecond = (t: Throughput): number => t.perSecond
const describe = (t: Throughput): string => t.perSecond.toFixed(0)

/** {@link FORKS} interleaved runs of the group's contenders, each in fresh processes; their rounds joined per contender. */
const forked = async (
  group: "server-only" | "client-server",
  names: ReadonlyArray<string>
): Promise<Map<string, ReadonlyArray<Throughput>>> => {
  const joined = new Map<string, Array<Throughput>>(names.map((name) => [name, []]))
  for (let fork = 1; fork <= FORKS; fork++) {
    const results = await interleave(
      `core ${group} (fork ${fork}/${FORKS})`,
      names.map((name) => contender(group, name)),
      ROUNDS_PER_FORK,
      describe
    )
    for (const name of names) joined.get(name)?.push(...roundsOf(results, name))
  }
  return joined
}

export const run = async (): Promise<Array<Row>> => {
  const serverOnly = await forked("server-only", ["ours", "ours+tracer", "ours-2025", "sdk-v2", "sdk-v1"])
  const both = await forked("client-server", ["ours", "ours-2025", "sdk-v2", "sdk-v1"])
  const base = { suite: "core", unit: "calls/s", better: "higher" } as const
  const pair = (
    results: typeof serverOnly,
    oursName: "ours" | "ours+tracer" | "ours-2025",
    figure: string,
    official: "sdk-v2" | "sdk-v1",
    note: string
  ): Row => {
    const o = roundsOf(results, oursName)
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
      "ours",
      "server only: tools/call round trips, sequential",
      "sdk-v2",
      "ours: McpServer.handleMessage, 2026-07-28; v2: serveStdio({transport: InMemoryTransport}), raw requests"
    ),
    pair(
      serverOnly,
      "ours+tracer",
      "server only, exporting tracer on (OTel SDK, batching, in-memory exporter)",
      "sdk-v2",
      "ours+tracer: handleMessage under NodeSdk.layer (a SERVER span per request, exported); v2: no tracer"
    ),
    pair(
      serverOnly,
      "ours",
      "server only: tools/call round trips, sequential",
      "sdk-v1",
      "ours 2026-07-28 (the _meta envelope on every request) vs v1 2025-11-25: McpServer.connect(InMemoryTransport), raw requests"
    ),
    pair(
      serverOnly,
      "ours-2025",
      "server only: tools/call round trips, sequential, both 2025-11-25",
      "sdk-v1",
      "ours: handleMessage on an initialized session; v1: McpServer.connect(InMemoryTransport), raw requests"
    ),
    pair(
      both,
      "ours",
      "client+server in-process: callTool, sequential",
      "sdk-v2",
      "ours: McpClient + InProcess.client (JSON round trip per message); v2: Client + InMemoryTransport (no serialisation)"
    ),
    pair(
      both,
      "ours",
      "client+server in-process: callTool, sequential",
      "sdk-v1",
      "ours 2026-07-28 vs v1 2025-11-25: Client + InMemoryTransport"
    ),
    pair(
      both,
      "ours-2025",
      "client+server in-process: callTool, sequential, both 2025-11-25",
      "sdk-v1",
      "ours: McpClient with versions [2025-11-25] + InProcess.client; v1: Client + InMemoryTransport"
    )
  ]
}
