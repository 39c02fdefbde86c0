/**
 * Steady per-call figures for the profiling scripts (`ops.ts`, `serverOps.ts`, `httpOps.ts`):
 * Effect operations and fibers counted by a `Supervisor` (op supervision on), and bytes allocated
 * from V8's sampling heap profiler (objects already collected included). Neither moves with the
 * machine's load, unlike µs of CPU.
 */
import * as Effect from "effect/Effect"
import * as RuntimeFlags from "effect/RuntimeFlags"
import * as RuntimeFlagsPatch from "effect/RuntimeFlagsPatch"
import * as Supervisor from "effect/Supervisor"
import { Session } from "node:inspector/promises"

/** Counts the operations and fiber starts it sees while `counting`; `onOp` sees every operation. */
export class OpCounter extends Supervisor.AbstractSupervisor<void> {
  ops = 0
  fibers = 0
  counting = true
  constructor(private readonly onOp?: (effect: unknown) => void) {
    super()
  }
  get value() {
    return Effect.void
  }
  override onStart() {
    if (this.counting) this.fibers++
  }
  override onEffect(_fiber: unknown, effect: unknown) {
    if (this.counting) this.ops++
    this.onOp?.(effect)
  }
  reset() {
    this.ops = 0
    this.fibers = 0
  }
}

/** `self` with `counter` supervising it and every fiber it forks, op supervision on. */
export const supervisedBy = (counter: OpCounter) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  self.pipe(
    Effect.supervised(counter),
    Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision))
  )

/** A node of V8's sampling heap profile. */
export interface SamplingNode {
  readonly selfSize: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children: ReadonlyArray<SamplingNode>
}

/** Bytes allocated under `node`. */
export const totalBytes = (node: SamplingNode): number =>
  node.children.reduce((sum, c) => sum + totalBytes(c), node.selfSize)

/** The sampling heap profile (every 512 bytes, collected objects included) of what `run` allocates. */
export const sampleAllocations = async (run: () => Promise<unknown>): Promise<SamplingNode> => {
  const session = new Session()
  session.connect()
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true
  })
  await run()
  const { profile } = await session.post("HeapProfiler.stopSampling")
  session.disconnect()
  return profile.head
}

/**
 * Writes to stderr the `top` allocation sites (function, file:line) of `profile` by bytes per call
 * (`calls` calls sampled), those of at least 16 bytes per call.
 */
export const printSites = (profile: SamplingNode, calls: number, top: number): void => {
  const sites = new Map<string, number>()
  const walk = (node: SamplingNode): void => {
    const f = node.callFrame
    const key = `${f.functionName || "(anonymous)"} ${
      f.url.replace(/^.*node_modules\//, "").replace(/^.*?\/(dist|src|bench)\//, "$1/")
    }:${f.lineNumber + 1}`
    sites.set(key, (sites.get(key) ?? 0) + node.selfSize)
    for (const c of node.children) walk(c)
  }
  walk(profile)
  for (const [key, bytes] of [...sites].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    if (bytes / calls >= 16) process.stderr.write(`${(bytes / calls).toFixed(0).padStart(6)} B/call  ${key}\n`)
  }
}
