/**
 * The Streamable HTTP server's responses (MCP 2025-11-25 and 2026-07-28, Basic, Transports,
 * "Streamable HTTP"): JSON bodies, id-less refusals, empty statuses, SSE streams, and one
 * request's response ("Sending Messages to the Server"): the connection writes the request's
 * notifications and server→client requests, then its reply, to an outlet; a message before the
 * reply (and a client that accepts `text/event-stream`) turns the response into an SSE stream,
 * otherwise it is one JSON body.
 * @internal
 */
import * as Headers from "@effect/platform/Headers"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../../JsonRpc.js"
import * as Connection from "../../server/connection.js"
import type { Reply } from "../../server/model.js"
import * as Http from "./wire.js"

/**
 * A response already written by the exchange that produced it (Node's request listener writes a
 * request's messages to its response as they come): nothing is left to send.
 */
export interface Sent {
  readonly _tag: "Sent"
}

/** The one {@link Sent} value. */
export const sent: Sent = { _tag: "Sent" }

/** What the endpoint handling answers: a response to send, or {@link Sent}. */
export type Answer = HttpServerResponse.HttpServerResponse | Sent

/** Is this answer already written? */
export const isSent = (answer: Answer): answer is Sent => answer === sent

/** The methods the endpoint answers (the `Allow` header of a 405). */
export const ALLOW = "GET, POST, DELETE"

/** A JSON body that is already encoded. */
export const jsonText = (
  status: number,
  text: string,
  headers: Readonly<Record<string, string>> = {}
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(text, { status, contentType: Http.JSON_TYPE, headers: Headers.fromInput(headers) })

/** A JSON-RPC message as the body (built by the transport itself: it always encodes). */
export const json = (
  status: number,
  message: JsonRpc.Message,
  headers: Readonly<Record<string, string>> = {}
): HttpServerResponse.HttpServerResponse => jsonText(status, JsonRpc.encode(message), headers)

/** A transport-level refusal: an id-less JSON-RPC -32600 error body. */
export const refuse = (
  status: number,
  message: string,
  headers: Readonly<Record<string, string>> = {},
  data?: unknown
): HttpServerResponse.HttpServerResponse =>
  json(status, JsonRpc.failure(undefined, JsonRpc.McpError.invalidRequest(message, data)), headers)

/** A status without a body (202 for notifications and responses, 204). */
export const empty = (status: number): HttpServerResponse.HttpServerResponse => HttpServerResponse.empty({ status })

const SSE_HEADERS = { "cache-control": "no-cache", "x-accel-buffering": "no" } as const

/** An SSE response of these frames, with a `: ping` comment every `keepAlive` while it is open. */
export const sse = (
  frames: Stream.Stream<string>,
  keepAlive: Duration.Duration
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.stream(
    frames.pipe(
      Stream.merge(Stream.tick(keepAlive).pipe(Stream.drop(1), Stream.as(Http.ssePing)), { haltStrategy: "left" }),
      Stream.encodeText
    ),
    { contentType: Http.SSE_TYPE, headers: Headers.fromInput(SSE_HEADERS) }
  )

/** Messages a response holds before the handler writing more waits for the client to read. */
const OUTBOX_CAPACITY = 64

interface Outcome {
  readonly status: number
  readonly text: string
  /** Headers of a JSON body besides its type (`Retry-After` of a `503`). */
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/**
 * How one request's SSE stream is framed (MCP 2025-11-25, Basic, Transports, "Sending Messages to
 * the Server", "Resumability and Redelivery"): `write` turns one message of the stream (`text`:
 * its JSON) into SSE frames and hands them to `writeFrames`, one message at a time and in order
 * (a resumable stream records the message first and gives its frame an event id; its first
 * message is preceded by a priming event). `done` says the request ended: `replied`, its response
 * was written on the stream.
 */
export interface SseFraming {
  readonly write: (
    message: JsonRpc.Message,
    text: string,
    writeFrames: (frames: string) => Effect.Effect<void>
  ) => Effect.Effect<void>
  readonly done: (replied: boolean) => Effect.Effect<void>
}

/** Frames without ids: a stream that is not resumable (2026-07-28 requests). */
export const plainFraming: SseFraming = {
  write: (_, text, writeFrames) => writeFrames(Http.sseEvent(text)),
  done: () => Effect.void
}

/** One request's exchange: how it starts and how its reply maps to an HTTP status. */
export interface ExchangeArgs {
  readonly id: JsonRpc.RequestId
  /** The client accepts `text/event-stream`: messages before the reply turn the response into SSE. */
  readonly sse: boolean
  readonly keepAlive: Duration.Duration
  /** The HTTP status of the reply (legacy sessions answer JSON-RPC errors with 200). */
  readonly status: (reply: Reply) => number
  /** Hands the outlet to the request's connection (`receive`). */
  readonly start: (outlet: Connection.Outlet) => Effect.Effect<void>
  /**
   * The request runs in the exchange's fiber (a stateless one: its outlet is `inline`, so `start`
   * runs the whole request); an exchange that must return a response before the request ends
   * forks it in the response's scope (closing the response cancels it). Otherwise the request runs
   * in its connection's fiber (a legacy session: a disconnect is not a cancellation).
   */
  readonly runsInline: boolean
  /** How its SSE stream is framed; default {@link plainFraming}. */
  readonly framing?: SseFraming | undefined
}

/** The `Content-Type` of a JSON body, as a header record built once. */
export const JSON_TYPE_HEADER: Readonly<Record<string, string>> = { "content-type": Http.JSON_TYPE }

/** The headers of an SSE response, as a record built once. */
export const SSE_RESPONSE_HEADERS: Readonly<Record<string, string>> = { ...SSE_HEADERS, "content-type": Http.SSE_TYPE }

/**
 * Starts one request with `start` (which hands the outlet to the connection) and builds its
 * response value. A request interrupted before its reply gets `204` (JSON) or an SSE stream that
 * ends; one that failed with a defect a `500` -32603.
 */
export const exchange = (args: ExchangeArgs): Effect.Effect<Answer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const framing = args.framing ?? plainFraming
    // SSE frames; a message before the reply makes the response an SSE stream
    const mailbox = yield* Mailbox.make<string>(OUTBOX_CAPACITY)
    const outcome = yield* Deferred.make<Option.Option<Outcome>>()
    const offer = (frames: string) => Effect.asVoid(mailbox.offer(frames))
    let streaming = false
    let replied = false
    yield* Effect.addFinalizer(() => mailbox.shutdown)
    const outlet: Connection.Outlet = {
      reply: (reply, text) =>
        streaming
          ? Effect.zipRight(
            framing.write(reply.message, text, offer),
            Effect.sync(() => {
              replied = true
            })
          ).pipe(Effect.zipRight(Deferred.succeed(outcome, Option.none())))
          : Deferred.succeed(outcome, Option.some({ status: args.status(reply), text, headers: reply.headers })),
      send: args.sse
        ? (message) =>
          Effect.flatMap(
            Connection.encodeOutgoing(message),
            (text) => {
              if (text === undefined) return Effect.void
              streaming = true
              return framing.write(message, text, offer)
            }
          )
        : undefined,
      done: (exit) =>
        Effect.zipRight(
          Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause)
            ? Effect.zipRight(
              Effect.logError("Streamable HTTP: request failed with a defect", exit.cause),
              Deferred.succeed(outcome, Option.some(internalError(args.id)))
            )
            : Deferred.succeed(outcome, Option.none()),
          Effect.zipRight(mailbox.end, Effect.suspend(() => streaming ? framing.done(replied) : Effect.void))
        ),
      inline: args.runsInline
    }
    yield* args.runsInline ? Effect.asVoid(Effect.forkScoped(args.start(outlet))) : args.start(outlet)
    const first = yield* Effect.option(mailbox.take)
    if (Option.isNone(first)) {
      const result = yield* Deferred.await(outcome)
      return Option.match(result, {
        onNone: () => empty(204),
        onSome: ({ headers, status, text }) => jsonText(status, text, headers)
      })
    }
    // the reply (when not written through the mailbox) or a defect's error
    const final = Effect.map(Deferred.await(outcome), Option.map((o) => Http.sseEvent(o.text)))
    return sse(
      Stream.concat(Stream.succeed(first.value), Mailbox.toStream(mailbox)).pipe(
        Stream.concat(Stream.fromEffect(final).pipe(Stream.filterMap((o) => o)))
      ),
      args.keepAlive
    )
  })

/** The reply of a request that failed with a defect (JSON-RPC 2.0, "Error object": -32603). */
export const internalError = (id: JsonRpc.RequestId): Outcome => ({
  status: 500,
  text: JsonRpc.encode(JsonRpc.failure(id, JsonRpc.McpError.internalError()))
})
