/**
 * The legacy standalone GET stream (MCP 2025-11-25, Transports › Streamable HTTP › Listening for
 * Messages from the Server) behind `sessionNotifications`: one GET serves every subscriber, as
 * each message goes to one stream only; it is closed when the last subscriber leaves. A `404` for
 * the session re-initializes first; a `401`/`403` challenge runs `ClientOptions.auth` as for a
 * POST (MCP 2025-11-25, Authorization). A stream whose connection ends is resumed with
 * `Last-Event-ID` (`client/resume`) before its subscribers see an end. A client that
 * declares elicitation, sampling or roots keeps one subscription open from
 * `notifications/initialized` on (`standing`), tried again and reopened when the GET gets no
 * response.
 *
 * @internal
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../../../JsonRpc.js"
import { TransportError } from "../../../../Transport.js"
import * as Core from "../../../client/connection.js"
import * as Http from "../wire.js"
import { challengeOf, withAuthorization } from "./auth.js"
import { sessionHeaders } from "./headers.js"
import * as Resume from "./resume.js"
import { recover } from "./session.js"
import { type Client, closedError, drain, type Hub, transportError, userHeaders } from "./state.js"

const openHub = (client: Client): Effect.Effect<Hub, TransportError> =>
  Effect.gen(function*() {
    const st = yield* Ref.get(client.state)
    if (st.closed) return yield* closedError()
    if (st.sessionId === undefined && st.protocolVersion === undefined) {
      return yield* new TransportError({
        reason: "Protocol",
        message: "the standalone SSE stream needs a legacy session (initialize first)"
      })
    }
    const scope = yield* Scope.make()
    const response = yield* client.http.execute(
      HttpClientRequest.get(client.url).pipe(
        HttpClientRequest.setHeaders({
          ...(yield* userHeaders(client, "GET")),
          ...sessionHeaders(st),
          accept: Http.SSE_TYPE
        })
      )
    ).pipe(
      Effect.mapError(transportError(client, "GET")),
      Effect.onError(() => Scope.close(scope, Exit.void))
    )
    const ok = response.status >= 200 && response.status < 300
    if (!ok || Http.mediaTypeOf(response.headers["content-type"]) !== Http.SSE_TYPE) {
      yield* drain(client, response)
      yield* Scope.close(scope, Exit.void)
      const refused = challengeOf(response.status, response.headers, "the standalone GET")
      if (refused !== undefined) return yield* refused
      return yield* new TransportError({
        reason: ok ? "Protocol" : "Http",
        status: response.status,
        message: ok
          ? "the standalone GET did not answer with text/event-stream"
          : `HTTP ${response.status} for the standalone GET (the server may not offer it)`
      })
    }
    return {
      scope,
      response,
      users: yield* Ref.make(0),
      done: yield* Ref.make(false)
    }
  })

/**
 * The GET stream; a 404 for our session (it expired, the server restarted) re-initializes first;
 * a `401`/`403` challenge starts authorization as a POST's does (`client/auth`).
 */
const openHubRecovering = (client: Client): Effect.Effect<Hub, TransportError> =>
  Effect.gen(function*() {
    const stale = (yield* Ref.get(client.state)).sessionId
    const open = withAuthorization(client, "the standalone GET", "GET", openHub(client))
    return yield* open.pipe(
      Effect.catchIf(
        (e) => e.status === 404 && stale !== undefined,
        () => Effect.zipRight(recover(client, stale ?? ""), open)
      )
    )
  })

/**
 * Reads the GET stream into the connection core until it ends (notifications no request takes
 * go to the session feed, server requests are answered), resumed with `Last-Event-ID` when its
 * connection ends (`client/resume`), then marks the hub done and ends the session streams with
 * the stream's end.
 */
const runHub = (client: Client, h: Hub): Effect.Effect<void> =>
  Core.run(
    client.connection,
    Resume.messages(
      client,
      Stream.mapError(h.response.stream, transportError(client, "reading the standalone SSE stream of")),
      "the standalone SSE stream",
      true
    ).pipe(
      Stream.tap((c) =>
        c._tag === "Response"
          ? Effect.logDebug("Streamable HTTP: ignoring a response on the standalone stream")
          : Effect.void
      ),
      Stream.filter((c) => c._tag !== "Response")
    )
  ).pipe(
    Effect.exit,
    Effect.flatMap((exit) => Effect.zipRight(Ref.set(h.done, true), Core.endSession(client.connection, exit)))
  )

const release = (client: Client, h: Hub): Effect.Effect<void> =>
  client.hubLock.withPermits(1)(Effect.gen(function*() {
    const left = yield* Ref.updateAndGet(h.users, (n) => n - 1)
    if (left > 0) return
    yield* Ref.update(client.hub, (current) => Option.isSome(current) && current.value === h ? Option.none() : current)
    yield* Scope.close(h.scope, Exit.void)
  }))

/**
 * The protocol's `listen`: a use of the shared GET stream for as long as the Scope is open (the
 * core subscribes to its session feed first).
 */
export const listen = (client: Client): Effect.Effect<void, TransportError, Scope.Scope> =>
  Effect.asVoid(Effect.acquireRelease(
    client.hubLock.withPermits(1)(Effect.gen(function*() {
      const current = yield* Ref.get(client.hub)
      const reusable = Option.isSome(current) && !(yield* Ref.get(current.value.done))
      const h = reusable && Option.isSome(current) ? current.value : yield* openHubRecovering(client)
      yield* Ref.update(h.users, (n) => n + 1)
      if (!reusable) {
        yield* Ref.set(client.hub, Option.some(h))
        // forked from an uninterruptible region: make the reader interruptible again
        yield* Effect.forkIn(Effect.interruptible(runHub(client, h)), h.scope)
      }
      return h
    })),
    (h) => release(client, h)
  ))

/** The client capabilities under which a server sends requests of its own (MCP 2025-11-25, Client Features). */
const INPUT_CAPABILITIES = ["elicitation", "sampling", "roots"] as const

/** Does the session's `initialize` declare a capability the server may ask through? */
const declaresInput = (init: JsonRpc.Request | undefined): boolean => {
  const capabilities = init?.params?.capabilities
  return JsonRpc.isObject(capabilities) && INPUT_CAPABILITIES.some((key) => Object.hasOwn(capabilities, key))
}

/**
 * A GET that got no response (connection refused or reset, or its stream cut off mid-read): another
 * try may succeed. A status (`405`, `404`, a challenge) or a closed transport is final.
 */
const unanswered = (e: TransportError): boolean => e.reason === "Http" && e.status === undefined

/** Tries of one opening of the standing GET: 3 more after the first, 100, 200, 400 ms apart. */
const OPEN_RETRIES = Schedule.exponential("100 millis").pipe(Schedule.intersect(Schedule.recurs(3)))

/** Reopenings of the standing GET after its stream failed unanswered, over the transport's life. */
const MAX_REOPENINGS = 5

/**
 * After `notifications/initialized` of a legacy session whose client declares elicitation,
 * sampling or roots: the session's GET stream is opened and kept for the transport's life,
 * read by a fiber of its own, so that requests the server sends outside any request of ours
 * (MCP 2025-11-25, Transports › Streamable HTTP › Listening for Messages from the Server) reach
 * the client's handlers. The GET is open (its response headers are in) when this returns. A GET
 * that gets no response (`unanswered`) is tried again (`OPEN_RETRIES`), and a stream cut off that
 * way is reopened (at most `MAX_REOPENINGS` times); a server without a GET stream (`405`), any
 * other failure, or a stream that ended and could not be resumed (`client/resume`) is logged at
 * debug level, never a failure, and not reopened.
 */
export const standing = (client: Client): Effect.Effect<void> =>
  Effect.gen(function*() {
    const st = yield* Ref.get(client.state)
    if (st.closed || st.sessionId === undefined || !declaresInput(st.init)) return
    const open = Effect.gen(function*() {
      const scope = yield* Scope.fork(client.scope, ExecutionStrategy.sequential)
      const notifications = yield* Scope.extend(Core.sessionNotifications(client.connection), scope).pipe(
        Effect.onError(() => Scope.close(scope, Exit.void))
      )
      return { scope, notifications }
    }).pipe(Effect.retry({ while: unanswered, schedule: OPEN_RETRIES }))
    const read = (
      opened: Effect.Effect.Success<typeof open>,
      reopenings: number
    ): Effect.Effect<void, TransportError> =>
      Stream.runDrain(opened.notifications).pipe(
        Effect.ensuring(Scope.close(opened.scope, Exit.void)),
        Effect.catchIf(
          (e) => unanswered(e) && reopenings < MAX_REOPENINGS,
          (e) =>
            Effect.gen(function*() {
              if ((yield* Ref.get(client.state)).closed) return
              yield* Effect.logDebug(`Streamable HTTP: reopening the standalone GET stream: ${e.message}`)
              yield* read(yield* open, reopenings + 1)
            })
        )
      )
    const first = yield* open
    yield* read(first, 0).pipe(
      Effect.catchAll((e) => Effect.logDebug(`Streamable HTTP: the standalone GET stream ended: ${e.message}`)),
      Effect.forkIn(client.scope)
    )
  }).pipe(
    Effect.catchAll((e) =>
      Effect.logDebug(`Streamable HTTP: no standalone GET stream for the server's requests: ${e.message}`)
    )
  )
