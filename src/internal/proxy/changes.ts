/**
 * The proxy follows its backends' list changes (docs/architecture.md, "proxy"): for each backend
 * that declares `listChanged` on a list it keeps a listen open (modern `subscriptions/listen`,
 * MCP 2026-07-28, Subscriptions; legacy session notifications, MCP 2025-11-25, Server Features ›
 * Tools, Prompts and Resources › List Changed Notification), re-lists the groups a batch of
 * notifications names and serves the result (`apply` in backends.ts), which announces the change
 * to the proxy's own listeners. Re-listing is coalesced: one at a time per backend, at least
 * 100 ms apart, whatever the rate of its notifications (see `coalescer`).
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as McpClient from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import { ALL_GROUPS, apply, list, type State } from "./backends.js"
import { type Group, isFatal, type Link } from "./definitions.js"
import * as Names from "./names.js"

const FIRST_RETRY_MS = 1_000
const MAX_RETRY_MS = 30_000

const GROUP_OF_METHOD: Readonly<Record<string, Group>> = {
  [McpSchema.Method.toolsListChanged]: "tools",
  [McpSchema.Method.promptsListChanged]: "prompts",
  [McpSchema.Method.resourcesListChanged]: "resources"
}

/** The lists whose changes a backend announces (its `listChanged` capabilities); empty: none. */
export const listenFilter = (caps: McpSchema.ServerCapabilities): McpClient.ListenFilter => ({
  ...(caps.tools?.listChanged === true ? { toolsListChanged: true } : {}),
  ...(caps.prompts?.listChanged === true ? { promptsListChanged: true } : {}),
  ...(caps.resources?.listChanged === true ? { resourcesListChanged: true } : {})
})

/** Re-lists `groups` of a backend and serves the result; a fatal failure marks it down. */
const sync = (state: State, link: Link, groups: ReadonlyArray<Group>) =>
  Effect.gen(function*() {
    if (yield* link.isDown) return
    const listed = yield* Effect.either(list(state, link, groups))
    if (Either.isRight(listed)) return yield* apply(state, link, groups, listed.right)
    const e = listed.left
    if (e._tag === "TransportError" && isFatal(e)) return yield* link.down(`${e.reason}: ${e.message}`)
    yield* Effect.logWarning(`${Names.logged(link.prefix)}: re-listing ${groups.join(", ")} failed: ${e.message}`)
  })

/** How long the first change of a batch waits for more before the re-listing starts. */
const COALESCE_WINDOW = Duration.millis(20)
/** The least time between the end of one re-listing of a backend and the start of the next. */
const RELIST_GAP = Duration.millis(100)

/**
 * The re-listing of one backend, coalesced: `changed(group)` only records the group and wakes the
 * re-lister (it never waits), so the notifications are read as fast as they come and hold no
 * memory per notification. One fiber (in the caller's Scope) re-lists: it waits
 * {@link COALESCE_WINDOW}, re-lists every group recorded so far in one go, then waits
 * {@link RELIST_GAP}. So at most one re-listing per backend is in flight, changes that arrive
 * meanwhile make one more, and a backend that sends `list_changed` in a loop is re-listed at most
 * about ten times a second, whatever its rate.
 */
const coalescer = (
  state: State,
  link: Link
): Effect.Effect<(group: Group) => Effect.Effect<void>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const pending = yield* Ref.make<ReadonlySet<Group>>(new Set())
    const wake = yield* Queue.sliding<void>(1)
    yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
      yield* Queue.take(wake)
      yield* Effect.sleep(COALESCE_WINDOW)
      const groups = yield* Ref.getAndSet(pending, new Set())
      if (groups.size > 0) yield* sync(state, link, ALL_GROUPS.filter((g) => groups.has(g)))
      yield* Effect.sleep(RELIST_GAP)
    })))
    return (group: Group) =>
      Ref.update(pending, (p) => (p.has(group) ? p : new Set([...p, group]))).pipe(
        Effect.zipRight(Queue.offer(wake, undefined)),
        Effect.asVoid
      )
  })

/**
 * Follows a backend's list changes: listens (modern `subscriptions/listen`, legacy session
 * notifications) and re-lists what changed. A graceful end of the stream re-listens (and
 * re-lists everything) with a backoff of 1 s doubling to 30 s; a fatal transport failure
 * marks the backend down; a refusal stops following.
 *
 * `listening` is completed once the first listen is open (or has failed); nothing is re-listed
 * before `ready` (the proxy's first listing has been served).
 */
export const watch = (
  state: State,
  link: Link,
  filter: McpClient.ListenFilter,
  listening: Deferred.Deferred<void>,
  ready: Deferred.Deferred<void>
) =>
  Effect.gen(function*() {
    let delay = FIRST_RETRY_MS
    for (let round = 0;; round++) {
      const outcome = yield* Effect.either(Effect.scoped(Effect.gen(function*() {
        const subscription = yield* link.client.listen(filter)
        yield* Deferred.succeed(listening, undefined)
        yield* Deferred.await(ready)
        if (round > 0) yield* sync(state, link, ALL_GROUPS)
        const changed = yield* coalescer(state, link)
        yield* subscription.notifications.pipe(
          Stream.runForEach((n) => {
            delay = FIRST_RETRY_MS
            const group = GROUP_OF_METHOD[n.method]
            return group === undefined ? Effect.void : changed(group)
          })
        )
      })))
      yield* Deferred.succeed(listening, undefined)
      if (yield* link.isDown) return
      if (Either.isLeft(outcome)) {
        const e = outcome.left
        if (e._tag === "TransportError" && isFatal(e)) return yield* link.down(`${e.reason}: ${e.message}`)
        if (
          e._tag === "McpError" || (e._tag === "ClientError" && e.reason === "Unsupported") ||
          (e._tag === "TransportError" && e.status !== undefined)
        ) {
          return yield* Effect.logWarning(
            `${Names.logged(link.prefix)}: change notifications refused (${e.message}); its lists are not followed`
          )
        }
        yield* Effect.logWarning(`${Names.logged(link.prefix)}: change notifications failed (${e.message}); retrying`)
      } else {
        yield* Effect.logInfo(`${Names.logged(link.prefix)}: change notifications ended; listening again`)
      }
      yield* Deferred.await(ready)
      yield* Effect.sleep(Duration.millis(delay))
      delay = Math.min(delay * 2, MAX_RETRY_MS)
    }
  })
