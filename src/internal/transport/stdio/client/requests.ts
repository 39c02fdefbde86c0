/**
 * The stdio client's request table and writing: a request is entered in `Client.pending`,
 * written as one line, and awaited in one `Effect.async`, which the reader resumes synchronously
 * (`Pending.settle`, from `reading`); a deadline or an interruption forgets it and sends `notifications/cancelled`
 * (never for `initialize`: MCP 2025-11-25, Utilities › Cancellation, and the schema's
 * `CancelledNotification`). Also the transport's `notify`, and the legacy handshake that a
 * restart replays (`lifecycle`).
 *
 * The request path is the hot one (bench/README.md, "Issue #24: client, session 8"): no fiber,
 * queue, Deferred or Ref read per request beyond the caller's own wait.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as MutableRef from "effect/MutableRef"
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
  Effect.sync(() => {
    const entries = Array.from(client.pending.values())
    client.pending.clear()
    const exit = Exit.fail(error)
    for (const entry of entries) entry.settle(exit)
  })

/** Writes one message as a line, now; `false` when the process is gone. */
const writeLine = (send: Connection["send"], message: JsonRpc.Message): boolean => send(JsonRpc.encode(message) + "\n")

/** {@link writeLine} when the Effect runs. */
export const sendOn = (send: Connection["send"], message: JsonRpc.Message): Effect.Effect<boolean> =>
  Effect.sync(() => writeLine(send, message))

/** Tells the server the client gave up `message` (never for `initialize`). */
const tellCancelled = (connection: Connection, message: JsonRpc.Request): void => {
  if (message.method === McpSchema.Method.initialize) return
  writeLine(
    connection.send,
    JsonRpc.notification(McpSchema.Method.cancelled, {
      requestId: message.id,
      reason: "The client cancelled the request"
    })
  )
}

/**
 * A request on one given process (a restarted one being set up), or with `connection`
 * `undefined` on the current one: one `Effect.async` whose registration enters the request in
 * `Client.pending`, writes it and starts its deadline, all in one synchronous step; the reader
 * resumes it with the response (`Pending.settle`). The deadline forgets the request, fails the
 * waiter and tells the server; so does an interruption (the canceller).
 */
export const requestOn = (
  client: Client,
  connection: Connection | undefined,
  message: JsonRpc.Request,
  requestOptions?: RequestOptions
): Effect.Effect<JsonRpc.Response, TransportError> =>
  // one parameter: an `Effect.async` registration with two gets an AbortController
  Effect.async<JsonRpc.Response, TransportError>((resume) => {
    const s = MutableRef.get(client.lifecycle)
    if (s.closed !== undefined) return resume(Effect.fail(s.closed))
    const target = connection ?? s.running
    if (target === undefined) {
      // no process running (one is starting): the fiber goes on with the wait for it (no
      // canceller was returned, so an interruption just ends that wait)
      return resume(onCurrent(client, message, requestOptions, (c, rest) => requestOn(client, c, message, rest)))
    }
    const id = message.id
    if (client.pending.has(id)) {
      return resume(Effect.fail(
        new TransportError({
          reason: "Protocol",
          message: `a request with id ${JSON.stringify(id)} is already in flight`
        })
      ))
    }
    let cancelTimer: (() => void) | undefined
    const entry: Pending = {
      settle: (exit) => {
        if (cancelTimer !== undefined) cancelTimer()
        resume(exit)
      },
      progressToken: progressTokenOf(message),
      onNotification: requestOptions?.onNotification
    }
    client.pending.set(id, entry)
    if (!writeLine(target.send, message)) {
      client.pending.delete(id)
      return resume(Effect.fail(closedError("the server process is gone")))
    }
    const millis = timeoutMillis(requestOptions?.timeout)
    if (millis !== undefined) {
      cancelTimer = startTimer(millis, () => {
        if (unsafeTake(client, id) === undefined) return
        resume(Exit.fail(timeoutError(message.method)))
        tellCancelled(target, message)
      })
    }
    // the caller gave up: forget the request and tell the server
    return Effect.sync(() => {
      if (cancelTimer !== undefined) cancelTimer()
      if (unsafeTake(client, id) !== undefined) tellCancelled(target, message)
    })
  })

/** The current process; waits while the transport restarts one. */
export const current = (client: Client): Effect.Effect<Connection, TransportError> =>
  Effect.suspend(() => {
    const s = MutableRef.get(client.lifecycle)
    return s.closed !== undefined ? Effect.fail(s.closed) : Deferred.await(s.connection)
  })

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
  Effect.suspend(() => {
    const s = MutableRef.get(client.lifecycle)
    if (s.closed !== undefined) return Effect.fail(s.closed)
    if (s.running !== undefined) return use(s.running, requestOptions)
    // a process is starting: the wait for it counts against the request's timeout
    const millis = timeoutMillis(requestOptions?.timeout)
    if (millis === undefined) return Effect.flatMap(Deferred.await(s.connection), (c) => use(c, requestOptions))
    const startedAt = Date.now()
    return Deferred.await(s.connection).pipe(
      Effect.timeoutFail({ duration: millis, onTimeout: () => timeoutError(message.method) }),
      Effect.flatMap((c) => use(c, { ...requestOptions, timeout: Math.max(1, millis - (Date.now() - startedAt)) }))
    )
  })

/** The transport's `request`: on the current process; a successful `initialize` is kept for a restart's replay. */
export const request = (
  client: Client,
  message: JsonRpc.Request,
  requestOptions?: RequestOptions
): Effect.Effect<JsonRpc.Response, TransportError> =>
  message.method !== McpSchema.Method.initialize || client.options.restart === undefined
    ? requestOn(client, undefined, message, requestOptions)
    : onCurrent(
      client,
      message,
      requestOptions,
      (connection, rest) =>
        Effect.tap(
          requestOn(client, connection, message, rest),
          (response) =>
            JsonRpc.isErrorResponse(response)
              ? Effect.void
              : Ref.update(client.handshake, (h) => ({ ...h, init: message }))
        )
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
