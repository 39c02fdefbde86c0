/**
 * A loopback TCP proxy for tests that need a connection to break without the server ending
 * anything gracefully: `cut` destroys every proxied connection (both sides), `retarget` points
 * new connections at another port (a "restarted" server).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Net from "node:net"
import { listenLoopback } from "./Listen.js"

export interface TcpProxy {
  /** The proxy's port on 127.0.0.1. */
  readonly port: number
  /** Destroys every open connection through the proxy. */
  readonly cut: Effect.Effect<void>
  /** New connections go to `port` from now on. */
  readonly retarget: (port: number) => Effect.Effect<void>
}

export const make = (targetPort: number): Effect.Effect<TcpProxy, never, Scope.Scope> =>
  Effect.gen(function*() {
    let target = targetPort
    const sockets = new Set<Net.Socket>()
    const track = (socket: Net.Socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
      socket.on("error", () => socket.destroy())
    }
    const server = Net.createServer((client) => {
      const upstream = Net.connect(target, "127.0.0.1")
      track(client)
      track(upstream)
      client.pipe(upstream)
      upstream.pipe(client)
      client.on("close", () => upstream.destroy())
      upstream.on("close", () => client.destroy())
    })
    const port = yield* listenLoopback(server, sockets)
    return {
      port,
      cut: Effect.sync(() => {
        for (const s of sockets) s.destroy()
      }),
      retarget: (next) =>
        Effect.sync(() => {
          target = next
        })
    }
  })
