/**
 * The health view of the proxy's backends (documented on `McpProxy.Health`): one entry per
 * backend, in the order of the backends list, kept in a `SubscriptionRef` so code can read it or
 * follow its changes (`presa-mcp proxy` serves it as JSON and prints each change on stderr).
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as SubscriptionRef from "effect/SubscriptionRef"

/** A backend's status: serving; down and being reconnected; down for good. */
export type Status = "connected" | "reconnecting" | "givenUp"

/** One backend's health. */
export interface BackendHealth {
  readonly prefix: string
  readonly status: Status
  /** When it entered `status` (epoch milliseconds). */
  readonly since: number
  /** The last failure seen (a lost connection, a failed attempt), if any. */
  readonly lastError?: string | undefined
  /** Connections made so far (the first one included). */
  readonly connections: number
  /** Failed attempts to connect since the last connection (or since start). */
  readonly attempts: number
}

/** The backends' health, in the order of the backends list. */
export type Health = SubscriptionRef.SubscriptionRef<ReadonlyArray<BackendHealth>>

/** An empty health view, for `Options.health`. */
export const makeHealth: Effect.Effect<Health> = SubscriptionRef.make<ReadonlyArray<BackendHealth>>([])

/** Starts the view over `prefixes` (replacing what it held). */
export const reset = (
  health: Health,
  backends: ReadonlyArray<{ readonly prefix: string; readonly up: boolean; readonly lastError?: string | undefined }>
): Effect.Effect<void> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    SubscriptionRef.set(
      health,
      backends.map((b) => ({
        prefix: b.prefix,
        status: b.up ? "connected" : "reconnecting",
        since: now,
        ...(b.lastError === undefined ? {} : { lastError: b.lastError }),
        connections: b.up ? 1 : 0,
        attempts: b.up ? 0 : 1
      }))
    ))

/** A backend entered `status` (`error`: why, when it went down or an attempt failed). */
export const enter = (health: Health, prefix: string, status: Status, error?: string): Effect.Effect<void> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    SubscriptionRef.update(health, (all) =>
      all.map((b) => {
        if (b.prefix !== prefix) return b
        const lastError = error ?? b.lastError
        return {
          prefix,
          status,
          since: b.status === status ? b.since : now,
          ...(lastError === undefined ? {} : { lastError }),
          connections: status === "connected" ? b.connections + 1 : b.connections,
          attempts: status === "connected"
            ? 0
            : error !== undefined && b.status === status
            ? b.attempts + 1
            : b.attempts
        }
      })))
