/**
 * list: `tools/list` on a server with 10,000 tools (+ `echo`); read: `resources/read` of a
 * 1 MiB blob. Server processes on stdio, driven by the same raw newline-delimited JSON-RPC client
 * (write a pre-built line, `JSON.parse` the answer): the figures are server + pipe cost, not any
 * SDK client's. Ours and SDK v2 are asked with the 2026-07-28 `_meta` envelope, SDK v1 after a
 * 2025-11-25 `initialize`. The SDK servers do not paginate `tools/list`: one call returns all.
 */
import { best, type Contender, interleave, roundsOf } from "../lib/compare.js"
import {
  type Bounds,
  type Era,
  expectResult,
  handshake,
  LineClient,
  median,
  paramsJson,
  type Row,
  row,
  sampleDurations,
  withTimeout
} from "../lib/harness.js"
import { BLOB_URI, makeBlob } from "../lib/shared.js"

const TOOLS = 10_000
const BLOB_BYTES = 1024 * 1024
const ROUNDS = 3
const ROUND: Bounds = { maxMs: 1000, maxCount: 15 }
const OPEN_TIMEOUT = 20_000

const SERVERS = {
  ours: { script: "ours-stdio.ts", era: "modern" },
  "sdk-v2": { script: "sdk-v2-stdio.ts", era: "modern" },
  "sdk-v1": { script: "sdk-v1-stdio.ts", era: "legacy" }
} as const satisfies Record<string, { readonly script: string; readonly era: Era }>

type ServerName = keyof typeof SERVERS

/** Spawns a server with `args`, does the handshake, runs `check` once; closes it on failure. */
const openClient = async (
  name: ServerName,
  args: ReadonlyArray<string>,
  label: string
): Promise<LineClient> => {
  const { era, script } = SERVERS[name]
  const client = new LineClient(script, args, label)
  try {
    await withTimeout(handshake(client, era), OPEN_TIMEOUT, `${label} handshake`)
    return client
  } catch (error) {
    await client.close()
    throw error
  }
}

// -- list --------------------------------------------------------------------------------------

interface ListRound {
  /** ms: one `tools/list` call (ours with default paging: the first page). */
  readonly one: number
  /** ms: every tool, following `nextCursor` (SDK: the same single call). */
  readonly all: number
}

const listPage = async (client: LineClient, era: Era, cursor: string | undefined) => {
  const result = expectResult(
    await client.requestRaw("tools/list", paramsJson(era, cursor === undefined ? {} : { cursor })),
    "tools/list"
  )
  const tools = result.tools
  if (!Array.isArray(tools)) throw new Error("tools/list: no tools array")
  const next = result.nextCursor
  return { count: tools.length, next: typeof next === "string" ? next : undefined }
}

const listAll = async (client: LineClient, era: Era): Promise<number> => {
  let count = 0
  let cursor: string | undefined = undefined
  for (let page = 0; page < 1000; page++) {
    const r: { count: number; next: string | undefined } = await listPage(client, era, cursor)
    count += r.count
    if (r.next === undefined) return count
    cursor = r.next
  }
  throw new Error("tools/list: more than 1000 pages")
}

const listContender = (name: string, server: ServerName, pageSize: number | undefined): Contender<ListRound> => ({
  name,
  open: async () => {
    const args = ["--tools", String(TOOLS), ...(pageSize === undefined ? [] : ["--page-size", String(pageSize)])]
    const client = await openClient(server, args, `list-${name}`)
    const era = SERVERS[server].era
    const total = await withTimeout(listAll(client, era), OPEN_TIMEOUT, `${name} tools/list`)
    if (total !== TOOLS + 1) throw new Error(`${name}: listed ${total} tools, expected ${TOOLS + 1}`)
    await listAll(client, era) // warm-up
    return {
      measure: async () => ({
        one: median(await sampleDurations(() => listPage(client, era, undefined), ROUND)),
        all: median(await sampleDurations(() => listAll(client, era), ROUND))
      }),
      close: () => client.close()
    }
  }
})

export const runList = async (): Promise<Array<Row>> => {
  const results = await interleave(
    "list",
    [
      listContender("ours", "ours", undefined),
      listContender("ours unpaged", "ours", TOOLS + 1),
      listContender("sdk-v2", "sdk-v2", undefined),
      listContender("sdk-v1", "sdk-v1", undefined)
    ],
    ROUNDS,
    (r) => `one ${r.one.toFixed(1)} ms, all ${r.all.toFixed(1)} ms`
  )
  const one = (r: ListRound) => r.one
  const all = (r: ListRound) => r.all
  const figures = [
    {
      figure: "tools/list of 10,000: one call, default paging (ours: first page of 100)",
      ours: "ours",
      get: one
    },
    { figure: "tools/list of 10,000: all tools via nextCursor, default paging", ours: "ours", get: all },
    { figure: "tools/list of 10,000: one unpaged call (ours pageSize 10001)", ours: "ours unpaged", get: one }
  ] as const
  return figures.flatMap((f) =>
    (["sdk-v2", "sdk-v1"] as const).map((official) => {
      const o = roundsOf(results, f.ours)
      const s = roundsOf(results, official)
      return row({
        suite: "list",
        figure: f.figure,
        unit: "ms/call",
        better: "lower",
        ours: best(o, f.get, "lower"),
        official: best(s, f.get, "lower"),
        officialName: official,
        note: "stdio, raw client; SDK servers return all 10,001 tools in one call (no pagination)",
        oursRounds: o.map(f.get),
        officialRounds: s.map(f.get)
      })
    })
  )
}

// -- read --------------------------------------------------------------------------------------

const readContender = (server: ServerName): Contender<number> => ({
  name: server,
  open: async () => {
    const client = await openClient(server, ["--blob-bytes", String(BLOB_BYTES)], `read-${server}`)
    const era = SERVERS[server].era
    const params = paramsJson(era, { uri: BLOB_URI })
    const read = async () => expectResult(await client.requestRaw("resources/read", params), "resources/read")
    const first = await withTimeout(read(), OPEN_TIMEOUT, `${server} resources/read`)
    const contents = Array.isArray(first.contents) ? first.contents[0] as { blob?: unknown } | undefined : undefined
    const expected = Buffer.from(makeBlob(BLOB_BYTES)).toString("base64")
    if (contents?.blob !== expected) throw new Error(`${server}: resources/read did not return the 1 MiB blob`)
    await read() // warm-up
    return {
      measure: async () => median(await sampleDurations(read, { maxMs: 1000, maxCount: 30 })),
      close: () => client.close()
    }
  }
})

export const runRead = async (): Promise<Array<Row>> => {
  const results = await interleave(
    "read",
    [readContender("ours"), readContender("sdk-v2"), readContender("sdk-v1")],
    ROUNDS,
    (ms) => `${ms.toFixed(2)} ms`
  )
  const o = roundsOf(results, "ours")
  return (["sdk-v2", "sdk-v1"] as const).map((official) => {
    const s = roundsOf(results, official)
    return row({
      suite: "read",
      figure: "resources/read of a 1 MiB blob",
      unit: "ms/call",
      better: "lower",
      ours: best(o, (x) => x, "lower"),
      official: best(s, (x) => x, "lower"),
      officialName: official,
      note: "stdio, raw client; both encode the bytes to base64 per call",
      oursRounds: o,
      officialRounds: s
    })
  })
}
