/**
 * Pagination of list results: opaque cursors bound to the snapshot revision they were cut from
 * (MCP 2026-07-28, Server Utilities, Pagination).
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import { decodeParams, fail, type Failure } from "./failure.js"
import type { Server } from "./model.js"
import type * as Defs from "./snapshot.js"

const { McpError } = JsonRpc

const encodeCursor = (key: string, revision: number, offset: number): string =>
  btoa(JSON.stringify({ k: key, r: revision, o: offset })).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")

const CursorJson = Schema.parseJson(Schema.Struct({ k: Schema.String, r: Schema.Int, o: Schema.NonNegativeInt }))

const decodeCursor = (
  cursor: string
): Option.Option<{ readonly k: string; readonly r: number; readonly o: number }> => {
  try {
    return Schema.decodeUnknownOption(CursorJson)(atob(cursor.replace(/-/g, "+").replace(/_/g, "/")))
  } catch {
    return Option.none()
  }
}

export const page = <A>(
  server: Server,
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject,
  items: ReadonlyArray<A>,
  key: string,
  wire: (a: A) => unknown,
  field: string = key
): Effect.Effect<JsonRpc.JsonObject, Failure> =>
  Effect.gen(function*() {
    const { cursor } = yield* decodeParams(McpSchema.PaginatedParams, params)
    let offset = 0
    if (cursor !== undefined) {
      const decoded = decodeCursor(cursor)
      if (
        Option.isNone(decoded) || decoded.value.k !== key || decoded.value.r !== snapshot.revision ||
        decoded.value.o > items.length
      ) {
        return yield* fail(McpError.invalidParams("Invalid cursor", { cursor }))
      }
      offset = decoded.value.o
    }
    const size = Math.max(1, server.options.pageSize ?? 100)
    const slice = items.slice(offset, offset + size).map(wire)
    const next = offset + size
    return next < items.length
      ? { [field]: slice, nextCursor: encodeCursor(key, snapshot.revision, next) }
      : { [field]: slice }
  })
