/**
 * The in-process transport: a client talks to a server in the same process, with no bytes in
 * between, but every message still round-trips through the JSON codec so tests see what a real
 * transport would carry.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as JsonRpc from "../JsonRpc.js"
import * as McpServer from "../McpServer.js"
import { type ClientTransport, TransportError } from "../Transport.js"

const roundTrip = (message: JsonRpc.Message): Effect.Effect<unknown, TransportError> =>
  Effect.try({
    try: (): unknown => JSON.parse(JsonRpc.encode(message)),
    catch: (cause) => new TransportError({ reason: "Protocol", message: "message is not JSON-serialisable", cause })
  })

/**
 * A client transport connected to `server` in this process. One legacy session per transport.
 * Request-scoped notifications (progress, logs) reach the request's `onNotification`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const client = (server: McpServer.McpServer): Effect.Effect<ClientTransport> =>
  Effect.map(McpServer.makeSession, (session): ClientTransport => ({
    request: (message, options) =>
      Effect.gen(function*() {
        const wire = yield* roundTrip(message)
        const reply = yield* McpServer.handleMessage(server, wire, {
          session,
          notify: (n) =>
            options?.onNotification === undefined
              ? Effect.void
              : roundTrip(n).pipe(
                Effect.flatMap((u) => {
                  const c = JsonRpc.classify(u)
                  return c._tag === "Notification" && options.onNotification !== undefined
                    ? options.onNotification(c.message)
                    : Effect.void
                }),
                Effect.orDie
              )
        })
        if (Option.isNone(reply)) {
          return yield* new TransportError({ reason: "Protocol", message: "the server sent no response" })
        }
        const back = JsonRpc.classify(yield* roundTrip(reply.value))
        if (back._tag !== "Response") {
          return yield* new TransportError({ reason: "Protocol", message: "the server sent a non-response" })
        }
        return back.message
      }),
    notify: (message) =>
      roundTrip(message).pipe(
        Effect.flatMap((wire) => McpServer.handleMessage(server, wire, { session })),
        Effect.asVoid
      ),
    close: Effect.void
  }))
