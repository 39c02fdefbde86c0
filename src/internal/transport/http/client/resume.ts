/**
 * Resumable SSE streams of the Streamable HTTP client (MCP 2025-11-25, Transports › Streamable
 * HTTP › Sending Messages to the Server, Listening for Messages from the Server, Resumability and
 * Redelivery; SEP-1699 polling). Every SSE body the client reads (a legacy request's POST
 * response, the standalone GET) is read through {@link messages}: it keeps the stream's last
 * event `id` and the server's last `retry`, drops an event whose `id` it already delivered, and
 * when the connection ends before the stream's reader is done (the server closed it, or it was
 * cut) it GETs the endpoint again with `Last-Event-ID`, after `retry` ms (else the backoff of
 * `ClientOptions.resumption`), and goes on reading there. A stream that never carried an id is
 * not resumable: its end is the end. The server refusing (`405`), the session gone (`404`) or
 * the tries used up fail the stream with `TransportError` `"Resume"`.
 *
 * @internal
 */
import type * as Sse from "@effect/experimental/Sse"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import type * as JsonRpc from "../../../../JsonRpc.js"
import { TransportError } from "../../../../Transport.js"
import * as H from "../../../server/headerAgreement.js"
import * as Http from "../wire.js"
import { challengeOf, withAuthorization } from "./auth.js"
import { sessionHeaders } from "./headers.js"
import { messagesOf, sseEvents } from "./sse.js"
import { type Client, closedError, drain, type Resumption, transportError, userHeaders } from "./state.js"

/** Event ids remembered per stream to drop a replayed duplicate (the most recent ones). */
const SEEN_BOUND = 1024

/** Where a stream is: what a resumption sends and what it must not deliver twice. */
interface Cursor {
  lastEventId: string | undefined
  retryMillis: number | undefined
  /** A new event came since the last (re)connection: the tries count again from the first. */
  progressed: boolean
  readonly seen: Set<string>
  readonly order: Array<string>
}

/**
 * The delay before try `n` (0-based) of a resumption: the server's `retry` (MCP 2025-11-25: the
 * client MUST wait it), else `initialDelay`, doubled per failed try, capped at `maxDelay` (never
 * below the server's `retry`).
 */
export const delayMillis = (resumption: Resumption, retryMillis: number | undefined, n: number): number => {
  const base = retryMillis ?? resumption.initialDelayMillis
  return Math.min(base * 2 ** n, Math.max(resumption.maxDelayMillis, base))
}

const remember = (cursor: Cursor, id: string): void => {
  cursor.seen.add(id)
  cursor.order.push(id)
  if (cursor.order.length > SEEN_BOUND) {
    const old = cursor.order.shift()
    if (old !== undefined) cursor.seen.delete(old)
  }
}

/** One event: the cursor learns from it; a replayed one (its id delivered already) is dropped. */
const take = (cursor: Cursor, event: Sse.AnyEvent): ReadonlyArray<JsonRpc.Classified> => {
  if (event._tag === "Retry") {
    cursor.retryMillis = Duration.toMillis(event.duration)
    return []
  }
  if (event.id !== undefined) {
    if (event.id === "") {
      // an empty id resets the last event id (WHATWG HTML, Server-sent events › Interpreting an event stream)
      cursor.lastEventId = undefined
    } else {
      if (cursor.seen.has(event.id)) return []
      remember(cursor, event.id)
      cursor.lastEventId = event.id
    }
    cursor.progressed = true
  }
  return messagesOf(event)
}

const resumeError = (message: string, status?: number, cause?: unknown): TransportError =>
  new TransportError({
    reason: "Resume",
    message,
    ...(status === undefined ? {} : { status }),
    ...(cause === undefined ? {} : { cause })
  })

/** One GET with `Last-Event-ID`: the body to go on reading, or why it failed (see `final`). */
const reopen = (
  client: Client,
  what: string,
  lastEventId: string
): Effect.Effect<Stream.Stream<Uint8Array, TransportError>, TransportError> =>
  Effect.gen(function*() {
    const st = yield* Ref.get(client.state)
    if (st.closed) return yield* closedError()
    const response = yield* client.http.execute(
      HttpClientRequest.get(client.url).pipe(
        HttpClientRequest.setHeaders({
          ...(yield* userHeaders(client, "GET")),
          ...sessionHeaders(st),
          accept: Http.SSE_TYPE,
          [H.Header.lastEventId]: lastEventId
        })
      )
    ).pipe(Effect.mapError(transportError(client, "GET")))
    const ok = response.status >= 200 && response.status < 300
    if (ok && Http.mediaTypeOf(response.headers["content-type"]) === Http.SSE_TYPE) {
      return Stream.mapError(response.stream, transportError(client, `reading the resumed ${what} from`))
    }
    yield* drain(client, response)
    const refused = challengeOf(response.status, response.headers, `resuming ${what}`)
    if (refused !== undefined) return yield* refused
    if (response.status === 405) {
      return yield* resumeError(`${what} cannot be resumed: the server offers no GET stream (HTTP 405)`, 405)
    }
    if (response.status === 404) {
      return yield* resumeError(
        st.sessionId === undefined
          ? `${what} cannot be resumed: the server does not know it (HTTP 404)`
          : `${what} cannot be resumed: the session is gone (HTTP 404)`,
        404
      )
    }
    return yield* new TransportError({
      reason: ok ? "Protocol" : "Http",
      status: response.status,
      message: ok
        ? `resuming ${what}: the GET did not answer with text/event-stream`
        : `resuming ${what}: HTTP ${response.status} for the GET`
    })
  })

/** A failure after which no other try is made: anything but a GET that failed or got a status other than 404 / 405. */
const final = (e: TransportError): boolean => e.reason !== "Http"

/**
 * Tries to reopen the stream from `cursor.lastEventId`, from try `n` on: each after its delay,
 * until one opens (the body and the number of the next try) or the tries run out.
 */
const reconnect = (
  client: Client,
  what: string,
  cursor: Cursor,
  n: number
): Effect.Effect<readonly [Stream.Stream<Uint8Array, TransportError>, number], TransportError> =>
  Effect.suspend(() => {
    const { maxAttempts } = client.resumption
    const lastEventId = cursor.lastEventId
    if (lastEventId === undefined) return Effect.die(new Error("reconnect without a last event id"))
    if (n >= maxAttempts) {
      return Effect.fail(
        resumeError(`${what} could not be resumed after ${maxAttempts} tries (Last-Event-ID ${lastEventId})`)
      )
    }
    const delay = delayMillis(client.resumption, cursor.retryMillis, n)
    return Effect.logDebug(
      `Streamable HTTP: resuming ${what} in ${delay} ms (Last-Event-ID ${lastEventId}, try ${n + 1} of ${maxAttempts})`
    ).pipe(
      Effect.zipRight(Effect.sleep(Duration.millis(delay))),
      Effect.zipRight(withAuthorization(client, `resuming ${what}`, "GET", reopen(client, what, lastEventId))),
      Effect.map((bytes) => [bytes, n + 1] as const),
      Effect.catchIf(
        (e) => !final(e),
        (e) =>
          n + 1 >= maxAttempts
            ? Effect.fail(
              resumeError(
                `${what} could not be resumed after ${maxAttempts} tries (Last-Event-ID ${lastEventId}): ${e.message}`,
                e.status,
                e
              )
            )
            : Effect.zipRight(
              Effect.logDebug(`Streamable HTTP: resuming ${what} failed: ${e.message}`),
              reconnect(client, what, cursor, n + 1)
            )
      )
    )
  })

/**
 * The JSON-RPC messages of an SSE body (`bytes`, read errors already `TransportError` `"Http"`),
 * resumed as the module says while `resumable` (a legacy exchange: a modern stream that breaks
 * loses its request, MCP 2026-07-28) and `ClientOptions.resumption.maxAttempts` is not 0. The
 * reader decides when it is done (a request's response; the standalone stream never is).
 */
export const messages = (
  client: Client,
  bytes: Stream.Stream<Uint8Array, TransportError>,
  what: string,
  resumable: boolean
): Stream.Stream<JsonRpc.Classified, TransportError> =>
  Stream.suspend(() => {
    const cursor: Cursor = {
      lastEventId: undefined,
      retryMillis: undefined,
      progressed: false,
      seen: new Set(),
      order: []
    }
    const canResume = () => resumable && client.resumption.maxAttempts > 0 && cursor.lastEventId !== undefined
    const read = (body: Stream.Stream<Uint8Array, TransportError>, n: number): Stream.Stream<
      JsonRpc.Classified,
      TransportError
    > =>
      Stream.concat(
        sseEvents(body, client.maxBytes).pipe(
          Stream.mapConcat((event) => take(cursor, event)),
          Stream.catchAll((e) =>
            e.reason === "Http" && canResume()
              ? Stream.fromEffect(Effect.logDebug(`Streamable HTTP: ${what} was cut: ${e.message}`)).pipe(Stream.drain)
              : Stream.fail(e)
          )
        ),
        Stream.unwrap(Effect.suspend(() => {
          if (!canResume()) return Effect.succeed(Stream.empty)
          const next = cursor.progressed ? 0 : n
          cursor.progressed = false
          return Effect.map(reconnect(client, what, cursor, next), ([body, after]) => read(body, after))
        }))
      )
    return read(bytes, 0)
  })
