/**
 * The Streamable HTTP client transport: one POST per message, JSON or SSE responses, modern
 * request headers (MCP 2026-07-28, Transports › Streamable HTTP; SEP-2243), the legacy session
 * with its 404 recovery and standalone GET stream (MCP 2025-11-25, Transports › Streamable HTTP).
 * Documented on `StreamableHttp.clientWith`. The parts, over one state record (`client/state`):
 * request headers (`client/headers`), one POST and its response (`client/post`, SSE parsing in
 * `client/sse`), server→client requests (`client/serverRequests`), the legacy session
 * (`client/session`) and its GET stream (`client/standalone`).
 *
 * @internal
 */
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import type * as JsonRpc from "../../../JsonRpc.js"
import * as McpSchema from "../../../McpSchema.js"
import { type ClientTransport, type RequestOptions, TransportError } from "../../../Transport.js"
import type { ClientOptions } from "../../../transport/StreamableHttp.js"
import { withTimeout } from "../../client/deadline.js"
import type * as Telemetry from "../../telemetry.js"
import { withAuthorization } from "./client/auth.js"
import { notify, observe, send } from "./client/post.js"
import { cancelLegacy, close, recover } from "./client/session.js"
import { sessionNotifications, standing } from "./client/standalone.js"
import { type Client, closedError, http404, make as makeState } from "./client/state.js"

/** A request under `ClientOptions.auth` (see `client/auth`). */
const authorized = (
  client: Client,
  message: JsonRpc.Request,
  requestOptions?: RequestOptions
): Effect.Effect<JsonRpc.Response, TransportError> =>
  withAuthorization(client, message.method, "POST", exchange(client, message, requestOptions))

/** A request, resent once after re-initializing when the legacy session was gone. */
const exchange = (
  client: Client,
  message: JsonRpc.Request,
  requestOptions?: RequestOptions
): Effect.Effect<JsonRpc.Response, TransportError> =>
  Effect.gen(function*() {
    const st = yield* Ref.get(client.state)
    if (st.closed) return yield* closedError()
    let outcome = yield* send(client, message, st, requestOptions).pipe(
      Effect.onInterrupt(() => cancelLegacy(client, message, st))
    )
    if (outcome._tag === "SessionGone" && st.sessionId !== undefined) {
      yield* recover(client, st.sessionId)
      const renewed = yield* Ref.get(client.state)
      outcome = yield* send(client, message, renewed, requestOptions).pipe(
        Effect.onInterrupt(() => cancelLegacy(client, message, renewed))
      )
    }
    if (outcome._tag === "SessionGone") {
      return yield* http404("the session was not found, even after re-initialization")
    }
    yield* observe(client, message, outcome)
    return outcome.response
  })

export const make = (
  options: ClientOptions
): Effect.Effect<ClientTransport, never, Scope.Scope | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* makeState(options)
    const closeClient = close(client)
    yield* Effect.addFinalizer(() => closeClient)
    return {
      request: (message, requestOptions) =>
        withTimeout(authorized(client, message, requestOptions), message.method, requestOptions?.timeout),
      notify: (message) =>
        message.method === McpSchema.Method.initialized
          ? Effect.zipRight(notify(client, message), standing(client))
          : notify(client, message),
      setRequestHandler: client.handlers.set,
      sessionNotifications: sessionNotifications(client),
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
