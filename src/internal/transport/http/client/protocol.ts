/**
 * The Streamable HTTP client's message-level protocol under the connection core
 * (`internal/client/connection`). A request is one exchange: a POST whose response (JSON, or an
 * SSE stream that carries notifications and server→client requests before the reply) feeds the
 * core, started in a fiber of its own with the caller's context (MCP 2025-11-25 and 2026-07-28,
 * Transports › Streamable HTTP › Sending Messages to the Server); the reply is settled after the
 * transport learned from it (session id, negotiated version, tool schemas), and a failed exchange
 * fails that request. An abandoned request's POST is aborted, which is the modern cancellation;
 * in a legacy session `notifications/cancelled` is POSTed too. Answers to server→client requests
 * are POSTed with the session headers; the session's notifications come from the standalone GET
 * stream (`standalone`).
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Ref from "effect/Ref"
import * as Runtime from "effect/Runtime"
import * as RuntimeFlags from "effect/RuntimeFlags"
import * as JsonRpc from "../../../../JsonRpc.js"
import * as McpSchema from "../../../../McpSchema.js"
import { type RequestOptions, TransportError } from "../../../../Transport.js"
import * as Core from "../../../client/connection.js"
import { rootFork } from "../../../runtime.js"
import { withAuthorization } from "./auth.js"
import { sessionHeaders } from "./headers.js"
import { notify, observe, send } from "./post.js"
import { cancelLegacy, close as closeSession, recover } from "./session.js"
import { listen, standing } from "./standalone.js"
import { type Client, closedError, drain, http404, post } from "./state.js"

/** A request's POST, resent once after re-initializing when the legacy session was gone; its reply once learned from. */
const exchange = (client: Client, message: JsonRpc.Request): Effect.Effect<JsonRpc.Response, TransportError> =>
  withAuthorization(
    client,
    message.method,
    "POST",
    Effect.gen(function*() {
      const st = yield* Ref.get(client.state)
      if (st.closed) return yield* closedError()
      let outcome = yield* send(client, message, st)
      if (outcome._tag === "SessionGone" && st.sessionId !== undefined) {
        yield* recover(client, st.sessionId)
        outcome = yield* send(client, message, yield* Ref.get(client.state))
      }
      if (outcome._tag === "SessionGone") {
        return yield* http404("the session was not found, even after re-initialization")
      }
      yield* observe(client, message, outcome)
      return outcome.response
    })
  )

/** The end of an exchange, for the core: the reply settles the request, a failure fails it. */
const settle = (client: Client, message: JsonRpc.Request) =>
  Effect.matchCauseEffect(exchange(client, message), {
    onFailure: (cause): Effect.Effect<void> =>
      Core.failCause(
        client.connection,
        message.id,
        Cause.isInterruptedOnly(cause)
          ? Cause.fail(new TransportError({ reason: "Closed", message: "the exchange was interrupted" }))
          : cause
      ),
    onSuccess: (response) => Core.receive(client.connection, { _tag: "Response", message: response })
  })

/** The core's `write`: starts the exchange of a request now, as a root fiber of `runtime`. */
const startIn = (client: Client, runtime: Runtime.Runtime<never>): Core.Protocol["write"] => {
  const fork = rootFork(runtime)
  return (request) => {
    const fiber = fork(settle(client, request))
    if (fiber.unsafePoll() !== null) return undefined
    client.exchanges.set(request.id, fiber)
    fiber.addObserver(() => {
      if (client.exchanges.get(request.id) === fiber) client.exchanges.delete(request.id)
    })
    return undefined
  }
}

/** The caller gave `request` up: its POST is aborted; a legacy session is told with `notifications/cancelled`. */
const abandon = (client: Client, request: JsonRpc.Request): void => {
  const fiber = client.exchanges.get(request.id)
  if (fiber !== undefined) {
    client.exchanges.delete(request.id)
    fiber.unsafeInterruptAsFork(FiberId.none)
  }
  rootFork(client.runtime)(Effect.flatMap(Ref.get(client.state), (st) => cancelLegacy(client, request, st)))
}

/** Our answer to a server→client request, POSTed with the session headers; a refusal is logged. */
const answer = (client: Client, response: JsonRpc.Response): Effect.Effect<void, TransportError> =>
  Effect.gen(function*() {
    const st = yield* Ref.get(client.state)
    if (st.closed) return
    const reply = yield* post(client, response, sessionHeaders(st))
    yield* drain(client, reply)
    if (reply.status < 200 || reply.status >= 300) {
      yield* Effect.logWarning(`Streamable HTTP: the server refused our answer with HTTP ${reply.status}`)
    }
  })

/** The protocol of the connection core over HTTP. */
export const make = (client: Client): Core.Protocol => ({
  write: startIn(client, client.runtime),
  send: (message) => "method" in message ? notify(client, message) : answer(client, message),
  abandon: (request) => abandon(client, request),
  listen: listen(client)
})

/** The transport's `request`: through the core, the exchange started with the caller's context (its span, its services). */
export const request = (
  client: Client,
  message: JsonRpc.Request,
  requestOptions?: RequestOptions
): Effect.Effect<JsonRpc.Response, TransportError> =>
  Effect.withFiberRuntime((caller, status) =>
    Core.request(
      client.connection,
      message,
      requestOptions,
      startIn(
        client,
        Runtime.make({
          context: caller.currentContext,
          // interruptible even when the caller is not (a finalizer's request): `abandon` and the
          // transport's end interrupt it
          runtimeFlags: RuntimeFlags.enable(status.runtimeFlags, RuntimeFlags.Interruption),
          fiberRefs: caller.getFiberRefs()
        })
      )
    )
  )

/** The transport's `notify`; after `notifications/initialized` the standing GET stream of a legacy session opens. */
export const notifyThen = (client: Client, message: JsonRpc.Notification): Effect.Effect<void, TransportError> =>
  message.method === McpSchema.Method.initialized
    ? Effect.zipRight(notify(client, message), standing(client))
    : notify(client, message)

/**
 * The end of the transport's Scope: every request in flight fails with `"Closed"`, the exchanges
 * are interrupted, a legacy session is DELETEd (best effort).
 */
export const close = (client: Client): Effect.Effect<void> =>
  Effect.gen(function*() {
    yield* Core.end(client.connection, closedError())
    const fibers = Array.from(client.exchanges.values())
    client.exchanges.clear()
    yield* Fiber.interruptAll(fibers)
    yield* closeSession(client)
  })
