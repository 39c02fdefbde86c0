// Type-checks the consumer project with `tsc -p <tsconfig>` (run from the consumer project) and
// judges the diagnostics: none may come from the consumer's file or from presa-mcp's declarations.
// With `skipLibCheck: false` and no DOM lib, the peers' own declarations report a few errors that
// have nothing to do with this package: @effect/platform and @effect/rpc name DOM types
// (`Storage`, `Transferable`, `ImageData`, `MessagePort`) and @effect/platform-node-shared imports
// `ws` without its types. Those, and only those, are tolerated and listed (docs/getting-started.md, "TypeScript settings").
//
//   node scripts/tsc-consumer.mjs <path to tsc> <tsconfig>
import { spawnSync } from "node:child_process"

const [tsc, project] = process.argv.slice(2)
const run = spawnSync(tsc, ["-p", project, "--pretty", "false"], { encoding: "utf8" })
if (run.error) throw run.error
const lines = `${run.stdout}${run.stderr}`.split("\n")
const diagnostics = lines.filter((line) => /error TS\d+:/.test(line))

const PEER_FILE = /^node_modules\/@effect\/(platform|rpc|platform-node-shared)\/dist\/dts\/[^(]+\.d\.ts\(/
const PEER_CAUSE = /error TS(2304|2694|2749|7016): .*('Storage'|'Transferable'|'ImageData'|'MessagePort'|'ws')/
const known = diagnostics.filter((d) => PEER_FILE.test(d) && PEER_CAUSE.test(d))
const unexpected = diagnostics.filter((d) => !known.includes(d))

if (known.length > 0) {
  const files = [...new Set(known.map((d) => d.slice(0, d.indexOf("("))))]
  console.log(`tolerated: ${known.length} diagnostics in the peers' declarations (DOM types, ws): ${files.join(", ")}`)
}
if (unexpected.length > 0 || (run.status !== 0 && diagnostics.length === 0)) {
  console.log(`${unexpected.length} unexpected diagnostics (tsc exit ${run.status}):`)
  console.log(unexpected.length > 0 ? unexpected.join("\n") : lines.join("\n"))
  process.exit(1)
}
console.log(`tsc -p ${project}: no diagnostics in the consumer's files or presa-mcp's declarations`)
