/**
 * The stdio client's request table and writing: a request is entered in `Client.pending`,
 * written as one line, and awaited on its Deferred, which the reader settles synchronously
 * (`reading`); a deadline or an interruption forgets it and sends `notifications/cancelled`
 * (never for `initialize`: MCP 2025-11-25, Utilities › Cancellation, and the schema's
 * `CancelledNotification`). Also the transport's `notify`, and the legacy handshake that a
 * restart replays (`lifecycle`).
 *
 * The request path is the hot one (bench/README.md, "What changed"): no fiber, queue or Effect
 * layer per request beyond the caller's own wait.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as JsonRpc from "../../../../JsonRpc.js"
import * as McpSchema from "../../../../McpSchema.js"
import { type RequestOptions, TransportError } from "../../../../Transport.js"
import { timeoutError } from "../../../client/deadline.js"
import { MAX_TIMER_MILLIS, startTimer } from "../../../runtime.js"
import { type Client, closedError, type Connection, type Pending } from "./state.js"

const progressTokenOf = (message: JsonRpc.Request): JsonRpc.RequestId | undefined => {
  const meta = message.params?._meta
  if (!JsonRpc.isObject(meta)) return undefined
  const token = meta[McpSchema.MetaKey.progressToken]
  return JsonRpc.isRequestId(token) ? token : undefined
}

/** `RequestOptions.timeout` in milliseconds; `undefined`: no bound (absent, infinite, or beyond a timer's range). */
const timeoutMillis = (timeout: Duration.DurationInput | undefined): number | undefined => {
  if (timeout === undefined) return undefined
  const duration = Duration.decode(timeout)
  if (!Duration.isFinite(duration)) return undefined
  const millis = Duration.toMillis(duration)
  return millis > MAX_TIMER_MILLIS ? undefined : millis
}

/** Removes and returns the entry of `id` (synchronous). */
export const unsafeTake = (client: Client, id: JsonRpc.RequestId): Pending | undefined => {
  const entry = client.pending.get(id)
  if (entry !== undefined) client.pending.delete(id)
  return entry
}

/** Fails every request in flight with `error` and empties the table. */
export const failPending = (client: Client, error: TransportError): Effect.Effect<void> =>
  Effect.gen(function*() {
    const entries = Array.from(client.pending.values())
    client.pending.clear()
    for (const entry of entries) yield* Deferred.fail(entry.deferred, error)
  })

/** Writes one message as a line; `false` when the process is gone. */
export const sendOn = (send: Connection["send"], message: JsonRpc.Message): Effect.Effect<boolean> =>
  Effect.sync(() => send(JsonRpc.encode(message) + "\n"))

/** A request on one given process (the current one, or a restarted one being set up). */
export const requestOn = (
  client: Client,
  connection: Connection,
  message: JsonRpc.Request,
  requestOptions?: RequestOptions
): Effect.Effect<JsonRpc.Response, TransportError> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(Ref.get(client.lifecycle), (s) => {
      if (s.closed !== undefined) {
        return Effect.fail(s.closed)
      }
      if (client.pending.has(message.id)) {
        return Effect.fail(
          new TransportError({
            reason: "Protocol",
            message: `a request with id ${JSON.stringify(message.id)} is already in flight`
          })
        )
      }
      const deferred = Deferred.unsafeMake<JsonRpc.Response, TransportError>(FiberId.none)
      client.pending.set(message.id, {
        deferred,
        progressToken: progressTokenOf(message),
        onNotification: requestOptions?.onNotification
      })
      if (!connection.send(JsonRpc.encode(message) + "\n")) {
        client.pending.delete(message.id)
        return Effect.fail(closedError("the server process is gone"))
      }
      // The deadline fails the waiter directly; `cancel` then tells the server, as for an
      // interruption (the entry is still pending, unless the response won the race).
      const millis = timeoutMillis(requestOptions?.timeout)
      const cancelTimer = millis === undefined ? undefined : startTimer(millis, () => {
        Deferred.unsafeDone(deferred, Exit.fail(timeoutError(message.method)))
      })
      return restore(Deferred.await(deferred)).pipe(
        Effect.onExit((exit) => {
          if (cancelTimer !== undefined) cancelTimer()
          return Exit.isSuccess(exit) ? Effect.void : cancel(client, connection, message)
        })
      )
    })
  )

// The caller gave up: forget the request and tell the server (never for `initialize`).
const cancel = (client: Client, connection: Connection, message: JsonRpc.Request): Effect.Effect<void> =>
  Effect.suspend(() =>
    unsafeTake(client, message.id) === undefined || message.method === McpSchema.Method.initialize
      ? Effect.void
      : Effect.asVoid(sendOn(
        connection.send,
        JsonRpc.notification(McpSchema.Method.cancelled, {
          requestId: message.id,
          reason: "The client cancelled the request"
        })
      ))
  )

/** The current process; waits while the transport restarts one. */
export const current = (client: Client): Effect.Effect<Connection, TransportError> =>
  Effect.flatMap(
    Ref.get(client.lifecycle),
    (s) => s.closed !== undefined ? Effect.fail(s.closed) : Deferred.await(s.connection)
  )

/**
 * `use` on the current process for a request with `timeout`: at once when it is running; while
 * the transport restarts one, the wait counts against the request's timeout (`use` gets the rest).
 */
const onCurrent = <A>(
  client: Client,
  message: JsonRpc.Request,
  requestOptions: RequestOptions | undefined,
  use: (connection: Connection, rest: RequestOptions | undefined) => Effect.Effect<A, TransportError>
): Effect.Effect<A, TransportError> =>
  Effect.flatMap(Ref.get(client.lifecycle), (s) => {
    if (s.closed !== undefined) return Effect.fail(s.closed)
    return Effect.flatMap(Deferred.poll(s.connection), (ready) => {
      // running (the hot path): straight on, no tuple or `map` step
      if (Option.isSome(ready)) return Effect.flatMap(ready.value, (c) => use(c, requestOptions))
      const millis = timeoutMillis(requestOptions?.timeout)
      if (millis === undefined) return Effect.flatMap(Deferred.await(s.connection), (c) => use(c, requestOptions))
      const startedAt = Date.now()
      return Deferred.await(s.connection).pipe(
        Effect.timeoutFail({ duration: millis, onTimeout: () => timeoutError(message.method) }),
        Effect.flatMap((c) => use(c, { ...requestOptions, timeout: Math.max(1, millis - (Date.now() - startedAt)) }))
      )
    })
  })

/** The transport's `request`: on the current process; a successful `initialize` is kept for a restart's replay. */
export const request = (
  client: Client,
  message: JsonRpc.Request,
  requestOptions?: RequestOptions
): Effect.Effect<JsonRpc.Response, TransportError> =>
  onCurrent(
    client,
    message,
    requestOptions,
    (connection, rest) =>
      message.method === McpSchema.Method.initialize && client.options.restart !== undefined
        ? Effect.tap(
          requestOn(client, connection, message, rest),
          (response) =>
            JsonRpc.isErrorResponse(response)
              ? Effect.void
              : Ref.update(client.handshake, (h) => ({ ...h, init: message }))
        )
        : requestOn(client, connection, message, rest)
  )

/** The transport's `notify`: on the current process; `notifications/initialized` is kept for a restart's replay. */
export const notify = (client: Client, message: JsonRpc.Notification): Effect.Effect<void, TransportError> =>
  Effect.gen(function*() {
    const connection = yield* current(client)
    if (!(yield* sendOn(connection.send, message))) return yield* closedError("the server process is gone")
    if (message.method === McpSchema.Method.initialized) {
      yield* Ref.update(client.handshake, (h) => ({ ...h, initialized: true }))
    }
  })
