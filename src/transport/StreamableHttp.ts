/**
 * Streamable HTTP, both eras on one endpoint: a server handler on `@effect/platform`
 * (mount it in your `HttpRouter` / `HttpLayerRouter`, or {@link serve} it standalone on Node) and
 * a client transport over `HttpClient` (fetch by default).
 *
 * **Server, per request** (MCP 2026-07-28 and 2025-11-25, Basic, Transports, "Streamable HTTP"):
 *
 * 1. `Origin` present and not allowed → `403` (`Origin: null` is refused unless allowed; no
 *    `Origin` is fine) — before any parsing or session work ("Security Warning": DNS rebinding);
 * 2. `Host` not allowed → `403` (DNS rebinding; default allow-list: loopback names);
 * 3. POST: `Content-Type` not `application/json` → `415`; `Accept` missing or not admitting
 *    `application/json` (`application/*`, `*\/*` count) → `406`; body over `maxBodyBytes` → `413`;
 *    bytes not UTF-8 JSON → `400` -32700; a batch or a non-JSON-RPC value → `400` -32600;
 * 4. notifications and responses → `202`, empty body. A modern notification whose
 *    `Mcp-Method` header is present and differs from the body → `400` -32020 (absent is fine);
 * 5. modern requests (`_meta` names a version, or `MCP-Protocol-Version` names a modern one) →
 *    `McpServer.dispatch` with the headers; status from the reply (§19.6); `Mcp-Session-Id` is
 *    ignored and never minted; closing the response (client disconnect) interrupts the handler;
 * 6. legacy `initialize` → a new session; its id (a random UUID) is returned in `Mcp-Session-Id`.
 *    On `initialize` the `MCP-Protocol-Version` header and any `Mcp-Session-Id` are ignored (the
 *    body's `protocolVersion` wins; a new session is always created). Other legacy requests: no session id → answered by the core (`400` -32602, `ping` works);
 *    unknown/deleted id → `404`; `MCP-Protocol-Version` absent → the negotiated version, any other
 *    value than the negotiated one (unsupported, or supported but not negotiated) → `400`; the
 *    request runs in the session (a disconnect does not cancel it; `notifications/cancelled`
 *    does). In-session JSON-RPC errors are HTTP `200` (a `404` would read as "session ended");
 * 7. GET with a session and `Accept: text/event-stream` → the session's standalone SSE stream:
 *    `McpServer.sessionNotifications` (list changes, resource updates) with per-session event ids,
 *    a priming event (`id: <latest>`, empty data), `Last-Event-ID` replay from the
 *    `Cluster.EventStore` of the context (default: in memory, `replayBufferSize` events, 10 minutes;
 *    `presa-mcp/Redis`: on any instance);
 *    a new GET replaces the previous stream (each message goes to one stream). DELETE with a
 *    session → `204`; GET/DELETE without a session → `405`; other methods → `405`.
 *
 * Request responses are JSON unless the handler emits a request-scoped notification (progress,
 * log) *before* its result and the client accepts `text/event-stream`: the response then becomes
 * an SSE stream (`event: message`, `X-Accel-Buffering: no`, `: ping` keep-alives) ending with the
 * final response. A request cancelled by `notifications/cancelled` gets `204` (or its SSE stream
 * just ends). A legacy request's SSE stream is resumable (since 0.2.0): a priming event first
 * (2025-11-25 sessions), event ids `<key>.<n>` naming the stream, every message recorded in the
 * `Cluster.EventStore`; a GET with such a `Last-Event-ID` replays what followed it, then the rest
 * of that stream up to its response, and ends. 2026-07-28 streams carry no event ids.
 * Refusals carry an id-less JSON-RPC error body (-32600 unless stated). No CORS headers are added:
 * for browser clients put a CORS middleware in front (MCP 2026-07-28, Transports, "Streamable HTTP" lists the headers).
 *
 * Guide: [Transports, HTTP](https://github.com/presa-mcp/presa-mcp/blob/main/docs/transports.md#serving-over-http).
 *
 * @since 0.1.0
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpRouter from "@effect/platform/HttpRouter"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { identity } from "effect/Function"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as NodeHttp from "node:http"
import * as Auth from "../Auth.js"
import * as NodeEndpoint from "../internal/node/httpEndpoint.js"
import * as HttpLimits from "../internal/node/httpLimits.js"
import * as Service from "../internal/server/service.js"
import * as internalClient from "../internal/transport/http/client.js"
import * as Health from "../internal/transport/http/health.js"
import * as internalServer from "../internal/transport/http/server.js"
import * as Http from "../internal/transport/http/wire.js"
import type * as JsonRpc from "../JsonRpc.js"
import * as McpServer from "../McpServer.js"
import type * as OAuth from "../OAuth.js"
import { ClientTransport } from "../Transport.js"

// ---------------------------------------------------------------------------------------------
// server
// ---------------------------------------------------------------------------------------------

/**
 * Server options. Every field is optional.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerOptions {
  /**
   * The endpoint path, default `"/mcp"` (used by {@link router}, {@link layer}, {@link serve};
   * {@link handler} answers wherever it is mounted).
   */
  readonly path?: `/${string}` | undefined
  /**
   * A `GET` health endpoint at this path (used by {@link router} and {@link serve}; none by
   * default), for a load balancer or an orchestrator: `200 {"status":"ok"}` while every
   * `Cluster.Health` check of the context is up (none: always), else `503
   * {"status":"degraded","redis":"down"}`; each check is a member (`"up"` or `"down"`). With
   * `presa-mcp/Redis`'s `layer`: `{"status":"ok","redis":"up"}`. Not behind `auth`.
   */
  readonly healthPath?: `/${string}` | undefined
  /**
   * `Origin` allow-list, or `"any"`. Entries are origins (`"https://app.example.com"`), origins
   * with any port (`"http://localhost:*"`), or `"null"` (admits `Origin: null`). Default
   * {@link loopbackOrigins}. A request without `Origin` is always allowed (non-browser clients);
   * a refused one gets `403`.
   */
  readonly allowedOrigins?: ReadonlyArray<string> | "any" | undefined
  /**
   * `Host` allow-list (names without port, case-insensitive), or `"any"`. Default
   * {@link loopbackHosts}: set it (or `"any"`) when the server is reachable under other names;
   * {@link serve} defaults it to `"any"` when bound to a non-loopback address. Refused → `403`.
   */
  readonly allowedHosts?: ReadonlyArray<string> | "any" | undefined
  /** POST body limit in bytes, default 4 MiB (4 194 304); a larger body gets `413`. */
  readonly maxBodyBytes?: number | undefined
  /**
   * Live legacy sessions at most, default 10 000. An `initialize` beyond it closes the least
   * recently active idle session (no open GET stream, no request in flight) to make room; only
   * when every session is busy does it get `503`.
   */
  readonly maxSessions?: number | undefined
  /**
   * A legacy session whose client has not sent `notifications/initialized` this long after its
   * `initialize` was answered is closed (its id then gets `404`), default 30 seconds
   * (`Duration.infinity` disables): a client that never completes the handshake holds a slot
   * only briefly.
   */
  readonly sessionInitializeTimeout?: Duration.DurationInput | undefined
  /**
   * A legacy session with no request, no open GET stream and nothing in flight for this long is
   * closed, default 30 minutes (`Duration.infinity` disables); its id then gets `404`.
   */
  readonly sessionIdleTimeout?: Duration.DurationInput | undefined
  /**
   * Events kept per stream (a legacy session's standalone stream, each of its requests' SSE
   * streams) for `Last-Event-ID` replay by the default in-memory event store, default 100 (none
   * older than 10 minutes). A `Cluster.EventStore` in the context (e.g. `Redis.layerEventStore`)
   * replaces it, with its own bounds.
   */
  readonly replayBufferSize?: number | undefined
  /** Interval of the `: ping` comments on open SSE responses, default 15 seconds. */
  readonly keepAlive?: Duration.DurationInput | undefined
  /**
   * How long a legacy server→client request (`Input.*` in a legacy session: sent as an SSE event
   * on the call's POST response, answered by a POSTed response) waits for the client, default 60
   * seconds; then the handler's `Input` call fails with -32603 and `notifications/cancelled` is
   * sent for it.
   */
  readonly clientRequestTimeout?: Duration.DurationInput | undefined
  /**
   * Requests of one legacy session running at once, at most; default 1,024. A request beyond it
   * waits for a slot in the session's queue (`maxQueued`; its POST is answered later), and a
   * `notifications/cancelled` for it drops it unstarted (its POST gets `204`, no JSON-RPC reply).
   * Requests without a session are bounded by `maxStatelessInFlight`.
   */
  readonly maxInFlight?: number | undefined
  /**
   * Requests of one legacy session waiting for a slot behind `maxInFlight`, at most; default 256.
   * A request beyond it waits (its POST unanswered) until the queue has room.
   */
  readonly maxQueued?: number | undefined
  /**
   * Requests without a legacy session of their own (2026-07-28 requests, `initialize`, legacy
   * requests with `sessions: false`) running at once across the whole endpoint, at most; default
   * 1,024. A request beyond it waits for a slot (in arrival order) in a queue of at most
   * `maxStatelessQueued`; closing its response while it waits withdraws it, unstarted.
   */
  readonly maxStatelessInFlight?: number | undefined
  /**
   * Requests waiting for a slot behind `maxStatelessInFlight`, at most; default 256. A request
   * that finds the slots and the queue full is not started: it gets `503` with `Retry-After: 1`
   * (seconds) and a JSON-RPC error -32603 with its id ("Server busy").
   */
  readonly maxStatelessQueued?: number | undefined
  /**
   * Makes the endpoint an OAuth 2.1 resource server (`Auth.ResourceServer`; MCP 2025-11-25,
   * Basic, Authorization): every request needs `Authorization: Bearer …` verified by
   * `auth.verifier` (missing or invalid → `401` with `WWW-Authenticate: Bearer
   * resource_metadata="…"`; lacking `auth.requiredScopes` → `403` `insufficient_scope`). The
   * caller is `ctx.auth` in handlers, so `McpServer.requireScopes` hides components per caller.
   * {@link router} and {@link serve} also serve the Protected Resource Metadata (RFC 9728) at
   * `Auth.metadataPath(auth.resource)`.
   */
  readonly auth?: Auth.ResourceServer | undefined
  /**
   * `false`: legacy requests are served without sessions (no `Mcp-Session-Id` is minted; each
   * legacy request runs in a throwaway session at the version its `MCP-Protocol-Version` header
   * names, default the newest legacy one; no standalone GET stream, no server→client requests).
   * Default `true` (the web handler's default is `false`).
   */
  readonly sessions?: boolean | undefined
}

/**
 * The default `allowedOrigins`: `http`/`https` on `localhost`, `127.0.0.1` and `[::1]`, any port.
 * Spread it to extend: `allowedOrigins: [...StreamableHttp.loopbackOrigins, "https://app.example.com"]`.
 *
 * @since 0.1.0
 * @category symbols
 */
export const loopbackOrigins: ReadonlyArray<string> = Http.loopbackOrigins

/**
 * The default `allowedHosts`: `localhost`, `127.0.0.1`, `[::1]` (any port).
 *
 * @since 0.1.0
 * @category symbols
 */
export const loopbackHosts: ReadonlyArray<string> = Http.loopbackHosts

/**
 * The endpoint handler: an `HttpServerResponse` Effect that needs the `HttpServerRequest` and the
 * per-request `Scope` (both provided by `HttpRouter`, `HttpLayerRouter` and `HttpServer`). It never
 * fails: every problem is an HTTP response.
 *
 * @since 0.1.0
 * @category models
 */
export type Handler = internalServer.Handler

/**
 * The MCP endpoint handler (POST, GET, DELETE and `405` for other methods), to mount at a path
 * of your choice: `HttpRouter.all("/mcp", handler)` or `HttpLayerRouter.add("*", "/mcp", handler)`.
 * The router (or `HttpServer`) provides `HttpServerRequest` and the per-request `Scope`.
 *
 * Building it creates the legacy session store in the current `Scope`; closing that scope ends
 * every session (in-flight legacy requests are interrupted, GET streams end). Never fails.
 *
 * @since 0.1.0
 * @category constructors
 */
export const handler: (
  server: McpServer.McpServer,
  options?: ServerOptions
) => Effect.Effect<Handler, never, Scope.Scope> = (server, options) =>
  internalServer.makeHandler(Service.internal(server), options)

/**
 * An `HttpRouter` with the endpoint at `options.path` (default `/mcp`), to combine with yours:
 * `HttpRouter.concat(appRouter, yield* StreamableHttp.router(server))`. Sessions live in the
 * current `Scope` (see {@link handler}).
 *
 * @since 0.1.0
 * @category constructors
 */
export const router = (
  server: McpServer.McpServer,
  options: ServerOptions = {}
): Effect.Effect<HttpRouter.HttpRouter, never, Scope.Scope> =>
  Effect.zipWith(
    internalServer.makeHandler(Service.internal(server), options),
    Health.makeHealthHandler,
    (h, health) => {
      const mcp = HttpRouter.all(HttpRouter.empty, options.path ?? internalServer.DEFAULT_PATH, h).pipe(
        (r) => options.healthPath === undefined ? r : HttpRouter.get(r, options.healthPath, health)
      )
      return options.auth === undefined
        ? mcp
        : mcp.pipe(HttpRouter.get(Auth.metadataPath(options.auth.resource), metadataHandler(options.auth)))
    }
  )

/**
 * The Protected Resource Metadata document (RFC 9728) as a `GET` handler, for apps that mount
 * {@link handler} themselves: mount it at `Auth.metadataPath(config.resource)`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const metadataHandler = (config: Auth.ResourceServer): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.orDie(HttpServerResponse.json(Auth.metadata(config)))

/**
 * Registers the endpoint of the `McpServer.McpServer` service (all methods at `options.path`,
 * default `/mcp`) in the app's `HttpLayerRouter`; serving is left to `HttpLayerRouter.serve`.
 * Sessions live as long as the layer. For a server value rather than the service, provide it:
 * `Layer.provide(StreamableHttp.layer(options), Layer.succeed(McpServer.McpServer, server))`, or
 * use {@link router} / {@link handler}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: ServerOptions = {}
): Layer.Layer<never, never, HttpLayerRouter.HttpRouter | McpServer.McpServer> =>
  HttpLayerRouter.use((r) =>
    Effect.flatMap(
      McpServer.McpServer,
      (server) =>
        Effect.flatMap(
          internalServer.makeHandler(Service.internal(server), options),
          (h) => r.add("*", options.path ?? internalServer.DEFAULT_PATH, h)
        )
    )
  )

/**
 * Options of {@link serve}: {@link ServerOptions} plus `port` (default `0`: a free port), `host`
 * (default `"127.0.0.1"`) and `shutdownTimeout` (how long closing waits for open responses before
 * dropping their connections, default 1 second), and the socket limits `headersTimeout` (10 s),
 * `requestTimeout` (60 s), `keepAliveTimeout` (5 s) and `writeTimeout` (60 s). When `host` is not a
 * loopback address and `allowedHosts` is not given, `allowedHosts` defaults to `"any"`
 * (`allowedOrigins` keeps its loopback default).
 *
 * @since 0.1.0
 * @category models
 */
export interface ServeOptions extends ServerOptions {
  readonly port?: number | undefined
  readonly host?: string | undefined
  readonly shutdownTimeout?: Duration.DurationInput | undefined
  /**
   * All request headers must arrive within this time of the connection's request starting, else
   * Node answers `408` and closes the connection; default 10 seconds (`Duration.infinity`: no limit).
   */
  readonly headersTimeout?: Duration.DurationInput | undefined
  /**
   * The whole request, body included, must arrive within this time, else `408` and the connection
   * closes (a slow-body client); default 60 seconds. Responses are not limited by it (an SSE
   * response may stay open).
   */
  readonly requestTimeout?: Duration.DurationInput | undefined
  /** An idle keep-alive connection is closed after this long; default 5 seconds. */
  readonly keepAliveTimeout?: Duration.DurationInput | undefined
  /**
   * A connection with response bytes waiting that the client has not read for this long is closed
   * (its request is then interrupted, as on a disconnect): a client that stops reading an SSE
   * response cannot hold it open; default 60 seconds (the stdio `writeTimeout`).
   */
  readonly writeTimeout?: Duration.DurationInput | undefined
}

/**
 * Where a standalone server listens: `url` (the endpoint, e.g. `http://127.0.0.1:54321/mcp`),
 * `host` (the bound address; `0.0.0.0` for all IPv4/IPv6 interfaces) and `port`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Address {
  readonly url: string
  readonly host: string
  readonly port: number
}

/**
 * Serves `server` on Node's `http` module until the `Scope` closes, and yields the bound
 * {@link Address}. Only `options.path` is served (other paths → `404`). Closing the scope ends
 * open `subscriptions/listen` streams (`McpServer.shutdown`) and all sessions, stops accepting,
 * waits up to `shutdownTimeout` for open responses, then closes the remaining connections.
 * The endpoint is a `node:http` request listener of its own over the same handling as
 * {@link handler} (one fiber per request, the reply written straight to Node's response); the
 * health and metadata paths go through `@effect/platform`'s `HttpServer` pipeline.
 *
 * Fails with `ServeError` when the port cannot be bound.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { McpServer } from "presa-mcp"
 * import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
 *
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const server = yield* McpServer.make({ name: "demo", version: "1.0.0" })
 *   const { url } = yield* StreamableHttp.serve(server, { port: 3000 })
 *   yield* Effect.log(`MCP on ${url}`)
 *   yield* Effect.never
 * }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const serve = (
  server: McpServer.McpServer,
  options: ServeOptions = {}
): Effect.Effect<Address, HttpServerError.ServeError, Scope.Scope> =>
  Effect.gen(function*() {
    const host = options.host ?? "127.0.0.1"
    const path = options.path ?? internalServer.DEFAULT_PATH
    const node = NodeHttp.createServer(HttpLimits.serverOptions(options))
    const http = yield* NodeHttpServer.make(() => node, { port: options.port ?? 0, host })
    yield* HttpLimits.watchWrites(node, options)
    // Runs before the listener's own finalizer (last-in first-out) and after the sessions closed:
    // stop accepting, let open responses finish for `shutdownTimeout`, then drop what is left. The
    // wait is interruptible: finalizers run uninterruptibly, and there the timeout could not cut
    // it short (a client that keeps sending on a kept-alive connection kept the server alive).
    const grace = options.shutdownTimeout ?? "1 second"
    yield* Effect.addFinalizer(() =>
      Effect.async<void>((resume) => {
        node.close(() => resume(Effect.void))
      }).pipe(
        Effect.interruptible,
        Effect.timeoutOption(grace),
        Effect.ensuring(Effect.sync(() => node.closeAllConnections()))
      )
    )
    const endpoint = yield* internalServer.makeEndpoint(Service.internal(server), {
      ...options,
      path,
      allowedHosts: options.allowedHosts ?? (Http.isLoopbackAddress(host) ? Http.loopbackHosts : "any")
    })
    // The endpoint (any method) is served by a Node listener of its own (`internal/node/
    // httpEndpoint`: one fiber per request, the response written as the request's messages come);
    // the other fixed paths go through the platform's pipeline: with `auth`, the metadata document
    // (GET), the health check; anything else is 404 with an empty body, as the router answers.
    const metadataPath = options.auth === undefined ? undefined : Auth.metadataPath(options.auth.resource)
    const metadata = options.auth === undefined ? undefined : metadataHandler(options.auth)
    const notFound = HttpServerResponse.empty({ status: 404 })
    const health = yield* Health.makeHealthHandler
    const app = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const requested = pathOf(request.url)
      if (metadata !== undefined && requested === metadataPath && request.method === "GET") return metadata
      if (requested === options.healthPath && request.method === "GET") return health
      return Effect.succeed(notFound)
    })
    const mcp = yield* NodeEndpoint.makeListener(endpoint)
    // The per-request spans of `McpServer.dispatch` are the instrumentation; the platform's own
    // HTTP tracer middleware (URL parsing and header redaction on every request) is left out.
    const others = yield* NodeHttpServer.makeHandler(app).pipe(HttpMiddleware.withTracerDisabledWhenEffect(() => true))
    const listener: NodeEndpoint.Listener = (request, response) => {
      if (pathOf(request.url ?? "/") === path) mcp(request, response)
      else others(request, response)
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => node.on("request", listener)),
      () => Effect.sync(() => node.off("request", listener))
    )
    const address = http.address
    const port = address._tag === "TcpAddress" ? address.port : 0
    const bound = address._tag === "TcpAddress" ? address.hostname : host
    const urlHost = bound === "0.0.0.0" ? "localhost" : bound.includes(":") ? `[${bound}]` : bound
    return { url: `http://${urlHost}:${port}${path}`, host: bound, port }
  })

/** A request target's path: without its query. */
const pathOf = (url: string): string => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

/**
 * The {@link Address} of the server started by {@link layerServer}.
 *
 * @since 0.1.0
 * @category models
 */
export class ServerAddress extends Context.Tag("presa-mcp/StreamableHttp/ServerAddress")<ServerAddress, Address>() {}

/**
 * {@link serve} as a Layer: serves the `McpServer.McpServer` service over HTTP while the layer
 * lives and provides its {@link ServerAddress} (port `0` picks a free one). Fails with
 * `ServeError` when the port cannot be bound. {@link serve} is the same for a server value.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerServer = (
  options: ServeOptions = {}
): Layer.Layer<ServerAddress, HttpServerError.ServeError, McpServer.McpServer> =>
  Layer.scoped(ServerAddress, Effect.flatMap(McpServer.McpServer, (server) => serve(server, options)))

// ---------------------------------------------------------------------------------------------
// client
// ---------------------------------------------------------------------------------------------

/**
 * Client options. Only `url` is required.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientOptions {
  /**
   * The MCP endpoint (e.g. `http://127.0.0.1:3000/mcp`). Every message is POSTed there; the
   * legacy standalone stream is a GET and the end of a legacy session a DELETE of it. A network
   * failure fails the request, notification or GET with `TransportError` `"Http"`.
   */
  readonly url: string | URL
  /**
   * Extra headers on every request (POST, the standalone GET, DELETE), e.g. `Authorization`, or
   * an Effect producing them, run per request (token refresh). The protocol's own headers
   * (`Accept`, `MCP-Protocol-Version`, `Mcp-Session-Id`, `Mcp-Method`, `Mcp-Name`,
   * `Mcp-Param-*`) take precedence over these. Default: none.
   */
  readonly headers?:
    | Readonly<Record<string, string>>
    | Effect.Effect<Readonly<Record<string, string>>>
    | undefined
  /**
   * The `inputSchema` of a tool by name, for the `Mcp-Param-*` headers of a modern `tools/call`
   * (MCP 2026-07-28, Transports › Streamable HTTP; SEP-2243 `x-mcp-header`). Default, and when it
   * returns `undefined`: the schemas seen in the `tools/list` responses that passed through this
   * transport. Only `string`, `integer` and `boolean` properties whose `x-mcp-header` name is an
   * RFC 9110 token are sent; absent or `null` values are omitted; values that are not plain
   * visible ASCII are sent as `=?base64?…?=`. Never fails: a tool without a known schema gets no
   * `Mcp-Param-*` headers.
   */
  readonly headerParamsFor?: ((toolName: string) => JsonRpc.JsonObject | undefined) | undefined
  /**
   * The largest message accepted from the server: bytes of a JSON response body, UTF-16 code
   * units of one SSE event; default 16 MiB (16 777 216). A larger JSON body or SSE event on a
   * request's response fails that request with `TransportError` `"Protocol"`; on the standalone
   * GET stream it ends the `sessionNotifications` streams with that error.
   */
  readonly maxMessageBytes?: number | undefined
  /**
   * `DurationInput`, default 5 seconds: the deadline of the best-effort DELETE of the legacy
   * session when the transport's Scope closes, of a legacy `notifications/cancelled` sent for an interrupted request, and
   * of reading away a response body that is not needed. Past it the step is given up, never
   * failed.
   */
  readonly closeTimeout?: Duration.DurationInput | undefined
  /**
   * OAuth 2.1 authorization (MCP 2025-11-25 and 2026-07-28, Authorization), e.g. from
   * `OAuth.make`: its `Authorization` value goes on every request (after `headers`); a `401`, or a
   * `403` with `error="insufficient_scope"`, with a Bearer challenge to a request runs
   * `onChallenge` and re-sends the request, at most `maxAttempts` times. When it fails or the
   * attempts run out, the request fails with `TransportError` `"Unauthorized"` (the
   * `OAuthError` in `cause`). Default: none (a challenge fails the request at once).
   */
  readonly auth?: OAuth.Provider | undefined
  /**
   * Resuming a legacy SSE stream whose connection ended before the stream did (MCP 2025-11-25,
   * Transports › Streamable HTTP › Resumability and Redelivery; SEP-1699 polling): a request's
   * POST stream that ends before its response, or the standalone GET stream, is reopened with a
   * GET carrying `Last-Event-ID` (the last event id it carried; a stream without ids is not
   * resumable). Each try waits the server's `retry` (ms) when it sent one, else `initialDelay`,
   * doubled after each try that brought no new event, capped at `maxDelay` (never below the
   * server's `retry`). `maxAttempts` tries in a row without a new event, a `405` (no GET
   * stream) or a `404` (the session is gone) fail the request (or end the session streams) with
   * `TransportError` `"Resume"`. An event whose id was already delivered is dropped (the last
   * 1024 ids per stream are kept). Defaults: `maxAttempts` 5, `initialDelay` 1000 ms,
   * `maxDelay` 30 000 ms; `maxAttempts: 0` turns resumption off. Modern (2026-07-28) streams are
   * never resumed: a broken one fails its request.
   */
  readonly resumption?: {
    readonly maxAttempts?: number | undefined
    readonly initialDelay?: Duration.DurationInput | undefined
    readonly maxDelay?: Duration.DurationInput | undefined
  } | undefined
}

/**
 * Options of {@link client}: {@link ClientOptions} plus what `fetch` needs.
 *
 * @since 0.1.0
 * @category models
 */
export interface FetchClientOptions extends ClientOptions {
  /** The `fetch` implementation; default `globalThis.fetch`. */
  readonly fetch?: typeof globalThis.fetch | undefined
  /** Extra `RequestInit` fields for every request (e.g. `credentials`, `keepalive`); default none. */
  readonly requestInit?: globalThis.RequestInit | undefined
}

/**
 * A client transport over the `HttpClient` in context (use {@link client} for fetch).
 *
 * Per request: POST with `Content-Type: application/json`, `Accept: application/json,
 * text/event-stream`.
 * - **modern** (the body's `_meta` names a protocol version): `MCP-Protocol-Version`,
 *   `Mcp-Method`, `Mcp-Name` (`params.name`/`params.uri`, base64-encoded when not plain ASCII),
 *   `Mcp-Param-*` (see `headerParamsFor`). Interrupting the request aborts the HTTP exchange,
 *   which is the modern cancellation;
 * - **legacy**: after an `initialize` result, its `Mcp-Session-Id` and `protocolVersion` (as
 *   `MCP-Protocol-Version`; none on a 2025-03-26 session, a revision without that header) are
 *   sent on every later message. A `404` to a request that carried the session id (unless its body is
 *   a JSON-RPC error with this request's id) drops the id, replays the stored `initialize` and
 *   `notifications/initialized`, and resends the request once; a second failure fails with
 *   `TransportError` (`Http`, 404). Interrupting a legacy request also POSTs
 *   `notifications/cancelled` (in the background).
 *
 * Responses: `application/json` → the JSON-RPC response; `text/event-stream` → parsed with
 * `@effect/experimental/Sse`, notifications go to `onNotification`, the response with this id (or
 * an id-less error) ends it (a response for another id is ignored). A JSON
 * error body on any status is the answer (its `id` null, absent or another one ⇒ given this
 * request's id; MCP 2025-11-25, Basic › Overview › Responses).
 * Fails with `TransportError`: `Http` (network failure, non-2xx without a JSON-RPC error body;
 * `status` set), `Protocol` (2xx without a response, an SSE stream without event ids ended early,
 * oversized message), `Resume` (a legacy SSE stream that ended before its response could not be
 * resumed: see `resumption`), `Closed` (once the transport's Scope closed).
 *
 * Server→client requests (legacy sessions: `sampling/createMessage`, `elicitation/create`,
 * `roots/list`, `ping`) on a request's SSE stream are answered by that request's `onRequest`,
 * else by the handler installed with `setRequestHandler`, else the default (`ping` → `{}`,
 * anything else -32601), each in its own fiber (the stream is read on meanwhile); the JSON-RPC
 * response is POSTed with the session's `Mcp-Session-Id` and `MCP-Protocol-Version`. The
 * server's `notifications/cancelled` for its request interrupts the answer.
 *
 * `sessionNotifications` (legacy): opens the session's standalone stream (GET with
 * `Accept: text/event-stream` and the session headers) and yields its notifications that no
 * request in flight takes (a progress token, a listen's subscription id, a log message name one:
 * they go to that request's `onNotification`, as over stdio); requests on it are answered as above. One GET serves every subscriber (a second GET would end the first on
 * our server: each message goes to one stream); it is closed when the last subscriber leaves.
 * Fails with `TransportError` `Protocol` before `initialize`, `Http` (with `status`, e.g. `405`)
 * when the server does not offer the stream. When the stream's connection ends, it is resumed with
 * `Last-Event-ID` (see `resumption`; the notifications it missed are replayed by a server that
 * keeps them, none delivered twice); when it cannot be, subscribers' streams end (with
 * `TransportError` `"Resume"` when the server refused it).
 *
 * `notify`: any 2xx is accepted without reading the body (MCP 2025-11-25, Transports ›
 * Streamable HTTP › Sending Messages to the Server, answers `202`); a refusal is logged, not
 * failed. Closing the transport's `Scope`: DELETE of the legacy session, best effort.
 *
 * @since 0.1.0
 * @category constructors
 */
export const clientWith: (
  options: ClientOptions
) => Effect.Effect<ClientTransport, never, Scope.Scope | HttpClient.HttpClient> = internalClient.make

/**
 * {@link clientWith} over `fetch` (`FetchHttpClient` from `@effect/platform`): needs only a
 * `Scope`, which owns the session (closing it sends the DELETE).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { JsonRpc, McpSchema } from "presa-mcp"
 * import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
 *
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const transport = yield* StreamableHttp.client({ url: "http://127.0.0.1:3000/mcp" })
 *   return yield* transport.request(JsonRpc.request(1, "server/discover", {
 *     _meta: { [McpSchema.MetaKey.protocolVersion]: "2026-07-28", [McpSchema.MetaKey.clientCapabilities]: {} }
 *   }))
 * }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const client = (options: FetchClientOptions): Effect.Effect<ClientTransport, never, Scope.Scope> =>
  internalClient.make(options).pipe(
    Effect.provide(FetchHttpClient.layer),
    options.fetch === undefined ? identity : Effect.provideService(FetchHttpClient.Fetch, options.fetch),
    options.requestInit === undefined
      ? identity
      : Effect.provideService(FetchHttpClient.RequestInit, options.requestInit)
  )

/**
 * {@link client} as a Layer providing `Transport.ClientTransport` (what `McpClient.layer` connects
 * over): the transport belongs to the Layer's Scope, and closing it ends a legacy session
 * (DELETE) and its GET stream.
 *
 * @example
 * ```ts
 * import * as Layer from "effect/Layer"
 * import { McpClient } from "presa-mcp"
 * import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
 *
 * const ClientLive = McpClient.layer().pipe(
 *   Layer.provide(StreamableHttp.layerClient({ url: "http://127.0.0.1:3000/mcp" }))
 * )
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layerClient = (options: FetchClientOptions): Layer.Layer<ClientTransport> =>
  Layer.scoped(ClientTransport, client(options))

/**
 * {@link clientWith} as a Layer providing `Transport.ClientTransport`, over the `HttpClient` the
 * Layer is given (e.g. `NodeHttpClient.layerUndici`). The transport belongs to the Layer's Scope.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerClientWith = (options: ClientOptions): Layer.Layer<ClientTransport, never, HttpClient.HttpClient> =>
  Layer.scoped(ClientTransport, clientWith(options))
