/**
 * Legacy server→client requests over Streamable HTTP (protocol.md §24.3, §24.4): a tool that
 * asks with `Input.elicit` / `Input.sample` in a legacy session gets its question written as an
 * SSE event on the POST response of the `tools/call` in flight, with a server-generated string
 * id; the client POSTs the JSON-RPC response (with the session id) → 202, and the handler goes on.
 *
 * - raw `node:http` against `StreamableHttp.serve`: the wire in detail (ids, 202, error answers,
 *   timeout with `notifications/cancelled`, no SSE in `Accept`, missing capability, cancellation);
 * - the session store's `sendRequest` / `resolve` directly: interruption and timeout clean up;
 * - the official SDK v1 `Client` answering our `elicitation/create` and `sampling/createMessage`.
 *
 * Every wait is bounded (`WAIT`).
 */
import { assert, describe, expect, it, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as NodeHttp from "node:http"
import * as Input from "../../src/Input.js"
import * as ClientRequests from "../../src/internal/server/clientRequests.js"
import * as JsonRpc from "../../src/JsonRpc.js"
import * as McpServer from "../../src/McpServer.js"
import * as Tool from "../../src/Tool.js"
import * as StreamableHttp from "../../src/transport/StreamableHttp.js"
import { raw, type RawResponse } from "../fixtures/http-raw.js"
import { get } from "../support/Wire.js"

const WAIT: Duration.DurationInput = "10 seconds"
const LEGACY = "2025-11-25"

const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | Error, R> =>
  Effect.timeoutFail(effect, { duration: WAIT, onTimeout: () => new Error(`timed out after ${Duration.format(WAIT)}`) })

type JsonObject = JsonRpc.JsonObject

// ---------------------------------------------------------------------------------------------
// the server under test
// ---------------------------------------------------------------------------------------------

const SCHEMA: JsonObject = {
  type: "object",
  properties: { username: { type: "string", description: "User's response" } },
  required: ["username"]
}

/** What the tools report: started, interrupted. */
type ProbeEvent = "ask:start" | "ask:interrupted"

const makeServer = (events: Queue.Queue<ProbeEvent>) =>
  McpServer.make({
    name: "http-requests-test",
    version: "1.0.0",
    tools: [
      Tool.fromJsonSchema({
        name: "ask",
        description: "Elicits a username and echoes the answer.",
        handler: () =>
          Effect.gen(function*() {
            yield* Queue.offer(events, "ask:start")
            const answer = yield* Input.elicit("Who are you?", SCHEMA)
            return `User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`
          }).pipe(Effect.onInterrupt(() => Queue.offer(events, "ask:interrupted")))
      }),
      Tool.fromJsonSchema({
        name: "ask_twice",
        description: "Elicits twice in a row.",
        handler: () =>
          Effect.gen(function*() {
            const first = yield* Input.elicit("First?", SCHEMA)
            const second = yield* Input.elicit("Second?", SCHEMA)
            return `${JSON.stringify(first.content)} ${JSON.stringify(second.content)}`
          })
      }),
      Tool.fromJsonSchema({
        name: "sample",
        description: "Asks the client's model.",
        handler: () =>
          Effect.map(
            Input.sample([{ role: "user", content: { type: "text", text: "Capital of France?" } }], { maxTokens: 50 }),
            (r) => `LLM response: ${JSON.stringify(r.content)} (${r.model})`
          )
      })
    ]
  })

class Env extends Context.Tag("test/HttpServerRequests/Env")<Env, {
  readonly url: string
  readonly events: Queue.Queue<ProbeEvent>
}>() {}

const EnvLive = Layer.scoped(
  Env,
  Effect.gen(function*() {
    const events = yield* Queue.unbounded<ProbeEvent>()
    const server = yield* makeServer(events)
    const address = yield* StreamableHttp.serve(server, { port: 0, clientRequestTimeout: "1500 millis" })
    return { url: address.url, events }
  })
)

// ---------------------------------------------------------------------------------------------
// wire helpers
// ---------------------------------------------------------------------------------------------

const BASE = { "content-type": "application/json", accept: "application/json, text/event-stream" } as const

const sessionHeaders = (sessionId: string, extra: Record<string, string> = {}): Record<string, string> => ({
  ...BASE,
  "mcp-session-id": sessionId,
  "mcp-protocol-version": LEGACY,
  ...extra
})

const rpc = (id: JsonRpc.RequestId, method: string, params?: JsonObject): JsonObject =>
  params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params }

const post = (url: string, body: unknown, headers: Record<string, string>) =>
  bounded(raw(url, { method: "POST", headers, body: JSON.stringify(body) }))

const header = (r: { readonly headers: NodeHttp.IncomingHttpHeaders }, name: string): string | undefined => {
  const v = r.headers[name.toLowerCase()]
  return Array.isArray(v) ? v[0] : v
}

const parse = (text: string): unknown => {
  const value: unknown = JSON.parse(text)
  return value
}

/** The `data` of every complete SSE event in `body`, parsed (priming / empty events skipped). */
const sseMessages = (body: string): ReadonlyArray<unknown> =>
  body.split(/\n\n/).slice(0, -1).flatMap((block) => {
    const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n")
    return data === "" ? [] : [parse(data)]
  })

/** `initialize` (with `capabilities`) + `notifications/initialized`; yields the session id. */
const openSession = (url: string, capabilities: JsonObject) =>
  Effect.gen(function*() {
    const init = yield* post(
      url,
      rpc(0, "initialize", {
        protocolVersion: LEGACY,
        capabilities,
        clientInfo: { name: "raw-test", version: "0.0.0" }
      }),
      BASE
    )
    expect(init.status).toBe(200)
    const id = header(init, "mcp-session-id")
    assert(id !== undefined, "initialize must return Mcp-Session-Id")
    const ack = yield* post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, sessionHeaders(id))
    expect(ack.status).toBe(202)
    return id
  })

/** A POST whose response body is read incrementally: `messages` waits for a predicate on the events so far. */
interface OpenStream {
  readonly status: number
  readonly headers: NodeHttp.IncomingHttpHeaders
  /** Waits until `until(events)` holds (or the body ends) and yields the events so far. */
  readonly messages: (until: (events: ReadonlyArray<unknown>) => boolean) => Effect.Effect<ReadonlyArray<unknown>>
  /** Waits for the end of the body and yields every event. */
  readonly all: Effect.Effect<ReadonlyArray<unknown>>
}

const openPost = (url: string, body: unknown, headers: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.async<{ readonly stream: OpenStream; readonly req: NodeHttp.ClientRequest }, Error>((resume) => {
      const u = new URL(url)
      const req = NodeHttp.request({
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: "POST",
        headers,
        agent: false
      })
      req.on("error", (e) => resume(Effect.fail(e)))
      req.on("response", (res) => {
        let text = ""
        let ended = false
        const waiters = new Set<() => void>()
        const wake = () => {
          for (const w of waiters) w()
        }
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => {
          text += chunk
          wake()
        })
        res.on("end", () => {
          ended = true
          wake()
        })
        res.on("close", () => {
          ended = true
          wake()
        })
        const messages = (until: (events: ReadonlyArray<unknown>) => boolean) =>
          Effect.async<ReadonlyArray<unknown>>((done) => {
            const check = () => {
              const events = sseMessages(text)
              if (until(events) || ended) {
                waiters.delete(check)
                done(Effect.succeed(events))
              }
            }
            waiters.add(check)
            check()
            return Effect.sync(() => waiters.delete(check))
          })
        resume(Effect.succeed({
          req,
          stream: {
            status: res.statusCode ?? 0,
            headers: res.headers,
            messages,
            all: messages(() => false)
          }
        }))
      })
      req.end(JSON.stringify(body))
    }),
    ({ req }) => Effect.sync(() => req.destroy())
  ).pipe(Effect.map(({ stream }) => stream))

const isRequest = (method: string) => (m: unknown): boolean => get(m, "method") === method && get(m, "id") !== undefined

const isResponseTo = (id: JsonRpc.RequestId) => (m: unknown): boolean =>
  get(m, "id") === id && get(m, "method") === undefined

/** Waits for the server→client request `method` on `stream` and yields it. */
const nextRequest = (stream: OpenStream, method: string, skip = 0) =>
  Effect.gen(function*() {
    const events = yield* bounded(stream.messages((ms) => ms.filter(isRequest(method)).length > skip))
    const found = events.filter(isRequest(method))[skip]
    assert(found !== undefined, `no ${method} request on the stream: ${JSON.stringify(events)}`)
    return found
  })

const finalResponse = (stream: OpenStream, id: JsonRpc.RequestId) =>
  Effect.gen(function*() {
    const events = yield* bounded(stream.messages((ms) => ms.some(isResponseTo(id))))
    const found = events.find(isResponseTo(id))
    assert(found !== undefined, `no response to ${String(id)} on the stream: ${JSON.stringify(events)}`)
    return { response: found, events }
  })

const ELICIT_CAPS: JsonObject = { elicitation: {} }

// ---------------------------------------------------------------------------------------------
// raw HTTP
// ---------------------------------------------------------------------------------------------

layer(EnvLive, { excludeTestServices: true, timeout: "30 seconds" })(
  "legacy server→client requests (raw HTTP)",
  (it) => {
    it.effect("elicitation/create goes on the tools/call SSE stream; the POSTed answer completes the call", () =>
      Effect.scoped(Effect.gen(function*() {
        const { url } = yield* Env
        const session = yield* openSession(url, ELICIT_CAPS)
        const call = yield* openPost(url, rpc(7, "tools/call", { name: "ask", arguments: {} }), sessionHeaders(session))
        expect(call.status).toBe(200)
        expect(header(call, "content-type")).toContain("text/event-stream")

        const request = yield* nextRequest(call, "elicitation/create")
        const id = get(request, "id")
        assert(typeof id === "string" && id.length > 0, "the server-generated id is a non-empty string")
        expect(get(request, "jsonrpc")).toBe("2.0")
        expect(get(request, "params", "message")).toBe("Who are you?")
        expect(get(request, "params", "requestedSchema")).toEqual(SCHEMA)

        const answer = yield* post(
          url,
          { jsonrpc: "2.0", id, result: { action: "accept", content: { username: "ada" } } },
          sessionHeaders(session)
        )
        expect(answer.status).toBe(202)
        expect(answer.body).toBe("")

        const { response } = yield* finalResponse(call, 7)
        expect(get(response, "result", "content", 0, "text")).toBe(
          `User response: action=accept, content={"username":"ada"}`
        )
      })))

    it.effect("ids are unique per session across requests; each answer reaches its own request", () =>
      Effect.scoped(Effect.gen(function*() {
        const { url } = yield* Env
        const session = yield* openSession(url, ELICIT_CAPS)
        const call = yield* openPost(
          url,
          rpc("twice", "tools/call", { name: "ask_twice", arguments: {} }),
          sessionHeaders(session)
        )
        const first = yield* nextRequest(call, "elicitation/create", 0)
        yield* post(url, {
          jsonrpc: "2.0",
          id: get(first, "id"),
          result: { action: "accept", content: { username: "a" } }
        }, sessionHeaders(session))
        const second = yield* nextRequest(call, "elicitation/create", 1)
        expect(get(second, "id")).not.toBe(get(first, "id"))
        expect(get(second, "params", "message")).toBe("Second?")
        yield* post(url, {
          jsonrpc: "2.0",
          id: get(second, "id"),
          result: { action: "accept", content: { username: "b" } }
        }, sessionHeaders(session))
        const { response } = yield* finalResponse(call, "twice")
        expect(get(response, "result", "content", 0, "text")).toBe(`{"username":"a"} {"username":"b"}`)
      })))

    it.effect("an error answer fails the Input call with the client's code, message and data", () =>
      Effect.scoped(Effect.gen(function*() {
        const { url } = yield* Env
        const session = yield* openSession(url, ELICIT_CAPS)
        const call = yield* openPost(url, rpc(8, "tools/call", { name: "ask", arguments: {} }), sessionHeaders(session))
        const request = yield* nextRequest(call, "elicitation/create")
        const answer = yield* post(
          url,
          {
            jsonrpc: "2.0",
            id: get(request, "id"),
            error: { code: -32001, message: "user went away", data: { x: 1 } }
          },
          sessionHeaders(session)
        )
        expect(answer.status).toBe(202)
        const { response } = yield* finalResponse(call, 8)
        expect(get(response, "error")).toEqual({ code: -32001, message: "user went away", data: { x: 1 } })
      })))

    it.effect("no answer within clientRequestTimeout → -32603 and notifications/cancelled for the request", () =>
      Effect.scoped(Effect.gen(function*() {
        const { url } = yield* Env
        const session = yield* openSession(url, ELICIT_CAPS)
        const call = yield* openPost(url, rpc(9, "tools/call", { name: "ask", arguments: {} }), sessionHeaders(session))
        const request = yield* nextRequest(call, "elicitation/create")
        const { events, response } = yield* finalResponse(call, 9)
        expect(get(response, "error", "code")).toBe(-32603)
        expect(String(get(response, "error", "message"))).toContain("elicitation/create")
        const cancelled = events.find((m) => get(m, "method") === "notifications/cancelled")
        expect(get(cancelled, "params", "requestId")).toBe(get(request, "id"))
        // a late answer is ignored (still 202)
        const late = yield* post(
          url,
          { jsonrpc: "2.0", id: get(request, "id"), result: { action: "accept", content: { username: "late" } } },
          sessionHeaders(session)
        )
        expect(late.status).toBe(202)
      })))

    it.effect("notifications/cancelled for the tools/call interrupts the wait; a late answer is ignored", () =>
      Effect.scoped(Effect.gen(function*() {
        const { events, url } = yield* Env
        yield* Queue.takeAll(events)
        const session = yield* openSession(url, ELICIT_CAPS)
        const call = yield* openPost(
          url,
          rpc(10, "tools/call", { name: "ask", arguments: {} }),
          sessionHeaders(session)
        )
        const request = yield* nextRequest(call, "elicitation/create")
        expect(yield* bounded(Queue.take(events))).toBe("ask:start")
        const cancel = yield* post(
          url,
          { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 10 } },
          sessionHeaders(session)
        )
        expect(cancel.status).toBe(202)
        expect(yield* bounded(Queue.take(events))).toBe("ask:interrupted")
        // the stream ends without a response
        const all = yield* bounded(call.all)
        expect(all.some(isResponseTo(10))).toBe(false)
        const late = yield* post(
          url,
          { jsonrpc: "2.0", id: get(request, "id"), result: { action: "accept", content: { username: "late" } } },
          sessionHeaders(session)
        )
        expect(late.status).toBe(202)
      })))

    it.effect("a response POST for an unknown session → 404; without a session → 202", () =>
      Effect.gen(function*() {
        const { url } = yield* Env
        const body = { jsonrpc: "2.0", id: "s2c-1", result: {} }
        const unknown = yield* post(url, body, sessionHeaders("no-such-session"))
        expect(unknown.status).toBe(404)
        const none = yield* post(url, body, BASE)
        expect(none.status).toBe(202)
      }))

    it.effect("a client that does not accept text/event-stream cannot be asked: -32603, no stream", () =>
      Effect.gen(function*() {
        const { url } = yield* Env
        const session = yield* openSession(url, ELICIT_CAPS)
        const r: RawResponse = yield* post(
          url,
          rpc(11, "tools/call", { name: "ask", arguments: {} }),
          sessionHeaders(session, { accept: "application/json" })
        )
        expect(r.status).toBe(200)
        expect(header(r, "content-type")).toContain("application/json")
        expect(get(parse(r.body), "error", "code")).toBe(-32603)
      }))

    it.effect("a session without the elicitation capability → -32021 with requiredCapabilities, nothing sent", () =>
      Effect.gen(function*() {
        const { url } = yield* Env
        const session = yield* openSession(url, {})
        const r = yield* post(url, rpc(12, "tools/call", { name: "ask", arguments: {} }), sessionHeaders(session))
        expect(header(r, "content-type")).toContain("application/json")
        expect(get(parse(r.body), "error", "code")).toBe(-32021)
        expect(get(parse(r.body), "error", "data", "requiredCapabilities")).toEqual({ elicitation: {} })
      }))
  }
)

// ---------------------------------------------------------------------------------------------
// the server→client request bookkeeping
// ---------------------------------------------------------------------------------------------

const withSession = <A, E>(
  f: (pending: ClientRequests.Pending) => Effect.Effect<A, E, Scope.Scope>
): Effect.Effect<A, E> => Effect.scoped(Effect.suspend(() => f(ClientRequests.makeUnsafe())))

describe("server→client request table (a legacy session's connection): send / resolve", () => {
  it.effect("interruption removes the pending entry; a late answer matches nothing", () =>
    withSession((pending) =>
      Effect.gen(function*() {
        const written = yield* Queue.unbounded<JsonRpc.Request | JsonRpc.Notification>()
        const send = ClientRequests.send(pending, (m) => Queue.offer(written, m), Duration.seconds(30))
        const fiber = yield* Effect.fork(send("roots/list", {}))
        const sent = yield* bounded(Queue.take(written))
        assert("id" in sent)
        expect(pending.table.size).toBe(1)
        yield* Fiber.interrupt(fiber)
        expect(pending.table.size).toBe(0)
        const matched = yield* ClientRequests.resolve(pending, JsonRpc.success(sent.id, { roots: [] }))
        expect(matched).toBe(false)
      })
    ))

  it.effect("a success answer resolves exactly its own request", () =>
    withSession((pending) =>
      Effect.gen(function*() {
        const written = yield* Queue.unbounded<JsonRpc.Request | JsonRpc.Notification>()
        const send = ClientRequests.send(pending, (m) => Queue.offer(written, m), Duration.seconds(30))
        const a = yield* Effect.fork(send("roots/list", {}))
        const b = yield* Effect.fork(send("roots/list", { n: 2 }))
        const first = yield* bounded(Queue.take(written))
        const second = yield* bounded(Queue.take(written))
        assert("id" in first && "id" in second)
        expect(first.id).not.toBe(second.id)
        const byParams = (m: JsonRpc.Request) => m.params?.n === 2 ? "b" : "a"
        const idB = byParams(first) === "b" ? first.id : second.id
        const idA = idB === first.id ? second.id : first.id
        expect(yield* ClientRequests.resolve(pending, JsonRpc.success(idB, { roots: [{ uri: "file:///b" }] }))).toBe(
          true
        )
        expect(yield* bounded(Fiber.join(b))).toEqual({ roots: [{ uri: "file:///b" }] })
        expect(yield* ClientRequests.resolve(pending, JsonRpc.success(idA, { roots: [] }))).toBe(true)
        expect(yield* bounded(Fiber.join(a))).toEqual({ roots: [] })
        expect(pending.table.size).toBe(0)
      })
    ))

  it.effect("timeout: -32603, notifications/cancelled written, entry removed", () =>
    withSession((pending) =>
      Effect.gen(function*() {
        const written = yield* Queue.unbounded<JsonRpc.Request | JsonRpc.Notification>()
        const send = ClientRequests.send(pending, (m) => Queue.offer(written, m), Duration.millis(50))
        const failure = yield* Effect.flip(send("sampling/createMessage", { maxTokens: 1, messages: [] }))
        expect(failure.code).toBe(-32603)
        expect(failure.message).toContain("sampling/createMessage")
        const all = yield* Queue.takeAll(written)
        const methods = Array.from(all, (m) => m.method)
        expect(methods).toEqual(["sampling/createMessage", "notifications/cancelled"])
        const [request, cancelled] = Array.from(all)
        assert(request !== undefined && "id" in request)
        expect(cancelled?.params?.requestId).toBe(request.id)
        expect(pending.table.size).toBe(0)
      })
    ))
})

// ---------------------------------------------------------------------------------------------
// the official SDK v1 client answers our legacy requests
// ---------------------------------------------------------------------------------------------

layer(EnvLive, { excludeTestServices: true, timeout: "30 seconds" })(
  "legacy server→client requests (SDK v1 client)",
  (it) => {
    const connect = (url: string) =>
      Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new Client(
            { name: "sdk-v1-test", version: "1.0.0" },
            { capabilities: { elicitation: {}, sampling: {} } }
          )
          client.setRequestHandler(ElicitRequestSchema, (request) =>
            Promise.resolve({
              action: "accept" as const,
              content: { username: `sdk answered: ${request.params.message}` }
            }))
          client.setRequestHandler(CreateMessageRequestSchema, () =>
            Promise.resolve({
              role: "assistant" as const,
              content: { type: "text" as const, text: "Paris" },
              model: "test-model",
              stopReason: "endTurn"
            }))
          await client.connect(new StreamableHTTPClientTransport(new URL(url)))
          return client
        }),
        (client) => Effect.promise(() => client.close())
      )

    it.effect("SDK v1 Client answers elicitation/create with its ElicitRequestSchema handler", () =>
      Effect.scoped(Effect.gen(function*() {
        const { url } = yield* Env
        const client = yield* connect(url)
        const result = yield* bounded(Effect.promise(() => client.callTool({ name: "ask", arguments: {} })))
        expect(result.content).toEqual([
          { type: "text", text: `User response: action=accept, content={"username":"sdk answered: Who are you?"}` }
        ])
      })))

    it.effect("SDK v1 Client answers sampling/createMessage", () =>
      Effect.scoped(Effect.gen(function*() {
        const { url } = yield* Env
        const client = yield* connect(url)
        const result = yield* bounded(Effect.promise(() => client.callTool({ name: "sample", arguments: {} })))
        expect(result.content).toEqual([
          { type: "text", text: `LLM response: {"type":"text","text":"Paris"} (test-model)` }
        ])
      })))
  }
)
