/**
 * The in-memory `Cluster.EventStore` (documented on `Cluster.makeMemoryEventStore`): the replay
 * buffer of a legacy session's GET stream, one bounded log per stream.
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Cluster from "../Cluster.js"
import type * as JsonRpc from "../JsonRpc.js"

/** A stream so far: the id of its first event, the next id, and the kept events (with their time in ms). */
interface Log {
  readonly firstId: number
  nextId: number
  events: Array<Cluster.StoredEvent & { readonly at: number }>
}

/** The bounds as numbers: events, milliseconds (`Infinity`: no age bound). */
export const bounds = (
  options: Cluster.EventStoreOptions
): { readonly maxEvents: number; readonly maxAgeMs: number } => {
  const age = Duration.decode(options.maxAge ?? "10 minutes")
  return {
    maxEvents: Math.max(0, Math.floor(options.maxEvents ?? 100)),
    maxAgeMs: Duration.isFinite(age) ? Math.max(1, Duration.toMillis(age)) : Infinity
  }
}

/**
 * What a `Last-Event-ID` finds among `events` (in id order) of a stream whose ids run from
 * `firstId` to `latest`: shared by the in-memory and Redis stores.
 */
export const replayOf = (
  events: ReadonlyArray<Cluster.StoredEvent>,
  firstId: number,
  latest: number,
  after: number
): Cluster.Replay => {
  const known = after >= firstId - 1 && after <= latest
  if (!known) return { events: [], latest, known, gap: false }
  const later = events.filter((e) => e.id > after)
  const next = later[0]
  return { events: later, latest, known, gap: next === undefined ? after < latest : next.id > after + 1 }
}

/** What `replayAfter` finds for a stream never claimed nor appended to (or released, or expired). */
export const unknownStream: Cluster.Replay = { events: [], latest: 0, known: false, gap: false }

export const makeMemory = (
  options: Cluster.EventStoreOptions & { readonly randomStart?: boolean | undefined }
): Effect.Effect<Cluster.EventStoreShape> =>
  Effect.sync(() => {
    const { maxAgeMs, maxEvents } = bounds(options)
    const logs = new Map<string, Log>()
    const logOf = (stream: string): Log => {
      const existing = logs.get(stream)
      if (existing !== undefined) return existing
      const firstId = options.randomStart === true ? 1 + Math.floor(Math.random() * 2 ** 40) : 1
      const log: Log = { firstId, nextId: firstId, events: [] }
      logs.set(stream, log)
      return log
    }
    const fresh = (now: number) => (e: { readonly at: number }) => now - e.at <= maxAgeMs
    const append = (stream: string, message: JsonRpc.Message) =>
      Effect.clockWith((clock) =>
        Effect.sync(() => {
          const now = clock.unsafeCurrentTimeMillis()
          const log = logOf(stream)
          const event = { id: log.nextId, message }
          log.nextId += 1
          const kept = [...log.events, { ...event, at: now }].filter(fresh(now))
          log.events = kept.length > maxEvents ? kept.slice(kept.length - maxEvents) : kept
          return Option.some<Cluster.StoredEvent>(event)
        })
      )
    const store: Cluster.EventStoreShape = {
      append,
      claim: (stream) => Effect.sync(() => logOf(stream).nextId - 1),
      replayAfter: (stream, after) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          // a stream never claimed nor appended to is not created by a lookup
          const log = logs.get(stream)
          if (log === undefined) return unknownStream
          const events = log.events.filter(fresh(now)).map(({ id, message }) => ({ id, message }))
          return replayOf(events, log.firstId, log.nextId - 1, after)
        }),
      release: (stream) => Effect.sync(() => void logs.delete(stream))
    }
    return store
  })
