/**
 * The Streamable HTTP client's request headers, by era. Modern (MCP 2026-07-28, Transports ›
 * Streamable HTTP; SEP-2243): `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and the
 * `Mcp-Param-*` headers of `x-mcp-header` annotations. Legacy (MCP 2025-11-25, Transports ›
 * Streamable HTTP › Session Management and Protocol Version Header): `Mcp-Session-Id` and
 * `MCP-Protocol-Version` after `initialize` (not on a 2025-03-26 session, see `sessionHeaders`).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as JsonRpc from "../../../../JsonRpc.js"
import * as McpSchema from "../../../../McpSchema.js"
import * as H from "../../../server/headerAgreement.js"
import type { Client, State } from "./state.js"

/** An RFC 9110 `token`: the characters a header name may have. */

/** The protocol version a modern message names in `_meta`; `undefined` for a legacy one. */
export const modernVersionOf = (message: JsonRpc.Request | JsonRpc.Notification): string | undefined => {
  const meta = message.params?._meta
  if (!JsonRpc.isObject(meta)) return undefined
  const v = meta[McpSchema.MetaKey.protocolVersion]
  return typeof v === "string" ? v : undefined
}

/** `Mcp-Param-*` headers for a `tools/call`: only valid annotations, values present. */
export const paramHeaders = (
  params: JsonRpc.JsonObject | undefined,
  inputSchema: JsonRpc.JsonObject
): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const p of H.headerParams(inputSchema)) {
    if (!H.TOKEN.test(p.header)) continue
    const value = H.valueAt(params?.arguments, p.path)
    const encoded = p.type === "string" && typeof value === "string"
      ? H.encodeHeaderValue(value)
      : p.type === "integer" && typeof value === "number" && Number.isSafeInteger(value)
      ? String(value)
      : p.type === "boolean" && typeof value === "boolean"
      ? String(value)
      : undefined
    if (encoded !== undefined) out[H.Header.paramPrefix + p.header] = encoded
  }
  return out
}

/**
 * Legacy session headers (every message after `initialize`, the GET stream, the DELETE):
 * `Mcp-Session-Id`, and `MCP-Protocol-Version` at a revision that has it. A 2025-03-26 session
 * sends none: that revision defines no such header, and a later server that gets none "SHOULD
 * assume protocol version 2025-03-26" (MCP 2025-06-18, Transports › Protocol Version Header),
 * which is the negotiated one.
 */
export const sessionHeaders = (st: State): Record<string, string> => ({
  ...(st.sessionId === undefined ? {} : { [H.Header.sessionId]: st.sessionId }),
  ...(st.protocolVersion === undefined || McpSchema.isBefore20250618(st.protocolVersion)
    ? {}
    : { [H.Header.protocolVersion]: st.protocolVersion })
})

/** The protocol headers of one POSTed request or notification. */
export const protocolHeaders = (
  client: Client,
  message: JsonRpc.Request | JsonRpc.Notification,
  st: State
): Effect.Effect<Record<string, string>> =>
  Effect.gen(function*() {
    const version = modernVersionOf(message)
    if (version !== undefined) {
      const out: Record<string, string> = {
        [H.Header.protocolVersion]: version,
        [H.Header.method]: message.method
      }
      const name = H.nameOf(message.method, message.params)
      if (name !== undefined) out[H.Header.name] = H.encodeHeaderValue(name)
      if (message.method === McpSchema.Method.toolsCall && name !== undefined) {
        const schema = client.options.headerParamsFor?.(name) ??
          Option.getOrUndefined(HashMap.get(yield* Ref.get(client.schemas), name))
        if (schema !== undefined) Object.assign(out, paramHeaders(message.params, schema))
      }
      return out
    }
    if (message.method === McpSchema.Method.initialize) return {}
    if (st.sessionId !== undefined || st.protocolVersion !== undefined) return sessionHeaders(st)
    if (!("id" in message) && st.modernVersion !== undefined) {
      return { [H.Header.protocolVersion]: st.modernVersion, [H.Header.method]: message.method }
    }
    return {}
  })
