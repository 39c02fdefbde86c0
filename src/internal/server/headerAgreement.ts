/**
 * The 2026-07-28 HTTP header ↔ body agreement rule (SEP-2243; MCP 2026-07-28, Transports, "Streamable HTTP", request metadata headers).
 * @internal
 */
import * as Option from "effect/Option"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import * as Task from "../../Task.js"
import { quote } from "../quote.js"

/** Header names, as the spec spells them. */
export const Header = {
  protocolVersion: "MCP-Protocol-Version",
  method: "Mcp-Method",
  name: "Mcp-Name",
  paramPrefix: "Mcp-Param-",
  sessionId: "Mcp-Session-Id",
  lastEventId: "Last-Event-ID"
} as const

/** Header lookup that ignores the name's case; values are trimmed (RFC 9110 field parsing). */
export const getHeader = (
  headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>,
  name: string
): string | undefined => {
  const lower = name.toLowerCase()
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() === lower) {
      const v = headers[key]
      const s = typeof v === "string" ? v : v?.[0]
      return s === undefined ? undefined : s.trim()
    }
  }
  return undefined
}

const B64 = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/

/** Decodes `=?base64?…?=` header values (UTF-8); other values are returned as they are. */
export const decodeHeaderValue = (value: string): Option.Option<string> => {
  const m = B64.exec(value)
  if (m === null) return Option.some(value)
  const encoded = m[1] ?? ""
  // `atob` tolerates missing padding; SEP-2243 requires canonical base64 (a length of 4n).
  if (encoded.length % 4 !== 0) return Option.none()
  try {
    const bin = atob(encoded)
    const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0))
    return Option.some(new TextDecoder("utf-8", { fatal: true }).decode(bytes))
  } catch {
    return Option.none()
  }
}

const needsEncoding = (value: string): boolean =>
  !/^[\x20-\x7E]*$/.test(value) || value !== value.trim() || B64.test(value)

/** Encodes a header value, using `=?base64?…?=` when it is not plain visible ASCII. */
export const encodeHeaderValue = (value: string): string => {
  if (!needsEncoding(value)) return value
  const bytes = new TextEncoder().encode(value)
  let bin = ""
  for (const b of bytes) bin += String.fromCharCode(b)
  return `=?base64?${btoa(bin)}?=`
}

/**
 * The `Mcp-Name` source of a request: `params.name` or `params.uri`, by method; `params.taskId`
 * for the Tasks extension's `tasks/get`, `tasks/update`, `tasks/cancel` (SEP-2663).
 */
export const nameOf = (method: string, params: JsonRpc.JsonObject | undefined): string | undefined => {
  if (method === McpSchema.Method.toolsCall || method === McpSchema.Method.promptsGet) {
    return typeof params?.name === "string" ? params.name : undefined
  }
  if (method === McpSchema.Method.resourcesRead) return typeof params?.uri === "string" ? params.uri : undefined
  if (method === Task.Method.get || method === Task.Method.update || method === Task.Method.cancel) {
    return typeof params?.taskId === "string" ? params.taskId : undefined
  }
  return undefined
}

/** One `x-mcp-header` annotation: the header's suffix, the property's path and its JSON Schema `type`. */
export interface HeaderParam {
  readonly header: string
  readonly path: ReadonlyArray<string>
  readonly type: string
}

/** `x-mcp-header` annotations of an input schema: header suffix → property path. */
export const headerParams = (schema: JsonRpc.JsonObject): ReadonlyArray<HeaderParam> => {
  const out: Array<HeaderParam> = []
  const walk = (node: JsonRpc.JsonObject, path: ReadonlyArray<string>, depth: number) => {
    if (depth > 16 || !JsonRpc.isObject(node.properties)) return
    for (const [key, sub] of Object.entries(node.properties)) {
      if (!JsonRpc.isObject(sub)) continue
      const h = sub["x-mcp-header"]
      if (typeof h === "string" && h.length > 0) {
        out.push({ header: h, path: [...path, key], type: typeof sub.type === "string" ? sub.type : "" })
      }
      walk(sub, [...path, key], depth + 1)
    }
  }
  walk(schema, [], 0)
  return out
}

/** The value at `path` (property names) inside `args`; `undefined` where a step is not an object. */
export const valueAt = (args: unknown, path: ReadonlyArray<string>): unknown => {
  let cur = args
  for (const k of path) {
    if (!JsonRpc.isObject(cur) || !Object.hasOwn(cur, k)) return undefined
    cur = cur[k]
  }
  return cur
}

/**
 * A number in an `Mcp-Param-*` header: an integer is sent "as decimal" (MCP 2026-07-28, Transports,
 * "Streamable HTTP", custom headers from tool parameters) and compared numerically, so `42.0`
 * equals `42`. The grammar is JSON's number without an exponent: an optional `-`, no leading
 * zeros, an optional fraction. `Number()` alone would also take `0x2a`, `0b101010`, `4.2e1`, `+42`,
 * `42.` or `.5`, forms the spec does not produce.
 */
const DECIMAL = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/

/**
 * Checks a modern request's headers against its body. Returns the -32020 error, or none.
 * Bodies that are not modern requests, or that lack the required `_meta` keys, are left to the
 * dispatcher (which answers -32602 for the latter: `_meta` problems are reported first). The
 * public `McpServer.checkHeaders`: it classifies the body, then {@link checkClassified}.
 */
export const check = (
  message: unknown,
  headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>,
  inputSchema?: JsonRpc.JsonObject
): Option.Option<JsonRpc.McpError> => {
  const classified = JsonRpc.classify(message)
  if (classified._tag !== "Request") return Option.none()
  const request = classified.message
  const meta = request.params?._meta
  if (!JsonRpc.isObject(meta)) return Option.none()
  const bodyVersion = meta[McpSchema.MetaKey.protocolVersion]
  if (typeof bodyVersion !== "string" || !JsonRpc.isObject(meta[McpSchema.MetaKey.clientCapabilities])) {
    return Option.none()
  }
  const params = request.method === McpSchema.Method.toolsCall && inputSchema !== undefined
    ? headerParams(inputSchema)
    : undefined
  return checkClassified(request, bodyVersion, headers, params)
}

/**
 * {@link check} for a request the server has classified: a 2026-07-28 request whose `_meta`
 * carries `protocolVersion` (its era, read once); `params`: the `x-mcp-header` parameters of the
 * tool a `tools/call` names (precompiled with the tool), none otherwise.
 */
export const checkClassified = (
  request: JsonRpc.Request,
  protocolVersion: string,
  headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>,
  params: ReadonlyArray<HeaderParam> | undefined
): Option.Option<JsonRpc.McpError> => {
  const method = request.method
  const mismatch = (m: string) => Option.some(JsonRpc.McpError.headerMismatch(`Header mismatch: ${m}`))
  const version = getHeader(headers, Header.protocolVersion)
  if (version === undefined) return mismatch(`${Header.protocolVersion} header is required`)
  if (version !== protocolVersion) {
    return mismatch(
      `${Header.protocolVersion} header value '${quote(version)}' does not match body value '${quote(protocolVersion)}'`
    )
  }
  const methodHeader = getHeader(headers, Header.method)
  if (methodHeader === undefined) return mismatch(`${Header.method} header is required`)
  if (methodHeader !== method) {
    return mismatch(
      `${Header.method} header value '${quote(methodHeader)}' does not match body value '${quote(method)}'`
    )
  }
  const bodyName = nameOf(method, request.params)
  if (bodyName !== undefined) {
    const raw = getHeader(headers, Header.name)
    if (raw === undefined) return mismatch(`${Header.name} header is required for ${method}`)
    const decoded = decodeHeaderValue(raw)
    if (Option.isNone(decoded)) return mismatch(`${Header.name} header value is not valid base64 UTF-8`)
    if (decoded.value !== bodyName) {
      return mismatch(
        `${Header.name} header value '${quote(decoded.value)}' does not match body value '${quote(bodyName)}'`
      )
    }
  }
  for (const p of params ?? []) {
    const value = valueAt(request.params?.arguments, p.path)
    const raw = getHeader(headers, Header.paramPrefix + p.header)
    if (value === undefined || value === null) continue
    if (raw === undefined) return mismatch(`${Header.paramPrefix}${p.header} header is required`)
    const decoded = decodeHeaderValue(raw)
    if (Option.isNone(decoded)) return mismatch(`${Header.paramPrefix}${p.header} header value is malformed`)
    const same = typeof value === "number"
      ? DECIMAL.test(decoded.value) && Number(decoded.value) === value
      : String(value) === decoded.value
    if (!same) {
      return mismatch(
        `${Header.paramPrefix}${p.header} header value '${quote(decoded.value)}' does not match body value '${
          quote(String(value))
        }'`
      )
    }
  }
  return Option.none()
}

/** An RFC 9110 token (section 5.6.2): what a header name may be made of. */
export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const MAX_SAFE = Number.MAX_SAFE_INTEGER

/**
 * Checks the `x-mcp-header` annotations of a tool's input schema (SEP-2243, `x-mcp-header`): each is a
 * non-empty RFC 9110 token, unique case-insensitively, on an `integer`, `string` or `boolean`
 * property reachable from the root through `properties` only. Returns the first problem, or none.
 */
export const invalidHeaderAnnotation = (schema: unknown): Option.Option<string> => {
  const seen = new Set<string>()
  const walk = (node: unknown, viaProperties: boolean, depth: number): Option.Option<string> => {
    if (depth > 32) return Option.none()
    if (Array.isArray(node)) {
      for (const item of node) {
        const bad = walk(item, false, depth + 1)
        if (Option.isSome(bad)) return bad
      }
      return Option.none()
    }
    if (!JsonRpc.isObject(node)) return Option.none()
    if ("x-mcp-header" in node) {
      const h = node["x-mcp-header"]
      if (!viaProperties) return Option.some("x-mcp-header is only allowed on a property reached through properties")
      if (typeof h !== "string" || h.length === 0) return Option.some("x-mcp-header must be a non-empty string")
      if (!TOKEN.test(h)) return Option.some(`x-mcp-header "${h}" has characters outside an RFC 9110 token`)
      const key = h.toLowerCase()
      if (seen.has(key)) return Option.some(`x-mcp-header "${h}" is not unique`)
      seen.add(key)
      const type = node.type
      if (type !== "string" && type !== "integer" && type !== "boolean") {
        return Option.some(`x-mcp-header "${h}" is on a property of type ${JSON.stringify(type)}`)
      }
      if (type === "integer" && (typeof node.maximum === "number" && node.maximum > MAX_SAFE)) {
        return Option.some(`x-mcp-header "${h}" is on an integer beyond ±(2^53−1)`)
      }
    }
    for (const [k, v] of Object.entries(node)) {
      if (k === "x-mcp-header") continue
      if (k === "properties" && JsonRpc.isObject(v)) {
        for (const sub of Object.values(v)) {
          const bad = walk(sub, viaProperties, depth + 1)
          if (Option.isSome(bad)) return bad
        }
        continue
      }
      const bad = walk(v, false, depth + 1)
      if (Option.isSome(bad)) return bad
    }
    return Option.none()
  }
  return walk(schema, true, 0)
}
