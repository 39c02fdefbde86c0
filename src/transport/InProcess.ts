/**
 * The in-process transport: a client talks to a server in the same process, with no bytes in
 * between, but every message still round-trips through the JSON codec so tests see what a real
 * transport would carry.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { withTimeout } from "../internal/client/deadline.js"
import { makeRequestHandlers } from "../internal/client/requestHandlers.js"
import * as JsonRpc from "../JsonRpc.js"
import * as McpServer from "../McpServer.js"
import { type ClientTransport, type RequestHandler, type RequestOptions, TransportError } from "../Transport.js"

const roundTrip = (message: JsonRpc.Message): Effect.Effect<unknown, TransportError> =>
  Effect.suspend(() => {
    try {
      const wire: unknown = JSON.parse(JsonRpc.encode(message))
      return Effect.succeed(wire)
    } catch (cause) {
      return Effect.fail(
        new TransportError({ reason: "Protocol", message: "message is not JSON-serialisable", cause })
      )
    }
  })

const noNotify = (): Effect.Effect<void> => Effect.void

/**
 * Options of {@link client}: `onRequest` answers the server's requests to the client (legacy
 * sessions: `elicitation/create`, `sampling/createMessage`, `roots/list`, …); replaceable later
 * with `setRequestHandler`. Default: `ping` → `{}`, anything else -32601.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientOptions {
  readonly onRequest?: RequestHandler | undefined
}

/**
 * An in-process `ClientTransport`; `setRequestHandler` and `sessionNotifications` are always
 * present.
 *
 * @since 0.1.0
 * @category models
 */
export interface InProcessClientTransport extends ClientTransport {
  readonly setRequestHandler: (handler: RequestHandler | undefined) => Effect.Effect<void>
  readonly sessionNotifications: Effect.Effect<
    Stream.Stream<JsonRpc.Notification, TransportError>,
    TransportError,
    Scope.Scope
  >
}

/**
 * A client transport connected to `server` in this process. One legacy session per transport.
 *
 * - Request-scoped notifications (progress, logs, a listen stream's notifications) reach the
 *   request's `onNotification`. Interrupting a request interrupts its handler (a modern
 *   `subscriptions/listen` ends that way).
 * - Server→client requests (legacy session, `McpServer.DispatchOptions.sendRequest`) get ids
 *   `s2c-1`, `s2c-2`, … and are answered by the request's own `onRequest`, else the handler of
 *   `setRequestHandler` / `options.onRequest`, else the default (`ping` → `{}`, else -32601). An
 *   error response fails the server's `Input` call with that `McpError`.
 * - `sessionNotifications`: drains `McpServer.sessionNotifications` of the transport's session
 *   (legacy list changes when the server has `listChanged`, resource updates for subscribed URIs)
 *   while the Scope is open.
 *
 * @since 0.1.0
 * @category constructors
 */
export const client = (
  server: McpServer.McpServer,
  options: ClientOptions = {}
): Effect.Effect<InProcessClientTransport> =>
  Effect.gen(function*() {
    const session = yield* McpServer.makeSession
    const handlers = yield* makeRequestHandlers(options.onRequest)
    const nextId = yield* Ref.make(1)

    /** A server→client request of a legacy session, answered by the request's own `onRequest` first. */
    const sendRequest =
      (preferred: RequestHandler | undefined) => (method: string, params: JsonRpc.JsonObject | undefined) =>
        Effect.gen(function*() {
          const id = `s2c-${yield* Ref.getAndUpdate(nextId, (n) => n + 1)}`
          const outgoing = JsonRpc.classify(yield* roundTrip(JsonRpc.request(id, method, params)))
          if (outgoing._tag !== "Request") {
            return yield* JsonRpc.McpError.internalError("Invalid request to the client")
          }
          const answer = yield* handlers.answer(outgoing.message, preferred)
          const back = JsonRpc.classify(yield* roundTrip(answer))
          if (back._tag !== "Response") {
            return yield* JsonRpc.McpError.internalError("The client sent an invalid response")
          }
          const response = back.message
          return JsonRpc.isErrorResponse(response)
            ? yield* JsonRpc.McpError.fromErrorObject(response.error)
            : response.result
        }).pipe(
          Effect.catchTag(
            "TransportError",
            (e) => Effect.fail(JsonRpc.McpError.internalError(`The client's answer is not JSON: ${e.message}`))
          )
        )

    /** A request-scoped notification, round-tripped to the request's `onNotification`. */
    const notifyTo =
      (onNotification: NonNullable<RequestOptions["onNotification"]>) =>
      (n: JsonRpc.Notification): Effect.Effect<void> =>
        roundTrip(n).pipe(
          Effect.flatMap((u) => {
            const c = JsonRpc.classify(u)
            return c._tag === "Notification" ? onNotification(c.message) : Effect.void
          }),
          Effect.orDie
        )

    const exchange = (
      message: JsonRpc.Request,
      requestOptions: RequestOptions | undefined
    ): Effect.Effect<JsonRpc.Response, TransportError> =>
      Effect.flatMap(roundTrip(message), (wire) => {
        const onNotification = requestOptions?.onNotification
        return McpServer.dispatch(server, wire, {
          session,
          sendRequest: sendRequest(requestOptions?.onRequest),
          notify: onNotification === undefined ? noNotify : notifyTo(onNotification)
        })
      }).pipe(
        Effect.flatMap((reply) =>
          Option.isNone(reply)
            ? Effect.fail(new TransportError({ reason: "Protocol", message: "the server sent no response" }))
            : Effect.flatMap(roundTrip(reply.value.message), (u) => {
              const back = JsonRpc.classify(u)
              return back._tag === "Response"
                ? Effect.succeed(back.message)
                : Effect.fail(new TransportError({ reason: "Protocol", message: "the server sent a non-response" }))
            })
        )
      )

    const transport: InProcessClientTransport = {
      request: (message, requestOptions) =>
        withTimeout(exchange(message, requestOptions), message.method, requestOptions?.timeout),
      notify: (message) =>
        roundTrip(message).pipe(
          Effect.flatMap((wire) => McpServer.handleMessage(server, wire, { session })),
          Effect.asVoid
        ),
      close: Effect.void,
      setRequestHandler: handlers.set,
      sessionNotifications: Effect.gen(function*() {
        const mailbox = yield* Mailbox.make<JsonRpc.Notification>()
        const unsolicited = yield* McpServer.sessionNotifications(server, session)
        yield* unsolicited.pipe(
          Stream.runForEach((n) =>
            roundTrip(n).pipe(
              Effect.flatMap((u) => {
                const c = JsonRpc.classify(u)
                return c._tag === "Notification" ? mailbox.offer(c.message) : Effect.succeed(false)
              }),
              Effect.orDie
            )
          ),
          Effect.ensuring(mailbox.end),
          Effect.interruptible,
          Effect.forkScoped
        )
        return Mailbox.toStream(mailbox)
      })
    }
    return transport
  })
