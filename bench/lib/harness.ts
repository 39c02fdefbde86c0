/**
 * The benchmark driver's helpers: result rows, bounded measurement loops, spawning server
 * processes (compiled JS, or `node --import tsx`; optionally with `--cpu-prof`), a minimal newline-delimited
 * JSON-RPC client for raw stdio, and process RSS.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { LEGACY_INITIALIZE_PARAMS, MODERN_META } from "./shared.js"

const HERE = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
/** `bench/`, also from this module's compiled copy in `bench/out/js/lib/` (contender processes load that one). */
export const BENCH_DIR = path.basename(HERE) === "js" && path.basename(path.dirname(HERE)) === "out"
  ? path.dirname(path.dirname(HERE))
  : HERE
export const OUT_DIR = path.join(BENCH_DIR, "out")
export const PROFILE_DIR = path.join(OUT_DIR, "profiles")
const TSX_LOADER = import.meta.resolve("tsx")

// ---------------------------------------------------------------------------------------------
// rows
// ---------------------------------------------------------------------------------------------

/** Which direction is better for a figure. */
export type Better = "higher" | "lower"

export interface Row {
  readonly suite: string
  readonly figure: string
  readonly unit: string
  readonly better: Better
  readonly ours: number | null
  readonly official: number | null
  /** What "official" is: `sdk-v2`, `sdk-v1`, or a pairing. */
  readonly officialName: string
  /** ours / official (null when either is missing). */
  readonly ratio: number | null
  readonly note?: string
  /** Every interleaved round (the reported figure is the best one). */
  readonly oursRounds?: ReadonlyArray<number>
  readonly officialRounds?: ReadonlyArray<number>
}

export const row = (r: Omit<Row, "ratio">): Row => ({
  ...r,
  ours: r.ours !== null && Number.isFinite(r.ours) ? r.ours : null,
  official: r.official !== null && Number.isFinite(r.official) ? r.official : null,
  ratio: r.ours === null || r.official === null || !Number.isFinite(r.ours) || !Number.isFinite(r.official) ||
      r.official === 0
    ? null
    : r.ours / r.official
})

/** Whether we lose on this row (ratio on the wrong side of 1 by more than `slack`). */
export const weLose = (r: Row, slack = 0.05): boolean =>
  r.ratio !== null && (r.better === "higher" ? r.ratio < 1 - slack : r.ratio > 1 + slack)

// ---------------------------------------------------------------------------------------------
// logging (progress goes to stderr; the table to stdout)
// ---------------------------------------------------------------------------------------------

export const progress = (line: string): void => {
  process.stderr.write(`[bench] ${line}\n`)
}

// ---------------------------------------------------------------------------------------------
// statistics
// ---------------------------------------------------------------------------------------------

export const percentile = (values: ReadonlyArray<number>, p: number): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank] ?? Number.NaN
}

export const median = (values: ReadonlyArray<number>): number => percentile(values, 50)

// ---------------------------------------------------------------------------------------------
// bounded loops
// ---------------------------------------------------------------------------------------------

export interface Bounds {
  /** Stop after this long (milliseconds). */
  readonly maxMs: number
  /** Stop after this many operations. */
  readonly maxCount: number
}

export interface Throughput {
  readonly count: number
  readonly ms: number
  readonly perSecond: number
}

const throughput = (count: number, ms: number): Throughput => ({ count, ms, perSecond: (count * 1000) / ms })

/** `concurrency` workers run `op` until `maxCount` operations were started or `maxMs` passed. */
export const runBounded = async (
  op: () => Promise<unknown>,
  concurrency: number,
  bounds: Bounds
): Promise<Throughput> => {
  const start = performance.now()
  const deadline = start + bounds.maxMs
  let started = 0
  let done = 0
  const worker = async (): Promise<void> => {
    while (started < bounds.maxCount && performance.now() < deadline) {
      started++
      await op()
      done++
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return throughput(done, performance.now() - start)
}

/** Times `op` up to `maxCount` times or `maxMs`, at least once; returns every duration (ms). */
export const sampleDurations = async (op: () => Promise<unknown>, bounds: Bounds): Promise<Array<number>> => {
  const out: Array<number> = []
  const deadline = performance.now() + bounds.maxMs
  do {
    const t0 = performance.now()
    await op()
    out.push(performance.now() - t0)
  } while (out.length < bounds.maxCount && performance.now() < deadline)
  return out
}

/** Rejects with `what` when `promise` has not settled within `ms`. */
export const withTimeout = <A>(promise: Promise<A>, ms: number, what: string): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

// ---------------------------------------------------------------------------------------------
// server processes
// ---------------------------------------------------------------------------------------------

/**
 * Whether `presa-mcp` resolves to the compiled `dist/` build in this process: `npm run bench` runs
 * the driver with `TSX_TSCONFIG_PATH=tsconfig.bench.json`, whose empty `paths` leave the package's
 * own `exports` map (dist/) in charge; under tsconfig.json's `paths` it resolves to src/ (see README).
 */
export const compiledLibrary = import.meta.resolve("presa-mcp").includes("/dist/")

/**
 * Where `tsc -p tsconfig.bench.json` (part of `npm run bench`) writes the server scripts as
 * JavaScript. With the compiled library (see `compiledLibrary`) every server, ours and the SDKs'
 * alike, runs from here with plain `node`, as a deployed server would; otherwise each runs
 * its TypeScript source through the tsx loader.
 */
const COMPILED_SERVERS_DIR = path.join(OUT_DIR, "js", "servers")

/**
 * Where the `start` suite writes each compiled server script bundled by esbuild into one file with
 * its libraries (`<name>.bundle.mjs`), as a user who bundles a server deploys it.
 */
export const BUNDLE_DIR = path.join(OUT_DIR, "bundle")

/** `BENCH_PROFILE=1`: every server process writes a CPU profile to bench/out/profiles/. */
export const profiling = process.env.BENCH_PROFILE === "1"
let profileSeq = 0

/**
 * The command line that runs a benchmark server script: `node bench/out/js/servers/<script>.js …`
 * when the library is compiled (see `COMPILED_SERVERS_DIR`), else `node --import tsx <script> …`;
 * a bundle (`<name>.bundle.mjs`, see `BUNDLE_DIR`) runs as `node bench/out/bundle/<name>.bundle.mjs`.
 */
export const serverCommand = (
  script: string,
  args: ReadonlyArray<string> = [],
  label = path.basename(script, ".ts")
): { readonly command: string; readonly args: Array<string> } => {
  const prof: Array<string> = []
  if (profiling) {
    // One directory per process: the tsx loader runs in a worker thread that writes a profile of
    // its own (Node names them CPU.<date>.<pid>.<thread>.<n>.cpuprofile; the main thread's is the
    // one with the library's frames, usually the largest).
    const dir = path.join(PROFILE_DIR, `${label}-${Date.now()}-${++profileSeq}`)
    mkdirSync(dir, { recursive: true })
    prof.push("--cpu-prof", "--cpu-prof-dir", dir)
  }
  if (script.endsWith(".bundle.mjs")) {
    return { command: process.execPath, args: [...prof, path.join(BUNDLE_DIR, script), ...args] }
  }
  if (compiledLibrary) {
    const compiled = path.join(COMPILED_SERVERS_DIR, script.replace(/\.ts$/, ".js"))
    if (!existsSync(compiled)) {
      throw new Error(`${compiled} is missing: compile the servers with npx tsc -p tsconfig.bench.json`)
    }
    return { command: process.execPath, args: [...prof, compiled, ...args] }
  }
  return {
    command: process.execPath,
    args: [...prof, "--import", TSX_LOADER, path.join(BENCH_DIR, "servers", script), ...args]
  }
}

/** Ends a child process: closes its stdin (stdio servers exit), then SIGTERM, then SIGKILL. */
export const stopChild = async (child: ChildProcess, graceMs = 3000): Promise<void> => {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  child.stdin?.end()
  if (child.stdin === null) child.kill("SIGTERM")
  const first = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)])
  if (first) return
  child.kill("SIGTERM")
  const second = await Promise.race([exited.then(() => true), sleep(1000).then(() => false)])
  if (!second) child.kill("SIGKILL")
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts an HTTP benchmark server and waits for its `LISTENING <url>` line (10 s at most). */
export const startHttpServer = async (
  script: string,
  args: ReadonlyArray<string> = []
): Promise<{ readonly child: ChildProcess; readonly url: string }> => {
  const { args: argv, command } = serverCommand(script, args)
  const child = spawn(command, argv, { stdio: ["ignore", "ignore", "pipe"] })
  let seen = ""
  const url = await withTimeout(
    new Promise<string>((resolve, reject) => {
      child.stderr?.setEncoding("utf8")
      child.stderr?.on("data", (chunk: string) => {
        seen = (seen + chunk).slice(-10_000)
        const match = /^LISTENING (\S+)$/m.exec(seen)
        if (match?.[1] !== undefined) resolve(match[1])
      })
      child.once("exit", (code) => reject(new Error(`${script} exited (${code}) before listening: ${seen}`)))
    }),
    10_000,
    `${script} listening`
  )
  return { child, url }
}

/** The resident set size and its peak of a process, in MiB (Linux /proc). */
export const readRss = (pid: number): { readonly rssMiB: number; readonly peakMiB: number } | undefined => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN)
    return { rssMiB: kb("VmRSS") / 1024, peakMiB: kb("VmHWM") / 1024 }
  } catch {
    return undefined
  }
}

/**
 * The user and system CPU time in a `/proc/…/stat` file (a process's, or one thread's under
 * `task/<tid>/`), in µs (Linux: a clock tick is 10 ms, USER_HZ 100).
 */
export const readCpuMicros = (statPath: string): { readonly user: number; readonly system: number } => {
  const stat = readFileSync(statPath, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return { user: Number(fields[11]) * 10_000, system: Number(fields[12]) * 10_000 }
}

// ---------------------------------------------------------------------------------------------
// a raw newline-delimited JSON-RPC client (the same for every server: measures the server side)
// ---------------------------------------------------------------------------------------------

export type Era = "modern" | "legacy"

export interface JsonRpcResponse {
  readonly id: number
  readonly result?: Record<string, unknown>
  readonly error?: { readonly code: number; readonly message: string }
}

export class LineClient {
  readonly child: ChildProcess
  private buffer = ""
  private nextId = 1
  private readonly pending = new Map<number, (response: JsonRpcResponse) => void>()
  private readonly exited: Promise<void>
  private stderrTail = ""

  constructor(script: string, args: ReadonlyArray<string> = [], label?: string) {
    const { args: argv, command } = serverCommand(script, args, label)
    this.child = spawn(command, argv, { stdio: ["pipe", "pipe", "pipe"] })
    this.child.stdout?.setEncoding("utf8")
    this.child.stdout?.on("data", (chunk: string) => this.onData(chunk))
    this.child.stderr?.setEncoding("utf8")
    this.child.stderr?.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-4000)
    })
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()))
    void this.exited.then(() => {
      for (const resolve of this.pending.values()) {
        resolve({ id: -1, error: { code: -1, message: `server exited: ${this.stderrTail}` } })
      }
      this.pending.clear()
    })
  }

  get pid(): number {
    return this.child.pid ?? -1
  }

  private onData(chunk: string): void {
    let text = this.buffer + chunk
    let nl = text.indexOf("\n")
    while (nl !== -1) {
      const line = text.slice(0, nl)
      text = text.slice(nl + 1)
      if (line.trim() !== "") this.onLine(line)
      nl = text.indexOf("\n")
    }
    this.buffer = text
  }

  private onLine(line: string): void {
    const message = JSON.parse(line) as JsonRpcResponse
    if (typeof message.id !== "number") return
    const resolve = this.pending.get(message.id)
    if (resolve !== undefined) {
      this.pending.delete(message.id)
      resolve(message)
    }
  }

  /** Sends `{jsonrpc, id, method, <paramsJson>}` and resolves with the response. */
  requestRaw(method: string, paramsJson: string | undefined): Promise<JsonRpcResponse> {
    const id = this.nextId++
    const line = paramsJson === undefined
      ? `{"jsonrpc":"2.0","id":${id},"method":"${method}"}\n`
      : `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${paramsJson}}\n`
    return new Promise((resolve) => {
      this.pending.set(id, resolve)
      this.child.stdin?.write(line)
    })
  }

  notify(method: string): void {
    this.child.stdin?.write(`{"jsonrpc":"2.0","method":"${method}"}\n`)
  }

  async close(): Promise<void> {
    await stopChild(this.child)
    await this.exited
  }
}

/** Params JSON of a request in the given era (modern: with the `_meta` envelope). */
export const paramsJson = (era: Era, params: Record<string, unknown>): string =>
  JSON.stringify(era === "modern" ? { ...params, _meta: MODERN_META } : params)

/** The legacy handshake (`initialize` + `notifications/initialized`); nothing for modern. */
export const handshake = async (client: LineClient, era: Era): Promise<void> => {
  if (era === "modern") return
  const init = await client.requestRaw(
    "initialize",
    JSON.stringify(LEGACY_INITIALIZE_PARAMS)
  )
  if (init.error !== undefined) throw new Error(`initialize failed: ${init.error.message}`)
  client.notify("notifications/initialized")
}

/** Fails unless `response` is a successful result. */
export const expectResult = (response: JsonRpcResponse, what: string): Record<string, unknown> => {
  if (response.result === undefined) {
    throw new Error(`${what}: ${response.error === undefined ? "no result" : JSON.stringify(response.error)}`)
  }
  return response.result
}
