/**
 * Summarises V8 CPU profiles (`.cpuprofile`, from `node --cpu-prof` or `BENCH_PROFILE=1 npm run
 * bench …`): the top frames by self time, and by inclusive time, per file.
 *
 * tsx compiles each TypeScript file to one line without V8-visible function names, so frames in
 * .ts files are mapped back through the source maps tsx keeps in its cache (os.tmpdir()/tsx-<uid>,
 * newest entry per file: profile before editing the sources again) to `file.ts:line` and the name
 * declared on that line.
 *
 *   npx tsx bench/profile.ts <file.cpuprofile>… [--top 25] [--filter TEXT] [--stacks FRAME-TEXT]
 *
 * `--stacks TEXT` prints instead the heaviest call paths (src/ and bench/ frames) through frames
 * whose name or location contains TEXT.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
  readonly columnNumber: number
}

interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly hitCount?: number
  readonly children?: ReadonlyArray<number>
}

interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly startTime: number
  readonly endTime: number
  readonly samples?: ReadonlyArray<number>
  readonly timeDeltas?: ReadonlyArray<number>
}

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..")

// -- tsx source maps -----------------------------------------------------------------------------

interface SourceMap {
  readonly sources: ReadonlyArray<string>
  readonly mappings: string
}

interface Segment {
  readonly genCol: number
  readonly line: number
  readonly col: number
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

/** Decodes the first generated line's mappings (tsx output is one line). */
const decodeFirstLine = (mappings: string): Array<Segment> => {
  const out: Array<Segment> = []
  let genCol = 0
  let line = 0
  let col = 0
  const firstLine = mappings.split(";")[0] ?? ""
  for (const seg of firstLine.split(",")) {
    const values: Array<number> = []
    let shift = 0
    let value = 0
    for (const ch of seg) {
      const digit = B64.indexOf(ch)
      value += (digit & 31) << shift
      if (digit & 32) shift += 5
      else {
        values.push(value & 1 ? -(value >>> 1) : value >>> 1)
        shift = 0
        value = 0
      }
    }
    if (values.length === 0) continue
    genCol += values[0] ?? 0
    if (values.length >= 4) {
      line += values[2] ?? 0
      col += values[3] ?? 0
      out.push({ genCol, line, col })
    }
  }
  return out
}

const tsxCache = (() => {
  const dir = path.join(os.tmpdir(), `tsx-${os.userInfo().uid}`)
  const newest = new Map<string, { readonly mtime: number; readonly file: string }>()
  try {
    for (const name of readdirSync(dir)) {
      if (name.endsWith(".pipe")) continue
      const file = path.join(dir, name)
      try {
        const head = readFileSync(file, "utf8")
        const match = /"sources":\["([^"]+)"\]/.exec(head)
        if (match?.[1] === undefined) continue
        const mtime = statSync(file).mtimeMs
        const prev = newest.get(match[1])
        if (prev === undefined || prev.mtime < mtime) newest.set(match[1], { mtime, file })
      } catch {
        // not a cache entry
      }
    }
  } catch {
    // no cache
  }
  return newest
})()

const resolved = new Map<string, { readonly segments: Array<Segment>; readonly lines: Array<string> } | null>()

const resolver = (source: string) => {
  if (resolved.has(source)) return resolved.get(source) ?? null
  let value: { readonly segments: Array<Segment>; readonly lines: Array<string> } | null = null
  const entry = tsxCache.get(source)
  if (entry !== undefined) {
    try {
      const cached = JSON.parse(readFileSync(entry.file, "utf8")) as { readonly map: SourceMap }
      value = { segments: decodeFirstLine(cached.map.mappings), lines: readFileSync(source, "utf8").split("\n") }
    } catch {
      value = null
    }
  }
  resolved.set(source, value)
  return value
}

/** `name  file.ts:line` for a frame in a tsx-compiled file, or undefined. */
const mapFrame = (f: CallFrame, file: string): string | undefined => {
  if (f.lineNumber !== 0 || !f.url.endsWith(".ts")) return undefined
  const r = resolver(f.url.replace(/^file:\/\//, ""))
  if (r === null) return undefined
  let best: Segment | undefined
  for (const s of r.segments) {
    if (s.genCol > f.columnNumber) break
    best = s
  }
  if (best === undefined) return undefined
  const text = r.lines[best.line] ?? ""
  const declared = /(?:const|let|function\*?|class)\s+([\w$]+)/.exec(text)?.[1] ??
    /^\s*(?:readonly\s+)?([\w$]+)\s*[:(=]/.exec(text)?.[1]
  const name = f.functionName !== "" ? f.functionName : declared !== undefined ? `${declared}…` : "(anonymous)"
  return `${name}  ${file}:${best.line + 1}`
}

const frameKey = (f: CallFrame): string => {
  const file = f.url === "" ? "(native)" : f.url.replace(/^file:\/\//, "").replace(ROOT + "/", "")
  return mapFrame(f, file) ??
    `${f.functionName === "" ? "(anonymous)" : f.functionName}  ${file}:${f.lineNumber + 1}`
}

const summarise = (file: string, top: number, filter: string | undefined, stacks: string | undefined): void => {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  // self time per node from samples × time deltas (µs)
  const selfUs = new Map<number, number>()
  const samples = profile.samples ?? []
  const deltas = profile.timeDeltas ?? []
  for (let i = 0; i < samples.length; i++) {
    const id = samples[i]
    if (id === undefined) continue
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, deltas[i + 1] ?? deltas[i] ?? 0))
  }
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0)
  const idle = [...selfUs.entries()].filter(([id]) =>
    ["(idle)", "(program)", "(garbage collector)"].includes(byId.get(id)?.callFrame.functionName ?? "")
  )
  const self = new Map<string, number>()
  for (const [id, us] of selfUs) {
    const node = byId.get(id)
    if (node === undefined) continue
    const key = frameKey(node.callFrame)
    self.set(key, (self.get(key) ?? 0) + us)
  }
  // inclusive time per frame key (counted once per sample stack)
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const inclusive = new Map<string, number>()
  const perFile = new Map<string, number>()
  for (const [id, us] of selfUs) {
    const seen = new Set<string>()
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const node = byId.get(cur)
      if (node === undefined) break
      const key = frameKey(node.callFrame)
      if (!seen.has(key)) {
        seen.add(key)
        inclusive.set(key, (inclusive.get(key) ?? 0) + us)
      }
    }
    const leaf = byId.get(id)
    if (leaf !== undefined) {
      const f = leaf.callFrame.url === "" ? `(native: ${leaf.callFrame.functionName})` : leaf.callFrame.url
        .replace(/^file:\/\//, "")
        .replace(ROOT + "/", "")
        .replace(/node_modules\/(\.pnpm\/)?((@[^/]+\/)?[^/]+).*/, "node_modules/$2")
      perFile.set(f, (perFile.get(f) ?? 0) + us)
    }
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`
  const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(6)} ms`
  const show = (title: string, m: Map<string, number>, n: number) => {
    console.log(`\n${title}`)
    ;[...m.entries()]
      .filter(([k]) => filter === undefined || k.includes(filter))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .forEach(([k, us]) => console.log(`${ms(us)} ${pct(us)}  ${k}`))
  }
  if (stacks !== undefined) {
    // the heaviest call stacks (src/ and bench/ frames only, innermost first) through a frame
    const byStack = new Map<string, number>()
    for (const [id, us] of selfUs) {
      const chain: Array<string> = []
      let through = false
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const node = byId.get(cur)
        if (node === undefined) break
        const key = frameKey(node.callFrame)
        if (key.includes(stacks)) through = true
        if (through && (key.includes(" src/") || key.includes(" bench/")) && chain.at(-1) !== key) chain.push(key)
        if (through && chain.length === 0 && key.includes(stacks)) chain.push(key)
      }
      if (!through) continue
      const k = chain.slice(0, 8).join("\n      ← ")
      byStack.set(k, (byStack.get(k) ?? 0) + us)
    }
    console.log(`\nstacks through "${stacks}" (src/bench frames)`)
    ;[...byStack.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8).forEach(([k, us]) =>
      console.log(`${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`)
    )
    return
  }
  console.log(`== ${file}`)
  console.log(
    `sampled ${(total / 1000).toFixed(0)} ms; idle/program/GC ${
      idle.map(([id, us]) => `${byId.get(id)?.callFrame.functionName} ${pct(us)}`).join(", ")
    }`
  )
  show("self time by frame", self, top)
  show("self time by file / package", perFile, Math.min(top, 15))
  show("inclusive time by frame", inclusive, top)
}

const argv = process.argv.slice(2)
const option = (name: string): string | undefined => {
  const i = argv.indexOf(name)
  return i === -1 ? undefined : argv.splice(i, 2)[1]
}
const top = Number(option("--top") ?? 25)
const filter = option("--filter")
const stacks = option("--stacks")
if (argv.length === 0) {
  console.error("usage: tsx bench/profile.ts <file.cpuprofile>… [--top N] [--filter TEXT]")
  process.exit(2)
}
for (const file of argv) summarise(file, top, filter, stacks)
