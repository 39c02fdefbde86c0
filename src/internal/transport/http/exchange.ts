/**
 * One request's HTTP response (MCP 2025-11-25, Basic, Transports, "Streamable HTTP", "Sending
 * Messages to the Server"): the connection writes the request's notifications and server→client
 * requests, then its reply, to an outlet; a message before the reply (and a client that accepts
 * `text/event-stream`) turns the response into an SSE stream, otherwise it is one JSON body.
 * @internal
 */
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
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
import { empty, jsonText, sse } from "./responses.js"
import * as Http from "./wire.js"

/** Messages a response holds before the handler writing more waits for the client to read. */
const OUTBOX_CAPACITY = 64

interface Outcome {
  readonly status: number
  readonly text: string
}

/**
 * Starts one request with `start` (which hands the outlet to the connection) and builds its
 * response. `status` maps the reply's status (legacy sessions answer JSON-RPC errors with 200).
 * A request interrupted before its reply gets `204` (JSON) or an SSE stream that ends.
 */
export const exchange = (args: {
  readonly id: JsonRpc.RequestId
  readonly sse: boolean
  readonly keepAlive: Duration.Duration
  readonly status: (reply: Reply) => number
  readonly start: (outlet: Connection.Outlet) => Effect.Effect<void>
}): Effect.Effect<HttpServerResponse.HttpServerResponse, never, Scope.Scope> =>
  Effect.gen(function*() {
    const mailbox = yield* Mailbox.make<string>(OUTBOX_CAPACITY)
    const outcome = yield* Deferred.make<Option.Option<Outcome>>()
    yield* Effect.addFinalizer(() => mailbox.shutdown)
    const outlet: Connection.Outlet = {
      reply: (reply, text) => Deferred.succeed(outcome, Option.some({ status: args.status(reply), text })),
      send: args.sse
        ? (message) =>
          Effect.flatMap(
            Connection.encodeOutgoing(message),
            (text) => text === undefined ? Effect.void : Effect.asVoid(mailbox.offer(text))
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
          mailbox.end
        )
    }
    yield* args.start(outlet)
    const first = yield* Effect.option(mailbox.take)
    if (Option.isNone(first)) {
      const result = yield* Deferred.await(outcome)
      return Option.match(result, {
        onNone: () => empty(204),
        onSome: ({ status, text }) => jsonText(status, text)
      })
    }
    const final = Effect.map(Deferred.await(outcome), Option.map((o) => o.text))
    return sse(
      Stream.concat(Stream.succeed(first.value), Mailbox.toStream(mailbox)).pipe(
        Stream.concat(Stream.fromEffect(final).pipe(Stream.filterMap((o) => o))),
        Stream.map((data) => Http.sseEvent(data))
      ),
      args.keepAlive
    )
  })

const internalError = (id: JsonRpc.RequestId): Outcome => ({
  status: 500,
  text: JsonRpc.encode(JsonRpc.failure(id, JsonRpc.McpError.internalError()))
})
