// Prints a per-scenario table for one conformance run from the suite's `-o` output
// (<dir>/[server-]<scenario>-<timestamp>/checks.json), judged the way the suite's
// own baseline logic judges it (FAILURE and WARNING both count as failing; a baseline
// entry is `<scenario>` or, from 0.2, `<scenario>:<check-id>`).
//
//   node conformance/summarize.mjs --dir DIR --side server|client --name RUN
//        [--suite 0.1|0.2] [--baseline FILE] [--requirements REQ.yaml] [--suite-exit N]
//
// Runs on any Node >= 18; only dependency is `yaml` from conformance/node_modules.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs"
import { join, relative, sep } from "node:path"
import { parse as parseYaml } from "yaml"

const args = new Map()
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i].replace(/^--/, ""), process.argv[i + 1])
const dir = args.get("dir")
const side = args.get("side") ?? "server"
const name = args.get("name") ?? dir
const suiteExit = args.get("suite-exit")

const TS = /-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/

/** scenario -> { dir, checks | undefined } (latest result dir wins) */
const results = new Map()
const walk = (d) => {
  for (const entry of readdirSync(d)) {
    const full = join(d, entry)
    if (!statSync(full).isDirectory()) continue
    if (TS.test(entry)) {
      let scenario = relative(dir, full).split(sep).join("/").replace(TS, "")
      if (side === "server") scenario = scenario.replace(/^server-/, "")
      const file = join(full, "checks.json")
      const checks = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined
      const prev = results.get(scenario)
      if (!prev || prev.dir < full) results.set(scenario, { dir: full, checks })
    } else {
      walk(full)
    }
  }
}
if (dir && existsSync(dir)) walk(dir)

// ---- baseline
const wholesale = new Set()
const perCheck = new Map()
const baselineFile = args.get("baseline")
if (baselineFile && existsSync(baselineFile)) {
  const parsed = parseYaml(readFileSync(baselineFile, "utf8")) ?? {}
  for (const raw of parsed[side] ?? []) {
    const text = String(raw)
    const at = text.indexOf(":")
    if (at === -1) wholesale.add(text)
    else {
      const s = text.slice(0, at)
      if (!perCheck.has(s)) perCheck.set(s, new Set())
      perCheck.get(s).add(text.slice(at + 1))
    }
  }
}

// ---- requirement set (scored vs not scored)
let scored
const notScored = new Map()
const reqFile = args.get("requirements")
if (reqFile && existsSync(reqFile)) {
  const req = parseYaml(readFileSync(reqFile, "utf8"))
  scored = new Set(req[side] ?? [])
  for (const e of req.not_scored ?? []) if (e.leg === side) notScored.set(e.scenario, e.reason)
}

const severity = { FAILURE: 3, WARNING: 2, SUCCESS: 1, SKIPPED: 0, INFO: -1 }
const collapse = (checks) => {
  const byId = new Map()
  for (const c of checks) {
    if (c.status === "INFO") continue
    const prev = byId.get(c.id)
    if (!prev || (severity[c.status] ?? 0) > (severity[prev.status] ?? 0)) byId.set(c.id, c)
  }
  return [...byId.values()]
}

const rows = []
const totals = { pass: 0, fail: 0, warn: 0, "expected-failure": 0, stale: 0, "n/a": 0, skipped: 0 }
let notScoredCount = 0
let notScoredFailing = 0
for (const scenario of [...results.keys()].sort()) {
  const { checks } = results.get(scenario)
  let verdict
  let counts = ""
  let detail = ""
  if (checks === undefined) {
    verdict = "skipped"
  } else {
    const n = (s) => checks.filter((c) => c.status === s).length
    counts = `${n("SUCCESS")}/${n("FAILURE")}/${n("WARNING")}`
    const failing = collapse(checks).filter((c) => c.status === "FAILURE" || c.status === "WARNING")
    const hardFail = failing.some((c) => c.status === "FAILURE")
    if (wholesale.has(scenario)) {
      verdict = failing.length > 0 ? "expected-failure" : "stale"
      if (verdict === "stale") detail = "baseline entry now passes: remove it"
    } else if (perCheck.has(scenario)) {
      const allowed = perCheck.get(scenario)
      const unexpected = failing.filter((c) => !allowed.has(c.id))
      const stale = [...allowed].filter((id) => collapse(checks).some((c) => c.id === id && c.status === "SUCCESS"))
      if (unexpected.length > 0) {
        verdict = unexpected.some((c) => c.status === "FAILURE") ? "fail" : "warn"
        detail = unexpected.map((c) => c.id).join(", ")
      } else if (stale.length > 0) {
        verdict = "stale"
        detail = `baseline entries now pass: ${stale.join(", ")}`
      } else verdict = failing.length > 0 ? "expected-failure" : "pass"
    } else if (failing.length > 0) {
      verdict = hardFail ? "fail" : "warn"
      detail = failing.map((c) => c.id).join(", ")
    } else if (
      checks.some((c) => c.status === "SKIPPED") &&
      checks.every((c) => c.status === "SKIPPED" || c.status === "INFO" || c.id.startsWith("wire-schema"))
    ) {
      // every real check skipped itself (e.g. an extension the server does not declare)
      verdict = "n/a"
      detail = checks.find((c) => c.status === "SKIPPED")?.errorMessage ?? ""
    } else verdict = "pass"
  }
  let tag = ""
  if (notScored.has(scenario)) {
    tag = `not scored (${notScored.get(scenario)})`
    notScoredCount++
    if (verdict === "fail" || verdict === "warn") notScoredFailing++
  } else {
    totals[verdict]++
  }
  rows.push([scenario, verdict, counts, tag, detail])
}

const w0 = Math.max(8, ...rows.map((r) => r[0].length))
const line = (r) =>
  `  ${r[0].padEnd(w0)}  ${r[1].padEnd(16)}  ${r[2].padEnd(9)}  ${r[3]}${r[3] && r[4] ? "  " : ""}${r[4] ? (r[4].length > 160 ? r[4].slice(0, 157) + "..." : r[4]) : ""}`
console.log(`\n--- ${name}: ${rows.length} scenario(s) ---`)
console.log(line(["scenario", "result", "p/f/w", "", ""]))
for (const r of rows) console.log(line(r))
if (scored) {
  const missing = [...scored].filter((s) => !results.has(s))
  if (missing.length > 0) console.log(`  (required but no result: ${missing.join(", ")})`)
}
const parts = Object.entries(totals).filter(([k, v]) => v > 0 || k === "pass" || k === "fail").map(([k, v]) => `${v} ${k}`)
let total = `Total ${name}: ${parts.join(", ")}`
if (notScoredCount > 0) total += `; not scored: ${notScoredCount} (${notScoredFailing} failing)`
if (suiteExit !== undefined) total += `; suite exit ${suiteExit}`
console.log(total)
