/**
 * Benchmark server, our library on Streamable HTTP (127.0.0.1, both eras on one endpoint: modern
 * stateless, legacy with `Mcp-Session-Id` sessions). Prints `LISTENING <url>` on stderr; SIGTERM stops it.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import { makeServer } from "../lib/ours.js"
import { parseServerArgs } from "../lib/shared.js"

const main = Effect.gen(function*() {
  const server = yield* makeServer(parseServerArgs(process.argv.slice(2)))
  const address = yield* StreamableHttp.serve(server, { port: 0, host: "127.0.0.1" })
  yield* Effect.sync(() => process.stderr.write(`LISTENING ${address.url}\n`))
  return yield* Effect.never
}).pipe(Effect.scoped)
NodeRuntime.runMain(main, { disablePrettyLogger: true })
