/**
 * A POST to the Streamable HTTP endpoint (MCP 2025-11-25 and 2026-07-28, Basic, Transports,
 * "Streamable HTTP", "Sending Messages to the Server"): media types, the body limit, one
 * classification of the body, then the message's way: a 2026-07-28 request runs on a connection
 * of its own (closing the response cancels it); a legacy request runs on its session's connection
 * (a disconnect is not a cancellation); notifications and responses are accepted with 202.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as JsonRpc from "../../../JsonRpc.js"
import * as McpSchema from "../../../McpSchema.js"
import type { AuthInfo } from "../../../RequestContext.js"
import { quote } from "../../quote.js"
import * as Classify from "../../server/classify.js"
import * as Connection from "../../server/connection.js"
import * as Dispatch from "../../server/dispatch.js"
import * as HeaderRules from "../../server/headerAgreement.js"
import type { Headers, Reply } from "../../server/model.js"
import type * as Telemetry from "../../telemetry.js"
import { type Answer, empty, json, jsonText, refuse } from "./responses.js"
import type { EndpointRequest, HandlerState } from "./state.js"
import { sessionOf } from "./state.js"
import * as Http from "./wire.js"

const { McpError } = JsonRpc

/** Handles a POST: the body is read within `maxBodyBytes` and classified once. */
export const post = <R>(
  state: HandlerState,
  request: EndpointRequest<R>,
  auth: AuthInfo | undefined
): Effect.Effect<Answer, never, R> => {
  const headers = request.headers
  if (Http.mediaTypeOf(Http.header(headers, "content-type")) !== Http.JSON_TYPE) {
    return Effect.succeed(refuse(415, "Unsupported Media Type: Content-Type must be application/json"))
  }
  const accept = Http.parseAccept(Http.header(headers, "accept"))
  if (!Http.accepts(accept, Http.JSON_TYPE)) {
    return Effect.succeed(
      refuse(406, "Not Acceptable: Accept must include application/json (and text/event-stream)")
    )
  }
  const sseOk = Http.accepts(accept, Http.SSE_TYPE)
  const maxBodyBytes = state.maxBodyBytes
  const tooLarge = () => refuse(413, `Payload Too Large: the limit is ${maxBodyBytes} bytes`, { connection: "close" })
  const declared = Http.header(headers, "content-length")
  if (declared !== undefined && Number(declared) > maxBodyBytes) return Effect.succeed(tooLarge())
  // A declared length within the limit is read in one piece (the HTTP parser delivers that
  // many bytes; checked again below); a chunked body is counted as it streams in. One over the
  // limit is read to its end and dropped (up to the limit once more), so the client finishes
  // its upload and reads the 413 instead of a reset; a longer one is cut off at twice the limit.
  // Once per POST: plain steps (no generator).
  return Effect.matchEffect(
    declared !== undefined && /^\d+$/.test(declared)
      ? request.body
      : request.bodyBounded(maxBodyBytes, maxBodyBytes),
    {
      onFailure: (error) =>
        Effect.succeed(
          error instanceof Http.BodyTooLarge ? tooLarge() : refuse(400, "Bad Request: the body could not be read")
        ),
      onSuccess: (bytes): Effect.Effect<Answer, never, R> => {
        if (bytes.byteLength > maxBodyBytes) return Effect.succeed(tooLarge())
        const text = Http.decodeUtf8(bytes)
        if (Option.isNone(text)) return unreadable(state, headers, McpError.parseError(), undefined)
        const classified = JsonRpc.parse(text.value)
        switch (classified._tag) {
          case "Invalid":
            return unreadable(state, headers, classified.error, classified.id)
          case "Response":
            return answered(state, headers, classified)
          case "Notification":
            return accepted(state, headers, classified)
          case "Request": {
            // Classified once: the era routes it here, and the core reads it (and its method's row).
            const classification = Classify.classify(state.server, classified.message, headers)
            return requestPost(
              state,
              request,
              { message: classified, headers, auth, peer: peerOf(request), classification },
              classified.message,
              sseOk
            )
          }
        }
      }
    }
  )
}

/** A 400 for a body that is not a valid request: the core's id rule, with the session if known. */
const unreadable = (
  state: HandlerState,
  headers: Headers,
  error: JsonRpc.McpError,
  id: JsonRpc.RequestId | undefined
) =>
  Effect.flatMap(
    id === undefined ? sessionOf(state, headers) : Effect.succeed({ _tag: "None" } as const),
    (found) =>
      Effect.map(
        Dispatch.invalidResponse(found._tag === "Found" ? found.session.core : undefined, id, error),
        (message) => json(400, message)
      )
  )

/** Notifications: 202, no body; legacy ones reach their session's connection (`notifications/cancelled`). */
const accepted = (
  state: HandlerState,
  headers: Headers,
  classified: Extract<JsonRpc.Classified, { readonly _tag: "Notification" }>
) =>
  Effect.gen(function*() {
    const notification = classified.message
    if (Classify.isModern(notification.method, notification.params, headers)) {
      const methodHeader = HeaderRules.getHeader(headers, HeaderRules.Header.method)
      if (methodHeader !== undefined && methodHeader !== notification.method) {
        return json(
          400,
          JsonRpc.failure(
            undefined,
            McpError.headerMismatch(
              `Header mismatch: ${HeaderRules.Header.method} header value '${
                quote(methodHeader)
              }' does not match body value '${quote(notification.method)}'`
            )
          )
        )
      }
      return empty(202)
    }
    const found = yield* sessionOf(state, headers)
    if (found._tag === "Refused") return found.response
    if (found._tag === "Found") {
      yield* found.session.connection.receive({ message: classified, headers }, Connection.noOutlet)
    }
    return empty(202)
  })

/**
 * A POSTed JSON-RPC response: the client's answer to a server→client request of its legacy
 * session (MCP 2025-11-25, Client Features) → `202`. Unknown ids are ignored (still `202`).
 */
const answered = (
  state: HandlerState,
  headers: Headers,
  classified: Extract<JsonRpc.Classified, { readonly _tag: "Response" }>
) =>
  Effect.gen(function*() {
    const found = yield* sessionOf(state, headers)
    if (found._tag === "Refused") return found.response
    if (found._tag === "Found") {
      yield* found.session.connection.receive({ message: classified }, Connection.noOutlet)
    }
    return empty(202)
  })

const requestPost = <R>(
  state: HandlerState,
  http: EndpointRequest<R>,
  incoming: Connection.Incoming,
  request: JsonRpc.Request,
  sseOk: boolean
): Effect.Effect<Answer, never, R> => {
  if (incoming.classification?.era !== "legacy") {
    // Stateless: Mcp-Session-Id is ignored; the request runs on the endpoint's stateless
    // connection (its bound: `maxStatelessInFlight`, `maxStatelessQueued`, then 503) in the
    // response's fiber or in a fiber of its scope, so closing the response cancels it.
    const stateless = state.stateless
    return http.exchange({
      id: request.id,
      sse: sseOk,
      keepAlive: state.keepAlive,
      status: replyStatus,
      start: (outlet) => stateless.receive(incoming, outlet),
      runsInline: true
    })
  }
  return legacyPost(state, http, incoming, request, sseOk)
}

const replyStatus = (reply: Reply): number => reply.status
const sessionStatus = (reply: Reply): number => reply.status === 404 ? 200 : reply.status

const legacyPost = <R>(
  state: HandlerState,
  http: EndpointRequest<R>,
  incoming: Connection.Incoming,
  request: JsonRpc.Request,
  sseOk: boolean
): Effect.Effect<Answer, never, R> => {
  const headers = http.headers
  if (request.method === McpSchema.Method.initialize) return initialize(state, incoming, request)
  // Once per legacy request: plain steps (no generator).
  return Effect.flatMap(sessionOf(state, headers), (found): Effect.Effect<Answer, never, R> => {
    if (found._tag === "Refused") return Effect.succeed(found.response)
    if (found._tag === "None") {
      // Sessions off: a throwaway session at the version the header names; else no session: the
      // core answers (400 -32602 naming what is missing; `ping` works).
      return Effect.map(
        state.sessions
          ? once(state, incoming, undefined)
          : Effect.flatMap(statelessSession(state, headers), (session) => once(state, incoming, session)),
        onceAnswer
      )
    }
    // Legacy: the request lives in the session (a disconnect is not a cancellation; a
    // `notifications/cancelled` is). In-session JSON-RPC errors are HTTP 200: a 404 would read as
    // "session terminated" to a legacy client.
    const connection = found.session.connection
    const inSession: Connection.Incoming = {
      ...incoming,
      peer: { ...incoming.peer, transport: "tcp", sessionId: found.session.id }
    }
    const session = found.session
    // The POST's SSE stream is recorded for resumption (`session/postStream.ts`); a 2025-11-25
    // client gets a priming event first (a 2025-06-18 one does not expect empty data).
    return Effect.flatMap(Ref.get(session.core.state), (current) =>
      http.exchange({
        id: request.id,
        sse: sseOk,
        keepAlive: state.keepAlive,
        status: sessionStatus,
        start: (outlet) => connection.receive(inSession, outlet),
        runsInline: false,
        framing: sseOk ? state.store.postStream(session, primes(current?.protocolVersion)) : undefined
      }))
  })
}

/** Does a POST stream of a session at this version open with a priming event (MCP 2025-11-25 on)? */
const primes = (version: McpSchema.ProtocolVersion | undefined): boolean =>
  version !== undefined && version !== "2025-06-18"

/**
 * The client of one POST as spans and metrics record it (semantic-conventions-genai,
 * docs/gen-ai/mcp.md, "Recording MCP transport"): TCP, HTTP, the socket's remote address.
 */
const peerOf = <R>(request: EndpointRequest<R>): Telemetry.Peer => ({
  transport: "tcp",
  protocolName: "http",
  address: request.remoteAddress
})

/**
 * A legacy request without a session of its own (sessions off: a throwaway one; none: the core
 * answers what is missing), or an `initialize` (its new session): run on the stateless connection
 * (its bound applies) with `session` as the message's own, answered with one JSON body.
 */
const once = (
  state: HandlerState,
  incoming: Connection.Incoming,
  session: Dispatch.Session | undefined
): Effect.Effect<Option.Option<Answered>> => {
  let answered: Option.Option<Answered> = Option.none()
  const outlet: Connection.Outlet = {
    reply: (reply, text) =>
      Effect.sync(() => {
        answered = Option.some({ reply, text })
      }),
    send: undefined,
    inline: true
  }
  return Effect.map(state.stateless.receive({ ...incoming, session }, outlet), () => answered)
}

/** A reply and its JSON text. */
interface Answered {
  readonly reply: Reply
  readonly text: string
}

/** One JSON reply as the response (202 when there is none: the request was interrupted). */
const onceAnswer = (answered: Option.Option<Answered>): Answer =>
  Option.match(answered, {
    onNone: () => empty(202),
    onSome: ({ reply, text }) => jsonText(reply.status, text, reply.headers)
  })

/** A throwaway, already initialized legacy session for sessionless serving. */
const statelessSession = (state: HandlerState, headers: Headers) =>
  Effect.gen(function*() {
    const core = yield* Dispatch.makeSession
    const asked = HeaderRules.getHeader(headers, HeaderRules.Header.protocolVersion)
    const protocolVersion = state.legacyVersions.find((v) => v === asked) ?? state.legacyVersions[0] ??
      "2025-11-25"
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

/** `initialize`: answered in a new session, registered in the store (with its id) when it succeeded. */
const initialize = (state: HandlerState, incoming: Connection.Incoming, request: JsonRpc.Request) =>
  Effect.gen(function*() {
    const core = yield* Dispatch.makeSession
    const answered = yield* once(state, incoming, core)
    if (Option.isNone(answered)) return empty(202)
    const { reply, text } = answered.value
    if (JsonRpc.isErrorResponse(reply.message) || !state.sessions) return jsonText(reply.status, text, reply.headers)
    const session = yield* state.store.create(core)
    if (Option.isNone(session)) {
      return json(
        503,
        JsonRpc.failure(
          request.id,
          McpError.internalError(
            "Cannot open a session now (too many sessions, or the session store is unavailable); try again later"
          )
        )
      )
    }
    return jsonText(reply.status, text, { [HeaderRules.Header.sessionId]: session.value.id })
  })
