/**
 * The change bus's outbox: the change events this instance could not publish (Redis away), kept
 * in order until a PUBLISH succeeds again, within a bound of events and bytes (documented on
 * `Redis.layerChangeBus`).
 *
 * Events are idempotent announcements, so a pending duplicate (the same list change, an update of
 * the same URI) is not kept twice, and list changes are at most three. Past the bound the oldest
 * pending resource update is dropped and a `resources` list change stands for it: the others
 * still learn that the resources may have changed, but a listener subscribed to that URI alone is
 * not told. A dropped task change (`TaskStatus`) has no stand-in: the instances listening for
 * that task re-read it on their own interval (`subscriptions/listen`, Tasks extension).
 *
 * @internal
 */
import type * as Cluster from "../../Cluster.js"

/** Pending events an outbox keeps at most. */
export const MAX_EVENTS = 1_000

/** Bytes (UTF-8 of the published messages) an outbox keeps at most: 1 MiB. */
export const MAX_BYTES = 1024 * 1024

/** One pending event and the size of its message. */
export interface Entry {
  readonly event: Cluster.ChangeEvent
  readonly bytes: number
}

/** The pending events, oldest first, their total bytes, and how many were dropped past the bound. */
export interface Outbox {
  readonly entries: ReadonlyArray<Entry>
  readonly bytes: number
  readonly dropped: number
}

export const empty: Outbox = { entries: [], bytes: 0, dropped: 0 }

const same = (a: Cluster.ChangeEvent, b: Cluster.ChangeEvent): boolean => {
  switch (a._tag) {
    case "ListChanged":
      return b._tag === "ListChanged" && a.kind === b.kind
    case "ResourceUpdated":
      return b._tag === "ResourceUpdated" && a.uri === b.uri
    case "TaskStatus":
      return b._tag === "TaskStatus" && a.taskId === b.taskId
  }
}

/** What stands for dropped resource updates: the resources may all have changed. */
const RESOURCES: Entry = { event: { _tag: "ListChanged", kind: "resources" }, bytes: 256 }

/**
 * `outbox` with `entry` appended (unless an equal event is pending), within the bounds. List
 * changes are never dropped (at most one per kind is pending); past a bound the oldest resource
 * update is, and a `resources` list change takes its place unless one is pending.
 */
export const append = (outbox: Outbox, entry: Entry, maxEvents = MAX_EVENTS, maxBytes = MAX_BYTES): Outbox => {
  if (outbox.entries.some((e) => same(e.event, entry.event))) return outbox
  let entries = [...outbox.entries, entry]
  let bytes = outbox.bytes + entry.bytes
  let dropped = outbox.dropped
  // bounded: each pass removes one resource update or task change (and adds at most the one stand-in)
  while (entries.length > maxEvents || bytes > maxBytes) {
    const at = entries.findIndex((e) => e.event._tag !== "ListChanged")
    const oldest = entries[at]
    if (oldest === undefined) break
    dropped++
    bytes -= oldest.bytes
    const standIn = oldest.event._tag === "TaskStatus" || entries.some((e) => same(e.event, RESOURCES.event))
      ? []
      : [RESOURCES]
    bytes += standIn.length === 0 ? 0 : RESOURCES.bytes
    entries = [...entries.slice(0, at), ...standIn, ...entries.slice(at + 1)]
  }
  return { entries, bytes, dropped }
}

/** `outbox` without its oldest entry (just published). */
export const shift = (outbox: Outbox): Outbox => {
  const [first, ...rest] = outbox.entries
  return first === undefined ? outbox : { entries: rest, bytes: outbox.bytes - first.bytes, dropped: outbox.dropped }
}
