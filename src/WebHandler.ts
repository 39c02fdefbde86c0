/**
 * A web-standard handler, `(request: Request) => Promise<Response>`, for runtimes without Node's
 * HTTP server (Workers, Deno, Bun, or a test calling it directly). It is the Streamable HTTP
 * endpoint of `presa-mcp/transport/StreamableHttp` (the same header, Origin/Host, Accept,
 * body-limit, status and auth rules), built on `@effect/platform`'s web handler support, and it
 * imports no Node module.
 *
 * The modern era (2026-07-28) is stateless anyway; legacy requests (2025-11-25 / 2025-06-18) are
 * served without sessions by default (`sessions: false`): `initialize` is answered without an
 * `Mcp-Session-Id`, and each later legacy request runs at the version its `MCP-Protocol-Version`
 * header names. The handler answers at whatever path it is called on.
 *
 * This is the issue's `McpServer.toWebHandler`, kept in its own module so the server core does not
 * load HTTP code.
 *
 * Guide: [Transports, fetch handler](https://github.com/presa-mcp/presa-mcp/blob/main/docs/transports.md#a-fetch-handler-for-workers-deno-and-bun).
 *
 * @since 0.1.0
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Service from "./internal/server/service.js"
import * as internal from "./internal/transport/http/server.js"
import type * as McpServer from "./McpServer.js"
import type * as StreamableHttp from "./transport/StreamableHttp.js"

/**
 * Options: every Streamable HTTP server option (`allowedOrigins`, `allowedHosts`, `maxBodyBytes`,
 * `auth`, …; see `StreamableHttp.ServerOptions`) and `sessions` (default `false`).
 *
 * @since 0.1.0
 * @category models
 */
export type Options = Omit<StreamableHttp.ServerOptions, "path">

/**
 * A web handler: call it with a `Request`; `dispose()` ends what it holds (open listen streams,
 * legacy sessions when `sessions: true`).
 *
 * @since 0.1.0
 * @category models
 */
export interface WebHandler {
  (request: Request): Promise<Response>
  readonly dispose: () => Promise<void>
}

class Endpoint extends Context.Tag("presa-mcp/WebHandler/Endpoint")<Endpoint, internal.Handler>() {}

/**
 * Builds the web handler for `server`. Never throws; every protocol problem is an HTTP response
 * (400/401/403/404/405/406/413/415 with a JSON-RPC error body where the spec gives one).
 *
 * @since 0.1.0
 * @category constructors
 */
export const toWebHandler = (server: McpServer.McpServer, options: Options = {}): WebHandler => {
  const { dispose, handler } = HttpApp.toWebHandlerLayerWith(
    Layer.scoped(Endpoint, internal.makeHandler(Service.internal(server), { sessions: false, ...options })),
    { toHandler: () => Effect.succeed(Effect.flatten(Endpoint)) }
  )
  return Object.assign((request: Request) => handler(request), { dispose })
}
