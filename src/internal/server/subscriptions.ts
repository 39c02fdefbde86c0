/**
 * Change notifications: modern `subscriptions/listen`, legacy session notifications and subscriptions.
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import { type RequestContextShape } from "../../RequestContext.js"
import * as Task from "../../Task.js"

import { startTimer } from "../runtime.js"
import type { ChangeEvent, DispatchOptions, Server, Session } from "./model.js"
import * as TaskNotifications from "./taskNotifications.js"

/** A change of what is served (not a task's): what list-change and resource-update notifications carry. */
type DefinitionChange = Exclude<ChangeEvent, { readonly _tag: "TaskStatus" }>

const isDefinitionChange = (e: ChangeEvent): e is DefinitionChange => e._tag !== "TaskStatus"

// ---------------------------------------------------------------------------------------------
// subscriptions
// ---------------------------------------------------------------------------------------------

/** `subscriptions/listen` params: the notifications the client wants. */
export const ListenParams = Schema.Struct({
  notifications: Schema.Struct({
    toolsListChanged: Schema.optional(Schema.Boolean),
    promptsListChanged: Schema.optional(Schema.Boolean),
    resourcesListChanged: Schema.optional(Schema.Boolean),
    resourceSubscriptions: Schema.optional(Schema.Array(Schema.String)),
    // Tasks extension (SEP-2663 "Task Status Notifications")
    taskIds: Schema.optional(Schema.Array(Schema.String))
  })
})

const LIST_CHANGED_METHOD = {
  tools: McpSchema.Method.toolsListChanged,
  prompts: McpSchema.Method.promptsListChanged,
  resources: McpSchema.Method.resourcesListChanged
} as const

/**
 * Resolves at the end of the current turn of the event loop (one macrotask, `setTimeout(0)`),
 * not through `Clock`: a synchronous burst of changes (e.g. 50 `addTool` calls in a row, which
 * run within one turn) is over by then. Not a debounce window: nothing waits for quiet.
 */
const endOfTurn: Effect.Effect<void> = Effect.async<void>((resume) => {
  const cancel = startTimer(0, () => resume(Effect.void))
  return Effect.sync(cancel)
})

const coalesceKey = (e: ChangeEvent): string =>
  e._tag === "ResourceUpdated" ? `updated ${e.uri}` : e._tag === "TaskStatus" ? `task ${e.taskId}` : e.kind

/**
 * One subscriber's change events, coalesced: a list change of a kind (or an update of a URI)
 * that is already pending — taken off the PubSub but not yet handed to the subscriber's writer —
 * is not queued again. Events pile up while the writer is busy, and the first event of a batch
 * waits for the end of the event-loop turn so a burst is seen whole; each batch is deduplicated
 * (first occurrence kept, order kept). A change after a notification was handed on gives a new
 * one.
 */
const coalesced = (queue: Queue.Dequeue<ChangeEvent>): Stream.Stream<ChangeEvent> =>
  Stream.repeatEffectChunk(Effect.gen(function*() {
    const first = yield* Queue.take(queue)
    yield* endOfTurn
    const rest = yield* Queue.takeAll(queue)
    const seen = new Set<string>()
    const out: Array<ChangeEvent> = []
    for (const e of [first, ...rest]) {
      const key = coalesceKey(e)
      if (seen.has(key)) continue
      seen.add(key)
      out.push(e)
    }
    return Chunk.unsafeFromArray(out)
  }))

/**
 * `subscriptions/listen` (MCP 2026-07-28, Subscriptions): ack first (what is honoured
 * of what was asked), then matching changes, until cancel or shutdown; the result carries the
 * subscription id. `taskIds` (Tasks extension; the dispatcher already refused them to a client
 * that does not declare it): the ack lists those the caller may read, each one's current state
 * follows the ack at once, then every change of it (`taskNotifications.ts`).
 */
export const listen = (
  server: Server,
  caps: McpSchema.ServerCapabilities,
  request: JsonRpc.Request,
  ctx: RequestContextShape,
  { notifications: wanted }: typeof ListenParams.Type,
  transportShutdown?: Deferred.Deferred<void>
): Effect.Effect<McpSchema.EmptyResult> =>
  Effect.gen(function*() {
    const honoured: {
      toolsListChanged?: true
      promptsListChanged?: true
      resourcesListChanged?: true
      resourceSubscriptions?: ReadonlyArray<string>
    } = {
      ...(wanted.toolsListChanged === true && caps.tools?.listChanged === true ? { toolsListChanged: true } : {}),
      ...(wanted.promptsListChanged === true && caps.prompts?.listChanged === true
        ? { promptsListChanged: true }
        : {}),
      ...(wanted.resourcesListChanged === true && caps.resources?.listChanged === true
        ? { resourcesListChanged: true }
        : {}),
      ...(wanted.resourceSubscriptions !== undefined && caps.resources?.subscribe === true
        ? { resourceSubscriptions: wanted.resourceSubscriptions }
        : {})
    }
    const meta = { [McpSchema.MetaKey.subscriptionId]: request.id }
    const uris = new Set(honoured.resourceSubscriptions ?? [])
    const wants = (e: DefinitionChange): boolean =>
      e._tag === "ResourceUpdated"
        ? uris.has(e.uri)
        : e.kind === "tools"
        ? honoured.toolsListChanged === true
        : e.kind === "prompts"
        ? honoured.promptsListChanged === true
        : honoured.resourcesListChanged === true
    yield* Effect.scoped(Effect.gen(function*() {
      const queue = yield* server.events.subscribe
      // after subscribing: a task change from here on is an event, so none falls between the read and the ack
      const tasks = server.tasks === undefined || wanted.taskIds === undefined
        ? undefined
        : yield* TaskNotifications.watch(
          server.tasks,
          wanted.taskIds,
          ctx,
          (task) => ctx.notify(JsonRpc.notification(Task.STATUS_NOTIFICATION, { ...task, _meta: meta }))
        )
      const notifications = tasks === undefined ? honoured : { ...honoured, taskIds: tasks.taskIds }
      yield* ctx.notify(
        JsonRpc.notification(McpSchema.Method.subscriptionsAcknowledged, { _meta: meta, notifications })
      )
      // the current state right after the ack: a change between CreateTaskResult and this listen is not lost
      if (tasks !== undefined) yield* tasks.refreshAll
      const forward = coalesced(queue).pipe(
        Stream.runForEach((e) =>
          isDefinitionChange(e)
            ? (wants(e) ? ctx.notify(toNotification(e, meta)) : Effect.void)
            : tasks === undefined
            ? Effect.void
            : tasks.refresh(e.taskId)
        ),
        Effect.zipRight(Effect.never)
      )
      const stop = transportShutdown === undefined
        ? Deferred.await(server.stopped)
        : Effect.raceFirst(Deferred.await(server.stopped), Deferred.await(transportShutdown))
      yield* Effect.raceFirst(tasks === undefined ? forward : Effect.raceFirst(forward, tasks.recheck), stop)
    }))
    return { _meta: meta }
  })

const toNotification = (e: DefinitionChange, meta?: JsonRpc.JsonObject): JsonRpc.Notification =>
  e._tag === "ResourceUpdated"
    ? JsonRpc.notification(
      McpSchema.Method.resourcesUpdated,
      meta === undefined ? { uri: e.uri } : { uri: e.uri, _meta: meta }
    )
    : JsonRpc.notification(LIST_CHANGED_METHOD[e.kind], meta === undefined ? undefined : { _meta: meta })

/** Legacy `resources/subscribe` / `resources/unsubscribe`: per-session URI set. */
export const subscribe = (
  options: DispatchOptions,
  { uri }: typeof McpSchema.ReadResourceParams.Type,
  on: boolean
): Effect.Effect<McpSchema.EmptyResult> =>
  options.session === undefined
    ? Effect.succeed({})
    : Effect.as(
      Ref.update(options.session.state, (s) => {
        if (s === undefined) return s
        const next = new Set(s.subscriptions)
        if (on) next.add(uri)
        else next.delete(uri)
        return { ...s, subscriptions: next }
      }),
      {}
    )

/**
 * The unsolicited notifications of a legacy session: `notifications/{tools,prompts,resources}/list_changed`
 * (when `listChanged` is on, after `notifications/initialized`) and `notifications/resources/updated`
 * for the session's subscribed URIs. Modern clients get changes only through `subscriptions/listen`.
 * Coalesced like a listen's: a burst of changes gives one notification per kind (and per URI).
 */
export const sessionNotifications = (
  server: Server,
  session: Session
): Effect.Effect<Stream.Stream<JsonRpc.Notification>, never, Scope.Scope> =>
  Effect.map(server.events.subscribe, (queue) =>
    coalesced(queue).pipe(
      Stream.filter(isDefinitionChange),
      Stream.filterEffect((e) =>
        Effect.map(Ref.get(session.state), (s) =>
          s !== undefined && s.initialized &&
          (e._tag === "ResourceUpdated" ? s.subscriptions.has(e.uri) : server.options.listChanged === true))
      ),
      Stream.map((e) => toNotification(e))
    ))

/** Announces a list change (e.g. after the app changed what a list returns). */
export const listChanged = (server: Server, kind: "tools" | "prompts" | "resources"): Effect.Effect<void> =>
  server.events.publish({ _tag: "ListChanged", kind })

/** Announces that a resource's contents changed. */
export const resourceUpdated = (server: Server, uri: string): Effect.Effect<void> =>
  server.events.publish({ _tag: "ResourceUpdated", uri })

/** Ends every `subscriptions/listen` gracefully (their result is sent). */
export const shutdown = (server: Server): Effect.Effect<void> => Deferred.succeed(server.stopped, undefined)
