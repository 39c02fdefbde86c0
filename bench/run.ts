/**
 * `npm run bench [suite…]`: benchmarks our library against the official MCP SDK (v2, and v1 where
 * it applies) on this machine, prints a table and writes bench/results.json (a run of some suites
 * only: bench/out/results.<suites>.json). Suites: core, stdio, http, list, read, memory, start, cluster (no
 * argument = all). See bench/README.md.
 *
 * `BENCH_PROFILE=1` makes every spawned server process write a CPU profile to
 * bench/out/profiles/<server>-…/ (summarise one with `npx tsx bench/profile.ts <file>`).
 */
import { mkdirSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { BENCH_DIR, compiledLibrary, OUT_DIR, progress, type Row, weLose } from "./lib/harness.js"
import { check } from "./lib/targets.js"

type Suite = () => Promise<Array<Row>>

const SUITES: Record<string, () => Promise<Suite>> = {
  core: async () => (await import("./suites/core.js")).run,
  stdio: async () => (await import("./suites/stdio.js")).run,
  http: async () => (await import("./suites/http.js")).run,
  list: async () => (await import("./suites/list.js")).runList,
  read: async () => (await import("./suites/list.js")).runRead,
  memory: async () => (await import("./suites/memory.js")).run,
  start: async () => (await import("./suites/start.js")).run,
  cluster: async () => (await import("./suites/cluster.js")).run
}

const requested = process.argv.slice(2)
const unknown = requested.filter((s) => !(s in SUITES))
if (unknown.length > 0) {
  console.error(`unknown suite(s): ${unknown.join(", ")}; known: ${Object.keys(SUITES).join(", ")}`)
  process.exit(2)
}
const suites = requested.length === 0 ? Object.keys(SUITES) : requested

// The whole run is bounded: a hung peer must not hang `npm run bench`.
const HARD_LIMIT_MS = 12 * 60_000
const watchdog = setTimeout(() => {
  console.error(`bench: still running after ${HARD_LIMIT_MS / 60_000} minutes; aborting`)
  process.exit(3)
}, HARD_LIMIT_MS)
watchdog.unref()

const fmt = (n: number | null): string => {
  if (n === null || !Number.isFinite(n)) return "–"
  const abs = Math.abs(n)
  if (abs >= 1000) return Math.round(n).toLocaleString("en-US")
  if (abs >= 100) return n.toFixed(0)
  if (abs >= 10) return n.toFixed(1)
  if (abs >= 1) return n.toFixed(2)
  return n.toFixed(3)
}

const table = (rows: ReadonlyArray<Row>): string => {
  const header = ["suite", "figure", "unit", "better", "ours", "official", "vs", "ours/official", ""]
  const body = rows.map((r) => [
    r.suite,
    r.figure,
    r.unit,
    r.better,
    fmt(r.ours),
    fmt(r.official),
    r.officialName,
    r.ratio === null ? "–" : `${r.ratio < 0.1 ? r.ratio.toFixed(3) : r.ratio.toFixed(2)}×`,
    weLose(r) ? "◀ slower" : ""
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => (cells[i] ?? "").length)))
  const numeric = new Set([4, 5, 7])
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => numeric.has(i) ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)).join("  ").trimEnd()
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n")
}

const main = async (): Promise<void> => {
  const started = Date.now()
  const loadBefore = os.loadavg()
  const rows: Array<Row> = []
  const failures: Array<{ suite: string; error: string }> = []
  for (const name of suites) {
    const load = SUITES[name]
    if (load === undefined) continue
    const t0 = Date.now()
    progress(`suite ${name}`)
    try {
      rows.push(...await (await load())())
    } catch (error) {
      const message = error instanceof Error ? error.stack ?? error.message : String(error)
      failures.push({ suite: name, error: message })
      progress(`suite ${name} FAILED: ${message}`)
    }
    progress(`suite ${name} took ${((Date.now() - t0) / 1000).toFixed(1)} s`)
  }
  const cpus = os.cpus()
  const result = {
    date: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform} ${os.release()} ${process.arch}`,
    cores: cpus.length,
    cpuModel: cpus[0]?.model ?? "unknown",
    suites,
    /** Which build of presa-mcp the servers and in-process suites ran: compiled dist/ JS, or src/ via tsx. */
    library: compiledLibrary ? "dist (tsc-compiled JS)" : "src (TypeScript through tsx)",
    /** How the server processes ran (both sides alike): compiled JS with plain node, or their TypeScript via tsx. */
    servers: compiledLibrary ? "bench/out/js (tsc-compiled JS, plain node)" : "bench/servers (TypeScript through tsx)",
    durationSeconds: (Date.now() - started) / 1000,
    /** 1/5/15-minute load averages before and after: other work on the machine skews figures. */
    loadAverage: { before: loadBefore, after: os.loadavg() },
    method: "each figure: contenders alternate in rounds (A B, B A, …) and the best round is reported; " +
      "every round is in oursRounds / officialRounds",
    ratio: "ours / official; better = higher for throughput (calls/s, req/s), lower for times, latency, memory",
    rows,
    /** Issue #24's targets against this run's rows (bench/lib/targets.ts). */
    targets: check(rows),
    failures
  }
  // A full run is the record (bench/results.json); a partial run goes next to the profiles.
  const full = requested.length === 0
  mkdirSync(OUT_DIR, { recursive: true })
  const file = full ? path.join(BENCH_DIR, "results.json") : path.join(OUT_DIR, `results.${suites.join("-")}.json`)
  writeFileSync(file, JSON.stringify(result, null, 2) + "\n")
  console.log(
    `\npresa-mcp vs official MCP SDK — ${result.date}, node ${result.node}, ${result.cores} cores (${result.cpuModel})`
  )
  console.log("ratio = ours/official: > 1 is better for 'higher' rows, < 1 is better for 'lower' rows")
  console.log(
    `best of interleaved rounds; load average before ${loadBefore.map((l) => l.toFixed(1)).join("/")}, after ${
      result.loadAverage.after.map((l) => l.toFixed(1)).join("/")
    } (1/5/15 min)\n`
  )
  console.log(table(rows))
  const checked = result.targets.filter((t) => t.met !== null)
  if (checked.length > 0) {
    console.log(`\ntargets of issue #24 (${checked.filter((t) => t.met).length} of ${checked.length} met in this run)`)
    for (const t of checked) {
      const ratio = t.ratio === null ? "–" : `${t.ratio.toFixed(2)}×`
      const context = t.context.map((c) => `; ${c.label}: ${c.ratio.toFixed(2)}×`).join("")
      console.log(
        `  ${t.met ? "met    " : "not met"}  ${t.label.padEnd(58)} ${ratio.padStart(7)}  (want ${t.want}${context})`
      )
    }
  }
  for (const f of failures) console.log(`\nsuite ${f.suite} failed: ${f.error}`)
  console.log(
    `\n${rows.length} rows in ${result.durationSeconds.toFixed(0)} s; written to ${path.relative(process.cwd(), file)}`
  )
  process.exitCode = failures.length > 0 ? 1 : 0
}

void main()
