/**
 * What a request is, decided once, at the transport's edge: its era (MCP 2026-07-28, Basic,
 * "Protocol version": a request carries its version in `_meta`, or over HTTP names a modern
 * revision in `MCP-Protocol-Version`) with the `_meta` fields a modern request must carry, and its
 * row in the method table. A transport that classifies a request hands this on with it
 * (`Connection.Incoming.classification`); the core classifies the requests that come without one
 * with the same function, so each request is classified once whichever way it came.
 *
 * The compiled target (the tool a `tools/call` names) is not part of it: it lives in the snapshot,
 * which a request reads once when it is dispatched; it is found there once and handed to the
 * header check, the visibility check and the handler.
 * @internal
 */
import * as Option from "effect/Option"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import { quote } from "../quote.js"
import { Failure } from "./failure.js"
import * as HeaderRules from "./headerAgreement.js"
import * as Methods from "./methods.js"
import type { Headers, Server } from "./model.js"

const { McpError } = JsonRpc

/** The era of a request, as its handlers see it (`RequestContext`). */
export interface Era {
  readonly era: "modern" | "legacy"
  readonly protocolVersion: string
  readonly clientInfo: McpSchema.Implementation | undefined
  readonly clientCapabilities: McpSchema.ClientCapabilities
}

/** A request as classified once (see the module's documentation). */
export interface Classification {
  /**
   * A 2026-07-28 request's era, read from its `_meta`, or the -32602 `Failure` (HTTP 400) naming
   * what `_meta` lacks; `"legacy"` for a request of the handshake revisions, whose era is its
   * session's (read when it is dispatched).
   */
  readonly era: Era | Failure | "legacy"
  /** The method's row in the table; `undefined` for `initialize` and for unknown methods. */
  readonly entry: Methods.Entry<JsonRpc.JsonObject> | undefined
}

/** Classifies one request (`headers`: HTTP only). */
export const classify = (
  server: Server,
  request: JsonRpc.Request,
  headers: Headers | undefined
): Classification => {
  const params = request.params
  const meta = params?._meta
  return {
    era: isModern(request.method, params, headers)
      ? modernEra(server, JsonRpc.isObject(meta) ? meta : undefined)
      : "legacy",
    entry: Methods.lookup(request.method)
  }
}

/**
 * Is this request or notification of the 2026-07-28 era? Yes when its `params._meta` carries the
 * protocol version key, or (HTTP) when its `MCP-Protocol-Version` header names a modern revision
 * and it is not `initialize`. The one place the era of a message is decided.
 */
export const isModern = (
  method: string,
  params: JsonRpc.JsonObject | undefined,
  headers: Headers | undefined
): boolean => {
  const meta = params?._meta
  if (JsonRpc.isObject(meta) && McpSchema.MetaKey.protocolVersion in meta) return true
  if (headers === undefined) return false
  const version = HeaderRules.getHeader(headers, HeaderRules.Header.protocolVersion)
  return version !== undefined && McpSchema.isModernVersion(version) && method !== McpSchema.Method.initialize
}

/**
 * Does the method table refuse this method in this era (-32601, HTTP 404)? A method belongs to
 * the eras its row names; `initialize` (outside the table) to the handshake revisions only. The
 * one source of which methods each era has.
 */
export const refusedIn = (
  era: "modern" | "legacy",
  method: string,
  entry: Methods.Entry<JsonRpc.JsonObject> | undefined
): boolean =>
  entry === undefined
    ? era === "modern" && method === McpSchema.Method.initialize
    : entry.eras !== "both" && entry.eras !== era

// Hot path: the capability and client-info objects are open objects; a guard is enough (and far
// cheaper than a Schema decode on every request).
const KNOWN_CLIENT_CAPABILITIES = ["roots", "sampling", "elicitation", "experimental", "extensions"] as const
const decodeClientCapabilities = (u: unknown): Option.Option<McpSchema.ClientCapabilities> =>
  JsonRpc.isObject(u) && KNOWN_CLIENT_CAPABILITIES.every((k) => u[k] === undefined || JsonRpc.isObject(u[k]))
    ? Option.some(u)
    : Option.none()
const decodeImplementation = (u: unknown): Option.Option<McpSchema.Implementation> =>
  JsonRpc.isObject(u) && typeof u.name === "string" && typeof u.version === "string"
    ? Option.some({ ...u, name: u.name, version: u.version })
    : Option.none()

/** The era of a 2026-07-28 request, read from its `_meta`, or the -32602 `Failure` (HTTP 400). */
const modernEra = (server: Server, meta: JsonRpc.JsonObject | undefined): Era | Failure => {
  if (meta === undefined) {
    return new Failure(
      McpError.invalidParams(
        "Missing params._meta: 2026-07-28 requests carry their protocol version and client capabilities in _meta",
        { supported: server.versions }
      ),
      400
    )
  }
  const version = meta[McpSchema.MetaKey.protocolVersion]
  if (typeof version !== "string") {
    return new Failure(McpError.invalidParams(`Missing required _meta field ${McpSchema.MetaKey.protocolVersion}`), 400)
  }
  const caps = decodeClientCapabilities(meta[McpSchema.MetaKey.clientCapabilities])
  if (Option.isNone(caps)) {
    return new Failure(
      McpError.invalidParams(`Missing required _meta field ${McpSchema.MetaKey.clientCapabilities}`),
      400
    )
  }
  const rawInfo = meta[McpSchema.MetaKey.clientInfo]
  const info = rawInfo === undefined ? Option.some(undefined) : decodeImplementation(rawInfo)
  if (Option.isNone(info)) {
    return new Failure(
      McpError.invalidParams(`Invalid _meta field ${McpSchema.MetaKey.clientInfo}: name and version are required`),
      400
    )
  }
  const level = meta[McpSchema.MetaKey.logLevel]
  if (level !== undefined && !McpSchema.LOGGING_LEVELS.some((l) => l === level)) {
    return new Failure(
      McpError.invalidParams(`Invalid _meta field ${McpSchema.MetaKey.logLevel}: ${quote(String(level))}`),
      400
    )
  }
  return {
    era: "modern",
    protocolVersion: version,
    clientInfo: info.value,
    clientCapabilities: caps.value
  }
}
