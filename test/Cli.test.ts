/**
 * The `presa-mcp` command line (issue #18), run as a process (`node --import tsx src/bin.ts`)
 * against real servers: our reference library over stdio (`examples/library.ts --stdio`) and over
 * Streamable HTTP (a server of this test on 127.0.0.1, port 0, with a few extra tools), and the
 * official `@modelcontextprotocol/server-everything` over stdio (legacy era). Every command, the
 * `--json` shapes and the exit codes (0 ok, 1 isError, 2 JSON-RPC error, 3 usage, 4 connection,
 * 5 skill verification; `listen` ends with 0 on SIGINT).
 *
 * The machine is shared and loaded: each CLI run gets a generous but bounded deadline.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Input, McpServer, Tool } from "presa-mcp"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import { codeReview, libraryOptions } from "../examples/library-definitions.js"
import * as Commands from "../src/internal/cli/commands.js"
import { progressLine } from "../src/internal/cli/interaction.js"
import * as Target from "../src/internal/cli/target.js"
import * as Values from "../src/internal/cli/values.js"
import { setup as setupAuthorizationServer } from "./support/AuthorizationServer.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const RUN_MS = 90_000
const TEST_MS = 240_000

const LIBRARY_STDIO = ["--", process.execPath, "--import", "tsx", "examples/library.ts", "--stdio"]
const EVERYTHING = Path.join(
  Path.dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js"
)
const EVERYTHING_STDIO = ["--", process.execPath, EVERYTHING, "stdio"]

interface Run {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** Starts the CLI with `args` (stdin closed), in its own process group. */
const spawnCli = (args: ReadonlyArray<string>) =>
  ChildProcess.spawn(process.execPath, ["--import", "tsx", "src/bin.ts", ...args], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"]
  })

/**
 * Runs the CLI to its end (killed with its group after {@link RUN_MS}); `onStderr` sees the
 * stderr read so far after each chunk (a failure it reports rejects the run).
 */
const runCli = (
  args: ReadonlyArray<string>,
  onStderr: (stderr: string, fail: (error: unknown) => void) => void = () => {}
): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = spawnCli(args)
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
      onStderr(stderr, reject)
    })
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
      reject(new Error(`presa-mcp ${args.join(" ")}: no exit within ${RUN_MS} ms\n${stderr}`))
    }, RUN_MS)
    child.once("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })

/** Runs the CLI to its end (see {@link runCli}). */
const cli = (...args: ReadonlyArray<string>): Promise<Run> => runCli(args)

/** `script` (util-linux) runs a command on a pseudo-terminal: stdin, stdout and stderr are a TTY. */
const SCRIPT = "/usr/bin/script"
const hasScript = Fs.existsSync(SCRIPT)
const shellQuote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`

/** The CLI on a pseudo-terminal (stdout and stderr merged, as a terminal shows them). */
const spawnOnTty = (args: ReadonlyArray<string>) =>
  ChildProcess.spawn(
    SCRIPT,
    ["-qec", [process.execPath, "--import", "tsx", "src/bin.ts", ...args].map(shellQuote).join(" "), "/dev/null"],
    { cwd: ROOT, detached: true, stdio: ["pipe", "pipe", "pipe"] }
  )

/** Collects a child's stdout; `waitFor` polls for a condition (bounded by {@link RUN_MS}). */
const watch = (child: ChildProcess.ChildProcess) => {
  const seen = { stdout: "", stderr: "" }
  child.stdout?.on("data", (chunk: Buffer) => (seen.stdout += chunk.toString()))
  child.stderr?.on("data", (chunk: Buffer) => (seen.stderr += chunk.toString()))
  const closed = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)))
  const waitFor = async (what: () => boolean, label: string) => {
    const deadline = Date.now() + RUN_MS
    while (!what()) {
      if (Date.now() > deadline) {
        if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, "SIGKILL")
        assert.fail(`${label} not seen within ${RUN_MS} ms\nstdout: ${seen.stdout}\nstderr: ${seen.stderr}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  return { seen, closed, waitFor }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** stdout as exactly one JSON document (an object). */
const json = (run: Run): Record<string, unknown> => {
  const value: unknown = JSON.parse(run.stdout)
  assert.isTrue(isRecord(value), run.stdout)
  return isRecord(value) ? value : {}
}
const field = (o: unknown, key: string): unknown => (isRecord(o) ? o[key] : undefined)
const pluck = (
  list: unknown,
  key: string
): Array<unknown> => (Array.isArray(list) ? list.map((x) => field(x, key)) : [])
const names = (list: unknown): Array<unknown> => pluck(list, "name")

const expectCode = (run: Run, code: number) =>
  assert.strictEqual(run.code, code, `exit ${run.code} (want ${code})\nstdout: ${run.stdout}\nstderr: ${run.stderr}`)

// ---------------------------------------------------------------------------------------------
// The HTTP server of this test: the library plus tools for isError, progress, elicitation

const fail = Tool.fromJsonSchema({
  name: "fail",
  description: "Always fails as a tool.",
  handler: () => Effect.fail(new Tool.ToolError({ message: "it failed" }))
})
const slow = Tool.fromJsonSchema({
  name: "slow",
  description: "Reports progress 1..3 of 3, then answers done.",
  handler: (_args, ctx) =>
    Effect.gen(function*() {
      for (const step of [1, 2, 3]) {
        yield* ctx.progress(step, { total: 3, message: `step ${step}` })
        yield* Effect.sleep("20 millis")
      }
      return "done"
    })
})
const ask = Tool.fromJsonSchema({
  name: "ask",
  description: "Asks the user for a name and echoes the answer's action.",
  handler: () =>
    Effect.map(
      Input.elicit("Your name?", { type: "object", properties: { name: { type: "string" } }, required: ["name"] }),
      (answer) => `action: ${answer.action}${answer.content === undefined ? "" : ` ${JSON.stringify(answer.content)}`}`
    )
})

let scope: Scope.CloseableScope | undefined
let server: McpServer.McpServer | undefined
let url = ""

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  const skill = await Effect.runPromise(codeReview)
  const s = await Effect.runPromise(
    McpServer.make({
      ...libraryOptions,
      listChanged: true,
      skills: [skill],
      tools: [...(libraryOptions.tools ?? []), fail, slow, ask]
    })
  )
  server = s
  const address = await Effect.runPromise(Scope.extend(StreamableHttp.serve(s, { port: 0, host: "127.0.0.1" }), scope))
  url = address.url
})

afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
})

// ---------------------------------------------------------------------------------------------

describe("presa-mcp (help and usage errors)", () => {
  it("--help prints the commands, targets and exit codes; exit 0", { timeout: TEST_MS }, async () => {
    const run = await cli("--help")
    expectCode(run, 0)
    for (const text of ["info", "tools", "call", "listen", "EXIT CODES", "TARGET", "130"]) {
      assert.include(run.stdout, text)
    }
  })

  it("usage errors exit 3 with nothing on stdout", { timeout: TEST_MS }, async () => {
    const runs = await Promise.all([
      cli("tools"), // no target
      cli("bogus"), // unknown command
      cli("call", "add", "--args", "[1]", ...LIBRARY_STDIO), // --args not an object
      cli("call", "add", "novalue", ...LIBRARY_STDIO), // not key=value
      cli("complete", "id=a", ...LIBRARY_STDIO), // neither --prompt nor --resource
      cli("tools", "--header", "X-A:1", ...LIBRARY_STDIO), // --header with a stdio target
      cli("tools", "--timeout", "soon", "http://127.0.0.1:9/mcp"), // bad duration
      cli("tools", "--url", "http://127.0.0.1:9/mcp", "--", "node") // both targets
    ])
    for (const run of runs) {
      expectCode(run, 3)
      assert.strictEqual(run.stdout, "")
      assert.notStrictEqual(run.stderr, "")
    }
    assert.include(runs[0]?.stderr ?? "", "no server given")
    assert.include(runs[2]?.stderr ?? "", "--args must be a JSON object")
  })

  it("connection errors exit 4; --json prints {error: {kind: \"transport\"}}", { timeout: TEST_MS }, async () => {
    const [spawnFailure, refused] = await Promise.all([
      cli("tools", "--json", "--", "presa-mcp-test-no-such-program"),
      cli("info", "--json", "http://127.0.0.1:9/mcp")
    ])
    for (const run of [spawnFailure, refused]) {
      if (run === undefined) continue
      expectCode(run, 4)
      assert.strictEqual(field(json(run).error, "kind"), "transport")
    }
    assert.strictEqual(field(json(spawnFailure).error, "reason"), "Spawn")
    assert.strictEqual(field(json(refused).error, "reason"), "Http")
  })
})

describe.concurrent("presa-mcp against the library over stdio", () => {
  it("info --json: era, version, server info, capabilities, instructions", { timeout: TEST_MS }, async () => {
    const run = await cli("info", "--json", ...LIBRARY_STDIO)
    expectCode(run, 0)
    const out = json(run)
    assert.strictEqual(out.era, "modern")
    assert.strictEqual(out.protocolVersion, "2026-07-28")
    assert.deepStrictEqual(out.serverInfo, { name: "presa-library", version: "0.1.0" })
    assert.isTrue(isRecord(field(out.capabilities, "tools")))
    assert.include(String(out.instructions), "reference library")
    assert.deepStrictEqual(out.supportedVersions, ["2026-07-28", "2025-11-25", "2025-06-18"])
  })

  it("--era legacy speaks 2025-11-25 (initialize)", { timeout: TEST_MS }, async () => {
    const run = await cli("info", "--json", "--era", "legacy", ...LIBRARY_STDIO)
    expectCode(run, 0)
    assert.strictEqual(json(run).era, "legacy")
    assert.strictEqual(json(run).protocolVersion, "2025-11-25")
  })

  it("call add numbers=[1,2,3]: key=value values as JSON; text and --json", { timeout: TEST_MS }, async () => {
    const [text, asJson] = await Promise.all([
      cli("call", "add", "numbers=[1,2,3]", ...LIBRARY_STDIO),
      cli("call", "add", "--json", "--args", "{\"numbers\":[1,2]}", "numbers=[4,5]", ...LIBRARY_STDIO)
    ])
    if (text === undefined || asJson === undefined) return assert.fail("no run")
    expectCode(text, 0)
    assert.include(text.stdout, "\"sum\": 6")
    expectCode(asJson, 0)
    assert.deepStrictEqual(json(asJson).structuredContent, { sum: 9 }) // key=value wins over --args
  })

  it(
    "call a task tool (Tasks extension): followed to its result, required and optional",
    { timeout: TEST_MS },
    async () => {
      const tasksServer = ["--", process.execPath, "--import", "tsx", Path.join(ROOT, "test/fixtures/tasks-server.ts")]
      const [must, steps] = await Promise.all([
        cli("call", "must", "--json", ...tasksServer),
        cli("call", "steps", "n=2", "delayMs=10", ...tasksServer)
      ])
      if (must === undefined || steps === undefined) return assert.fail("no run")
      expectCode(must, 0)
      assert.deepStrictEqual(field(json(must), "content"), [{ type: "text", text: "must ran" }])
      expectCode(steps, 0)
      assert.include(steps.stdout, "done 2 steps")
    }
  )

  it("skills --json: the code-review skill, verified", { timeout: TEST_MS }, async () => {
    const run = await cli("skills", "--json", ...LIBRARY_STDIO)
    expectCode(run, 0)
    const out = json(run)
    assert.strictEqual(out.supported, true)
    assert.isTrue(Array.isArray(out.skills))
    const [skill] = Array.isArray(out.skills) ? out.skills : []
    assert.strictEqual(field(skill, "uri"), "skill://code-review/SKILL.md")
    assert.strictEqual(field(field(skill, "frontmatter"), "name"), "code-review")
    assert.strictEqual(field(skill, "verified"), true)
  })
})

describe.concurrent("presa-mcp against the library over HTTP", () => {
  it("info, tools, resources, templates, prompts (--json shapes)", { timeout: TEST_MS }, async () => {
    const [info, tools, resources, templates, prompts] = await Promise.all([
      cli("info", url, "--json"),
      cli("tools", url, "--json"),
      cli("resources", url, "--json"),
      cli("templates", url, "--json"),
      cli("prompts", url, "--json")
    ])
    if (!info || !tools || !resources || !templates || !prompts) return assert.fail("no run")
    for (const run of [info, tools, resources, templates, prompts]) expectCode(run, 0)
    assert.strictEqual(json(info).era, "modern")
    assert.deepStrictEqual(names(json(tools).tools), ["add", "logo", "fail", "slow", "ask"])
    assert.deepStrictEqual(names(json(resources).resources), ["readme", "code-review"])
    assert.deepStrictEqual(pluck(json(templates).resourceTemplates, "uriTemplate"), ["people://{id}"])
    assert.deepStrictEqual(names(json(prompts).prompts), ["introduce"])
  })

  it("text output lists the names", { timeout: TEST_MS }, async () => {
    const run = await cli("tools", url)
    expectCode(run, 0)
    assert.include(run.stdout, "add (Add numbers) — Adds a list of numbers and returns their sum.")
    assert.include(run.stdout, "arguments: numbers: array")
  })

  it(
    "text output shows the values an argument allows (enum, const, a union of literals)",
    { timeout: TEST_MS },
    async () => {
      const many = Array.from({ length: 20 }, (_, i) => `v${i}`)
      const pick = Tool.fromJsonSchema({
        name: "pick",
        inputSchema: {
          type: "object",
          properties: {
            mode: { type: "string", enum: ["fast", "safe"] },
            kind: { type: "string", const: "fixed" },
            level: { anyOf: [{ const: 1 }, { const: 2 }, { type: "string", enum: ["max"] }] },
            wide: { type: "string", enum: many },
            free: { type: "string" }
          },
          required: ["mode"]
        },
        handler: () => "picked"
      })
      const local = await Effect.runPromise(Scope.make())
      try {
        const address = await Effect.runPromise(
          Effect.flatMap(
            McpServer.make({ name: "enums", version: "1.0.0", tools: [pick] }),
            (s) => Scope.extend(StreamableHttp.serve(s, { port: 0, host: "127.0.0.1" }), local)
          )
        )
        const [text, asJson] = await Promise.all([cli("tools", address.url), cli("tools", address.url, "--json")])
        expectCode(text, 0)
        expectCode(asJson, 0)
        assert.include(
          text.stdout,
          "arguments: mode: string (\"fast\" | \"safe\"), kind: string (\"fixed\")?, level: (1 | 2 | \"max\")?, " +
            `wide: string (${many.slice(0, 12).map((v) => `"${v}"`).join(" | ")} | … (20 values))?, free: string?`
        )
        // --json: the schema as the server sent it
        assert.include(asJson.stdout, "\"enum\"")
      } finally {
        await Effect.runPromise(Scope.close(local, Exit.void))
      }
    }
  )

  it("read, prompt, complete (--json shapes); --url and --header", { timeout: TEST_MS }, async () => {
    const [read, prompt, completePrompt, completeTemplate] = await Promise.all([
      cli("read", "--url", url, "people://ada", "--json", "--header", "X-Test: 1"),
      cli("prompt", url, "introduce", "id=ada", "--json"),
      cli("complete", url, "--prompt", "introduce", "id=a", "--json"),
      cli("complete", url, "--resource", "people://{id}", "id=al", "--json")
    ])
    if (!read || !prompt || !completePrompt || !completeTemplate) return assert.fail("no run")
    for (const run of [read, prompt, completePrompt, completeTemplate]) expectCode(run, 0)
    assert.deepStrictEqual(json(read).contents, [{ uri: "people://ada", mimeType: "text/plain", text: "Ada Lovelace" }])
    assert.deepStrictEqual(json(prompt).messages, [
      { role: "user", content: { type: "text", text: "Introduce Ada Lovelace in one sentence." } }
    ])
    assert.deepStrictEqual(field(json(completePrompt).completion, "values"), ["ada", "alan"])
    assert.deepStrictEqual(field(json(completeTemplate).completion, "values"), ["alan"])
  })

  it("exit codes: isError → 1, JSON-RPC error → 2 (--json {error})", { timeout: TEST_MS }, async () => {
    const [toolError, unknownTool, unknownPerson, missingResource] = await Promise.all([
      cli("call", url, "fail", "--json"),
      cli("call", url, "nope", "--json"),
      cli("prompt", url, "introduce", "id=zed"),
      cli("read", url, "people://nobody", "--json")
    ])
    if (!toolError || !unknownTool || !unknownPerson || !missingResource) return assert.fail("no run")
    expectCode(toolError, 1)
    assert.strictEqual(json(toolError).isError, true)
    assert.deepStrictEqual(json(toolError).content, [{ type: "text", text: "it failed" }])
    expectCode(unknownTool, 2)
    assert.strictEqual(field(json(unknownTool).error, "kind"), "jsonrpc")
    assert.strictEqual(field(json(unknownTool).error, "code"), -32602)
    expectCode(unknownPerson, 2)
    assert.strictEqual(unknownPerson.stdout, "")
    assert.include(unknownPerson.stderr, "Unknown person: zed")
    expectCode(missingResource, 2)
    assert.strictEqual(field(json(missingResource).error, "code"), -32602)
  })

  it("a long call: no progress bar when stderr is not a terminal; the result", { timeout: TEST_MS }, async () => {
    const run = await cli("call", url, "slow")
    expectCode(run, 0)
    assert.strictEqual(run.stdout, "done\n")
    assert.notInclude(run.stderr, "[#")
    assert.notInclude(run.stderr, "\r")
  })

  it("elicitation without a terminal is declined", { timeout: TEST_MS }, async () => {
    const run = await cli("call", url, "ask", "--json")
    expectCode(run, 0)
    assert.deepStrictEqual(json(run).content, [{ type: "text", text: "action: decline" }])
    assert.include(run.stderr, "elicitation declined (not a terminal): Your name?")
  })

  it("listen prints list_changed as it happens and exits 0 on SIGINT", { timeout: TEST_MS }, async () => {
    const child = spawnCli(["listen", url, "--json"])
    const { closed, seen, waitFor } = watch(child)
    await waitFor(() => seen.stderr.includes("listening:"), "listening")
    assert.strictEqual(seen.stdout, "")
    const extra = Tool.fromJsonSchema({ name: "extra", description: "added while listening", handler: () => "x" })
    if (server === undefined) return assert.fail("no server")
    await Effect.runPromise(McpServer.addTool(server, extra))
    await waitFor(() => seen.stdout.includes("\n"), "a notification")
    const [line] = seen.stdout.split("\n")
    const notification: unknown = JSON.parse(line ?? "")
    assert.strictEqual(field(notification, "method"), "notifications/tools/list_changed")
    child.kill("SIGINT")
    assert.strictEqual(await closed, 0)
    await Effect.runPromise(McpServer.removeTool(server, "extra"))
  })
  it("logs go to stderr: a legacy listen whose server stops logs its reconnection there; stdout holds no log line", {
    timeout: TEST_MS
  }, async () => {
    const own = await Effect.runPromise(Scope.make())
    const stopping = await Effect.runPromise(McpServer.make({ name: "stopping", version: "0.0.0", listChanged: true }))
    const address = await Effect.runPromise(
      Scope.extend(StreamableHttp.serve(stopping, { port: 0, host: "127.0.0.1" }), own)
    )
    const child = spawnCli(["listen", address.url, "--era", "legacy", "--json"])
    const { closed, seen, waitFor } = watch(child)
    await waitFor(() => seen.stderr.includes("listening:"), "listening")
    await Effect.runPromise(Scope.close(own, Exit.void))
    await waitFor(() => seen.stderr.includes("level=INFO"), "a log line (the client's reconnection notice)")
    if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, "SIGKILL")
    await closed
    assert.notInclude(seen.stdout, "level=")
    assert.notInclude(seen.stdout, "listening again")
  })
})

describe("presa-mcp on a terminal (a pseudo-terminal from script(1))", () => {
  it.skipIf(!hasScript)("a long call draws a progress bar on stderr", { timeout: TEST_MS }, async () => {
    const child = spawnOnTty(["call", url, "slow"])
    const { closed, seen } = watch(child)
    child.stdin?.end()
    assert.strictEqual(await closed, 0, seen.stdout)
    assert.include(seen.stdout, "\r\x1b[2K[")
    assert.match(seen.stdout, /\[#{10}-{20}\]\s+33% step 1/)
    assert.include(seen.stdout, "done")
  })

  it.skipIf(!hasScript)("elicitation asks each field on the terminal and sends the answers", {
    timeout: TEST_MS
  }, async () => {
    const child = spawnOnTty(["call", url, "ask"])
    const { closed, seen, waitFor } = watch(child)
    await waitFor(() => seen.stdout.includes("Your name?"), "the question")
    await waitFor(() => seen.stdout.includes("name"), "the field prompt")
    child.stdin?.write("Ada\r")
    await waitFor(() => seen.stdout.includes("Send these answers?"), "the confirmation")
    child.stdin?.write("\r")
    await waitFor(() => seen.stdout.includes("action: accept"), "the tool's answer")
    child.stdin?.end()
    assert.strictEqual(await closed, 0, seen.stdout)
    assert.include(seen.stdout, "action: accept {\"name\":\"Ada\"}")
  })
})

describe.concurrent("presa-mcp against @modelcontextprotocol/server-everything (stdio, legacy)", () => {
  it("info and tools", { timeout: TEST_MS }, async () => {
    const [info, tools] = await Promise.all([
      cli("info", "--json", ...EVERYTHING_STDIO),
      cli("tools", "--json", ...EVERYTHING_STDIO)
    ])
    if (!info || !tools) return assert.fail("no run")
    expectCode(info, 0)
    assert.strictEqual(json(info).era, "legacy")
    assert.strictEqual(json(info).protocolVersion, "2025-11-25")
    assert.strictEqual(field(json(info).serverInfo, "name"), "mcp-servers/everything")
    expectCode(tools, 0)
    const toolNames = names(json(tools).tools)
    for (const name of ["echo", "get-sum", "trigger-long-running-operation", "trigger-elicitation-request"]) {
      assert.include(toolNames, name)
    }
  })

  it("text output of tools shows enum values", { timeout: TEST_MS }, async () => {
    const tools = await cli("tools", ...EVERYTHING_STDIO)
    expectCode(tools, 0)
    assert.include(tools.stdout, "arguments: messageType: string (\"error\" | \"success\" | \"debug\")")
    assert.include(tools.stdout, "resourceType: string (\"Text\" | \"Blob\")?")
  })

  it("call echo and get-sum; a long-running operation with progress", { timeout: TEST_MS }, async () => {
    const [echo, sum, long] = await Promise.all([
      cli("call", "echo", "message=hello", ...EVERYTHING_STDIO),
      cli("call", "get-sum", "a=2", "b=3", "--json", ...EVERYTHING_STDIO),
      cli("call", "trigger-long-running-operation", "duration=1", "steps=2", ...EVERYTHING_STDIO)
    ])
    if (!echo || !sum || !long) return assert.fail("no run")
    expectCode(echo, 0)
    assert.strictEqual(echo.stdout, "Echo: hello\n")
    expectCode(sum, 0)
    assert.include(JSON.stringify(json(sum).content), "5")
    expectCode(long, 0)
    assert.include(long.stdout, "Long running operation completed")
  })

  it("a legacy elicitation request (stdio) is declined without a terminal", { timeout: TEST_MS }, async () => {
    const run = await cli("call", "trigger-elicitation-request", "--json", ...EVERYTHING_STDIO)
    expectCode(run, 0)
    assert.include(JSON.stringify(json(run).content), "decline")
    assert.include(run.stderr, "elicitation declined (not a terminal)")
  })

  it("resources, templates, read, prompts, prompt, complete, skills", { timeout: TEST_MS }, async () => {
    const [resources, templates, read, prompts, prompt, complete, skills] = await Promise.all([
      cli("resources", "--json", ...EVERYTHING_STDIO),
      cli("templates", "--json", ...EVERYTHING_STDIO),
      cli("read", "demo://resource/dynamic/text/1", "--json", ...EVERYTHING_STDIO),
      cli("prompts", "--json", ...EVERYTHING_STDIO),
      cli("prompt", "args-prompt", "city=Paris", "--json", ...EVERYTHING_STDIO),
      cli("complete", "--prompt", "completable-prompt", "department=E", "--json", ...EVERYTHING_STDIO),
      cli("skills", "--json", ...EVERYTHING_STDIO)
    ])
    if (!resources || !templates || !read || !prompts || !prompt || !complete || !skills) return assert.fail("no run")
    for (const run of [resources, templates, read, prompts, prompt, complete, skills]) expectCode(run, 0)
    assert.isAbove(names(json(resources).resources).length, 0)
    assert.include(pluck(json(templates).resourceTemplates, "uriTemplate"), "demo://resource/dynamic/text/{resourceId}")
    const contentsList = json(read).contents
    const contents: unknown = Array.isArray(contentsList) ? contentsList[0] : undefined
    assert.strictEqual(field(contents, "uri"), "demo://resource/dynamic/text/1")
    assert.include(String(field(contents, "text")), "Resource 1")
    assert.include(names(json(prompts).prompts), "args-prompt")
    assert.include(JSON.stringify(json(prompt).messages), "Paris")
    assert.deepStrictEqual(field(json(complete).completion, "values"), ["Engineering"])
    assert.deepStrictEqual(json(skills), { supported: false, skills: [] })
  })

  it("an unknown prompt is a JSON-RPC error (exit 2); an unknown tool is its isError result (exit 1)", {
    timeout: TEST_MS
  }, async () => {
    // server-everything answers an unknown tool with an isError result, not -32602.
    const [prompt, tool] = await Promise.all([
      cli("prompt", "no-such-prompt", "--json", ...EVERYTHING_STDIO),
      cli("call", "no-such-tool", "--json", ...EVERYTHING_STDIO)
    ])
    if (!prompt || !tool) return assert.fail("no run")
    expectCode(prompt, 2)
    assert.strictEqual(field(json(prompt).error, "kind"), "jsonrpc")
    assert.strictEqual(field(json(prompt).error, "code"), -32602)
    expectCode(tool, 1)
    assert.strictEqual(json(tool).isError, true)
  })
})

describe("presa-mcp --oauth and login (a server protected by an authorization server of the test's own)", () => {
  /**
   * Runs the CLI and plays the user: when the authorization URL appears on stderr it is fetched,
   * and the authorization server's redirect is followed to the CLI's loopback listener.
   */
  const cliAuthorizing = async (args: ReadonlyArray<string>): Promise<Run & { readonly opened: Array<string> }> => {
    const opened: Array<string> = []
    const run = await runCli(args, (stderr, fail) => {
      const found = /^(http:\/\/127\.0\.0\.1:\d+\/as\/authorize\?\S+)$/m.exec(stderr)?.[1]
      if (found !== undefined && !opened.includes(found)) {
        opened.push(found)
        fetch(found).then((page) => page.text()).catch(fail)
      }
    })
    return { ...run, opened }
  }

  it("login authorizes through the printed URL and stores the tokens (0600); --oauth reuses them", {
    timeout: TEST_MS
  }, async () => {
    const scope = await Effect.runPromise(Scope.make())
    const dir = Fs.mkdtempSync(Path.join(Fs.realpathSync(process.env.TMPDIR ?? "/tmp"), "presa-cli-oauth-"))
    try {
      const { rec, url } = await Effect.runPromise(Scope.extend(setupAuthorizationServer(), scope))
      const store = Path.join(dir, "tokens.json")
      const login = await cliAuthorizing(["login", url, "--oauth-store", store])
      assert.strictEqual(login.code, 0, login.stderr)
      assert.strictEqual(login.opened.length, 1)
      assert.include(login.stdout, "authorized: protected 1")
      assert.strictEqual(rec.authorizations.length, 1)
      assert.match(rec.authorizations[0]?.get("redirect_uri") ?? "", /^http:\/\/127\.0\.0\.1:\d+\/callback$/)
      assert.strictEqual(Fs.statSync(store).mode & 0o777, 0o600)
      const stored: unknown = JSON.parse(Fs.readFileSync(store, "utf8"))
      assert.hasAllKeys(stored, [url])

      const tools = await cli("tools", url, "--oauth", "--oauth-store", store, "--json")
      assert.strictEqual(tools.code, 0, tools.stderr)
      assert.include(tools.stdout, "whoami")
      assert.strictEqual(rec.authorizations.length, 1, "the stored token is sent: no second authorization")
      assert.notInclude(tools.stderr, "authorize")

      const call = await cli("call", url, "whoami", "--oauth", "--oauth-store", store)
      assert.strictEqual(call.code, 0, call.stderr)
      assert.include(call.stdout, "hello alice")

      const bare = await cli("tools", url)
      assert.strictEqual(bare.code, 4, "without --oauth the server's 401 is a connection error")
      assert.include(bare.stderr, "Unauthorized")
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("--oauth with a stdio target, or with --bearer, is a usage error", { timeout: TEST_MS }, async () => {
    const stdio = await cli("tools", "--oauth", ...LIBRARY_STDIO)
    assert.strictEqual(stdio.code, 3, stdio.stderr)
    const both = await cli("tools", "http://127.0.0.1:9/mcp", "--oauth", "--bearer", "x")
    assert.strictEqual(both.code, 3, both.stderr)
  })
})

describe("presa-mcp proxy CONFIG (an mcpServers file)", () => {
  const writeConfig = (config: unknown): string => {
    const dir = Fs.mkdtempSync(Path.join(Fs.realpathSync(process.env.TMPDIR ?? "/tmp"), "presa-cli-proxy-"))
    const file = Path.join(dir, "servers.json")
    Fs.writeFileSync(file, JSON.stringify(config))
    return file
  }

  it("serves two backends over stdio under their prefixes; include keeps one tool of the SDK v1 server", {
    timeout: TEST_MS
  }, async () => {
    const file = writeConfig({
      mcpServers: {
        lib: {
          command: process.execPath,
          args: ["--import", "tsx", Path.join(ROOT, "examples/library.ts"), "--stdio"]
        },
        v1: {
          command: process.execPath,
          args: ["--import", "tsx", Path.join(ROOT, "test/fixtures/sdk-v1-server.ts")],
          include: ["echo"]
        }
      }
    })
    const proxy = ["--", process.execPath, "--import", "tsx", "src/bin.ts", "proxy", file]
    const tools = await cli("tools", "--json", ...proxy)
    assert.strictEqual(tools.code, 0, tools.stderr)
    assert.deepStrictEqual(names(json(tools).tools).sort(), ["lib_add", "lib_logo", "v1_echo"])
    const call = await cli("call", "v1_echo", "text=through the proxy", "--json", ...proxy)
    assert.strictEqual(call.code, 0, call.stderr)
    assert.deepStrictEqual(json(call).content, [{ type: "text", text: "through the proxy" }])
  })

  it("a bad file exits 3 naming the field; a missing file exits 3", { timeout: TEST_MS }, async () => {
    const bad = writeConfig({ mcpServers: { lib: { command: "node", args: ["ok", 3] } } })
    const run = await cli("proxy", bad)
    assert.strictEqual(run.code, 3, run.stderr)
    assert.include(run.stderr, "mcpServers.lib.args[1]")
    assert.strictEqual(run.stdout, "")
    const missing = await cli("proxy", Path.join(Path.dirname(bad), "nope.json"))
    assert.strictEqual(missing.code, 3, missing.stderr)
  })

  it("--http serves on the port it prints; our CLI lists the tools through it", { timeout: TEST_MS }, async () => {
    const file = writeConfig({
      mcpServers: {
        lib: { command: process.execPath, args: ["--import", "tsx", Path.join(ROOT, "examples/library.ts"), "--stdio"] }
      }
    })
    const child = spawnCli(["proxy", file, "--http"])
    const { seen, waitFor } = watch(child)
    try {
      await waitFor(() => /serving lib on (http\S+)/.test(seen.stderr), "the proxy's URL")
      const url = /serving lib on (http\S+)/.exec(seen.stderr)?.[1] ?? ""
      const tools = await cli("tools", "--json", url)
      assert.strictEqual(tools.code, 0, tools.stderr)
      assert.deepStrictEqual(names(json(tools).tools).sort(), ["lib_add", "lib_logo"])
      // the backends' health: a line per status change on stderr, and the HTTP route
      assert.include(seen.stderr, "presa-mcp proxy: backend lib is connected")
      const health = await fetch(new URL("/health/backends", url))
      assert.strictEqual(health.status, 200)
      assert.deepStrictEqual(await health.json(), { status: "ok", lib: "up" })
    } finally {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, "SIGKILL")
    }
  })
})

describe("presa-mcp value parsing and progress line", () => {
  it(
    "login against a server that asks for no authorization says so and stores nothing",
    { timeout: TEST_MS },
    async () => {
      const dir = Fs.mkdtempSync(Path.join(Fs.realpathSync(process.env.TMPDIR ?? "/tmp"), "presa-cli-login-"))
      try {
        const store = Path.join(dir, "tokens.json")
        const login = await cli("login", url, "--oauth-store", store)
        assert.strictEqual(login.code, 0, login.stderr)
        assert.include(login.stdout, "connected: presa-library")
        assert.include(login.stdout, "the server asked for no authorization, no tokens stored")
        assert.isFalse(Fs.existsSync(store))
        const stdio = await cli("login", "--oauth-store", store, "--", "node", "-e", "0")
        assert.strictEqual(stdio.code, 3)
        assert.include(stdio.stderr, "login apply to a URL target only")
      } finally {
        Fs.rmSync(dir, { recursive: true, force: true })
      }
    }
  )

  it("--oauth target rules: settings reach the HTTP target; misuse is a usage error", () => {
    const base: Target.TargetOptions = {
      url: Option.some("https://mcp.example.com/mcp"),
      header: [],
      bearer: Option.none(),
      era: "auto",
      timeout: Option.none(),
      oauth: true,
      oauthClientId: Option.some("app"),
      oauthClientSecret: Option.some("s"),
      oauthStore: Option.some("/tmp/t.json")
    }
    const none = { command: [], cliArgs: [], dashDash: false }
    const ok = Target.resolve(base, none)
    assert.isTrue(Either.isRight(ok))
    if (Either.isRight(ok) && ok.right._tag === "Http") {
      assert.deepStrictEqual(ok.right.oauth, { clientId: "app", clientSecret: "s", store: "/tmp/t.json" })
    }
    const plain = Target.resolve({
      ...base,
      oauth: false,
      oauthClientId: Option.none(),
      oauthClientSecret: Option.none(),
      oauthStore: Option.none()
    }, none)
    assert.isTrue(Either.isRight(plain) && plain.right._tag === "Http" && plain.right.oauth === undefined)
    const refused = (o: Partial<Target.TargetOptions>) => Either.isLeft(Target.resolve({ ...base, ...o }, none))
    assert.isTrue(refused({ bearer: Option.some("t") }), "--oauth with --bearer")
    assert.isTrue(refused({ oauth: false }), "--oauth-* without --oauth")
    assert.isTrue(refused({ oauthClientId: Option.none() }), "a secret without a client id")
    assert.isTrue(
      Either.isLeft(Target.resolve({ ...base, url: Option.none() }, { command: ["srv"], cliArgs: [], dashDash: true })),
      "--oauth with a stdio target"
    )
  })

  it("key=value: JSON when valid, else the string", () => {
    assert.deepStrictEqual(
      Either.getOrThrow(
        Values.keyValues(["n=3", "xs=[1,2]", "flag=true", "s=\"3\"", "name=Ada", "eq=a=b", "empty="], true)
      ),
      { n: 3, xs: [1, 2], flag: true, s: "3", name: "Ada", eq: "a=b", empty: "" }
    )
    assert.isTrue(Either.isLeft(Values.keyValue("=x", true)))
    assert.deepStrictEqual(Either.getOrThrow(Values.stringPairs(["n=3"])), { n: "3" })
  })

  it("the target: the command after --, or the first positional http(s) URL", () => {
    const split = (...args: Array<string>) => Target.split(args, Commands.names, Commands.valueOptions)
    assert.deepStrictEqual(split("tools", "--json", "http://h/mcp"), {
      cliArgs: ["tools", "--url", "http://h/mcp", "--json"],
      command: [],
      dashDash: false
    })
    // an option's value is not the target; the first URL is, the second is read's URI
    assert.deepStrictEqual(
      split("read", "--header", "X:1", "https://h/mcp", "https://example.com/r").cliArgs,
      ["read", "--url", "https://h/mcp", "--header", "X:1", "https://example.com/r"]
    )
    assert.deepStrictEqual(split("listen", "--resource", "http://r/1", "http://h/mcp").cliArgs, [
      "listen",
      "--url",
      "http://h/mcp",
      "--resource",
      "http://r/1"
    ])
    // a subcommand of a group (registry init): the URL after it; registry init's --remote value is not it
    assert.deepStrictEqual(
      split("registry", "init", "--remote", "https://r.example/mcp", "http://h/mcp", "--stdout").cliArgs,
      ["registry", "init", "--url", "http://h/mcp", "--remote", "https://r.example/mcp", "--stdout"]
    )
    assert.deepStrictEqual(split("registry", "validate", "http://h/mcp").cliArgs, [
      "registry",
      "validate",
      "http://h/mcp"
    ])
    // after --, nothing is read as ours, and no URL before it is taken as the target
    assert.deepStrictEqual(split("read", "http://r/1", "--", "node", "s.js", "--help"), {
      cliArgs: ["read", "http://r/1"],
      command: ["node", "s.js", "--help"],
      dashDash: true
    })
  })

  it("progress line with and without a total", () => {
    assert.strictEqual(
      progressLine({ progressToken: 1, progress: 1, total: 2, message: "half" }, 80),
      `[${"#".repeat(15)}${"-".repeat(15)}]  50% half`
    )
    assert.strictEqual(progressLine({ progressToken: 1, progress: 7 }, 80), "… 7")
  })
})
