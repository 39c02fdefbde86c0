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

/**
 * Parses an SSE byte stream with `@effect/experimental/Sse` (events bounded in UTF-16 code
 * units): its events with their `id`, and its `retry` fields (`Sse.Retry`, for resumption).
 */
export const sseEvents = <E>(
  bytes: Stream.Stream<Uint8Array, E>,
  maxEventSize: number
): Stream.Stream<Sse.AnyEvent, E | TransportError> =>
  Stream.suspend(() => {
    let pending: Array<Sse.AnyEvent> = []
    const parser = Sse.makeParser((event) => {
      pending.push(event)
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
        return out.some((e) => e._tag === "Event" && e.data.length > maxEventSize)
          ? Effect.fail(
            new TransportError({ reason: "Protocol", message: `SSE event larger than ${maxEventSize} characters` })
          )
          : Effect.succeed(out)
      }),
      Stream.flattenIterables
    )
  })

/**
 * The JSON-RPC messages of one SSE event, each classified once: one, or those of a batch (a
 * 2025-03-26 server may batch them, `JsonRpc.parseBatch`); none for an event without data (a
 * keep-alive, or a priming event that only carries an `id`).
 */
export const messagesOf = (event: Sse.Event): ReadonlyArray<JsonRpc.Classified> =>
  event.data.trim() === "" ? [] : JsonRpc.parseBatch(event.data)
