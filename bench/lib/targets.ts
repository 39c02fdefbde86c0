/**
 * The targets of issue #24 ("Performance: lead every peer on every row"), checked against the rows
 * of one run: `npm run bench` prints them under the table and writes them to results.json
 * (`targets`). A target whose row is missing from the run (a partial run) reads `–`.
 *
 * The 2025-era targets ("every 2025-era row ≥ SDK v1") read the rows where both sides speak
 * 2025-11-25, as the legacy HTTP rows always did; the rows where ours speaks 2026-07-28 against SDK
 * v1 stay in the table beside them (what the 2026-07-28 `_meta` envelope costs), context here.
 */
import type { Row } from "./harness.js"

export interface Target {
  /** What the issue asks, in its words. */
  readonly label: string
  readonly suite: string
  readonly figure: string
  /** The row's `officialName`. */
  readonly vs: string
  /** The ratio (ours / official) must be ≥ `min` or ≤ `max`. */
  readonly min?: number
  readonly max?: number
  /** And ours at most this figure (in the row's unit). */
  readonly oursMax?: number
  /**
   * Rows (same suite and `vs`) printed beside the target, whose ratios say how far it can be
   * reached: the SDK v2 client against a server that does no work (`stdio.ts`), the RSS that
   * loading `effect/Schema` alone costs, ours bundled (`memory.ts`); or the same figure with ours
   * speaking 2026-07-28 (the 2025-era targets).
   */
  readonly context?: ReadonlyArray<{ readonly figure: string; readonly label: string }>
}

export interface Checked {
  readonly label: string
  readonly vs: string
  readonly ratio: number | null
  readonly ours: number | null
  readonly want: string
  /** `null` when the run has no such row. */
  readonly met: boolean | null
  /** `Target.context`'s rows that the run has: their labels and ratios. */
  readonly context: ReadonlyArray<{ readonly label: string; readonly ratio: number }>
}

/** req/s at 1 and 64 connections ≥ `min` × the SDK's, p99 latency ≤ the SDK's. */
const httpTargets = (era: "modern" | "legacy", vs: string, min: number): ReadonlyArray<Target> => {
  const figure = era === "modern" ? "modern stateless tools/call" : "legacy session tools/call"
  const sdk = vs === "sdk-v2" ? "v2" : "v1"
  return [1, 64].flatMap((conns) => [
    {
      label: `HTTP ${era} req/s, ${conns} conn ≥ ${min === 1 ? "" : `${min}× `}${sdk}`,
      suite: "http",
      figure: `${figure}, ${conns} conn, requests/s`,
      vs,
      min
    },
    {
      label: `HTTP ${era} p99, ${conns} conn ≤ ${sdk}`,
      suite: "http",
      figure: `${figure}, ${conns} conn, p99 latency`,
      vs,
      max: 1
    }
  ])
}

export const TARGETS: ReadonlyArray<Target> = [
  {
    label: "cold start ≤ SDK v2 and < 200 ms",
    suite: "start",
    figure: "cold start to first tools/call result (median of 5)",
    vs: "sdk-v2",
    max: 1,
    oursMax: 200
  },
  {
    label: "cold start, ours bundled ≤ SDK v2 and < 200 ms",
    suite: "start",
    figure: "cold start, ours bundled vs SDK as published (median of 5)",
    vs: "sdk-v2",
    max: 1,
    oursMax: 200
  },
  ...httpTargets("modern", "sdk-v2", 2),
  {
    label: "stdio own pair, 32 in flight ≥ 2× v2",
    suite: "stdio",
    figure: "own client ↔ own server, 32 in flight",
    vs: "sdk-v2",
    min: 2
  },
  {
    label: "SDK v2 client → our stdio server, sequential ≥ 2× v2",
    suite: "stdio",
    figure: "SDK v2 client → server, sequential",
    vs: "sdk-v2",
    min: 2,
    context: [{ figure: "ceiling: SDK v2 client → canned server, sequential", label: "a server doing no work" }]
  },
  {
    label: "SDK v2 client → our stdio server, 32 in flight ≥ 2× v2",
    suite: "stdio",
    figure: "SDK v2 client → server, 32 in flight",
    vs: "sdk-v2",
    min: 2,
    context: [{ figure: "ceiling: SDK v2 client → canned server, 32 in flight", label: "a server doing no work" }]
  },
  {
    label: "core server only ≥ v1",
    suite: "core",
    figure: "server only: tools/call round trips, sequential, both 2025-11-25",
    vs: "sdk-v1",
    min: 1,
    context: [{ figure: "server only: tools/call round trips, sequential", label: "ours speaking 2026-07-28" }]
  },
  {
    label: "core client + server in-process ≥ v1",
    suite: "core",
    figure: "client+server in-process: callTool, sequential, both 2025-11-25",
    vs: "sdk-v1",
    min: 1,
    context: [{ figure: "client+server in-process: callTool, sequential", label: "ours speaking 2026-07-28" }]
  },
  {
    label: "stdio own pair, sequential ≥ v1",
    suite: "stdio",
    figure: "own client ↔ own server, both 2025-11-25, sequential",
    vs: "sdk-v1",
    min: 1,
    context: [{ figure: "own client ↔ own server, sequential", label: "ours speaking 2026-07-28" }]
  },
  {
    label: "stdio own pair, 32 in flight ≥ v1",
    suite: "stdio",
    figure: "own client ↔ own server, both 2025-11-25, 32 in flight",
    vs: "sdk-v1",
    min: 1,
    context: [{ figure: "own client ↔ own server, 32 in flight", label: "ours speaking 2026-07-28" }]
  },
  ...httpTargets("legacy", "sdk-v1", 1),
  {
    label: "RSS after 10k calls ≤ v2",
    suite: "memory",
    figure: "server RSS after 10,000 tools/call",
    vs: "sdk-v2",
    max: 1
  },
  {
    label: "RSS after 10k calls ≤ v1",
    suite: "memory",
    figure: "server RSS after 10,000 tools/call",
    vs: "sdk-v1",
    max: 1,
    context: [
      { figure: "server RSS after 10,000 tools/call, ours bundled vs SDK as published", label: "ours bundled" },
      {
        figure: "floor: RSS of a process that only loads effect/Schema, vs the server after startup",
        label: "effect/Schema alone vs v1 at startup"
      }
    ]
  }
]

const want = (t: Target): string =>
  [
    t.min === undefined ? undefined : `≥ ${t.min}×`,
    t.max === undefined ? undefined : `≤ ${t.max}×`,
    t.oursMax === undefined ? undefined : `ours < ${t.oursMax}`
  ].filter((w) => w !== undefined).join(", ")

export const check = (rows: ReadonlyArray<Row>): ReadonlyArray<Checked> =>
  TARGETS.map((t) => {
    const find = (figure: string | undefined) =>
      rows.find((x) => x.suite === t.suite && x.figure === figure && x.officialName === t.vs)
    const r = find(t.figure)
    const ratio = r?.ratio ?? null
    const ours = r?.ours ?? null
    const met = ratio === null || ours === null
      ? null
      : (t.min === undefined || ratio >= t.min) && (t.max === undefined || ratio <= t.max) &&
        (t.oursMax === undefined || ours < t.oursMax)
    const context = (t.context ?? []).flatMap((c) => {
      const other = find(c.figure)?.ratio
      return other === undefined || other === null ? [] : [{ label: c.label, ratio: other }]
    })
    return { label: t.label, vs: t.vs, ratio, ours, want: want(t), met, context }
  })
