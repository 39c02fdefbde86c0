/**
 * The Streamable HTTP client transport: one POST per message, JSON or SSE responses, modern
 * request headers (MCP 2026-07-28, Transports › Streamable HTTP; SEP-2243), the legacy session
 * with its 404 recovery and standalone GET stream (MCP 2025-11-25, Transports › Streamable HTTP).
 * Documented on `StreamableHttp.clientWith`. The parts, over one state record (`client/state`) and
 * the client connection core (`internal/client/connection`: requests in flight, routing,
 * server→client requests): the message-level protocol (`client/protocol`: a request is one POST
 * exchange that feeds the core), request headers (`client/headers`), one POST and its response
 * (`client/post`, SSE parsing in `client/sse`, resumption with `Last-Event-ID` in `client/resume`),
 * the legacy session (`client/session`) and its GET stream (`client/standalone`).
 *
 * @internal
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { ClientTransport } from "../../../Transport.js"
import type { ClientOptions } from "../../../transport/StreamableHttp.js"
import * as Core from "../../client/connection.js"
import type * as Telemetry from "../../telemetry.js"
import * as Protocol from "./client/protocol.js"
import { type Client, make as makeState } from "./client/state.js"

export const make = (
  options: ClientOptions
): Effect.Effect<ClientTransport, never, Scope.Scope | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const base = yield* makeState(options)
    const connection = yield* Core.make({}, (connection) => Protocol.make(Object.assign(base, { connection })))
    const client: Client = Object.assign(base, { connection })
    yield* Effect.addFinalizer(() => Protocol.close(client))
    return {
      request: (message, requestOptions) => Protocol.request(client, message, requestOptions),
      notify: (message) => Protocol.notifyThen(client, message),
      setRequestHandler: connection.handlers.set,
      sessionNotifications: Core.sessionNotifications(connection),
      peer: peerOf(client.url)
    }
  })

/**
 * The server of `url` as spans and metrics record it (semantic-conventions-genai,
 * docs/gen-ai/mcp.md, "Recording MCP transport"): TCP, HTTP, the URL's host and port (the
 * scheme's default when the URL has none).
 */
const peerOf = (url: string): Telemetry.Peer => {
  const parsed = URL.canParse(url) ? new URL(url) : undefined
  if (parsed === undefined) return { transport: "tcp", protocolName: "http" }
  const port = parsed.port !== "" ? Number(parsed.port) : parsed.protocol === "https:" ? 443 : 80
  const host = parsed.hostname.startsWith("[") ? parsed.hostname.slice(1, -1) : parsed.hostname
  return { transport: "tcp", protocolName: "http", address: host, port }
}
