/**
 * Backends the proxy connects itself, and reconnects (docs/architecture.md, "proxy"): a
 * `Connector` is a prefix and a way to connect. Each connection lives in a Scope of its own (its
 * process or HTTP session, its listen and its pings); when the connection is marked down the
 * Scope is closed and, after the retry schedule's delay, the proxy connects again, lists the
 * backend and serves it again — the change reaches the proxy's listeners as list_changed (MCP
 * 2025-11-25, Server Features › Tools › List Changed Notification; MCP 2026-07-28, Subscriptions).
 * @internal
 */
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import type * as McpClient from "../../McpClient.js"
import { ALL_GROUPS, apply, giveUp, health, list, makeLink, markUp, type Policy, type State } from "./backends.js"
import { listenFilter, watch } from "./changes.js"
import { isFatal, type Link } from "./definitions.js"
import * as ProxyHealth from "./health.js"
import * as ProxyInput from "./input.js"
import * as Names from "./names.js"
import { followUpdates } from "./updates.js"

/** The input handlers a connector must give the client it connects. */
export type InputOptions = Pick<McpClient.Options, "onElicit" | "onSample" | "onRoots" | "elicitUrl">

/** A backend the proxy connects (and reconnects) itself. */
export interface Connector extends Policy {
  readonly prefix: string
  readonly connect: (input: InputOptions) => Effect.Effect<McpClient.McpClient, McpClient.CallError, Scope.Scope>
  readonly retry?: Schedule.Schedule<unknown, unknown> | undefined
}

/** Default retry: 500 ms doubling, at most 30 s between attempts, for ever. */
export const DEFAULT_RETRY: Schedule.Schedule<unknown, unknown> = Schedule.exponential("500 millis").pipe(
  Schedule.union(Schedule.spaced("30 seconds"))
)

/** One connection of a connector: its client and the Scope that owns it. */
export interface Connection {
  readonly client: McpClient.McpClient
  readonly scope: Scope.CloseableScope
}

/** Connects once, in a Scope of its own (a child of `parent`), closed again when connecting fails. */
export const open = (
  connector: Connector,
  callers: Ref.Ref<ReadonlyArray<ProxyInput.Caller>>,
  parent: Scope.Scope
): Effect.Effect<Connection, McpClient.CallError> =>
  Effect.gen(function*() {
    const scope = yield* Scope.fork(parent, ExecutionStrategy.sequential)
    const client = yield* connector.connect(ProxyInput.backendHandlers(callers)).pipe(
      Scope.extend(scope),
      Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
    )
    return { client, scope }
  })

/** The link of a connector's connection number `generation`. */
export const linkOf = (
  state: State,
  connector: Connector,
  callers: Ref.Ref<ReadonlyArray<ProxyInput.Caller>>,
  connection: Connection,
  generation: number
): Effect.Effect<Link> =>
  makeLink(state, {
    prefix: connector.prefix,
    client: connection.client,
    generation,
    retrying: true,
    tools: connector,
    callers
  })

/**
 * Serves a reconnected backend: makes the connection current, opens its listen, lists and serves
 * it, follows its resource updates, then (with `pingInterval`) pings it. A listing that fails marks the connection down.
 */
const serve = (
  state: State,
  link: Link,
  connection: Connection,
  pingInterval: Duration.DurationInput | undefined
): Effect.Effect<void> =>
  Effect.gen(function*() {
    yield* markUp(state, link.prefix, link.generation)
    yield* ProxyHealth.enter(state.health, link.prefix, "connected")
    const ready = yield* Deferred.make<void>()
    const filter = listenFilter(link.client.info.capabilities)
    if (Object.keys(filter).length > 0) {
      const listening = yield* Deferred.make<void>()
      yield* Effect.forkIn(watch(state, link, filter, listening, ready), connection.scope)
      yield* Deferred.await(listening)
    }
    const listed = yield* Effect.either(list(state, link, ALL_GROUPS))
    if (Either.isLeft(listed)) {
      const e = listed.left
      return yield* link.down(
        e._tag === "TransportError" && isFatal(e) ? `${e.reason}: ${e.message}` : `listing failed: ${e.message}`
      )
    }
    yield* apply(state, link, ALL_GROUPS, listed.right)
    yield* Deferred.succeed(ready, undefined)
    yield* Effect.forkIn(followUpdates(state, link, state.interest), connection.scope)
    if (pingInterval !== undefined) yield* Effect.forkIn(health(link, pingInterval), connection.scope)
    yield* Effect.logInfo(`${Names.logged(link.prefix)} is up (connection ${link.generation})`)
  })

/**
 * Keeps a connector's backend connected for as long as `parent` is open. `current` is the
 * connection made at start (already served), if that one succeeded. When a connection is lost
 * (or none was made), its Scope is closed and the proxy connects again after each delay of the
 * retry schedule (restarted after every successful connection), fed with the last failure; when
 * the schedule is done the backend stays down for good (logged).
 */
export const supervise = (
  state: State,
  connector: Connector,
  callers: Ref.Ref<ReadonlyArray<ProxyInput.Caller>>,
  current: { readonly link: Link; readonly connection: Connection } | undefined,
  pingInterval: Duration.DurationInput | undefined,
  parent: Scope.Scope
): Effect.Effect<void> =>
  Effect.gen(function*() {
    let generation = current?.link.generation ?? 0
    let live = current
    let reason: unknown = "the first connection failed"
    let driver = yield* Schedule.driver(connector.retry ?? DEFAULT_RETRY)
    for (;;) {
      if (live !== undefined) {
        reason = yield* Deferred.await(live.link.lost)
        yield* Scope.close(live.connection.scope, Exit.void)
        live = undefined
      }
      while (live === undefined) {
        const waited = yield* Effect.either(driver.next(reason))
        if (Either.isLeft(waited)) {
          yield* giveUp(state, connector.prefix)
          return yield* Effect.logError(`${Names.logged(connector.prefix)}: reconnecting gave up; it stays down`)
        }
        const opened = yield* Effect.either(open(connector, callers, parent))
        if (Either.isLeft(opened)) {
          reason = opened.left
          yield* ProxyHealth.enter(state.health, connector.prefix, "reconnecting", opened.left.message)
          yield* Effect.logWarning(`${Names.logged(connector.prefix)}: reconnecting failed: ${opened.left.message}`)
          continue
        }
        generation += 1
        const link = yield* linkOf(state, connector, callers, opened.right, generation)
        yield* serve(state, link, opened.right, pingInterval)
        live = { link, connection: opened.right }
        // A connection that got served restarts the schedule; one lost while being listed does not.
        if (!(yield* link.isDown)) driver = yield* Schedule.driver(connector.retry ?? DEFAULT_RETRY)
      }
    }
  })
