/**
 * `Cluster.EventStore` on Redis Streams (documented on `Redis.layerEventStore`): one stream key
 * per resumable stream, its event counter and its writer beside it. Each operation is one script,
 * so the writer check, the id, the append and the trimming happen at once.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Cluster from "../../Cluster.js"
import type { RedisError } from "../../Errors.js"
import * as JsonRpc from "../../JsonRpc.js"
import type { RedisConnectionShape } from "../../Redis.js"
import { bounds, replayOf, unknownStream } from "../eventStore.js"
import * as Envelope from "./envelope.js"

/** The least time a GET stream's keys live after its last append or claim: a day (ms). */
const MIN_KEY_TTL_MS = 24 * 60 * 60 * 1000

/**
 * A request's POST stream (`post:<session id>:<key>`, named by the Streamable HTTP transport):
 * its keys live `maxAge` after its last append or claim (a day when `maxAge` is infinite), and
 * once they expired it is not recreated by a late append.
 */
const isRequestStream = (stream: string): boolean => stream.startsWith("post:")

/**
 * KEYS: stream, counter, writer. ARGV: instance, envelope, maxEvents, maxAge ms ('' none), key ttl
 * ms, the prefix of the liveness keys, '1' when the stream must exist already (a request's stream
 * whose keys expired stays gone). 0 when another live instance is the writer (a writer whose
 * liveness key expired is replaced), or the stream is gone; else the event's id.
 */
const APPEND = `
if ARGV[7] == '1' and redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
local writer = redis.call('GET', KEYS[3])
if writer and writer ~= ARGV[1] and redis.call('EXISTS', ARGV[6] .. writer) == 1 then return 0 end
redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[5])
local n = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[3], '*', 'n', n, 'e', ARGV[2])
if ARGV[4] ~= '' then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('XTRIM', KEYS[1], 'MINID', string.format('%d', now - tonumber(ARGV[4])))
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return n
`

/** KEYS: stream, counter, writer. ARGV: instance, key ttl ms. The latest id. */
const CLAIM = `
redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[2])
redis.call('SET', KEYS[2], '0', 'NX', 'PX', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return tonumber(redis.call('GET', KEYS[2]) or '0')
`

/**
 * KEYS: stream, counter, writer. ARGV: maxAge ms ('' none), the prefix of the liveness keys.
 * {latest id (-1: the stream was never claimed nor appended to, or expired), entries not older
 * than maxAge, 1 when the stream has no live writer (released, or its instance's liveness key
 * expired) else 0}: read at once, so every event its last writer appended is among the entries.
 */
const REPLAY = `
local start = '-'
if ARGV[1] ~= '' then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  start = string.format('%d', now - tonumber(ARGV[1]))
end
local writer = redis.call('GET', KEYS[3])
local abandoned = 1
if writer and redis.call('EXISTS', ARGV[2] .. writer) == 1 then abandoned = 0 end
return {tonumber(redis.call('GET', KEYS[2]) or '-1'), redis.call('XRANGE', KEYS[1], start, '+'), abandoned}
`

/** KEYS: writer. ARGV: instance. This instance stops being the stream's writer (if it is). */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`

/** What an entry's `e` field holds (besides the deployment stamp): the message as its JSON value. */
const Entry = Schema.Struct({ message: Schema.Unknown })
const decodeEntry = Envelope.decode(Entry)
const encodeEntry = Envelope.encode(Entry)

/** The replay script's answer as ioredis gives it. */
const ReplayReply = Schema.Tuple(
  Schema.Number,
  Schema.Array(Schema.Tuple(Schema.String, Schema.Array(Schema.String))),
  Schema.Number
)
const decodeReplayReply = Schema.decodeUnknownEither(ReplayReply)

const failed = (e: RedisError) => new Cluster.EventStoreError({ operation: e.operation, message: e.message })

/** A field's value in an XRANGE entry's flat field list. */
const field = (fields: ReadonlyArray<string>, name: string): string | undefined => {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1]
  return undefined
}

export const make = (
  redis: RedisConnectionShape,
  options: Cluster.EventStoreOptions
): Effect.Effect<Cluster.EventStoreShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { maxAgeMs, maxEvents } = bounds(options)
    const age = Number.isFinite(maxAgeMs) ? String(maxAgeMs) : ""
    const keyTtl = String(Number.isFinite(maxAgeMs) ? Math.max(maxAgeMs, MIN_KEY_TTL_MS) : MIN_KEY_TTL_MS)
    const requestTtl = String(Number.isFinite(maxAgeMs) ? maxAgeMs : MIN_KEY_TTL_MS)
    const ttlOf = (stream: string) => isRequestStream(stream) ? requestTtl : keyTtl
    const keys = (stream: string) => {
      const base = redis.key(`events:${stream}`)
      return [base, `${base}:n`, `${base}:writer`] as const
    }
    // This instance's liveness as a writer, refreshed every heartbeat, lives five heartbeats: the
    // streams of an instance that stopped are recorded by another one that holds their session.
    const alivePrefix = redis.key("events:alive:")
    const aliveMs = String(5 * redis.heartbeatMs)
    const beat = Effect.ignore(
      redis.run("event writer heartbeat", (c) => c.set(`${alivePrefix}${redis.instanceId}`, "1", "PX", aliveMs))
    )
    yield* beat
    yield* Effect.sleep(Duration.millis(redis.heartbeatMs)).pipe(
      Effect.zipRight(beat),
      Effect.forever,
      Effect.forkScoped
    )
    const report = yield* Envelope.makeReport
    /** An entry as an event; `None` (counted) when it is not this deployment's or not a message. */
    const toEvent = ([, fields]: readonly [string, ReadonlyArray<string>]) =>
      Effect.gen(function*() {
        const id = Number(field(fields, "n"))
        const decoded = decodeEntry(field(fields, "e") ?? "", redis.deployment, redis.maxMessageBytes)
        if (Either.isLeft(decoded)) {
          yield* report("event", decoded.left.reason, decoded.left.detail)
          return Option.none<Cluster.StoredEvent>()
        }
        const classified = JsonRpc.classify(decoded.right.message)
        if (!Number.isSafeInteger(id) || classified._tag === "Invalid") {
          yield* report("event", "malformed", "not an event this instance can use")
          return Option.none<Cluster.StoredEvent>()
        }
        return Option.some<Cluster.StoredEvent>({ id, message: classified.message })
      })
    const store: Cluster.EventStoreShape = {
      append: (stream, message) =>
        Effect.suspend(() => {
          const text = encodeEntry({ message }, redis.deployment)
          if (Envelope.exceeds(text, redis.maxMessageBytes)) {
            return Effect.fail(
              new Cluster.EventStoreError({
                operation: "event append",
                message: `the event is over ${redis.maxMessageBytes} bytes`
              })
            )
          }
          return redis.run(
            "event append",
            (c) =>
              c.eval(
                APPEND,
                3,
                ...keys(stream),
                redis.instanceId,
                text,
                String(maxEvents),
                age,
                ttlOf(stream),
                alivePrefix,
                isRequestStream(stream) ? "1" : "0"
              )
          ).pipe(
            Effect.mapError(failed),
            Effect.map((n) =>
              typeof n === "number" && n > 0 ? Option.some({ id: n, message }) : Option.none<Cluster.StoredEvent>()
            )
          )
        }),
      claim: (stream) =>
        redis.run("event claim", (c) => c.eval(CLAIM, 3, ...keys(stream), redis.instanceId, ttlOf(stream))).pipe(
          Effect.mapError(failed),
          Effect.map((n) => typeof n === "number" ? n : 0)
        ),
      replayAfter: (stream, after) =>
        redis.run("event replay", (c) => c.eval(REPLAY, 3, ...keys(stream), age, alivePrefix)).pipe(
          Effect.mapError(failed),
          Effect.flatMap((reply) => {
            const decoded = decodeReplayReply(reply)
            if (Either.isLeft(decoded)) {
              return Effect.fail(
                new Cluster.EventStoreError({ operation: "event replay", message: "unexpected reply from Redis" })
              )
            }
            const [latest, entries, abandoned] = decoded.right
            if (latest < 0) return Effect.succeed(unknownStream)
            return Effect.map(
              Effect.forEach(entries, toEvent),
              (events): Cluster.Replay => ({
                ...replayOf(events.flatMap(Option.toArray), 1, latest, after),
                ...(abandoned === 1 ? { abandoned: true } : {})
              })
            )
          })
        ),
      release: (stream) =>
        Effect.ignore(redis.run("event release", (c) => c.eval(RELEASE, 1, keys(stream)[2], redis.instanceId)))
    }
    return store
  })
