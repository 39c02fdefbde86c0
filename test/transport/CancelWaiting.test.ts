/**
 * Cancellation and client responses are handled while a connection is at its in-flight bound
 * (issue 34, point 2), over real transports: a spawned stdio server and a legacy HTTP session.
 * The bound (`maxInFlight: 3`) is filled with a `roots` call (which asks the client `roots/list`)
 * and two slow calls; two more calls wait in the queue (`maxQueued`). Then the client cancels one
 * waiting call and answers `roots/list`:
 * - the cancelled call never starts (its tool records every start) and gets no reply (HTTP: its
 *   POST ends with `204`, no body);
 * - the `roots/list` answer is handled at once: the `roots` call replies while the slow calls
 *   still run;
 * - the other waiting call starts once a slot frees and replies.
 * Every wait is bounded.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as ChildProcess from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as Input from "../../src/Input.js"
import * as McpServer from "../../src/McpServer.js"
import * as Tool from "../../src/Tool.js"
import * as StreamableHttp from "../../src/transport/StreamableHttp.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const SERVER = Path.join(ROOT, "test", "fixtures", "stdio-seam-server.ts")
const WAIT_MS = 20_000
const SLOW_MS = 1_500

type Json = { readonly [key: string]: unknown }

const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Resolves once `check` holds (polled every 10 ms), or rejects after `ms`. */
const until = async (what: string, check: () => boolean, ms = WAIT_MS): Promise<void> => {
  const started = Date.now()
  while (!check()) {
    if (Date.now() - started > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await sleep(10)
  }
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: "init",
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: { roots: {} }, clientInfo: { name: "queue", version: "1" } }
}
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" }
const call = (id: string, name: string, args: Json) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args }
})
const cancelled = (requestId: string) => ({
  jsonrpc: "2.0",
  method: "notifications/cancelled",
  params: { requestId, reason: "the user gave up" }
})
const ROOTS = { roots: [{ uri: "file:///workspace", name: "workspace" }] }

const textOf = (message: unknown): unknown => {
  const result = isObject(message) ? message.result : undefined
  const content = isObject(result) && Array.isArray(result.content) ? result.content[0] : undefined
  return isObject(content) ? content.text : undefined
}

describe("cancellation behind the in-flight bound (issue 34, point 2)", () => {
  it(
    "stdio (spawned server): a cancelled waiting request never starts and gets no reply; a client response is handled at the bound",
    async () => {
      const child = ChildProcess.spawn(
        process.execPath,
        ["--import", "tsx", SERVER, "--max-in-flight", "3", "--max-queued", "8"],
        { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] }
      )
      const messages: Array<Json> = []
      const order: Array<string> = []
      let pending = ""
      let stderr = ""
      child.stdout.setEncoding("utf8")
      child.stdout.on("data", (chunk: string) => {
        pending += chunk
        for (let i = pending.indexOf("\n"); i !== -1; i = pending.indexOf("\n")) {
          const parsed: unknown = JSON.parse(pending.slice(0, i))
          pending = pending.slice(i + 1)
          if (!isObject(parsed)) continue
          messages.push(parsed)
          if (typeof parsed.id === "string" && !("method" in parsed)) order.push(parsed.id)
        }
      })
      child.stderr.setEncoding("utf8")
      child.stderr.on("data", (chunk: string) => {
        stderr += chunk
      })
      child.stdin.on("error", () => {})
      const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
      const send = (message: unknown) => child.stdin.write(JSON.stringify(message) + "\n")
      const reply = (id: string) => messages.find((m) => m.id === id && !("method" in m))
      try {
        await until("the fixture to start", () => stderr.includes("ready pid="))
        send(INITIALIZE)
        await until("the initialize reply", () => reply("init") !== undefined)
        send(INITIALIZED)
        send(call("r", "roots", {}))
        await until("the roots/list request", () => messages.some((m) => m.method === "roots/list"))
        send(call("s1", "slow", { tag: "s1", ms: SLOW_MS }))
        send(call("s2", "slow", { tag: "s2", ms: SLOW_MS }))
        await until("s1 and s2 to start", () => stderr.includes("slow-start s1") && stderr.includes("slow-start s2"))
        // the bound is full: these two wait in the queue
        send(call("w1", "slow", { tag: "w1", ms: 10 }))
        send(call("w2", "slow", { tag: "w2", ms: 10 }))
        send(cancelled("w1"))
        const rootsRequest = messages.find((m) => m.method === "roots/list")
        send({ jsonrpc: "2.0", id: rootsRequest?.id, result: ROOTS })
        await until("the roots reply", () => reply("r") !== undefined)
        expect(textOf(reply("r"))).toBe("file:///workspace")
        // answered at the bound: the slow calls still run
        expect(reply("s1")).toBeUndefined()
        expect(reply("s2")).toBeUndefined()
        await until("every other reply", () => ["s1", "s2", "w2"].every((id) => reply(id) !== undefined))
        expect(textOf(reply("w2"))).toBe("w2")
        expect(order.indexOf("r")).toBeLessThan(order.indexOf("s1"))
        await sleep(200)
        expect(stderr).toContain("slow-start w2")
        expect(stderr).not.toContain("slow-start w1")
        expect(messages.filter((m) => m.id === "w1")).toEqual([])
      } finally {
        child.stdin.end()
        const gone = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)])
        if (!gone) child.kill("SIGKILL")
      }
    },
    60_000
  )

  it(
    "a legacy HTTP session: a cancelled waiting POST ends with 204 and never starts; a POSTed response is handled at the bound",
    async () => {
      const starts: Array<string> = []
      const slow = Tool.make({
        name: "slow",
        parameters: Schema.Struct({ tag: Schema.String, ms: Schema.Number }),
        handler: ({ ms, tag }) => Effect.zipRight(Effect.sync(() => starts.push(tag)), Effect.as(Effect.sleep(ms), tag))
      })
      const roots = Tool.make({
        name: "roots",
        parameters: Schema.Struct({}),
        handler: () => Effect.map(Input.roots(), (r) => r.roots[0]?.uri ?? "none")
      })
      const scope = Effect.runSync(Scope.make())
      try {
        const { url } = await Effect.runPromise(
          Effect.flatMap(
            McpServer.make({ name: "queue", version: "1.0.0", tools: [slow, roots] }),
            (server) => StreamableHttp.serve(server, { port: 0, maxInFlight: 3, maxQueued: 8 })
          ).pipe(Scope.extend(scope))
        )
        const base = { "content-type": "application/json", accept: "application/json, text/event-stream" }
        const init = await fetch(url, { method: "POST", headers: base, body: JSON.stringify(INITIALIZE) })
        expect(init.status).toBe(200)
        const sessionId = init.headers.get("mcp-session-id") ?? ""
        expect(sessionId).not.toBe("")
        await init.text()
        const headers = { ...base, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" }
        const postJson = (body: unknown) =>
          fetch(url, { method: "POST", headers, body: JSON.stringify(body), signal: AbortSignal.timeout(WAIT_MS) })
        expect((await postJson(INITIALIZED)).status).toBe(202)

        // `r`'s response is an SSE stream: the roots/list request, later the reply
        const rootsPost = await postJson(call("r", "roots", {}))
        expect(rootsPost.headers.get("content-type")).toContain("text/event-stream")
        const reader = rootsPost.body?.getReader()
        if (reader === undefined) throw new Error("no body")
        const decoder = new TextDecoder()
        let sse = ""
        const readUntil = async (what: string, check: () => boolean) => {
          const started = Date.now()
          while (!check()) {
            if (Date.now() - started > WAIT_MS) throw new Error(`timed out waiting for ${what}`)
            const chunk = await reader.read()
            if (chunk.done) throw new Error(`the stream ended before ${what}`)
            sse += decoder.decode(chunk.value, { stream: true })
          }
        }
        await readUntil("the roots/list request", () => sse.includes("roots/list"))
        const events = () =>
          // the priming event (an id, empty data) carries no message
          sse.split("\n").filter((l) => l.startsWith("data: ") && l.length > 6).map((l): unknown =>
            JSON.parse(l.slice(6))
          )
        const rootsRequest = events().find((m) => isObject(m) && m.method === "roots/list")
        if (!isObject(rootsRequest)) throw new Error("no roots/list request")

        const settled = new Set<string>()
        const track = (id: string, response: Promise<Response>) =>
          response.then(async (r) => {
            const body = await r.text()
            settled.add(id)
            return { status: r.status, body }
          })
        const s1 = track("s1", postJson(call("s1", "slow", { tag: "s1", ms: SLOW_MS })))
        const s2 = track("s2", postJson(call("s2", "slow", { tag: "s2", ms: SLOW_MS })))
        await until("s1 and s2 to start", () => starts.includes("s1") && starts.includes("s2"))
        const w1 = track("w1", postJson(call("w1", "slow", { tag: "w1", ms: 10 })))
        const w2 = track("w2", postJson(call("w2", "slow", { tag: "w2", ms: 10 })))
        await sleep(100)
        expect(starts).toEqual(["s1", "s2"])
        expect((await postJson(cancelled("w1"))).status).toBe(202)
        const w1Answer = await w1
        expect(w1Answer).toEqual({ status: 204, body: "" })
        const answer = await postJson({ jsonrpc: "2.0", id: rootsRequest.id, result: ROOTS })
        expect(answer.status).toBe(202)
        await readUntil("the roots reply", () => events().some((m) => isObject(m) && m.id === "r"))
        expect(textOf(events().find((m) => isObject(m) && m.id === "r"))).toBe("file:///workspace")
        // answered at the bound: the slow calls still run
        expect(settled.has("s1") || settled.has("s2")).toBe(false)
        for (const [id, pendingAnswer] of [["s1", s1], ["s2", s2], ["w2", w2]] as const) {
          const done = await pendingAnswer
          expect(done.status).toBe(200)
          expect(textOf(JSON.parse(done.body))).toBe(id)
        }
        expect(starts).toEqual(["s1", "s2", "w2"])
      } finally {
        await Effect.runPromise(Scope.close(scope, Exit.void))
      }
    },
    60_000
  )
})
