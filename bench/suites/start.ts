/**
 * start: cold start to the first `tools/call` result on stdio — spawn the server process
 * (`node bench/out/js/servers/<server>.js`), write the request(s) at once, stop the clock at the answer.
 * Ours and SDK v2 get one 2026-07-28 `tools/call`; SDK v1 gets `initialize`,
 * `notifications/initialized` and `tools/call` in one write. Median of 5, the servers alternating.
 * Under `npm run bench` everything in the server process is JavaScript on both sides, as deployed:
 * the server scripts compiled by `tsc -p tsconfig.bench.json`, ours from dist/, the SDKs their
 * published builds, run with plain `node`. Run outside `npm run bench` (`npx tsx bench/run.ts`), the
 * scripts and ours (from src/) go through the tsx loader at start instead.
 *
 * With the compiled library the suite also bundles each compiled server script with esbuild into
 * one ESM file (`bench/out/bundle/<name>.bundle.mjs`: `--bundle --platform=node --format=esm` and
 * the `require` banner, the recipe README.md gives for deploying a server) and times those the same way: the bundled rows
 * compare ours bundled with each SDK bundled, and ours bundled with SDK v2 as published.
 */
import { bundle, bundleScript } from "../lib/bundle.js"
import {
  compiledLibrary,
  type Era,
  expectResult,
  LineClient,
  median,
  paramsJson,
  progress,
  type Row,
  row,
  withTimeout
} from "../lib/harness.js"
import { ECHO_TEXT, LEGACY } from "../lib/shared.js"

const RUNS = 5

interface Server {
  readonly name: string
  readonly script: string
  readonly era: Era
}

const SERVERS: ReadonlyArray<Server> = [
  { name: "ours", script: "ours-stdio.ts", era: "modern" },
  { name: "sdk-v2", script: "sdk-v2-stdio.ts", era: "modern" },
  { name: "sdk-v1", script: "sdk-v1-stdio.ts", era: "legacy" }
]

/** The bundled variant of a server (`bench/lib/bundle.ts`). */
const bundled = (s: Server): Server => ({ name: `${s.name}-bundled`, script: bundleScript(s.script), era: s.era })

const once = async (script: string, era: Era, label: string): Promise<number> => {
  const t0 = performance.now()
  const client = new LineClient(script, [], label)
  try {
    if (era === "legacy") {
      void client.requestRaw(
        "initialize",
        JSON.stringify({ protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "presa-bench", version: "0" } })
      )
      client.notify("notifications/initialized")
    }
    const response = await withTimeout(
      client.requestRaw("tools/call", paramsJson(era, { name: "echo", arguments: { text: ECHO_TEXT } })),
      20_000,
      `${label} first tools/call`
    )
    const ms = performance.now() - t0
    expectResult(response, `${label} tools/call`)
    return ms
  } finally {
    await client.close()
  }
}

export const run = async (): Promise<Array<Row>> => {
  // bundles only from the compiled scripts: from src/ the figures would time tsx, not the bundle
  if (compiledLibrary) await bundle(SERVERS.map((s) => s.script))
  const servers = compiledLibrary ? [...SERVERS, ...SERVERS.map(bundled)] : SERVERS
  const times = new Map<string, Array<number>>(servers.map((s) => [s.name, []]))
  // one untimed start each: warms the OS file cache (and tsx's transform cache when it is used)
  for (const s of servers) await once(s.script, s.era, `start-${s.name}`)
  for (let i = 0; i < RUNS; i++) {
    const order = i % 2 === 0 ? servers : [...servers].reverse()
    for (const s of order) times.get(s.name)?.push(await once(s.script, s.era, `start-${s.name}`))
  }
  for (const [name, ts] of times) progress(`start: ${name} ${ts.map((t) => t.toFixed(0)).join(" / ")} ms`)
  const of = (name: string): Array<number> => times.get(name) ?? []
  const pairs: ReadonlyArray<readonly [string, string, string, string]> = [
    ["ours", "sdk-v2", "cold start to first tools/call result (median of 5)", "sdk-v2"],
    ["ours", "sdk-v1", "cold start to first tools/call result (median of 5)", "sdk-v1"],
    ...(compiledLibrary
      ? [
        ["ours-bundled", "sdk-v2-bundled", "cold start, both bundled with esbuild (median of 5)", "sdk-v2 bundled"],
        ["ours-bundled", "sdk-v1-bundled", "cold start, both bundled with esbuild (median of 5)", "sdk-v1 bundled"],
        ["ours-bundled", "sdk-v2", "cold start, ours bundled vs SDK as published (median of 5)", "sdk-v2"]
      ] as const
      : [])
  ]
  return pairs.map(([ours, official, figure, officialName]) =>
    row({
      suite: "start",
      figure,
      unit: "ms",
      better: "lower",
      ours: median(of(ours)),
      official: median(of(official)),
      officialName,
      note: `${
        compiledLibrary ? "node, compiled JS on both sides" : "node --import tsx, ours from src/"
      }, stdio; v1 includes initialize`,
      oursRounds: of(ours),
      officialRounds: of(official)
    })
  )
}
