/**
 * Benchmark server, our library on Streamable HTTP as one instance of a cluster: the same
 * definitions as `ours-http.ts`, with `presa-mcp/Redis`'s layer (change bus, task store, legacy
 * sessions) on the Redis at `--redis <url>`, keys under `--prefix <prefix>`. Prints `LISTENING
 * <url>` on stderr; SIGTERM stops it.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Redis from "presa-mcp/Redis"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import { makeServer } from "../lib/ours.js"
import { parseServerArgs } from "../lib/shared.js"

const argv = process.argv.slice(2)
const option = (name: string): string | undefined => {
  const i = argv.indexOf(name)
  return i === -1 ? undefined : argv[i + 1]
}

const main = Effect.gen(function*() {
  const server = yield* makeServer(parseServerArgs(argv))
  const address = yield* StreamableHttp.serve(server, { port: 0, host: "127.0.0.1" })
  yield* Effect.sync(() => process.stderr.write(`LISTENING ${address.url}\n`))
  return yield* Effect.never
}).pipe(
  Effect.scoped,
  Effect.provide(Redis.layer({
    url: option("--redis") ?? "redis://127.0.0.1:6379",
    ...(option("--prefix") === undefined ? {} : { prefix: option("--prefix") })
  }))
)
NodeRuntime.runMain(main, { disablePrettyLogger: true })
