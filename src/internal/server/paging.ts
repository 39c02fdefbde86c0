/**
 * Pagination of list results: opaque cursors bound to the snapshot revision they were cut from
 * (MCP 2026-07-28, Pagination).
 * @internal
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as JsonRpc from "../../JsonRpc.js"
import { quote } from "../quote.js"
import { Failure } from "./failure.js"
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

/** One page of a list: its items, and the cursor of the next page when there is one. */
export interface Page<B> {
  readonly items: ReadonlyArray<B>
  readonly nextCursor: string | undefined
}

/**
 * The page of `items` that `cursor` points at (the first page without one), each item shown by
 * `wire`. A cursor is bound to its list (`key`) and to the snapshot's revision: one from another
 * list or an older revision is -32602 "Invalid cursor", never a silently shifted page.
 */
export const page = <A, B>(
  server: Server,
  snapshot: Defs.Snapshot,
  cursor: string | undefined,
  items: ReadonlyArray<A>,
  key: string,
  wire: (a: A) => B
): Either.Either<Page<B>, Failure> => {
  let offset = 0
  if (cursor !== undefined) {
    const decoded = decodeCursor(cursor)
    if (
      Option.isNone(decoded) || decoded.value.k !== key || decoded.value.r !== snapshot.revision ||
      decoded.value.o > items.length
    ) {
      return Either.left(new Failure(McpError.invalidParams("Invalid cursor", { cursor: quote(cursor) })))
    }
    offset = decoded.value.o
  }
  const size = Math.max(1, server.options.pageSize ?? 100)
  const next = offset + size
  return Either.right({
    items: items.slice(offset, next).map(wire),
    nextCursor: next < items.length ? encodeCursor(key, snapshot.revision, next) : undefined
  })
}

/** The `nextCursor` field of a list result: present only when there is a next page. */
export const nextCursor = <B>(p: Page<B>): { readonly nextCursor?: string } =>
  p.nextCursor === undefined ? {} : { nextCursor: p.nextCursor }
