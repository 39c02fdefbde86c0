/**
 * SSE parsing for the Streamable HTTP client (MCP 2025-11-25 and 2026-07-28, Transports ›
 * Streamable HTTP: a response may be a `text/event-stream` of JSON-RPC messages).
 *
 * @internal
 */
import * as Sse from "@effect/experimental/Sse"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../../../JsonRpc.js"
import { TransportError } from "../../../../Transport.js"

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

/**
 * The JSON-RPC messages of an SSE body, each classified once (an event without data is a
 * keep-alive). Every SSE response the client reads (a request's POST, the standalone GET) goes
 * through here: the seam where an event's `id` would be kept for resumption (`Last-Event-ID`).
 */
export const sseMessages = <E>(
  bytes: Stream.Stream<Uint8Array, E>,
  maxEventSize: number
): Stream.Stream<JsonRpc.Classified, E | TransportError> =>
  sseEvents(bytes, maxEventSize).pipe(
    Stream.filter((event) => event.data.trim() !== ""),
    Stream.map((event) => JsonRpc.parse(event.data))
  )
