/**
 * `McpClient.McpClient` as a service: programs that only `yield* McpClient.McpClient`, given
 * `McpClient.layer` over a transport Layer (`Stdio.layerClient`, `StreamableHttp.layerClient`,
 * `InProcess.layerClient`). Closing the Layer's Scope ends the connection: the stdio child sees its
 * stdin close and exits; the HTTP legacy session is ended (DELETE) and the server no longer knows it.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { McpClient, McpServer, Tool } from "presa-mcp"
import * as InProcess from "presa-mcp/transport/InProcess"
import * as Stdio from "presa-mcp/transport/Stdio"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const SERVER = Path.join(ROOT, "test", "fixtures", "stdio-server.ts")

/** The program under test: it knows nothing of transports, only the client service. */
const echo = (text: string) =>
  Effect.gen(function*() {
    const client = yield* McpClient.McpClient
    const result = yield* client.callTool("echo", { text })
    return { era: client.info.era, text: result.content[0]?.type === "text" ? result.content[0].text : undefined }
  })

/** Polls `check` every 50 ms, at most 100 times (5 s). */
const eventually = (what: string, check: Effect.Effect<boolean>): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (let i = 0; i < 100; i++) {
      if (yield* check) return
      yield* Effect.sleep(Duration.millis(50))
    }
    return yield* Effect.die(new Error(`timed out waiting for ${what}`))
  })

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const echoTool = Tool.make({
  name: "echo",
  parameters: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => text
})

describe("McpClient.layer", () => {
  it.live(
    "over Stdio.layerClient: the program uses only the service; closing the scope ends the child",
    () =>
      Effect.gen(function*() {
        const stderr = yield* Ref.make<ReadonlyArray<string>>([])
        const transport = Stdio.layerClient({
          command: process.execPath,
          args: ["--import", "tsx", SERVER],
          cwd: ROOT,
          stderr: (line) => Ref.update(stderr, (lines) => [...lines, line])
        })
        const result = yield* echo("over stdio").pipe(
          Effect.provide(McpClient.layer({ name: "layer-test" }).pipe(Layer.provide(transport)))
        )
        expect(result).toEqual({ era: "modern", text: "over stdio" })
        // Effect.provide's scope is closed once the program ended: the server saw stdin close and exited.
        yield* eventually(
          "the server's exit line",
          Effect.map(Ref.get(stderr), (lines) => lines.some((l) => l.includes("stdin closed, exiting")))
        )
        const ready = (yield* Ref.get(stderr)).find((l) => l.includes("ready pid="))
        const pid = Number(ready?.match(/ready pid=(\d+)/)?.[1])
        assert.isTrue(Number.isInteger(pid) && pid > 0, `no pid in ${JSON.stringify(ready)}`)
        yield* eventually(`process ${pid} to exit`, Effect.sync(() => !isAlive(pid)))
      }),
    { timeout: 30_000 }
  )

  it.live(
    "over StreamableHttp.layerClient (legacy session): closing the scope ends the session on the server",
    () =>
      Effect.gen(function*() {
        const server = yield* McpServer.make({ name: "layer-http", version: "1.0.0", tools: [echoTool] })
        const address = yield* StreamableHttp.serve(server, { port: 0 })
        const sent = yield* Ref.make<ReadonlyArray<{ readonly method: string; readonly session: string | null }>>([])
        const sessionIds = yield* Ref.make<ReadonlyArray<string>>([])
        const recordingFetch: typeof globalThis.fetch = async (input, init) => {
          const request = new Request(input, init)
          Effect.runSync(
            Ref.update(
              sent,
              (all) => [...all, { method: request.method, session: request.headers.get("mcp-session-id") }]
            )
          )
          const response = await fetch(request)
          const id = response.headers.get("mcp-session-id")
          if (id !== null) Effect.runSync(Ref.update(sessionIds, (all) => [...all, id]))
          return response
        }
        const transport = StreamableHttp.layerClient({ url: address.url, fetch: recordingFetch })
        const result = yield* echo("over http").pipe(
          Effect.provide(McpClient.layer({ versions: ["2025-11-25"] }).pipe(Layer.provide(transport)))
        )
        expect(result).toEqual({ era: "legacy", text: "over http" })
        const [session] = yield* Ref.get(sessionIds)
        assert.isString(session)
        // the scope closed: the client sent DELETE for its session …
        expect((yield* Ref.get(sent)).filter((r) => r.method === "DELETE")).toEqual([{ method: "DELETE", session }])
        // … and the server no longer knows it (404 for a request in that session).
        const after = yield* Effect.promise(() =>
          fetch(address.url, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              "mcp-protocol-version": "2025-11-25",
              "mcp-session-id": session ?? ""
            },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })
          })
        )
        assert.strictEqual(after.status, 404)
      }).pipe(Effect.scoped),
    { timeout: 30_000 }
  )

  it.effect("over InProcess.layerClient", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "layer-mem", version: "1.0.0", tools: [echoTool] })
      const result = yield* echo("in process").pipe(
        Effect.provide(McpClient.layer().pipe(Layer.provide(InProcess.layerClient(server))))
      )
      expect(result).toEqual({ era: "modern", text: "in process" })
    }))
})
