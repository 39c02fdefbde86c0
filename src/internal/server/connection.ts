/**
 * One connection to a server: what every transport does with the messages it has framed and
 * classified, written once. stdio (one connection per process), Streamable HTTP (one per legacy
 * session, one per stateless request), the in-process transport and the web handler are adapters
 * over it (docs/architecture.md, "Transports are Layers over ONE connection core").
 *
 * A connection owns:
 * - the requests in flight, keyed by their exact id (`0` and `"0"` differ), each in its own fiber,
 *   with a bound on how many run at once (a request beyond it waits for a slot: the transport's
 *   reader waits with it, so a peer that floods is slowed down, never buffered without bound);
 * - `notifications/cancelled` (MCP 2025-11-25, Utilities, Cancellation): interrupts the request,
 *   which then sends no response;
 * - the server→client requests of its legacy session (MCP 2025-11-25, Client Features) and the
 *   client's responses that settle them;
 * - its legacy session's unsolicited notifications (list changes, resource updates);
 * - the end: `stopped` ends its open `subscriptions/listen` requests, then a drain with a timeout,
 *   then what is left is interrupted;
 * - the one encoding of each response: a result JSON cannot carry (a `BigInt`, a cycle, nesting too
 *   deep) is logged and answered with -32603, or with an `isError` result for `tools/call`, so
 *   every request gets exactly one response on every transport.
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
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
import type { Headers, Reply, Server, Session } from "./model.js"
import { sessionNotifications } from "./subscriptions.js"

/** Default bound on the requests one connection runs at once. */
export const DEFAULT_MAX_IN_FLIGHT = 1024

/** Default time the end of a connection waits for its requests before interrupting them. */
export const DEFAULT_DRAIN_TIMEOUT: Duration.DurationInput = "5 seconds"

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
   * Called once the request's handling has ended: after its reply, or when it was interrupted
   * (cancelled, the connection closed) and sends none.
   */
  readonly done?: ((exit: Exit.Exit<void>) => Effect.Effect<void>) | undefined
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
   * A request's era (or the era's failure) and method-table row, when the transport classified it
   * at its edge (HTTP does, to route it): not classified again. Without it the core classifies.
   */
  readonly classification?: Classify.Classification | undefined
}

/** Options of {@link make}. */
export interface Options {
  /** The connection's legacy session (stdio, in-process, an HTTP `Mcp-Session-Id`); none for stateless HTTP. */
  readonly session?: Session | undefined
  /** At most this many requests run at once; further ones wait for a slot. Default 1,024. */
  readonly maxInFlight?: number | undefined
  /** How long a server→client request waits for the client's answer. Default 60 seconds. */
  readonly clientRequestTimeout?: Duration.DurationInput | undefined
  /** Put in the ids of server→client requests (`s2c-<prefix><n>`): unique across instances. */
  readonly clientRequestIdPrefix?: string | undefined
  /**
   * What to do with a request whose id is already in flight: `"ignore"` it (logged; a response
   * would be mistaken for the first request's, as on one pipe) or `"reject"` it with -32600
   * (HTTP, where each request has its own response).
   */
  readonly duplicateIds?: "ignore" | "reject" | undefined
  /**
   * Completed when the transport that owns this connection stops (its own `stopped` then ends
   * this connection's listen streams too); default: the connection's own only.
   */
  readonly stopped?: Deferred.Deferred<void> | undefined
  /** The other end of every message of this connection (stdio: `pipe`), for spans and metrics. */
  readonly peer?: Telemetry.Peer | undefined
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
   * Handles one message, in arrival order. Returns what must finish before the next message of
   * the same peer is handled (an `initialize`, a response, a notification, a request waiting for
   * a slot), or `undefined` when the message is handled (a request started in its own fiber).
   */
  readonly receive: (incoming: Incoming, outlet: Outlet) => Effect.Effect<void> | undefined
  /**
   * Runs one request in the current fiber (the in-process transport, whose caller waits for the
   * reply anyway), tracked by its id like the requests `receive` starts: `notifications/cancelled`
   * interrupts it, the bound on requests in flight applies, a duplicate id is handled by
   * `duplicateIds`. `then` runs once the request's handling has ended (its reply written), in
   * the step that stops tracking it, uninterruptibly: what the caller makes of the reply, kept
   * synchronous (the in-process transport's parse of the response).
   */
  readonly run: <A, E>(
    request: JsonRpc.Request,
    incoming: Incoming,
    outlet: Outlet,
    then: () => Effect.Effect<A, E>
  ) => Effect.Effect<A, E>
  /**
   * Starts an Effect in the connection's runtime (its context and fiber refs: logger, tracer), not
   * tracked: what a transport's reader leaves to run before the next message.
   */
  readonly runFork: (effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>
  /** The number of requests in flight. */
  readonly inFlight: () => number
  /** Interrupts every request in flight and waits for them. */
  readonly interruptAll: Effect.Effect<void>
  /** Interrupts the request with this id (as `notifications/cancelled` does); `false` when none runs. */
  readonly cancel: (id: JsonRpc.RequestId) => Effect.Effect<boolean>
  /**
   * The session's unsolicited notifications (legacy list changes and resource updates) while the
   * Scope is open; empty without a session.
   */
  readonly sessionNotifications: Effect.Effect<Stream.Stream<JsonRpc.Notification>, never, Scope.Scope>
  /**
   * Ends the connection: `stopped` completes, requests still running get `drainTimeout` to finish,
   * then are interrupted. Closing the connection's Scope interrupts whatever still runs.
   */
  readonly stop: (drainTimeout?: Duration.DurationInput) => Effect.Effect<void>
}

/** Builds a connection; the requests it started are interrupted when the Scope closes. */
export const make = (server: Server, options: Options = {}): Effect.Effect<Connection, never, Scope.Scope> =>
  Effect.flatMap(
    makeUnscoped(server, options),
    (connection) => Effect.as(Effect.addFinalizer(() => endSession(connection, options)), connection)
  )

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
 * Builds a connection whose requests run in their callers' fibers ({@link Connection.run}, the
 * in-process transport): nothing of its own needs a Scope. A request `receive` starts lives until
 * it ends or `interruptAll`.
 */
export const makeUnscoped = (server: Server, options: Options = {}): Effect.Effect<Connection> =>
  Effect.gen(function*() {
    const runtime = Runtime.make({
      context: yield* Effect.context<never>(),
      fiberRefs: yield* Effect.getFiberRefs,
      runtimeFlags: Runtime.defaultRuntime.runtimeFlags
    })
    const stopped = options.stopped ?? (yield* Deferred.make<void>())
    const runFork = rootFork(runtime)
    const inflight = makeInflight(runFork, Math.max(1, Math.floor(options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT)))
    const startedNanos = yield* Clock.currentTimeNanos
    return makeConnection(server, options, stopped, inflight, runFork, startedNanos)
  })

const makeConnection = (
  server: Server,
  options: Options,
  stopped: Deferred.Deferred<void>,
  inflight: Inflight,
  runFork: (effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>,
  startedNanos: bigint
): Connection => {
  const session = options.session
  const pending = session === undefined ? undefined : ClientRequests.makeUnsafe(options.clientRequestIdPrefix)
  const clientRequestTimeout = options.clientRequestTimeout ?? ClientRequests.DEFAULT_TIMEOUT
  const reject = options.duplicateIds === "reject"

  // Requests whose outlets write elsewhere through the same `send` (one outlet for every request on
  // stdio; in-process, an outlet per request over a shared `send`) get their options built once:
  // without headers, auth or a peer of their own, the options depend on nothing else.
  let shared: { readonly send: Outlet["send"]; readonly options: Dispatch.DispatchOptions } | undefined
  const dispatchOptions = (incoming: Incoming, outlet: Outlet): Dispatch.DispatchOptions => {
    if (incoming.headers !== undefined || incoming.auth !== undefined || incoming.peer !== undefined) {
      return buildOptions(incoming, outlet)
    }
    if (shared !== undefined && shared.send === outlet.send) return shared.options
    shared = { send: outlet.send, options: buildOptions(incoming, outlet) }
    return shared.options
  }
  const buildOptions = (incoming: Incoming, outlet: Outlet): Dispatch.DispatchOptions => {
    const send = outlet.send
    return {
      session,
      headers: incoming.headers,
      auth: incoming.auth,
      peer: incoming.peer ?? options.peer,
      shutdown: stopped,
      notify: send ?? noNotify,
      sendRequest: pending === undefined
        ? undefined
        : send === undefined
        ? cannotRequest
        : ClientRequests.send(pending, send, clientRequestTimeout)
    }
  }

  const answer = (request: JsonRpc.Request, incoming: Incoming, outlet: Outlet): Effect.Effect<void> =>
    answerWith(server, request, outlet, dispatchOptions(incoming, outlet), incoming.classification)

  const duplicate = (request: JsonRpc.Request, outlet: Outlet): Effect.Effect<void> =>
    ended(
      reject
        ? writeReply(server, request, {
          message: JsonRpc.failure(
            request.id,
            JsonRpc.McpError.invalidRequest("Invalid Request: this id is in flight")
          ),
          status: 400
        }, outlet)
        : Effect.annotateLogs(
          Effect.logWarning("a request reuses the id of a request still in flight; ignored"),
          "requestId",
          request.id
        ),
      outlet
    )

  // Tracked and untracked in one uninterruptible region whose outcome handler untracks at once (no
  // `ensuring`, whose finalizer is two steps of its own): bench/README.md, "Issue #24: in-process,
  // session 9".
  const run = <A, E>(
    request: JsonRpc.Request,
    incoming: Incoming,
    outlet: Outlet,
    then: () => Effect.Effect<A, E>
  ): Effect.Effect<A, E> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.withFiberRuntime<A, E>((fiber) => {
        const id = request.id
        if (inflight.fibers.has(id)) return Effect.flatMap(restore(duplicate(request, outlet)), then)
        if (inflight.full()) return restore(Effect.zipRight(inflight.awaitSlot, run(request, incoming, outlet, then)))
        inflight.track(id, fiber)
        return Effect.matchCauseEffect(restore(answer(request, incoming, outlet)), {
          onFailure: (cause) => {
            inflight.untrack(id)
            return Effect.failCause(cause)
          },
          onSuccess: () => {
            inflight.untrack(id)
            return then()
          }
        })
      })
    )

  const cancel = (id: JsonRpc.RequestId): Effect.Effect<boolean> =>
    Effect.suspend(() => {
      const fiber = inflight.fibers.get(id)
      if (fiber === undefined) return Effect.succeed(false)
      // Not waiting for the handler's finalizers: the reader goes on meanwhile. The fiber leaves the
      // table by itself once done; it never writes its response.
      return Effect.flatMap(Effect.fiberId, (self) => Effect.as(Fiber.interruptAsFork(fiber, self), true))
    })

  const onCancelled = (params: JsonRpc.JsonObject | undefined): Effect.Effect<void> => {
    const requestId = params?.requestId
    if (!JsonRpc.isRequestId(requestId)) return Effect.void
    return Effect.flatMap(cancel(requestId), (found) =>
      found
        ? Effect.void
        : Effect.annotateLogs(
          Effect.logDebug("notifications/cancelled for a request that is not in flight"),
          "requestId",
          requestId
        ))
  }

  const onRequest = (request: JsonRpc.Request, incoming: Incoming, outlet: Outlet): Effect.Effect<void> | undefined => {
    // Run inline: it is fast, must not be cancelled, and requests read after it see its session.
    if (request.method === McpSchema.Method.initialize) return answer(request, incoming, outlet)
    if (inflight.fibers.has(request.id)) return duplicate(request, outlet)
    if (inflight.full()) {
      return Effect.zipRight(
        inflight.awaitSlot,
        Effect.suspend(() => onRequest(request, incoming, outlet) ?? Effect.void)
      )
    }
    inflight.start(request.id, answer(request, incoming, outlet))
    return undefined
  }

  const receive = (incoming: Incoming, outlet: Outlet): Effect.Effect<void> | undefined => {
    const message = incoming.message
    switch (message._tag) {
      case "Request":
        return onRequest(message.message, incoming, outlet)
      case "Notification":
        return message.message.method === McpSchema.Method.cancelled
          ? onCancelled(message.message.params)
          : Effect.asVoid(Dispatch.dispatchClassified(server, message, { session, headers: incoming.headers }))
      case "Response":
        return pending === undefined
          ? Effect.logDebug("ignored a response: this connection sends no requests")
          : Effect.flatMap(
            ClientRequests.resolve(pending, message.message),
            (settled) => settled ? Effect.void : Effect.logDebug("ignored a response to no pending request")
          )
      case "Invalid":
        return ended(
          Effect.flatMap(
            Dispatch.invalidResponse(session, message.id, message.error),
            (response) => outlet.reply({ message: response, status: 400 }, encodeResponse(response))
          ),
          outlet
        )
    }
  }

  return {
    server,
    session,
    startedNanos,
    stopped,
    receive,
    run,
    runFork,
    inFlight: () => inflight.fibers.size,
    interruptAll: inflight.interruptAll,
    cancel,
    sessionNotifications: session === undefined ? Effect.succeed(Stream.empty) : sessionNotifications(server, session),
    stop: (drainTimeout = DEFAULT_DRAIN_TIMEOUT) =>
      Effect.gen(function*() {
        yield* Deferred.succeed(stopped, undefined)
        const drained = yield* inflight.awaitEmpty.pipe(Effect.timeoutOption(drainTimeout))
        if (Option.isSome(drained)) return
        yield* Effect.logWarning(
          `interrupting ${inflight.fibers.size} request(s) still running after the drain timeout`
        )
        yield* inflight.interruptAll
      })
  }
}

const noNotify = (): Effect.Effect<void> => Effect.void

/** Dispatches one request, writes its reply (checked), then the outlet's `done`. */
const answerWith = (
  server: Server,
  request: JsonRpc.Request,
  outlet: Outlet,
  options: Dispatch.DispatchOptions,
  classification: Classify.Classification | undefined
): Effect.Effect<void> =>
  ended(
    Effect.flatMap(Dispatch.dispatchRequest(server, request, options, classification), (reply) =>
      writeReply(server, request, reply, outlet)),
    outlet
  )

/**
 * A stateless request (2026-07-28 over HTTP): a connection of its own with nothing to track (no
 * session, no other request can name it, its response is its only channel), so it is answered
 * without a table: the caller runs the Effect in the fiber and scope that own the response
 * (closing the response interrupts it). `stopped` ends its listen stream when the transport stops.
 * `session`: a throwaway legacy session (HTTP with sessions off), which sends no server→client
 * requests either.
 */
export const answerStateless = (
  server: Server,
  request: JsonRpc.Request,
  incoming: Incoming,
  outlet: Outlet,
  stopped: Deferred.Deferred<void>,
  session?: Session
): Effect.Effect<void> =>
  answerWith(server, request, outlet, {
    session,
    headers: incoming.headers,
    auth: incoming.auth,
    peer: incoming.peer,
    shutdown: stopped,
    notify: outlet.send ?? noNotify
  }, incoming.classification)

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

// ---------------------------------------------------------------------------------------------
// encoding: every request gets exactly one response
// ---------------------------------------------------------------------------------------------

/** `JSON.stringify` of a response the server built itself (an error, an empty result): it cannot fail. */
const encodeResponse = (response: JsonRpc.Response): string => JsonRpc.encode(response)

/**
 * Encodes a request's reply and writes it. A result JSON cannot carry (`JSON.stringify` throws on a
 * `BigInt`, a cycle, nesting too deep) is logged and replaced: `tools/call` gets an `isError`
 * result (a defect of the tool, MCP 2025-11-25, Server Features, Tools, "Error Handling"), every
 * other method -32603 (JSON-RPC 2.0, "Error object").
 */
export const writeReply = (
  server: Server,
  request: JsonRpc.Request,
  reply: Reply,
  outlet: Outlet
): Effect.Effect<void> => {
  const text = tryEncode(reply.message)
  if (typeof text === "string") return outlet.reply(reply, text)
  const fallback = unencodable(server, request, reply)
  return Effect.zipRight(
    Effect.annotateLogs(
      Effect.logError(`${request.method}: the result cannot be encoded as JSON (${text.message})`),
      "requestId",
      request.id
    ),
    outlet.reply(fallback, encodeResponse(fallback.message))
  )
}

const tryEncode = (message: JsonRpc.Message): string | Error => {
  try {
    return JsonRpc.encode(message)
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error))
  }
}

const unencodable = (server: Server, request: JsonRpc.Request, reply: Reply): Reply => {
  if (request.method !== McpSchema.Method.toolsCall || JsonRpc.isErrorResponse(reply.message)) {
    return { message: JsonRpc.failure(request.id, JsonRpc.McpError.internalError()), status: 200 }
  }
  const result = reply.message.result
  const modern = typeof result.resultType === "string"
  return {
    message: JsonRpc.success(request.id, {
      ...(modern ? { resultType: "complete", _meta: { [McpSchema.MetaKey.serverInfo]: server.info } } : {}),
      content: [{ type: "text", text: "The tool's result cannot be encoded as JSON" }],
      isError: true
    }),
    status: reply.status
  }
}

/**
 * Encodes a notification or a server→client request for the wire; `undefined` (logged) when JSON
 * cannot carry it (a notification a handler built with a `BigInt`): it is dropped, the request
 * goes on.
 */
export const encodeOutgoing = (message: JsonRpc.Request | JsonRpc.Notification): Effect.Effect<string | undefined> => {
  const text = tryEncode(message)
  return typeof text === "string"
    ? Effect.succeed(text)
    : Effect.as(
      Effect.logWarning(`dropped ${message.method}: it cannot be encoded as JSON (${text.message})`),
      undefined
    )
}

// ---------------------------------------------------------------------------------------------
// the requests in flight
// ---------------------------------------------------------------------------------------------

/**
 * The requests in flight, by exact id. Each request runs in its own root fiber, started at once
 * with the connection's context and fiber refs (logger, tracer, span) and default runtime flags,
 * as `FiberMap.run` does at a lower cost per request. A fiber leaves the table when it is done.
 */
interface Inflight {
  readonly fibers: ReadonlyMap<JsonRpc.RequestId, Fiber.RuntimeFiber<unknown, unknown>>
  /** Tracks a fiber that runs a request itself (`Connection.run`); `untrack` when it is done. */
  readonly track: (id: JsonRpc.RequestId, fiber: Fiber.RuntimeFiber<unknown, unknown>) => void
  readonly untrack: (id: JsonRpc.RequestId) => void
  readonly full: () => boolean
  /** Starts `effect` for `id` (the caller has checked that `id` is not in flight). */
  readonly start: (id: JsonRpc.RequestId, effect: Effect.Effect<void>) => void
  /** Resumes once fewer requests than the bound are in flight. */
  readonly awaitSlot: Effect.Effect<void>
  /** Resumes once no request is in flight. */
  readonly awaitEmpty: Effect.Effect<void>
  /** Interrupts every request in flight and waits for them. */
  readonly interruptAll: Effect.Effect<void>
}

const makeInflight = (
  runFork: (effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>,
  max: number
): Inflight => {
  const fibers = new Map<JsonRpc.RequestId, Fiber.RuntimeFiber<unknown, unknown>>()
  const waiters = new Set<() => void>()
  const wake = (): void => {
    for (const resume of waiters) resume()
  }
  const untrack = (id: JsonRpc.RequestId): void => {
    fibers.delete(id)
    if (waiters.size > 0) wake()
  }
  const waitUntil = (ready: () => boolean): Effect.Effect<void> =>
    Effect.async<void>((resume) => {
      if (ready()) return resume(Effect.void)
      const check = (): void => {
        if (!ready()) return
        waiters.delete(check)
        resume(Effect.void)
      }
      waiters.add(check)
      return Effect.sync(() => {
        waiters.delete(check)
      })
    })
  return {
    fibers,
    full: () => fibers.size >= max,
    track: (id, fiber) => {
      fibers.set(id, fiber)
    },
    untrack,
    start: (id, effect) => {
      const fiber = runFork(effect)
      if (fiber.unsafePoll() !== null) return
      fibers.set(id, fiber)
      fiber.addObserver(() => untrack(id))
    },
    awaitSlot: waitUntil(() => fibers.size < max),
    awaitEmpty: waitUntil(() => fibers.size === 0),
    interruptAll: Effect.suspend(() => Fiber.interruptAll(fibers.values()))
  }
}
