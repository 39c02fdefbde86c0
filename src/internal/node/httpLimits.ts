/**
 * Socket-level limits of the standalone Node HTTP server (`StreamableHttp.serve`): the timeouts
 * Node applies to slow headers, slow bodies and idle keep-alive connections, set deliberately
 * instead of left at Node's defaults, and a write timeout for a peer that stops reading
 * (issue #20, "HTTP limits"; the stdio transport's `writeTimeout` is the same rule for a pipe).
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type * as NodeHttp from "node:http"
import type * as Net from "node:net"

/** Defaults of the four limits. */
export const DEFAULT_HEADERS_TIMEOUT: Duration.DurationInput = "10 seconds"
export const DEFAULT_REQUEST_TIMEOUT: Duration.DurationInput = "60 seconds"
export const DEFAULT_KEEP_ALIVE_TIMEOUT: Duration.DurationInput = "5 seconds"
export const DEFAULT_WRITE_TIMEOUT: Duration.DurationInput = "60 seconds"

export interface Limits {
  readonly headersTimeout?: Duration.DurationInput | undefined
  readonly requestTimeout?: Duration.DurationInput | undefined
  readonly keepAliveTimeout?: Duration.DurationInput | undefined
  readonly writeTimeout?: Duration.DurationInput | undefined
}

/** Milliseconds for Node's options, where `0` means "no limit". */
const millis = (input: Duration.DurationInput): number => {
  const d = Duration.decode(input)
  return Duration.isFinite(d) ? Math.max(1, Math.round(Duration.toMillis(d))) : 0
}

/**
 * The options of `http.createServer`: `headersTimeout` (all request headers received), and
 * `requestTimeout` (the whole request, body included; Node answers 408 and closes). Node checks
 * both on an interval (`connectionsCheckingInterval`, 30 s by default), so the interval is made a
 * fraction of the shorter one.
 */
export const serverOptions = (limits: Limits): NodeHttp.ServerOptions => {
  const headers = millis(limits.headersTimeout ?? DEFAULT_HEADERS_TIMEOUT)
  const request = millis(limits.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT)
  const finite = [headers, request].filter((n) => n > 0)
  const shortest = finite.length === 0 ? 30_000 : Math.min(...finite)
  return {
    // Node requires headersTimeout <= requestTimeout when both are set.
    headersTimeout: request > 0 && headers > request ? request : headers,
    requestTimeout: request,
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(shortest / 4))),
    keepAliveTimeout: millis(limits.keepAliveTimeout ?? DEFAULT_KEEP_ALIVE_TIMEOUT)
  }
}

interface Progress {
  readonly bytesWritten: number
  readonly sinceMillis: number
}

/**
 * Closes connections whose peer stopped reading: a socket with bytes waiting in its write buffer
 * whose `bytesWritten` has not moved for `writeTimeout` is destroyed (the response then fails and
 * its request is interrupted, as on a disconnect). Checked on a schedule in the current scope.
 */
export const watchWrites = (
  node: NodeHttp.Server,
  limits: Limits
): Effect.Effect<void, never, Scope.Scope> => {
  const timeout = millis(limits.writeTimeout ?? DEFAULT_WRITE_TIMEOUT)
  if (timeout === 0) return Effect.void
  // The sockets of this server and their write progress: owned by the listener, read by one fiber.
  const sockets = new Map<Net.Socket, Progress | undefined>()
  const onConnection = (socket: Net.Socket) => {
    sockets.set(socket, undefined)
    socket.once("close", () => sockets.delete(socket))
  }
  const check = Effect.sync(() => {
    const now = performance.now()
    for (const [socket, progress] of sockets) {
      if (socket.writableLength === 0 || socket.destroyed) {
        if (progress !== undefined) sockets.set(socket, undefined)
        continue
      }
      if (progress === undefined || progress.bytesWritten !== socket.bytesWritten) {
        sockets.set(socket, { bytesWritten: socket.bytesWritten, sinceMillis: now })
      } else if (now - progress.sinceMillis >= timeout) {
        socket.destroy()
      }
    }
  })
  const every = Duration.millis(Math.max(20, Math.min(1_000, Math.floor(timeout / 4))))
  return Effect.acquireRelease(
    Effect.sync(() => node.on("connection", onConnection)),
    () => Effect.sync(() => node.off("connection", onConnection))
  ).pipe(
    Effect.zipRight(Effect.forkScoped(Effect.repeat(check, Schedule.spaced(every)))),
    Effect.asVoid
  )
}
