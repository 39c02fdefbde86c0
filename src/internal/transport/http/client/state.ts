/**
 * The Streamable HTTP client's state record: what `make` sets up once, passed explicitly to the
 * plain functions of the other parts (`headers`, `post`, `protocol`, `session`, `standalone`), and the raw HTTP steps they share (POST, reading a body away). Documented on
 * `StreamableHttp.clientWith`.
 *
 * @internal
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../../../JsonRpc.js"
import { TransportError } from "../../../../Transport.js"
import type { ClientOptions } from "../../../../transport/StreamableHttp.js"
import type * as Core from "../../../client/connection.js"
import { redactUrl } from "../../../redact.js"
import * as Http from "../wire.js"

/** Default `ClientOptions.maxMessageBytes`: 16 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
/** Default `ClientOptions.closeTimeout`. */
export const DEFAULT_CLOSE_TIMEOUT: Duration.DurationInput = "5 seconds"

/** Default `ClientOptions.resumption.maxAttempts`: 5 tries in a row that bring no new event. */
export const DEFAULT_MAX_ATTEMPTS = 5
/** Default `ClientOptions.resumption.initialDelay`: 1000 ms before the first try when the server sent no `retry`. */
export const DEFAULT_INITIAL_DELAY_MILLIS = 1000
/** Default `ClientOptions.resumption.maxDelay`: 30 000 ms, the cap of the doubling backoff. */
export const DEFAULT_MAX_DELAY_MILLIS = 30_000
/** `ClientOptions.resumption` with its defaults applied, in milliseconds. */
export interface Resumption {
  readonly maxAttempts: number
  readonly initialDelayMillis: number
  readonly maxDelayMillis: number
}

const ACCEPT = `${Http.JSON_TYPE}, ${Http.SSE_TYPE}`

/** What the transport learned from the server's answers, and whether it is closed. */
export interface State {
  /** Legacy: the session id the server gave on `initialize`. */
  readonly sessionId: string | undefined
  /** Legacy: the version negotiated by `initialize`. */
  readonly protocolVersion: string | undefined
  /** Legacy: the `initialize` request, replayed when the session expires. */
  readonly init: JsonRpc.Request | undefined
  /** Modern: the last version a request carried (sent with notifications). */
  readonly modernVersion: string | undefined
  readonly closed: boolean
}

/** The legacy standalone GET stream, shared by every `sessionNotifications` subscriber. */
export interface Hub {
  readonly scope: Scope.CloseableScope
  readonly response: HttpClientResponse.HttpClientResponse
  readonly users: Ref.Ref<number>
  /** Set when the GET stream ended: the next subscriber opens a new one. */
  readonly done: Ref.Ref<boolean>
}

/** The state record of one Streamable HTTP client transport, but its connection core. */
export interface Base {
  readonly options: ClientOptions
  readonly http: HttpClient.HttpClient
  /** The transport's scope: background cancellations run in it. */
  readonly scope: Scope.Scope
  readonly url: string
  /** `ClientOptions.maxMessageBytes`. */
  readonly maxBytes: number
  /** `ClientOptions.resumption`, defaults applied (`client/resume`). */
  readonly resumption: Resumption
  readonly closeTimeout: Duration.DurationInput
  readonly state: Ref.Ref<State>
  /** Tool input schemas seen in `tools/list` results, for `Mcp-Param-*` headers. */
  readonly schemas: Ref.Ref<HashMap.HashMap<string, JsonRpc.JsonObject>>
  /** One legacy session recovery at a time. */
  readonly recovering: Effect.Semaphore
  /**
   * The POST exchange of each request in flight, by id: a fiber started in the step that entered
   * the request in the core's table (with the caller's context), interrupted when the caller gives
   * the request up or the transport closes. A plain Map, as the core's table.
   */
  readonly exchanges: Map<JsonRpc.RequestId, Fiber.RuntimeFiber<void>>
  /** The transport's runtime (context of `make`): background steps run in it. */
  readonly runtime: Runtime.Runtime<never>
  /** The open standalone GET stream, if any. */
  readonly hub: Ref.Ref<Option.Option<Hub>>
  /** Guards opening and releasing {@link hub}. */
  readonly hubLock: Effect.Semaphore
}

/** The state record with the connection core the transport speaks through (`client/protocol`). */
export interface Client extends Base {
  readonly connection: Core.Connection
}

/** The state record, in the transport's scope. */
export const make = (options: ClientOptions): Effect.Effect<Base, never, Scope.Scope | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const scope = yield* Effect.scope
    return {
      options,
      http,
      scope,
      url: String(options.url),
      maxBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      resumption: {
        maxAttempts: options.resumption?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
        initialDelayMillis: options.resumption?.initialDelay === undefined
          ? DEFAULT_INITIAL_DELAY_MILLIS
          : Duration.toMillis(options.resumption.initialDelay),
        maxDelayMillis: options.resumption?.maxDelay === undefined
          ? DEFAULT_MAX_DELAY_MILLIS
          : Duration.toMillis(options.resumption.maxDelay)
      },
      closeTimeout: options.closeTimeout ?? DEFAULT_CLOSE_TIMEOUT,
      state: yield* Ref.make<State>({
        sessionId: undefined,
        protocolVersion: undefined,
        init: undefined,
        modernVersion: undefined,
        closed: false
      }),
      schemas: yield* Ref.make(HashMap.empty<string, JsonRpc.JsonObject>()),
      recovering: yield* Effect.makeSemaphore(1),
      exchanges: new Map(),
      runtime: yield* Effect.runtime<never>(),
      hub: yield* Ref.make(Option.none<Hub>()),
      hubLock: yield* Effect.makeSemaphore(1)
    }
  })

export const closedError = (): TransportError =>
  new TransportError({ reason: "Closed", message: "the transport is closed" })

export const http404 = (message: string): TransportError => new TransportError({ reason: "Http", status: 404, message })

/**
 * Maps a failed HTTP step (`what`: `POST`, `GET`, …) to `TransportError` `"Http"`. The message
 * names the URL without its credentials, query or fragment (`redactUrl`), also where the cause's
 * message quotes it.
 */
export const transportError = (client: Client, what: string) => (cause: { readonly message: string }) => {
  const shown = redactUrl(client.url)
  const message = `${what} ${shown} failed: ${cause.message.split(client.url).join(shown)}`
  return new TransportError({ reason: "Http", message, cause })
}

/**
 * `ClientOptions.headers`, evaluated for one request with HTTP `method`, then
 * `ClientOptions.auth`'s `Authorization` (and `DPoP` proof).
 */
export const userHeaders = (client: Client, method: string): Effect.Effect<Readonly<Record<string, string>>> =>
  Effect.gen(function*() {
    const h = client.options.headers
    const base = h === undefined ? {} : Effect.isEffect(h) ? yield* h : h
    const auth = client.options.auth
    return auth === undefined ? base : { ...base, ...(yield* auth.headers(client.url, method)) }
  })

/** POSTs one message with the user's headers, then `extra`, then `Accept`. */
export const post = (
  client: Client,
  message: JsonRpc.Message,
  extra: Readonly<Record<string, string>>
): Effect.Effect<HttpClientResponse.HttpClientResponse, TransportError> =>
  Effect.gen(function*() {
    const request = HttpClientRequest.post(client.url).pipe(
      HttpClientRequest.setHeaders({ ...(yield* userHeaders(client, "POST")), ...extra, accept: ACCEPT }),
      HttpClientRequest.bodyText(JsonRpc.encode(message), Http.JSON_TYPE)
    )
    return yield* Effect.mapError(client.http.execute(request), transportError(client, "POST"))
  })

/** Reads and discards a body we do not need (frees the connection); bounded in time. */
export const drain = (client: Client, response: HttpClientResponse.HttpClientResponse): Effect.Effect<void> =>
  Stream.runDrain(response.stream).pipe(Effect.timeout(client.closeTimeout), Effect.ignore)
