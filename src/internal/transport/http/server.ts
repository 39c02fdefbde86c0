/**
 * The Streamable HTTP server handler, both eras on one endpoint (MCP 2025-11-25 and 2026-07-28,
 * Basic, Transports, "Streamable HTTP"; "Security Warning": Origin and Host checks; Authorization
 * when `auth` is set). POST is `post.ts`; each request runs on a connection
 * (`server/connection.ts`): one per legacy session (the session store, `session/store.ts`), and one for
 * every request without a session of its own (2026-07-28 requests, `initialize`, sessions off).
 * @internal
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Auth from "../../../Auth.js"
import * as Cluster from "../../../Cluster.js"
import * as JsonRpc from "../../../JsonRpc.js"
import * as McpSchema from "../../../McpSchema.js"
import type { AuthInfo } from "../../../RequestContext.js"
import type { ServerOptions } from "../../../transport/StreamableHttp.js"
import * as ClientRequests from "../../server/clientRequests.js"
import * as Connection from "../../server/connection.js"
import type * as Dispatch from "../../server/dispatch.js"
import * as HeaderRules from "../../server/headerAgreement.js"
import { post } from "./post.js"
import { ALLOW, type Answer, empty, exchange, isSent, refuse, sse } from "./responses.js"
import * as PostStream from "./session/postStream.js"
import * as Sessions from "./session/store.js"
import { type EndpointRequest, type HandlerState, sessionOf } from "./state.js"
import * as Http from "./wire.js"

export type { ServerOptions }

export const DEFAULT_PATH = "/mcp" as const
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
export const DEFAULT_MAX_SESSIONS = 10_000
export const DEFAULT_IDLE_TIMEOUT: Duration.DurationInput = "30 minutes"
export const DEFAULT_INITIALIZE_TIMEOUT: Duration.DurationInput = "30 seconds"
export const DEFAULT_REPLAY_BUFFER = 100
export const DEFAULT_KEEP_ALIVE: Duration.DurationInput = "15 seconds"
export const DEFAULT_CLIENT_REQUEST_TIMEOUT: Duration.DurationInput = ClientRequests.DEFAULT_TIMEOUT
export const DEFAULT_MAX_STATELESS_IN_FLIGHT = Connection.DEFAULT_MAX_IN_FLIGHT
export const DEFAULT_MAX_STATELESS_QUEUED = Connection.DEFAULT_MAX_QUEUED

/** The request handler: any method on the MCP path. */
export type Handler = Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  HttpServerRequest.HttpServerRequest | Scope.Scope
>

/**
 * The endpoint: one request (any method) in, its answer out. It needs what the request's exchange
 * needs (`EndpointRequest`'s `R`): a `Scope` on the platform path, nothing on Node's.
 */
export type Endpoint = <R>(request: EndpointRequest<R>) => Effect.Effect<Answer, never, R>

/** Builds the platform handler and its session store (owned by the current scope). */
export const makeHandler = (
  server: Dispatch.Server,
  options: ServerOptions = {}
): Effect.Effect<Handler, never, Scope.Scope> =>
  Effect.map(makeEndpoint(server, options), (endpoint) =>
    Effect.flatMap(
      HttpServerRequest.HttpServerRequest,
      (request) => Effect.map(endpoint(fromPlatform(request)), (answer) => isSent(answer) ? notSent : answer)
    ))

/** The platform's exchange never answers `Sent`; were it to, the client gets a 500. */
const notSent = empty(500)

/**
 * The platform's request as the endpoint reads it: the body through the platform (the whole
 * body, or its stream counted), responses built as values (`responses.ts` `exchange`).
 */
const fromPlatform = (request: HttpServerRequest.HttpServerRequest): EndpointRequest<Scope.Scope> => ({
  method: request.method,
  headers: request.headers,
  remoteAddress: Option.getOrUndefined(request.remoteAddress),
  body: Effect.map(request.arrayBuffer, (b) => new Uint8Array(b)),
  bodyBounded: (maxBytes, discardBytes) => Http.readBounded(request.stream, maxBytes, discardBytes),
  exchange
})

/** Builds the endpoint and its session store (owned by the current scope). */
export const makeEndpoint = (
  server: Dispatch.Server,
  options: ServerOptions = {}
): Effect.Effect<Endpoint, never, Scope.Scope> =>
  Effect.gen(function*() {
    // This transport stopping ends its own open `subscriptions/listen` streams gracefully (runs
    // before the sessions close: finalizers run last-in first-out); other transports go on.
    const stopped = yield* Deferred.make<void>()
    const shared = yield* Effect.serviceOption(Cluster.SessionStore)
    const events = yield* Effect.serviceOption(Cluster.EventStore)
    const store = yield* Sessions.makeStore({
      server,
      shared: Option.getOrUndefined(shared),
      events: Option.getOrUndefined(events),
      maxSessions: options.maxSessions ?? DEFAULT_MAX_SESSIONS,
      idleTimeout: Duration.decode(options.sessionIdleTimeout ?? DEFAULT_IDLE_TIMEOUT),
      initializeTimeout: Duration.decode(options.sessionInitializeTimeout ?? DEFAULT_INITIALIZE_TIMEOUT),
      replayBufferSize: Math.max(0, options.replayBufferSize ?? DEFAULT_REPLAY_BUFFER),
      connection: {
        duplicateIds: "reject",
        maxInFlight: options.maxInFlight,
        maxQueued: options.maxQueued,
        clientRequestTimeout: options.clientRequestTimeout ?? DEFAULT_CLIENT_REQUEST_TIMEOUT,
        stopped,
        peer: { transport: "tcp", protocolName: "http" }
      }
    })
    // Every request without a legacy session of its own, under one bound (`503` beyond it); ids
    // of different clients may be equal, and no message names one of these requests. Each runs
    // in its response's fiber (`inline`), which owns it: the connection needs no Scope.
    const stateless = yield* Connection.makeUnscoped(server, {
      duplicateIds: "allow",
      maxInFlight: options.maxStatelessInFlight ?? DEFAULT_MAX_STATELESS_IN_FLIGHT,
      maxQueued: options.maxStatelessQueued ?? DEFAULT_MAX_STATELESS_QUEUED,
      overflow: "reject",
      stopped,
      peer: { transport: "tcp", protocolName: "http" }
    })
    yield* Effect.addFinalizer(() => Deferred.succeed(stopped, undefined))
    const state: HandlerState = {
      server,
      store,
      stateless,
      stopped,
      sessions: options.sessions !== false,
      maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      keepAlive: Duration.decode(options.keepAlive ?? DEFAULT_KEEP_ALIVE),
      allowedOrigins: options.allowedOrigins ?? Http.loopbackOrigins,
      allowedHosts: options.allowedHosts ?? Http.loopbackHosts,
      legacyVersions: server.versions.filter((v) => !McpSchema.isModernVersion(v))
    }
    const auth = options.auth
    return <R>(request: EndpointRequest<R>) => handle(state, auth, request)
  })

const handle = <R>(
  state: HandlerState,
  auth: Auth.ResourceServer | undefined,
  request: EndpointRequest<R>
): Effect.Effect<Answer, never, R> => {
  const origin = Http.header(request.headers, "origin")
  if (origin !== undefined && !Http.originAllowed(origin, state.allowedOrigins)) {
    return Effect.succeed(refuse(403, "Forbidden: Origin not allowed"))
  }
  const host = Http.header(request.headers, "host")
  if (host !== undefined && !Http.hostAllowed(host, state.allowedHosts)) {
    return Effect.succeed(refuse(403, "Forbidden: Host not allowed"))
  }
  return auth === undefined
    ? route(state, request, undefined)
    : Effect.flatMap(
      authorize(auth, request),
      (verified) =>
        verified._tag === "Refused" ? Effect.succeed(verified.response) : route(state, request, verified.caller)
    )
}

const route = <R>(
  state: HandlerState,
  request: EndpointRequest<R>,
  caller: AuthInfo | undefined
): Effect.Effect<Answer, never, R> => {
  switch (request.method) {
    case "POST":
      return post(state, request, caller)
    case "GET":
      return get(state, request)
    case "DELETE":
      return del(state, request)
    default:
      return Effect.succeed(refuse(405, `Method Not Allowed: ${request.method}`, { allow: ALLOW }))
  }
}

/**
 * Resource server (MCP 2025-11-25, Basic, Authorization): every request needs a valid bearer
 * token (401 with a challenge naming the metadata URL), and the scopes every request needs (403).
 */
const authorize = <R>(
  auth: Auth.ResourceServer,
  request: EndpointRequest<R>
): Effect.Effect<
  | { readonly _tag: "Verified"; readonly caller: AuthInfo }
  | { readonly _tag: "Refused"; readonly response: HttpServerResponse.HttpServerResponse }
> =>
  Effect.map(
    Effect.either(
      Effect.flatMap(Auth.bearer(Http.header(request.headers, "authorization")), (token) => auth.verifier(token))
    ),
    (verified) => {
      if (verified._tag === "Left") {
        const e = verified.left
        return {
          _tag: "Refused",
          response: refuse(401, `Unauthorized: ${e.message}`, {
            "www-authenticate": Auth.challenge(
              auth,
              e.reason === "missing" ? {} : { error: "invalid_token", description: e.message }
            )
          })
        } as const
      }
      const missing = (auth.requiredScopes ?? []).filter((s) => !verified.right.scopes.includes(s))
      if (missing.length === 0) return { _tag: "Verified", caller: verified.right } as const
      return {
        _tag: "Refused",
        response: refuse(403, "Forbidden: insufficient scope", {
          "www-authenticate": Auth.challenge(auth, {
            error: "insufficient_scope",
            scopes: auth.requiredScopes ?? [],
            description: `missing scope ${missing.join(" ")}`
          })
        })
      } as const
    }
  )

/**
 * GET: the legacy session's standalone SSE stream ("Listening for Messages from the Server"), or,
 * with the `Last-Event-ID` of a request's POST stream, that stream's continuation ("Resumability
 * and Redelivery": `session/postStream.ts`). A `Last-Event-ID` this server cannot have issued
 * replays nothing: the standalone stream opens.
 */
const get = <R>(state: HandlerState, request: EndpointRequest<R>) =>
  Effect.gen(function*() {
    const found = yield* sessionOf(state, request.headers)
    if (found._tag === "Refused") return found.response
    if (found._tag === "None") {
      return refuse(405, "Method Not Allowed: GET needs a legacy session", { allow: ALLOW })
    }
    if (!Http.accepts(Http.parseAccept(Http.header(request.headers, "accept")), Http.SSE_TYPE)) {
      return refuse(406, "Not Acceptable: Accept must include text/event-stream")
    }
    const last = PostStream.parseLastEventId(HeaderRules.getHeader(request.headers, HeaderRules.Header.lastEventId))
    if (last._tag === "Post") return sse(state.store.follow(found.session, last.key, last.id), state.keepAlive)
    return sse(
      state.store.stream(found.session, last._tag === "Standalone" ? last.id : undefined).pipe(
        Stream.map((item) =>
          item._tag === "Priming"
            ? Http.ssePriming(item.id)
            : Http.sseEvent(JsonRpc.encode(item.event.message), item.event.id)
        )
      ),
      state.keepAlive
    )
  })

/** DELETE: ends the legacy session ("Session Management"). */
const del = <R>(state: HandlerState, request: EndpointRequest<R>) =>
  Effect.gen(function*() {
    const found = yield* sessionOf(state, request.headers)
    if (found._tag === "Refused") return found.response
    if (found._tag === "None") {
      return refuse(405, "Method Not Allowed: DELETE needs a legacy session", { allow: ALLOW })
    }
    yield* state.store.close(found.session.id)
    return empty(204)
  })
