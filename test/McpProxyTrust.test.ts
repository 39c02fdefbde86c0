/**
 * The proxy's trust boundaries (issue 34, item 6; docs/proxy.md): a hostile backend cannot affect
 * the others. Hostile backends are real child processes (test/fixtures/hostile-backend.ts, a
 * hand-written legacy stdio server) next to well-behaved ones (our `McpServer` in process).
 *
 * - Names: a backend whose prefixed name falls in another backend's namespace, or that serves a
 *   URI another backend already serves, is left out (logged); the proxy starts and the others
 *   keep their entries, whatever the order.
 * - Lists: endless pages, 100,000 tools and a 17 MB schema are cut at `maxListPages`,
 *   `maxListItems`, `maxListBytes` (an error logged); the other backends are served.
 * - `list_changed` storms: 20,000 notifications in one write lead to re-listings at least 100 ms
 *   apart, and no list_changed for the proxy's own listener when nothing changed (at most one per
 *   re-listing when every listing differs).
 * - URIs of a backend being reconnected stay reserved for it.
 * - Questions: an elicitation relayed to the user names its backend in the message and in
 *   `_meta["presa-mcp/backend"]` (a backend's own claim to be another is overwritten); sampling
 *   carries the `_meta` key.
 * - Secrets of an `mcpServers` file (env values, header values, URL credentials, the OAuth client
 *   secret) appear in no log line, error or CLI output when their backends fail.
 *
 * Live clock; every wait is bounded.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { InProcess, McpClient, McpServer, Resource, Tool, Transport } from "presa-mcp"
import * as McpProxy from "../src/McpProxy.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Stdio from "../src/transport/Stdio.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const HOSTILE = Path.join(ROOT, "test", "fixtures", "hostile-backend.ts")
const WAIT: Duration.DurationInput = "30 seconds"
const TEST_TIMEOUT = 120_000
const LEGACY: ReadonlyArray<McpSchema.ProtocolVersion> = ["2025-11-25"]

const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.timeoutFail(effect, { duration: WAIT, onTimeout: () => new Error(`timed out after ${Duration.format(WAIT)}`) })

/** Retries `check` every 50 ms until it succeeds (bounded). */
const eventually = <A, E, R>(check: Effect.Effect<A, E, R>): Effect.Effect<A, E | Error, R> =>
  bounded(Effect.retry(check, Schedule.spaced("50 millis")))

const texts = (result: McpSchema.CallToolResult): ReadonlyArray<string> =>
  result.content.flatMap((b) => (b.type === "text" ? [b.text] : []))

const toolNames = (client: McpClient.McpClient) =>
  Effect.map(client.listAllTools, (tools) => tools.map((t) => t.name).sort())

/** Log lines (`LEVEL: message`) of everything run with {@link capturing}. */
const capture = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ logLevel, message }) => {
    lines.push(`${logLevel.label}: ${Array.isArray(message) ? message.map(String).join(" ") : String(message)}`)
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

/** An `mcpServers` entry spawning the hostile fixture with `args`. */
const hostile = (...args: ReadonlyArray<string>) => ({
  command: process.execPath,
  args: ["--import", "tsx", HOSTILE, ...args],
  cwd: ROOT,
  retry: { maxAttempts: 0 }
})

/** The connectors of `servers` (legacy clients, the fixtures' stderr dropped). */
const configured = (servers: Record<string, unknown>) =>
  Effect.gen(function*() {
    const config = yield* McpProxy.decodeConfig({ mcpServers: servers })
    return McpProxy.connectors(config, {
      client: { versions: LEGACY, requestTimeout: WAIT },
      stderr: () => Effect.void
    })
  })

/** A well-behaved backend in process: our server with `options`, connected by the proxy. */
const inProcess = (prefix: string, options: Omit<McpServer.Options, "name" | "version">): McpProxy.Connector => ({
  prefix,
  retry: Schedule.stop,
  connect: (input) =>
    Effect.gen(function*() {
      const server = yield* Effect.orDie(McpServer.make({ name: prefix, version: "1.0.0", ...options }))
      return yield* McpClient.connect(yield* InProcess.client(server), { ...input, relisten: Schedule.stop })
    })
})

/** A hostile backend's count (its `stats` tool): how many `tools/list` or `resources/list` it answered. */
const stat = (client: McpClient.McpClient, prefix: string, key: "toolsLists" | "resourcesLists") =>
  Effect.map(client.callTool(`${prefix}_stats`, {}), (r) => {
    const decoded: unknown = JSON.parse(texts(r)[0] ?? "{}")
    if (typeof decoded !== "object" || decoded === null || !(key in decoded)) return -1
    const n: unknown = Object.getOwnPropertyDescriptor(decoded, key)?.value
    return typeof n === "number" ? n : -1
  })

const named = (name: string, text: string) => Tool.fromJsonSchema({ name, handler: () => text })

const front = (proxy: McpServer.McpServer, options: McpClient.Options = {}) =>
  Effect.flatMap(InProcess.client(proxy), (t) => McpClient.connect(t, options))

// ---------------------------------------------------------------------------------------------
// names
// ---------------------------------------------------------------------------------------------

describe("McpProxy trust: names", () => {
  it.live(
    "a name in another backend's namespace is left out, in either order; the proxy starts",
    () =>
      Effect.gen(function*() {
        for (const hostileFirst of [true, false]) {
          const logs = capture()
          const evil = yield* configured({ a: hostile("--label", "evil", "--names", "b_x,own") })
          const good = inProcess("a_b", { tools: [named("x", "x from a_b")] })
          const proxy = yield* McpProxy.make(hostileFirst ? [...evil, good] : [good, ...evil]).pipe(
            Effect.provide(logs.layer)
          )
          const client = yield* front(proxy)
          const names = yield* toolNames(client)
          expect(names).toContain("a_b_x")
          expect(names).toContain("a_own")
          expect(texts(yield* client.callTool("a_b_x", {}))).toEqual(["x from a_b"])
          expect(texts(yield* client.callTool("a_own", {}))).toEqual(["own from evil"])
          expect(logs.lines).toContain(
            "WARN: backend a: tool a_b_x left out: its name is in the namespace of backend a_b (a_b_*)"
          )
        }
      }).pipe(Effect.scoped, bounded),
    TEST_TIMEOUT
  )

  it.live("a URI another backend serves stays with the backend that served it first", () =>
    Effect.gen(function*() {
      const logs = capture()
      const good = {
        ...inProcess("good", {
          resources: [Resource.make({ uri: "notes://shared", name: "shared", handler: () => "the real notes" })]
        }),
        prefixUris: false
      }
      const evil = yield* configured({
        evil: { ...hostile("--label", "evil", "--resources", "notes://shared,evil://own"), prefixUris: false }
      })
      const proxy = yield* McpProxy.make([good, ...evil]).pipe(Effect.provide(logs.layer))
      const client = yield* front(proxy)
      const read = yield* client.readResource("notes://shared")
      const first = read.contents[0]
      assert.ok(first !== undefined && "text" in first)
      assert.strictEqual(first.text, "the real notes")
      expect((yield* client.listAllResources).map((r) => r.uri).sort()).toEqual(["evil://own", "notes://shared"])
      expect(logs.lines).toContain(
        "WARN: backend evil: resource notes://shared left out: resource notes://shared is already served by backend good"
      )
    }).pipe(Effect.scoped, bounded), TEST_TIMEOUT)

  it.live(
    "a backend being reconnected keeps its URIs: another cannot take them meanwhile",
    () =>
      Effect.gen(function*() {
        const logs = capture()
        const gate = yield* Ref.make(true)
        const pids = yield* Ref.make<ReadonlyArray<number>>([])
        const good: McpProxy.Connector = {
          prefix: "good",
          prefixUris: false,
          retry: Schedule.spaced("100 millis"),
          connect: (input) =>
            Effect.gen(function*() {
              if (!(yield* Ref.get(gate))) {
                return yield* new Transport.TransportError({ reason: "Spawn", message: "kept down by the test" })
              }
              const transport = yield* Stdio.spawn({
                command: process.execPath,
                args: ["--import", "tsx", HOSTILE, "--label", "good", "--resources", "notes://shared"],
                cwd: ROOT,
                stderr: () => Effect.void
              })
              yield* Ref.update(pids, (p) => [...p, transport.pid])
              return yield* McpClient.connect(transport, {
                ...input,
                versions: LEGACY,
                relisten: Schedule.stop,
                requestTimeout: WAIT
              })
            })
        }
        const evil = yield* configured({
          evil: { ...hostile("--label", "evil", "--resources", "notes://shared"), prefixUris: false }
        })
        const proxy = yield* McpProxy.make([good, ...evil]).pipe(Effect.provide(logs.layer))
        const client = yield* front(proxy)
        const shared = Effect.map(client.readResource("notes://shared"), (r) => {
          const first = r.contents[0]
          return first !== undefined && "text" in first ? first.text : ""
        })
        assert.strictEqual(yield* shared, "notes://shared from good")
        // good goes down and stays down; evil re-lists its resources meanwhile
        yield* Ref.set(gate, false)
        for (const pid of yield* Ref.get(pids)) process.kill(pid, "SIGKILL")
        const down = yield* eventually(Effect.flip(shared))
        assert.strictEqual(down.message, "Backend good is unavailable")
        const before = yield* stat(client, "evil", "resourcesLists")
        yield* client.callTool("evil_storm", { count: 1, kind: "resources" })
        yield* eventually(Effect.filterOrFail(
          stat(client, "evil", "resourcesLists"),
          (n) => n > before,
          () => new Error("evil has not re-listed yet")
        ))
        yield* Effect.sleep("200 millis")
        const stillDown = yield* Effect.flip(shared)
        assert.strictEqual(stillDown.message, "Backend good is unavailable")
        // (with no resource left, the proxy has no resources capability: -32601)
        const listed = yield* client.listAllResources.pipe(
          Effect.catchTag("McpError", () => Effect.succeed<ReadonlyArray<McpSchema.Resource>>([]))
        )
        expect(listed.map((r) => r.uri)).not.toContain("notes://shared")
        const leftOut =
          "WARN: backend evil: resource notes://shared left out: resource notes://shared is already served by backend good"
        // at start, and at the re-listing while good was down
        expect(logs.lines.filter((l) => l === leftOut).length).toBe(2)
        // good is back: its URI with it
        yield* Ref.set(gate, true)
        assert.strictEqual(yield* eventually(shared), "notes://shared from good")
      }).pipe(Effect.scoped, bounded),
    TEST_TIMEOUT
  )
})

// ---------------------------------------------------------------------------------------------
// lists
// ---------------------------------------------------------------------------------------------

describe("McpProxy trust: bounded lists", () => {
  it.live(
    "endless pages, 100,000 tools, a 17 MB schema: each cut at its bound, the others served",
    () =>
      Effect.gen(function*() {
        const logs = capture()
        const hostiles = yield* configured({
          endless: hostile("--endless"),
          many: hostile("--tools", "100000", "--page-size", "1000"),
          giant: hostile("--names", "giant,small", "--giant-bytes", String(17_000_000))
        })
        const good = inProcess("good", { tools: [named("fine", "fine")] })
        // pages and entries bounded by options; bytes by the default (16 MiB)
        const proxy = yield* McpProxy.make([...hostiles, good], { maxListPages: 5, maxListItems: 50 }).pipe(
          Effect.provide(logs.layer)
        )
        const client = yield* front(proxy)
        const names = yield* toolNames(client)
        expect(names.filter((n) => n.startsWith("endless_"))).toEqual(
          ["endless_p0", "endless_p1", "endless_p2", "endless_p3", "endless_p4"]
        )
        const many = names.filter((n) => n.startsWith("many_"))
        assert.strictEqual(many.length, 50)
        // echo, the 4 control tools, t0 … t44
        expect(many).toContain("many_echo")
        expect(many).toContain("many_t44")
        expect(many).not.toContain("many_t45")
        // it stopped reading at the bound: one page of 1,000 read, not 100
        expect(yield* stat(client, "many", "toolsLists")).toBe(1)
        expect(names.filter((n) => n.startsWith("giant_"))).toEqual([])
        expect(names).toContain("good_fine")
        expect(texts(yield* client.callTool("good_fine", {}))).toEqual(["fine"])
        expect(logs.lines).toContain(
          "ERROR: backend endless: tools/list has more than 5 pages; the first 5 are served, the rest is left out"
        )
        expect(logs.lines).toContain(
          "ERROR: backend many: tools/list goes over the proxy's bound (50 entries, 16777216 bytes); " +
            "the first 50 entries are served, the rest is left out"
        )
        expect(logs.lines).toContain(
          "ERROR: backend giant: tools/list goes over the proxy's bound (50 entries, 16777216 bytes); " +
            "the first 0 entries are served, the rest is left out"
        )
      }).pipe(Effect.scoped, bounded),
    TEST_TIMEOUT
  )

  it.live(
    "a list_changed storm: re-listings coalesced (>= 100 ms apart); the proxy's listener hears nothing",
    () =>
      Effect.gen(function*() {
        const storm = yield* configured({ storm: hostile() })
        const good = inProcess("good", { tools: [named("fine", "fine")] })
        const proxy = yield* McpProxy.make([...storm, good])
        const client = yield* front(proxy)
        const heard = yield* Ref.make(0)
        const subscription = yield* client.listen({ toolsListChanged: true })
        const listener = yield* subscription.notifications.pipe(
          Stream.runForEach(() => Ref.update(heard, (n) => n + 1)),
          Effect.fork
        )
        const stats = stat(client, "storm", "toolsLists")
        assert.strictEqual(yield* stats, 1)
        const started = Date.now()
        expect(texts(yield* client.callTool("storm_storm", { count: 20_000 }))).toEqual(["stormed"])
        // the others are served meanwhile
        expect(texts(yield* client.callTool("good_fine", {}))).toEqual(["fine"])
        yield* Effect.sleep("2 seconds")
        const lists = yield* stats
        const elapsed = Date.now() - started
        // at least one re-listing, at most one per 100 ms (+1 in flight, +1 for the first)
        expect(lists).toBeGreaterThanOrEqual(2)
        expect(lists).toBeLessThanOrEqual(2 + Math.ceil(elapsed / 100))
        // nothing changed, so nothing was announced
        assert.strictEqual(yield* Ref.get(heard), 0)
        yield* Fiber.interrupt(listener)
      }).pipe(Effect.scoped, bounded),
    TEST_TIMEOUT
  )

  it.live(
    "a storm whose every listing differs: the proxy's listener gets at most one list_changed per re-listing",
    () =>
      Effect.gen(function*() {
        const churn = yield* configured({ churn: hostile("--churn") })
        const proxy = yield* McpProxy.make(churn)
        const client = yield* front(proxy)
        const heard = yield* Ref.make(0)
        const subscription = yield* client.listen({ toolsListChanged: true })
        const listener = yield* subscription.notifications.pipe(
          Stream.runForEach(() => Ref.update(heard, (n) => n + 1)),
          Effect.fork
        )
        expect(texts(yield* client.callTool("churn_storm", { count: 20_000 }))).toEqual(["stormed"])
        yield* Effect.sleep("2 seconds")
        const lists = yield* stat(client, "churn", "toolsLists")
        // the last listing is what the proxy serves
        const names = yield* eventually(Effect.filterOrFail(
          toolNames(client),
          (ns) => ns.includes(`churn_v${lists}`),
          () => new Error("the last listing is not served yet")
        ))
        expect(names.filter((n) => n.startsWith("churn_v"))).toEqual([`churn_v${lists}`])
        const announced = yield* Ref.get(heard)
        expect(announced).toBeGreaterThanOrEqual(1)
        // the first listing (at start) announced nothing to this listener
        expect(announced).toBeLessThanOrEqual(lists - 1)
        yield* Fiber.interrupt(listener)
      }).pipe(Effect.scoped, bounded),
    TEST_TIMEOUT
  )
})

// ---------------------------------------------------------------------------------------------
// questions
// ---------------------------------------------------------------------------------------------

describe("McpProxy trust: relayed questions name their backend", () => {
  it.live(
    "elicitation (legacy and modern callers) and sampling carry the backend's prefix",
    () =>
      Effect.gen(function*() {
        const evil = yield* configured({ evil: hostile("--label", "evil") })
        const proxy = yield* McpProxy.make(evil)
        const asked = yield* Ref.make<ReadonlyArray<{ readonly [k: string]: unknown }>>([])
        const options: McpClient.Options = {
          onElicit: (params) =>
            Effect.as(Ref.update(asked, (xs) => [...xs, params]), {
              action: "decline" as const
            }),
          onSample: (params) =>
            Effect.as(Ref.update(asked, (xs) => [...xs, params]), {
              role: "assistant" as const,
              content: { type: "text" as const, text: "no" },
              model: "test"
            })
        }
        const legacy = yield* front(proxy, { ...options, versions: LEGACY })
        const modern = yield* front(proxy, options)
        for (const client of [legacy, modern]) {
          yield* Ref.set(asked, [])
          expect(texts(yield* client.callTool("evil_ask", {}))).toEqual([JSON.stringify({ action: "decline" })])
          const [question] = yield* Ref.get(asked)
          assert.ok(question !== undefined)
          assert.strictEqual(question.message, "[evil] [bank] Your password, please")
          expect(question._meta).toEqual({ "presa-mcp/backend": "evil" })
          yield* Ref.set(asked, [])
          yield* client.callTool("evil_sample", {})
          const [sampling] = yield* Ref.get(asked)
          assert.ok(sampling !== undefined)
          expect(sampling._meta).toEqual({ "presa-mcp/backend": "evil" })
          expect(sampling.messages).toEqual([{ role: "user", content: { type: "text", text: "hi" } }])
        }
      }).pipe(Effect.scoped, bounded),
    TEST_TIMEOUT
  )
})

// ---------------------------------------------------------------------------------------------
// secrets
// ---------------------------------------------------------------------------------------------

const SECRET = "sekrit"

/** A port nothing listens on (bound, then closed). */
const closedPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** An HTTP server on 127.0.0.1 answering everything with 500; closed with the scope. */
const failingHttp = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<{ readonly server: Http.Server; readonly port: number }>((resolve) => {
      const server = Http.createServer((_req, res) => {
        res.writeHead(500, { "content-type": "text/plain" })
        res.end("nope")
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        resolve({ server, port: typeof address === "object" && address !== null ? address.port : 0 })
      })
    })
  ),
  ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
)

/** Backends that fail in every way, each configured with secrets. */
const secretServers = (closed: number, failing: number) => ({
  nocommand: {
    command: "/nonexistent/presa-no-such-server",
    env: { API_TOKEN: `${SECRET}-env-1111` },
    retry: { maxAttempts: 0 }
  },
  exits: {
    command: process.execPath,
    args: ["-e", "process.exit(3)"],
    env: { DB_PASSWORD: `${SECRET}-env-2222` },
    retry: { maxAttempts: 0 }
  },
  refused: {
    url: `http://user:${SECRET}-pass-3333@127.0.0.1:${closed}/mcp?token=${SECRET}-query-4444`,
    headers: { Authorization: `Bearer ${SECRET}-header-5555`, "X-Api-Key": `${SECRET}-header-6666` },
    retry: { maxAttempts: 0 }
  },
  failing: {
    url: `http://127.0.0.1:${failing}/mcp?key=${SECRET}-query-7777`,
    headers: { Authorization: `Bearer ${SECRET}-header-8888` },
    oauth: { clientId: "proxy", clientSecret: `${SECRET}-oauth-9999`, grant: "client_credentials" },
    retry: { maxAttempts: 0 }
  }
})

describe("McpProxy trust: secrets of an mcpServers file", () => {
  it.live("backends that fail to start or connect: no secret in any log line", () =>
    Effect.gen(function*() {
      const logs = capture()
      const closed = yield* Effect.promise(closedPort)
      const failing = yield* failingHttp
      const config = yield* McpProxy.decodeConfig({
        mcpServers: { ...secretServers(closed, failing.port), ok: hostile("--label", "ok") }
      })
      const stderr: Array<string> = []
      const proxy = yield* McpProxy.fromConfig(config, {
        client: { versions: LEGACY, requestTimeout: "5 seconds" },
        stderr: (prefix, line) => Effect.sync(() => stderr.push(`[${prefix}] ${line}`))
      }).pipe(Effect.provide(logs.layer))
      const client = yield* front(proxy)
      expect(yield* toolNames(client)).toEqual(["ok_ask", "ok_echo", "ok_sample", "ok_stats", "ok_storm"])
      // every failing backend has been tried and given up on
      for (const prefix of ["nocommand", "exits", "refused", "failing"]) {
        yield* eventually(Effect.filterOrFail(
          Effect.sync(() => logs.lines.filter((l) => l.includes(`backend ${prefix}`))),
          (lines) => lines.some((l) => l.includes("could not be connected")),
          () => new Error(`no log line for ${prefix} yet`)
        ))
      }
      const everything = [...logs.lines, ...stderr].join("\n")
      expect(everything).not.toContain(SECRET)
      // the URLs are named without credentials or query
      expect(everything).toContain(`http://127.0.0.1:${closed}/mcp?…`)
    }).pipe(Effect.scoped, bounded), TEST_TIMEOUT)

  it("configuration mistakes never quote a secret value", () => {
    const cases: ReadonlyArray<unknown> = [
      { mcpServers: { a: { command: "x", env: { TOKEN: [`${SECRET}-1`] } } } },
      { mcpServers: { a: { command: "x", env: `TOKEN=${SECRET}-2` } } },
      { mcpServers: { a: { url: "https://x.example/mcp", headers: { Authorization: { bearer: `${SECRET}-3` } } } } },
      { mcpServers: { a: { url: "https://x.example/mcp", headers: `Authorization: ${SECRET}-4` } } },
      { mcpServers: { a: { url: "https://x.example/mcp", oauth: { clientSecret: [`${SECRET}-5`] } } } }
    ]
    for (const input of cases) {
      const decoded = McpProxy.decodeConfig(input, "proxy.json")
      assert.ok(Either.isLeft(decoded))
      expect(decoded.left.message).toMatch(/^proxy\.json: mcpServers\.a\.(env|headers|oauth)/)
      expect(decoded.left.message).not.toContain(SECRET)
    }
  })

  it.live("a file that is not JSON is reported without quoting it", () =>
    Effect.gen(function*() {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "presa-proxy-trust-"))
      const file = Path.join(dir, "proxy.json")
      Fs.writeFileSync(file, `{"mcpServers": {"a": {"command": "x", "env": {"T": ${SECRET}-bare}}}}`)
      const error = yield* Effect.flip(McpProxy.loadConfig(file)).pipe(
        Effect.provide((yield* Effect.promise(() => import("@effect/platform-node/NodeContext"))).layer)
      )
      assert.strictEqual(error.reason, "Json")
      expect(error.message.startsWith(`${file}: not JSON: `)).toBe(true)
      expect(error.message).not.toContain(SECRET)
      // nor through its cause (the SyntaxError quotes the text)
      assert.strictEqual(error.cause, undefined)
      Fs.rmSync(dir, { recursive: true, force: true })
    }))
})

// ---------------------------------------------------------------------------------------------
// through the command line
// ---------------------------------------------------------------------------------------------

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `presa-mcp` with `args` to its end (killed with its group after 90 s). */
const cli = (args: ReadonlyArray<string>): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = ChildProcess.spawn(process.execPath, ["--import", "tsx", "src/bin.ts", ...args], {
      cwd: ROOT,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()))
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()))
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
    }, 90_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

describe("presa-mcp proxy: trust boundaries", () => {
  it("a hostile and failing backends: the others are served, no secret is printed", async () => {
    const closed = await closedPort()
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "presa-proxy-trust-cli-"))
    const file = Path.join(dir, "proxy.json")
    const { failing: _failing, ...servers } = secretServers(closed, closed)
    Fs.writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          ...servers,
          a: hostile("--label", "evil", "--names", "b_x,own"),
          a_b: hostile("--label", "good", "--names", "x")
        }
      })
    )
    try {
      const run = await cli(["tools", "--json", "--", process.execPath, "--import", "tsx", "src/bin.ts", "proxy", file])
      assert.strictEqual(run.code, 0, run.stderr)
      const listed: unknown = JSON.parse(run.stdout)
      const tools = typeof listed === "object" && listed !== null && "tools" in listed ? listed.tools : []
      const names = Array.isArray(tools)
        ? tools.flatMap((t: unknown) => (typeof t === "object" && t !== null && "name" in t ? [t.name] : []))
        : []
      expect(names).toContain("a_b_x")
      expect(names).toContain("a_own")
      // the proxy's log reached the output, with what failed and without the secrets
      expect(run.stderr).toContain("backend nocommand")
      expect(run.stderr).toContain("a_b_x left out")
      expect(`${run.stdout}\n${run.stderr}`).not.toContain(SECRET)
      const bad = Path.join(dir, "bad.json")
      Fs.writeFileSync(bad, JSON.stringify({ mcpServers: { s: { command: "x", env: { T: [`${SECRET}-x`] } } } }))
      const refused = await cli(["proxy", bad])
      assert.strictEqual(refused.code, 3)
      expect(refused.stderr).toContain("mcpServers.s.env.T")
      expect(`${refused.stdout}\n${refused.stderr}`).not.toContain(SECRET)
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 240_000)
})
