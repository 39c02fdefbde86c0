/**
 * Seams for running several server instances as one MCP server (behind a plain load balancer).
 *
 * The 2026-07-28 revision is stateless so that a remote server can run as many instances behind a
 * round-robin balancer (MCP 2026-07-28, Overview). What a single instance keeps in memory has to
 * be shared for that: the change events a `subscriptions/listen` stream or a legacy session
 * forwards ({@link ChangeBus}), the task records (`Task.TaskStore`), and the keys that sign
 * `requestState` (the `inputState.keys` option of `McpServer.make`, from configuration).
 *
 * Each seam is a service that `McpServer.make` reads from its context; without it the server keeps
 * the state in memory, exactly as a single instance does. `presa-mcp/Redis` provides Redis-backed
 * layers for them.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"

/**
 * A change to what the server serves: a list change of one kind (tools, prompts, resources) or an
 * update of one resource's contents (MCP 2026-07-28, Subscriptions).
 *
 * @since 0.2.0
 * @category models
 */
export type ChangeEvent =
  | { readonly _tag: "ListChanged"; readonly kind: "tools" | "prompts" | "resources" }
  | { readonly _tag: "ResourceUpdated"; readonly uri: string }

/**
 * Where change events travel.
 *
 * - `publish`: announces an event to every subscriber of every instance sharing the bus. It must
 *   not wait on a remote peer that is away: a bus that cannot reach its backend still delivers to
 *   this instance's subscribers and logs the failure.
 * - `subscribe`: a queue (closed with the Scope) of every event published after the call,
 *   whichever instance published it, in the order this instance received them. Each
 *   `subscriptions/listen` request and each legacy session takes one, and coalesces its own
 *   backlog as a single instance does.
 *
 * @since 0.2.0
 * @category models
 */
export interface ChangeBusShape {
  readonly publish: (event: ChangeEvent) => Effect.Effect<void>
  readonly subscribe: Effect.Effect<Queue.Dequeue<ChangeEvent>, never, Scope.Scope>
}

/**
 * The change-event bus as a service. `McpServer.make` uses the one in its context when there is
 * one, else a fresh in-memory bus (one `PubSub` per server).
 *
 * @since 0.2.0
 * @category models
 */
export class ChangeBus extends Context.Tag("presa-mcp/ChangeBus")<ChangeBus, ChangeBusShape>() {}
