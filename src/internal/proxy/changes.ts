/**
 * The proxy follows its backends' list changes (docs/architecture.md, "proxy"): for each backend
 * that declares `listChanged` on a list it keeps a listen open (modern `subscriptions/listen`,
 * MCP 2026-07-28, Subscriptions; legacy session notifications, MCP 2025-11-25, Server Features ›
 * Tools, Prompts and Resources › List Changed Notification), re-lists the groups a batch of
 * notifications names and serves the result (`apply` in backends.ts), which announces the change
 * to the proxy's own listeners.
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import type * as McpClient from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import { ALL_GROUPS, apply, list, type State } from "./backends.js"
import { type Group, isFatal, type Link } from "./definitions.js"

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
    yield* Effect.logWarning(`backend ${link.prefix}: re-listing ${groups.join(", ")} failed: ${e.message}`)
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
        yield* subscription.notifications.pipe(
          Stream.groupedWithin(64, "20 millis"),
          Stream.runForEach((chunk) => {
            delay = FIRST_RETRY_MS
            const groups = ALL_GROUPS.filter((g) => Chunk.some(chunk, (n) => GROUP_OF_METHOD[n.method] === g))
            return groups.length === 0 ? Effect.void : sync(state, link, groups)
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
            `backend ${link.prefix}: change notifications refused (${e.message}); its lists are not followed`
          )
        }
        yield* Effect.logWarning(`backend ${link.prefix}: change notifications failed (${e.message}); retrying`)
      } else {
        yield* Effect.logInfo(`backend ${link.prefix}: change notifications ended; listening again`)
      }
      yield* Deferred.await(ready)
      yield* Effect.sleep(Duration.millis(delay))
      delay = Math.min(delay * 2, MAX_RETRY_MS)
    }
  })
