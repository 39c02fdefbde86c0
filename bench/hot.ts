/**
 * One hot loop of our library, for profiling (the benchmark proper is run.ts):
 *
 *   node --cpu-prof --cpu-prof-dir bench/out/profiles/hot --import tsx bench/hot.ts <target> [seconds]
 *   BENCH_PROFILE=1 …   also profiles the server process the `stdio` / `read` / `http` targets spawn
 *
 * Targets: `handle` (McpServer.handleMessage, modern tools/call), `handle-effect` (the same with an
 * Effect handler and a non-empty server environment), `inprocess` (McpClient over
 * InProcess), `stdio` (our client → our stdio server, sequential), `stdio-sdk` (the SDK v2 client → its stdio server, sequential), `stdio-raw` (raw client → our
 * stdio server, 32 in flight; also prints the server's CPU per call), `stdio-raw1` (the same, sequential), `read` (raw client → 1 MiB resources/read), `http` (modern and
 * legacy tools/call against our HTTP server, 1 connection each), `http-load` (autocannon, 64 connections,
 * modern and legacy: the HTTP server's CPU per request; `HOT_SERVER=sdk-v1-http.ts` for the SDK's), `web` (modern tools/call through
 * WebHandler.toWebHandler, in-process: our HTTP layer without sockets). Summarise with bench/profile.ts.
 */
import { Client as ClientV2 } from "@modelcontextprotocol/client"
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { readFileSync } from "node:fs"
import { McpClient, McpServer, Tool } from "presa-mcp"
import * as InProcess from "presa-mcp/transport/InProcess"
import * as Stdio from "presa-mcp/transport/Stdio"
import * as WebHandler from "presa-mcp/WebHandler"
import { effectBounded } from "./lib/effectLoop.js"
import {
  expectResult,
  handshake,
  LineClient,
  paramsJson,
  runBounded,
  serverCommand,
  startHttpServer,
  stopChild
} from "./lib/harness.js"
import { makeServer } from "./lib/ours.js"
import { BLOB_URI, ECHO_INPUT_SCHEMA, ECHO_TEXT, LEGACY, MODERN, MODERN_META } from "./lib/shared.js"
import { load, prepare } from "./suites/http.js"

const target = process.argv[2] ?? ""
const seconds = Number(process.argv[3] ?? 5)
const bounds = { maxMs: seconds * 1000, maxCount: 10_000_000 }
const call = { name: "echo", arguments: { text: ECHO_TEXT } }

// CPU time of this process since the last report: on a loaded machine µs of CPU per call is a
// steadier figure than calls/s (it excludes the spawned server's CPU).
let cpuMark = process.cpuUsage()
/** Starts the CPU count here: after start-up (module loading, spawning, connecting). */
const markCpu = Effect.sync(() => {
  cpuMark = process.cpuUsage()
})
const report = (what: string, t: { readonly count: number; readonly perSecond: number }) => {
  const cpu = process.cpuUsage(cpuMark)
  cpuMark = process.cpuUsage()
  const perCall = (cpu.user + cpu.system) / Math.max(1, t.count)
  console.log(
    `${what}: ${t.count} calls, ${t.perSecond.toFixed(0)}/s, ${perCall.toFixed(1)} µs CPU/call (this process)`
  )
}

/** Sequential modern `tools/call` of `echo` through `McpServer.handleMessage`, bounded. */
const handleLoop = (server: McpServer.McpServer) =>
  Effect.flatMap(McpServer.makeSession, (session) => {
    let id = 0
    return effectBounded(
      Effect.suspend(() =>
        McpServer.handleMessage(server, {
          jsonrpc: "2.0",
          id: ++id,
          method: "tools/call",
          params: { ...call, _meta: MODERN_META }
        }, { session })
      ),
      1,
      bounds
    )
  })

/** A process's CPU time (utime + stime) in ms, from /proc (Linux). */
const processCpuMs = (pid: number | undefined): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

const targets: Record<string, () => Promise<void>> = {
  handle: async () => {
    const t = await Effect.runPromise(Effect.flatMap(makeServer(), handleLoop))
    report("handleMessage", t)
  },
  "handle-effect": async () => {
    // As `handle`, but the way an Effect application serves: the server is made where a service
    // is provided (its captured environment is not empty) and the tool's handler returns an Effect.
    class Greeting extends Context.Tag("hot/Greeting")<Greeting, string>() {}
    const t = await Effect.runPromise(
      Effect.gen(function*() {
        const server = yield* McpServer.make({
          name: "presa-bench",
          version: "0.0.0",
          tools: [Tool.fromJsonSchema({
            name: "echo",
            inputSchema: ECHO_INPUT_SCHEMA,
            handler: (args) => Effect.succeed(typeof args.text === "string" ? args.text : "")
          })]
        })
        return yield* handleLoop(server)
      }).pipe(Effect.provideService(Greeting, "hello"))
    )
    report("handleMessage (Effect handler, services)", t)
  },
  inprocess: async () => {
    // the client's Scope is extended, not provided to the loop (as the other cases run theirs)
    const scope = Effect.runSync(Scope.make())
    const t = await Effect.runPromise(Effect.gen(function*() {
      const client = yield* Scope.extend(McpClient.connect(yield* InProcess.client(yield* makeServer())), scope)
      yield* markCpu
      return yield* effectBounded(client.callTool("echo", { text: ECHO_TEXT }), 1, bounds)
    }))
    await Effect.runPromise(Scope.close(scope, Exit.void))
    report("in-process callTool", t)
  },
  stdio: async () => {
    const scope = Effect.runSync(Scope.make())
    const { args, command } = serverCommand("ours-stdio.ts", [], "hot-stdio-server")
    const t = await Effect.runPromise(
      Effect.gen(function*() {
        const transport = yield* Stdio.spawn({ command, args, stderr: () => Effect.void })
        const client = yield* McpClient.connect(transport)
        yield* markCpu
        return yield* effectBounded(client.callTool("echo", { text: ECHO_TEXT }), 1, bounds)
      }).pipe(Scope.extend(scope))
    )
    report("stdio callTool (ours → ours)", t)
    await Effect.runPromise(Scope.close(scope, Exit.void))
  },
  "stdio-sdk": async () => {
    // The SDK v2 client → the SDK v2 stdio server, sequential: the client CPU/call to compare with `stdio`.
    const { args, command } = serverCommand("sdk-v2-stdio.ts", [], "hot-stdio-sdk-server")
    const client = new ClientV2({ name: "hot", version: "0.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } })
    await client.connect(new StdioV2({ command, args, stderr: "pipe" }))
    cpuMark = process.cpuUsage()
    const t = await runBounded(() => client.callTool(call), 1, bounds)
    report("stdio callTool (sdk-v2 → sdk-v2)", t)
    await client.close()
  },
  "stdio-raw": async () => {
    const script = process.env.HOT_SERVER ?? "ours-stdio.ts" // e.g. sdk-v2-stdio.ts to compare
    const client = new LineClient(script, [], "hot-stdio-raw-server")
    await handshake(client, "modern")
    const params = paramsJson("modern", call)
    // Warm up, then count the server's CPU over the loop as `stdio-raw1` does.
    for (let i = 0; i < 200; i++) expectResult(await client.requestRaw("tools/call", params), "tools/call")
    const before = processCpuMs(client.child.pid)
    const t = await runBounded(
      async () => expectResult(await client.requestRaw("tools/call", params), "tools/call"),
      32,
      bounds
    )
    const serverUs = ((processCpuMs(client.child.pid) - before) * 1000) / t.count
    report(`stdio raw tools/call ×32 (server ${serverUs.toFixed(1)} µs CPU/call)`, t)
    await client.close()
  },
  "stdio-raw1": async () => {
    // Sequential: one request at a time, so calls/s is the round-trip latency of the server.
    const script = process.env.HOT_SERVER ?? "ours-stdio.ts" // e.g. sdk-v2-stdio.ts to compare
    const client = new LineClient(script, [], "hot-stdio-raw1-server")
    await handshake(client, "modern")
    const params = paramsJson("modern", call)
    // The server's CPU (utime + stime from /proc, Linux) over the loop: on a loaded machine a
    // steadier figure of the server's cost per call than calls/s.
    const serverCpuMs = (): number => processCpuMs(client.child.pid)
    // A modern "handshake" sends nothing: warm up first, so that the server's start-up (module
    // loading, compiling) is not counted as per-call CPU.
    for (let i = 0; i < 200; i++) expectResult(await client.requestRaw("tools/call", params), "tools/call")
    const before = serverCpuMs()
    const t = await runBounded(
      async () => expectResult(await client.requestRaw("tools/call", params), "tools/call"),
      1,
      bounds
    )
    const serverUs = ((serverCpuMs() - before) * 1000) / t.count
    report(`stdio raw tools/call ×1 (server ${serverUs.toFixed(1)} µs CPU/call)`, t)
    await client.close()
  },
  read: async () => {
    const client = new LineClient("ours-stdio.ts", ["--blob-bytes", String(1024 * 1024)], "hot-read-server")
    await handshake(client, "modern")
    const params = paramsJson("modern", { uri: BLOB_URI })
    const t = await runBounded(
      async () => expectResult(await client.requestRaw("resources/read", params), "resources/read"),
      1,
      bounds
    )
    report("stdio resources/read 1 MiB", t)
    await client.close()
  },
  web: async () => {
    // Our Streamable HTTP layer without sockets: WebHandler.toWebHandler, modern tools/call.
    const handler = WebHandler.toWebHandler(await Effect.runPromise(makeServer()))
    const headers = {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/call",
      "mcp-name": "echo"
    }
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { ...call, _meta: MODERN_META }
    })
    const t = await runBounded(
      async () => {
        const response = await handler(new Request("http://127.0.0.1/mcp", { method: "POST", headers, body }))
        if (response.status !== 200) throw new Error(`status ${response.status}`)
        await response.text()
      },
      1,
      bounds
    )
    report("web handler tools/call", t)
    await handler.dispose()
  },
  "http-load": async () => {
    // autocannon, 64 connections, modern then legacy, against our HTTP server (or HOT_SERVER, e.g.
    // sdk-v2-http.ts for modern, sdk-v1-http.ts for legacy): the server's CPU per request, from /proc.
    const script = process.env.HOT_SERVER ?? "ours-http.ts"
    const { child, url } = await startHttpServer(script)
    const eras = (process.env.HOT_ERAS ?? "modern,legacy").split(",").filter((e) => e === "modern" || e === "legacy")
    for (const era of eras) {
      const options = await prepare(script, url, era)
      await load(options, 64, 1)
      const before = processCpuMs(child.pid)
      const result = await load(options, 64, seconds)
      const perRequest = ((processCpuMs(child.pid) - before) * 1000) / Math.max(1, result.total)
      console.log(
        `http ${era} ×64 (${script}): ${result.total} requests, ${result.rps.toFixed(0)}/s, server ${
          perRequest.toFixed(1)
        } µs CPU/request${result.bad > 0 ? `, ${result.bad} bad` : ""}`
      )
    }
    await stopChild(child)
  },
  http: async () => {
    const { child, url } = await startHttpServer("ours-http.ts")
    const base = { accept: "application/json, text/event-stream", "content-type": "application/json" }
    const post = (headers: Record<string, string>, body: unknown) =>
      fetch(url, { method: "POST", headers, body: JSON.stringify(body) }).then(async (r) => ({
        status: r.status,
        session: r.headers.get("mcp-session-id"),
        text: await r.text()
      }))
    const modernHeaders = { ...base, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "echo" }
    const modern = await runBounded(
      () =>
        post(modernHeaders, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { ...call, _meta: MODERN_META } }),
      1,
      { maxMs: bounds.maxMs / 2, maxCount: bounds.maxCount }
    )
    report("http modern tools/call (fetch)", modern)
    const init = await post(base, {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "hot", version: "0" } }
    })
    const headers = { ...base, "mcp-protocol-version": LEGACY, "mcp-session-id": init.session ?? "" }
    await post(headers, { jsonrpc: "2.0", method: "notifications/initialized" })
    let id = 0
    const legacy = await runBounded(
      () => post(headers, { jsonrpc: "2.0", id: ++id, method: "tools/call", params: call }),
      1,
      { maxMs: bounds.maxMs / 2, maxCount: bounds.maxCount }
    )
    report("http legacy tools/call (fetch)", legacy)
    await stopChild(child)
  }
}

const run = targets[target]
if (run === undefined) {
  console.error(`usage: hot.ts <${Object.keys(targets).join("|")}> [seconds]`)
  process.exit(2)
}
await run()
