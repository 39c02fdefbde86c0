/**
 * CPU per call of a stdio server process, per thread, from /proc: spawns the server, runs
 * sequential modern `tools/call` of the `echo` tool for 2 s of warm-up and 4 s measured, and
 * prints each thread's user and system µs per call (the main thread carries the requests; V8's
 * helper threads the concurrent GC). Linux only.
 *
 *   npm run build && npx tsc -p tsconfig.bench.json
 *   TSX_TSCONFIG_PATH=tsconfig.bench.json node --import tsx bench/threads.ts [ours-stdio.ts|canned-stdio.ts|sdk-v2-stdio.ts]
 */
import { spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { readCpuMicros, serverCommand } from "./lib/harness.js"
import { ECHO_TEXT, MODERN_META } from "./lib/shared.js"

const script = process.argv[2] ?? "ours-stdio.ts"
const { args, command } = serverCommand(script, [], "threads")
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] })
const pid = child.pid
if (pid === undefined) throw new Error(`${script}: not started`)

let id = 0
let buffered = ""
let answered: (() => void) | undefined
child.stdout.setEncoding("utf8")
child.stdout.on("data", (chunk: string) => {
  buffered += chunk
  let newline = buffered.indexOf("\n")
  while (newline >= 0) {
    buffered = buffered.slice(newline + 1)
    answered?.()
    newline = buffered.indexOf("\n")
  }
})
const call = () =>
  new Promise<void>((resolve) => {
    answered = resolve
    child.stdin.write(
      JSON.stringify({
        jsonrpc: "2.0",
        id: ++id,
        method: "tools/call",
        params: { name: "echo", arguments: { text: ECHO_TEXT }, _meta: MODERN_META }
      }) + "\n"
    )
  })

/** CPU µs (user, system) of each thread of the server, by `tid name`. */
const threads = (): Map<string, { readonly user: number; readonly system: number }> =>
  new Map(
    readdirSync(`/proc/${pid}/task`).map((tid) => {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim()
      return [`${tid} ${name}`, readCpuMicros(`/proc/${pid}/task/${tid}/stat`)]
    })
  )

const loop = async (ms: number) => {
  const start = Date.now()
  while (Date.now() - start < ms) await call()
}
await loop(2000)
const before = threads()
const first = id
await loop(4000)
const after = threads()
const calls = id - first
for (const [thread, { system, user }] of after) {
  const start = before.get(thread) ?? { user: 0, system: 0 }
  const u = (user - start.user) / calls
  const s = (system - start.system) / calls
  if (u + s > 0) console.log(`${thread.padEnd(24)} user ${u.toFixed(1)} µs, system ${s.toFixed(1)} µs per call`)
}
console.log(`${script}: ${calls} calls in 4 s (${(calls / 4).toFixed(0)}/s)`)
child.stdin.end()
