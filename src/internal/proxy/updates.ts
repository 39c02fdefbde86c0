/**
 * Resource subscriptions through the proxy (MCP 2025-11-25, Server Features › Resources ›
 * Subscriptions; MCP 2026-07-28, Subscriptions): the proxy counts its callers' interest in each
 * URI (legacy `resources/subscribe` / `resources/unsubscribe`, modern `subscriptions/listen`
 * `resourceSubscriptions`), subscribes on the backend that serves the URI (a `listen` naming
 * those URIs, which a legacy client turns into `resources/subscribe`), and re-announces each
 * `notifications/resources/updated` it gets with `McpServer.resourceUpdated`, which reaches the
 * callers that subscribed. URIs are mapped between the proxy's form and the backend's (uris.ts).
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import * as McpServer from "../../McpServer.js"
import type * as Middleware from "../../Middleware.js"
import * as UriTemplate from "../../UriTemplate.js"
import type { State } from "./backends.js"
import type { Link } from "./definitions.js"
import * as Names from "./names.js"

/** How many subscriptions of the proxy's callers name each URI (none: absent). */
export type Interest = SubscriptionRef.SubscriptionRef<ReadonlyMap<string, number>>

export const makeInterest: Effect.Effect<Interest> = SubscriptionRef.make<ReadonlyMap<string, number>>(new Map())

const add = (interest: Interest, uris: ReadonlyArray<string>, delta: 1 | -1) =>
  SubscriptionRef.update(interest, (m) => {
    const next = new Map(m)
    for (const uri of uris) {
      const n = (next.get(uri) ?? 0) + delta
      if (n > 0) next.set(uri, n)
      else next.delete(uri)
    }
    return next
  })

const strings = (u: unknown): ReadonlyArray<string> =>
  Array.isArray(u) ? u.filter((s): s is string => typeof s === "string") : []

/**
 * Counts the callers' subscriptions: a listen's URIs while it is open; a legacy subscribe until
 * the matching unsubscribe (a legacy session that ends without unsubscribing keeps its count
 * until the proxy ends: the middleware does not see sessions end).
 */
export const countInterest = (interest: Interest): Middleware.Middleware => (request, next) => {
  switch (request.method) {
    case McpSchema.Method.resourcesSubscribe:
    case McpSchema.Method.resourcesUnsubscribe: {
      const uri = request.params.uri
      if (typeof uri !== "string") return next
      return Effect.tap(
        next,
        () => add(interest, [uri], request.method === McpSchema.Method.resourcesSubscribe ? 1 : -1)
      )
    }
    case McpSchema.Method.subscriptionsListen: {
      const notifications = request.params.notifications
      const uris = JsonRpc.isObject(notifications) ? strings(notifications.resourceSubscriptions) : []
      if (uris.length === 0) return next
      return Effect.acquireUseRelease(add(interest, uris, 1), () => next, () => add(interest, uris, -1))
    }
    default:
      return next
  }
}

/** Does the link's connection serve `uri` (a resource or skill file it claims, or one of its templates)? */
const owns = (state: State, link: Link, uri: string): Effect.Effect<boolean> =>
  Effect.map(Ref.get(state.backends), (m) => {
    const mine = m.get(link.prefix)
    if (mine === undefined || mine.status === "down" || mine.generation !== link.generation) return false
    for (const it of mine.served.values()) {
      if (it.claims.some((c) => c.kind === "resource" && c.key === uri)) return true
      if (it.kind === "resourceTemplate") {
        const parsed = UriTemplate.parse(it.key)
        if (Either.isRight(parsed) && Option.isSome(UriTemplate.match(parsed.right, uri))) return true
      }
    }
    return false
  })

/**
 * Follows resource updates for one backend connection (when it declares `resources.subscribe`):
 * whenever the callers' interest or the proxy's definitions change, the URIs it serves that
 * someone wants are computed; while that set is not empty a listen naming them is open, and
 * each update it brings is announced by the proxy's server. A listen that fails is logged and
 * dropped until the set changes again (a lost backend is noticed by its list-change watch,
 * calls and pings).
 */
export const followUpdates = (state: State, link: Link, interest: Interest): Effect.Effect<void> => {
  if (link.client.info.capabilities.resources?.subscribe !== true) return Effect.void
  const wanted = (interested: ReadonlyMap<string, number>) =>
    Effect.filter([...interested.keys()].sort(), (uri) => owns(state, link, uri))
  const triggers = Stream.merge(
    Stream.map(interest.changes, () => undefined),
    Stream.map(state.server.changes, () => undefined)
  )
  return triggers.pipe(
    Stream.mapEffect(() => Effect.flatMap(SubscriptionRef.get(interest), wanted)),
    Stream.changesWith((a, b) => a.length === b.length && a.every((u, i) => u === b[i])),
    Stream.flatMap((uris) =>
      uris.length === 0 ? Stream.empty : Stream.unwrapScoped(
        Effect.map(
          link.client.listen({
            resourceSubscriptions: uris.flatMap((uri) => {
              const own = link.uris.fromProxy(uri)
              return own === undefined ? [] : [own]
            })
          }),
          (s) => s.notifications
        )
      ).pipe(
        Stream.catchAll((e) =>
          Stream.fromEffect(
            Effect.logWarning(`${Names.logged(link.prefix)}: resource subscriptions failed: ${e.message}`)
          ).pipe(Stream.drain)
        )
      ), { switch: true }),
    Stream.runForEach((n) => {
      const uri = n.params?.uri
      return n.method === McpSchema.Method.resourcesUpdated && typeof uri === "string"
        ? McpServer.resourceUpdated(state.server, link.uris.toProxy(uri) ?? uri)
        : Effect.void
    })
  )
}
