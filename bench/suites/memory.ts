/**
 * memory: the server process's resident set size after 10,000 `tools/call` on stdio (32 in
 * flight, the raw client of the list suite), read from /proc/<pid>/status (VmRSS; VmHWM = peak)
 * right after the last answer. The run's calls/s is reported too: with a trivial client it is the
 * server's own throughput.
 *
 * With the compiled library two more figures show where the unbundled rows' floor is:
 * - ours bundled (`bench/lib/bundle.ts`, README's recipe) after the same 10,000 calls, against
 *   each SDK as published;
 * - the RSS of `schema-only.ts`, a process that only loads `effect/Schema` (which every server of
 *   ours needs), against each SDK server's RSS after startup.
 */
import { spawn } from "node:child_process"
import { bundle, bundleScript } from "../lib/bundle.js"
import {
  compiledLibrary,
  type Era,
  expectResult,
  handshake,
  LineClient,
  paramsJson,
  progress,
  readRss,
  type Row,
  row,
  runBounded,
  serverCommand,
  type Throughput,
  withTimeout
} from "../lib/harness.js"
import { ECHO_TEXT } from "../lib/shared.js"

const CALLS = 10_000
const IN_FLIGHT = 32
const RUN_LIMIT_MS = 60_000

const SERVERS = [
  { name: "ours", script: "ours-stdio.ts", era: "modern" },
  { name: "sdk-v2", script: "sdk-v2-stdio.ts", era: "modern" },
  { name: "sdk-v1", script: "sdk-v1-stdio.ts", era: "legacy" }
] as const satisfies ReadonlyArray<{ readonly name: string; readonly script: string; readonly era: Era }>

/** RSS (MiB) of `schema-only.ts` once it has loaded `effect/Schema` (it writes `ready`). */
const schemaOnlyRss = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const { args, command } = serverCommand("schema-only.ts", [], "memory-schema-only")
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] })
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error("schema-only.ts: no ready line in 20 s"))
    }, 20_000)
    child.once("error", reject)
    child.stdout.once("data", () => {
      clearTimeout(timer)
      const rss = child.pid === undefined ? undefined : readRss(child.pid)
      child.stdin.end()
      if (rss === undefined) reject(new Error("schema-only.ts: cannot read its RSS"))
      else resolve(rss.rssMiB)
    })
  })

interface Measured {
  readonly startRss: number
  readonly rss: number
  readonly peak: number
  readonly run: Throughput
}

const measure = async (script: string, era: Era, label: string): Promise<Measured> => {
  const client = new LineClient(script, [], label)
  try {
    await withTimeout(handshake(client, era), 20_000, `${label} handshake`)
    const params = paramsJson(era, { name: "echo", arguments: { text: ECHO_TEXT } })
    const call = async () => {
      const result = expectResult(await client.requestRaw("tools/call", params), `${label} tools/call`)
      if (result.isError === true) throw new Error(`${label}: tool error ${JSON.stringify(result)}`)
    }
    await call()
    const before = readRss(client.pid)
    const run = await runBounded(call, IN_FLIGHT, { maxMs: RUN_LIMIT_MS, maxCount: CALLS - 1 })
    const after = readRss(client.pid)
    if (before === undefined || after === undefined) throw new Error(`${label}: cannot read /proc/${client.pid}/status`)
    if (run.count !== CALLS - 1) throw new Error(`${label}: only ${run.count + 1} calls in ${RUN_LIMIT_MS} ms`)
    return { startRss: before.rssMiB, rss: after.rssMiB, peak: after.peakMiB, run }
  } finally {
    await client.close()
  }
}

export const run = async (): Promise<Array<Row>> => {
  const results = new Map<string, Measured>()
  // bundles only from the compiled scripts (as in the start suite)
  const bundled: ReadonlyArray<{ readonly name: string; readonly script: string; readonly era: Era }> = compiledLibrary
    ? [{ name: "ours-bundled", script: bundleScript("ours-stdio.ts"), era: "modern" }]
    : []
  if (compiledLibrary) await bundle(["ours-stdio.ts"])
  for (const s of [...SERVERS, ...bundled]) {
    progress(`memory: ${s.name}`)
    const m = await measure(s.script, s.era, `memory-${s.name}`)
    progress(
      `memory: ${s.name} RSS ${m.startRss.toFixed(1)} → ${m.rss.toFixed(1)} MiB (peak ${m.peak.toFixed(1)}), ` +
        `${m.run.perSecond.toFixed(0)} calls/s`
    )
    results.set(s.name, m)
  }
  const get = (name: string): Measured => {
    const m = results.get(name)
    if (m === undefined) throw new Error(`no memory result for ${name}`)
    return m
  }
  const ours = get("ours")
  const floor = compiledLibrary ? await schemaOnlyRss() : undefined
  if (floor !== undefined) progress(`memory: a process that only loads effect/Schema: RSS ${floor.toFixed(1)} MiB`)
  return (["sdk-v2", "sdk-v1"] as const).flatMap((official) => {
    const f = get(official)
    const note = `stdio server process; RSS after startup: ours ${ours.startRss.toFixed(1)} MiB, ${official} ${
      f.startRss.toFixed(1)
    } MiB`
    return [
      row({
        suite: "memory",
        figure: "server RSS after 10,000 tools/call",
        unit: "MiB",
        better: "lower",
        ours: ours.rss,
        official: f.rss,
        officialName: official,
        note
      }),
      row({
        suite: "memory",
        figure: "server RSS after startup (after its first tools/call)",
        unit: "MiB",
        better: "lower",
        ours: ours.startRss,
        official: f.startRss,
        officialName: official,
        note: "stdio server process"
      }),
      row({
        suite: "memory",
        figure: "server peak RSS (VmHWM) over the same run",
        unit: "MiB",
        better: "lower",
        ours: ours.peak,
        official: f.peak,
        officialName: official,
        note
      }),
      row({
        suite: "memory",
        figure: `server throughput during the run (raw client, ${IN_FLIGHT} in flight)`,
        unit: "calls/s",
        better: "higher",
        ours: ours.run.perSecond,
        official: f.run.perSecond,
        officialName: official,
        note: "one run of 10,000 calls, not interleaved: noisier than the stdio suite"
      }),
      ...(compiledLibrary ?
        [
          row({
            suite: "memory",
            figure: "server RSS after 10,000 tools/call, ours bundled vs SDK as published",
            unit: "MiB",
            better: "lower",
            ours: get("ours-bundled").rss,
            official: f.rss,
            officialName: official,
            note: `ours: esbuild bundle (README's recipe); RSS after startup ${
              get("ours-bundled").startRss.toFixed(1)
            } MiB`
          }),
          row({
            suite: "memory",
            figure: "floor: RSS of a process that only loads effect/Schema, vs the server after startup",
            unit: "MiB",
            better: "lower",
            ours: floor ?? null,
            official: f.startRss,
            officialName: official,
            note: "bench/servers/schema-only.ts: what every unbundled Effect-based server starts from"
          })
        ] :
        [])
    ]
  })
}
