/**
 * Runs the reference calls against the library in-process and prints each result.
 *   npx tsx examples/client.ts
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Content, InProcess, McpClient } from "presa-mcp"
import { makeLibrary } from "./library-definitions.js"

/** The calls: the program needs only the client service, whatever the transport. */
const calls = Effect.gen(function*() {
  const client = yield* McpClient.McpClient
  console.log("era:", client.info.era, client.info.protocolVersion)
  console.log("capabilities:", Object.keys(client.info.capabilities).join(", "))
  console.log("tools:", (yield* client.listAllTools).map((t) => t.name).join(", "))
  const sum = yield* client.callTool("add", { numbers: [1, 2, 3] })
  console.log("add [1,2,3] →", JSON.stringify(sum.structuredContent))
  const bad = yield* client.callTool("add", { numbers: ["one"] })
  console.log("add [\"one\"] →", Content.textOf(bad), `(isError: ${bad.isError})`)
  console.log("people://ada →", Content.textOf(yield* client.readResource("people://ada")))
  const missing = yield* Effect.flip(client.readResource("people://nobody"))
  console.log("people://nobody →", missing._tag, missing.message)
  console.log("introduce alan →", Content.textOf(yield* client.getPrompt("introduce", { id: "alan" })))
  const completion = yield* client.complete({ type: "ref/prompt", name: "introduce" }, "id", "a")
  console.log("complete id 'a' →", completion.values.join(", "))
})

// The client Layer over an in-process transport; its Scope (that of `Effect.provide`) closes the client.
const program = Effect.flatMap(
  makeLibrary,
  (server) => calls.pipe(Effect.provide(McpClient.layer().pipe(Layer.provide(InProcess.layerClient(server)))))
)

Effect.runPromise(program).catch((e) => {
  console.error(e)
  process.exitCode = 1
})
