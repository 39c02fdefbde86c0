/**
 * The client's connection core: what a client transport does with JSON-RPC messages, written once
 * for stdio and Streamable HTTP (the server's counterpart is `internal/server/connection`). It
 * owns
 *
 * - the requests in flight, by exact id (`0` and `"0"` differ): each is entered in `pending`,
 *   handed to the {@link Protocol}, and awaited in one `Effect.async` that a response settles
 *   synchronously (no fiber, queue or `Deferred` per request); a deadline or an interruption
 *   forgets it and tells the server the protocol's way (`Protocol.abandon`);
 * - the routing of the server's notifications: to the request whose channel carried them (HTTP:
 *   its POST's SSE response), else by `progressToken`, by the listen's `subscriptionId` (MCP
 *   2026-07-28, Subscriptions), `notifications/cancelled` by `requestId`, log messages to every
 *   request in flight (stdio gives them no correlation field); what no request takes goes to the
 *   session feed (`sessionNotifications`) and `Options.onNotification`;
 * - the server→client requests (legacy sessions, MCP 2025-11-25, Client Features), each answered in
 *   a fiber of its own (a `FiberMap` keyed by the server's id, so the server's
 *   `notifications/cancelled` interrupts it) and the answer sent with `Protocol.send`;
 * - the end: a channel lost (`lost`: what waits on it fails) and the end for good (`end`).
 *
 * A transport frames bytes and implements {@link Protocol}; messages it reads go to {@link receive}
 * (a response whose caller waits can be settled at once with {@link unsafeSettle}) or, as a
 * `Stream`, to {@link run}. `@effect/rpc`'s `RpcClient.Protocol` has the same split.
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberMap from "effect/FiberMap"
import * as PubSub from "effect/PubSub"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Take from "effect/Take"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import { type RequestHandler, type RequestOptions, TransportError } from "../../Transport.js"
import { startTimer } from "../runtime.js"
import { timeoutError, timeoutMillis } from "./deadline.js"
import { makeRequestHandlers, type RequestHandlers } from "./requestHandlers.js"

/**
 * What a transport does with messages: the message-level client protocol.
 *
 * - `write`: hands a request over now, in the step that entered it in the table (stdio: one line
 *   on stdin; HTTP: the POST starts in a fiber of its own, and what its response carries goes to
 *   {@link receive} with the request's id as `via`, or its failure to {@link failCause}). Yields
 *   `undefined` when handed over, a `TransportError` when it cannot be (the channel is gone), or
 *   an Effect to wait for before trying again (a stdio process being restarted); that wait counts
 *   against the request's timeout.
 * - `send`: sends a notification or a response (an answer to a server→client request).
 * - `abandon`: the caller gave `request` up (deadline, interruption) after it was written: tell
 *   the server (stdio: `notifications/cancelled`, never for `initialize`; HTTP: abort the POST, and
 *   in a legacy session `notifications/cancelled`).
 * - `listen`: opens the channel of the session's notifications for as long as the Scope is open
 *   (stdio: the current process; HTTP: the legacy GET stream) and fails when there is none.
 */
export interface Protocol {
  readonly write: (request: JsonRpc.Request) => undefined | TransportError | Effect.Effect<void, TransportError>
  readonly send: (message: JsonRpc.Notification | JsonRpc.Response) => Effect.Effect<void, TransportError>
  readonly abandon: (request: JsonRpc.Request) => void
  readonly listen: Effect.Effect<void, TransportError, Scope.Scope>
}

/** Options of a connection (a transport's own). */
export interface Options {
  /** Receives the notifications no request takes (besides the session feed); default: logged at debug level. */
  readonly onNotification?: ((notification: JsonRpc.Notification) => Effect.Effect<void>) | undefined
  /** The first transport-level handler of server→client requests (replaceable with `setRequestHandler`). */
  readonly onRequest?: RequestHandler | undefined
}

/** A request in flight: its waiter and where its notifications and server requests go. */
export interface Pending {
  /**
   * Resumes the waiting caller with the outcome and stops the request's deadline timer. Called
   * once the entry was taken out of `Connection.pending` (so at most once).
   */
  readonly settle: (exit: Exit.Exit<JsonRpc.Response, TransportError>) => void
  readonly progressToken: JsonRpc.RequestId | undefined
  readonly onNotification: ((notification: JsonRpc.Notification) => Effect.Effect<void>) | undefined
  readonly onRequest: RequestHandler | undefined
}

/** The state record of one client connection. */
export interface Connection {
  readonly options: Options
  /** Set once, by `make`, right after the transport built it over this record. */
  protocol: Protocol
  /**
   * The requests in flight, by id. A plain Map: every access is one synchronous step, and a
   * response resumes its waiter (`Pending.settle`) straight from it.
   */
  readonly pending: Map<JsonRpc.RequestId, Pending>
  /** Answers server→client requests. */
  readonly handlers: RequestHandlers
  /** Server→client requests being answered, by the server's id. */
  readonly serverRequests: FiberMap.FiberMap<JsonRpc.RequestId>
  /** The session feed: notifications no request takes, and the ends of the channel they came on. */
  readonly unsolicited: PubSub.PubSub<Take.Take<JsonRpc.Notification, TransportError>>
  /** Set once the connection ended for good; every later request fails with it. Mutable, read synchronously. */
  closed: TransportError | undefined
}

const detached: Protocol = {
  write: () => new TransportError({ reason: "Closed", message: "the connection has no transport" }),
  send: () => Effect.fail(new TransportError({ reason: "Closed", message: "the connection has no transport" })),
  abandon: () => undefined,
  listen: Effect.void
}

/**
 * A connection in the transport's Scope, over the protocol `build` makes of it (the protocol
 * feeds what it reads back into the connection, so it is built over the record).
 */
export const make = (
  options: Options,
  build: (connection: Connection) => Protocol
): Effect.Effect<Connection, never, Scope.Scope> =>
  Effect.gen(function*() {
    const connection: Connection = {
      options,
      protocol: detached,
      pending: new Map(),
      handlers: yield* makeRequestHandlers(options.onRequest),
      serverRequests: yield* FiberMap.make<JsonRpc.RequestId>(),
      unsolicited: yield* PubSub.unbounded<Take.Take<JsonRpc.Notification, TransportError>>(),
      closed: undefined
    }
    connection.protocol = build(connection)
    return connection
  })

// -- requests ------------------------------------------------------------------------------------

const progressTokenOf = (message: JsonRpc.Request): JsonRpc.RequestId | undefined => {
  const meta = message.params?._meta
  if (!JsonRpc.isObject(meta)) return undefined
  const token = meta[McpSchema.MetaKey.progressToken]
  return JsonRpc.isRequestId(token) ? token : undefined
}

/** Removes and returns the entry of `id` (synchronous). */
const unsafeTake = (connection: Connection, id: JsonRpc.RequestId): Pending | undefined => {
  const entry = connection.pending.get(id)
  if (entry !== undefined) connection.pending.delete(id)
  return entry
}

/**
 * Sends `message` and awaits its response: one `Effect.async` whose registration enters the
 * request in the table, hands it to the protocol (`write`, or the given one: a stdio process not
 * current yet) and starts its deadline, all in one synchronous step. A JSON-RPC error response is
 * a value. Fails with `TransportError`: the connection's end, `"Protocol"` when the id is already
 * in flight, `"Timeout"` past `options.timeout`, or what the protocol reported for it.
 */
export const request = (
  connection: Connection,
  message: JsonRpc.Request,
  options?: RequestOptions,
  write: Protocol["write"] = connection.protocol.write
): Effect.Effect<JsonRpc.Response, TransportError> =>
  // one parameter: an `Effect.async` registration with two gets an AbortController
  Effect.async<JsonRpc.Response, TransportError>((resume) => {
    if (connection.closed !== undefined) return resume(Effect.fail(connection.closed))
    const id = message.id
    if (connection.pending.has(id)) {
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
      onNotification: options?.onNotification,
      onRequest: options?.onRequest
    }
    connection.pending.set(id, entry)
    const written = write(message)
    if (written !== undefined) {
      connection.pending.delete(id)
      return resume(
        written instanceof TransportError
          ? Effect.fail(written)
          : afterWait(connection, message, options, written, write)
      )
    }
    if (connection.pending.get(id) !== entry) return // settled (or failed) while it was written
    const millis = timeoutMillis(options?.timeout)
    if (millis !== undefined) {
      cancelTimer = startTimer(millis, () => {
        if (unsafeTake(connection, id) === undefined) return
        resume(Exit.fail(timeoutError(message.method)))
        connection.protocol.abandon(message)
      })
    }
    // the caller gave up: forget the request and tell the server
    return Effect.sync(() => {
      if (cancelTimer !== undefined) cancelTimer()
      if (unsafeTake(connection, id) !== undefined) connection.protocol.abandon(message)
    })
  })

/** The protocol could not write yet: wait (counting against the timeout), then send the request. */
const afterWait = (
  connection: Connection,
  message: JsonRpc.Request,
  options: RequestOptions | undefined,
  wait: Effect.Effect<void, TransportError>,
  write: Protocol["write"]
): Effect.Effect<JsonRpc.Response, TransportError> => {
  const millis = timeoutMillis(options?.timeout)
  if (millis === undefined) return Effect.zipRight(wait, request(connection, message, options, write))
  return Effect.flatMap(Clock.currentTimeMillis, (startedAt) =>
    wait.pipe(
      Effect.timeoutFail({ duration: millis, onTimeout: () => timeoutError(message.method) }),
      Effect.zipRight(Clock.currentTimeMillis),
      Effect.flatMap((now) =>
        request(connection, message, { ...options, timeout: Math.max(1, millis - (now - startedAt)) }, write)
      )
    ))
}

/** Fails the request `id` with `cause` (its channel broke: an HTTP exchange failed); nothing when it is not in flight. */
export const failCause = (
  connection: Connection,
  id: JsonRpc.RequestId,
  cause: Cause.Cause<TransportError>
): Effect.Effect<void> => Effect.sync(() => unsafeTake(connection, id)?.settle(Exit.failCause(cause)))

/** A response whose caller waits, settled now (no fiber); `false` when no caller waits for it. */
export const unsafeSettle = (connection: Connection, response: JsonRpc.Response): boolean => {
  const id = response.id
  if (id === undefined || id === null) return false
  const entry = unsafeTake(connection, id)
  if (entry === undefined) return false
  entry.settle(Exit.succeed(response))
  return true
}

/** Fails every request in flight with `error` and empties the table. */
const failPending = (connection: Connection, error: TransportError): void => {
  const entries = Array.from(connection.pending.values())
  connection.pending.clear()
  const exit = Exit.fail(error)
  for (const entry of entries) entry.settle(exit)
}

// -- what the server sends -----------------------------------------------------------------------

/** A user handler (`onNotification`): its defect is logged, never fatal. */
const safely = (handler: Effect.Effect<void>): Effect.Effect<void> =>
  handler.pipe(Effect.catchAllDefect((defect) => Effect.logWarning("an onNotification handler died", defect)))

/** A notification no request takes: to the session feed and `Options.onNotification`. */
const unrouted = (connection: Connection, notification: JsonRpc.Notification): Effect.Effect<void> => {
  const { onNotification } = connection.options
  return Effect.zipRight(
    PubSub.publish(connection.unsolicited, Take.of(notification)),
    onNotification === undefined
      ? Effect.logDebug(`dropped a server notification: ${notification.method}`)
      : safely(onNotification(notification))
  )
}

/** The requests in flight `notification` belongs to, by its content. */
const targetsOf = (connection: Connection, notification: JsonRpc.Notification): ReadonlyArray<Pending> => {
  const params = notification.params ?? {}
  const meta = JsonRpc.isObject(params._meta) ? params._meta : {}
  const subscriptionId = meta[McpSchema.MetaKey.subscriptionId]
  const targets: Array<Pending> = []
  if (JsonRpc.isRequestId(subscriptionId)) {
    // a subscriptions/listen stream, whose subscriptionId is the listen request's id;
    // compared leniently, as some servers stringify numeric ids
    for (const [id, entry] of connection.pending) {
      if (String(id) === String(subscriptionId)) targets.push(entry)
    }
  } else if (notification.method === McpSchema.Method.progress) {
    const token = params.progressToken
    for (const entry of connection.pending.values()) {
      if (entry.progressToken !== undefined && entry.progressToken === token) targets.push(entry)
    }
  } else if (notification.method === McpSchema.Method.cancelled) {
    const requestId = params.requestId
    const entry = JsonRpc.isRequestId(requestId) ? connection.pending.get(requestId) : undefined
    if (entry !== undefined) targets.push(entry)
  } else if (notification.method === McpSchema.Method.message) {
    // no correlation field for log messages: every request in flight gets them
    targets.push(...connection.pending.values())
  }
  return targets
}

/**
 * Delivers a notification: the server's `notifications/cancelled` stops our answer to its
 * request; then to the request whose channel carried it (`via`), else to the requests it names,
 * else to {@link unrouted}.
 */
const route = (
  connection: Connection,
  notification: JsonRpc.Notification,
  via: JsonRpc.RequestId | undefined
): Effect.Effect<void> =>
  Effect.gen(function*() {
    if (notification.method === McpSchema.Method.cancelled) {
      const requestId = notification.params?.requestId
      if (JsonRpc.isRequestId(requestId) && (yield* FiberMap.has(connection.serverRequests, requestId))) {
        yield* FiberMap.remove(connection.serverRequests, requestId)
      }
    }
    const channel = via === undefined ? undefined : connection.pending.get(via)
    if (channel !== undefined) {
      return channel.onNotification === undefined
        ? yield* Effect.logDebug(`dropped a server notification on a request's stream: ${notification.method}`)
        : yield* safely(channel.onNotification(notification))
    }
    const targets = targetsOf(connection, notification)
    if (targets.length === 0 && notification.method === McpSchema.Method.progress) {
      return yield* Effect.logDebug("dropped a progress notification for an unknown token").pipe(
        Effect.annotateLogs("progressToken", String(notification.params?.progressToken))
      )
    }
    const handlers = targets.flatMap((t) => t.onNotification === undefined ? [] : [t.onNotification])
    if (handlers.length === 0) return yield* unrouted(connection, notification)
    for (const handler of handlers) yield* safely(handler(notification))
  })

/**
 * Answers a server→client request in a fiber of its own (the reader goes on meanwhile): the
 * handler of the request whose channel carried it (`via`) first, then the transport-level one,
 * then the default; the answer goes out with `Protocol.send` (a failure is logged).
 */
const answer = (
  connection: Connection,
  request: JsonRpc.Request,
  via: JsonRpc.RequestId | undefined
): Effect.Effect<void> => {
  const preferred = via === undefined ? undefined : connection.pending.get(via)?.onRequest
  return FiberMap.run(
    connection.serverRequests,
    request.id,
    connection.handlers.answer(request, preferred).pipe(
      Effect.flatMap((response) => connection.protocol.send(response)),
      Effect.catchAll((e) => Effect.logWarning(`could not answer the server's ${request.method}: ${e.message}`))
    ),
    { onlyIfMissing: true }
  ).pipe(Effect.asVoid)
}

/**
 * One message from the server, classified once. `via`: the request whose channel carried it (an
 * HTTP POST's SSE response), if any. A response settles its request (one for no request in flight
 * is logged and dropped); notifications are routed; requests answered.
 */
export const receive = (
  connection: Connection,
  incoming: JsonRpc.Classified,
  via?: JsonRpc.RequestId
): Effect.Effect<void> => {
  switch (incoming._tag) {
    case "Response": {
      const response = incoming.message
      if (unsafeSettle(connection, response)) return Effect.void
      if (response.id === undefined || response.id === null) {
        return Effect.logWarning("the server sent an error not tied to a request").pipe(
          Effect.annotateLogs("error", JsonRpc.encode(response))
        )
      }
      return Effect.logDebug("a response for a request that is not pending (unknown, or cancelled)").pipe(
        Effect.annotateLogs("requestId", response.id)
      )
    }
    case "Notification":
      return route(connection, incoming.message, via)
    case "Request":
      return answer(connection, incoming.message, via)
    case "Invalid":
      return Effect.logWarning(`skipped an invalid message from the server: ${incoming.error.message}`)
  }
}

/** {@link receive} over a stream of messages, in order, until it ends. */
export const run = <E>(
  connection: Connection,
  incoming: Stream.Stream<JsonRpc.Classified, E>,
  via?: JsonRpc.RequestId
): Effect.Effect<void, E> => Stream.runForEach(incoming, (message) => receive(connection, message, via))

// -- the session feed and the end ----------------------------------------------------------------

/**
 * The session's notifications while the Scope is open: a subscription to the feed, then the
 * protocol's channel opened (so nothing sent once it is open is missed). The stream ends or fails
 * as the channel does ({@link endSession}).
 */
export const sessionNotifications = (
  connection: Connection
): Effect.Effect<Stream.Stream<JsonRpc.Notification, TransportError>, TransportError, Scope.Scope> =>
  Effect.gen(function*() {
    const subscription = yield* PubSub.subscribe(connection.unsolicited)
    yield* connection.protocol.listen
    if (connection.closed !== undefined) return yield* connection.closed
    return Stream.flattenTake(Stream.fromQueue(subscription))
  })

/** The channel of the session's notifications ended (`exit`): the open session streams end with it. */
export const endSession = (connection: Connection, exit: Exit.Exit<void, TransportError>): Effect.Effect<void> =>
  Effect.asVoid(PubSub.publish(connection.unsolicited, Exit.isSuccess(exit) ? Take.end : Take.failCause(exit.cause)))

/**
 * A channel is gone (a stdio process exited) but the connection goes on: the requests in flight
 * fail with `error`, answers to the server's requests stop, the session streams fail.
 */
export const lost = (connection: Connection, error: TransportError): Effect.Effect<void> =>
  Effect.suspend(() => {
    failPending(connection, error)
    return Effect.zipRight(FiberMap.clear(connection.serverRequests), endSession(connection, Exit.fail(error)))
  })

/** The end for good: {@link lost}, and every later request fails with `error`. */
export const end = (connection: Connection, error: TransportError): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (connection.closed === undefined) connection.closed = error
    return lost(connection, connection.closed)
  })
