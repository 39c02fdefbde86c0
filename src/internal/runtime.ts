/**
 * The one place for what exists for speed outside Effect's scheduler: plain timers, root forks
 * and next-tick batching, and the platform fast paths they use (docs/architecture.md, "Layout").
 * Each is measured by the benchmark (bench/README.md); everything else goes through `Clock`,
 * `FiberMap`, `Mailbox`. Platform-neutral: Node's `process.nextTick` and `Buffer` are used when
 * present, standard fallbacks otherwise.
 * @internal
 */
import * as Runtime from "effect/Runtime"

/** The longest delay a plain timer keeps (a longer one would fire at once). */
export const MAX_TIMER_MILLIS = 2 ** 31 - 1

/** Runs `f` after the current macrotask: Node's `process.nextTick` when present, else a microtask. */
export const nextTick: (f: () => void) => void = (() => {
  const node = (globalThis as { readonly process?: { readonly nextTick?: (f: () => void) => void } }).process
  const tick = node?.nextTick
  return typeof tick === "function" ? (f: () => void) => tick(f) : queueMicrotask
})()

/** Starts a timer; the returned function cancels it. `millis` at most {@link MAX_TIMER_MILLIS}. */
export const startTimer = (millis: number, f: () => void): () => void => {
  const timer = setTimeout(f, millis)
  return () => clearTimeout(timer)
}

/** Runs Effects as root fibers of `runtime` (no parent, no supervisor), at once. */
export const rootFork = Runtime.runFork

/** Base64 of bytes: Node's `Buffer` where it exists (much faster), `btoa` over chunks elsewhere. */
export const toBase64 = (bytes: Uint8Array): string => {
  const buffer = (globalThis as {
    readonly Buffer?: {
      from: (b: ArrayBufferLike, offset: number, length: number) => { toString: (enc: "base64") => string }
    }
  }).Buffer
  if (buffer !== undefined) return buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")
  let binary = ""
  const chunk = 0x8000
  for (let i = 0; i < bytes.length; i += chunk) {
    binary += String.fromCharCode(...bytes.subarray(i, i + chunk))
  }
  return btoa(binary)
}
