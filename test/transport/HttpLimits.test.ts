/**
 * Issue #20, "HTTP limits": the standalone server (`StreamableHttp.serve`) closes slow-header,
 * slow-body and idle keep-alive connections after its configured timeouts, and a connection
 * whose client stopped reading a response after `writeTimeout` (the response's request is then
 * interrupted). Real sockets on 127.0.0.1, every wait bounded.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Net from "node:net"
import { McpServer, Tool } from "presa-mcp"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import { MODERN, modernMeta } from "../support/Wire.js"

interface Conn {
  readonly socket: Net.Socket
  /** Resolves with what was received when the server closed the connection (or on error). */
  readonly closed: Promise<string>
}

const open = (port: number): Effect.Effect<Conn> =>
  Effect.async<Conn>((resume) => {
    const socket = Net.connect({ host: "127.0.0.1", port }, () => resume(Effect.succeed({ socket, closed })))
    let received = ""
    const closed = new Promise<string>((resolve) => {
      socket.on("data", (chunk) => {
        received += chunk.toString("latin1")
      })
      socket.on("close", () => resolve(received))
      socket.on("error", () => resolve(received))
    })
  })

/** Waits for the server to close `conn`, at most `limit` ms; the elapsed ms and what was received. */
const awaitClose = (conn: Conn, limit: number) =>
  Effect.gen(function*() {
    const t0 = performance.now()
    const received = yield* Effect.promise(() => conn.closed).pipe(Effect.timeout(limit))
    return { elapsed: performance.now() - t0, received }
  })

const server = McpServer.make({ name: "limits", version: "1.0.0" })

describe("StreamableHttp.serve socket limits", () => {
  it.scopedLive("headers that never finish: closed after headersTimeout with 408", () =>
    Effect.gen(function*() {
      const { port } = yield* StreamableHttp.serve(yield* server, { headersTimeout: "300 millis" })
      const conn = yield* open(port)
      conn.socket.write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
      const { elapsed, received } = yield* awaitClose(conn, 5_000)
      assert.match(received, /^HTTP\/1\.1 408/)
      assert.isAtLeast(elapsed, 250)
    }))

  it.scopedLive("a body that never finishes: closed after requestTimeout with 408", () =>
    Effect.gen(function*() {
      const { port } = yield* StreamableHttp.serve(yield* server, { requestTimeout: "500 millis" })
      const conn = yield* open(port)
      conn.socket.write(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
          "Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":"
      )
      const { elapsed, received } = yield* awaitClose(conn, 5_000)
      assert.match(received, /^HTTP\/1\.1 408/)
      assert.isAtLeast(elapsed, 400)
    }))

  it.scopedLive("an idle keep-alive connection: closed after keepAliveTimeout", () =>
    Effect.gen(function*() {
      const { port } = yield* StreamableHttp.serve(yield* server, { keepAliveTimeout: "300 millis" })
      const conn = yield* open(port)
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "server/discover",
        params: {
          _meta: modernMeta()
        }
      })
      conn.socket.write(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
          `Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: ${MODERN}\r\nMcp-Method: server/discover\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
      )
      const { elapsed, received } = yield* awaitClose(conn, 5_000)
      assert.match(received, /^HTTP\/1\.1 200/)
      assert.include(received, "\"result\"")
      assert.isAtLeast(elapsed, 250)
    }))

  it.scopedLive("a client that stops reading an SSE response: closed after writeTimeout, the request interrupted", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const sent = yield* Ref.make(0)
      const chunk = "x".repeat(60_000)
      const flood = Tool.fromJsonSchema({
        name: "flood",
        handler: (_args, ctx) =>
          Effect.gen(function*() {
            // At most 1,000 log messages of 60 KB (the per-request notification bound): far more
            // than the socket buffers hold while the client does not read.
            for (let i = 0; i < 1_000; i++) {
              if (!(yield* McpServer.log(ctx, "info", chunk))) break
              yield* Ref.update(sent, (n) => n + 1)
            }
            return "done"
          }).pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
      })
      const mcp = yield* McpServer.make({ name: "limits", version: "1.0.0", logging: true, tools: [flood] })
      const { port } = yield* StreamableHttp.serve(mcp, { writeTimeout: "500 millis" })
      const conn = yield* open(port)
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "flood",
          arguments: {},
          _meta: modernMeta({ "io.modelcontextprotocol/logLevel": "debug" })
        }
      })
      conn.socket.write(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
          `Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: ${MODERN}\r\n` +
          `Mcp-Method: tools/call\r\nMcp-Name: flood\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
      )
      // Read nothing more: the kernel buffers fill, the server's writes stop making progress.
      conn.socket.pause()
      yield* Deferred.await(interrupted).pipe(Effect.timeout(15_000))
      const count = yield* Ref.get(sent)
      assert.isBelow(count, 1_000, "the handler was interrupted before it sent everything")
      yield* Effect.logDebug(`log messages sent before the connection was closed: ${count}`)
      conn.socket.destroy()
    }))
})
