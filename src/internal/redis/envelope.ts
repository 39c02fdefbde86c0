/**
 * What an instance accepts from Redis: every pub/sub message and every stored record is an
 * envelope stamped with the deployment that wrote it, read within a size bound, decoded with
 * Schema. What is not ours (too large, not our format, another deployment's) is ignored and
 * counted on {@link ignored}; the first of each kind per reader is logged as a warning, the rest
 * at debug level.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashSet from "effect/HashSet"
import * as Metric from "effect/Metric"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { parseJson } from "../json.js"

/**
 * Where an ignored value came from: a channel by its name under the prefix (`changes`, `tasks`,
 * `sessions`), or a stored record (`session-record`, `task-record`).
 */
export type Source = string

/**
 * Why it was ignored: over `maxMessageBytes`, not JSON or not our format, or stamped with
 * another deployment.
 */
export type Reason = "oversized" | "malformed" | "foreign"

/** The counter of ignored values (documented on `Redis.ignored`). */
export const ignored: Metric.Metric.Counter<number> = Metric.counter("presa_mcp.redis.ignored", {
  description:
    "Messages and stored records read from Redis and ignored: oversized, malformed or of another deployment.",
  incremental: true
})

/** Counts one ignored value. */
export const count = (source: Source, reason: Reason): Effect.Effect<void> =>
  Metric.increment(Metric.tagged(Metric.tagged(ignored, "source", source), "reason", reason))

/** A reporter: counts, and logs the first of each source and reason as a warning, the rest at debug level. */
export type Report = (source: Source, reason: Reason, detail: string) => Effect.Effect<void>

/** A reporter with its own memory of what it already warned about. */
export const makeReport: Effect.Effect<Report> = Effect.map(
  Ref.make(HashSet.empty<string>()),
  (warned) => (source, reason, detail) =>
    Effect.zipRight(
      count(source, reason),
      Effect.flatMap(
        Ref.modify(warned, (seen) => {
          const kind = `${source}/${reason}`
          return HashSet.has(seen, kind) ? [false, seen] as const : [true, HashSet.add(seen, kind)] as const
        }),
        (first) => {
          const annotations = { source, reason, detail }
          return first
            ? Effect.logWarning(
              "Redis: ignored a value that is not this deployment's (counted in presa_mcp.redis.ignored; " +
                "further ones of this kind are logged at debug level)",
              annotations
            )
            : Effect.logDebug("Redis: ignored a value that is not this deployment's", annotations)
        }
      )
    )
)

/**
 * UTF-8 length of `text` in bytes (a surrogate pair counts 4). Cheap bounds first: more code
 * units than `max` is over, at most a third of `max` is within.
 */
export const exceeds = (text: string, max: number): boolean => {
  if (text.length > max) return true
  if (text.length * 3 <= max) return false
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    bytes += c < 0x80 ? 1 : c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 2 : 3
  }
  return bytes > max
}

const Stamp = Schema.Struct({ deployment: Schema.String })
const decodeStamp = Schema.decodeUnknownEither(Stamp)

/** A decoded envelope, or why it is not ours (with a short detail for the log). */
export type Decoded<A> = Either.Either<A, { readonly reason: Reason; readonly detail: string }>

/**
 * Decodes `raw` as an envelope of `deployment` whose members match `schema` (members it does not
 * know are dropped). The deployment is checked before the rest, so a newer format of another
 * deployment reads `foreign`, not `malformed`.
 */
export const decode = <A, I>(schema: Schema.Schema<A, I>) => {
  const decodeBody = Schema.decodeUnknownEither(schema)
  return (raw: string, deployment: string, maxBytes: number): Decoded<A> => {
    if (exceeds(raw, maxBytes)) {
      return Either.left({ reason: "oversized", detail: `over ${maxBytes} bytes` })
    }
    let value: unknown
    try {
      value = parseJson(raw)
    } catch {
      return Either.left({ reason: "malformed", detail: "not JSON" })
    }
    const stamp = decodeStamp(value)
    if (Either.isLeft(stamp)) return Either.left({ reason: "malformed", detail: "no deployment stamp" })
    if (stamp.right.deployment !== deployment) {
      return Either.left({ reason: "foreign", detail: "stamped with another deployment" })
    }
    return Either.mapLeft(decodeBody(value), () => ({ reason: "malformed", detail: "not this version's format" }))
  }
}

/** Encodes `value` with `schema` as JSON, stamped with `deployment`. */
export const encode = <A, I extends object>(schema: Schema.Schema<A, I>) => {
  const encodeBody = Schema.encodeSync(schema)
  return (value: A, deployment: string): string => JSON.stringify({ ...encodeBody(value), deployment })
}
