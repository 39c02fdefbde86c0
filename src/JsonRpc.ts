/**
 * JSON-RPC 2.0 as MCP uses it: message classification, the error type every protocol failure
 * travels in ({@link McpError}), and the envelope constructors.
 *
 * MCP spec: Basic › Overview (messages, requests, notifications, responses) and the error code
 * table of 2026-07-28 (MCP 2026-07-28, Basic, "Error Codes").
 *
 * Guide: [Servers, results and errors](https://github.com/presa-mcp/presa-mcp/blob/main/docs/servers.md#results-and-errors).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { parseJson } from "./internal/json.js"
import { quote } from "./internal/quote.js"

/**
 * A JSON-RPC request id: a string or a number. Ids are echoed back with their exact JSON type
 * (`0` stays the number `0`, `"1"` stays a string). `null` is never a valid request id.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestId = string | number

/**
 * A JSON object as it appears on the wire (`params`, `result`, `_meta`).
 *
 * @since 0.1.0
 * @category models
 */
export type JsonObject = { readonly [key: string]: unknown }

/**
 * A request: `{jsonrpc: "2.0", id, method, params?}`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Request {
  readonly jsonrpc: "2.0"
  readonly id: RequestId
  readonly method: string
  readonly params?: JsonObject
}

/**
 * A notification: a request without an `id`. It is never answered, not even with an error.
 *
 * @since 0.1.0
 * @category models
 */
export interface Notification {
  readonly jsonrpc: "2.0"
  readonly method: string
  readonly params?: JsonObject
}

/**
 * The `error` member of an error response: `{code, message, data?}`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ErrorObject {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

/**
 * A successful response: `{jsonrpc: "2.0", id, result}`.
 *
 * @since 0.1.0
 * @category models
 */
export interface SuccessResponse {
  readonly jsonrpc: "2.0"
  readonly id: RequestId
  readonly result: JsonObject
}

/**
 * An error response. `id` is absent only when the request's id could not be read (parse error,
 * unreadable envelope): the 2025-11-25 and 2026-07-28 schemas make `id` optional and do not admit
 * `null`, so we omit it rather than send `"id": null`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ErrorResponse {
  readonly jsonrpc: "2.0"
  readonly id?: RequestId | null
  readonly error: ErrorObject
}

/**
 * Any response.
 *
 * @since 0.1.0
 * @category models
 */
export type Response = SuccessResponse | ErrorResponse

/**
 * Any JSON-RPC message MCP sends.
 *
 * @since 0.1.0
 * @category models
 */
export type Message = Request | Notification | Response

/**
 * JSON-RPC and MCP error codes (JSON-RPC 2.0, "Error object"; MCP 2026-07-28, Basic, "Error Codes"). Codes -32020…-32022 belong to MCP 2026-07-28.
 *
 * @since 0.1.0
 * @category symbols
 */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
  /** Legacy "resource not found" (≤ 2025-11-25); accepted by our client, never sent by our server. */
  LegacyResourceNotFound: -32002
} as const

/**
 * A protocol-level error: what a JSON-RPC error response carries. Handlers fail with it to answer
 * with a JSON-RPC error instead of a result; clients fail with it when the peer answered with one.
 *
 * Build it with the named constructors so each code is chosen in one place.
 *
 * @since 0.1.0
 * @category errors
 */
export class McpError extends Schema.TaggedError<McpError>("presa-mcp/McpError")("McpError", {
  code: Schema.Int,
  message: Schema.String,
  data: Schema.optional(Schema.Unknown)
}) {
  /**
   * -32700: the bytes are not JSON.
   *
   * @since 0.1.0
   */
  static parseError(message = "Parse error"): McpError {
    return new McpError({ code: ErrorCode.ParseError, message })
  }
  /**
   * -32600: JSON, but not a valid JSON-RPC request or notification.
   *
   * @since 0.1.0
   */
  static invalidRequest(message = "Invalid Request", data?: unknown): McpError {
    return new McpError(withData({ code: ErrorCode.InvalidRequest, message }, data))
  }
  /**
   * -32601: unknown method, or a method whose capability the server does not advertise. The
   * message and `data.method` quote `method` up to 256 characters (then `…`): an error never
   * echoes an unbounded part of a request.
   *
   * @since 0.1.0
   */
  static methodNotFound(method: string): McpError {
    const quoted = quote(method)
    return new McpError({
      code: ErrorCode.MethodNotFound,
      message: `Method not found: ${quoted}`,
      data: { method: quoted }
    })
  }
  /**
   * -32602: the params are wrong (unknown tool or prompt, missing argument, bad cursor, …).
   *
   * @since 0.1.0
   */
  static invalidParams(message: string, data?: unknown): McpError {
    return new McpError(withData({ code: ErrorCode.InvalidParams, message }, data))
  }
  /**
   * -32602 `Resource not found` with `data.uri` (SEP-2164; sent in both eras), quoted up to 256
   * characters (then `…`).
   *
   * @since 0.1.0
   */
  static resourceNotFound(uri: string): McpError {
    return new McpError({ code: ErrorCode.InvalidParams, message: "Resource not found", data: { uri: quote(uri) } })
  }
  /**
   * -32603 with a fixed message: details of the cause go to the logger, never to the wire.
   *
   * @since 0.1.0
   */
  static internalError(message = "Internal error"): McpError {
    return new McpError({ code: ErrorCode.InternalError, message })
  }
  /**
   * -32020: an HTTP header is missing, malformed or disagrees with the body (2026-07-28).
   *
   * @since 0.1.0
   */
  static headerMismatch(message: string): McpError {
    return new McpError({ code: ErrorCode.HeaderMismatch, message })
  }
  /**
   * -32021: handling needs a client capability the request did not declare.
   *
   * @since 0.1.0
   */
  static missingClientCapability(requiredCapabilities: JsonObject, message?: string): McpError {
    return new McpError({
      code: ErrorCode.MissingRequiredClientCapability,
      message: message ?? `Missing required client capability: ${Object.keys(requiredCapabilities).join(", ")}`,
      data: { requiredCapabilities }
    })
  }
  /**
   * -32022 with `data: {supported, requested}`; `requested` echoes what the client sent, a string
   * quoted up to 256 characters (then `…`).
   *
   * @since 0.1.0
   */
  static unsupportedVersion(supported: ReadonlyArray<string>, requested: unknown): McpError {
    const echoed = typeof requested === "string" ? quote(requested) : requested
    return new McpError({
      code: ErrorCode.UnsupportedProtocolVersion,
      message: `Unsupported protocol version: ${quote(String(requested))}`,
      data: { supported, requested: echoed }
    })
  }

  /**
   * From the wire form `{code, message, data?}` (a peer's error response), the inverse of `toErrorObject`.
   *
   * @since 0.1.0
   */
  static fromErrorObject(error: ErrorObject): McpError {
    return new McpError(withData({ code: error.code, message: error.message }, error.data))
  }

  /**
   * The wire form: `{code, message, data?}`.
   *
   * @since 0.1.0
   */
  toErrorObject(): ErrorObject {
    return withData({ code: this.code, message: this.message }, this.data)
  }
}

const withData = (
  fields: { readonly code: number; readonly message: string },
  data: unknown
): { readonly code: number; readonly message: string; readonly data?: unknown } =>
  data === undefined ? fields : { ...fields, data }

/**
 * The result of {@link classify}: what kind of message a JSON value is.
 * `Invalid` carries the error to answer with and the id when it could be read.
 *
 * @since 0.1.0
 * @category models
 */
export type Classified =
  | { readonly _tag: "Request"; readonly message: Request }
  | { readonly _tag: "Notification"; readonly message: Notification }
  | { readonly _tag: "Response"; readonly message: Response }
  | { readonly _tag: "Invalid"; readonly id: RequestId | undefined; readonly error: McpError }

/**
 * Is `u` a plain JSON object (not an array, not null)?
 *
 * @since 0.1.0
 * @category guards
 */
export const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Is `u` a valid request id (a string, or a finite number)?
 *
 * @since 0.1.0
 * @category guards
 */
export const isRequestId = (u: unknown): u is RequestId =>
  typeof u === "string" || (typeof u === "number" && Number.isFinite(u))

/**
 * Classifies any decoded JSON value as a request, notification, response or invalid message.
 *
 * - a JSON array (a batch) → `Invalid` -32600: batches are not part of 2025-06-18, 2025-11-25 or
 *   2026-07-28 (MCP 2026-07-28, Basic, "JSON-RPC Messages");
 * - `id: null`, a missing or non-string `method`, `params` that is not an object, a wrong
 *   `jsonrpc` → `Invalid` -32600 (with the id when it is readable);
 * - `result`/`error` with an id → `Response`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const classify = (value: unknown): Classified => {
  if (Array.isArray(value)) {
    return invalid(undefined, "Invalid Request: JSON-RPC batches are not supported")
  }
  if (!isObject(value)) {
    return invalid(undefined, "Invalid Request: not a JSON-RPC object")
  }
  const id = isRequestId(value.id) ? value.id : undefined
  if (value.jsonrpc !== "2.0") {
    return invalid(id, "Invalid Request: jsonrpc must be \"2.0\"")
  }
  if ("method" in value) {
    if (typeof value.method !== "string") {
      return invalid(id, "Invalid Request: method must be a string")
    }
    const params = value.params
    if (params !== undefined && !isObject(params)) {
      return invalid(id, "Invalid Request: params must be an object")
    }
    if (!("id" in value)) {
      return {
        _tag: "Notification",
        message: params === undefined
          ? { jsonrpc: "2.0", method: value.method }
          : { jsonrpc: "2.0", method: value.method, params }
      }
    }
    if (id === undefined) {
      return invalid(undefined, "Invalid Request: id must be a string or a number")
    }
    return {
      _tag: "Request",
      message: params === undefined
        ? { jsonrpc: "2.0", id, method: value.method }
        : { jsonrpc: "2.0", id, method: value.method, params }
    }
  }
  if ("result" in value && id !== undefined && isObject(value.result)) {
    return { _tag: "Response", message: { jsonrpc: "2.0", id, result: value.result } }
  }
  if ("error" in value && isObject(value.error)) {
    const e = value.error
    if (typeof e.code === "number" && typeof e.message === "string") {
      const error: ErrorObject = withData({ code: e.code, message: e.message }, e.data)
      return { _tag: "Response", message: id === undefined ? { jsonrpc: "2.0", error } : { jsonrpc: "2.0", id, error } }
    }
  }
  return invalid(id, "Invalid Request: not a request, notification or response")
}

const invalid = (id: RequestId | undefined, message: string): Classified => ({
  _tag: "Invalid",
  id,
  error: McpError.invalidRequest(message)
})

/**
 * Parses one frame of text and classifies it. Text that is not JSON → `Invalid` with -32700.
 * Object keys `__proto__` are dropped while parsing: Schema decoding would turn such a key into
 * the decoded object's prototype. Parse peer text with this (not `JSON.parse`) before handing it
 * to `McpServer.dispatch`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const parse = (text: string): Classified => {
  let value: unknown
  try {
    value = parseJson(text)
  } catch {
    return { _tag: "Invalid", id: undefined, error: McpError.parseError() }
  }
  return classify(value)
}

/**
 * Classifies a decoded JSON value that may be a JSON-RPC batch, for a client reading what a
 * 2025-03-26 server sends (that revision lets a server batch its requests, notifications and
 * responses; MCP 2025-03-26, Basic › Transports; 2025-06-18 removed batches). An array yields
 * its elements, each classified as {@link classify} does, in order (an element that is itself an
 * array is `Invalid`); an empty array yields one `Invalid` -32600 (JSON-RPC 2.0, Batch); any
 * other value yields `[classify(value)]`. Servers keep refusing batches: they use `classify`.
 *
 * @since 0.2.0
 * @category decoding
 */
export const classifyBatch = (value: unknown): ReadonlyArray<Classified> =>
  !Array.isArray(value)
    ? [classify(value)]
    : value.length === 0
    ? [invalid(undefined, "Invalid Request: an empty JSON-RPC batch")]
    : value.map(classify)

/**
 * {@link parse} for a client: one frame of text that may be a JSON-RPC batch, classified message
 * by message as {@link classifyBatch} does. Text that is not JSON → one `Invalid` with -32700.
 *
 * @since 0.2.0
 * @category decoding
 */
export const parseBatch = (text: string): ReadonlyArray<Classified> => {
  let value: unknown
  try {
    value = parseJson(text)
  } catch {
    return [{ _tag: "Invalid", id: undefined, error: McpError.parseError() }]
  }
  return classifyBatch(value)
}

/**
 * A success response echoing `id` exactly.
 *
 * @since 0.1.0
 * @category constructors
 */
export const success = (id: RequestId, result: JsonObject): SuccessResponse => ({ jsonrpc: "2.0", id, result })

/**
 * An error response; `id` is omitted when it is `undefined` (it could not be read).
 *
 * @since 0.1.0
 * @category constructors
 */
export const failure = (id: RequestId | undefined, error: McpError): ErrorResponse =>
  id === undefined
    ? { jsonrpc: "2.0", error: error.toErrorObject() }
    : { jsonrpc: "2.0", id, error: error.toErrorObject() }

/**
 * An error response with `"id": null`: only for 2025-06-18 sessions, whose schema requires an id
 * (JSON-RPC 2.0 §5: null when it could not be read).
 *
 * @since 0.1.0
 * @category constructors
 */
export const failureWithNullId = (error: McpError): ErrorResponse => ({
  jsonrpc: "2.0",
  id: null,
  error: error.toErrorObject()
})

/**
 * A request.
 *
 * @since 0.1.0
 * @category constructors
 */
export const request = (id: RequestId, method: string, params?: JsonObject): Request =>
  params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params }

/**
 * A notification.
 *
 * @since 0.1.0
 * @category constructors
 */
export const notification = (method: string, params?: JsonObject): Notification =>
  params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params }

/**
 * Is this response an error response?
 *
 * @since 0.1.0
 * @category guards
 */
export const isErrorResponse = (r: Response): r is ErrorResponse => "error" in r

/**
 * Encodes a message as one compact line of JSON (no raw newlines inside).
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (message: Message): string => JSON.stringify(message)
