/**
 * http: Streamable HTTP `tools/call` with autocannon on loopback, 1 and 64 connections.
 *
 * - modern (2026-07-28, stateless): one pre-built body with the `_meta` envelope and the
 *   `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name` headers; ours vs SDK v2 `createMcpHandler`.
 *   Both answer `application/json` (no notifications are sent, so neither upgrades to SSE);
 *   every response body is checked against the first one (autocannon `expectBody`).
 * - legacy (2025-11-25, sessions): `initialize` once, then every request carries that
 *   `Mcp-Session-Id` (a unique JSON-RPC id per request, set by autocannon `setupRequest`); ours vs
 *   SDK v1 `StreamableHTTPServerTransport` with sessions and `enableJsonResponse: true` (ours
 *   answers JSON whenever no notification precedes the result).
 *
 * Latency percentiles are computed from every response's time (autocannon's own histogram has
 * 1 ms resolution); requests/s is responses over the round's duration.
 */
import autocannon from "autocannon"
import type { ChildProcess } from "node:child_process"
import { best, type Contender, interleave, roundsOf } from "../lib/compare.js"
import { percentile, type Row, row, startHttpServer, stopChild } from "../lib/harness.js"
import { ECHO_TEXT, LEGACY, LEGACY_INITIALIZE_PARAMS, MODERN, MODERN_META } from "../lib/shared.js"

const ROUNDS = 3
/** Seconds per round and connection count: 3 rounds × 2.5 s = 7.5 s per figure. */
const ROUND_SECONDS = 2.5
const WARMUP_SECONDS = 1
const CONNECTIONS = [1, 64] as const
const MAX_SAMPLES = 2_000_000

interface Load {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly total: number
  readonly bad: number
}

interface Round {
  readonly byConnections: Readonly<Record<number, Load>>
}

const COMMON = {
  accept: "application/json, text/event-stream",
  "content-type": "application/json"
} as const

const modernBody = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "echo", arguments: { text: ECHO_TEXT }, _meta: MODERN_META }
})
const modernHeaders = {
  ...COMMON,
  "mcp-protocol-version": MODERN,
  "mcp-method": "tools/call",
  "mcp-name": "echo"
}
/** Legacy bodies: pre-built around a unique id (requests of one session must not share an id). */
const [LEGACY_HEAD, LEGACY_TAIL] = JSON.stringify({
  jsonrpc: "2.0",
  id: 999_999_999,
  method: "tools/call",
  params: { name: "echo", arguments: { text: ECHO_TEXT } }
}).split("999999999") as [string, string]
const legacyBody = (id: number): string => LEGACY_HEAD + id + LEGACY_TAIL

interface LoadOptions {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** Give every request its own JSON-RPC id. */
  readonly uniqueIds: boolean
  readonly expectBody: string | undefined
}

/** One autocannon run; `record` = keep per-response latencies. */
export const load = async (
  options: LoadOptions,
  connections: number,
  seconds: number
): Promise<Load> => {
  const latencies: Array<number> = []
  let id = 0
  const instance = autocannon({
    url: options.url,
    method: "POST",
    headers: options.headers,
    body: options.body,
    connections,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
    ...(options.uniqueIds ? { requests: [{ setupRequest: (req) => ({ ...req, body: legacyBody(++id) }) }] } : {}),
    ...(options.expectBody === undefined ? {} : { expectBody: options.expectBody })
  })
  instance.on("response", (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status === 200 && latencies.length < MAX_SAMPLES) latencies.push(ms)
  })
  const result = await instance
  return {
    rps: result.requests.total / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    total: result.requests.total,
    bad: result.errors + result.timeouts + result.non2xx + (result.mismatches ?? 0)
  }
}

const post = async (
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string
): Promise<{ readonly status: number; readonly text: string; readonly headers: Headers }> => {
  const response = await fetch(url, { method: "POST", headers, body, signal: AbortSignal.timeout(10_000) })
  return { status: response.status, text: await response.text(), headers: response.headers }
}

const checkEcho = (name: string, status: number, text: string): void => {
  if (status !== 200 || !text.includes(`"text":"${ECHO_TEXT}"`) || text.includes("isError")) {
    throw new Error(`${name}: unexpected response ${status} ${text.slice(0, 300)}`)
  }
}

/**
 * Checks that the server at `url` answers `echo` with JSON in `era` (legacy: opens a session) and
 * returns the load options for it.
 */
export const prepare = async (
  name: string,
  url: string,
  era: "modern" | "legacy"
): Promise<LoadOptions> => {
  if (era === "modern") {
    const first = await post(url, modernHeaders, modernBody)
    checkEcho(name, first.status, first.text)
    if (first.headers.get("content-type")?.startsWith("application/json") !== true) {
      throw new Error(`${name}: expected a JSON response, got ${first.headers.get("content-type")}`)
    }
    return { url, headers: modernHeaders, body: modernBody, uniqueIds: false, expectBody: first.text }
  } else {
    const init = await post(
      url,
      COMMON,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: LEGACY_INITIALIZE_PARAMS
      })
    )
    const session = init.headers.get("mcp-session-id")
    if (init.status !== 200 || session === null) {
      throw new Error(`${name}: initialize gave ${init.status} without a session: ${init.text.slice(0, 300)}`)
    }
    const headers = { ...COMMON, "mcp-protocol-version": LEGACY, "mcp-session-id": session }
    const initialized = await post(
      url,
      headers,
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })
    )
    if (initialized.status !== 202) throw new Error(`${name}: initialized gave ${initialized.status}`)
    const first = await post(url, headers, legacyBody(0))
    checkEcho(name, first.status, first.text)
    if (first.headers.get("content-type")?.startsWith("application/json") !== true) {
      throw new Error(`${name}: expected a JSON response, got ${first.headers.get("content-type")}`)
    }
    return { url, headers, body: legacyBody(0), uniqueIds: true, expectBody: undefined }
  }
}

const contender = (name: string, script: string, era: "modern" | "legacy"): Contender<Round> => ({
  name,
  open: async () => {
    let child: ChildProcess | undefined
    try {
      const started = await startHttpServer(script)
      child = started.child
      const url = started.url
      const options = await prepare(name, url, era)
      await load(options, 64, WARMUP_SECONDS)
      await load(options, 1, WARMUP_SECONDS / 2)
      const server = child
      return {
        measure: async () => {
          const byConnections: Record<number, Load> = {}
          for (const c of CONNECTIONS) byConnections[c] = await load(options, c, ROUND_SECONDS)
          return { byConnections }
        },
        close: () => stopChild(server)
      }
    } catch (error) {
      if (child !== undefined) await stopChild(child)
      throw error
    }
  }
})

const at = (c: number) => (r: Round): Load => {
  const l = r.byConnections[c]
  if (l === undefined) throw new Error(`no load at ${c} connections`)
  return l
}

const describe = (r: Round): string =>
  CONNECTIONS.map((c) => `${at(c)(r).rps.toFixed(0)} req/s @${c}${at(c)(r).bad > 0 ? ` (${at(c)(r).bad} bad)` : ""}`)
    .join(", ")

const rows = (
  results: Map<string, ReadonlyArray<Round>>,
  official: string,
  mode: string,
  note: string
): Array<Row> => {
  const o = roundsOf(results, "ours")
  const f = roundsOf(results, official)
  const bad = [...o, ...f].reduce((n, r) => n + CONNECTIONS.reduce((m, c) => m + at(c)(r).bad, 0), 0)
  const fullNote = bad > 0 ? `${note}; ${bad} failed/mismatched responses` : note
  return CONNECTIONS.flatMap((c) => {
    const figures = [
      { name: "requests/s", unit: "req/s", better: "higher", get: (r: Round) => at(c)(r).rps },
      { name: "p50 latency", unit: "ms", better: "lower", get: (r: Round) => at(c)(r).p50 },
      { name: "p99 latency", unit: "ms", better: "lower", get: (r: Round) => at(c)(r).p99 }
    ] as const
    return figures.map((f1) =>
      row({
        suite: "http",
        figure: `${mode} tools/call, ${c} conn, ${f1.name}`,
        unit: f1.unit,
        better: f1.better,
        ours: best(o, f1.get, f1.better),
        official: best(f, f1.get, f1.better),
        officialName: official,
        note: fullNote,
        oursRounds: o.map(f1.get),
        officialRounds: f.map(f1.get)
      })
    )
  })
}

export const run = async (): Promise<Array<Row>> => {
  const modern = await interleave(
    "http modern",
    [contender("ours", "ours-http.ts", "modern"), contender("sdk-v2", "sdk-v2-http.ts", "modern")],
    ROUNDS,
    describe
  )
  const legacy = await interleave(
    "http legacy",
    [contender("ours", "ours-http.ts", "legacy"), contender("sdk-v1", "sdk-v1-http.ts", "legacy")],
    ROUNDS,
    describe
  )
  return [
    ...rows(modern, "sdk-v2", "modern stateless", "2026-07-28; v2: createMcpHandler (responseMode auto → JSON)"),
    ...rows(
      legacy,
      "sdk-v1",
      "legacy session",
      "2025-11-25, one session; v1: StreamableHTTPServerTransport, enableJsonResponse true; ours: JSON by default"
    )
  ]
}
