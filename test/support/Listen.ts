/**
 * Listens on 127.0.0.1 port 0 for the Scope: the bound port, and on close every tracked socket
 * destroyed (so `close` does not wait for keep-alive or proxied connections) before the server
 * closes. Shared by the test balancer (`RoundRobin`) and the test TCP proxy (`TcpProxy`).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Net from "node:net"

export const listenLoopback = (
  server: Net.Server,
  sockets: ReadonlySet<Net.Socket>
): Effect.Effect<number, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<number>((resume) => {
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : 0))
      })
    }),
    () =>
      Effect.async<void>((resume) => {
        for (const s of sockets) s.destroy()
        server.close(() => resume(Effect.void))
      })
  )
