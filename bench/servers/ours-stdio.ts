/**
 * Benchmark server, our library on stdio: `node --import tsx bench/servers/ours-stdio.ts
 * [--tools N] [--page-size N] [--blob-bytes N]`. Exits when stdin ends.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Stdio from "presa-mcp/transport/Stdio"
import { makeServer } from "../lib/ours.js"
import { parseServerArgs } from "../lib/shared.js"

const args = parseServerArgs(process.argv.slice(2))
NodeRuntime.runMain(Effect.flatMap(makeServer(args), (server) => Stdio.run(server)), { disablePrettyLogger: true })
