/**
 * The one encoding of what a connection writes (`connection.ts`): every request gets exactly one
 * response, and a notification JSON cannot carry is dropped, logged, on every transport.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type { Reply, Server } from "./model.js"

/** Where one request's response goes: `text` is its JSON encoding. */
export type WriteReply = (reply: Reply, text: string) => Effect.Effect<void>

/** `JSON.stringify` of a response the server built itself (an error, an empty result): it cannot fail. */
export const encodeResponse = (response: JsonRpc.Response): string => JsonRpc.encode(response)

/**
 * Encodes a request's reply and writes it. A result JSON cannot carry (`JSON.stringify` throws on a
 * `BigInt`, a cycle, nesting too deep) is logged and replaced: `tools/call` gets an `isError`
 * result (a defect of the tool, MCP 2025-11-25, Server Features, Tools, "Error Handling"), every
 * other method -32603 (JSON-RPC 2.0, "Error object").
 */
export const writeReply = (
  server: Server,
  request: JsonRpc.Request,
  reply: Reply,
  write: WriteReply
): Effect.Effect<void> => {
  const text = tryEncode(reply.message)
  if (typeof text === "string") return write(reply, text)
  const fallback = unencodable(server, request, reply)
  return Effect.zipRight(
    Effect.annotateLogs(
      Effect.logError(`${request.method}: the result cannot be encoded as JSON (${text.message})`),
      "requestId",
      request.id
    ),
    write(fallback, encodeResponse(fallback.message))
  )
}

const tryEncode = (message: JsonRpc.Message): string | Error => {
  try {
    return JsonRpc.encode(message)
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error))
  }
}

const unencodable = (server: Server, request: JsonRpc.Request, reply: Reply): Reply => {
  if (request.method !== McpSchema.Method.toolsCall || JsonRpc.isErrorResponse(reply.message)) {
    return { message: JsonRpc.failure(request.id, JsonRpc.McpError.internalError()), status: 200 }
  }
  const result = reply.message.result
  const modern = typeof result.resultType === "string"
  return {
    message: JsonRpc.success(request.id, {
      ...(modern ? { resultType: "complete", _meta: { [McpSchema.MetaKey.serverInfo]: server.info } } : {}),
      content: [{ type: "text", text: "The tool's result cannot be encoded as JSON" }],
      isError: true
    }),
    status: reply.status
  }
}

/**
 * Encodes a notification or a server→client request for the wire; `undefined` (logged) when JSON
 * cannot carry it (a notification a handler built with a `BigInt`): it is dropped, the request
 * goes on.
 */
export const encodeOutgoing = (message: JsonRpc.Request | JsonRpc.Notification): Effect.Effect<string | undefined> => {
  const text = tryEncode(message)
  return typeof text === "string"
    ? Effect.succeed(text)
    : Effect.as(
      Effect.logWarning(`dropped ${message.method}: it cannot be encoded as JSON (${text.message})`),
      undefined
    )
}
