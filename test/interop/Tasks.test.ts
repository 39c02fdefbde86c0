/**
 * Tasks extension interop with the official SDK v2 client (`@modelcontextprotocol/client` 2.4.0)
 * over Streamable HTTP on 127.0.0.1.
 *
 * That client implements only the 2025-11-25 experimental tasks (a `task` request param, a nested
 * `task` result, `tasks/result`, `tasks/list`), not SEP-2663 (`resultType: "task"`,
 * `tasks/update`): it never declares `io.modelcontextprotocol/tasks`. What is checked is that our
 * server treats it as a non-declaring client, as SEP-2663 requires: an `optional` task tool
 * answers with the plain result, a `required` one with -32021 naming the extension — and that the
 * client sees our `server/discover` extension entry unchanged.
 */
import { assert, expect, it } from "@effect/vitest"
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from "@modelcontextprotocol/client"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as StreamableHttp from "../../src/transport/StreamableHttp.js"
import { MODERN, promise, rejection, textOf } from "../fixtures/interop-http.js"
import { makeTasksServer } from "../fixtures/tasks-server.js"

const codeOf = (e: unknown): unknown => typeof e === "object" && e !== null && "code" in e ? e.code : undefined
const dataOf = (e: unknown): unknown => typeof e === "object" && e !== null && "data" in e ? e.data : undefined

it.scopedLive("SDK v2 client (no SEP-2663 support) against a tasks server: treated as not declaring the extension", () =>
  Effect.gen(function*() {
    const { url } = yield* StreamableHttp.serve(yield* makeTasksServer(yield* Ref.make(0)), { port: 0 })
    const client = yield* Effect.acquireRelease(
      promise("connect", async () => {
        const c = new V2Client({ name: "interop-tasks", version: "0.0.0" }, {
          versionNegotiation: { mode: { pin: MODERN } }
        })
        await c.connect(new V2Transport(new URL(url)))
        return c
      }),
      (c) => promise("close", () => c.close()).pipe(Effect.ignore)
    )
    expect(client.getServerCapabilities()?.extensions).toEqual({ "io.modelcontextprotocol/tasks": {} })
    const plain = yield* promise(
      "callTool steps",
      () => client.callTool({ name: "steps", arguments: { n: 1, delayMs: 1 } })
    )
    assert.strictEqual(textOf(plain.content), "done 1 steps")
    const required = yield* rejection("callTool must", () => client.callTool({ name: "must", arguments: {} }))
    assert.strictEqual(codeOf(required), -32021)
    expect(dataOf(required)).toEqual({ requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } })
  }))
