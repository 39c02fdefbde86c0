/**
 * Reading one of a backend's lists, bounded (docs/proxy.md, "Bounds"): the pages followed
 * (MCP 2025-11-25, Server Features › Pagination), the entries kept and their size. A backend
 * whose list goes over a bound is degraded alone: what was read within the bounds is served, the
 * rest is left out, and an error naming the backend and the bound is logged. The other backends
 * are not affected.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpClient from "../../McpClient.js"
import type { Link } from "./definitions.js"
import * as Names from "./names.js"

/** The bounds on one backend's lists (documented on `McpProxy.Options`). */
export interface Limits {
  /** Pages of one list followed (`nextCursor`), at least 1. */
  readonly maxListPages: number
  /** Entries kept of one list. */
  readonly maxListItems: number
  /** UTF-8 bytes of one list's entries as JSON (a static skill adds the sizes of its files). */
  readonly maxListBytes: number
}

/** The default bounds: 100 pages, 10,000 entries, 16 MiB per list. */
export const DEFAULT_LIMITS: Limits = {
  maxListPages: 100,
  maxListItems: 10_000,
  maxListBytes: 16 * 1024 * 1024
}

/** `options`' bounds, the defaults for those not given (non-integers floored, pages at least 1). */
export const limitsOf = (options: Partial<Limits>): Limits => ({
  maxListPages: Math.max(1, Math.floor(options.maxListPages ?? DEFAULT_LIMITS.maxListPages)),
  maxListItems: Math.max(0, Math.floor(options.maxListItems ?? DEFAULT_LIMITS.maxListItems)),
  maxListBytes: Math.max(0, Math.floor(options.maxListBytes ?? DEFAULT_LIMITS.maxListBytes))
})

/** One page: its entries and the cursor of the next, if any. */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly nextCursor: string | undefined
}

const encoder = new TextEncoder()

/** UTF-8 bytes of `u` as JSON. */
export const jsonBytes = (u: unknown): number => encoder.encode(JSON.stringify(u) ?? "").byteLength

const preserve = { onExcessProperty: "preserve" } as const

/**
 * One page read with a plain request, decoded entry by entry: an entry that does not decode is
 * left out and logged (unknown fields are kept: the proxy forwards them).
 */
const rawPage = <A, I>(link: Link, method: string, field: string, schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema, preserve)
  return (cursor: string | undefined): Effect.Effect<Page<A>, McpClient.CallError> =>
    Effect.gen(function*() {
      const result = yield* link.client.request(method, cursor === undefined ? undefined : { cursor })
      const entries = result[field]
      if (!Array.isArray(entries)) {
        return yield* new McpClient.ClientError({
          reason: "InvalidResult",
          message: `${method}: ${field} is not an array`
        })
      }
      const items: Array<A> = []
      for (const [i, u] of entries.entries()) {
        const decoded = decode(u)
        if (Either.isRight(decoded)) items.push(decoded.right)
        else {
          const backend = Names.logged(link.prefix)
          yield* Effect.logWarning(`${backend}: ${method} item ${i} left out: ${decoded.left.message}`)
        }
      }
      return { items, nextCursor: typeof result.nextCursor === "string" ? result.nextCursor : undefined }
    })
}

/** How to read one list of a backend. */
export interface ListSpec<A, I> {
  readonly method: string
  readonly field: string
  readonly schema: Schema.Schema<A, I>
  /** The client's typed page, when it has one (a page it refuses as invalid is read raw). */
  readonly typed?: ((cursor?: string) => Effect.Effect<Page<A>, McpClient.CallError>) | undefined
  /** The bytes an entry counts for; default its JSON. */
  readonly weigh?: ((a: A) => number) | undefined
}

/**
 * All of a list within `limits`: pages are followed while they fit, entries are kept in the
 * backend's order until the next would go over `maxListItems` or `maxListBytes`; then reading
 * stops, the rest is left out and an error is logged. A backend without the method (-32601) has
 * an empty list.
 */
export const boundedList = <A, I>(
  link: Link,
  limits: Limits,
  spec: ListSpec<A, I>
): Effect.Effect<ReadonlyArray<A>, McpClient.CallError> =>
  Effect.gen(function*() {
    const raw = rawPage(link, spec.method, spec.field, spec.schema)
    const typed = spec.typed
    const page = (cursor: string | undefined) =>
      typed === undefined ? raw(cursor) : typed(cursor).pipe(
        Effect.catchIf((e) => e._tag === "ClientError" && e.reason === "InvalidResult", () => raw(cursor))
      )
    const weigh = spec.weigh ?? jsonBytes
    const out: Array<A> = []
    let bytes = 0
    let cursor: string | undefined = undefined
    for (let n = 0; n < limits.maxListPages; n++) {
      const read: Either.Either<Page<A>, McpClient.CallError> = yield* Effect.either(page(cursor))
      if (Either.isLeft(read)) {
        const e = read.left
        if (n === 0 && e._tag === "McpError" && e.code === JsonRpc.ErrorCode.MethodNotFound) return []
        return yield* Effect.fail(e)
      }
      for (const item of read.right.items) {
        const size = weigh(item)
        if (out.length >= limits.maxListItems || bytes + size > limits.maxListBytes) {
          yield* Effect.logError(
            `${Names.logged(link.prefix)}: ${spec.method} goes over the proxy's bound ` +
              `(${limits.maxListItems} entries, ` +
              `${limits.maxListBytes} bytes); the first ${out.length} entries are served, the rest is left out`
          )
          return out
        }
        bytes += size
        out.push(item)
      }
      if (read.right.nextCursor === undefined) return out
      cursor = read.right.nextCursor
    }
    yield* Effect.logError(
      `${Names.logged(link.prefix)}: ${spec.method} has more than ${limits.maxListPages} pages; ` +
        `the first ${limits.maxListPages} are served, the rest is left out`
    )
    return out
  })
