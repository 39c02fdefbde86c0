/**
 * Effect operations per legacy `tools/call` over Streamable HTTP on the endpoint's side, a steady
 * figure next to `hot.ts http-load`'s µs of CPU (which swing with the machine's load): the server
 * (`StreamableHttp.serve`) runs in this process under a counting `Supervisor` with op supervision
 * on, so every step of the listener's fiber per request is counted (the session connection's
 * request fiber is counted as a fiber; it runs with default runtime flags, so its steps are not).
 * The client is `fetch`, sequential, 2,000 calls after 200 warm-up calls; then 2,000 more under
 * V8's sampling heap profiler (the process's allocation per request, the client's included).
 *
 *   npm run build && npx tsc -p tsconfig.bench.json
 *   TSX_TSCONFIG_PATH=tsconfig.bench.json node --import tsx bench/httpOps.ts
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import { OpCounter, sampleAllocations, supervisedBy, totalBytes } from "./lib/measure.js"
import { makeServer } from "./lib/ours.js"
import { ECHO_TEXT, LEGACY } from "./lib/shared.js"

const counter = new OpCounter()
const scope = Effect.runSync(Scope.make())
const address = await Effect.runPromise(
  Effect.gen(function*() {
    const server = yield* makeServer()
    return yield* StreamableHttp.serve(server, { port: 0, host: "127.0.0.1" })
  }).pipe(
    Scope.extend(scope),
    supervisedBy(counter)
  )
)
let sessionId: string | null = null
const post = async (body: string) => {
  const response = await fetch(address.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": LEGACY,
      ...(sessionId === null ? {} : { "mcp-session-id": sessionId })
    },
    body
  })
  sessionId = response.headers.get("mcp-session-id") ?? sessionId
  return response.text()
}
await post(JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "ops", version: "0" } }
}))
await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))
const call = (id: number) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: { text: ECHO_TEXT } } })
for (let i = 1; i <= 200; i++) await post(call(i))
const n = 2000
counter.reset()
for (let i = 0; i < n; i++) {
  const text = await post(call(1000 + i))
  if (!text.includes(ECHO_TEXT)) throw new Error(text)
}
// Then the bytes the whole process allocates per request (the `fetch` client's share included, the
// same for any server build: compare two builds' figures, not the absolute one), counting off.
counter.counting = false
const allocated = totalBytes(
  await sampleAllocations(async () => {
    for (let i = 0; i < n; i++) await post(call(10_000 + i))
  })
)
console.log(
  `legacy tools/call: ${(counter.ops / n).toFixed(1)} Effect ops, ${
    (counter.fibers / n).toFixed(2)
  } fibers per request (supervised fibers); ${
    (allocated / n / 1024).toFixed(1)
  } KiB allocated per request (the process, client included)`
)
await Effect.runPromise(Scope.close(scope, Exit.void))
