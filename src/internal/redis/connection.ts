/**
 * The two connections to Redis (commands, pub/sub) behind `Redis.RedisConnection`: the clients,
 * the health state that follows them, and the routing of pub/sub messages to one `PubSub` per
 * channel (messages over `maxMessageBytes` are dropped there and counted).
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { Redis as IORedis } from "ioredis"
import { RedisError } from "../../Errors.js"
import type { ConnectionOptions, RedisConnectionShape } from "../../Redis.js"
import * as Envelope from "./envelope.js"

/** `maxMessageBytes` when not given: twice the default HTTP body bound, 8 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024

const errorMessage = (u: unknown): string => u instanceof Error ? u.message : String(u)

interface Settings {
  readonly prefix: string
  readonly instanceId: string
  readonly deployment: string
  readonly commandTimeoutMs: number
  readonly heartbeatMs: number
  readonly maxMessageBytes: number
}

const settings = (options: ConnectionOptions): Settings => {
  const prefix = options.prefix ?? "presa-mcp"
  return {
    prefix,
    instanceId: options.instanceId ?? crypto.randomUUID(),
    deployment: options.deployment ?? prefix,
    commandTimeoutMs: Math.max(1, Duration.toMillis(Duration.decode(options.commandTimeout ?? "2 seconds"))),
    heartbeatMs: Math.max(10, Duration.toMillis(Duration.decode(options.heartbeat ?? "1 second"))),
    maxMessageBytes: Math.max(1024, Math.floor(options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES))
  }
}

/**
 * The command client (commands fail at once while disconnected: nothing queues behind an absent
 * Redis) and the subscriber (it subscribes to every wanted channel each time it is ready; a
 * SUBSCRIBE sent before the client's ready check would break that check), closed with the Scope.
 */
const clients = (url: string, s: Settings) => {
  const common = {
    lazyConnect: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (times: number) => Math.min(100 * times, 1000),
    connectTimeout: s.commandTimeoutMs
  }
  return Effect.all({
    client: Effect.acquireRelease(
      Effect.sync(() => new IORedis(url, { ...common, enableOfflineQueue: false, commandTimeout: s.commandTimeoutMs })),
      (c) => Effect.sync(() => c.disconnect())
    ),
    subscriber: Effect.acquireRelease(
      Effect.sync(() => new IORedis(url, { ...common, enableOfflineQueue: false, autoResubscribe: false })),
      (c) => Effect.sync(() => c.disconnect())
    )
  })
}

interface Transition {
  readonly ready: boolean
  readonly reason?: string
}

/** Whether both connections are ready, followed from their events; each change is logged. */
const trackHealth = (
  client: IORedis,
  subscriber: IORedis,
  instanceId: string
): Effect.Effect<
  { readonly health: SubscriptionRef.SubscriptionRef<boolean>; readonly report: (reason: string) => void },
  never,
  Scope.Scope
> =>
  Effect.gen(function*() {
    const readyNow = () => client.status === "ready" && subscriber.status === "ready"
    const health = yield* SubscriptionRef.make(false)
    const transitions = yield* Queue.sliding<Transition>(16)
    const onState = (reason?: string) => () => {
      Queue.unsafeOffer(transitions, reason === undefined ? { ready: readyNow() } : { ready: readyNow(), reason })
    }
    for (const c of [client, subscriber]) {
      c.on("ready", onState())
      c.on("close", onState())
      c.on("error", (e: unknown) => onState(errorMessage(e))())
    }
    onState()()
    yield* Queue.take(transitions).pipe(
      Effect.flatMap(({ ready, reason }) =>
        Effect.gen(function*() {
          const before = yield* SubscriptionRef.get(health)
          if (before === ready) return
          yield* SubscriptionRef.set(health, ready)
          if (ready) yield* Effect.logInfo("Redis connection ready", { instanceId })
          else {
            yield* Effect.logWarning("Redis unavailable: shared state degraded, stateless requests continue", {
              instanceId,
              ...(reason === undefined ? {} : { reason })
            })
          }
        })
      ),
      Effect.forever,
      Effect.forkScoped
    )
    return { health, report: (reason: string) => onState(reason)() }
  })

/**
 * Message routing: one `message` listener, one `PubSub` per channel (made on first use, shut
 * down with the Scope). A message over `maxMessageBytes` is dropped and counted; the channels are
 * subscribed again each time the subscriber is ready.
 */
const route = (
  subscriber: IORedis,
  s: Settings,
  onSubscribeError: (reason: string) => void
): Effect.Effect<(name: string) => Effect.Effect<PubSub.PubSub<string>>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const channels = new Map<string, { readonly name: string; readonly hub: PubSub.PubSub<string> }>()
    const report = yield* Envelope.makeReport
    const incoming = yield* Queue.unbounded<{ readonly channel: string; readonly message: string }>()
    subscriber.on("message", (channel: string, message: string) => {
      Queue.unsafeOffer(incoming, { channel, message })
    })
    yield* Queue.take(incoming).pipe(
      Effect.flatMap(({ channel, message }) => {
        const entry = channels.get(channel)
        if (entry === undefined) return Effect.void
        return Envelope.exceeds(message, s.maxMessageBytes)
          ? report(entry.name, "oversized", `over ${s.maxMessageBytes} bytes`)
          : PubSub.publish(entry.hub, message)
      }),
      Effect.forever,
      Effect.forkScoped
    )
    yield* Effect.addFinalizer(() =>
      Effect.forEach(channels.values(), ({ hub }) => PubSub.shutdown(hub), { discard: true }).pipe(
        Effect.zipRight(Effect.sync(() => channels.clear()))
      )
    )
    const subscribeAll = (names: ReadonlyArray<string>) => {
      if (subscriber.status !== "ready" || names.length === 0) return
      subscriber.subscribe(...names).catch((e: unknown) => onSubscribeError(errorMessage(e)))
    }
    subscriber.on("ready", () => subscribeAll([...channels.keys()]))
    return (name: string) =>
      Effect.suspend(() => {
        const full = `${s.prefix}:${name}`
        const existing = channels.get(full)
        if (existing !== undefined) return Effect.succeed(existing.hub)
        return PubSub.unbounded<string>().pipe(
          Effect.tap((hub) =>
            Effect.sync(() => {
              channels.set(full, { name, hub })
              subscribeAll([full])
            })
          )
        )
      })
  })

/** The connection: built while Redis is down too (the instance starts degraded). */
export const make = (options: ConnectionOptions): Effect.Effect<RedisConnectionShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const s = settings(options)
    const { client, subscriber } = yield* clients(options.url, s)
    const { health, report } = yield* trackHealth(client, subscriber, s.instanceId)
    const hubOf = yield* route(subscriber, s, report)
    // The first connection, bounded: commands issued before it is ready would fail.
    yield* Effect.async<void>((resume) => {
      const ready = () => resume(Effect.void)
      if (client.status === "ready") return resume(Effect.void)
      client.once("ready", ready)
      return Effect.sync(() => client.off("ready", ready))
    }).pipe(Effect.timeoutOption(Duration.millis(s.commandTimeoutMs)))
    return {
      instanceId: s.instanceId,
      deployment: s.deployment,
      key: (name) => `${s.prefix}:${name}`,
      heartbeatMs: s.heartbeatMs,
      maxMessageBytes: s.maxMessageBytes,
      run: <A>(operation: string, f: (c: IORedis) => Promise<A>) =>
        Effect.tryPromise({
          try: () => f(client),
          catch: (e) => new RedisError({ operation, message: errorMessage(e) })
        }),
      channel: (name) => Effect.flatMap(hubOf(name), PubSub.subscribe),
      healthy: SubscriptionRef.get(health),
      changes: health.changes
    }
  })
