/**
 * `McpProxy` with backends it connects and reconnects itself (`Connector`, `fromConfig`), and the
 * `mcpServers` configuration file (issue #18, items 3 and 4).
 *
 * - Two real backends: a legacy (2025-11-25) stdio child process (test/fixtures/client-input-server.ts,
 *   killed with SIGKILL mid-run) and our server over Streamable HTTP; its tools vanish and come
 *   back, the proxy's listener sees list_changed each time, calls while it is down get a clear
 *   error, and its elicitation (sent on the pipe, outside any call) reaches the proxy's caller.
 * - A backend that fails at start, one whose retry gives up, tool include/exclude/rename.
 * - Config decoding: each kind of mistake names its field; files that cannot be read or parsed.
 *
 * Live clock; every wait is bounded.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { InProcess, Input, McpClient, McpServer, Tool, Transport } from "presa-mcp"
import * as McpProxy from "../src/McpProxy.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Stdio from "../src/transport/Stdio.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import { mortal } from "./support/Mortal.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const FIXTURE = Path.join(ROOT, "test", "fixtures", "client-input-server.ts")
const SDK_V1_SERVER = Path.join(ROOT, "test", "fixtures", "sdk-v1-server.ts")
/** Bounds every wait; a test as a whole gets `TEST_WAIT` (a spawn of `node --import tsx` takes seconds on a busy machine). */
const WAIT: Duration.DurationInput = "30 seconds"
const TEST_WAIT: Duration.DurationInput = "100 seconds"
const LEGACY: ReadonlyArray<McpSchema.ProtocolVersion> = ["2025-11-25"]

const boundedBy = (limit: Duration.DurationInput) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.timeoutFail(effect, {
    duration: limit,
    onTimeout: () => new Error(`timed out after ${Duration.format(limit)}`)
  })
const bounded = boundedBy(WAIT)
const boundedTest = boundedBy(TEST_WAIT)

/** Retries `check` every 50 ms until it succeeds (bounded). */
const eventually = <A, E, R>(check: Effect.Effect<A, E, R>): Effect.Effect<A, E | Error, R> =>
  bounded(Effect.retry(check, Schedule.spaced("50 millis")))

const texts = (result: McpSchema.CallToolResult): ReadonlyArray<string> =>
  result.content.flatMap((b) => (b.type === "text" ? [b.text] : []))

const toolNames = (client: McpClient.McpClient) =>
  Effect.map(client.listAllTools, (tools) => tools.map((t) => t.name).sort())

const hasTools = (client: McpClient.McpClient, prefix: string, present: boolean) =>
  eventually(
    Effect.filterOrFail(
      toolNames(client),
      (names) => names.some((n) => n.startsWith(`${prefix}_`)) === present,
      () => new Error(`${prefix}_* tools still ${present ? "absent" : "present"}`)
    )
  )

const gateClosed = new Transport.TransportError({ reason: "Spawn", message: "the test keeps this backend down" })

/** A legacy stdio backend: `fixture` spawned while `gate` is open; every child's pid goes to `pids`. */
const legacyStdio = (
  gate: Ref.Ref<boolean>,
  pids: Ref.Ref<ReadonlyArray<number>>,
  prefix = "legacy",
  fixture = FIXTURE
): McpProxy.Connector => ({
  prefix,
  retry: Schedule.spaced("100 millis"),
  connect: (input) =>
    Effect.gen(function*() {
      if (!(yield* Ref.get(gate))) return yield* gateClosed
      const transport = yield* Stdio.spawn({
        command: process.execPath,
        args: ["--import", "tsx", fixture],
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
})

const makeWeb = McpServer.make({
  name: "web",
  version: "1.0.0",
  tools: [
    Tool.fromJsonSchema({ name: "status", handler: () => "green" }),
    Tool.fromJsonSchema({
      name: "colour",
      handler: () =>
        Effect.map(
          Input.elicit("Which colour?", { type: "object", properties: { colour: { type: "string" } } }),
          (r) => `colour ${JSON.stringify(r.content ?? {})}`
        )
    }),
    Tool.fromJsonSchema({ name: "secret", handler: () => "hidden" })
  ]
})

// The proxy names the backend in the message its user reads (docs/proxy.md, "Questions from backends").
const onElicit = (params: { readonly [k: string]: unknown }) =>
  Effect.succeed(
    params.message === "[web] Which colour?"
      ? { action: "accept" as const, content: { colour: "teal" } }
      : { action: "accept" as const, content: { name: "Ada" } }
  )

describe("McpProxy reconnects its backends", () => {
  it.live(
    "two backends: a killed stdio backend's tools vanish and return with list_changed; its elicitation reaches the caller",
    () =>
      Effect.gen(function*() {
        const gate = yield* Ref.make(true)
        const pids = yield* Ref.make<ReadonlyArray<number>>([])
        const { url } = yield* StreamableHttp.serve(yield* makeWeb)
        const config = yield* McpProxy.decodeConfig({
          mcpServers: { web: { url, exclude: ["secret"], retry: { initialDelayMs: 100 } } }
        })
        const proxy = yield* McpProxy.make([
          legacyStdio(gate, pids),
          ...McpProxy.connectors(config, { client: { versions: LEGACY, requestTimeout: WAIT } })
        ], { name: "resilient", version: "1.0.0" })
        const legacyFront = yield* McpClient.connect(yield* InProcess.client(proxy), { versions: LEGACY, onElicit })
        const modernFront = yield* McpClient.connect(yield* InProcess.client(proxy), { onElicit })
        assert.strictEqual(legacyFront.info.era, "legacy")
        assert.strictEqual(modernFront.info.era, "modern")

        const before = yield* toolNames(modernFront)
        expect(before).toContain("legacy_ask")
        expect(before).toContain("web_status")
        expect(before).not.toContain("web_secret")

        // The stdio backend's elicitation is sent on its pipe, outside any call: the proxy asks
        // the one caller in flight, a legacy one with a request, a modern one with input_required.
        expect(texts(yield* legacyFront.callTool("legacy_ask", {}))).toEqual([`hello {"name":"Ada"}`])
        expect(texts(yield* modernFront.callTool("legacy_ask", {}))).toEqual([`hello {"name":"Ada"}`])
        // The legacy HTTP backend asks on the call's own SSE stream.
        expect(texts(yield* legacyFront.callTool("web_colour", {}))).toEqual([`colour {"colour":"teal"}`])

        const changes = yield* Ref.make(0)
        const subscription = yield* modernFront.listen({ toolsListChanged: true })
        yield* subscription.notifications.pipe(
          Stream.runForEach((n) =>
            n.method === "notifications/tools/list_changed" ? Ref.update(changes, (c) => c + 1) : Effect.void
          ),
          Effect.forkScoped
        )

        // Kill the process: its tools go, the listener hears of it.
        yield* Ref.set(gate, false)
        const [first] = yield* Ref.get(pids)
        assert(first !== undefined)
        process.kill(first, "SIGKILL")
        yield* hasTools(modernFront, "legacy", false)
        yield* eventually(Effect.filterOrFail(Ref.get(changes), (c) => c >= 1))
        const seenDown = yield* Ref.get(changes)

        // While it is down: a tool it served → isError naming it; a prompt → -32603; the rest serves.
        const down = yield* legacyFront.callTool("legacy_ask", {})
        assert.strictEqual(down.isError, true)
        expect(texts(down)).toEqual([
          "Backend legacy is unavailable (the proxy is reconnecting it); try again later"
        ])
        const prompt = yield* Effect.flip(modernFront.getPrompt("legacy_hello"))
        assert(prompt._tag === "McpError")
        assert.strictEqual(prompt.code, -32603)
        assert.strictEqual(prompt.message, "Backend legacy is unavailable")
        const unknown = yield* Effect.flip(modernFront.callTool("legacy_never_served", {}))
        assert(unknown._tag === "McpError")
        assert.strictEqual(unknown.code, -32602)
        expect(texts(yield* modernFront.callTool("web_status", {}))).toEqual(["green"])

        // Let it come back: a new process, its tools again, another list_changed.
        yield* Ref.set(gate, true)
        yield* hasTools(modernFront, "legacy", true)
        yield* eventually(Effect.filterOrFail(Ref.get(changes), (c) => c > seenDown))
        const all = yield* Ref.get(pids)
        assert.strictEqual(all.length, 2)
        expect(all[1]).not.toBe(first)
        expect(yield* toolNames(modernFront)).toEqual(before)
        expect(texts(yield* legacyFront.callTool("legacy_ask", {}))).toEqual([`hello {"name":"Ada"}`])
      }).pipe(Effect.scoped, boundedTest),
    120_000
  )

  it.live(
    "the official SDK v1 server over stdio: killed, its tools answer isError while it is down, then it serves again",
    () =>
      Effect.gen(function*() {
        const gate = yield* Ref.make(true)
        const pids = yield* Ref.make<ReadonlyArray<number>>([])
        const other = yield* McpServer.make({
          name: "other",
          version: "1",
          tools: [Tool.fromJsonSchema({ name: "here", handler: () => "here" })]
        })
        const proxy = yield* McpProxy.make([legacyStdio(gate, pids, "v1", SDK_V1_SERVER), {
          prefix: "other",
          client: yield* McpClient.connect(yield* InProcess.client(other))
        }], { pingInterval: "200 millis" })
        const front = yield* McpClient.connect(yield* InProcess.client(proxy))
        expect(yield* toolNames(front)).toEqual(["other_here", "v1_add", "v1_echo"])
        expect(texts(yield* front.callTool("v1_echo", { text: "before" }))).toEqual(["before"])
        yield* Ref.set(gate, false)
        const [first] = yield* Ref.get(pids)
        assert(first !== undefined)
        process.kill(first, "SIGKILL")
        yield* hasTools(front, "v1", false)
        const down = yield* front.callTool("v1_echo", { text: "during" })
        assert.strictEqual(down.isError, true)
        expect(texts(down)).toEqual(["Backend v1 is unavailable (the proxy is reconnecting it); try again later"])
        const resource = yield* Effect.flip(front.readResource("test://v1/greeting"))
        assert(resource._tag === "McpError")
        assert.strictEqual(resource.code, -32603)
        yield* Ref.set(gate, true)
        yield* hasTools(front, "v1", true)
        expect(texts(yield* front.callTool("v1_echo", { text: "after" }))).toEqual(["after"])
        assert.strictEqual((yield* Ref.get(pids)).length, 2)
      }).pipe(Effect.scoped, boundedTest),
    120_000
  )

  it.live("a backend that fails at start: the proxy starts without it and serves it once it connects", () =>
    Effect.gen(function*() {
      const gate = yield* Ref.make(false)
      const attempts = yield* Ref.make(0)
      const server = yield* makeWeb
      const late: McpProxy.Connector = {
        prefix: "late",
        retry: Schedule.spaced("50 millis"),
        connect: (input) =>
          Effect.gen(function*() {
            yield* Ref.update(attempts, (n) => n + 1)
            if (!(yield* Ref.get(gate))) return yield* gateClosed
            return yield* McpClient.connect(yield* InProcess.client(server), input)
          })
      }
      const other = yield* McpServer.make({
        name: "other",
        version: "1",
        tools: [Tool.fromJsonSchema({ name: "here", handler: () => "here" })]
      })
      const proxy = yield* McpProxy.make([late, {
        prefix: "other",
        client: yield* McpClient.connect(yield* InProcess.client(other))
      }])
      const front = yield* McpClient.connect(yield* InProcess.client(proxy))
      expect(yield* toolNames(front)).toEqual(["other_here"])
      const changes = yield* Ref.make(0)
      const subscription = yield* front.listen({ toolsListChanged: true })
      yield* subscription.notifications.pipe(
        Stream.runForEach(() => Ref.update(changes, (c) => c + 1)),
        Effect.forkScoped
      )
      yield* eventually(Effect.filterOrFail(Ref.get(attempts), (n) => n >= 3))
      yield* Ref.set(gate, true)
      yield* hasTools(front, "late", true)
      expect(yield* toolNames(front)).toEqual(["late_colour", "late_secret", "late_status", "other_here"])
      yield* eventually(Effect.filterOrFail(Ref.get(changes), (c) => c >= 1))
      expect(texts(yield* front.callTool("late_status", {}))).toEqual(["green"])
    }).pipe(Effect.scoped, bounded))

  it.live("a backend whose retry gives up stays down: its names become unknown (-32602)", () =>
    Effect.gen(function*() {
      const alive = yield* Ref.make(true)
      const connections = yield* Ref.make(0)
      const server = yield* makeWeb
      const other = yield* McpServer.make({
        name: "other",
        version: "1",
        tools: [Tool.fromJsonSchema({ name: "here", handler: () => "here" })]
      })
      const proxy = yield* McpProxy.make([{
        prefix: "other",
        client: yield* McpClient.connect(yield* InProcess.client(other))
      }, {
        prefix: "brief",
        retry: Schedule.spaced("20 millis").pipe(Schedule.intersect(Schedule.recurs(2))),
        connect: (input) =>
          Effect.gen(function*() {
            if (!(yield* Ref.get(alive))) return yield* gateClosed
            yield* Ref.update(connections, (n) => n + 1)
            return mortal(yield* McpClient.connect(yield* InProcess.client(server), input), alive)
          })
      }])
      const front = yield* McpClient.connect(yield* InProcess.client(proxy))
      expect(texts(yield* front.callTool("brief_status", {}))).toEqual(["green"])
      yield* Ref.set(alive, false)
      const failed = yield* Effect.flip(front.callTool("brief_status", {}))
      assert(failed._tag === "McpError")
      assert.strictEqual(failed.code, -32603)
      assert.strictEqual(failed.message, "Backend brief is unavailable")
      // Two retries, 20 ms apart, both refused: then the backend is left down and forgotten.
      yield* eventually(
        Effect.flatMap(front.callTool("brief_status", {}), () => Effect.fail(new Error("still answered"))).pipe(
          Effect.catchTag("McpError", (e) => e.code === -32602 ? Effect.void : Effect.fail(e))
        )
      )
      assert.strictEqual(yield* Ref.get(connections), 1)
      yield* Ref.set(alive, true)
      yield* Effect.sleep("200 millis")
      assert.strictEqual(yield* Ref.get(connections), 1)
    }).pipe(Effect.scoped, bounded))

  it.live("include, exclude and rename choose and name a backend's tools; calls reach the backend's own names", () =>
    Effect.gen(function*() {
      const server = yield* makeWeb
      const client = yield* McpClient.connect(yield* InProcess.client(server))
      const proxy = yield* McpProxy.make([
        { prefix: "a", client, include: ["status", "secret"], exclude: ["secret"], rename: { status: "health" } },
        {
          prefix: "b",
          client: yield* McpClient.connect(yield* InProcess.client(server)),
          rename: { colour: "color", unknown: "x" }
        }
      ])
      const front = yield* McpClient.connect(yield* InProcess.client(proxy))
      expect(yield* toolNames(front)).toEqual(["a_health", "b_color", "b_secret", "b_status"])
      expect(texts(yield* front.callTool("a_health", {}))).toEqual(["green"])
      const gone = yield* Effect.flip(front.callTool("a_status", {}))
      assert(gone._tag === "McpError")
      assert.strictEqual(gone.code, -32602)
    }).pipe(Effect.scoped, bounded))
})

describe("McpProxy configuration files", () => {
  const invalid = (input: unknown) => {
    const decoded = McpProxy.decodeConfig(input, "proxy.json")
    assert(Either.isLeft(decoded))
    assert.strictEqual(decoded.left.reason, "Invalid")
    return decoded.left
  }

  it("decodes the mcpServers shape with our fields; defaults stay absent", () => {
    const decoded = McpProxy.decodeConfig({
      mcpServers: {
        files: { command: "npx", args: ["-y", "files"], env: { A: "1" }, cwd: "/tmp", autoApprove: ["x"] },
        search: {
          type: "http",
          url: "https://search.example/mcp",
          headers: { Authorization: "Bearer t" },
          prefix: "web",
          include: ["search"],
          exclude: [],
          rename: { search: "find" },
          retry: { initialDelayMs: 1000, maxDelayMs: 5000, maxAttempts: 3 }
        },
        off: { command: "nothing", disabled: true }
      }
    })
    assert(Either.isRight(decoded))
    expect(decoded.right.mcpServers.files).toEqual({
      command: "npx",
      args: ["-y", "files"],
      env: { A: "1" },
      cwd: "/tmp"
    })
    expect(McpProxy.connectors(decoded.right).map((c) => c.prefix)).toEqual(["files", "web"])
  })

  it("each mistake names its field", () => {
    const cases: ReadonlyArray<readonly [unknown, string, string]> = [
      [[], "", "proxy.json: expected a JSON object"],
      [{ servers: {} }, "mcpServers", "proxy.json: mcpServers: expected an object of servers by name"],
      [{ mcpServers: { a: "npx" } }, "mcpServers.a", "proxy.json: mcpServers.a: expected an object"],
      [
        { mcpServers: { a: { args: [] } } },
        "mcpServers.a",
        "proxy.json: mcpServers.a: needs `command` (a stdio server) or `url` (a Streamable HTTP server)"
      ],
      [
        { mcpServers: { a: { command: "x", url: "http://h/mcp" } } },
        "mcpServers.a",
        "proxy.json: mcpServers.a: has both `command` (stdio) and `url` (HTTP); give one"
      ],
      [{ mcpServers: { a: { command: "x", args: ["ok", 3] } } }, "mcpServers.a.args[1]", "Expected string, actual 3"],
      [{ mcpServers: { a: { command: "" } } }, "mcpServers.a.command", "expected a non-empty command"],
      // env and header values may be secrets: named by their field, never quoted (issue 34, item 6)
      [
        { mcpServers: { a: { command: "x", env: { A: 1 } } } },
        "mcpServers.a.env.A",
        "expected a string (the value is not shown: it may be a secret)"
      ],
      [{ mcpServers: { a: { url: "ftp://h/mcp" } } }, "mcpServers.a.url", "expected an http: or https: URL"],
      [{ mcpServers: { a: { url: "http://h/mcp", type: "sse" } } }, "mcpServers.a.type", "Expected"],
      [{ mcpServers: { a: { command: "x", prefix: "a b" } } }, "mcpServers.a.prefix", "expected 1 or more"],
      [{ mcpServers: { a: { command: "x", include: [""] } } }, "mcpServers.a.include[0]", "non-empty tool name"],
      [{ mcpServers: { a: { command: "x", rename: { t: "" } } } }, "mcpServers.a.rename.t", "non-empty tool name"],
      [
        { mcpServers: { a: { command: "x", retry: { initialDelayMs: 0 } } } },
        "mcpServers.a.retry.initialDelayMs",
        "positive integer"
      ],
      [
        { mcpServers: { a: { command: "x", retry: { maxAttempts: 1.5 } } } },
        "mcpServers.a.retry.maxAttempts",
        "Expected an integer"
      ],
      [{ mcpServers: { "my server": { command: "x" } } }, "mcpServers[\"my server\"]", "give a `prefix`"],
      [
        { mcpServers: { a: { command: "x" }, b: { command: "y", prefix: "a" } } },
        "mcpServers.b.prefix",
        "prefix \"a\" is also the prefix of a"
      ]
    ]
    for (const [input, path, message] of cases) {
      const e = invalid(input)
      assert.strictEqual(e.path, path, JSON.stringify(input))
      assert.strictEqual(e.file, "proxy.json")
      expect(e.message).toContain(message)
      if (path.length > 0) expect(e.message.startsWith(`proxy.json: ${path}: `)).toBe(true)
    }
    // A disabled entry's name need not be a prefix, nor its prefix unique.
    assert(
      Either.isRight(
        McpProxy.decodeConfig({
          mcpServers: { a: { command: "x" }, "b c": { command: "y", prefix: "a", disabled: true } }
        })
      )
    )
  })

  it.effect("loadConfig: unreadable, not JSON, invalid, valid", () =>
    Effect.gen(function*() {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "presa-proxy-config-"))
      const write = (name: string, text: string) => {
        const file = Path.join(dir, name)
        Fs.writeFileSync(file, text)
        return file
      }
      const missing = yield* Effect.flip(McpProxy.loadConfig(Path.join(dir, "absent.json")))
      assert.strictEqual(missing.reason, "Read")
      expect(missing.message).toContain("absent.json: cannot be read")
      const broken = yield* Effect.flip(McpProxy.loadConfig(write("broken.json", "{ \"mcpServers\": ")))
      assert.strictEqual(broken.reason, "Json")
      expect(broken.message).toContain("broken.json: not JSON")
      const bad = yield* Effect.flip(
        McpProxy.loadConfig(write("bad.json", JSON.stringify({ mcpServers: { a: { command: "x", cwd: 1 } } })))
      )
      assert.strictEqual(bad.reason, "Invalid")
      assert.strictEqual(bad.path, "mcpServers.a.cwd")
      const good = yield* McpProxy.loadConfig(
        write("good.json", JSON.stringify({ mcpServers: { a: { url: "http://127.0.0.1:1/mcp" } } }))
      )
      expect(good.mcpServers.a).toEqual({ url: "http://127.0.0.1:1/mcp" })
      Fs.rmSync(dir, { recursive: true })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.live(
    "fromConfig: a stdio and an HTTP server behind one proxy, resource updates forwarded; a server that cannot start does not stop it",
    () =>
      Effect.gen(function*() {
        const { url } = yield* StreamableHttp.serve(yield* makeWeb)
        const config = yield* McpProxy.decodeConfig({
          mcpServers: {
            legacy: {
              command: process.execPath,
              args: ["--import", "tsx", FIXTURE],
              cwd: ROOT,
              include: ["ask", "update"]
            },
            web: { url, rename: { status: "state" }, include: ["status"] },
            broken: { command: Path.join(ROOT, "no-such-program"), retry: { initialDelayMs: 50, maxAttempts: 1 } }
          }
        })
        const proxy = yield* McpProxy.fromConfig(config, {
          name: "configured",
          client: { versions: LEGACY, requestTimeout: WAIT },
          stderr: () => Effect.void
        })
        const front = yield* McpClient.connect(yield* InProcess.client(proxy), { versions: LEGACY, onElicit })
        assert.strictEqual(front.info.serverInfo?.name, "configured")
        expect(yield* toolNames(front)).toEqual(["legacy_ask", "legacy_update", "web_state"])
        expect(texts(yield* front.callTool("legacy_ask", {}))).toEqual([`hello {"name":"Ada"}`])
        expect(texts(yield* front.callTool("web_state", {}))).toEqual(["green"])

        // Resource subscriptions: a legacy and a modern caller subscribe to the stdio backend's
        // mem://a, served as mem://legacy/a (docs/proxy.md, "Resource URIs"); the backend's update
        // reaches both through the proxy, and not an unsubscribed URI.
        const modern = yield* McpClient.connect(yield* InProcess.client(proxy))
        const updates = yield* Ref.make<ReadonlyArray<string>>([])
        for (const [era, client] of [["legacy", front], ["modern", modern]] as const) {
          const subscription = yield* client.listen({ resourceSubscriptions: ["mem://legacy/a"] })
          expect(subscription.acknowledged.resourceSubscriptions).toEqual(["mem://legacy/a"])
          yield* subscription.notifications.pipe(
            Stream.runForEach((n) =>
              n.method === "notifications/resources/updated"
                ? Ref.update(updates, (u) => [...u, `${era} ${String(n.params?.uri)}`])
                : Effect.void
            ),
            Effect.forkScoped
          )
        }
        // The proxy subscribes on the backend in the background: announce until both have heard.
        yield* eventually(
          front.callTool("legacy_update", { uri: "mem://a" }).pipe(
            Effect.zipRight(Effect.sleep("100 millis")),
            Effect.zipRight(Ref.get(updates)),
            Effect.filterOrFail((u) => u.includes("legacy mem://legacy/a") && u.includes("modern mem://legacy/a"))
          )
        )
        yield* front.callTool("legacy_update", { uri: "mem://b" })
        yield* Effect.sleep("300 millis")
        expect((yield* Ref.get(updates)).filter((u) => !u.endsWith("mem://legacy/a"))).toEqual([])
      }).pipe(Effect.scoped, boundedTest),
    120_000
  )
})
