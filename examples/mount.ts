/**
 * Mounting the MCP endpoint into an existing @effect/platform HTTP app, next to other routes.
 *   npx tsx examples/mount.ts            (http://127.0.0.1:3001/health and /mcp)
 */
import { HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import { makeLibrary } from "./library-definitions.js"

const App = Layer.unwrapScoped(Effect.gen(function*() {
  const mcp = yield* StreamableHttp.router(yield* makeLibrary)
  const app = HttpRouter.empty.pipe(
    HttpRouter.get("/health", HttpServerResponse.text("ok")),
    HttpRouter.concat(mcp)
  )
  yield* Effect.logInfo("serving http://127.0.0.1:3001/health and http://127.0.0.1:3001/mcp")
  return HttpServer.serve(app)
}))

App.pipe(
  Layer.provide(NodeHttpServer.layer(createServer, { port: 3001, host: "127.0.0.1" })),
  Layer.launch,
  NodeRuntime.runMain
)
