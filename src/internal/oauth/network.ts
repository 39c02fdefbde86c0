/**
 * How the OAuth client reaches the network, and what it refuses to reach (the threat model in
 * `docs/oauth.md`): the URL policy every URL a server names passes before it is contacted or
 * shown to the user, and the bounds on each answer (bytes, time, redirects).
 *
 * The URL policy: `https:`, or `http:` to loopback hosts unless the application allows it (OAuth
 * 2.1 §1.5), no other scheme; and no URL closer to this machine than the MCP server itself: a
 * server named by a public host cannot send the client to a loopback or private address (IP
 * literals and `localhost`; names are not resolved). A refusal is `OAuthError` `"UnsafeUrl"`.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as oauth from "oauth4webapi"
import { OAuthError } from "./error.js"

/** One OAuth response body (metadata, registration, token), bytes. */
export const MAX_RESPONSE_BYTES = 256 * 1024
/** Redirects followed by one metadata request. */
export const MAX_REDIRECTS = 5
/** Default `Options.requestTimeout`. */
export const DEFAULT_REQUEST_TIMEOUT = Duration.seconds(30)

/** The client's network: the bounded fetch, the `http:` rule and the time bound of one request. */
export interface Http {
  readonly fetch: typeof globalThis.fetch
  /** Whether `http:` is allowed for this URL (loopback, or the application allowed it). */
  readonly insecureAllowed: (url: URL) => boolean
  readonly timeout: Duration.Duration
}

/** A bound was exceeded inside `fetch` (thrown there, mapped to `OAuthError` `"Limit"` by `call`). */
export class LimitExceeded extends Error {}

const concat = (chunks: ReadonlyArray<Uint8Array>, size: number): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.byteLength
  }
  return out
}

/** Statuses whose `Response` cannot carry a body. */
const NULL_BODY = new Set([101, 204, 205, 304])

/**
 * `inner` with the whole body read up front, at most `MAX_RESPONSE_BYTES` (a larger declared
 * `content-length` is refused before reading). Used as `oauth4webapi`'s `customFetch` too, so
 * registration and token answers have the bound of metadata documents.
 */
const bounded = (inner: typeof globalThis.fetch): typeof globalThis.fetch => async (input, init) => {
  const response = await inner(input, init)
  const tooLarge = () => new LimitExceeded(`the response is over ${MAX_RESPONSE_BYTES} bytes`)
  if (Number(response.headers.get("content-length") ?? 0) > MAX_RESPONSE_BYTES) {
    await response.body?.cancel()
    throw tooLarge()
  }
  if (response.body === null || NULL_BODY.has(response.status)) return response
  const reader = response.body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  for (;;) {
    const chunk = await reader.read()
    if (chunk.done) break
    size += chunk.value.byteLength
    if (size > MAX_RESPONSE_BYTES) {
      await reader.cancel()
      throw tooLarge()
    }
    chunks.push(chunk.value)
  }
  return new Response(concat(chunks, size), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers
  })
}

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"])

export const makeHttp = (options: {
  readonly fetch?: typeof globalThis.fetch | undefined
  readonly allowInsecureHttp?: boolean | undefined
  readonly requestTimeout?: Duration.DurationInput | undefined
}): Http => ({
  fetch: bounded(options.fetch ?? ((input, init) => globalThis.fetch(input, init))),
  insecureAllowed: (url) =>
    url.protocol === "https:" || options.allowInsecureHttp === true || LOOPBACK_NAMES.has(url.hostname),
  timeout: Duration.decode(options.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT)
})

/** The `oauth4webapi` request options for `url`: our fetch, `http:` where allowed, the abort signal. */
export const requestOptions = (http: Http, url: URL | string | undefined, signal?: AbortSignal) => {
  const target = url === undefined ? undefined : new URL(url)
  return {
    [oauth.customFetch]: http.fetch,
    ...(signal === undefined ? {} : { signal }),
    ...(target !== undefined && target.protocol === "http:" && http.insecureAllowed(target)
      ? { [oauth.allowInsecureRequests]: true }
      : {})
  }
}

/**
 * How close a host is to this machine: 0 loopback (and the unspecified address), 1 private or
 * link-local, 2 anything else (every name but `localhost`: names are not resolved).
 */
export const nearness = (url: URL): 0 | 1 | 2 => {
  const host = url.hostname.toLowerCase()
  if (host === "localhost" || host.endsWith(".localhost")) return 0
  const v4 = ipv4(host.startsWith("[") ? mappedV4(host.slice(1, -1)) ?? "" : host)
  if (v4 !== undefined) {
    const [a, b] = v4
    // 0.0.0.0 reaches this machine on Linux and macOS
    if (a === 127 || a === 0) return 0
    // 10/8, 100.64/10 (shared), 169.254/16 (link-local, cloud metadata), 172.16/12, 192.168/16
    if (
      a === 10 || (a === 100 && b >= 64 && b < 128) || (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168)
    ) return 1
    return 2
  }
  if (!host.startsWith("[")) return 2
  const v6 = host.slice(1, -1)
  if (v6 === "::1" || v6 === "::") return 0
  // fc00::/7 (unique local), fe80::/10 (link-local); WHATWG URL writes groups without leading zeros
  if (/^f[cd][0-9a-f]{2}:/.test(v6) || /^fe[89ab][0-9a-f]:/.test(v6)) return 1
  return 2
}

/** A dotted IPv4 literal as its four numbers (WHATWG URL has normalized other IPv4 spellings). */
const ipv4 = (host: string): readonly [number, number] | undefined => {
  const m = /^(\d{1,3})\.(\d{1,3})\.\d{1,3}\.\d{1,3}$/.exec(host)
  return m === null ? undefined : [Number(m[1]), Number(m[2])]
}

/** `::ffff:7f00:1` (an IPv4-mapped IPv6 address, as WHATWG URL serializes it) as `127.0.0.1`. */
const mappedV4 = (v6: string): string | undefined => {
  const m = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v6)
  if (m === null) return undefined
  const hi = parseInt(m[1] ?? "0", 16)
  const lo = parseInt(m[2] ?? "0", 16)
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
}

const NEARNESS = ["a loopback", "a private", "a public"] as const

/**
 * The URL policy (module header) for `url`, which the MCP endpoint `server` (or a document it
 * led to) named as `what`: the parsed URL, or `OAuthError` `"UnsafeUrl"`.
 */
export const checkUrl = (http: Http, server: URL, url: string | URL, what: string): Either.Either<URL, OAuthError> => {
  const unsafe = (why: string) => Either.left(new OAuthError({ reason: "UnsafeUrl", message: `${what} ${why}` }))
  const parsed = typeof url === "string"
    ? (URL.canParse(url) ? new URL(url) : undefined)
    : url instanceof URL
    ? url
    : undefined
  if (parsed === undefined) return unsafe("is not a URL")
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    return unsafe(`has the scheme ${parsed.protocol.slice(0, 16)} (only https: is used)`)
  }
  if (!http.insecureAllowed(parsed)) return unsafe(`is not HTTPS (${parsed.origin})`)
  const near = nearness(parsed)
  if (near < nearness(server)) {
    return unsafe(`points ${NEARNESS[nearness(server)]} server's client at ${NEARNESS[near]} address (${parsed.host})`)
  }
  return Either.right(parsed)
}

/**
 * One GET of a metadata document: redirects followed (at most {@link MAX_REDIRECTS}, each
 * location through {@link checkUrl}), the body bounded, the whole within `http.timeout`. A
 * network failure is `"Discovery"`, a bound `"Limit"`, a refused location `"UnsafeUrl"`.
 */
export const get = (http: Http, server: URL, url: URL): Effect.Effect<Response, OAuthError> => {
  const hop = (at: URL, left: number): Effect.Effect<Response, OAuthError> =>
    Effect.gen(function*() {
      const response = yield* Effect.tryPromise({
        try: (signal) => http.fetch(at, { headers: { accept: "application/json" }, redirect: "manual", signal }),
        catch: (e) =>
          e instanceof LimitExceeded
            ? new OAuthError({ reason: "Limit", message: `GET ${at.href}: ${e.message}` })
            : new OAuthError({
              reason: "Discovery",
              message: `GET ${at.href} failed: ${e instanceof Error ? e.message : "network error"}`
            })
      })
      const location = response.headers.get("location")
      if (response.status < 300 || response.status > 399 || location === null) return response
      if (left === 0) {
        return yield* new OAuthError({
          reason: "Limit",
          message: `GET ${url.href}: more than ${MAX_REDIRECTS} redirects`
        })
      }
      const next = yield* checkUrl(
        http,
        server,
        URL.canParse(location, at) ? new URL(location, at) : location,
        `the redirect from ${at.href}`
      )
      return yield* hop(next, left - 1)
    })
  return hop(url, MAX_REDIRECTS).pipe(
    Effect.timeoutFail({
      duration: http.timeout,
      onTimeout: () =>
        new OAuthError({
          reason: "Limit",
          message: `GET ${url.href}: no complete answer within ${Duration.format(http.timeout)}`
        })
    })
  )
}
