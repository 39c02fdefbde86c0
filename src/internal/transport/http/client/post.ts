/**
 * One POSTed message and its response (MCP 2025-11-25 and 2026-07-28, Transports › Streamable
 * HTTP › Sending Messages to the Server): a request's answer is `application/json` or a
 * `text/event-stream` that carries notifications (and, legacy, server→client requests) before
 * the response; an error body answers on any status, whatever its `id` (null, absent or another
 * one: MCP 2025-11-25, Basic › Overview › Responses); a `401`/`403` with a Bearer challenge is
 * `"Unauthorized"` (MCP 2025-11-25, Authorization); a `404` to a request that carried a session
 * id is a lost session (`session` recovers it). Also `notify`, and what a response teaches the
 * transport (session, negotiated version, tool schemas).
 *
 * @internal
 */
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../../../JsonRpc.js"
import * as McpSchema from "../../../../McpSchema.js"
import { TransportError } from "../../../../Transport.js"
import * as Core from "../../../client/connection.js"
import * as H from "../../../server/headerAgreement.js"
import * as Http from "../wire.js"
import { challengeOf } from "./auth.js"
import { modernVersionOf, protocolHeaders } from "./headers.js"
import * as Resume from "./resume.js"
import { type Client, closedError, drain, post, type State, transportError } from "./state.js"

/** What one POST of a request brought back. */
export type Outcome =
  | { readonly _tag: "Response"; readonly response: JsonRpc.Response; readonly sessionId: string | undefined }
  | { readonly _tag: "SessionGone" }

/** A response body's error reply is this request's answer, whatever its `id` (null, absent or foreign). */
const attribute = (response: JsonRpc.Response, id: JsonRpc.RequestId): JsonRpc.Response =>
  JsonRpc.isErrorResponse(response) ? { jsonrpc: "2.0", id, error: response.error } : response

/**
 * A request's SSE response: what it carries before the response goes to the connection core as
 * this request's (notifications to its `onNotification`, server→client requests to its
 * `onRequest` first); it ends with the response, which is returned (not settled: the caller
 * learns from it first). A legacy request's stream that ends before the response is resumed with
 * a GET and `Last-Event-ID` (`client/resume`), where the response then arrives.
 */
const readSse = (
  client: Client,
  response: HttpClientResponse.HttpClientResponse,
  message: JsonRpc.Request
): Effect.Effect<JsonRpc.Response, TransportError> => {
  const id = message.id
  return Resume.messages(
    client,
    Stream.mapError(response.stream, transportError(client, "reading the SSE stream of")),
    `the SSE stream of ${message.method}`,
    modernVersionOf(message) === undefined
  ).pipe(
    Stream.mapEffect((c): Effect.Effect<Option.Option<JsonRpc.Response>> => {
      if (
        c._tag === "Response" &&
        (c.message.id === id || (JsonRpc.isErrorResponse(c.message) && c.message.id === undefined))
      ) {
        return Effect.succeed(Option.some(attribute(c.message, id)))
      }
      switch (c._tag) {
        case "Response":
          // another request's reply belongs to that request's own stream
          return Effect.as(
            Effect.logDebug(`Streamable HTTP: ignoring a response for id ${c.message.id}`),
            Option.none()
          )
        case "Invalid":
          return Effect.as(Effect.logWarning("Streamable HTTP: ignoring an invalid SSE message"), Option.none())
        default:
          return Effect.as(Core.receive(client.connection, c, id), Option.none())
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
}

/** One POST of a request; classifies what came back. */
export const send = (
  client: Client,
  message: JsonRpc.Request,
  st: State
): Effect.Effect<Outcome, TransportError> =>
  Effect.gen(function*() {
    const extra = yield* protocolHeaders(client, message, st)
    const sentSession = extra[H.Header.sessionId] !== undefined
    const response = yield* post(client, message, extra)
    const status = response.status
    const ok = status >= 200 && status < 300
    const sessionId = response.headers[H.Header.sessionId.toLowerCase()]
    if (ok && Http.mediaTypeOf(response.headers["content-type"]) === Http.SSE_TYPE) {
      return {
        _tag: "Response",
        response: yield* readSse(client, response, message),
        sessionId
      } as const
    }
    const bytes = yield* Http.readBounded(
      Stream.mapError(response.stream, transportError(client, "reading the response of")),
      client.maxBytes
    ).pipe(
      Effect.catchTag("BodyTooLarge", (e) =>
        Effect.fail(
          new TransportError({ reason: "Protocol", status, message: `response larger than ${e.limitBytes} bytes` })
        ))
    )
    const text = Option.getOrElse(Http.decodeUtf8(bytes), () => "")
    const refused = challengeOf(status, response.headers, message.method)
    if (refused !== undefined) return yield* refused
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
export const observe = (client: Client, message: JsonRpc.Request, outcome: Outcome): Effect.Effect<void> =>
  Effect.gen(function*() {
    if (outcome._tag !== "Response" || JsonRpc.isErrorResponse(outcome.response)) return
    const result = outcome.response.result
    const version = modernVersionOf(message)
    if (version !== undefined) yield* Ref.update(client.state, (s) => ({ ...s, modernVersion: version }))
    if (message.method === McpSchema.Method.initialize && version === undefined) {
      const negotiated = typeof result.protocolVersion === "string" ? result.protocolVersion : undefined
      yield* Ref.update(client.state, (s) => ({
        ...s,
        sessionId: outcome.sessionId,
        protocolVersion: negotiated,
        init: message
      }))
    }
    if (message.method === McpSchema.Method.toolsList) {
      const tools: ReadonlyArray<unknown> = Array.isArray(result.tools) ? result.tools : []
      yield* Ref.update(client.schemas, (m) => {
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

/** The transport's `notify`: any 2xx is accepted without reading the body; a refusal is logged. */
export const notify = (client: Client, message: JsonRpc.Notification): Effect.Effect<void, TransportError> =>
  Effect.gen(function*() {
    const st = yield* Ref.get(client.state)
    if (st.closed) return yield* closedError()
    const response = yield* post(client, message, yield* protocolHeaders(client, message, st))
    yield* drain(client, response)
    if (response.status < 200 || response.status >= 300) {
      yield* Effect.logWarning(`Streamable HTTP: the server refused ${message.method} with HTTP ${response.status}`)
    }
  })
