/**
 * Inspector-compatible invocation (issue #40, point 2): the same command lines run with the
 * official MCP Inspector CLI (`@modelcontextprotocol/inspector` 0.15.0 from peers/inspector, spawned
 * from its node_modules/.bin) and with `presa-mcp --cli …`, against examples/library.ts over stdio
 * and over Streamable HTTP (the library served by this test on 127.0.0.1, port 0). Both must print
 * the same JSON (parsed) and exit with the same code.
 *
 * Fields that legitimately differ: the Inspector 0.15 client (SDK v1) speaks the legacy revisions
 * (2025-06-18), ours negotiates the newest common one (2026-07-28), whose results carry
 * `resultType`, `ttlMs` and `cacheScope` (list results' cache hints) and `_meta["io.modelcontextprotocol/serverInfo"]`;
 * these are removed before comparing.
 *
 * Skipped (with a message) when peers/inspector is not installed; CI installs it (.ci/run).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import { makeLibrary } from "../examples/library-definitions.js"
import * as InspectorArgs from "../src/internal/cli/inspectorArgs.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const INSPECTOR = Path.join(ROOT, "peers", "inspector", "node_modules", ".bin", "mcp-inspector")
const installed = Fs.existsSync(INSPECTOR)
if (!installed) {
  console.warn(
    "test/CliInspector.test.ts skipped: the official Inspector CLI is not installed " +
      "(run: npm ci --prefix peers/inspector)"
  )
}
const RUN_MS = 90_000
const TEST_MS = 240_000

const LIBRARY = [process.execPath, "--import", "tsx", "examples/library.ts", "--stdio"]

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `command args` to its end in its own process group (killed after {@link RUN_MS}). */
const run = (command: string, args: ReadonlyArray<string>): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = ChildProcess.spawn(command, args, { cwd: ROOT, detached: true, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
      reject(new Error(`${command} ${args.join(" ")}: no exit within ${RUN_MS} ms\n${stderr}`))
    }, RUN_MS)
    child.once("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

/** The same Inspector command line, run with the official CLI and with ours. */
const both = (args: ReadonlyArray<string>) =>
  Promise.all([
    run(INSPECTOR, ["--cli", ...args]),
    run(process.execPath, ["--import", "tsx", "src/bin.ts", "--cli", ...args])
  ])

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** Removes the modern-only fields (see the header) from a parsed result, at any depth. */
const normalize = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(normalize)
  if (!isRecord(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value)) {
    if (key === "resultType" || key === "ttlMs" || key === "cacheScope") continue
    if (key === "_meta" && isRecord(v)) {
      const rest = Object.fromEntries(Object.entries(v).filter(([k]) => k !== "io.modelcontextprotocol/serverInfo"))
      if (Object.keys(rest).length > 0) out[key] = normalize(rest)
      continue
    }
    out[key] = normalize(v)
  }
  return out
}

const parsed = (r: Run, who: string): unknown => {
  try {
    return normalize(JSON.parse(r.stdout))
  } catch {
    return assert.fail(`${who}: stdout is not JSON (exit ${r.code})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`)
  }
}

/** Both exit with `code`; with code 0 both print the same JSON (also returned). */
const same = async (args: ReadonlyArray<string>, code: number): Promise<unknown> => {
  const [theirs, ours] = await both(args)
  const show = `\ninspector: exit ${theirs.code}\n${theirs.stdout}${theirs.stderr}\n` +
    `presa-mcp: exit ${ours.code}\n${ours.stdout}${ours.stderr}`
  assert.strictEqual(theirs.code, code, `the Inspector's exit code${show}`)
  assert.strictEqual(ours.code, code, `our exit code${show}`)
  if (code !== 0) {
    assert.strictEqual(ours.stdout, "", `nothing on stdout on failure${show}`)
    assert.notStrictEqual(ours.stderr.trim(), "", `a message on stderr on failure${show}`)
    return undefined
  }
  const result = parsed(theirs, "inspector")
  assert.deepStrictEqual(parsed(ours, "presa-mcp"), result, show)
  return result
}

const field = (o: unknown, key: string): unknown => (isRecord(o) ? o[key] : undefined)

/**
 * The shared cases, the target first: after the flags, the Inspector's variadic `--tool-arg` /
 * `--prompt-args` would take it as more key=value pairs (even after `--`, which its launcher drops).
 */
const cases = (target: () => ReadonlyArray<string>) => {
  const line = (...flags: ReadonlyArray<string>) => [...target(), ...flags]
  it("tools/list", { timeout: TEST_MS }, async () => {
    const result = await same(line("--method", "tools/list"), 0)
    const tools = field(result, "tools")
    assert.deepStrictEqual(Array.isArray(tools) ? tools.map((t) => field(t, "name")) : [], ["add", "logo"])
  })

  it("tools/call success (a JSON array converted by the tool's schema)", { timeout: TEST_MS }, async () => {
    const result = await same(
      line("--method", "tools/call", "--tool-name", "add", "--tool-arg", "numbers=[1,2,3.5]"),
      0
    )
    assert.deepStrictEqual(field(result, "structuredContent"), { sum: 6.5 })
  })

  it("tools/call with an isError result: printed, exit code 0", { timeout: TEST_MS }, async () => {
    const result = await same(line("--method", "tools/call", "--tool-name", "add", "--tool-arg", "numbers=seven"), 0)
    assert.strictEqual(field(result, "isError"), true)
  })

  it("tools/call of an unknown tool: exit code 1", { timeout: TEST_MS }, async () => {
    await same(line("--method", "tools/call", "--tool-name", "nope"), 1)
  })

  it("resources/list", { timeout: TEST_MS }, async () => {
    const result = await same(line("--method", "resources/list"), 0)
    const resources = field(result, "resources")
    assert.isTrue(Array.isArray(resources) && resources.some((r) => field(r, "uri") === "file:///readme.txt"))
  })

  it("prompts/get with --prompt-args", { timeout: TEST_MS }, async () => {
    const result = await same(
      line("--method", "prompts/get", "--prompt-name", "introduce", "--prompt-args", "id=ada"),
      0
    )
    assert.include(JSON.stringify(field(result, "messages")), "Ada Lovelace")
  })
}

describe.skipIf(!installed)("Inspector CLI and presa-mcp --cli, stdio (examples/library.ts)", () => {
  cases(() => ["--", ...LIBRARY])

  it("a server command after --, behind a variadic option: an error in both", { timeout: TEST_MS }, async () => {
    await same(
      ["--method", "prompts/get", "--prompt-name", "introduce", "--prompt-args", "id=ada", "--", ...LIBRARY],
      1
    )
  })

  it(
    "--config FILE --server NAME (an mcpServers entry), --tool-arg converted by the schema",
    { timeout: TEST_MS },
    async () => {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "presa-inspector-"))
      try {
        const config = Path.join(dir, "mcp.json")
        const [command, ...args] = LIBRARY
        Fs.writeFileSync(config, JSON.stringify({ mcpServers: { library: { command, args } } }))
        const result = await same(
          [
            "--config",
            config,
            "--server",
            "library",
            "--method",
            "tools/call",
            "--tool-name",
            "add",
            "--tool-arg",
            "numbers=[7]"
          ],
          0
        )
        assert.deepStrictEqual(field(result, "structuredContent"), { sum: 7 })
        await same(["--config", config, "--server", "nope", "--method", "tools/list"], 1)
      } finally {
        Fs.rmSync(dir, { recursive: true, force: true })
      }
    }
  )

  it("the command before the flags, without --", { timeout: TEST_MS }, async () => {
    const [theirs, ours] = await both([
      ...LIBRARY,
      "--method",
      "tools/call",
      "--tool-name",
      "add",
      "--tool-arg",
      "numbers=[2]"
    ])
    assert.strictEqual(theirs.code, 0, theirs.stderr)
    assert.strictEqual(ours.code, 0, ours.stderr)
    assert.deepStrictEqual(parsed(ours, "presa-mcp"), parsed(theirs, "inspector"))
  })

  it(
    "ours only (Inspector 2.x flags): --tool-args-json verbatim, --format json envelope",
    { timeout: TEST_MS },
    async () => {
      const ours = await run(process.execPath, [
        "--import",
        "tsx",
        "src/bin.ts",
        "--cli",
        "--method",
        "tools/call",
        "--tool-name",
        "add",
        "--tool-args-json",
        "{\"numbers\":[4,5]}",
        "--format",
        "json",
        "--",
        ...LIBRARY
      ])
      assert.strictEqual(ours.code, 0, ours.stderr)
      assert.strictEqual(ours.stdout.trim().split("\n").length, 1, "one line")
      assert.deepStrictEqual(field(field(JSON.parse(ours.stdout), "result"), "structuredContent"), { sum: 9 })
    }
  )
})

describe.skipIf(!installed)("Inspector CLI and presa-mcp --cli, Streamable HTTP (examples/library.ts)", () => {
  let url = ""
  const scope = Effect.runSync(Scope.make())
  beforeAll(async () => {
    const address = await Effect.runPromise(
      Scope.extend(Effect.flatMap(makeLibrary, (s) => StreamableHttp.serve(s, { port: 0, host: "127.0.0.1" })), scope)
    )
    url = address.url
  })
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

  cases(() => [url])
})

describe("InspectorArgs.parse (commander's reading, as the Inspector's)", () => {
  const parse = (...args: ReadonlyArray<string>) =>
    Either.getOrElse(InspectorArgs.parse(args), (message) => assert.fail(message))

  it("variadic --tool-arg / --prompt-args, unknown options to the target, -e, --opt=value", () => {
    const inv = parse(
      "--cli",
      "node",
      "server.js",
      "--stdio",
      "--method=tools/call",
      "--tool-arg",
      "a=1",
      "b=x=y",
      "-e",
      "K=V",
      "--tool-name",
      "t",
      "--",
      "--port",
      "3"
    )
    assert.deepStrictEqual(inv.target, ["node", "server.js", "--stdio", "--port", "3"])
    assert.deepStrictEqual(inv.toolArgs, { a: "1", b: "x=y" })
    assert.deepStrictEqual(inv.env, { K: "V" })
    assert.strictEqual(inv.method, "tools/call")
    assert.strictEqual(inv.toolName, "t")
    assert.isTrue(InspectorArgs.isInvocation(["node", "s.js", "--cli", "--", "x"]))
    assert.isFalse(InspectorArgs.isInvocation(["tools", "--", "node", "s.js", "--cli"]))
  })

  it("the Inspector's messages for a bad key=value and a lone --config", () => {
    assert.deepStrictEqual(
      InspectorArgs.parse(["--cli", "--prompt-args", "id="]),
      Either.left("Invalid parameter format: id=. Use key=value format.")
    )
    assert.deepStrictEqual(
      InspectorArgs.parse(["--cli", "--config", "c.json"]),
      Either.left(
        "Both --config and --server must be provided together. If you specify one, you must specify the other."
      )
    )
  })
})
