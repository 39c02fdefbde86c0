// Lists the scenarios of one run's results directory that failed a check and are not in the
// run's expected-failures baseline, one per line: `node failed-scenarios.mjs <dir> [baseline]`.
// run.sh re-runs each of them alone when a parallel client run failed (see its header).
import * as fs from "node:fs"
import * as path from "node:path"

const [dir, baseline] = process.argv.slice(2)
const expected = new Set(
  baseline && fs.existsSync(baseline)
    ? fs.readFileSync(baseline, "utf8").split("\n").map((l) => l.match(/^\s*-\s*(\S+)\s*$/)?.[1]).filter(Boolean)
    : []
)
const failed = []
const walk = (d) => {
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name)
    if (e.isDirectory()) walk(p)
    else if (e.name === "checks.json") {
      const name = path.relative(dir, d).replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, "")
      const checks = JSON.parse(fs.readFileSync(p, "utf8"))
      // a baseline entry is a whole scenario or `scenario:check-id`
      const unexpected = checks.filter((c) =>
        (c.status === "FAILURE" || c.status === "WARNING") && !expected.has(name) && !expected.has(`${name}:${c.id}`)
      )
      if (unexpected.length > 0) failed.push(name)
    }
  }
}
if (dir && fs.existsSync(dir)) walk(dir)
console.log(failed.sort().join("\n"))
