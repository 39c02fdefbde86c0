/**
 * The in-process transport: a client talks to a server in the same process, with no bytes in
 * between, but every message still round-trips through the JSON codec so tests see what a real
 * transport would carry.
 *
 * Guide: [Clients, in-process](https://github.com/presa-mcp/presa-mcp/blob/main/docs/clients.md#in-process).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { withTimeout } from "../internal/client/deadline.js"
import { makeRequestHandlers } from "../internal/client/requestHandlers.js"
import * as Connection from "../internal/server/connection.js"
import * as Service from "../internal/server/service.js"
import * as JsonRpc from "../JsonRpc.js"
import * as McpServer from "../McpServer.js"
import { ClientTransport, type RequestHandler, type RequestOptions, TransportError } from "../Transport.js"

/** `message` through the JSON codec (a fresh copy), or the `TransportError` when JSON cannot carry it. */
const unsafeRoundTrip = (message: JsonRpc.Message): { readonly wire: unknown } | TransportError => {
  try {
    return { wire: JSON.parse(JsonRpc.encode(message)) }
  } catch (cause) {
    return new TransportError({ reason: "Protocol", message: "message is not JSON-serialisable", cause })
  }
}

const roundTrip = (message: JsonRpc.Message): Effect.Effect<unknown, TransportError> =>
  Effect.suspend(() => {
    const copied = unsafeRoundTrip(message)
    return copied instanceof TransportError ? Effect.fail(copied) : Effect.succeed(copied.wire)
  })

/**
 * Options of {@link client}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientOptions {
  /**
   * Answers the server's requests to the client (legacy sessions: `elicitation/create`,
   * `sampling/createMessage`, `roots/list`, …); replaceable later with `setRequestHandler`.
   * Default: `ping` → `{}`, anything else -32601.
   */
  readonly onRequest?: RequestHandler | undefined
  /**
   * Requests of this client the server runs at once, at most; default 1,024. A request beyond it
   * waits (in the caller's fiber) for one to finish.
   */
  readonly maxInFlight?: number | undefined
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
    const handlers = yield* makeRequestHandlers(options.onRequest)
    const connection = yield* Connection.makeUnscoped(Service.internal(server), {
      session: yield* McpServer.makeSession,
      duplicateIds: "reject",
      maxInFlight: options.maxInFlight
    })

    /** A server→client request of the legacy session, answered by the request's own `onRequest` first. */
    const answerRequest = (request: JsonRpc.Request, preferred: RequestHandler | undefined): Effect.Effect<void> =>
      roundTrip(request).pipe(
        Effect.flatMap((wire) => {
          const outgoing = JsonRpc.classify(wire)
          return outgoing._tag === "Request"
            ? Effect.flatMap(handlers.answer(outgoing.message, preferred), roundTrip)
            : Effect.succeed(
              JsonRpc.failure(request.id, JsonRpc.McpError.internalError("Invalid request to the client"))
            )
        }),
        Effect.catchTag("TransportError", (e) =>
          Effect.succeed(
            JsonRpc.failure(request.id, JsonRpc.McpError.internalError(`The client's answer is not JSON: ${e.message}`))
          )),
        Effect.flatMap((answer) => {
          const back = JsonRpc.classify(answer)
          return connection.receive(
            {
              message: back._tag === "Response"
                ? back
                : {
                  _tag: "Response",
                  message: JsonRpc.failure(
                    request.id,
                    JsonRpc.McpError.internalError("The client sent an invalid response")
                  )
                }
            },
            Connection.noOutlet
          )
        })
      )

    /** What one request's handler writes besides its reply: notifications to `onNotification`, requests to the client. */
    const sendTo = (requestOptions: RequestOptions | undefined) => {
      const onNotification = requestOptions?.onNotification
      const preferred = requestOptions?.onRequest
      return (message: JsonRpc.Request | JsonRpc.Notification): Effect.Effect<void> =>
        "id" in message
          ? answerRequest(message, preferred)
          : onNotification === undefined
          ? Effect.void
          : Effect.flatMap(Connection.encodeOutgoing(message), (text) => {
            // JSON cannot carry it: dropped (logged), as stdio and HTTP do.
            if (text === undefined) return Effect.void
            const c = JsonRpc.parse(text)
            return c._tag === "Notification" ? onNotification(c.message) : Effect.void
          })
    }

    // The `send` of requests without an `onNotification` of their own, built once per `onRequest`
    // (the client's is the same for every call), so that the connection builds their dispatch
    // options once too (bench/README.md, "Issue #24: in-process, session 9").
    let plain: { readonly preferred: RequestHandler | undefined; readonly send: Connection.Outlet["send"] } | undefined
    const sendFor = (requestOptions: RequestOptions | undefined): Connection.Outlet["send"] => {
      if (requestOptions?.onNotification !== undefined) return sendTo(requestOptions)
      const preferred = requestOptions?.onRequest
      if (plain !== undefined && plain.preferred === preferred) return plain.send
      plain = { preferred, send: sendTo(requestOptions) }
      return plain.send
    }

    const exchange = (
      message: JsonRpc.Request,
      requestOptions: RequestOptions | undefined
    ): Effect.Effect<JsonRpc.Response, TransportError> =>
      // the copy and the server's run in one step (the request path: bench/README.md, "Issue #24: client")
      Effect.suspend(() => {
        const copied = unsafeRoundTrip(message)
        if (copied instanceof TransportError) return Effect.fail(copied)
        const classified = JsonRpc.classify(copied.wire)
        let answer: string | undefined
        const outlet: Connection.Outlet = {
          reply: (_, text) =>
            Effect.sync(() => {
              answer = text
            }),
          send: sendFor(requestOptions),
          // the request runs in the caller's fiber: interrupting the call cancels it
          inline: true
        }
        const response = (): Effect.Effect<JsonRpc.Response, TransportError> => {
          if (answer === undefined) {
            return Effect.fail(new TransportError({ reason: "Protocol", message: "the server sent no response" }))
          }
          const back = JsonRpc.parse(answer)
          return back._tag === "Response"
            ? Effect.succeed(back.message)
            : Effect.fail(new TransportError({ reason: "Protocol", message: "the server sent a non-response" }))
        }
        return Effect.flatMap(connection.receive({ message: classified }, outlet), response)
      })

    const transport: InProcessClientTransport = {
      request: (message, requestOptions) =>
        withTimeout(exchange(message, requestOptions), message.method, requestOptions?.timeout),
      notify: (message) =>
        Effect.flatMap(
          roundTrip(message),
          (wire) => connection.receive({ message: JsonRpc.classify(wire) }, Connection.noOutlet)
        ),
      setRequestHandler: handlers.set,
      sessionNotifications: Effect.gen(function*() {
        const mailbox = yield* Mailbox.make<JsonRpc.Notification>()
        const unsolicited = yield* connection.sessionNotifications
        yield* unsolicited.pipe(
          Stream.runForEach((n) =>
            Effect.flatMap(Connection.encodeOutgoing(n), (text) => {
              const c = text === undefined ? undefined : JsonRpc.parse(text)
              return c?._tag === "Notification" ? mailbox.offer(c.message) : Effect.succeed(false)
            })
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

/**
 * {@link client} for the `McpServer.McpServer` service of the context: a client transport
 * connected to the server an application built with `McpServer.layer`, e.g.
 * `McpClient.connect(yield* InProcess.clientFromService())` in a test of an app made of Layers.
 *
 * @since 0.2.0
 * @category constructors
 */
export const clientFromService = (
  options: ClientOptions = {}
): Effect.Effect<InProcessClientTransport, never, McpServer.McpServer> =>
  Effect.flatMap(McpServer.McpServer, (server) => client(server, options))

/**
 * {@link client} as a Layer providing `Transport.ClientTransport` (what `McpClient.layer` connects
 * over), connected to `server` in this process. The transport holds no resource of its own: the
 * Layer's Scope ends the client's use of it (`McpClient.layer` closes the client), the server lives
 * on.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import { McpClient, McpServer } from "presa-mcp"
 * import * as InProcess from "presa-mcp/transport/InProcess"
 *
 * const program = Effect.gen(function*() {
 *   const server = yield* McpServer.make({ name: "demo", version: "1.0.0" })
 *   const tools = Effect.flatMap(McpClient.McpClient, (client) => client.listAllTools)
 *   return yield* tools.pipe(Effect.provide(McpClient.layer().pipe(Layer.provide(InProcess.layerClient(server)))))
 * })
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layerClient = (
  server: McpServer.McpServer,
  options: ClientOptions = {}
): Layer.Layer<ClientTransport> => Layer.effect(ClientTransport, client(server, options))

/**
 * {@link layerClient} for the `McpServer.McpServer` service of the context: the in-process pair of
 * an application built from Layers (`McpServer.layer`, definition Layers), e.g.
 * `McpClient.layer().pipe(Layer.provide(InProcess.layerClientFromService()))`.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerClientFromService = (
  options: ClientOptions = {}
): Layer.Layer<ClientTransport, never, McpServer.McpServer> => Layer.effect(ClientTransport, clientFromService(options))
