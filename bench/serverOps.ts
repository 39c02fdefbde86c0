/**
 * What our stdio server does per request between reading a line and writing its reply, in this
 * process (no pipe, no other process): `Stdio.run` over stand-ins for `process.stdin` and
 * `process.stdout`, driven by sequential modern `tools/call` lines as `hot.ts stdio-raw1` sends
 * them. Prints, per call: Effect operations run (every step of every fiber, op supervision on),
 * fibers started, bytes allocated (V8's sampling heap profiler, including collected objects) and
 * µs of CPU (a timed loop). The first three do not move with the machine's load.
 *
 *   npm run build && npx tsc -p tsconfig.bench.json
 *   TSX_TSCONFIG_PATH=tsconfig.bench.json node --import tsx bench/serverOps.ts [calls] [seconds]
 *
 * `SERVER_OPS_COUNT=1` counts Effect operations and fibers (op supervision on: the other figures
 * are then inflated); `SERVER_OPS_SITES=1` lists the allocation sites by bytes per call.
 */
import * as Effect from "effect/Effect"
import * as Runtime from "effect/Runtime"
import * as RuntimeFlags from "effect/RuntimeFlags"
import { EventEmitter } from "node:events"
import * as Stdio from "presa-mcp/transport/Stdio"
import { OpCounter, printSites, sampleAllocations, totalBytes } from "./lib/measure.js"
import { makeServer } from "./lib/ours.js"
import { ECHO_TEXT, MODERN_META } from "./lib/shared.js"

const calls = Math.min(100_000, Math.max(100, Number(process.argv[2] ?? 5000)))
const seconds = Math.min(30, Math.max(1, Number(process.argv[3] ?? 3)))

let tracing = false
const counter = new OpCounter((effect) => {
  if (!tracing) return
  const e = effect as { _op?: string; effect_instruction_i0?: unknown; effect_instruction_i1?: unknown }
  const f = (u: unknown) => typeof u === "function" ? String(u).slice(0, 90).replace(/\s+/g, " ") : ""
  process.stderr.write(`  ${e._op} ${f(e.effect_instruction_i0)} | ${f(e.effect_instruction_i1)}\n`)
})
counter.counting = false

// SERVER_OPS_COUNT=1: count Effect operations. The connection starts each request as a root fiber
// with the default runtime flags: op supervision is turned on there, so that those fibers' steps
// are counted too (it costs CPU and allocation, so the other figures are measured without it).
const countOps = process.env.SERVER_OPS_COUNT !== undefined
if (countOps) {
  Object.assign(Runtime.defaultRuntime, {
    runtimeFlags: RuntimeFlags.enable(Runtime.defaultRuntime.runtimeFlags, RuntimeFlags.OpSupervision)
  })
}

/** `process.stdin`: emits the lines written to it as `data` events. */
class FakeStdin extends EventEmitter {
  readable = true
  pause() {
    return this
  }
  resume() {
    return this
  }
}
/** `process.stdout`: each write settles the caller waiting for a reply. */
class FakeStdout extends EventEmitter {
  writableNeedDrain = false
  writableFinished = false
  waiting: (() => void) | undefined
  write(_chunk: string) {
    const w = this.waiting
    this.waiting = undefined
    w?.()
    return true
  }
  end() {
    this.writableFinished = true
    this.emit("finish")
  }
}
const stdin = new FakeStdin()
const stdout = new FakeStdout()
Object.defineProperty(process, "stdin", { value: stdin, configurable: true })
Object.defineProperty(process, "stdout", { value: stdout, configurable: true })

let id = 0
const params = JSON.stringify({ name: "echo", arguments: { text: ECHO_TEXT }, _meta: MODERN_META })
const one = (): Promise<void> =>
  new Promise((resolve) => {
    stdout.waiting = resolve
    stdin.emit("data", Buffer.from(`{"jsonrpc":"2.0","id":${++id},"method":"tools/call","params":${params}}\n`))
  })
const loop = async (n: number) => {
  for (let i = 0; i < n; i++) await one()
}

const server = await Effect.runPromise(makeServer())
const served = Effect.runPromise(countOps ? Effect.supervised(Stdio.run(server), counter) : Stdio.run(server))
// Bounded wait until the server reads stdin.
for (let i = 0; i < 1000 && stdin.listenerCount("data") === 0; i++) await new Promise((r) => setTimeout(r, 1))

await loop(2000)
counter.counting = true
await loop(calls)
counter.counting = false
if (process.env.SERVER_OPS_TRACE !== undefined) {
  tracing = true
  await loop(1)
  tracing = false
}

const allocated = await sampleAllocations(() => loop(calls))

// SERVER_OPS_SITES=1: the allocation sites (function, file:line) by bytes per call.
if (process.env.SERVER_OPS_SITES !== undefined) printSites(allocated, calls, 40)

const cpu0 = process.cpuUsage()
const t0 = Date.now()
let timed = 0
while (Date.now() - t0 < seconds * 1000 && timed < 10_000_000) {
  await loop(100)
  timed += 100
}
const cpu = process.cpuUsage(cpu0)

process.stderr.write(
  `stdio server tools/call: ` +
    (countOps
      ? `${(counter.ops / calls).toFixed(1)} Effect ops, ${(counter.fibers / calls).toFixed(2)} fibers, `
      : "") +
    `${(totalBytes(allocated) / calls / 1024).toFixed(2)} KiB allocated, ` +
    `${((cpu.user + cpu.system) / timed).toFixed(2)} µs CPU per call (${timed} timed calls)\n`
)
stdin.readable = false
stdin.emit("end")
await Promise.race([served, new Promise((r) => setTimeout(r, 6000))])
process.exit(0)
