/**
 * A transport of your own over the public connection seam (`presa-mcp/Connection`): MCP over
 * WebSocket, one text frame per JSON-RPC message, with `@effect/platform`'s `Socket` and
 * `@effect/platform-node`'s `NodeSocketServer` (the `ws` package). The connection does the MCP
 * part (requests in flight and their bound, cancellation, server→client requests, exactly one
 * reply); this file only moves text frames. Guide: docs/transports.md.
 *
 *   npx tsx examples/websocket.ts [--port 3001] [--host 127.0.0.1]
 *
 * One line with the URL goes to stderr. The official SDK v1 client's `WebSocketClientTransport`
 * (`@modelcontextprotocol/sdk/client/websocket.js`, subprotocol `mcp`) connects to it; so does the
 * SDK v2 client (`@modelcontextprotocol/client`, modern or legacy) over any `Transport` that moves
 * one text frame per message (test/transport/WebSocket.test.ts has one over `ws`).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import type * as Socket from "@effect/platform/Socket"
import type * as SocketServer from "@effect/platform/SocketServer"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Mailbox from "effect/Mailbox"
import type * as Scope from "effect/Scope"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Connection, type McpServer } from "presa-mcp"
import { makeLibrary } from "./library-definitions.js"

/** Messages of one socket waiting to be handled; a peer that sends more is disconnected. */
const INBOX_CAPACITY = 1024

/** One frame's text: a text frame as is, a binary frame decoded as UTF-8. */
const decoder = new TextDecoder()
const textOf = (data: string | Uint8Array): string => typeof data === "string" ? data : decoder.decode(data)

/**
 * Serves one WebSocket: its frames, in order, to a connection of `server`; the connection's
 * messages back as text frames. Ends when the socket closes (the connection drains, then stops).
 */
export const serveSocket = (
  server: McpServer.McpServer,
  socket: Socket.Socket
): Effect.Effect<void, Socket.SocketError> =>
  Effect.scoped(Effect.gen(function*() {
    const write = yield* socket.writer
    let open = true
    // The socket's reader calls us once per frame; the connection wants them one after another:
    // a bounded inbox in between (a flood beyond it ends this socket's connection).
    const inbox = yield* Mailbox.make<string, Socket.SocketError | "overflow">(INBOX_CAPACITY)
    yield* socket.runRaw((data) => {
      if (!inbox.unsafeOffer(textOf(data))) inbox.unsafeDone(Exit.fail("overflow" as const))
    }).pipe(
      Effect.onExit((exit) => {
        open = false
        return exit._tag === "Success" ? inbox.end : inbox.failCause(exit.cause)
      }),
      Effect.forkScoped
    )
    yield* Connection.serve(server, {
      incoming: Mailbox.toStream(inbox),
      // a frame the closed socket cannot take is dropped: the peer is gone
      send: (text) => Effect.catchAll(write(text), () => Effect.void),
      isOpen: () => open,
      peer: { transport: "tcp", protocolName: "websocket" }
    }).pipe(
      Effect.catchAll((e) => e === "overflow" ? Effect.logWarning("WebSocket: inbox full; closing") : Effect.fail(e))
    )
  }))

/** A WebSocket MCP server on `port` (0: any free port) until the Scope closes; yields its address. */
export const serveWebSocket = (
  server: McpServer.McpServer,
  options: { readonly port: number; readonly host: string }
): Effect.Effect<SocketServer.Address, SocketServer.SocketServerError, Scope.Scope> =>
  Effect.gen(function*() {
    const sockets = yield* NodeSocketServer.makeWebSocket({ port: options.port, host: options.host })
    yield* sockets.run((socket) =>
      serveSocket(server, socket).pipe(
        Effect.catchAll((e) => Effect.logDebug(`WebSocket: a connection ended: ${e.message}`))
      )
    ).pipe(Effect.forkScoped)
    return sockets.address
  })

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { port: { type: "string" }, host: { type: "string" } } })
  Effect.gen(function*() {
    const server = yield* makeLibrary
    const address = yield* serveWebSocket(server, {
      port: Number(values.port ?? 3001),
      host: values.host ?? "127.0.0.1"
    })
    if (address._tag === "TcpAddress") {
      yield* Console.error(`presa-library MCP server on ws://${address.hostname}:${address.port}`)
    }
    return yield* Effect.never
  }).pipe(Effect.scoped, NodeRuntime.runMain)
}
