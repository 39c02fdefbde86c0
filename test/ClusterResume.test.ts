/**
 * Chaos: a legacy (2025-11-25) session's standalone GET stream cut and resumed on another instance
 * with `Last-Event-ID` (Redis.layerEventStore). Two processes of `examples/cluster.ts` over a real
 * `redis-server`, addressed directly (raw HTTP, so which instance serves what is explicit). The
 * session subscribes to numbered URIs; `touch` announces them one by one; the client reads part
 * of them on instance A, the stream is cut (the client closes it, or A is killed with SIGKILL while
 * the rest sit unread), more are announced while no stream is open (after a kill, once A's writer
 * liveness lapsed), and the client resumes on instance B with the last id it read: every
 * announcement arrives exactly once, in order, with consecutive ids, including those sent live on
 * B afterwards. Every wait is bounded.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Redis as IORedis } from "ioredis"
import * as Cluster from "./support/Cluster.js"

const WAIT_MS = 15_000
const LEGACY = "2025-11-25"
const step = (n: number) => `file:///step/${n}`

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

const run = <A>(what: string, thunk: () => Promise<A>) =>
  Effect.tryPromise({ try: () => within(what, thunk()), catch: (e) => new Error(`${what}: ${String(e)}`) })

interface SseEvent {
  readonly id: string | undefined
  readonly data: string
}

/** The events of an SSE response body, one at a time (comments skipped). */
const sseReader = (body: ReadableStream<Uint8Array>) => {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  const parsed: Array<SseEvent> = []
  const next = async (): Promise<SseEvent> => {
    for (let reads = 0; parsed.length === 0 && reads < 10_000; reads++) {
      const { done, value } = await reader.read()
      if (done) throw new Error("the stream ended")
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n")
      let end = buffer.indexOf("\n\n")
      while (end >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const lines = block.split("\n").filter((l) => !l.startsWith(":"))
        if (lines.length > 0) {
          const id = lines.find((l) => l.startsWith("id:"))?.slice(3).trim()
          const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n")
          parsed.push({ id, data })
        }
        end = buffer.indexOf("\n\n")
      }
    }
    const event = parsed.shift()
    if (event === undefined) throw new Error("no event")
    return event
  }
  return { next: () => within("SSE event", next()), cancel: () => reader.cancel().catch(() => undefined) }
}

const headers = (sessionId?: string): Record<string, string> => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": LEGACY,
  ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId })
})

const endpoint = (port: number) => `http://127.0.0.1:${port}/mcp`

/** A POST naming the session; the whole body read (a response, as JSON or SSE). */
const post = (port: number, sessionId: string | undefined, message: object) =>
  run("POST", async () => {
    const response = await fetch(endpoint(port), {
      method: "POST",
      headers: headers(sessionId),
      body: JSON.stringify(message)
    })
    const text = await response.text()
    if (response.status >= 300) throw new Error(`POST ${response.status}: ${text}`)
    return { session: response.headers.get("mcp-session-id") ?? undefined, text }
  })

/** Opens the session's GET stream on `port` (with `Last-Event-ID` when given). */
const openStream = (port: number, sessionId: string, lastEventId?: string) =>
  run("GET", async () => {
    const response = await fetch(endpoint(port), {
      method: "GET",
      headers: {
        accept: "text/event-stream",
        "mcp-session-id": sessionId,
        "mcp-protocol-version": LEGACY,
        ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId })
      }
    })
    if (response.status !== 200 || response.body === null) throw new Error(`GET ${response.status}`)
    return sseReader(response.body)
  })

interface Received {
  readonly id: number
  readonly uri: string
}

/** Reads `count` `resources/updated` events (the priming event, empty data, is skipped). */
const readUpdates = (stream: ReturnType<typeof sseReader>, count: number) =>
  run("updates", async () => {
    const out: Array<Received> = []
    for (let reads = 0; out.length < count && reads < 1_000; reads++) {
      const event = await stream.next()
      if (event.data === "") continue
      const message: unknown = JSON.parse(event.data)
      assert(typeof message === "object" && message !== null && "method" in message && "params" in message)
      expect(message.method).toBe("notifications/resources/updated")
      const params = message.params
      assert(typeof params === "object" && params !== null && "uri" in params && typeof params.uri === "string")
      out.push({ id: Number(event.id), uri: params.uri })
    }
    return out
  })

let nextId = 100
const touch = (port: number, sessionId: string, n: number) =>
  post(port, sessionId, {
    jsonrpc: "2.0",
    id: nextId++,
    method: "tools/call",
    params: { name: "touch", arguments: { uri: step(n) } }
  }).pipe(Effect.tap(({ text }) => expect(text).toContain(`touched ${step(n)}`)))

/**
 * Two instances, a session opened on A and subscribed to steps 1..total, its GET stream on A.
 * `cut` runs after the client read `read` updates of the first `recorded` (the rest recorded in
 * Redis, unread).
 */
const scenario = (cut: "close" | "kill") =>
  Effect.gen(function*() {
    const redis = yield* Cluster.redisServer()
    const prefix = `presa-test-${crypto.randomUUID()}`
    const [a, b] = yield* Effect.all(
      [0, 1].map(() => Cluster.instance({ redisUrl: redis.url, prefix, stateKeys: "k" })),
      { concurrency: "unbounded" }
    )
    assert(a !== undefined && b !== undefined)
    const init = yield* post(a.port, undefined, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "resume-test", version: "0" } }
    })
    const session = init.session
    assert(session !== undefined)
    yield* post(a.port, session, { jsonrpc: "2.0", method: "notifications/initialized" })
    const total = 17
    for (let n = 1; n <= total; n++) {
      yield* post(a.port, session, {
        jsonrpc: "2.0",
        id: nextId++,
        method: "resources/subscribe",
        params: { uri: step(n) }
      })
    }
    const onA = yield* openStream(a.port, session)
    // steps 1..4 through B (a replica of the session there too), read on A
    for (let n = 1; n <= 4; n++) yield* touch(b.port, session, n)
    const first = yield* readUpdates(onA, 4)
    // steps 5..10 announced while the client does not read: A records them (it serves the stream)
    if (cut === "close") yield* run("close", () => onA.cancel())
    for (let n = 5; n <= 10; n++) yield* touch(b.port, session, n)
    const counter = new IORedis(redis.url, { maxRetriesPerRequest: 1 })
    yield* Effect.addFinalizer(() => Effect.sync(() => counter.disconnect()))
    const key = `${prefix}:events:get:${session}:n`
    /** Waits (bounded) until the stream's counter reads `n`. */
    const recorded = (n: number) =>
      run("recorded", async () => {
        for (let i = 0; i < 300; i++) {
          const latest = Number(await counter.get(key))
          if (latest >= n) return latest
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        throw new Error(`not recorded up to ${n}`)
      })
    expect(yield* recorded(10)).toBe(10)
    if (cut === "kill") {
      yield* a.kill("SIGKILL")
      yield* run("drop", () => onA.cancel())
      // A's writer liveness lapses (five heartbeats): B, which holds the session, records from then
      yield* run("A's liveness lapses", async () => {
        for (let i = 0; i < 300; i++) {
          if ((await counter.exists(`${prefix}:events:alive:${a.instanceId}`)) === 0) return
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        throw new Error("A's liveness key did not expire")
      })
    }
    // steps 11, 12 announced while no stream is open: recorded for the client all the same
    for (let n = 11; n <= 12; n++) yield* touch(b.port, session, n)
    expect(yield* recorded(12)).toBe(12)
    const last = first[first.length - 1]
    assert(last !== undefined)
    const onB = yield* openStream(b.port, session, String(last.id))
    const replayed = yield* readUpdates(onB, 8)
    // live on B from now on (announced through A while it lives: B records, A no longer does)
    for (let n = 13; n <= total; n++) yield* touch(cut === "close" ? a.port : b.port, session, n)
    const live = yield* readUpdates(onB, total - 12)
    const all = [...first, ...replayed, ...live]
    expect(all.map((r) => r.uri)).toEqual(Array.from({ length: total }, (_, i) => step(i + 1)))
    expect(all.map((r) => r.id)).toEqual(Array.from({ length: total }, (_, i) => i + 1))
    // nothing more (no duplicate) follows: one more step arrives as the next event
    yield* touch(b.port, session, 1)
    expect(yield* readUpdates(onB, 1)).toEqual([{ id: total + 1, uri: step(1) }])
    yield* run("close B", () => onB.cancel())
  })

describe("GET stream resumed on another instance (Redis event store)", () => {
  it.scopedLive(
    "the client closes its stream on A and resumes on B: every event once, in order",
    () => scenario("close"),
    120_000
  )

  it.scopedLive(
    "A is killed (SIGKILL) with events unread; resumed on B: every event once, in order",
    () => scenario("kill"),
    120_000
  )
})
