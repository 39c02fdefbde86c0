/**
 * The Streamable HTTP client transport: one POST per message, JSON or SSE responses, modern
 * request headers (SEP-2243), legacy session bookkeeping and 404 recovery. protocol.md §1.2,
 * §19.2–19.5, §24.3; edge-cases EC-14, EC-15, EC-18, EC-28.
 * @internal
 */
import * as Sse from "@effect/experimental/Sse"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberMap from "effect/FiberMap"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Take from "effect/Take"
import * as JsonRpc from "../../../JsonRpc.js"
import * as McpSchema from "../../../McpSchema.js"
import { type ClientTransport, type RequestHandler, type RequestOptions, TransportError } from "../../../Transport.js"
import { withTimeout } from "../../client/deadline.js"
import { makeRequestHandlers } from "../../client/requestHandlers.js"
import * as H from "../../server/headerAgreement.js"
import * as Http from "./wire.js"

/** Client options (documented on `StreamableHttp.ClientOptions`). */
export interface ClientOptions {
  readonly url: string | URL
  readonly headers?:
    | Readonly<Record<string, string>>
    | Effect.Effect<Readonly<Record<string, string>>>
    | undefined
  readonly headerParamsFor?: ((toolName: string) => JsonRpc.JsonObject | undefined) | undefined
  readonly maxMessageBytes?: number | undefined
  readonly closeTimeout?: Duration.DurationInput | undefined
}

export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
export const DEFAULT_CLOSE_TIMEOUT: Duration.DurationInput = "5 seconds"

const ACCEPT = `${Http.JSON_TYPE}, ${Http.SSE_TYPE}`
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

interface State {
  /** Legacy: the session id the server gave on `initialize`. */
  readonly sessionId: string | undefined
  /** Legacy: the version negotiated by `initialize`. */
  readonly protocolVersion: string | undefined
  /** Legacy: the `initialize` request, replayed when the session expires (EC-15). */
  readonly init: JsonRpc.Request | undefined
  /** Modern: the last version a request carried (sent with notifications). */
  readonly modernVersion: string | undefined
  readonly closed: boolean
}

/** The legacy standalone GET stream, shared by every `sessionNotifications` subscriber. */
interface Hub {
  readonly pubsub: PubSub.PubSub<Take.Take<JsonRpc.Notification, TransportError>>
  readonly scope: Scope.CloseableScope
  readonly response: HttpClientResponse.HttpClientResponse
  readonly users: Ref.Ref<number>
  /** Set when the GET stream ended: the next subscriber opens a new one. */
  readonly done: Ref.Ref<boolean>
}

type Outcome =
  | { readonly _tag: "Response"; readonly response: JsonRpc.Response; readonly sessionId: string | undefined }
  | { readonly _tag: "SessionGone" }

/** The auth-params of a `WWW-Authenticate: Bearer k="v", …` challenge (RFC 6750 §3). */
const bearerParams = (header: string): Readonly<Record<string, string | undefined>> => {
  const out: Record<string, string> = {}
  for (const m of header.matchAll(/([A-Za-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g)) {
    const key = m[1]
    if (key !== undefined) out[key] = (m[2] ?? m[3] ?? "").replace(/\\(.)/g, "$1")
  }
  return out
}

const http404 = (message: string) => new TransportError({ reason: "Http", status: 404, message })

const modernVersionOf = (message: JsonRpc.Request | JsonRpc.Notification): string | undefined => {
  const meta = message.params?._meta
  if (!JsonRpc.isObject(meta)) return undefined
  const v = meta[McpSchema.MetaKey.protocolVersion]
  return typeof v === "string" ? v : undefined
}

const valueAt = (args: unknown, path: ReadonlyArray<string>): unknown => {
  let cur = args
  for (const k of path) {
    if (!JsonRpc.isObject(cur)) return undefined
    cur = cur[k]
  }
  return cur
}

/** `Mcp-Param-*` headers for a `tools/call` (protocol.md §19.5): only valid annotations, values present. */
export const paramHeaders = (
  params: JsonRpc.JsonObject | undefined,
  inputSchema: JsonRpc.JsonObject
): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const p of H.headerParams(inputSchema)) {
    if (!TOKEN.test(p.header)) continue
    const value = valueAt(params?.arguments, p.path)
    const encoded = p.type === "string" && typeof value === "string"
      ? H.encodeHeaderValue(value)
      : p.type === "integer" && typeof value === "number" && Number.isSafeInteger(value)
      ? String(value)
      : p.type === "boolean" && typeof value === "boolean"
      ? String(value)
      : undefined
    if (encoded !== undefined) out[H.Header.paramPrefix + p.header] = encoded
  }
  return out
}

/** Parses an SSE byte stream with `@effect/experimental/Sse` (events bounded in UTF-16 code units; `retry` ignored). */
export const sseEvents = <E>(
  bytes: Stream.Stream<Uint8Array, E>,
  maxEventSize: number
): Stream.Stream<Sse.Event, E | TransportError> =>
  Stream.suspend(() => {
    let pending: Array<Sse.Event> = []
    const parser = Sse.makeParser((event) => {
      if (event._tag === "Event") pending.push(event)
    }, { maxEventSize })
    return bytes.pipe(
      Stream.decodeText(),
      Stream.mapEffect((chunk) => {
        const error = parser.feed(chunk)
        const out = pending
        pending = []
        if (error !== undefined) {
          return Effect.fail(new TransportError({ reason: "Protocol", message: error.message, cause: error }))
        }
        // The parser bounds what it buffers across chunks; an event complete within one chunk is
        // checked here.
        return out.some((e) => e.data.length > maxEventSize)
          ? Effect.fail(
            new TransportError({ reason: "Protocol", message: `SSE event larger than ${maxEventSize} characters` })
          )
          : Effect.succeed(out)
      }),
      Stream.flattenIterables
    )
  })

/** A response body's error reply is this request's answer (EC-28: `id` null, absent or foreign). */
const attribute = (response: JsonRpc.Response, id: JsonRpc.RequestId): JsonRpc.Response =>
  JsonRpc.isErrorResponse(response) ? { jsonrpc: "2.0", id, error: response.error } : response

export const make = (
  options: ClientOptions
): Effect.Effect<ClientTransport, never, Scope.Scope | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const scope = yield* Effect.scope
    const url = String(options.url)
    const maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
    const closeTimeout = options.closeTimeout ?? DEFAULT_CLOSE_TIMEOUT
    const state = yield* Ref.make<State>({
      sessionId: undefined,
      protocolVersion: undefined,
      init: undefined,
      modernVersion: undefined,
      closed: false
    })
    const schemas = yield* Ref.make(HashMap.empty<string, JsonRpc.JsonObject>())
    const recovering = yield* Effect.makeSemaphore(1)
    const handlers = yield* makeRequestHandlers(undefined)
    // Server→client requests being answered, by the server's id (its notifications/cancelled
    // interrupts the answer).
    const serverRequests = yield* FiberMap.make<JsonRpc.RequestId>()
    const hub = yield* Ref.make(Option.none<Hub>())
    const hubLock = yield* Effect.makeSemaphore(1)

    const userHeaders: Effect.Effect<Readonly<Record<string, string>>> = Effect.suspend(() => {
      const h = options.headers
      if (h === undefined) return Effect.succeed({})
      return Effect.isEffect(h) ? h : Effect.succeed(h)
    })

    const transportError = (what: string) => (cause: { readonly message: string }) =>
      new TransportError({ reason: "Http", message: `${what} ${url} failed: ${cause.message}`, cause })

    const protocolHeaders = (
      message: JsonRpc.Request | JsonRpc.Notification,
      st: State
    ): Effect.Effect<Record<string, string>> =>
      Effect.gen(function*() {
        const version = modernVersionOf(message)
        if (version !== undefined) {
          const out: Record<string, string> = {
            [H.Header.protocolVersion]: version,
            [H.Header.method]: message.method
          }
          const name = H.nameOf(message.method, message.params)
          if (name !== undefined) out[H.Header.name] = H.encodeHeaderValue(name)
          if (message.method === McpSchema.Method.toolsCall && name !== undefined) {
            const schema = options.headerParamsFor?.(name) ??
              Option.getOrUndefined(HashMap.get(yield* Ref.get(schemas), name))
            if (schema !== undefined) Object.assign(out, paramHeaders(message.params, schema))
          }
          return out
        }
        if (message.method === McpSchema.Method.initialize) return {}
        if (st.sessionId !== undefined || st.protocolVersion !== undefined) {
          return {
            ...(st.sessionId === undefined ? {} : { [H.Header.sessionId]: st.sessionId }),
            ...(st.protocolVersion === undefined ? {} : { [H.Header.protocolVersion]: st.protocolVersion })
          }
        }
        if (!("id" in message) && st.modernVersion !== undefined) {
          return { [H.Header.protocolVersion]: st.modernVersion, [H.Header.method]: message.method }
        }
        return {}
      })

    const post = (message: JsonRpc.Message, extra: Readonly<Record<string, string>>) =>
      Effect.gen(function*() {
        const request = HttpClientRequest.post(url).pipe(
          HttpClientRequest.setHeaders({ ...(yield* userHeaders), ...extra, accept: ACCEPT }),
          HttpClientRequest.bodyText(JsonRpc.encode(message), Http.JSON_TYPE)
        )
        return yield* Effect.mapError(http.execute(request), transportError("POST"))
      })

    /** Reads and discards a body we do not need (frees the connection); bounded in time. */
    const drain = (response: HttpClientResponse.HttpClientResponse) =>
      Stream.runDrain(response.stream).pipe(Effect.timeout(closeTimeout), Effect.ignore)

    /** Legacy session headers (for answers to server requests and the GET stream). */
    const sessionHeaders = (st: State): Record<string, string> => ({
      ...(st.sessionId === undefined ? {} : { [H.Header.sessionId]: st.sessionId }),
      ...(st.protocolVersion === undefined ? {} : { [H.Header.protocolVersion]: st.protocolVersion })
    })

    /**
     * A server→client request (legacy, protocol.md §24.3/§24.4): answered in its own fiber (the
     * SSE stream is read on meanwhile) and the response POSTed with the session headers.
     */
    const answerServer = (request: JsonRpc.Request, preferred: RequestHandler | undefined): Effect.Effect<void> =>
      FiberMap.run(
        serverRequests,
        request.id,
        Effect.gen(function*() {
          const response = yield* handlers.answer(request, preferred)
          const st = yield* Ref.get(state)
          if (st.closed) return
          const reply = yield* post(response, sessionHeaders(st))
          yield* drain(reply)
          if (reply.status < 200 || reply.status >= 300) {
            yield* Effect.logWarning(
              `Streamable HTTP: the server refused our answer to ${request.method} with HTTP ${reply.status}`
            )
          }
        }).pipe(
          Effect.catchAll((e) => Effect.logWarning(`Streamable HTTP: could not answer ${request.method}: ${e.message}`))
        ),
        { onlyIfMissing: true }
      ).pipe(Effect.asVoid)

    /** The server's `notifications/cancelled` for one of its own requests stops our answer. */
    const serverCancelled = (notification: JsonRpc.Notification): Effect.Effect<void> => {
      const requestId = notification.params?.requestId
      return notification.method === McpSchema.Method.cancelled && JsonRpc.isRequestId(requestId)
        ? FiberMap.remove(serverRequests, requestId)
        : Effect.void
    }

    const readSse = (
      response: HttpClientResponse.HttpClientResponse,
      id: JsonRpc.RequestId,
      requestOptions: RequestOptions | undefined
    ): Effect.Effect<JsonRpc.Response, TransportError> =>
      sseEvents(Stream.mapError(response.stream, transportError("reading the SSE stream of")), maxBytes).pipe(
        Stream.mapEffect((event): Effect.Effect<Option.Option<JsonRpc.Response>> => {
          if (event.data.trim() === "") return Effect.succeedNone
          const c = JsonRpc.parse(event.data)
          switch (c._tag) {
            case "Notification": {
              const deliver = requestOptions?.onNotification
              return Effect.zipRight(
                serverCancelled(c.message),
                deliver === undefined ? Effect.void : deliver(c.message)
              ).pipe(Effect.as(Option.none()))
            }
            case "Response": {
              const r = c.message
              if (r.id === id || (JsonRpc.isErrorResponse(r) && r.id === undefined)) {
                return Effect.succeed(Option.some(attribute(r, id)))
              }
              return Effect.as(Effect.logDebug(`Streamable HTTP: ignoring a response for id ${r.id}`), Option.none())
            }
            case "Request":
              return Effect.as(answerServer(c.message, requestOptions?.onRequest), Option.none())
            case "Invalid":
              return Effect.as(Effect.logWarning("Streamable HTTP: ignoring an invalid SSE message"), Option.none())
          }
        }),
        Stream.filterMap((o) => o),
        Stream.runHead,
        Effect.flatMap(Option.match({
          onNone: () =>
            Effect.fail(
              new TransportError({ reason: "Protocol", message: "the SSE stream ended before the response" })
            ),
          onSome: Effect.succeed
        }))
      )

    /** One POST of a request; classifies what came back. */
    const send = (
      message: JsonRpc.Request,
      st: State,
      requestOptions: RequestOptions | undefined
    ): Effect.Effect<Outcome, TransportError> =>
      Effect.gen(function*() {
        const extra = yield* protocolHeaders(message, st)
        const sentSession = extra[H.Header.sessionId] !== undefined
        const response = yield* post(message, extra)
        const status = response.status
        const ok = status >= 200 && status < 300
        const sessionId = response.headers[H.Header.sessionId.toLowerCase()]
        if (ok && Http.mediaTypeOf(response.headers["content-type"]) === Http.SSE_TYPE) {
          return {
            _tag: "Response",
            response: yield* readSse(response, message.id, requestOptions),
            sessionId
          } as const
        }
        const bytes = yield* Http.readBounded(
          Stream.mapError(response.stream, transportError("reading the response of")),
          maxBytes
        ).pipe(
          Effect.catchTag("BodyTooLarge", (e) =>
            Effect.fail(
              new TransportError({ reason: "Protocol", status, message: `response larger than ${e.limitBytes} bytes` })
            ))
        )
        const text = Option.getOrElse(Http.decodeUtf8(bytes), () => "")
        const authenticate = response.headers["www-authenticate"]
        if ((status === 401 || status === 403) && authenticate !== undefined && /^\s*Bearer\b/i.test(authenticate)) {
          const params = bearerParams(authenticate)
          return yield* new TransportError({
            reason: "Unauthorized",
            status,
            message: `HTTP ${status} for ${message.method}: ${params.error ?? "a bearer token is required"}`,
            challenge: {
              resourceMetadata: params.resource_metadata,
              scopes: params.scope === undefined ? [] : params.scope.split(" ").filter((s) => s.length > 0),
              error: params.error
            }
          })
        }
        const parsed = text.trim() === "" ? undefined : JsonRpc.parse(text)
        const reply = parsed?._tag === "Response" ? parsed.message : undefined
        const ownError = reply !== undefined && JsonRpc.isErrorResponse(reply) && reply.id === message.id
        if (status === 404 && sentSession && !ownError) return { _tag: "SessionGone" } as const
        if (reply !== undefined && (JsonRpc.isErrorResponse(reply) || reply.id === message.id)) {
          return { _tag: "Response", response: attribute(reply, message.id), sessionId } as const
        }
        return yield* new TransportError({
          reason: ok ? "Protocol" : "Http",
          status,
          message: ok
            ? `HTTP ${status} without a JSON-RPC response to ${message.method}`
            : `HTTP ${status} for ${message.method}${text === "" ? "" : `: ${text.slice(0, 200)}`}`
        })
      })

    /** Bookkeeping after a response: legacy session, learned tool schemas, modern version. */
    const observe = (message: JsonRpc.Request, outcome: Outcome) =>
      Effect.gen(function*() {
        if (outcome._tag !== "Response" || JsonRpc.isErrorResponse(outcome.response)) return
        const result = outcome.response.result
        const version = modernVersionOf(message)
        if (version !== undefined) yield* Ref.update(state, (s) => ({ ...s, modernVersion: version }))
        if (message.method === McpSchema.Method.initialize && version === undefined) {
          const negotiated = typeof result.protocolVersion === "string" ? result.protocolVersion : undefined
          yield* Ref.update(state, (s) => ({
            ...s,
            sessionId: outcome.sessionId,
            protocolVersion: negotiated,
            init: message
          }))
        }
        if (message.method === McpSchema.Method.toolsList) {
          const tools: ReadonlyArray<unknown> = Array.isArray(result.tools) ? result.tools : []
          yield* Ref.update(schemas, (m) => {
            let next = m
            for (const t of tools) {
              if (JsonRpc.isObject(t) && typeof t.name === "string" && JsonRpc.isObject(t.inputSchema)) {
                next = HashMap.set(next, t.name, t.inputSchema)
              }
            }
            return next
          })
        }
      })

    const notify = (message: JsonRpc.Notification): Effect.Effect<void, TransportError> =>
      Effect.gen(function*() {
        const st = yield* Ref.get(state)
        if (st.closed) return yield* new TransportError({ reason: "Closed", message: "the transport is closed" })
        const response = yield* post(message, yield* protocolHeaders(message, st))
        yield* drain(response)
        if (response.status < 200 || response.status >= 300) {
          yield* Effect.logWarning(`Streamable HTTP: the server refused ${message.method} with HTTP ${response.status}`)
        }
      })

    /** EC-15: drop the stale session, replay `initialize` + `notifications/initialized` once. */
    const recover = (stale: string): Effect.Effect<void, TransportError> =>
      recovering.withPermits(1)(Effect.gen(function*() {
        const st = yield* Ref.get(state)
        if (st.sessionId !== stale) return
        if (st.init === undefined) return yield* http404("the session expired and there is no initialize to replay")
        const cleared = yield* Ref.updateAndGet(
          state,
          (s) => ({ ...s, sessionId: undefined, protocolVersion: undefined })
        )
        const outcome = yield* send(st.init, cleared, undefined)
        if (outcome._tag !== "Response" || JsonRpc.isErrorResponse(outcome.response)) {
          return yield* http404("the session expired and re-initialization failed")
        }
        yield* observe(st.init, outcome)
        yield* notify(JsonRpc.notification(McpSchema.Method.initialized))
      }))

    /** Legacy cancellation is a notification, not a disconnect (protocol.md §24.3). */
    const cancelLegacy = (message: JsonRpc.Request, st: State) =>
      st.sessionId === undefined || message.method === McpSchema.Method.initialize ||
        modernVersionOf(message) !== undefined
        ? Effect.void
        : notify(JsonRpc.notification(McpSchema.Method.cancelled, { requestId: message.id, reason: "interrupted" }))
          .pipe(
            Effect.timeout(closeTimeout),
            Effect.catchAll((e) => Effect.logDebug(`Streamable HTTP: could not send notifications/cancelled: ${e}`)),
            Effect.forkIn(scope),
            Effect.asVoid
          )

    const request = (
      message: JsonRpc.Request,
      requestOptions?: RequestOptions
    ): Effect.Effect<JsonRpc.Response, TransportError> =>
      withTimeout(
        exchange(message, requestOptions),
        message.method,
        requestOptions?.timeout
      )

    const exchange = (
      message: JsonRpc.Request,
      requestOptions?: RequestOptions
    ): Effect.Effect<JsonRpc.Response, TransportError> =>
      Effect.gen(function*() {
        const st = yield* Ref.get(state)
        if (st.closed) return yield* new TransportError({ reason: "Closed", message: "the transport is closed" })
        let outcome = yield* send(message, st, requestOptions).pipe(Effect.onInterrupt(() => cancelLegacy(message, st)))
        if (outcome._tag === "SessionGone" && st.sessionId !== undefined) {
          yield* recover(st.sessionId)
          const renewed = yield* Ref.get(state)
          outcome = yield* send(message, renewed, requestOptions).pipe(
            Effect.onInterrupt(() => cancelLegacy(message, renewed))
          )
        }
        if (outcome._tag === "SessionGone") {
          return yield* http404("the session was not found, even after re-initialization")
        }
        yield* observe(message, outcome)
        return outcome.response
      })

    // -- legacy standalone GET stream (protocol.md §24.3) ---------------------------------------

    const openHub: Effect.Effect<Hub, TransportError> = Effect.gen(function*() {
      const st = yield* Ref.get(state)
      if (st.closed) return yield* new TransportError({ reason: "Closed", message: "the transport is closed" })
      if (st.sessionId === undefined && st.protocolVersion === undefined) {
        return yield* new TransportError({
          reason: "Protocol",
          message: "the standalone SSE stream needs a legacy session (initialize first)"
        })
      }
      const scope = yield* Scope.make()
      const response = yield* http.execute(
        HttpClientRequest.get(url).pipe(
          HttpClientRequest.setHeaders({ ...(yield* userHeaders), ...sessionHeaders(st), accept: Http.SSE_TYPE })
        )
      ).pipe(
        Effect.mapError(transportError("GET")),
        Effect.onError(() => Scope.close(scope, Exit.void))
      )
      const ok = response.status >= 200 && response.status < 300
      if (!ok || Http.mediaTypeOf(response.headers["content-type"]) !== Http.SSE_TYPE) {
        yield* drain(response)
        yield* Scope.close(scope, Exit.void)
        return yield* new TransportError({
          reason: ok ? "Protocol" : "Http",
          status: response.status,
          message: ok
            ? "the standalone GET did not answer with text/event-stream"
            : `HTTP ${response.status} for the standalone GET (the server may not offer it)`
        })
      }
      return {
        pubsub: yield* PubSub.unbounded<Take.Take<JsonRpc.Notification, TransportError>>(),
        scope,
        response,
        users: yield* Ref.make(0),
        done: yield* Ref.make(false)
      }
    })

    /** The GET stream; a 404 for our session (it expired, the server restarted) re-initializes first (EC-15). */
    const openHubRecovering: Effect.Effect<Hub, TransportError> = Effect.gen(function*() {
      const stale = (yield* Ref.get(state)).sessionId
      return yield* openHub.pipe(
        Effect.catchIf(
          (e) => e.status === 404 && stale !== undefined,
          () => Effect.zipRight(recover(stale ?? ""), openHub)
        )
      )
    })

    const runHub = (h: Hub): Effect.Effect<void> =>
      sseEvents(Stream.mapError(h.response.stream, transportError("reading the standalone SSE stream of")), maxBytes)
        .pipe(
          Stream.runForEach((event): Effect.Effect<void> => {
            if (event.data.trim() === "") return Effect.void
            const c = JsonRpc.parse(event.data)
            switch (c._tag) {
              case "Notification":
                return Effect.zipRight(serverCancelled(c.message), PubSub.publish(h.pubsub, Take.of(c.message)))
              case "Request":
                return answerServer(c.message, undefined)
              case "Response":
                return Effect.logDebug("Streamable HTTP: ignoring a response on the standalone stream")
              case "Invalid":
                return Effect.logWarning("Streamable HTTP: ignoring an invalid message on the standalone stream")
            }
          }),
          Effect.exit,
          Effect.flatMap((exit) =>
            Effect.zipRight(
              Ref.set(h.done, true),
              PubSub.publish(h.pubsub, Exit.isSuccess(exit) ? Take.end : Take.failCause(exit.cause))
            )
          ),
          Effect.asVoid
        )

    const release = (h: Hub): Effect.Effect<void> =>
      hubLock.withPermits(1)(Effect.gen(function*() {
        const left = yield* Ref.updateAndGet(h.users, (n) => n - 1)
        if (left > 0) return
        yield* Ref.update(hub, (current) => Option.isSome(current) && current.value === h ? Option.none() : current)
        yield* Scope.close(h.scope, Exit.void)
      }))

    const sessionNotifications: Effect.Effect<
      Stream.Stream<JsonRpc.Notification, TransportError>,
      TransportError,
      Scope.Scope
    > = Effect.gen(function*() {
      const { subscription } = yield* Effect.acquireRelease(
        hubLock.withPermits(1)(Effect.gen(function*() {
          const current = yield* Ref.get(hub)
          const reusable = Option.isSome(current) && !(yield* Ref.get(current.value.done))
          const h = reusable && Option.isSome(current) ? current.value : yield* openHubRecovering
          yield* Ref.update(h.users, (n) => n + 1)
          const subscription = yield* PubSub.subscribe(h.pubsub)
          if (!reusable) {
            yield* Ref.set(hub, Option.some(h))
            // forked from an uninterruptible region: make the reader interruptible again
            yield* Effect.forkIn(Effect.interruptible(runHub(h)), h.scope)
          }
          return { h, subscription }
        })),
        ({ h }) => release(h)
      )
      return Stream.fromQueue(subscription).pipe(Stream.flattenTake)
    })

    const close: Effect.Effect<void> = Effect.gen(function*() {
      const st = yield* Ref.getAndUpdate(state, (s) => ({ ...s, closed: true }))
      if (st.closed || st.sessionId === undefined) return
      const headers: Record<string, string> = {
        ...(yield* userHeaders),
        [H.Header.sessionId]: st.sessionId,
        ...(st.protocolVersion === undefined ? {} : { [H.Header.protocolVersion]: st.protocolVersion })
      }
      yield* http.execute(HttpClientRequest.del(url).pipe(HttpClientRequest.setHeaders(headers))).pipe(
        Effect.flatMap(drain),
        Effect.timeout(closeTimeout),
        Effect.catchAll((e) => Effect.logDebug(`Streamable HTTP: DELETE of the session failed: ${e}`))
      )
    })

    yield* Effect.addFinalizer(() => close)

    return { request, notify, close, setRequestHandler: handlers.set, sessionNotifications }
  })
