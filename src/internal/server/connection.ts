/**
 * One connection to a server: what every transport does with the messages it has framed and
 * classified, written once, and published as `presa-mcp/Connection` (a user's transport gets it
 * all too). stdio (one connection per process), Streamable HTTP (one per legacy session, one per
 * endpoint for stateless requests), the in-process transport, the web handler and
 * `McpServer.dispatch` (a one-shot connection) are adapters over it (docs/architecture.md,
 * "Transports are Layers over ONE connection core"; docs/transports.md).
 *
 * A connection owns:
 * - the requests in flight, keyed by their exact id (`0` and `"0"` differ), each in its own fiber
 *   (or its caller's: an `inline` outlet), at most `maxInFlight` at once (`inflight.ts`);
 * - behind them a queue of at most `maxQueued` requests waiting for a slot: the reader goes on
 *   meanwhile, so a `notifications/cancelled` or a client's response is handled as it arrives;
 *   beyond the queue the reader waits (`overflow: "wait"`: a peer that floods is slowed down,
 *   never buffered without bound) or the request is refused with `503` (`"reject"`);
 * - `notifications/cancelled` (MCP 2025-11-25, Utilities, Cancellation): interrupts the request,
 *   or drops it unstarted while it waits; either way it sends no response;
 * - the server→client requests of its legacy session (MCP 2025-11-25, Client Features) and the
 *   client's responses that settle them;
 * - its legacy session's unsolicited notifications (list changes, resource updates);
 * - the end: `stopped` ends its open `subscriptions/listen` requests, then a drain with a timeout,
 *   then what is left is interrupted;
 * - the one encoding of each response (`encoding.ts`): every request gets exactly one response.
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type { AuthInfo } from "../../RequestContext.js"
import { rootFork } from "../runtime.js"
import * as Telemetry from "../telemetry.js"
import type * as Classify from "./classify.js"
import * as ClientRequests from "./clientRequests.js"
import * as Dispatch from "./dispatch.js"
import { encodeOutgoing, encodeResponse, writeReply } from "./encoding.js"
import * as Inflight from "./inflight.js"
import type { DispatchOptions, Headers, Reply, Server, Session } from "./model.js"
import { sessionNotifications } from "./subscriptions.js"

export { encodeOutgoing, writeReply } from "./encoding.js"

/** Default bound on the requests one connection runs at once. */
export const DEFAULT_MAX_IN_FLIGHT = 1024

/** Default bound on the requests that wait for a slot behind {@link DEFAULT_MAX_IN_FLIGHT}. */
export const DEFAULT_MAX_QUEUED = 256

/** Default time the end of a connection waits for its requests before interrupting them. */
export const DEFAULT_DRAIN_TIMEOUT: Duration.DurationInput = "5 seconds"

/** The `Retry-After` of a request refused at the bound (`overflow: "reject"`), in seconds. */
export const RETRY_AFTER_SECONDS = 1

/** Where one request's messages go. */
export interface Outlet {
  /** Writes the request's one response; `text` is its JSON encoding. */
  readonly reply: (reply: Reply, text: string) => Effect.Effect<void>
  /**
   * Writes a request-scoped notification (progress, log message, a listen stream's changes) or a
   * server→client request of the legacy session; may wait while the peer is not reading.
   * `undefined` when this response cannot carry them (HTTP without `text/event-stream` in
   * `Accept`): notifications are dropped and server→client requests fail with -32603.
   */
  readonly send: ((message: JsonRpc.Request | JsonRpc.Notification) => Effect.Effect<void>) | undefined
  /**
   * Called once the request's handling has ended: after its reply, or when it was interrupted or
   * dropped before it started (cancelled, the connection ended) and sends none.
   */
  readonly done?: ((exit: Exit.Exit<void>) => Effect.Effect<void>) | undefined
  /**
   * `true`: the Effect `receive` returns for a request runs it to its end in the caller's fiber
   * (waiting for a slot first, in the queue): interrupting that fiber cancels the request. Default:
   * the request runs in a fiber of its own and `receive` returns once it started or is queued.
   */
  readonly inline?: boolean | undefined
}

/**
 * The outlet of a message that writes nothing back (a notification, the client's response to a
 * server→client request): its reply, if any, is dropped.
 */
export const noOutlet: Outlet = { reply: () => Effect.void, send: undefined }

/** A classified message with what the transport knows of it. */
export interface Incoming {
  readonly message: JsonRpc.Classified
  /** HTTP request headers (2026-07-28 header checks and header-based era routing). */
  readonly headers?: Headers | undefined
  /** The caller a verified bearer token established (HTTP with `auth`). */
  readonly auth?: AuthInfo | undefined
  /** The other end as this message's transport knows it (HTTP: per request); else the connection's `peer`. */
  readonly peer?: Telemetry.Peer | undefined
  /**
   * The legacy session of this message alone, instead of the connection's (HTTP without a session
   * of its own: an `initialize`, a request when sessions are off); it sends no server→client requests.
   */
  readonly session?: Session | undefined
  /**
   * A request's era (or the era's failure) and method-table row, when the transport classified it
   * at its edge (HTTP does, to route it): not classified again. Without it the core classifies.
   */
  readonly classification?: Classify.Classification | undefined
}

/** Options of {@link make}. */
export interface Options {
  /** The connection's legacy session (stdio, in-process, an HTTP `Mcp-Session-Id`); none for stateless HTTP. */
  readonly session?: Session | undefined
  /**
   * Writes one message (its JSON text) to the peer: the outlet of every `receive` without one of its
   * own, and (with a `session`) where the session's unsolicited notifications go.
   */
  readonly send?: ((text: string) => Effect.Effect<void>) | undefined
  /** At most this many requests run at once. Default 1,024. */
  readonly maxInFlight?: number | undefined
  /** At most this many requests wait for a slot (in arrival order). Default 256. */
  readonly maxQueued?: number | undefined
  /**
   * A request that finds the slots and the queue full: `"wait"` (default) makes `receive` wait until
   * the queue has room (the reader waits with it); `"reject"` answers it at once with -32603 and
   * HTTP status `503` with `Retry-After: 1`.
   */
  readonly overflow?: "wait" | "reject" | undefined
  /** How long a server→client request waits for the client's answer. Default 60 seconds. */
  readonly clientRequestTimeout?: Duration.DurationInput | undefined
  /** Put in the ids of server→client requests (`s2c-<prefix><n>`): unique across instances. */
  readonly clientRequestIdPrefix?: string | undefined
  /**
   * What to do with a request whose id is in flight: `"ignore"` it (logged; a response would be
   * mistaken for the first request's, as on one pipe), `"reject"` it with -32600 (HTTP sessions,
   * where each request has its own response), or `"allow"` it (stateless HTTP: ids of different
   * clients may be equal, and no message can name a request).
   */
  readonly duplicateIds?: "ignore" | "reject" | "allow" | undefined
  /**
   * Completed when the transport that owns this connection stops (its own `stopped` then ends
   * this connection's listen streams too); default: the connection's own only.
   */
  readonly stopped?: Deferred.Deferred<void> | undefined
  /** The other end of every message of this connection (stdio: `pipe`), for spans and metrics. */
  readonly peer?: Telemetry.Peer | undefined
  /**
   * `false` once the peer is gone for good (stdio: stdout broken): a request waiting for a slot is
   * then dropped instead of started. Default: always open.
   */
  readonly isOpen?: (() => boolean) | undefined
  /** Sends the server→client requests instead of the connection (`McpServer.dispatch`: the caller's). */
  readonly sendRequest?: DispatchOptions["sendRequest"]
}

/** One connection (see the module's documentation). */
export interface Connection {
  readonly server: Server
  readonly session: Session | undefined
  /** When the connection was made (`Clock` nanoseconds): the start of its legacy session. */
  readonly startedNanos: bigint
  /** Completed when the connection stops: its open `subscriptions/listen` requests end. */
  readonly stopped: Deferred.Deferred<void>
  /**
   * Handles one message, in arrival order (the outlet defaults to the connection's `send`). The
   * Effect is what must finish before the next message of the same peer is handled: an
   * `initialize`, a response, a notification, a request while the queue is full, an `inline`
   * request; for a request started or queued it is `Effect.void` itself.
   */
  readonly receive: (incoming: Incoming, outlet?: Outlet) => Effect.Effect<void>
  /**
   * Starts an Effect in the connection's runtime (its context and fiber refs: logger, tracer), not
   * tracked: what a transport's reader leaves to run before the next message.
   */
  readonly runFork: (effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>
  /** The number of requests running or waiting for a slot. */
  readonly inFlight: () => number
  /** Drops every waiting request, interrupts every running one and waits for them. */
  readonly interruptAll: Effect.Effect<void>
  /** Cancels the request with this id (as `notifications/cancelled` does); `false` when there is none. */
  readonly cancel: (id: JsonRpc.RequestId) => Effect.Effect<boolean>
  /**
   * The session's unsolicited notifications (legacy list changes and resource updates) while the
   * Scope is open; empty without a session.
   */
  readonly sessionNotifications: Effect.Effect<Stream.Stream<JsonRpc.Notification>, never, Scope.Scope>
  /**
   * Ends the connection: `stopped` completes, requests still running or waiting get `drainTimeout`
   * to finish, then are interrupted. Closing the connection's Scope interrupts whatever still runs.
   */
  readonly stop: (drainTimeout?: Duration.DurationInput) => Effect.Effect<void>
}

/**
 * Builds a connection; the requests it started are interrupted when the Scope closes. With `send`
 * and a `session`, the session's unsolicited notifications go to `send` while the Scope is open.
 */
export const make = (server: Server, options: Options = {}): Effect.Effect<Connection, never, Scope.Scope> =>
  Effect.gen(function*() {
    const connection = yield* makeUnscoped(server, options)
    yield* Effect.addFinalizer(() => endSession(connection, options))
    const send = options.send
    if (send !== undefined && connection.session !== undefined) {
      // subscribed before the first message is read
      const unsolicited = yield* connection.sessionNotifications
      yield* unsolicited.pipe(Stream.runForEach(sendVia(send)), Effect.forkScoped)
    }
    return connection
  })

/**
 * The end of a connection: its requests are interrupted; a legacy session that was initialized
 * records `mcp.server.session.duration` (semantic-conventions-genai, docs/gen-ai/mcp.md, "Metrics").
 */
const endSession = (connection: Connection, options: Options): Effect.Effect<void> => {
  const session = connection.session
  if (session === undefined) return connection.interruptAll
  return Effect.zipRight(
    connection.interruptAll,
    Effect.flatMap(Ref.get(session.state), (state) =>
      state === undefined
        ? Effect.void
        : Telemetry.recordSession("server", connection.startedNanos, state.protocolVersion, options.peer))
  )
}

/**
 * Builds a connection that needs no Scope: its requests run in their callers' fibers (`inline`
 * outlets: the in-process transport, `McpServer.dispatch`); one `receive` starts lives until it
 * ends or `interruptAll`.
 */
export const makeUnscoped = (server: Server, options: Options = {}): Effect.Effect<Connection> =>
  Effect.gen(function*() {
    const runtime = Runtime.make({
      context: yield* Effect.context<never>(),
      fiberRefs: yield* Effect.getFiberRefs,
      runtimeFlags: Runtime.defaultRuntime.runtimeFlags
    })
    const runFork = rootFork(runtime)
    const state: State = {
      server,
      options,
      session: options.session,
      pending: options.session === undefined ? undefined : ClientRequests.makeUnsafe(options.clientRequestIdPrefix),
      stopped: options.stopped ?? (yield* Deferred.make<void>()),
      table: Inflight.make(
        runFork,
        options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT,
        options.maxQueued ?? DEFAULT_MAX_QUEUED
      ),
      defaultOutlet: options.send === undefined ? noOutlet : outletOf(options.send),
      shared: undefined
    }
    return makeConnection(state, runFork, yield* Clock.currentTimeNanos)
  })

/** What one connection holds; its functions below take it. */
interface State {
  readonly server: Server
  readonly options: Options
  readonly session: Session | undefined
  readonly pending: ClientRequests.Pending | undefined
  readonly stopped: Deferred.Deferred<void>
  readonly table: Inflight.Table
  readonly defaultOutlet: Outlet
  /**
   * The dispatch options of requests without headers, auth, peer or session of their own, built
   * once per `send` (stdio: one outlet for every request; in-process: one per client).
   */
  shared: { readonly send: Outlet["send"]; readonly options: DispatchOptions } | undefined
}

const makeConnection = (
  state: State,
  runFork: (effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>,
  startedNanos: bigint
): Connection => ({
  server: state.server,
  session: state.session,
  startedNanos,
  stopped: state.stopped,
  receive: (incoming, outlet = state.defaultOutlet) => receive(state, incoming, outlet),
  runFork,
  inFlight: () => Inflight.size(state.table),
  interruptAll: Inflight.interruptAll(state.table),
  cancel: (id) => Inflight.cancel(state.table, id),
  sessionNotifications: state.session === undefined
    ? Effect.succeed(Stream.empty)
    : sessionNotifications(state.server, state.session),
  stop: (drainTimeout = DEFAULT_DRAIN_TIMEOUT) => stop(state, drainTimeout)
})

/** The outlet over one `send` of JSON text (stdio, a WebSocket): replies and notifications alike. */
const outletOf = (send: (text: string) => Effect.Effect<void>): Outlet => ({
  reply: (_, text) => send(text),
  send: sendVia(send)
})

const sendVia =
  (send: (text: string) => Effect.Effect<void>) =>
  (message: JsonRpc.Request | JsonRpc.Notification): Effect.Effect<void> =>
    Effect.flatMap(encodeOutgoing(message), (text) => text === undefined ? Effect.void : send(text))

const receive = (state: State, incoming: Incoming, outlet: Outlet): Effect.Effect<void> => {
  const message = incoming.message
  switch (message._tag) {
    case "Request":
      return outlet.inline === true
        ? ended(inline(state, message.message, incoming, outlet), outlet)
        : onRequest(state, message.message, incoming, outlet)
    case "Notification":
      return message.message.method === McpSchema.Method.cancelled
        ? onCancelled(state, message.message.params)
        : Effect.asVoid(Dispatch.dispatchClassified(state.server, message, {
          session: incoming.session ?? state.session,
          headers: incoming.headers
        }))
    case "Response":
      return state.pending === undefined
        ? Effect.logDebug("ignored a response: this connection sends no requests")
        : Effect.flatMap(
          ClientRequests.resolve(state.pending, message.message),
          (settled) => settled ? Effect.void : Effect.logDebug("ignored a response to no pending request")
        )
    case "Invalid":
      return ended(
        Effect.flatMap(
          Dispatch.invalidResponse(incoming.session ?? state.session, message.id, message.error),
          (response) => outlet.reply({ message: response, status: 400 }, encodeResponse(response))
        ),
        outlet
      )
  }
}

/** The key of a request in the table: its id, or a token of its own (`duplicateIds: "allow"`). */
const keyOf = (state: State, request: JsonRpc.Request): Inflight.Key =>
  state.options.duplicateIds === "allow" ? {} : request.id

/** A request whose outlet is not `inline`: started in its own fiber, queued, or waited for. */
const onRequest = (state: State, request: JsonRpc.Request, incoming: Incoming, outlet: Outlet): Effect.Effect<void> => {
  // Run inline: it is fast, must not be cancelled, and requests read after it see its session.
  if (request.method === McpSchema.Method.initialize) return ended(answer(state, request, incoming, outlet), outlet)
  const table = state.table
  const key = keyOf(state, request)
  if (Inflight.has(table, key)) return ended(duplicate(state, request, outlet), outlet)
  const run = (): void => Inflight.start(table, key, ended(answer(state, request, incoming, outlet), outlet))
  if (!Inflight.full(table)) {
    run()
    return Effect.void
  }
  if (!Inflight.saturated(table)) {
    const drop = dropped(request, outlet)
    const isOpen = state.options.isOpen
    Inflight.enqueue(table, key, {
      start: isOpen === undefined ? run : () => isOpen() ? run() : Inflight.start(table, key, drop),
      drop
    })
    return Effect.void
  }
  if (state.options.overflow === "reject") return ended(busy(request, outlet), outlet)
  return Effect.zipRight(
    Inflight.until(table, queueHasRoom),
    Effect.suspend(() => onRequest(state, request, incoming, outlet))
  )
}

const queueHasRoom = (table: Inflight.Table): boolean => !Inflight.saturated(table)

/**
 * A request of an `inline` outlet, run in the caller's fiber, tracked by its key like the others.
 * Tracked and untracked in one uninterruptible region whose outcome handler untracks at once (no
 * `ensuring`, whose finalizer is two steps of its own): bench/README.md, "Issue #24: in-process,
 * session 9".
 */
const inline = (state: State, request: JsonRpc.Request, incoming: Incoming, outlet: Outlet): Effect.Effect<void> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.withFiberRuntime<void>((fiber) => {
      const table = state.table
      const key = keyOf(state, request)
      if (Inflight.has(table, key)) return restore(duplicate(state, request, outlet))
      const tracked = Effect.matchCauseEffect(restore(answer(state, request, incoming, outlet)), {
        onFailure: (cause) => {
          Inflight.untrack(table, key)
          return Effect.failCause(cause)
        },
        onSuccess: () => {
          Inflight.untrack(table, key)
          return Effect.void
        }
      })
      if (!Inflight.full(table)) {
        Inflight.track(table, key, fiber)
        return tracked
      }
      if (!Inflight.saturated(table)) return Effect.zipRight(restore(awaitSlot(table, key, fiber)), tracked)
      if (state.options.overflow === "reject") return restore(busy(request, outlet))
      return restore(Effect.zipRight(Inflight.until(table, queueHasRoom), inline(state, request, incoming, outlet)))
    })
  )

/**
 * Waits in the queue until the request's slot is taken for it (tracked under `fiber`); dropped
 * (cancelled) it interrupts the waiting fiber. Interrupted while it waits, it leaves the queue, or
 * gives back the slot it was just given.
 */
const awaitSlot = (
  table: Inflight.Table,
  key: Inflight.Key,
  fiber: Fiber.RuntimeFiber<unknown, unknown>
): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    Inflight.enqueue(table, key, {
      start: () => {
        Inflight.track(table, key, fiber)
        resume(Effect.void)
      },
      drop: Effect.sync(() => resume(Effect.interrupt))
    })
    return Effect.sync(() => {
      if (!Inflight.dequeue(table, key) && table.running.get(key) === fiber) Inflight.untrack(table, key)
    })
  })

/** Dispatches one request and writes its reply (checked). */
const answer = (state: State, request: JsonRpc.Request, incoming: Incoming, outlet: Outlet): Effect.Effect<void> =>
  Effect.flatMap(
    Dispatch.dispatchRequest(
      state.server,
      request,
      dispatchOptions(state, incoming, outlet),
      incoming.classification
    ),
    (reply) => writeReply(state.server, request, reply, outlet.reply)
  )

const dispatchOptions = (state: State, incoming: Incoming, outlet: Outlet): DispatchOptions => {
  if (
    incoming.headers !== undefined || incoming.auth !== undefined || incoming.peer !== undefined ||
    incoming.session !== undefined
  ) {
    return buildOptions(state, incoming, outlet)
  }
  const shared = state.shared
  if (shared !== undefined && shared.send === outlet.send) return shared.options
  const options = buildOptions(state, incoming, outlet)
  state.shared = { send: outlet.send, options }
  return options
}

const buildOptions = (state: State, incoming: Incoming, outlet: Outlet): DispatchOptions => {
  const send = outlet.send
  const pending = state.pending
  return {
    session: incoming.session ?? state.session,
    headers: incoming.headers,
    auth: incoming.auth,
    peer: incoming.peer ?? state.options.peer,
    shutdown: state.stopped,
    notify: send ?? noNotify,
    sendRequest: state.options.sendRequest ?? (pending === undefined || incoming.session !== undefined
      ? undefined
      : send === undefined
      ? cannotRequest
      : ClientRequests.send(pending, send, state.options.clientRequestTimeout ?? ClientRequests.DEFAULT_TIMEOUT))
  }
}

const duplicate = (state: State, request: JsonRpc.Request, outlet: Outlet): Effect.Effect<void> =>
  state.options.duplicateIds === "reject"
    ? writeReply(state.server, request, {
      message: JsonRpc.failure(request.id, JsonRpc.McpError.invalidRequest("Invalid Request: this id is in flight")),
      status: 400
    }, outlet.reply)
    : Effect.annotateLogs(
      Effect.logWarning("a request reuses the id of a request still in flight; ignored"),
      "requestId",
      request.id
    )

/** The reply of a request refused at the bound (`overflow: "reject"`): -32603, HTTP `503`, `Retry-After`. */
const busy = (request: JsonRpc.Request, outlet: Outlet): Effect.Effect<void> => {
  const message = JsonRpc.failure(
    request.id,
    JsonRpc.McpError.internalError("Server busy: too many requests in flight; retry later")
  )
  return outlet.reply(
    { message, status: 503, headers: { "retry-after": String(RETRY_AFTER_SECONDS) } },
    encodeResponse(message)
  )
}

/** A queued request dropped before it started: no response; the outlet hears it was interrupted. */
const dropped = (request: JsonRpc.Request, outlet: Outlet): Effect.Effect<void> =>
  Effect.zipRight(
    Effect.annotateLogs(Effect.logDebug("a request was cancelled before it started"), "requestId", request.id),
    outlet.done === undefined ? Effect.void : outlet.done(Exit.interrupt(FiberId.none))
  )

const onCancelled = (state: State, params: JsonRpc.JsonObject | undefined): Effect.Effect<void> => {
  const requestId = params?.requestId
  if (!JsonRpc.isRequestId(requestId)) return Effect.void
  return Effect.flatMap(Inflight.cancel(state.table, requestId), (found) =>
    found
      ? Effect.void
      : Effect.annotateLogs(
        Effect.logDebug("notifications/cancelled for a request that is not in flight"),
        "requestId",
        requestId
      ))
}

const stop = (state: State, drainTimeout: Duration.DurationInput): Effect.Effect<void> =>
  Effect.gen(function*() {
    yield* Deferred.succeed(state.stopped, undefined)
    const drained = yield* Inflight.until(state.table, isEmpty).pipe(Effect.timeoutOption(drainTimeout))
    if (Option.isSome(drained)) return
    yield* Effect.logWarning(
      `interrupting ${Inflight.size(state.table)} request(s) still running after the drain timeout`
    )
    yield* Inflight.interruptAll(state.table)
  })

const isEmpty = (table: Inflight.Table): boolean => Inflight.size(table) === 0

const noNotify = (): Effect.Effect<void> => Effect.void

/** `effect`, then the outlet's `done` with its exit. */
const ended = (effect: Effect.Effect<void>, outlet: Outlet): Effect.Effect<void> => {
  const done = outlet.done
  return done === undefined ? effect : Effect.onExit(effect, done)
}

const cannotRequest = (): Effect.Effect<never, JsonRpc.McpError> =>
  Effect.fail(
    JsonRpc.McpError.internalError(
      "Cannot send a request to the client: its Accept header does not admit text/event-stream"
    )
  )

/**
 * One message handled by a one-shot connection (`McpServer.dispatch`): the reply of a request, none
 * for a notification or a response. A one-shot connection holds nothing a later message could need
 * (no requests in flight to cancel, no server→client table: the caller's `sendRequest`, if any,
 * sends them), so none is built per message: the request runs in the caller's fiber (interrupting
 * it cancels the request) through the same dispatch as a connection's requests; `options` are the
 * caller's (its `notify`, `sendRequest`, `shutdown`, …). The reply is a value, not yet encoded: the
 * caller encodes it (a connection's transports do it once, checked, in `writeReply`; a caller of
 * `McpServer.dispatch` that writes it checks its own encoding). Encoding here only to check would
 * cost a `JSON.stringify` per call that the caller does again (bench: ~20 % of the server-only row).
 */
export const dispatchOnce = (
  server: Server,
  classified: JsonRpc.Classified,
  options: DispatchOptions = {}
): Effect.Effect<Option.Option<Reply>> => {
  if (classified._tag !== "Request") return Dispatch.dispatchClassified(server, classified, options)
  return Effect.map(Dispatch.dispatchRequest(server, classified.message, options), Option.some)
}
