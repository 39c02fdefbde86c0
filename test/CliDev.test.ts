/**
 * `presa-mcp dev ENTRY` (issue #40, point 3), run as a process (`node --import tsx src/bin.ts dev`):
 * a server file in a temporary folder, served through the dev proxy over stdio and over HTTP, to
 * one client kept connected while the file is broken (a syntax error) and fixed again.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { McpClient, type McpSchema } from "presa-mcp"
import * as Stdio from "presa-mcp/transport/Stdio"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"

const ROOT = Path.resolve(import.meta.dirname, "..")
const src = (module: string) => JSON.stringify(Path.join(ROOT, "src", module))

/** A server with one tool, `version`, answering `constant`; `broken` adds a syntax error. */
const serverFile = (constant: string, broken = false) =>
  `import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as McpServer from ${src("McpServer.js")}
import * as Tool from ${src("Tool.js")}
import * as Stdio from ${src("transport/Stdio.js")}

const VERSION = ${JSON.stringify(constant)}${broken ? " +" : ""}
const version = Tool.make({ name: "version", handler: () => Effect.succeed(VERSION) })
NodeRuntime.runMain(
  Effect.flatMap(McpServer.make({ name: "dev-test", version: "1.0.0", tools: [version] }), (server) => Stdio.run(server)),
  { disablePrettyLogger: true }
)
`

/** A temporary folder with the server file (and the checkout's node_modules, for effect). */
const projectWith = (content: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = Fs.mkdtempSync(Path.join(Fs.realpathSync(process.env.TMPDIR ?? "/tmp"), "presa-cli-dev-"))
      Fs.symlinkSync(Path.join(ROOT, "node_modules"), Path.join(dir, "node_modules"), "dir")
      const file = Path.join(dir, "server.ts")
      Fs.writeFileSync(file, content)
      return { dir, file }
    }),
    ({ dir }) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )
const project = projectWith(serverFile("one"))

/**
 * What a client is told while the server file does not start: the file (as dev names it: relative
 * to dev's working directory, ROOT), the first error line (the compile error, paths relative too,
 * no stack), and that the next save restarts it.
 */
const assertFailedToStart = (result: McpSchema.CallToolResult, file: string) => {
  assert.isTrue(result.isError)
  const message = text(result)
  const shown = Path.relative(ROOT, file)
  assert.match(message, /unavailable/i)
  assert.include(message, `${shown} failed to start: ${shown}:`)
  assert.match(message, /server\.ts:\d+:\d+: ERROR: /)
  assert.include(message, "presa-mcp dev restarts it on the next save")
  assert.notInclude(message, "\n")
  assert.notInclude(message, ` ${Path.dirname(file)}`)
  assert.notMatch(message, /reconnecting|try again later/)
}

/** Polls `check` every 200 ms until it yields `true`, for at most `seconds`; fails naming `what`. */
const waitFor = <E>(what: string, check: Effect.Effect<boolean, E>, seconds = 90) =>
  check.pipe(
    Effect.filterOrFail((ok) => ok, () => new Error(`timed out waiting for ${what}`)),
    Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.upTo(Duration.seconds(seconds)))),
    Effect.orDie
  )

const text = (result: McpSchema.CallToolResult): string =>
  result.content.map((c) => (c.type === "text" ? c.text : "")).join("")

/**
 * The scenario on a connected client: the tool answers "one"; a syntax error is shown on stderr
 * and a call gets an error result (no hang); the fix with "two" brings tools/list_changed and the
 * new answer — the same client throughout.
 */
const scenario = (client: McpClient.McpClient, file: string, stderr: () => string) =>
  Effect.gen(function*() {
    const seen = yield* Ref.make<ReadonlyArray<string>>([])
    const subscription = yield* client.listen({ toolsListChanged: true })
    const collector = yield* subscription.notifications.pipe(
      Stream.runForEach((n) => Ref.update(seen, (all) => [...all, n.method])),
      Effect.fork
    )
    const first = yield* client.callTool("version", {})
    assert.strictEqual(text(first), "one")
    assert.notStrictEqual(first.isError, true)

    Fs.writeFileSync(file, serverFile("one", true))
    yield* waitFor("the compile error on stderr", Effect.sync(() => /did not start/.test(stderr())))
    assert.match(stderr(), /server\.ts:\d+:\d+: ERROR/)
    const broken = yield* client.callTool("version", {})
    assert.isTrue(broken.isError)
    assert.match(text(broken), /unavailable/i)
    assertFailedToStart(broken, file)

    const before = (yield* Ref.get(seen)).length
    Fs.writeFileSync(file, serverFile("two"))
    yield* waitFor(
      "the answer of the fixed server",
      client.callTool("version", {}).pipe(Effect.map((r) => text(r) === "two" && r.isError !== true))
    )
    yield* waitFor(
      "tools/list_changed after the restart",
      Effect.map(Ref.get(seen), (all) => all.slice(before).includes("notifications/tools/list_changed")),
      30
    )
    const tools = yield* client.listTools()
    assert.deepStrictEqual(tools.tools.map((t) => t.name), ["version"])
    yield* Fiber.interrupt(collector)
  })

describe("presa-mcp dev ENTRY", () => {
  it.scopedLive("stdio: the client stays connected across a broken and a fixed edit", () =>
    Effect.gen(function*() {
      const { file } = yield* project
      const lines: Array<string> = []
      const transport = yield* Stdio.spawn({
        command: process.execPath,
        args: ["--import", "tsx", Path.join(ROOT, "src/bin.ts"), "dev", file],
        cwd: ROOT,
        stderr: (line) => Effect.sync(() => lines.push(line))
      })
      const client = yield* McpClient.connect(transport, { requestTimeout: "60 seconds" })
      yield* scenario(client, file, () => lines.join("\n"))
      assert.match(lines.join("\n"), /serving .*server\.ts on stdio/)
    }), 300_000)

  it.scopedLive(
    "stdio: a server broken at its first start: a call is told so (not Unknown tool), a save fixes it",
    () =>
      Effect.gen(function*() {
        const { file } = yield* projectWith(serverFile("one", true))
        const lines: Array<string> = []
        const transport = yield* Stdio.spawn({
          command: process.execPath,
          args: ["--import", "tsx", Path.join(ROOT, "src/bin.ts"), "dev", file],
          cwd: ROOT,
          stderr: (line) => Effect.sync(() => lines.push(line))
        })
        const client = yield* McpClient.connect(transport, { requestTimeout: "60 seconds" })
        yield* waitFor("the compile error on stderr", Effect.sync(() => /did not start/.test(lines.join("\n"))))
        assertFailedToStart(yield* client.callTool("version", {}), file)
        // any name: the server's definitions are not known yet
        assertFailedToStart(yield* client.callTool("anything", {}), file)
        const read = yield* Effect.flip(client.readResource("file:///x"))
        assert(read._tag === "McpError")
        assert.strictEqual(read.code, -32603)
        assert.include(read.message, "failed to start")
        // a crash at start: its thrown error is the line quoted, without its stack
        Fs.writeFileSync(file, `throw new Error(${JSON.stringify(`no database at ${file}`)})\n`)
        const crashed = yield* waitFor(
          "the crash at start, told to the client",
          client.callTool("version", {}).pipe(Effect.map((r) => text(r).includes("Error: no database at ")))
        ).pipe(Effect.zipRight(client.callTool("version", {})))
        assert.include(
          text(crashed),
          `${Path.relative(ROOT, file)} failed to start: Error: no database at ${Path.relative(ROOT, file)} — `
        )
        assert.notInclude(text(crashed), "    at ")
        Fs.writeFileSync(file, serverFile("two"))
        yield* waitFor(
          "the answer of the fixed server",
          client.callTool("version", {}).pipe(Effect.map((r) => text(r) === "two" && r.isError !== true))
        )
      }),
    300_000
  )

  it.scopedLive("HTTP (--http): the same, the URL printed on stderr", () =>
    Effect.gen(function*() {
      const { file } = yield* project
      let stderr = ""
      const child = yield* Effect.acquireRelease(
        Effect.sync(() =>
          ChildProcess.spawn(
            process.execPath,
            ["--import", "tsx", Path.join(ROOT, "src/bin.ts"), "dev", file, "--http"],
            { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] }
          )
        ),
        (c) => Effect.sync(() => c.kill("SIGKILL"))
      )
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8")
      })
      yield* waitFor("the URL on stderr", Effect.sync(() => /at (http:\/\/127\.0\.0\.1:\d+\/\S*) /.test(stderr)))
      const url = /at (http:\/\/127\.0\.0\.1:\d+\/\S*) /.exec(stderr)?.[1] ?? ""
      const client = yield* McpClient.connect(yield* StreamableHttp.client({ url }), { requestTimeout: "60 seconds" })
      yield* scenario(client, file, () => stderr)
    }), 300_000)
})

describe("presa-mcp dev ENTRY --app TOOL", () => {
  it.scopedLive(
    "runs the MCP Apps dev host against the proxy, under the server's own tool names",
    () =>
      Effect.gen(function*() {
        let stderr = ""
        const child = yield* Effect.acquireRelease(
          Effect.sync(() =>
            ChildProcess.spawn(
              process.execPath,
              [
                "--import",
                "tsx",
                Path.join(ROOT, "src/bin.ts"),
                "dev",
                "examples/apps.ts",
                "--http",
                "--app",
                "count_letters",
                "--args",
                "{\"text\":\"hello\"}"
              ],
              { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] }
            )
          ),
          (c) => Effect.sync(() => c.kill("SIGKILL"))
        )
        let stdout = ""
        child.stdout.on("data", (chunk: Buffer) => {
          stdout += chunk.toString("utf8")
        })
        child.stderr.on("data", (chunk: Buffer) => {
          stderr += chunk.toString("utf8")
        })
        const pattern = /showing count_letters's view at (http:\/\/127\.0\.0\.1:\d+\/)/
        yield* waitFor("the dev host's URL on stderr", Effect.sync(() => pattern.test(stderr)))
        const url = pattern.exec(stderr)?.[1] ?? ""
        const page = yield* Effect.promise(() => fetch(url).then((r) => r.text()))
        assert.include(page, "\"structuredContent\":{\"text\":\"hello\",\"letters\":5,\"vowels\":2}")
        const token = /"token":"([0-9a-f]+)"/.exec(page)?.[1] ?? ""
        const reply = yield* Effect.promise(() =>
          fetch(`${url}rpc`, {
            method: "POST",
            headers: { "x-presa-app-token": token, "content-type": "application/json" },
            body: JSON.stringify({ method: "tools/call", params: { name: "reverse_text", arguments: { text: "abc" } } })
          }).then((r): Promise<unknown> => r.json())
        )
        const decoded = Schema.decodeUnknownSync(
          Schema.Struct({ result: Schema.Struct({ structuredContent: Schema.Unknown }) })
        )(reply)
        assert.deepStrictEqual(decoded.result.structuredContent, { reversed: "cba" })
        assert.strictEqual(stdout, "")
      }),
    300_000
  )
})

describe("presa-mcp dev ENTRY: usage", () => {
  it("a missing entry is a usage error (exit 3) named on stderr, nothing on stdout", () => {
    const run = ChildProcess.spawnSync(
      process.execPath,
      ["--import", "tsx", Path.join(ROOT, "src/bin.ts"), "dev", "no-such-server.ts"],
      { cwd: ROOT, encoding: "utf8", timeout: 120_000, input: "" }
    )
    assert.strictEqual(run.status, 3)
    assert.match(run.stderr, /presa-mcp dev: no such file: .*no-such-server\.ts/)
    assert.strictEqual(run.stdout, "")
  }, 180_000)
})
