/**
 * Which of the library's files and functions one `tools/call` over Streamable HTTP runs (issue
 * #16: "a tools/call over HTTP crosses … files"), by V8's precise coverage: after 50 warm-up
 * calls the counters are reset, one more call is made, and every `dist/` file with a function that
 * ran is listed with those functions and their call counts.
 *
 *   npm run build && npx tsc -p tsconfig.bench.json
 *   TSX_TSCONFIG_PATH=tsconfig.bench.json node --import tsx bench/path.ts [modern|legacy]
 *
 * Every file counts, the leaves too (JSON parsing, argument validation, metrics), so the figure is
 * an upper bound on the files a request passes through.
 */
import * as Effect from "effect/Effect"
import { Session } from "node:inspector/promises"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import { makeServer } from "./lib/ours.js"
import { ECHO_TEXT, LEGACY, MODERN, MODERN_META } from "./lib/shared.js"

const era = process.argv[2] === "legacy" ? "legacy" : "modern"

interface Coverage {
  readonly result: ReadonlyArray<{
    readonly url: string
    readonly functions: ReadonlyArray<{
      readonly functionName: string
      readonly ranges: ReadonlyArray<{ readonly startOffset: number; readonly count: number }>
    }>
  }>
}

const session = new Session()
session.connect()
await session.post("Profiler.enable")
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false })

const request = (id: number, method: string, params: object) => JSON.stringify({ jsonrpc: "2.0", id, method, params })
const callParams = {
  name: "echo",
  arguments: { text: ECHO_TEXT },
  ...(era === "modern" ? { _meta: MODERN_META } : {})
}

await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const server = yield* makeServer()
  const address = yield* StreamableHttp.serve(server, { port: 0, host: "127.0.0.1" })
  let sessionId: string | null = null
  const post = (body: string, method: string) =>
    Effect.promise(async () => {
      const response = await fetch(address.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": era === "modern" ? MODERN : LEGACY,
          ...(era === "modern" ? { "mcp-method": method, "mcp-name": "echo" } : {}),
          ...(sessionId === null ? {} : { "mcp-session-id": sessionId })
        },
        body
      })
      sessionId = response.headers.get("mcp-session-id") ?? sessionId
      return response.text()
    })
  if (era === "legacy") {
    yield* post(
      request(0, "initialize", {
        protocolVersion: LEGACY,
        capabilities: {},
        clientInfo: { name: "presa-bench", version: "0" }
      }),
      "initialize"
    )
    yield* post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), "")
  }
  for (let i = 1; i <= 50; i++) yield* post(request(i, "tools/call", callParams), "tools/call")
  yield* Effect.promise(() => session.post("Profiler.takePreciseCoverage"))
  const answer = yield* post(request(999, "tools/call", callParams), "tools/call")
  const coverage: Coverage = yield* Effect.promise(() => session.post("Profiler.takePreciseCoverage"))
  if (!answer.includes(ECHO_TEXT)) throw new Error(`unexpected answer: ${answer}`)
  const files = coverage.result.flatMap((script) => {
    const at = script.url.indexOf("/dist/")
    if (at < 0 || script.url.includes("/node_modules/")) return []
    // a module's own top-level function has offset 0: it ran when the module loaded, not now
    const ran = script.functions.filter((f) => (f.ranges[0]?.count ?? 0) > 0 && (f.ranges[0]?.startOffset ?? 0) > 0)
    return ran.length === 0 ? [] : [{
      file: script.url.slice(at + 1).replace(/\.js$/, ".ts").replace(/^dist\//, "src/"),
      functions: ran.map((f) => `${f.functionName || "(anonymous)"}×${f.ranges[0]?.count ?? 0}`)
    }]
  }).sort((a, b) => a.file.localeCompare(b.file))
  for (const f of files) console.log(`${f.file.padEnd(48)} ${f.functions.length} functions: ${f.functions.join(" ")}`)
  console.log(
    `${era} tools/call over HTTP: ${files.length} files, ${files.reduce((n, f) => n + f.functions.length, 0)} functions`
  )
})))
