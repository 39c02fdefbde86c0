/**
 * A plain HTTP load balancer for cluster tests: every request goes to the next upstream in turn
 * (per request, not per connection, so a keep-alive client still spreads its requests), bodies and
 * responses (SSE included) are streamed through unchanged. An upstream that refuses the connection
 * is skipped (the request was not sent, so it is retried on the next one), as nginx does with
 * `proxy_next_upstream error`; one that dies mid-response breaks the client's response. Each forwarded request is logged with the upstream that served it and
 * the JSON-RPC method of its body (when it has one), so tests can check where requests landed.
 * `cut` picks requests whose connection is destroyed before any response (a connection reset as a
 * client sees it), e.g. the first GET.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import { listenLoopback } from "./Listen.js"

export interface Landing {
  readonly upstream: number
  readonly method: string | undefined
}

export interface RoundRobin {
  /** The balancer's MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string
  /** Where each request went, in order. */
  readonly log: ReadonlyArray<Landing>
  /** The upstream the next request goes to (while all are up). */
  readonly nextUpstream: () => number
}

const methodOf = (body: Buffer): string | undefined => {
  try {
    const parsed: unknown = JSON.parse(body.toString("utf8"))
    return typeof parsed === "object" && parsed !== null && "method" in parsed && typeof parsed.method === "string"
      ? parsed.method
      : undefined
  } catch {
    return undefined
  }
}

export interface Options {
  /** Called for each request in turn; `true` destroys its connection unanswered (not logged). */
  readonly cut?: (req: Http.IncomingMessage) => boolean
}

export const make = (
  ports: ReadonlyArray<number>,
  options: Options = {}
): Effect.Effect<RoundRobin, never, Scope.Scope> =>
  Effect.gen(function*() {
    let next = 0
    const log: Array<Landing> = []
    const sockets = new Set<import("node:net").Socket>()
    const server = Http.createServer((req, res) => {
      if (options.cut?.(req) === true) {
        req.socket.destroy()
        return
      }
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const body = Buffer.concat(chunks)
        const attempt = (tries: number) => {
          const upstream = next % ports.length
          next++
          const port = ports[upstream] ?? 0
          const out = Http.request({
            host: "127.0.0.1",
            port,
            method: req.method,
            path: req.url,
            headers: { ...req.headers, host: `127.0.0.1:${port}` }
          }, (upRes) => {
            log.push({ upstream, method: methodOf(body) })
            res.writeHead(upRes.statusCode ?? 502, upRes.headers)
            // headers now, as nginx does: an SSE stream may send no event for a while
            res.flushHeaders()
            upRes.pipe(res)
            res.on("close", () => upRes.destroy())
            // an upstream that dies mid-response: the client's response breaks too (as with nginx)
            upRes.on("close", () => {
              if (!upRes.complete) res.destroy()
            })
          })
          out.on("error", (e: NodeJS.ErrnoException) => {
            if (e.code === "ECONNREFUSED" && tries < ports.length) return attempt(tries + 1)
            if (!res.headersSent) res.writeHead(502)
            res.end()
          })
          out.end(body)
        }
        attempt(1)
      })
    })
    server.on("connection", (s) => {
      sockets.add(s)
      s.on("close", () => sockets.delete(s))
    })
    const port = yield* listenLoopback(server, sockets)
    return { url: `http://127.0.0.1:${port}/mcp`, log, nextUpstream: () => next % ports.length }
  })
