/**
 * Wire-level test helpers: drive `McpServer.dispatch` with raw JSON-RPC messages in either era and
 * cross-check EVERY reply against the official JSON Schema of the revision it belongs to
 * (`assertSpecValid`). Replies are returned in their wire form (a JSON round trip of what the
 * server produced), so tests see exactly what a transport would carry.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { JsonRpc, McpServer, type Transport } from "presa-mcp"
import { assertSpecValid, type Revision } from "./SpecSchema.js"

export type { Revision }

export type JsonObject = { readonly [key: string]: unknown }

export type Headers = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

export const MODERN = "2026-07-28" as const

export const KEY = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  clientInfo: "io.modelcontextprotocol/clientInfo",
  serverInfo: "io.modelcontextprotocol/serverInfo",
  logLevel: "io.modelcontextprotocol/logLevel"
} as const

// ---------------------------------------------------------------------------------------------
// guards and diggers (no `any`: everything read from JSON is `unknown` until checked)
// ---------------------------------------------------------------------------------------------

export const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

/** Digs into JSON: `get(msg, "result", "content", 0, "text")`; `undefined` when a step is missing. */
export const get = (value: unknown, ...path: ReadonlyArray<string | number>): unknown => {
  let cur: unknown = value
  for (const key of path) {
    if (typeof key === "number") {
      if (!Array.isArray(cur)) return undefined
      cur = cur[key]
    } else {
      if (!isObject(cur) || !Object.hasOwn(cur, key)) return undefined
      cur = cur[key]
    }
  }
  return cur
}

/** Own keys of a JSON object (fails the test when it is not one). */
export const keysOf = (value: unknown): ReadonlyArray<string> => {
  if (!isObject(value)) throw new Error(`expected a JSON object, got ${JSON.stringify(value)}`)
  return Object.keys(value)
}

export const asArray = (value: unknown): ReadonlyArray<unknown> => {
  if (!Array.isArray(value)) throw new Error(`expected a JSON array, got ${JSON.stringify(value)}`)
  return value
}

export const asString = (value: unknown): string => {
  if (typeof value !== "string") throw new Error(`expected a string, got ${JSON.stringify(value)}`)
  return value
}

// ---------------------------------------------------------------------------------------------
// messages
// ---------------------------------------------------------------------------------------------

export const request = (id: JsonRpc.RequestId, method: string, params?: JsonObject): JsonObject =>
  params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params }

export const notification = (method: string, params?: JsonObject): JsonObject =>
  params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params }

/** The required modern `_meta` keys (client info left out: it is optional). */
export const modernMeta = (extra: JsonObject = {}): JsonObject => ({
  [KEY.protocolVersion]: MODERN,
  [KEY.clientCapabilities]: {},
  ...extra
})

/** Adds modern `_meta` to params (merging any `_meta` already there). */
export const withModernMeta = (params: JsonObject = {}): JsonObject => ({
  ...params,
  _meta: { ...modernMeta(), ...(isObject(params._meta) ? params._meta : {}) }
})

export const initializeParams = (protocolVersion: string): JsonObject => ({
  protocolVersion,
  capabilities: {},
  clientInfo: { name: "wire-test", version: "1.0.0" }
})

// ---------------------------------------------------------------------------------------------
// replies
// ---------------------------------------------------------------------------------------------

/** A reply in wire form (JSON round trip) and its HTTP status. */
export interface Reply {
  readonly message: unknown
  readonly status: number
}

export interface ErrorView {
  readonly code: number
  readonly message: string
  readonly data: unknown
}

/** The `result` object of a reply (fails the test when the reply is an error). */
export const resultOf = (reply: Reply): JsonObject => {
  const result = get(reply.message, "result")
  if (!isObject(result)) throw new Error(`expected a result, got ${JSON.stringify(reply.message)}`)
  return result
}

/** The `error` object of a reply (fails the test when the reply is a result). */
export const errorOf = (reply: Reply): ErrorView => {
  const error = get(reply.message, "error")
  const code = get(error, "code")
  const message = get(error, "message")
  if (typeof code !== "number" || typeof message !== "string") {
    throw new Error(`expected an error, got ${JSON.stringify(reply.message)}`)
  }
  return { code, message, data: get(error, "data") }
}

/** The text of `result.content[i]` of a `tools/call` reply. */
export const textAt = (reply: Reply, index = 0): unknown => get(reply.message, "result", "content", index, "text")

const methodOf = (message: unknown): string => {
  const m = get(message, "method")
  return typeof m === "string" ? m : "(invalid)"
}

const toWire = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

/**
 * Dispatches one message; expects a reply, checks it against the official schema of `rev`, and
 * returns it in wire form.
 */
export const dispatchChecked = (
  server: McpServer.McpServer,
  rev: Revision,
  message: unknown,
  options?: McpServer.DispatchOptions
): Effect.Effect<Reply> =>
  McpServer.dispatch(server, message, options).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.dieMessage(`expected a reply to ${JSON.stringify(message)}, got none`),
      onSome: (reply) =>
        Effect.sync((): Reply => {
          const wire = toWire(reply.message)
          assertSpecValid(rev, methodOf(message), wire)
          return { message: wire, status: reply.status }
        })
    }))
  )

/** Dispatches one message and expects NO reply. */
export const dispatchNone = (
  server: McpServer.McpServer,
  message: unknown,
  options?: McpServer.DispatchOptions
): Effect.Effect<void> =>
  McpServer.dispatch(server, message, options).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.void,
      onSome: (reply) => Effect.dieMessage(`expected no reply, got ${JSON.stringify(reply.message)}`)
    }))
  )

// ---------------------------------------------------------------------------------------------
// connections: a modern peer, or a legacy session after the handshake
// ---------------------------------------------------------------------------------------------

export interface CallOptions {
  readonly id?: JsonRpc.RequestId
  readonly headers?: Headers
  /** Extra `_meta` keys (modern: merged over the required ones). */
  readonly meta?: JsonObject
}

export interface Conn {
  readonly server: McpServer.McpServer
  /** The revision replies are checked against. */
  readonly rev: Revision
  readonly session: McpServer.Session | undefined
  /** A request (modern: `_meta` added) → its checked reply. */
  readonly call: (method: string, params?: JsonObject, options?: CallOptions) => Effect.Effect<Reply>
  /** Any raw message → its checked reply. */
  readonly raw: (message: unknown, options?: { readonly headers?: Headers }) => Effect.Effect<Reply>
  /** Any raw message that must get no reply. */
  readonly rawNone: (message: unknown) => Effect.Effect<void>
}

const makeConn = (
  server: McpServer.McpServer,
  rev: Revision,
  session: McpServer.Session | undefined,
  addMeta: boolean
): Effect.Effect<Conn> =>
  Effect.map(Ref.make(1), (ids): Conn => {
    const opts = (headers?: Headers): McpServer.DispatchOptions => ({
      ...(session === undefined ? {} : { session }),
      ...(headers === undefined ? {} : { headers })
    })
    return {
      server,
      rev,
      session,
      call: (method, params, options) =>
        Effect.gen(function*() {
          const id = options?.id ?? (yield* Ref.getAndUpdate(ids, (n) => n + 1))
          const p = addMeta
            ? withModernMeta({
              ...params,
              _meta: { ...(isObject(params?._meta) ? params._meta : {}), ...(options?.meta ?? {}) }
            })
            : options?.meta === undefined
            ? params
            : { ...params, _meta: options.meta }
          return yield* dispatchChecked(server, rev, request(id, method, p), opts(options?.headers))
        }),
      raw: (message, options) => dispatchChecked(server, rev, message, opts(options?.headers)),
      rawNone: (message) => dispatchNone(server, message, opts())
    }
  })

/** A modern (2026-07-28) peer: every request carries the `_meta` keys; no session. */
export const modern = (
  server: McpServer.McpServer,
  options: { readonly session?: McpServer.Session } = {}
): Effect.Effect<Conn> => makeConn(server, MODERN, options.session, true)

/**
 * A legacy session: `initialize` (its reply checked and returned as `init`), then
 * `notifications/initialized` (no reply), then requests without `_meta`.
 */
export const legacy = (
  server: McpServer.McpServer,
  rev: "2025-11-25" | "2025-06-18"
): Effect.Effect<Conn & { readonly init: Reply }> =>
  Effect.gen(function*() {
    const session = yield* McpServer.makeSession
    const init = yield* dispatchChecked(server, rev, request("init", "initialize", initializeParams(rev)), {
      session
    })
    yield* dispatchNone(server, notification("notifications/initialized"), { session })
    const conn = yield* makeConn(server, rev, session, false)
    return { ...conn, init }
  })

/** Both eras, for `describe.each`-style loops: a modern peer and the two legacy revisions. */
export const ERAS = ["2026-07-28", "2025-11-25", "2025-06-18"] as const

export const connect = (server: McpServer.McpServer, rev: Revision): Effect.Effect<Conn> =>
  rev === MODERN ? modern(server) : legacy(server, rev)

// ---------------------------------------------------------------------------------------------
// client transport wrapper: every response the client receives is cross-checked too
// ---------------------------------------------------------------------------------------------

const asRevision = (u: unknown): Revision | undefined =>
  u === "2026-07-28" || u === "2025-11-25" || u === "2025-06-18" ? u : undefined

/**
 * Wraps a client transport: each response is checked against the official schema of the revision
 * its request was sent under (the `_meta` version for modern requests, the negotiated version
 * for legacy ones). `checked` counts the responses seen.
 */
export const checkedTransport = (
  inner: Transport.ClientTransport
): Effect.Effect<{ readonly transport: Transport.ClientTransport; readonly checked: Ref.Ref<number> }> =>
  Effect.gen(function*() {
    const negotiated = yield* Ref.make<Revision | undefined>(undefined)
    const checked = yield* Ref.make(0)
    const transport: Transport.ClientTransport = {
      request: (message, options) =>
        Effect.gen(function*() {
          const response = yield* inner.request(message, options)
          const wire = toWire(response)
          const metaVersion = get(message.params, "_meta", KEY.protocolVersion)
          let rev: Revision
          if (metaVersion !== undefined) {
            rev = asRevision(metaVersion) ?? MODERN
          } else if (message.method === "initialize") {
            rev = asRevision(get(wire, "result", "protocolVersion")) ??
              asRevision(get(message.params, "protocolVersion")) ?? "2025-11-25"
            if (get(wire, "result") !== undefined) yield* Ref.set(negotiated, rev)
          } else {
            rev = (yield* Ref.get(negotiated)) ?? "2025-11-25"
          }
          yield* Effect.sync(() => assertSpecValid(rev, message.method, wire))
          yield* Ref.update(checked, (n) => n + 1)
          return response
        }),
      notify: inner.notify
    }
    return { transport, checked }
  })

/** Wraps a client transport and records every request it sends (in order), in `sent`. */
export const recording = (inner: Transport.ClientTransport) =>
  Effect.gen(function*() {
    const sent = yield* Ref.make<ReadonlyArray<JsonRpc.Request>>([])
    const transport: Transport.ClientTransport = {
      ...inner,
      request: (message, options) =>
        Effect.zipRight(Ref.update(sent, (xs) => [...xs, message]), inner.request(message, options))
    }
    return { transport, sent }
  })
