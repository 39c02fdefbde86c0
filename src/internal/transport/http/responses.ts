/**
 * The Streamable HTTP server's responses (MCP 2025-11-25 and 2026-07-28, Basic, Transports,
 * "Streamable HTTP"): JSON bodies, id-less refusals, empty statuses and SSE streams.
 * @internal
 */
import * as Headers from "@effect/platform/Headers"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Duration from "effect/Duration"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../../JsonRpc.js"
import * as Http from "./wire.js"

/** The methods the endpoint answers (the `Allow` header of a 405). */
export const ALLOW = "GET, POST, DELETE"

/** A JSON body that is already encoded. */
export const jsonText = (
  status: number,
  text: string,
  headers: Readonly<Record<string, string>> = {}
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(text, { status, contentType: Http.JSON_TYPE, headers: Headers.fromInput(headers) })

/** A JSON-RPC message as the body (built by the transport itself: it always encodes). */
export const json = (
  status: number,
  message: JsonRpc.Message,
  headers: Readonly<Record<string, string>> = {}
): HttpServerResponse.HttpServerResponse => jsonText(status, JsonRpc.encode(message), headers)

/** A transport-level refusal: an id-less JSON-RPC -32600 error body. */
export const refuse = (
  status: number,
  message: string,
  headers: Readonly<Record<string, string>> = {},
  data?: unknown
): HttpServerResponse.HttpServerResponse =>
  json(status, JsonRpc.failure(undefined, JsonRpc.McpError.invalidRequest(message, data)), headers)

/** A status without a body (202 for notifications and responses, 204). */
export const empty = (status: number): HttpServerResponse.HttpServerResponse => HttpServerResponse.empty({ status })

const SSE_HEADERS = { "cache-control": "no-cache", "x-accel-buffering": "no" } as const

/** An SSE response of these frames, with a `: ping` comment every `keepAlive` while it is open. */
export const sse = (
  frames: Stream.Stream<string>,
  keepAlive: Duration.Duration
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.stream(
    frames.pipe(
      Stream.merge(Stream.tick(keepAlive).pipe(Stream.drop(1), Stream.as(Http.ssePing)), { haltStrategy: "left" }),
      Stream.encodeText
    ),
    { contentType: Http.SSE_TYPE, headers: Headers.fromInput(SSE_HEADERS) }
  )
