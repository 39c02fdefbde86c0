// The guides' code samples compile and the runnable ones run (issue #36).
//
// Every ```ts block of README.md and docs/**/*.md (docs/modules/ and docs/examples/ are what
// `npm run docs` generates: left out) is written to a temporary folder as a module of its own and
// compiled in one `tsc` run with the project's compiler options (strict,
// exactOptionalPropertyTypes, noUncheckedIndexedAccess, NodeNext) and `paths` that map `presa-mcp`
// and `presa-mcp/*` to src/ (as a user imports the package; `presa-mcp/internal/*` does not
// resolve, as the package's `exports` blocks it). Fences:
//
//   ```ts          a complete module: imports included, compiled
//   ```ts run      also run with tsx from the checkout's root; it must exit 0 within RUN_TIMEOUT_MS
//   ```ts partial  a deliberate fragment: not checked
//
// A failure prints `file:line` (the line in the Markdown file) and tsc's message. Relative links
// in the same files are checked too: a link to a file of the checkout must name one that exists,
// and a link into the API reference (`modules/<Module>.ts.md`, generated) a module of src/.
//
// Self-check: test/fixtures/docs/broken.md is checked in the same run and must fail where it
// says (a type error, a run that throws, a dead link) and nowhere else (its partial block is
// not compiled): a check that stopped seeing failures fails.
//
//   node scripts/check-docs.mjs            README.md and docs/, plus the self-check
//   node scripts/check-docs.mjs FILE.md…   those files only (no self-check)
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const RUN_TIMEOUT_MS = 30_000
const FIXTURE = "test/fixtures/docs/broken.md"
/** The fixture's expected failures: `line:kind` (kind: compile, run, link), each exactly once. */
const FIXTURE_EXPECTED = ["9:compile", "17:run", "28:link", "29:link"]

/** README.md and every guide under docs/, generated folders excluded. */
const defaultFiles = () => {
  const out = ["README.md"]
  const walk = (dir) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`
      if (entry.isDirectory()) {
        if (path !== "docs/modules" && path !== "docs/examples") walk(path)
      } else if (entry.name.endsWith(".md")) out.push(path)
    }
  }
  walk("docs")
  return out
}

/** The ```ts blocks of one Markdown file: `{ file, line (of the first code line), mode, code }`. */
export const extractBlocks = (file, text) => {
  const lines = text.split("\n")
  const blocks = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(\S*)\s*(.*)$/.exec(lines[i] ?? "")
    if (open === null) continue
    const [, indent, fence, lang, info] = open
    const close = new RegExp(`^\\s*${fence}\\s*$`)
    let end = i + 1
    while (end < lines.length && !close.test(lines[end] ?? "")) end++
    if (lang === "ts" || lang === "typescript") {
      const words = info.split(/\s+/).filter((w) => w !== "")
      const mode = words.includes("partial") ? "partial" : words.includes("run") ? "run" : "check"
      const body = lines.slice(i + 1, end).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
      blocks.push({ file, line: i + 2, mode, code: body.join("\n") })
    }
    i = end
  }
  return blocks
}

/** GitHub's anchors of a Markdown file's headings (`## Results and errors` → `results-and-errors`). */
const anchors = (path) => {
  const out = new Set()
  let inFence = false
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (/^\s*```/.test(line)) inFence = !inFence
    const heading = inFence ? null : /^#{1,6}\s+(.*?)\s*$/.exec(line)
    if (heading !== null) {
      out.add((heading[1] ?? "").toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-"))
    }
  }
  return out
}

/**
 * Relative links `[text](target#anchor)` outside code blocks that name no file of the checkout,
 * or a heading that file does not have.
 */
const deadLinks = (file, text) => {
  const dead = []
  const lines = text.split("\n")
  let inFence = false
  lines.forEach((line, index) => {
    if (/^\s*```/.test(line)) inFence = !inFence
    if (inFence) return
    for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      const [target = "", anchor] = (match[1] ?? "").split("#")
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue
      const path = target === "" ? file : relative(ROOT, resolve(ROOT, dirname(file), target))
      const api = /^docs\/modules\/(.+)\.ts\.md$/.exec(path)
      const exists = api !== null ? existsSync(join(ROOT, "src", `${api[1]}.ts`)) : existsSync(join(ROOT, path))
      if (!exists) {
        dead.push({ file, line: index + 1, kind: "link", message: `link to ${target}: no such file` })
      } else if (exists && api === null && anchor !== undefined && path.endsWith(".md") && !anchors(join(ROOT, path)).has(anchor)) {
        dead.push({ file, line: index + 1, kind: "link", message: `link to ${match[1]}: ${path} has no such heading` })
      }
    }
  })
  return dead
}

const compilerOptions = (dir) => {
  const project = JSON.parse(readFileSync(join(ROOT, "tsconfig.json"), "utf8")).compilerOptions
  const { plugins: _plugins, paths: _paths, ...options } = project
  return {
    compilerOptions: {
      ...options,
      noEmit: true,
      typeRoots: [join(ROOT, "node_modules/@types")],
      paths: {
        "presa-mcp": [join(ROOT, "src/index.ts")],
        "presa-mcp/internal/*": [join(dir, "__not-exported__/*")],
        "presa-mcp/*": [join(ROOT, "src/*.ts")]
      }
    },
    include: ["*.ts"]
  }
}

const runBlock = (path, tsconfig) =>
  new Promise((done) => {
    const child = spawn(process.execPath, ["--import", "tsx", path], {
      cwd: ROOT,
      env: { ...process.env, TSX_TSCONFIG_PATH: tsconfig },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    const timer = setTimeout(() => {
      output += `\n(still running after ${RUN_TIMEOUT_MS} ms: killed)`
      child.kill("SIGKILL")
    }, RUN_TIMEOUT_MS)
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      done(code === 0 ? null : `exit ${code ?? signal}: ${output.trim().split("\n").slice(-8).join("\n  ")}`)
    })
  })

const main = async () => {
  const args = process.argv.slice(2)
  const selfCheck = args.length === 0
  const files = selfCheck ? [...defaultFiles(), FIXTURE] : args
  const dir = mkdtempSync(join(tmpdir(), "presa-docs-"))
  try {
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir")
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }))
    const tsconfig = join(dir, "tsconfig.json")
    writeFileSync(tsconfig, JSON.stringify(compilerOptions(dir), null, 2))

    const failures = []
    const byModule = new Map()
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), "utf8")
      failures.push(...deadLinks(file, text))
      for (const block of extractBlocks(file, text)) {
        if (block.mode === "partial") continue
        const name = `${file.replace(/[^A-Za-z0-9]+/g, "_")}_${block.line}.ts`
        // `export {}` makes a block without imports a module, so blocks never share a scope
        writeFileSync(join(dir, name), `${block.code}\nexport {}\n`)
        byModule.set(name, block)
      }
    }

    const tsc = byModule.size === 0 ? { status: 0, stdout: "", stderr: "" } : spawnSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", tsconfig, "--pretty", "false"], {
      cwd: dir,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024
    })
    const failed = new Set()
    for (const line of `${tsc.stdout}${tsc.stderr}`.split("\n")) {
      const m = /^(.*?)\((\d+),(\d+)\): (error .*)$/.exec(line)
      if (m === null) {
        // tsc's continuation lines (an overload's reasons) belong to the error before them
        const last = failures.at(-1)
        if (/^\s/.test(line) && last?.kind === "compile") last.message += `\n  ${line}`
        else if (line.trim() !== "") failures.push({ file: "tsc", line: 0, kind: "compile", message: line })
        continue
      }
      const block = byModule.get(relative(dir, resolve(dir, m[1] ?? "")))
      if (block === undefined) {
        failures.push({ file: relative(ROOT, m[1] ?? ""), line: Number(m[2]), kind: "compile", message: m[4] })
        continue
      }
      failed.add(block)
      const at = block.line + Number(m[2]) - 1
      failures.push({ file: block.file, line: block.line, at, kind: "compile", message: m[4] })
    }
    if (tsc.status !== 0 && failures.length === 0) {
      failures.push({ file: "tsc", line: 0, kind: "compile", message: `exit ${tsc.status}` })
    }

    for (const [name, block] of byModule) {
      if (block.mode !== "run" || failed.has(block)) continue
      const error = await runBlock(join(dir, name), tsconfig)
      if (error !== null) failures.push({ file: block.file, line: block.line, kind: "run", message: error })
    }

    const own = selfCheck ? failures.filter((f) => f.file !== FIXTURE) : failures
    let selfOk = true
    if (selfCheck) {
      const seen = [...new Set(failures.filter((f) => f.file === FIXTURE).map((f) => `${f.line}:${f.kind}`))].sort()
      selfOk = JSON.stringify(seen) === JSON.stringify([...FIXTURE_EXPECTED].sort())
      if (!selfOk) {
        console.error(`self-check FAILED: ${FIXTURE} should fail at ${FIXTURE_EXPECTED.join(", ")}; it failed at ${seen.join(", ") || "nothing"}`)
      }
    }
    for (const f of own) {
      const where = f.at === undefined ? `${f.file}:${f.line}` : `${f.file}:${f.at} (the block at line ${f.line})`
      console.error(`${where}: ${f.kind}: ${f.message}`)
    }
    const blocks = [...byModule.values()].filter((b) => !selfCheck || b.file !== FIXTURE)
    const ran = blocks.filter((b) => b.mode === "run").length
    console.log(
      `docs samples: ${blocks.length} blocks compiled, ${ran} run, ${own.length} failure(s)` +
        (selfCheck ? `; self-check ${selfOk ? "ok" : "FAILED"}` : "")
    )
    process.exitCode = own.length === 0 && selfOk ? 0 : 1
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
