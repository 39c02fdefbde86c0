/**
 * Change-notification streams of a client (`McpClient.listen`): modern `subscriptions/listen`
 * (MCP 2026-07-28, Subscriptions) and the legacy session's notifications with
 * `resources/subscribe` (MCP 2025-11-25, Resources › Subscriptions, and the list-changed
 * notifications of Tools, Prompts and Resources), both re-established after a dropped
 * connection per `Options.relisten` (docs/architecture.md, "Client: listen, reconnects,
 * restarts").
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HashMap from "effect/HashMap"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.js"
import type { CallError, ListenFilter, Subscription } from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import * as Task from "../../Task.js"
import { TransportError } from "../../Transport.js"
import { call, checkComplete, exchange, newId } from "./call.js"
import { ClientError } from "./error.js"
import { modernMeta, type State } from "./state.js"

const ACKNOWLEDGED = McpSchema.Method.subscriptionsAcknowledged
const LIST_CHANGED = {
  tools: McpSchema.Method.toolsListChanged,
  prompts: McpSchema.Method.promptsListChanged,
  resources: McpSchema.Method.resourcesListChanged
} as const
const RESOURCE_UPDATED = McpSchema.Method.resourcesUpdated

const NO_RESULT: JsonRpc.JsonObject = {}

/** `_meta` key of the notifications a re-established listen emits (documented on `McpClient.RESUBSCRIBED`). */
export const RESUBSCRIBED = "presa-mcp/resubscribed" as const

/** Default `Options.relisten`: 100 ms doubling, at most 8 tries in a row (about 25 s). */
export const DEFAULT_RELISTEN: Schedule.Schedule<unknown, CallError> = Schedule.exponential("100 millis").pipe(
  Schedule.intersect(Schedule.recurs(8))
)

/** The wire form of a filter: only the keys asked for. */
const filterToWire = (filter: ListenFilter): JsonRpc.JsonObject => ({
  ...(filter.toolsListChanged === true ? { toolsListChanged: true } : {}),
  ...(filter.promptsListChanged === true ? { promptsListChanged: true } : {}),
  ...(filter.resourcesListChanged === true ? { resourcesListChanged: true } : {}),
  ...(filter.resourceSubscriptions === undefined ? {} : { resourceSubscriptions: filter.resourceSubscriptions }),
  ...(filter.taskIds === undefined ? {} : { taskIds: filter.taskIds })
})

/** Reads an acknowledged filter leniently (unknown keys and wrong types are dropped). */
const filterFromWire = (u: unknown): ListenFilter => {
  if (!JsonRpc.isObject(u)) return {}
  const strings = (v: unknown) => Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : undefined
  const uris = strings(u.resourceSubscriptions)
  const taskIds = strings(u.taskIds)
  return {
    ...(u.toolsListChanged === true ? { toolsListChanged: true } : {}),
    ...(u.promptsListChanged === true ? { promptsListChanged: true } : {}),
    ...(u.resourcesListChanged === true ? { resourcesListChanged: true } : {}),
    ...(uris === undefined ? {} : { resourceSubscriptions: uris }),
    ...(taskIds === undefined ? {} : { taskIds })
  }
}

/** Does a change notification match a filter? */
const wanted = (filter: ListenFilter, n: JsonRpc.Notification): boolean => {
  switch (n.method) {
    case LIST_CHANGED.tools:
      return filter.toolsListChanged === true
    case LIST_CHANGED.prompts:
      return filter.promptsListChanged === true
    case LIST_CHANGED.resources:
      return filter.resourcesListChanged === true
    case RESOURCE_UPDATED: {
      const uri = n.params?.uri
      return typeof uri === "string" && (filter.resourceSubscriptions ?? []).includes(uri)
    }
    default:
      return false
  }
}

/** What a re-established listen announces: every change its acknowledged filter covers. */
const missedChanges = (filter: ListenFilter, meta: JsonRpc.JsonObject): ReadonlyArray<JsonRpc.Notification> => [
  ...(filter.toolsListChanged === true ? [JsonRpc.notification(LIST_CHANGED.tools, { _meta: meta })] : []),
  ...(filter.promptsListChanged === true ? [JsonRpc.notification(LIST_CHANGED.prompts, { _meta: meta })] : []),
  ...(filter.resourcesListChanged === true ? [JsonRpc.notification(LIST_CHANGED.resources, { _meta: meta })] : []),
  ...Array.from(
    new Set(filter.resourceSubscriptions ?? []),
    (uri) => JsonRpc.notification(RESOURCE_UPDATED, { uri, _meta: meta })
  )
]

/**
 * What a modern listen last yielded per task: a `notifications/tasks` is yielded when it is a
 * `DetailedTask`, is not a repeat of the last one, is not older (`lastUpdatedAt`) and the task was
 * not seen terminal.
 */
interface TaskTracker {
  readonly accept: (n: JsonRpc.Notification) => Effect.Effect<boolean>
  /** The ids of `ids` not seen terminal. */
  readonly open: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
}

const makeTaskTracker: Effect.Effect<TaskTracker> = Effect.map(
  Ref.make(HashMap.empty<string, Task.DetailedTask>()),
  (last) => ({
    accept: (n) =>
      Option.match(Task.fromNotification(n), {
        onNone: () => Effect.as(Effect.logDebug(`ignored ${n.method}: its params are not a DetailedTask`), false),
        onSome: (task) =>
          Ref.modify(last, (m) => {
            const before = Option.getOrUndefined(HashMap.get(m, task.taskId))
            const stale = before !== undefined && (
              Task.isTerminal(before.status) ||
              Date.parse(task.lastUpdatedAt) < Date.parse(before.lastUpdatedAt) ||
              JSON.stringify(task) === JSON.stringify(before)
            )
            return stale ? [false, m] : [true, HashMap.set(m, task.taskId, task)]
          })
      }),
    open: (ids) =>
      Effect.map(
        Ref.get(last),
        (m) =>
          ids.filter((id) =>
            Option.match(HashMap.get(m, id), { onNone: () => true, onSome: (t) => !Task.isTerminal(t.status) })
          )
      )
  })
)

/**
 * After a re-established listen: each acknowledged task not seen terminal is read again
 * (`tasks/get`) and yielded as a `notifications/tasks` marked {@link RESUBSCRIBED}: its changes
 * in the gap are unknown. A task that cannot be read (expired) is skipped.
 */
const rereadTasks = (
  state: State,
  tracker: TaskTracker,
  taskIds: ReadonlyArray<string>,
  meta: JsonRpc.JsonObject,
  offer: (n: JsonRpc.Notification) => Effect.Effect<unknown>
): Effect.Effect<void> =>
  Effect.flatMap(
    tracker.open(taskIds),
    (open) =>
      Effect.forEach(open, (taskId) =>
        call(state, Task.Method.get, { taskId }).pipe(
          // the task without the result envelope's own members, as a notification carries it
          Effect.map(({ _meta, resultType: _resultType, ...task }) =>
            JsonRpc.notification(Task.STATUS_NOTIFICATION, { ...task, _meta: meta })
          ),
          Effect.flatMap((n) => Effect.flatMap(tracker.accept(n), (fresh) => fresh ? offer(n) : Effect.void)),
          Effect.catchAll((e) => Effect.logDebug(`tasks/get ${taskId} after a relisten failed: ${e.message}`))
        ), { discard: true })
  )

/** A lost connection is worth listening again; a peer's refusal or a bad answer is not. */
const retriable = (e: CallError): boolean =>
  e._tag === "TransportError" ? e.reason !== "Unauthorized" : e._tag === "ClientError" && e.reason === "Timeout"

const subscriptionIdOf = (n: JsonRpc.Notification): unknown => {
  const meta = n.params?._meta
  return JsonRpc.isObject(meta) ? meta[McpSchema.MetaKey.subscriptionId] : undefined
}

/** Drops the cache entries a change notification makes stale (no cache: nothing). */
const invalidate = (state: State, n: JsonRpc.Notification): Effect.Effect<void> =>
  state.cache === undefined ? Effect.void : state.cache.invalidate(n)

/** The `_meta` of what a re-established listen yields for the gap. */
const gapMeta = (subscriptionId: JsonRpc.RequestId | undefined): JsonRpc.JsonObject => ({
  ...(subscriptionId === undefined ? {} : { [McpSchema.MetaKey.subscriptionId]: subscriptionId }),
  [RESUBSCRIBED]: true
})

/** After a re-established listen: everything may have changed in the gap. */
const resubscribed = (
  state: State,
  acknowledged: ListenFilter,
  subscriptionId: JsonRpc.RequestId | undefined,
  offer: (n: JsonRpc.Notification) => Effect.Effect<unknown>
): Effect.Effect<void> =>
  Effect.gen(function*() {
    if (state.cache !== undefined) yield* state.cache.clear
    for (const n of missedChanges(acknowledged, gapMeta(subscriptionId))) yield* offer(n)
  })

/**
 * One `subscriptions/listen` request, until its graceful end (success: the listen result, or the
 * server's `notifications/cancelled` for it, MCP 2026-07-28, Cancellation) or a failure. Its
 * tagged change notifications go to `mailbox`; `onAck` runs once, on its acknowledgement, which
 * must come within `requestTimeout` (else `ClientError` "Timeout").
 */
const listenOnce = (
  state: State,
  params: JsonRpc.JsonObject,
  mailbox: Mailbox.Mailbox<JsonRpc.Notification, CallError>,
  tracker: TaskTracker,
  onAck: (ack: ListenFilter, id: JsonRpc.RequestId) => Effect.Effect<void>
): Effect.Effect<void, CallError> =>
  Effect.gen(function*() {
    const id = yield* newId(state)
    const sid = String(id)
    const acked = yield* Deferred.make<void>()
    const cancelledByServer = yield* Deferred.make<void>()
    const onNotification = (n: JsonRpc.Notification): Effect.Effect<void> =>
      Effect.gen(function*() {
        if (n.method === McpSchema.Method.cancelled) {
          // The server tore the subscription down: a clean end, like the listen result.
          const requestId = n.params?.requestId
          if (requestId !== undefined && String(requestId) === sid) {
            yield* Deferred.succeed(cancelledByServer, undefined)
          }
          return
        }
        const tag = subscriptionIdOf(n)
        if (tag === undefined || String(tag) !== sid) {
          return yield* Effect.logDebug(
            `ignored ${n.method} on listen ${sid}: not tagged with its subscriptionId`
          )
        }
        if (n.method === ACKNOWLEDGED) {
          if (yield* Deferred.succeed(acked, undefined)) {
            yield* onAck(filterFromWire(n.params?.notifications), id)
          }
          return
        }
        if (n.method === Task.STATUS_NOTIFICATION) {
          if (yield* tracker.accept(n)) yield* mailbox.offer(n)
          return
        }
        yield* invalidate(state, n)
        yield* mailbox.offer(n)
      })
    const unacknowledged = Deferred.await(acked).pipe(
      Effect.timeoutFail({
        duration: state.timeout,
        onTimeout: () => new ClientError({ reason: "Timeout", message: "subscriptions/listen was not acknowledged" })
      }),
      Effect.zipRight(Effect.never)
    )
    const method = McpSchema.Method.subscriptionsListen
    const result = yield* exchange(state, id, method, params, { onNotification }, Duration.infinity).pipe(
      Effect.raceFirst(Effect.as(Deferred.await(cancelledByServer), NO_RESULT)),
      Effect.raceFirst(unacknowledged)
    )
    yield* checkComplete(method, result)
  })

/**
 * A modern listen: the first `subscriptions/listen` answers `listen`; later ones re-establish it
 * after the connection dropped (MCP 2026-07-28, Subscriptions: a bare disconnect may trigger a
 * reconnect), per `relisten`.
 */
const listenModern = (state: State, filter: ListenFilter): Effect.Effect<Subscription, CallError, Scope.Scope> =>
  Effect.gen(function*() {
    const mailbox = yield* Mailbox.make<JsonRpc.Notification, CallError>()
    // closing the Scope also ends the stream for a consumer running elsewhere
    yield* Effect.addFinalizer(() => mailbox.end)
    const firstAck = yield* Deferred.make<ListenFilter, CallError>()
    const tracker = yield* makeTaskTracker
    const scope = yield* Effect.scope
    const params: JsonRpc.JsonObject = {
      notifications: filterToWire(filter),
      _meta: modernMeta(state, state.info.protocolVersion)
    }
    const run = Effect.gen(function*() {
      const driver = yield* Schedule.driver(state.relisten)
      let established = false
      for (;;) {
        const exit = yield* Effect.exit(
          listenOnce(state, params, mailbox, tracker, (ack, id) =>
            Effect.gen(function*() {
              if (established) {
                yield* resubscribed(state, ack, id, (n) => mailbox.offer(n))
                // forked: a request cannot wait inside the notification handler of another
                if (ack.taskIds !== undefined && ack.taskIds.length > 0) {
                  yield* Effect.forkIn(
                    rereadTasks(state, tracker, ack.taskIds, gapMeta(id), (n) => mailbox.offer(n)),
                    scope
                  )
                }
              } else yield* Deferred.succeed(firstAck, ack)
              established = true
              yield* driver.reset
            }))
        )
        if (Exit.isSuccess(exit)) {
          // a graceful end (the listen result, or its notifications/cancelled): not a drop
          yield* Deferred.fail(
            firstAck,
            new ClientError({
              reason: "InvalidResult",
              message: "subscriptions/listen ended before it was acknowledged"
            })
          )
          return yield* mailbox.end
        }
        const error = Cause.failureOption(exit.cause)
        const again = established && Option.isSome(error) && retriable(error.value) &&
          (yield* Effect.isSuccess(driver.next(error.value)))
        if (!again) {
          yield* Deferred.failCause(firstAck, exit.cause)
          return yield* mailbox.failCause(exit.cause)
        }
        yield* Effect.logInfo(`subscriptions/listen dropped (${Option.getOrThrow(error).message}); listening again`)
      }
    })
    yield* run.pipe(Effect.interruptible, Effect.forkScoped)
    const acknowledged = yield* Deferred.await(firstAck)
    return { acknowledged, notifications: Mailbox.toStream(mailbox) }
  })

/**
 * `resources/subscribe` for `uri` while the Scope is open, counted: only the first listen naming
 * a URI subscribes it, only the last one to close unsubscribes it (a failed unsubscribe is logged).
 */
const subscribeUri = (state: State, uri: string): Effect.Effect<void, CallError, Scope.Scope> =>
  Effect.acquireRelease(
    state.uriLock.withPermits(1)(Effect.gen(function*() {
      const n = Option.getOrElse(HashMap.get(yield* Ref.get(state.subscribedUris), uri), () => 0)
      if (n === 0) yield* call(state, McpSchema.Method.resourcesSubscribe, { uri })
      yield* Ref.update(state.subscribedUris, (m) => HashMap.set(m, uri, n + 1))
    })),
    () =>
      state.uriLock.withPermits(1)(Effect.gen(function*() {
        const n = Option.getOrElse(HashMap.get(yield* Ref.get(state.subscribedUris), uri), () => 1)
        yield* Ref.update(state.subscribedUris, (m) => n <= 1 ? HashMap.remove(m, uri) : HashMap.set(m, uri, n - 1))
        if (n <= 1) {
          yield* call(state, McpSchema.Method.resourcesUnsubscribe, { uri }).pipe(
            Effect.catchAll((e) => Effect.logDebug(`resources/unsubscribe ${uri} failed: ${e.message}`))
          )
        }
      }))
  )

/** The part of `filter` a legacy server can honour, per its capabilities. */
const legacyAcknowledged = (state: State, filter: ListenFilter): ListenFilter => {
  const caps = state.info.capabilities
  return {
    ...(filter.toolsListChanged === true && caps.tools?.listChanged === true ? { toolsListChanged: true } : {}),
    ...(filter.promptsListChanged === true && caps.prompts?.listChanged === true
      ? { promptsListChanged: true }
      : {}),
    ...(filter.resourcesListChanged === true && caps.resources?.listChanged === true
      ? { resourcesListChanged: true }
      : {}),
    ...(filter.resourceSubscriptions !== undefined && caps.resources?.subscribe === true
      ? { resourceSubscriptions: filter.resourceSubscriptions }
      : {})
  }
}

/**
 * A legacy listen: the transport's session notifications that `filter` asks for. The session's
 * channel may drop (stdio: the process restarted; HTTP: the GET stream ended or the session
 * expired): it is opened again per `relisten`, the URIs subscribed again (a new session has
 * none), and the consumer told that anything may have changed.
 */
const listenLegacy = (state: State, filter: ListenFilter): Effect.Effect<Subscription, CallError, Scope.Scope> =>
  Effect.gen(function*() {
    const sessionNotifications = state.transport.sessionNotifications
    if (sessionNotifications === undefined) {
      return yield* new ClientError({
        reason: "Unsupported",
        message: "this transport does not carry a legacy session's notifications"
      })
    }
    const acknowledged = legacyAcknowledged(state, filter)
    const uris = new Set(acknowledged.resourceSubscriptions ?? [])
    const first = yield* sessionNotifications
    for (const uri of uris) yield* subscribeUri(state, uri)
    const mailbox = yield* Mailbox.make<JsonRpc.Notification, CallError>()
    yield* Effect.addFinalizer(() => mailbox.end)
    const drain = (source: Stream.Stream<JsonRpc.Notification, CallError>) =>
      source.pipe(
        Stream.filter((n) => wanted(acknowledged, n)),
        Stream.runForEach((n) => Effect.zipRight(invalidate(state, n), mailbox.offer(n)))
      )
    const run = Effect.gen(function*() {
      const driver = yield* Schedule.driver(state.relisten)
      let exit = yield* Effect.exit(drain(first))
      for (;;) {
        const error: CallError = Exit.isSuccess(exit)
          ? new TransportError({ reason: "Closed", message: "the session's notification stream ended" })
          : Option.getOrElse(
            Cause.failureOption(exit.cause),
            () => new TransportError({ reason: "Closed", message: "the session's notification stream broke" })
          )
        if (Exit.isFailure(exit) && !retriable(error)) return yield* mailbox.failCause(exit.cause)
        if (!(yield* Effect.isSuccess(driver.next(error)))) return yield* mailbox.fail(error)
        yield* Effect.logInfo(`the legacy session's notifications dropped (${error.message}); listening again`)
        exit = yield* Effect.exit(Effect.scoped(Effect.gen(function*() {
          const source = yield* sessionNotifications
          for (const uri of uris) yield* call(state, McpSchema.Method.resourcesSubscribe, { uri })
          yield* resubscribed(state, acknowledged, undefined, (n) => mailbox.offer(n))
          yield* driver.reset
          return yield* drain(source)
        })))
      }
    })
    yield* run.pipe(Effect.interruptible, Effect.forkScoped)
    return { acknowledged, notifications: Mailbox.toStream(mailbox) }
  })

/** `McpClient.listen`: the modern or the legacy stream, per the era the client speaks. */
export const listen = (state: State, filter: ListenFilter): Effect.Effect<Subscription, CallError, Scope.Scope> =>
  state.isModern ? listenModern(state, filter) : listenLegacy(state, filter)
