/**
 * Raw HTTP helpers for tests of a legacy request's POST SSE stream and its resumption with a GET
 * (MCP 2025-11-25, Transports, "Resumability and Redelivery"): a session opened with `fetch`, the
 * `stages` tool (progress 1..3, a gate, progress 4, a gate, progress 5, the answer), an SSE body
 * read one event at a time. Every wait is bounded (`WAIT_MS`).
 */
import { assert, expect } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as McpServer from "../../src/McpServer.js"
import * as Tool from "../../src/Tool.js"

export const WAIT_MS = 10_000
export const WAIT: Duration.DurationInput = Duration.millis(WAIT_MS)

export const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | Error, R> =>
  Effect.timeoutFail(effect, { duration: WAIT, onTimeout: () => new Error(`timed out after ${Duration.format(WAIT)}`) })

/** Rejects after WAIT_MS. */
const within = <A>(what: string, p: Promise<A>): Promise<A> => {
  let timer: ReturnType<typeof setTimeout> | undefined
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not within ${WAIT_MS} ms`)), WAIT_MS)
    })
  ]).finally(() => clearTimeout(timer))
}

export const run = <A>(what: string, thunk: () => Promise<A>) =>
  Effect.tryPromise({ try: () => within(what, thunk()), catch: (e) => new Error(`${what}: ${String(e)}`) })

export interface SseEvent {
  readonly id: string | undefined
  readonly data: string
}

/** The events of an SSE body, one at a time (comments and `retry`-only blocks skipped); `undefined` at its end. */
export const sseReader = (body: ReadableStream<Uint8Array>) => {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  let ended = false
  const parsed: Array<SseEvent> = []
  const next = async (): Promise<SseEvent | undefined> => {
    for (let reads = 0; parsed.length === 0 && !ended && reads < 10_000; reads++) {
      const { done, value } = await reader.read()
      if (done) {
        ended = true
        break
      }
      buffer += decoder.decode(value, { stream: true })
      let end = buffer.indexOf("\n\n")
      while (end >= 0) {
        const lines = buffer.slice(0, end).split("\n").filter((l) => !l.startsWith(":"))
        buffer = buffer.slice(end + 2)
        const id = lines.find((l) => l.startsWith("id:"))?.slice(3).trim()
        const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim())
        if (id !== undefined || data.length > 0) parsed.push({ id, data: data.join("\n") })
        end = buffer.indexOf("\n\n")
      }
    }
    return parsed.shift()
  }
  return {
    next: () => run("SSE event", next),
    /** Every event up to the end of the body. */
    rest: () =>
      run("SSE end", async () => {
        const out: Array<SseEvent> = []
        for (let i = 0; i < 1_000; i++) {
          const event = await next()
          if (event === undefined) return out
          out.push(event)
        }
        throw new Error("too many events")
      }),
    cancel: () => run("cancel", () => reader.cancel().catch(() => undefined))
  }
}

export type Reader = ReturnType<typeof sseReader>

const headers = (version: string, sessionId?: string): Record<string, string> => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": version,
  ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId })
})

/** A session at `version` (the client declaring `capabilities`, default none): initialize + initialized; its id. */
export const openSession = (url: string, version: string, capabilities: Record<string, unknown> = {}) =>
  run("session", async () => {
    const init = await fetch(url, {
      method: "POST",
      headers: headers(version),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: version, capabilities, clientInfo: { name: "post-resume", version: "0" } }
      })
    })
    await init.text()
    const session = init.headers.get("mcp-session-id")
    if (session === null) throw new Error(`no session (${init.status})`)
    const ack = await fetch(url, {
      method: "POST",
      headers: headers(version, session),
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })
    })
    await ack.text()
    return session
  })

/** POSTs a `stages` call; its SSE body. */
export const callStages = (url: string, version: string, session: string, id: number) =>
  callTool(url, version, session, id, "stages", {})

/** POSTs a call of the tool `name` (with a progress token) answered with an SSE body; that body. */
export const callTool = (
  url: string,
  version: string,
  session: string,
  id: number,
  name: string,
  args: Record<string, unknown>
) =>
  run("POST", async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: headers(version, session),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name, arguments: args, _meta: { progressToken: "t" } }
      })
    })
    if (response.status !== 200 || response.body === null) throw new Error(`POST ${response.status}`)
    expect(response.headers.get("content-type")).toContain("text/event-stream")
    return sseReader(response.body)
  })

/** A GET with `Last-Event-ID`; its SSE body. */
export const resume = (url: string, version: string, session: string, lastEventId: string) =>
  run("GET", async () => {
    const response = await fetch(url, {
      method: "GET",
      headers: {
        accept: "text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": version,
        "last-event-id": lastEventId
      }
    })
    if (response.status !== 200 || response.body === null) throw new Error(`GET ${response.status}`)
    return sseReader(response.body)
  })

/** What an event carries: `progress n`, `result <text>`, or `priming`. */
export const describeEvent = (event: SseEvent): string => {
  if (event.data === "") return "priming"
  const message: unknown = JSON.parse(event.data)
  assert(typeof message === "object" && message !== null)
  if ("method" in message) {
    expect(message.method).toBe("notifications/progress")
    assert("params" in message && typeof message.params === "object" && message.params !== null)
    assert("progress" in message.params)
    return `progress ${String(message.params.progress)}`
  }
  assert("result" in message && typeof message.result === "object" && message.result !== null)
  assert("content" in message.result && Array.isArray(message.result.content))
  const first: unknown = message.result.content[0]
  assert(typeof first === "object" && first !== null && "text" in first)
  return `result ${String(first.text)}`
}

/** Reads `n` events. */
export const read = (reader: Reader, n: number) =>
  Effect.gen(function*() {
    const out: Array<SseEvent> = []
    for (let i = 0; i < n; i++) {
      const event = yield* reader.next()
      assert(event !== undefined, `the stream ended after ${i} of ${n} events`)
      out.push(event)
    }
    return out
  })

const ID = /^([0-9a-f]{32})\.(\d+)$/

/** The stream key and number of a POST stream event id. */
export const parts = (id: string | undefined): { readonly key: string; readonly n: number } => {
  const match = ID.exec(id ?? "")
  assert(match !== null && match[1] !== undefined && match[2] !== undefined, `not a POST stream id: ${id}`)
  return { key: match[1], n: Number(match[2]) }
}

/** The server, with the `stages` tool and its two gates (`gates`: shared by several servers). */
export const makeServer = (options: { readonly gates?: Queue.Queue<void> | undefined } = {}) =>
  Effect.gen(function*() {
    const gates = options.gates ?? (yield* Queue.unbounded<void>())
    const stages = Tool.fromJsonSchema({
      name: "stages",
      description: "Progress 1..3, a gate, progress 4, a gate, progress 5, then the answer.",
      handler: (_args, ctx) =>
        Effect.gen(function*() {
          for (const n of [1, 2, 3]) yield* McpServer.progress(ctx, n)
          yield* Queue.take(gates)
          yield* McpServer.progress(ctx, 4)
          yield* Queue.take(gates)
          yield* McpServer.progress(ctx, 5)
          return "staged"
        })
    })
    const server = yield* McpServer.make({ name: "post-resume", version: "1.0.0", tools: [stages] })
    return { server, open: Queue.offer(gates, undefined) }
  })
