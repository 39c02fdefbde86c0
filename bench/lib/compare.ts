/**
 * Interleaved comparisons. This machine is shared (other processes compete for its 2 cores), so
 * every figure is measured in rounds that alternate the contenders (A B, then B A, …) and each
 * contender's best round is reported: interference only ever slows a round down, and alternating
 * spreads it over both sides. Every round is kept in the JSON.
 */
import { progress } from "./harness.js"

export interface Opened<M> {
  /** One measured round. */
  readonly measure: () => Promise<M>
  readonly close: () => Promise<void>
}

export interface Contender<M> {
  readonly name: string
  /** Sets up (spawn, connect, check one call, warm up); the returned session is measured. */
  readonly open: () => Promise<Opened<M>>
}

/**
 * Opens every contender, runs `rounds` alternating rounds, closes them, and returns each one's
 * rounds (`describe` renders a round for the progress log).
 */
export const interleave = async <M>(
  label: string,
  contenders: ReadonlyArray<Contender<M>>,
  rounds: number,
  describe: (m: M) => string
): Promise<Map<string, ReadonlyArray<M>>> => {
  const opened: Array<{ readonly name: string; readonly session: Opened<M>; readonly rounds: Array<M> }> = []
  try {
    for (const c of contenders) {
      progress(`${label}: opening ${c.name}`)
      opened.push({ name: c.name, session: await c.open(), rounds: [] })
    }
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? opened : [...opened].reverse()
      for (const o of order) o.rounds.push(await o.session.measure())
    }
  } finally {
    for (const o of opened) await o.session.close().catch(() => undefined)
  }
  const out = new Map<string, ReadonlyArray<M>>()
  for (const o of opened) {
    out.set(o.name, o.rounds)
    progress(`${label}: ${o.name} rounds ${o.rounds.map(describe).join(" / ")}`)
  }
  return out
}

/** The rounds of `name`, or a clear failure. */
export const roundsOf = <M>(results: Map<string, ReadonlyArray<M>>, name: string): ReadonlyArray<M> => {
  const o = results.get(name)
  if (o === undefined || o.length === 0) throw new Error(`no result for ${name}`)
  return o
}

/** The best round by `figure`: the highest for `higher`-is-better figures, else the lowest. */
export const best = <M>(rounds: ReadonlyArray<M>, figure: (m: M) => number, better: "higher" | "lower"): number => {
  const values = rounds.map(figure)
  return better === "higher" ? Math.max(...values) : Math.min(...values)
}
