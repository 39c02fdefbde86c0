/**
 * A flood of stateless (2026-07-28) HTTP requests against a slow tool (issue 33, point 1): the
 * endpoint's bound on requests without a session (`maxStatelessInFlight`, `maxStatelessQueued`)
 * holds, as `StreamableHttp.ServerOptions` documents it.
 *
 * 3,000 `tools/call` POSTs are sent within a second over 127.0.0.1 (one socket each) to a server with
 * `maxStatelessInFlight: 50` and `maxStatelessQueued: 100`, whose tool records how many of its
 * handlers run at once and waits on a gate the test opens:
 * - while the gate is shut, exactly 50 handlers start; 100 requests wait; every other one gets
 *   `503`, `Retry-After: 1` and a JSON-RPC -32603 error with its own id, without starting;
 * - once the gate opens, the 150 admitted requests all answer `200` (the waiting ones too);
 * - no more than 50 handlers ever ran at once (the work, and the memory it holds, is bounded).
 * Every wait is bounded.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Http from "node:http"
import * as McpServer from "../../src/McpServer.js"
import * as Tool from "../../src/Tool.js"
import * as StreamableHttp from "../../src/transport/StreamableHttp.js"

const TOTAL = 3_000
const IN_FLIGHT = 50
const QUEUED = 100
const WAIT_MS = 120_000
/** Attempts of one request whose connection the OS reset before the server read it (a full listen backlog). */
const ATTEMPTS = 10
const WAVE = 100

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const until = async (what: string, check: () => boolean): Promise<void> => {
  const started = Date.now()
  while (!check()) {
    if (Date.now() - started > WAIT_MS) throw new Error(`timed out after ${WAIT_MS} ms waiting for ${what}`)
    await sleep(20)
  }
}

interface Answer {
  readonly id: number
  readonly status: number
  readonly retryAfter: string | undefined
  readonly body: string
}

describe("a flood of stateless HTTP requests (maxStatelessInFlight / maxStatelessQueued)", () => {
  it("3,000 concurrent calls to a slow tool: 50 run, 100 wait, the rest get 503 with Retry-After", async () => {
    let running = 0
    let maxRunning = 0
    let starts = 0
    const gate = Effect.runSync(Deferred.make<void>())
    const slow = Tool.make({
      name: "slow",
      parameters: Schema.Struct({ n: Schema.Number }),
      handler: ({ n }) =>
        Effect.sync(() => {
          starts++
          running++
          maxRunning = Math.max(maxRunning, running)
        }).pipe(
          Effect.zipRight(Deferred.await(gate)),
          Effect.ensuring(Effect.sync(() => running--)),
          Effect.as(`done ${n}`)
        )
    })
    const scope = Effect.runSync(Scope.make())
    const agent = new Http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY })
    try {
      const { url } = await Effect.runPromise(
        Effect.flatMap(
          McpServer.make({ name: "flood", version: "1.0.0", tools: [slow] }),
          (server) =>
            StreamableHttp.serve(server, { port: 0, maxStatelessInFlight: IN_FLIGHT, maxStatelessQueued: QUEUED })
        ).pipe(Scope.extend(scope))
      )
      const answers: Array<Answer> = []
      const failures: Array<unknown> = []
      // A connection reset before any response (the kernel's accept queue overflowed on a loaded
      // machine: the server never read the request) is sent again; the server holds every request
      // it read until it answers, so a retried request was never admitted (the counts below stay exact).
      const send = (id: number, attempt = 1): Promise<void> =>
        new Promise((resolve) => {
          const body = JSON.stringify({
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params: {
              name: "slow",
              arguments: { n: id },
              _meta: {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
              }
            }
          })
          const request = Http.request(url, {
            method: "POST",
            agent,
            headers: {
              "content-type": "application/json",
              accept: "application/json",
              "mcp-protocol-version": "2026-07-28",
              "mcp-method": "tools/call",
              "mcp-name": "slow",
              "content-length": Buffer.byteLength(body)
            }
          }, (response) => {
            let text = ""
            response.setEncoding("utf8")
            response.on("data", (chunk: string) => {
              text += chunk
            })
            response.on("end", () => {
              const retryAfter = response.headers["retry-after"]
              answers.push({ id, status: response.statusCode ?? 0, retryAfter, body: text })
              resolve()
            })
          })
          request.setTimeout(WAIT_MS * 2, () => request.destroy(new Error("timed out")))
          request.on("error", (error) => {
            if (attempt < ATTEMPTS && "code" in error && error.code === "ECONNRESET") {
              resolve(sleep(50).then(() => send(id, attempt + 1)))
            } else {
              failures.push(error)
              resolve()
            }
          })
          request.end(body)
        })
      // All 3,000 are sent within a second, in waves of 100 (every 20 ms): a single burst of
      // 3,000 connects overflows the listen backlog (511), which is the OS's limit, not ours.
      const sent: Array<Promise<void>> = []
      for (let wave = 0; wave * WAVE < TOTAL; wave++) {
        for (let i = wave * WAVE; i < Math.min(TOTAL, (wave + 1) * WAVE); i++) sent.push(send(i + 1))
        await sleep(20)
      }
      const all = Promise.all(sent)

      // the gate is shut: the bound holds, the queue fills, the rest is refused without starting
      await until(
        `${IN_FLIGHT} starts and ${TOTAL - IN_FLIGHT - QUEUED} refusals`,
        () => failures.length > 0 || (starts === IN_FLIGHT && answers.length === TOTAL - IN_FLIGHT - QUEUED)
      )
      expect(failures).toEqual([])
      await sleep(200)
      expect(starts).toBe(IN_FLIGHT)
      expect(answers.length).toBe(TOTAL - IN_FLIGHT - QUEUED)
      for (const answer of answers) {
        expect(answer.status).toBe(503)
        expect(answer.retryAfter).toBe("1")
        const parsed: unknown = JSON.parse(answer.body)
        expect(parsed).toEqual({
          jsonrpc: "2.0",
          id: answer.id,
          error: { code: -32603, message: "Server busy: too many requests in flight; retry later" }
        })
      }

      // the gate opens: the running and the waiting requests all answer
      Effect.runSync(Deferred.succeed(gate, undefined))
      await Promise.race([all, sleep(WAIT_MS).then(() => Promise.reject(new Error("the admitted requests hang")))])
      expect(failures).toEqual([])
      expect(answers.length).toBe(TOTAL)
      const admitted = answers.filter((a) => a.status === 200)
      expect(admitted.length).toBe(IN_FLIGHT + QUEUED)
      for (const answer of admitted) {
        const parsed: unknown = JSON.parse(answer.body)
        expect(parsed).toEqual({
          jsonrpc: "2.0",
          id: answer.id,
          result: expect.objectContaining({ content: [{ type: "text", text: `done ${answer.id}` }] })
        })
      }
      expect(starts).toBe(IN_FLIGHT + QUEUED)
      expect(maxRunning).toBe(IN_FLIGHT)
      expect(running).toBe(0)
    } finally {
      agent.destroy()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 400_000)
})
