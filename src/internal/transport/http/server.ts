/**
 * The Streamable HTTP server handler (both eras on one endpoint): Origin / Host checks, POST
 * validation, era routing, JSON or SSE responses, legacy sessions. protocol.md §3.3, §16,
 * §19.2–19.7, §24.3; edge-cases EC-12, EC-14, EC-15, EC-16, EC-18, EC-27.
 * @internal
 */
import * as Headers from "@effect/platform/Headers"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberMap from "effect/FiberMap"
import * as FiberRef from "effect/FiberRef"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Auth from "../../../Auth.js"
import * as JsonRpc from "../../../JsonRpc.js"
import * as McpSchema from "../../../McpSchema.js"
import * as McpServer from "../../../McpServer.js"
import type { AuthInfo } from "../../../RequestContext.js"
import * as Core from "../../server/dispatch.js"
import * as H from "../../server/headerAgreement.js"
import * as Sessions from "./session.js"
import * as Http from "./wire.js"

const { McpError } = JsonRpc

/** Server options (documented on `StreamableHttp.ServerOptions`). */
export interface ServerOptions {
  readonly path?: `/${string}` | undefined
  readonly allowedOrigins?: ReadonlyArray<string> | "any" | undefined
  readonly allowedHosts?: ReadonlyArray<string> | "any" | undefined
  readonly maxBodyBytes?: number | undefined
  readonly maxSessions?: number | undefined
  readonly sessionIdleTimeout?: Duration.DurationInput | undefined
  readonly replayBufferSize?: number | undefined
  readonly keepAlive?: Duration.DurationInput | undefined
  /**
   * Legacy sessions: how long a server→client request (`elicitation/create`,
   * `sampling/createMessage`, `roots/list`) waits for the client's answer, default 60 seconds
   * (then the handler's `Input` call fails with -32603).
   */
  readonly clientRequestTimeout?: Duration.DurationInput | undefined
  readonly auth?: Auth.ResourceServer | undefined
  /**
   * `false`: legacy requests are served without sessions (no `Mcp-Session-Id` is minted; each
   * legacy request runs in a throwaway session at the version its `MCP-Protocol-Version` header
   * names, default the newest legacy one; no standalone GET stream, no server→client requests).
   */
  readonly sessions?: boolean | undefined
}

export const DEFAULT_PATH = "/mcp" as const
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
export const DEFAULT_MAX_SESSIONS = 10_000
export const DEFAULT_IDLE_TIMEOUT: Duration.DurationInput = "30 minutes"
export const DEFAULT_REPLAY_BUFFER = 100
export const DEFAULT_KEEP_ALIVE: Duration.DurationInput = "15 seconds"

/** The request handler: any method on the MCP path. */
export type Handler = Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  HttpServerRequest.HttpServerRequest | Scope.Scope
>

const ALLOW = "GET, POST, DELETE"

/** The version a legacy request without `MCP-Protocol-Version` is assumed to speak (protocol.md §24.3). */
const ASSUMED_VERSION = "2025-03-26"

// ---------------------------------------------------------------------------------------------
// responses
// ---------------------------------------------------------------------------------------------

const json = (
  status: number,
  message: JsonRpc.Message,
  headers: Readonly<Record<string, string>> = {}
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(JsonRpc.encode(message), {
    status,
    contentType: Http.JSON_TYPE,
    headers: Headers.fromInput(headers)
  })

/** A transport-level refusal: an id-less JSON-RPC -32600 error body. */
const refuse = (
  status: number,
  message: string,
  headers: Readonly<Record<string, string>> = {},
  data?: unknown
): HttpServerResponse.HttpServerResponse =>
  json(status, JsonRpc.failure(undefined, McpError.invalidRequest(message, data)), headers)

const empty = (status: number): HttpServerResponse.HttpServerResponse => HttpServerResponse.empty({ status })

const SSE_HEADERS = { "cache-control": "no-cache", "x-accel-buffering": "no" } as const

// ---------------------------------------------------------------------------------------------
// era routing (mirrors McpServer.dispatch, protocol.md §1.1)
// ---------------------------------------------------------------------------------------------

const isModern = (
  method: string,
  params: JsonRpc.JsonObject | undefined,
  headers: Headers.Headers
): boolean => {
  const meta = params?._meta
  if (JsonRpc.isObject(meta) && McpSchema.MetaKey.protocolVersion in meta) return true
  const version = H.getHeader(headers, H.Header.protocolVersion)
  return version !== undefined && McpSchema.isModernVersion(version) && method !== McpSchema.Method.initialize
}

const decodeCancelled = Schema.decodeUnknownOption(McpSchema.CancelledParams)

const lastEventIdOf = (headers: Headers.Headers): number | undefined => {
  const raw = H.getHeader(headers, H.Header.lastEventId)
  return raw !== undefined && /^\d{1,15}$/.test(raw) ? Number(raw) : undefined
}

// ---------------------------------------------------------------------------------------------
// the handler
// ---------------------------------------------------------------------------------------------

/** Builds the handler and its session store (owned by the current scope). */
export const makeHandler = (
  server: McpServer.McpServer,
  options: ServerOptions = {}
): Effect.Effect<Handler, never, Scope.Scope> =>
  Effect.gen(function*() {
    const allowedOrigins = options.allowedOrigins ?? Http.loopbackOrigins
    const allowedHosts = options.allowedHosts ?? Http.loopbackHosts
    const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
    const keepAlive = Duration.decode(options.keepAlive ?? DEFAULT_KEEP_ALIVE)
    const clientRequestTimeout = Duration.decode(
      options.clientRequestTimeout ?? Sessions.DEFAULT_CLIENT_REQUEST_TIMEOUT
    )
    const legacyVersions = server.versions.filter((v) => !McpSchema.isModernVersion(v))
    const store = yield* Sessions.makeStore({
      maxSessions: options.maxSessions ?? DEFAULT_MAX_SESSIONS,
      idleTimeout: Duration.decode(options.sessionIdleTimeout ?? DEFAULT_IDLE_TIMEOUT),
      replayBufferSize: Math.max(0, options.replayBufferSize ?? DEFAULT_REPLAY_BUFFER),
      feed: (core) => McpServer.sessionNotifications(server, core)
    })
    // This transport stopping ends its own open `subscriptions/listen` streams gracefully (runs
    // before the sessions close: finalizers run last-in first-out); other transports go on.
    const stopped = yield* Deferred.make<void>()
    yield* Effect.addFinalizer(() => Deferred.succeed(stopped, undefined))
    // The caller a verified token established (auth configured), for every dispatch of a request.
    const caller = FiberRef.unsafeMake<AuthInfo | undefined>(undefined)
    const dispatch = (message: unknown, options: McpServer.DispatchOptions) =>
      Effect.flatMap(
        FiberRef.get(caller),
        (auth) => McpServer.dispatch(server, message, { ...options, shutdown: stopped, auth })
      )

    const sse = (frames: Stream.Stream<string>): HttpServerResponse.HttpServerResponse =>
      HttpServerResponse.stream(
        frames.pipe(
          Stream.merge(Stream.tick(keepAlive).pipe(Stream.drop(1), Stream.as(Http.ssePing)), { haltStrategy: "left" }),
          Stream.encodeText
        ),
        { contentType: Http.SSE_TYPE, headers: Headers.fromInput(SSE_HEADERS) }
      )

    /** Looks up the legacy session named by `Mcp-Session-Id`: 404 when unknown. */
    /** A throwaway, already initialized legacy session for sessionless serving. */
    const statelessSession = (headers: Headers.Headers) =>
      Effect.gen(function*() {
        const core = yield* McpServer.makeSession
        const asked = H.getHeader(headers, H.Header.protocolVersion)
        const protocolVersion = legacyVersions.find((v) => v === asked) ?? legacyVersions[0] ?? "2025-11-25"
        yield* Ref.set(core.state, {
          protocolVersion,
          clientInfo: undefined,
          clientCapabilities: {},
          initialized: true,
          logLevel: undefined,
          subscriptions: new Set<string>()
        })
        return core
      })

    const sessionOf = (
      headers: Headers.Headers
    ): Effect.Effect<
      | { readonly _tag: "None" }
      | { readonly _tag: "Found"; readonly session: Sessions.HttpSession }
      | { readonly _tag: "Refused"; readonly response: HttpServerResponse.HttpServerResponse }
    > => {
      const id = H.getHeader(headers, H.Header.sessionId)
      if (id === undefined || id === "") return Effect.succeed({ _tag: "None" })
      return Effect.gen(function*() {
        const session = yield* store.get(id)
        if (Option.isNone(session)) {
          return { _tag: "Refused", response: refuse(404, "Not Found: unknown or terminated session") } as const
        }
        const versionError = yield* checkLegacyVersion(session.value, headers)
        if (Option.isSome(versionError)) return { _tag: "Refused", response: versionError.value } as const
        return { _tag: "Found", session: session.value } as const
      })
    }

    /**
     * EC-18: absent header (or `2025-03-26`, the value the spec assumes when it is absent) → the
     * negotiated version; anything else must equal the negotiated version (an unsupported value,
     * or a supported one that this session did not negotiate → 400).
     */
    const checkLegacyVersion = (
      session: Sessions.HttpSession,
      headers: Headers.Headers
    ): Effect.Effect<Option.Option<HttpServerResponse.HttpServerResponse>> =>
      Effect.map(Ref.get(session.core.state), (state) => {
        const requested = H.getHeader(headers, H.Header.protocolVersion)
        const negotiated = state?.protocolVersion
        // `2025-03-26` is what the spec assumes when the header is absent; some SDKs (and the
        // conformance suite 0.1.16) send it explicitly inside a session: treat it like absence.
        if (requested === undefined || requested === negotiated || requested === ASSUMED_VERSION) return Option.none()
        return Option.some(refuse(
          400,
          `Bad Request: ${H.Header.protocolVersion} '${requested}' is not this session's negotiated version '${
            negotiated ?? "none"
          }'`,
          {},
          { supported: legacyVersions, requested }
        ))
      })

    /**
     * Runs one request: the dispatch fiber writes request-scoped notifications (and, legacy,
     * server→client requests) to a mailbox and its outcome to a Deferred. A message arriving
     * before the outcome (and a client that accepts SSE) turns the response into an SSE stream;
     * otherwise the response is JSON. `write` is `undefined` when the client does not accept SSE.
     */
    const exchange = (args: {
      readonly id: JsonRpc.RequestId
      readonly sse: boolean
      readonly fork: (effect: Effect.Effect<void>) => Effect.Effect<unknown, never, Scope.Scope>
      readonly run: (
        notify: (n: JsonRpc.Notification) => Effect.Effect<void>,
        write: ((m: JsonRpc.Request | JsonRpc.Notification) => Effect.Effect<void>) | undefined
      ) => Effect.Effect<Option.Option<McpServer.Reply>>
      readonly status: (reply: McpServer.Reply) => number
    }): Effect.Effect<HttpServerResponse.HttpServerResponse, never, Scope.Scope> =>
      Effect.gen(function*() {
        const mailbox = yield* Mailbox.make<JsonRpc.Request | JsonRpc.Notification>(64)
        const outcome = yield* Deferred.make<Exit.Exit<Option.Option<McpServer.Reply>>>()
        yield* Effect.addFinalizer(() => mailbox.shutdown)
        const write = args.sse
          ? (m: JsonRpc.Request | JsonRpc.Notification) => Effect.asVoid(mailbox.offer(m))
          : undefined
        const notify = write ?? (() => Effect.void)
        yield* args.fork(
          args.run(notify, write).pipe(
            Effect.onExit((exit) => Effect.zipRight(Deferred.succeed(outcome, exit), mailbox.end)),
            Effect.asVoid
          )
        )
        const first = yield* Effect.option(mailbox.take)
        if (Option.isNone(first)) {
          const exit = yield* Deferred.await(outcome)
          if (Exit.isSuccess(exit)) {
            return Option.match(exit.value, {
              onNone: () => empty(202),
              onSome: (reply) => json(args.status(reply), reply.message)
            })
          }
          if (Cause.isInterruptedOnly(exit.cause)) return empty(204)
          yield* Effect.logError("Streamable HTTP: request failed with a defect", exit.cause)
          return json(500, JsonRpc.failure(args.id, McpError.internalError()))
        }
        const final = Effect.flatMap(Deferred.await(outcome), (exit) => {
          if (Exit.isSuccess(exit)) return Effect.succeed(Option.map(exit.value, (r) => JsonRpc.encode(r.message)))
          if (Cause.isInterruptedOnly(exit.cause)) return Effect.succeedNone
          return Effect.logError("Streamable HTTP: request failed with a defect", exit.cause).pipe(
            Effect.as(Option.some(JsonRpc.encode(JsonRpc.failure(args.id, McpError.internalError()))))
          )
        })
        return sse(
          Stream.concat(Stream.succeed(first.value), Mailbox.toStream(mailbox)).pipe(
            Stream.map((n) => JsonRpc.encode(n)),
            Stream.concat(Stream.fromEffect(final).pipe(Stream.filterMap((o) => o))),
            Stream.map((data) => Http.sseEvent(data))
          )
        )
      })

    // -- POST ------------------------------------------------------------------------------------

    const post = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const headers = request.headers
        if (Http.mediaTypeOf(headers["content-type"]) !== Http.JSON_TYPE) {
          return refuse(415, "Unsupported Media Type: Content-Type must be application/json")
        }
        const accept = Http.parseAccept(headers["accept"])
        if (!Http.accepts(accept, Http.JSON_TYPE)) {
          return refuse(406, "Not Acceptable: Accept must include application/json (and text/event-stream)")
        }
        const sseOk = Http.accepts(accept, Http.SSE_TYPE)
        const tooLarge = () =>
          refuse(413, `Payload Too Large: the limit is ${maxBodyBytes} bytes`, { connection: "close" })
        const declared = headers["content-length"]
        if (declared !== undefined && Number(declared) > maxBodyBytes) return tooLarge()
        // A declared length within the limit is read in one piece (the HTTP parser delivers that
        // many bytes; checked again below); a chunked body is counted as it streams in.
        const bytes = yield* Effect.either(
          declared !== undefined && /^\d+$/.test(declared)
            ? Effect.map(request.arrayBuffer, (b) => new Uint8Array(b))
            : Http.readBounded(request.stream, maxBodyBytes)
        )
        if (bytes._tag === "Left") {
          return bytes.left._tag === "BodyTooLarge"
            ? tooLarge()
            : refuse(400, "Bad Request: the body could not be read")
        }
        if (bytes.right.byteLength > maxBodyBytes) return tooLarge()
        const text = Http.decodeUtf8(bytes.right)
        if (Option.isNone(text)) return yield* unreadable(headers, McpError.parseError(), undefined)
        const classified = JsonRpc.parse(text.value)
        switch (classified._tag) {
          case "Invalid":
            return yield* unreadable(headers, classified.error, classified.id)
          case "Response":
            return yield* answered(headers, classified.message)
          case "Notification":
            return yield* accepted(headers, classified.message)
          case "Request":
            return yield* requestPost(classified.message, headers, sseOk)
        }
      })

    /** A 400 for a body that is not a valid request: the core's id rule, with the session if known. */
    const unreadable = (headers: Headers.Headers, error: JsonRpc.McpError, id: JsonRpc.RequestId | undefined) =>
      Effect.flatMap(
        id === undefined ? sessionOf(headers) : Effect.succeed({ _tag: "None" } as const),
        (found) =>
          Effect.map(
            Core.invalidResponse(found._tag === "Found" ? found.session.core : undefined, id, error),
            (message) => json(400, message)
          )
      )

    /** Notifications and responses: 202, no body (EC-12, EC-14, EC-27). */
    const accepted = (headers: Headers.Headers, notification: JsonRpc.Notification | undefined) =>
      Effect.gen(function*() {
        if (notification !== undefined && isModern(notification.method, notification.params, headers)) {
          const methodHeader = H.getHeader(headers, H.Header.method)
          if (methodHeader !== undefined && methodHeader !== notification.method) {
            return json(
              400,
              JsonRpc.failure(
                undefined,
                McpError.headerMismatch(
                  `Header mismatch: ${H.Header.method} header value '${methodHeader}' does not match body value '${notification.method}'`
                )
              )
            )
          }
          return empty(202)
        }
        const found = yield* sessionOf(headers)
        if (found._tag === "Refused") return found.response
        if (found._tag === "None" || notification === undefined) return empty(202)
        const session = found.session
        if (notification.method === McpSchema.Method.cancelled) {
          const params = decodeCancelled(notification.params)
          if (Option.isSome(params)) yield* FiberMap.remove(session.inflight, params.value.requestId)
          return empty(202)
        }
        yield* dispatch(notification, { session: session.core })
        return empty(202)
      })

    /**
     * A POSTed JSON-RPC response: the client's answer to a server→client request of its legacy
     * session (protocol.md §24.3, §24.4) → `202`. Unknown ids are ignored (still `202`).
     */
    const answered = (headers: Headers.Headers, response: JsonRpc.Response) =>
      Effect.gen(function*() {
        const found = yield* sessionOf(headers)
        if (found._tag === "Refused") return found.response
        if (found._tag === "Found") {
          const matched = yield* Sessions.resolve(found.session, response)
          if (!matched) {
            yield* Effect.logDebug(`Streamable HTTP: ignoring a response for unknown id ${String(response.id)}`)
          }
        }
        return empty(202)
      })

    const requestPost = (request: JsonRpc.Request, headers: Headers.Headers, sseOk: boolean) =>
      Effect.gen(function*() {
        if (isModern(request.method, request.params, headers)) {
          // Modern: stateless, Mcp-Session-Id ignored; closing the response stream cancels.
          return yield* exchange({
            id: request.id,
            sse: sseOk,
            fork: Effect.forkScoped,
            run: (notify) => dispatch(request, { headers, notify }),
            status: (reply) => reply.status
          })
        }
        if (request.method === McpSchema.Method.initialize) return yield* initialize(request, headers)
        const found = yield* sessionOf(headers)
        if (found._tag === "Refused") return found.response
        if (found._tag === "None" && options.sessions === false) {
          const core = yield* statelessSession(headers)
          const reply = yield* dispatch(request, { session: core, headers })
          return Option.match(reply, { onNone: () => empty(202), onSome: (r) => json(r.status, r.message) })
        }
        if (found._tag === "None") {
          // No session: the core answers (400 -32602 naming what is missing; `ping` works).
          const reply = yield* dispatch(request, { headers })
          return Option.match(reply, { onNone: () => empty(202), onSome: (r) => json(r.status, r.message) })
        }
        const session = found.session
        const duplicate = yield* session.lock.withPermits(1)(FiberMap.has(session.inflight, request.id))
        if (duplicate) {
          return json(
            400,
            JsonRpc.failure(request.id, McpError.invalidRequest("Invalid Request: this id is in flight"))
          )
        }
        // Legacy: the request lives in the session (a disconnect is not a cancellation; a
        // `notifications/cancelled` is). In-session JSON-RPC errors are HTTP 200: a 404 would read
        // as "session terminated" to a legacy client.
        return yield* exchange({
          id: request.id,
          sse: sseOk,
          // Checked again under the lock: a duplicate that raced past the check above runs in the
          // request's scope instead (it can neither replace nor be mistaken for the original).
          fork: (effect) =>
            session.lock.withPermits(1)(
              Effect.flatMap(
                FiberMap.has(session.inflight, request.id),
                (taken): Effect.Effect<unknown, never, Scope.Scope> =>
                  taken
                    ? Effect.forkScoped(effect)
                    : FiberMap.run(session.inflight, request.id, effect, { onlyIfMissing: true })
              )
            ),
          run: (notify, write) =>
            dispatch(request, {
              session: session.core,
              headers,
              notify,
              sendRequest: write === undefined
                ? () =>
                  Effect.fail(
                    McpError.internalError(
                      "Cannot send a request to the client: its Accept header does not admit text/event-stream"
                    )
                  )
                : Sessions.sendRequest(session, write, clientRequestTimeout)
            }),
          status: (reply) => reply.status === 404 ? 200 : reply.status
        })
      })

    const initialize = (request: JsonRpc.Request, headers: Headers.Headers) =>
      Effect.gen(function*() {
        const core = yield* McpServer.makeSession
        const reply = yield* dispatch(request, { session: core, headers })
        if (Option.isNone(reply)) return empty(202)
        const { message, status } = reply.value
        if (JsonRpc.isErrorResponse(message) || options.sessions === false) return json(status, message)
        const session = yield* store.create(core)
        if (Option.isNone(session)) {
          return json(503, JsonRpc.failure(request.id, McpError.internalError("Too many sessions; try again later")))
        }
        return json(status, message, { [H.Header.sessionId]: session.value.id })
      })

    // -- GET / DELETE ----------------------------------------------------------------------------

    const get = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const found = yield* sessionOf(request.headers)
        if (found._tag === "Refused") return found.response
        if (found._tag === "None") {
          return refuse(405, "Method Not Allowed: GET needs a legacy session", { allow: ALLOW })
        }
        if (!Http.accepts(Http.parseAccept(request.headers["accept"]), Http.SSE_TYPE)) {
          return refuse(406, "Not Acceptable: Accept must include text/event-stream")
        }
        return sse(
          store.stream(found.session, lastEventIdOf(request.headers)).pipe(
            Stream.map((item) =>
              item._tag === "Priming"
                ? Http.ssePriming(item.id)
                : Http.sseEvent(JsonRpc.encode(item.event.message), item.event.id)
            )
          )
        )
      })

    const del = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const found = yield* sessionOf(request.headers)
        if (found._tag === "Refused") return found.response
        if (found._tag === "None") {
          return refuse(405, "Method Not Allowed: DELETE needs a legacy session", { allow: ALLOW })
        }
        yield* store.close(found.session.id)
        return empty(204)
      })

    return Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const origin = request.headers["origin"]
      if (origin !== undefined && !Http.originAllowed(origin, allowedOrigins)) {
        return refuse(403, "Forbidden: Origin not allowed")
      }
      const host = request.headers["host"]
      if (host !== undefined && !Http.hostAllowed(host, allowedHosts)) {
        return refuse(403, "Forbidden: Host not allowed")
      }
      const route = (): Effect.Effect<HttpServerResponse.HttpServerResponse, never, Scope.Scope> => {
        switch (request.method) {
          case "POST":
            return post(request)
          case "GET":
            return get(request)
          case "DELETE":
            return del(request)
          default:
            return Effect.succeed(refuse(405, `Method Not Allowed: ${request.method}`, { allow: ALLOW }))
        }
      }
      const auth = options.auth
      if (auth === undefined) return yield* route()
      // Resource server (protocol.md §20): every request needs a valid bearer token (401 with a
      // challenge naming the metadata URL), and the scopes every request needs (403).
      const verified = yield* Effect.either(
        Effect.flatMap(Auth.bearer(request.headers["authorization"]), (token) => auth.verifier(token))
      )
      if (verified._tag === "Left") {
        const e = verified.left
        return refuse(401, `Unauthorized: ${e.message}`, {
          "www-authenticate": Auth.challenge(
            auth,
            e.reason === "missing" ? {} : { error: "invalid_token", description: e.message }
          )
        })
      }
      const missing = (auth.requiredScopes ?? []).filter((s) => !verified.right.scopes.includes(s))
      if (missing.length > 0) {
        return refuse(403, "Forbidden: insufficient scope", {
          "www-authenticate": Auth.challenge(auth, {
            error: "insufficient_scope",
            scopes: auth.requiredScopes ?? [],
            description: `missing scope ${missing.join(" ")}`
          })
        })
      }
      return yield* Effect.locally(route(), caller, verified.right)
    })
  })
