/**
 * The requests of one connection (`connection.ts`): those running, at most `maxRunning`, each in
 * its own fiber, and behind them a queue of at most `maxWaiting` requests waiting for a slot, in
 * arrival order. A waiting request holds no fiber of its own (unless its caller's fiber runs it:
 * the in-process transport, stateless HTTP) and can be dropped before it starts
 * (`notifications/cancelled`, the end of the connection). A state record and module functions,
 * as `effect`'s own `FiberMap` keeps its state in a record.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as JsonRpc from "../../JsonRpc.js"

/**
 * What names a request in the table: its exact id (`0` and `"0"` differ), or a token of its own
 * when no message can name it (stateless HTTP: ids of different clients may be equal).
 */
export type Key = JsonRpc.RequestId | object

/** A request waiting for a slot. */
export interface Waiting {
  /** Starts it; its slot is taken (the caller has put nothing in `running` for it). */
  readonly start: () => void
  /** Ends it without starting it (cancelled, or the connection ended): no response is written. */
  readonly drop: Effect.Effect<void>
}

/** The table of one connection. */
export interface Table {
  readonly running: Map<Key, Fiber.RuntimeFiber<unknown, unknown>>
  /** In arrival order (a `Map` iterates in insertion order). */
  readonly waiting: Map<Key, Waiting>
  readonly maxRunning: number
  readonly maxWaiting: number
  /** Woken on every change: what `until` waits on. */
  readonly waiters: Set<() => void>
  readonly runFork: (effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>
}

/** A new, empty table. Bounds below 1 (running) or 0 (waiting) are raised to them. */
export const make = (
  runFork: (effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>,
  maxRunning: number,
  maxWaiting: number
): Table => ({
  running: new Map(),
  waiting: new Map(),
  maxRunning: Math.max(1, Math.floor(maxRunning)),
  maxWaiting: Math.max(0, Math.floor(maxWaiting)),
  waiters: new Set(),
  runFork
})

/** Is a request with this key running or waiting? */
export const has = (table: Table, key: Key): boolean => table.running.has(key) || table.waiting.has(key)

/** No slot is free. */
export const full = (table: Table): boolean => table.running.size >= table.maxRunning

/** No slot is free and the queue is full too. */
export const saturated = (table: Table): boolean => full(table) && table.waiting.size >= table.maxWaiting

/** Requests running plus waiting. */
export const size = (table: Table): number => table.running.size + table.waiting.size

/** Tracks a fiber that runs a request (its own, or its caller's); {@link untrack} when it is done. */
export const track = (table: Table, key: Key, fiber: Fiber.RuntimeFiber<unknown, unknown>): void => {
  table.running.set(key, fiber)
}

/** The request is done: its slot goes to the first waiting request. */
export const untrack = (table: Table, key: Key): void => {
  table.running.delete(key)
  startWaiting(table)
  wake(table)
}

/** Starts `effect` for `key` in a fiber of its own, at once (the caller checked there is a free slot). */
export const start = (table: Table, key: Key, effect: Effect.Effect<void>): void => {
  const fiber = table.runFork(effect)
  if (fiber.unsafePoll() !== null) return
  table.running.set(key, fiber)
  fiber.addObserver(() => untrack(table, key))
}

/** Queues a request (the caller checked the queue has room). */
export const enqueue = (table: Table, key: Key, waiting: Waiting): void => {
  table.waiting.set(key, waiting)
}

/** Removes a waiting request without starting or dropping it; `false` when it is not waiting. */
export const dequeue = (table: Table, key: Key): boolean => {
  const removed = table.waiting.delete(key)
  if (removed) wake(table)
  return removed
}

/**
 * Cancels the request with this key: a running one is interrupted (not awaited: it leaves the
 * table by itself and writes no response), a waiting one is dropped and never starts. `false`
 * when there is none.
 */
export const cancel = (table: Table, key: Key): Effect.Effect<boolean> =>
  Effect.suspend(() => {
    const waiting = table.waiting.get(key)
    if (waiting !== undefined) {
      dequeue(table, key)
      return Effect.as(waiting.drop, true)
    }
    const fiber = table.running.get(key)
    if (fiber === undefined) return Effect.succeed(false)
    return Effect.flatMap(Effect.fiberId, (self) => Effect.as(Fiber.interruptAsFork(fiber, self), true))
  })

/** Resumes once `ready` holds (checked now and after every change of the table). */
export const until = (table: Table, ready: (table: Table) => boolean): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (ready(table)) return resume(Effect.void)
    const check = (): void => {
      if (!ready(table)) return
      table.waiters.delete(check)
      resume(Effect.void)
    }
    table.waiters.add(check)
    return Effect.sync(() => {
      table.waiters.delete(check)
    })
  })

/** Drops every waiting request, then interrupts every running one and waits for them. */
export const interruptAll = (table: Table): Effect.Effect<void> =>
  Effect.suspend(() => {
    const dropped = Array.from(table.waiting.values(), (w) => w.drop)
    table.waiting.clear()
    wake(table)
    return Effect.zipRight(
      Effect.all(dropped, { discard: true }),
      Effect.suspend(() => Fiber.interruptAll(table.running.values()))
    )
  })

const startWaiting = (table: Table): void => {
  while (table.running.size < table.maxRunning && table.waiting.size > 0) {
    const first = table.waiting.entries().next()
    if (first.done === true) return
    const [key, waiting] = first.value
    table.waiting.delete(key)
    waiting.start()
  }
}

const wake = (table: Table): void => {
  if (table.waiters.size === 0) return
  for (const check of Array.from(table.waiters)) check()
}
