/**
 * Streamable HTTP helpers shared by the server and the client: media types (`Accept`,
 * `Content-Type`), the Origin / Host allow-lists, SSE framing and bounded body reading.
 * No Node APIs here.
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

/** `application/json` */
export const JSON_TYPE = "application/json"
/** `text/event-stream` */
export const SSE_TYPE = "text/event-stream"

/**
 * A request header by its lower-case name (Node and the platform keep them lower-case); the first
 * value of a repeated one.
 */
export const header = (
  headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>,
  name: string
): string | undefined => {
  const value = headers[name]
  return typeof value === "string" ? value : value?.[0]
}

// ---------------------------------------------------------------------------------------------
// media types
// ---------------------------------------------------------------------------------------------

/** One media range of an `Accept` header. */
export interface MediaRange {
  readonly type: string
  readonly subtype: string
  readonly q: number
}

/** Parses an `Accept` header into media ranges (lowercased; `q` defaults to 1). */
export const parseAccept = (header: string | undefined): ReadonlyArray<MediaRange> => {
  if (header === undefined) return []
  const out: Array<MediaRange> = []
  for (const part of header.split(",")) {
    const [range, ...params] = part.split(";")
    const [type, subtype] = (range ?? "").trim().toLowerCase().split("/")
    if (type === undefined || type === "" || subtype === undefined || subtype === "") continue
    let q = 1
    for (const p of params) {
      const [k, v] = p.split("=")
      if (k?.trim().toLowerCase() === "q" && v !== undefined) {
        const n = Number(v.trim())
        if (Number.isFinite(n)) q = n
      }
    }
    out.push({ type, subtype, q })
  }
  return out
}

/** Does some range with `q > 0` match `mediaType` (exactly, `type/*`, or `*\/*`)? */
export const accepts = (ranges: ReadonlyArray<MediaRange>, mediaType: string): boolean => {
  const [type, subtype] = mediaType.split("/")
  return ranges.some((r) =>
    r.q > 0 && (r.type === "*" || (r.type === type && (r.subtype === "*" || r.subtype === subtype)))
  )
}

/** The `type/subtype` of a `Content-Type` value, lowercased, without parameters. */
export const mediaTypeOf = (contentType: string | undefined): string | undefined => {
  if (contentType === undefined) return undefined
  const t = contentType.split(";")[0]?.trim().toLowerCase()
  return t === undefined || t === "" ? undefined : t
}

// ---------------------------------------------------------------------------------------------
// Origin / Host allow-lists (MCP 2025-11-25, Transports, "Security Warning": DNS rebinding)
// ---------------------------------------------------------------------------------------------

/** Loopback origins, any port, http and https. */
export const loopbackOrigins: ReadonlyArray<string> = [
  "http://localhost:*",
  "http://127.0.0.1:*",
  "http://[::1]:*",
  "https://localhost:*",
  "https://127.0.0.1:*",
  "https://[::1]:*"
]

/** Loopback host names (the `Host` header without its port). */
export const loopbackHosts: ReadonlyArray<string> = ["localhost", "127.0.0.1", "[::1]"]

/** Is a bind address a loopback one (`127.0.0.0/8`, `::1`, `localhost`)? */
export const isLoopbackAddress = (host: string): boolean => {
  const h = stripBrackets(host.toLowerCase())
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h)
}

const stripBrackets = (h: string): string => h.startsWith("[") && h.endsWith("]") ? h.slice(1, -1) : h

const parseUrl = (s: string): URL | undefined => {
  try {
    return new URL(s)
  } catch {
    return undefined
  }
}

/**
 * Is `origin` (an `Origin` header value) allowed by `allowed`? Entries are origins
 * (`https://app.example.com`, compared after URL normalisation), origins with a wildcard port
 * (`http://localhost:*`), or the literal `null` (allows `Origin: null`). `"any"` allows all.
 */
export const originAllowed = (origin: string, allowed: ReadonlyArray<string> | "any"): boolean => {
  if (allowed === "any") return true
  const value = origin.trim()
  if (value === "null") return allowed.includes("null")
  const url = parseUrl(value)
  if (url === undefined || url.origin === "null") return false
  for (const entry of allowed) {
    if (entry === "null") continue
    if (entry.endsWith(":*")) {
      const base = parseUrl(entry.slice(0, -2))
      if (base !== undefined && base.protocol === url.protocol && base.hostname === url.hostname) return true
    } else {
      const e = parseUrl(entry)
      if (e !== undefined && e.origin === url.origin) return true
    }
  }
  return false
}

/** The host name of a `Host` header value (port removed, lowercased, IPv6 kept in brackets). */
export const hostNameOf = (host: string): string => {
  const h = host.trim().toLowerCase()
  if (h.startsWith("[")) {
    const end = h.indexOf("]")
    return end === -1 ? h : h.slice(0, end + 1)
  }
  const colon = h.indexOf(":")
  return colon === -1 ? h : h.slice(0, colon)
}

/** Is the `Host` header value allowed? Entries are host names without port; `"any"` allows all. */
export const hostAllowed = (host: string, allowed: ReadonlyArray<string> | "any"): boolean => {
  if (allowed === "any") return true
  const name = stripBrackets(hostNameOf(host))
  return allowed.some((entry) => stripBrackets(entry.trim().toLowerCase()) === name)
}

// ---------------------------------------------------------------------------------------------
// SSE framing
// ---------------------------------------------------------------------------------------------

/** One SSE `message` event carrying one JSON-RPC message (`data` is compact JSON: one line). */
export const sseEvent = (data: string, id?: number | string): string =>
  id === undefined ? `event: message\ndata: ${data}\n\n` : `id: ${id}\nevent: message\ndata: ${data}\n\n`

/** A priming event: an id and empty data (sets the client's Last-Event-ID, dispatches nothing useful). */
export const ssePriming = (id: number | string): string => `id: ${id}\ndata: \n\n`

/** A `retry` field alone: the client waits this many milliseconds before it reconnects (dispatches no event). */
export const sseRetry = (millis: number): string => `retry: ${Math.max(0, Math.floor(millis))}\n\n`

/** A keep-alive comment. */
export const ssePing = ": ping\n\n"

// ---------------------------------------------------------------------------------------------
// bounded bodies
// ---------------------------------------------------------------------------------------------

/** A body was longer than the limit. */
export class BodyTooLarge extends Data.TaggedError("BodyTooLarge")<{ readonly limitBytes: number }> {}

/**
 * Collects a byte stream, failing with `BodyTooLarge` when it exceeds `maxBytes`. With
 * `discardBytes`, the bytes past the limit are read and dropped until the stream ends, and the
 * failure comes then, unless the stream goes on past `maxBytes + discardBytes` (failure at once).
 * Reading a too-large request body to its end lets the client finish its upload and read the
 * `413` (stopping early makes the platform destroy the request, which the client sees as a reset).
 */
/**
 * What a body of `size` bytes so far (this chunk included) means for its reading under the limits
 * of `readBounded`: keep the chunk, drop it (over `maxBytes`: read on, then `413`), or stop
 * (over `maxBytes + discardBytes`). The one rule both readers of a body apply.
 */
export const bodyLimit = (size: number, maxBytes: number, discardBytes: number): "keep" | "drop" | "stop" =>
  size <= maxBytes ? "keep" : size > maxBytes + discardBytes ? "stop" : "drop"

export const readBounded = <E>(
  stream: Stream.Stream<Uint8Array, E>,
  maxBytes: number,
  discardBytes = 0
): Effect.Effect<Uint8Array, E | BodyTooLarge> =>
  Effect.flatMap(
    Stream.runFoldEffect(
      stream,
      { chunks: Chunk.empty<Uint8Array>(), size: 0 },
      (acc, chunk) => {
        const size = acc.size + chunk.byteLength
        switch (bodyLimit(size, maxBytes, discardBytes)) {
          case "keep":
            return Effect.succeed({ chunks: Chunk.append(acc.chunks, chunk), size })
          case "drop":
            return Effect.succeed({ chunks: Chunk.empty<Uint8Array>(), size })
          case "stop":
            return Effect.fail(new BodyTooLarge({ limitBytes: maxBytes }))
        }
      }
    ),
    ({ chunks, size }) =>
      size > maxBytes ? Effect.fail(new BodyTooLarge({ limitBytes: maxBytes })) : Effect.sync(() => {
        const out = new Uint8Array(size)
        let offset = 0
        for (const c of chunks) {
          out.set(c, offset)
          offset += c.byteLength
        }
        return out
      })
  )

/** One strict decoder: without `stream`, each `decode` call stands alone. */
const utf8 = new TextDecoder("utf-8", { fatal: true })

/** Strict UTF-8 decoding: `None` for invalid byte sequences. */
export const decodeUtf8 = (bytes: Uint8Array): Option.Option<string> => {
  try {
    return Option.some(utf8.decode(bytes))
  } catch {
    return Option.none()
  }
}
