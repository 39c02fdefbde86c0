/**
 * Asking the client for input (issue #7), end to end: ONE set of handler values
 * (`test/fixtures/confirm-tools.ts`: a tool that asks for a confirmation with `Input.elicit`)
 * served in process, over stdio (spawned `test/fixtures/client-input-server.ts`) and over
 * Streamable HTTP (`StreamableHttp.serve` on 127.0.0.1 port 0), in both eras.
 *
 * 1. Our `McpClient` (`onElicit`) on every transport × era: modern MRTR (`input_required` rounds,
 *    the signed `requestState` echoed) and legacy server requests (`elicitation/create` on the
 *    session); a client without elicitation gets -32021.
 * 2. A tampered, misplaced or foreign `requestState` is refused with -32602 on every transport.
 * 3. The official SDK v2 client (`@modelcontextprotocol/client` 2.4) pinned to 2026-07-28: its
 *    `elicitation/create` handler answers our `input_required` (HTTP and stdio); without the
 *    capability it gets our -32021.
 * 4. The official SDK v1 client (`@modelcontextprotocol/sdk` 1.32, 2025-11-25): its
 *    `ElicitRequestSchema` handler answers our legacy `elicitation/create` (stdio and HTTP).
 *
 * Every response is cross-checked against the official schema of its revision, and every legacy
 * `elicitation/create` the server sent against the schema's `ElicitRequest`. Every wait is bounded.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Http,
  type Transport as V2Transport
} from "@modelcontextprotocol/client"
import { StdioClientTransport as V2Stdio } from "@modelcontextprotocol/client/stdio"
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport as V1Stdio } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport as V1Http } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport as V1Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Content, InProcess, type Input, JsonRpc, McpClient, McpServer, type Transport } from "presa-mcp"
import * as Stdio from "../../src/transport/Stdio.js"
import * as StreamableHttp from "../../src/transport/StreamableHttp.js"
import { CONFIRM_SCHEMA, confirmTools } from "../fixtures/confirm-tools.js"
import {
  bounded,
  checkExchanges,
  LEGACY,
  messagesOf,
  MODERN,
  promise,
  recordingFetch,
  rejection
} from "../fixtures/interop-http.js"
import { assertServerRequestSpecValid, assertSpecValid } from "../support/SpecSchema.js"
import { checkedTransport, get, isObject, KEY, modernMeta } from "../support/Wire.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const FIXTURE = Path.join(ROOT, "test", "fixtures", "client-input-server.ts")
const NODE_ARGS = ["--import", "tsx", FIXTURE]

type JsonObject = JsonRpc.JsonObject

const makeServer = McpServer.make({ name: "input-interop", version: "1.0.0", tools: [...confirmTools] })

const YES: Input.ElicitResult = { action: "accept", content: { confirm: true } }
const DECLINE: Input.ElicitResult = { action: "decline" }

/** The params our server sends for `Delete <path>?` (both eras, and inside `inputRequests`). */
const asked = (message: string): JsonObject => ({ message, requestedSchema: CONFIRM_SCHEMA })

const toWire = (u: unknown): unknown => JSON.parse(JSON.stringify(u))
/** A spawned server may take seconds to start under load: give the era probe time (it falls back to legacy on silence). */
const PROBE = "8 seconds"
const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

/** An official client's elicitation answer (its own mutable result type), from ours. */
const sdkAnswer = (
  r: Input.ElicitResult
): { action: "accept" | "decline" | "cancel"; content?: { confirm: boolean } } =>
  r.action === "accept" ? { action: "accept", content: { confirm: r.content?.confirm === true } } : { action: r.action }

// ---------------------------------------------------------------------------------------------
// our transports, recorded
// ---------------------------------------------------------------------------------------------

type Kind = "in process" | "stdio" | "HTTP"
const KINDS: ReadonlyArray<Kind> = ["in process", "stdio", "HTTP"]

/** A client transport to a server serving {@link confirmTools} (a fresh server / process each time). */
const transportTo = (kind: Kind): Effect.Effect<Transport.ClientTransport, unknown, Scope.Scope> =>
  Effect.gen(function*() {
    switch (kind) {
      case "in process":
        return yield* InProcess.client(yield* makeServer)
      case "stdio":
        return yield* Stdio.spawn({ command: process.execPath, args: NODE_ARGS, cwd: ROOT, stderr: () => Effect.void })
      case "HTTP": {
        const { url } = yield* StreamableHttp.serve(yield* makeServer, { port: 0 })
        return yield* StreamableHttp.client({ url })
      }
    }
  })

interface Recorded {
  readonly transport: Transport.ClientTransport
  /** Every request the client sent, with its response (wire form). */
  readonly exchanges: Ref.Ref<ReadonlyArray<{ readonly request: JsonRpc.Request; readonly response: unknown }>>
  /** Every server→client request the transport delivered (wire form). */
  readonly serverRequests: Ref.Ref<ReadonlyArray<unknown>>
}

/** Records exchanges and server requests; every response is checked against the official schema. */
const recorded = (inner: Transport.ClientTransport): Effect.Effect<Recorded> =>
  Effect.gen(function*() {
    const { transport: checked } = yield* checkedTransport(inner)
    const exchanges = yield* Ref.make<ReadonlyArray<{ readonly request: JsonRpc.Request; readonly response: unknown }>>(
      []
    )
    const serverRequests = yield* Ref.make<ReadonlyArray<unknown>>([])
    const watch = (handler: Transport.RequestHandler): Transport.RequestHandler => (request) =>
      Effect.zipRight(Ref.update(serverRequests, (xs) => [...xs, toWire(request)]), handler(request))
    const setRequestHandler = inner.setRequestHandler
    const transport: Transport.ClientTransport = {
      ...checked,
      request: (message, options) =>
        checked.request(
          message,
          options?.onRequest === undefined ? options : { ...options, onRequest: watch(options.onRequest) }
        ).pipe(Effect.tap((response) =>
          Ref.update(exchanges, (xs) => [...xs, { request: message, response: toWire(response) }])
        )),
      setRequestHandler: setRequestHandler === undefined
        ? undefined
        : (handler) =>
          setRequestHandler(handler === undefined ? undefined : watch(handler))
    }
    return { transport, exchanges, serverRequests }
  })

const toolCalls = (r: Recorded) =>
  Effect.map(Ref.get(r.exchanges), (xs) => xs.filter((x) => x.request.method === "tools/call"))

// ---------------------------------------------------------------------------------------------
// 1. our McpClient: the same handlers on every transport, in both eras
// ---------------------------------------------------------------------------------------------

describe("the same confirmation handlers through our McpClient", () => {
  for (const kind of KINDS) {
    for (const era of ["modern", "legacy"] as const) {
      it.scopedLive(`${kind}, ${era}: accepted → deleted, declined → kept, two questions in a row`, () =>
        Effect.gen(function*() {
          const rec = yield* recorded(yield* transportTo(kind))
          const answer = yield* Ref.make<Input.ElicitResult>(YES)
          const seen = yield* Ref.make<ReadonlyArray<JsonObject>>([])
          const client = yield* bounded(McpClient.connect(rec.transport, {
            ...(era === "legacy" ? { versions: [LEGACY] } : { probeTimeout: PROBE }),
            onElicit: (params) => Effect.zipRight(Ref.update(seen, (xs) => [...xs, params]), Ref.get(answer))
          }))
          assert.strictEqual(client.info.era, era)

          // one question, accepted
          const deleted = yield* bounded(client.callTool("delete_file", { path: "report.txt" }))
          assert.strictEqual(Content.textOf(deleted), "deleted report.txt")
          expect(yield* Ref.get(seen)).toEqual([asked("Delete report.txt?")])
          const first = yield* toolCalls(rec)
          if (era === "modern") {
            // input_required, then the retry with the answer (and no server request at all)
            expect(first.map((x) => get(x.response, "result", "resultType"))).toEqual(["input_required", "complete"])
            const requests = get(first[0]?.response, "result", "inputRequests")
            expect(Object.values(isObject(requests) ? requests : {})).toEqual([
              { method: "elicitation/create", params: asked("Delete report.txt?") }
            ])
            expect(Object.values(get(first[1]?.request.params, "inputResponses") as JsonObject)).toEqual([YES])
            expect(yield* Ref.get(rec.serverRequests)).toEqual([])
          } else {
            // one tools/call; the question went to the client as a request on the session
            expect(first.length).toBe(1)
            const [request, ...more] = yield* Ref.get(rec.serverRequests)
            expect(more).toEqual([])
            expect(get(request, "method")).toBe("elicitation/create")
            expect(get(request, "params")).toEqual(asked("Delete report.txt?"))
            assertServerRequestSpecValid(LEGACY, request)
          }

          // declined
          yield* Ref.set(answer, DECLINE)
          const kept = yield* bounded(client.callTool("delete_file", { path: "report.txt" }))
          assert.strictEqual(Content.textOf(kept), "kept report.txt (decline)")

          // two questions: in the modern era the last retry echoes the signed requestState
          yield* Ref.set(answer, YES)
          yield* Ref.set(seen, [])
          const before = (yield* toolCalls(rec)).length
          const twice = yield* bounded(client.callTool("delete_file_twice", { path: "notes.txt" }))
          assert.strictEqual(Content.textOf(twice), "deleted notes.txt")
          expect(yield* Ref.get(seen)).toEqual([asked("Delete notes.txt?"), asked("Really delete notes.txt?")])
          const rounds = (yield* toolCalls(rec)).slice(before)
          if (era === "modern") {
            expect(rounds.length).toBe(3)
            const state = get(rounds[1]?.response, "result", "requestState")
            assert(typeof state === "string" && state.length > 0, "the second round carries a requestState")
            expect(get(rounds[2]?.request.params, "requestState")).toBe(state)
          } else {
            expect(rounds.length).toBe(1)
            const requests = (yield* Ref.get(rec.serverRequests)).slice(-2)
            expect(requests.map((r) => get(r, "params", "message"))).toEqual([
              "Delete notes.txt?",
              "Really delete notes.txt?"
            ])
            for (const r of requests) assertServerRequestSpecValid(LEGACY, r)
          }
        }))

      it.scopedLive(`${kind}, ${era}: a client without elicitation gets -32021 naming the capability`, () =>
        Effect.gen(function*() {
          const rec = yield* recorded(yield* transportTo(kind))
          const client = yield* bounded(
            McpClient.connect(rec.transport, era === "legacy" ? { versions: [LEGACY] } : { probeTimeout: PROBE })
          )
          assert.strictEqual(client.info.era, era)
          const e = yield* bounded(Effect.flip(client.callTool("delete_file", { path: "report.txt" })))
          expect(e).toMatchObject({ _tag: "McpError", code: -32021 })
          expect(e._tag === "McpError" ? get(e.data, "requiredCapabilities") : undefined).toEqual({ elicitation: {} })
          expect(yield* Ref.get(rec.serverRequests)).toEqual([])
        }))
    }
  }
})

// ---------------------------------------------------------------------------------------------
// 2. requestState: tampered, misplaced or foreign → -32602
// ---------------------------------------------------------------------------------------------

const ELICIT_META = modernMeta({ [KEY.clientCapabilities]: { elicitation: {} } })

/** base64url of a JSON value (what our requestState payload is). */
const b64urlJson = (u: unknown): string => Buffer.from(JSON.stringify(u)).toString("base64url")

describe("a modern requestState that is not the server's own is refused (-32602)", () => {
  for (const kind of KINDS) {
    it.scopedLive(`${kind}: forged answers, bad MAC, other arguments, other tool, another server, not a string`, () =>
      Effect.gen(function*() {
        const rec = yield* recorded(yield* transportTo(kind))
        const ids = yield* Ref.make(1)
        const call = (name: string, args: JsonObject, extra: JsonObject = {}) =>
          Effect.gen(function*() {
            const id = yield* Ref.getAndUpdate(ids, (n) => n + 1)
            const params = { name, arguments: args, ...extra, _meta: ELICIT_META }
            const response = toWire(yield* bounded(rec.transport.request(JsonRpc.request(id, "tools/call", params))))
            assertSpecValid(MODERN, "tools/call", response)
            return response
          })
        const keyOf = (response: unknown): string => {
          const requests = get(response, "result", "inputRequests")
          const [key] = Object.keys(isObject(requests) ? requests : {})
          assert(key !== undefined, `no inputRequests in ${JSON.stringify(response)}`)
          return key
        }
        const args = { path: "a.txt" }
        const r1 = yield* call("delete_file_twice", args)
        const k1 = keyOf(r1)
        const r2 = yield* call("delete_file_twice", args, { inputResponses: { [k1]: YES } })
        const k2 = keyOf(r2)
        const state = get(r2, "result", "requestState")
        assert(typeof state === "string", `round 2 carries a requestState: ${JSON.stringify(r2)}`)
        const [payload, mac] = state.split(".")
        assert(payload !== undefined && mac !== undefined)
        const answers = { inputResponses: { [k2]: YES } }

        // the untouched state completes the call (so the refusals below are about the state alone)
        const ok = yield* call("delete_file_twice", args, { ...answers, requestState: state })
        expect(get(ok, "result", "content", 0, "text")).toBe("deleted a.txt")

        // the first answer forged inside the payload (decline → the handler must not see it), MAC kept
        const decoded: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
        assert(isObject(decoded) && isObject(decoded.r))
        const forged = `${b64urlJson({ ...decoded, r: { [k1]: DECLINE } })}.${mac}`
        const flipped = `${payload}.${mac.startsWith("A") ? "B" : "A"}${mac.slice(1)}`
        // the last character of a 32-byte MAC also holds two padding bits a decoder ignores: the same
        // bytes in a non-canonical spelling are refused too
        const lastIndex = B64URL.indexOf(mac.slice(-1))
        const respelled = `${payload}.${mac.slice(0, -1)}${B64URL[lastIndex ^ 1]}`
        const foreign = yield* Effect.scoped(Effect.gen(function*() {
          const other = yield* recorded(yield* InProcess.client(yield* makeServer))
          const a = toWire(
            yield* other.transport.request(
              JsonRpc.request(1, "tools/call", { name: "delete_file_twice", arguments: args, _meta: ELICIT_META })
            )
          )
          const b = toWire(
            yield* other.transport.request(
              JsonRpc.request(2, "tools/call", {
                name: "delete_file_twice",
                arguments: args,
                inputResponses: { [keyOf(a)]: YES },
                _meta: ELICIT_META
              })
            )
          )
          return get(b, "result", "requestState")
        }))
        assert(typeof foreign === "string" && foreign !== state)

        const refusals: ReadonlyArray<readonly [string, Effect.Effect<unknown, unknown>]> = [
          ["forged payload", call("delete_file_twice", args, { ...answers, requestState: forged })],
          ["flipped MAC", call("delete_file_twice", args, { ...answers, requestState: flipped })],
          ["non-canonical MAC", call("delete_file_twice", args, { ...answers, requestState: respelled })],
          ["other arguments", call("delete_file_twice", { path: "b.txt" }, { ...answers, requestState: state })],
          ["other tool", call("delete_file", args, { ...answers, requestState: state })],
          ["another server's state", call("delete_file_twice", args, { ...answers, requestState: foreign })],
          ["not a string", call("delete_file_twice", args, { ...answers, requestState: 42 })],
          ["truncated", call("delete_file_twice", args, { ...answers, requestState: payload })]
        ]
        for (const [what, refused] of refusals) {
          const response = yield* refused
          expect(get(response, "error"), what).toEqual({ code: -32602, message: "Invalid requestState" })
        }
      }))
  }
})

// ---------------------------------------------------------------------------------------------
// SDK transports recorded (stdio): every message both ways
// ---------------------------------------------------------------------------------------------

interface Wire {
  readonly sent: Array<unknown>
  readonly received: Array<unknown>
}

/** Wraps an SDK v2 transport: records what the client sends and receives. */
const recordV2 = (inner: V2Transport, wire: Wire): V2Transport => {
  const outer: V2Transport = {
    start: () => inner.start(),
    send: (message, options) => {
      wire.sent.push(toWire(message))
      return inner.send(message, options)
    },
    close: () => inner.close(),
    setProtocolVersion: (version) => inner.setProtocolVersion?.(version)
  }
  inner.onmessage = (message, extra) => {
    wire.received.push(toWire(message))
    outer.onmessage?.(message, extra)
  }
  inner.onclose = () => outer.onclose?.()
  inner.onerror = (error) => outer.onerror?.(error)
  return outer
}

/** Wraps an SDK v1 transport: records what the client sends and receives. */
const recordV1 = (inner: V1Transport, wire: Wire): V1Transport => {
  const outer: V1Transport = {
    start: () => inner.start(),
    send: (message, options) => {
      wire.sent.push(toWire(message))
      return inner.send(message, options)
    },
    close: () => inner.close(),
    setProtocolVersion: (version) => inner.setProtocolVersion?.(version)
  }
  inner.onmessage = (message, extra) => {
    wire.received.push(toWire(message))
    outer.onmessage?.(message, extra)
  }
  inner.onclose = () => outer.onclose?.()
  inner.onerror = (error) => outer.onerror?.(error)
  return outer
}

/**
 * Checks a recorded stdio conversation against revision `rev`: every response the client
 * received (matched to its request's method by id), and every server request.
 * Yields the `tools/call` exchanges in order.
 */
const checkWire = (wire: Wire, rev: typeof MODERN | typeof LEGACY) => {
  const methods = new Map<unknown, string>()
  for (const m of wire.sent) {
    const method = get(m, "method")
    if (typeof method === "string" && get(m, "id") !== undefined) methods.set(get(m, "id"), method)
  }
  const calls: Array<{ readonly request: unknown; readonly response: unknown }> = []
  for (const m of wire.received) {
    if (typeof get(m, "method") === "string") {
      if (get(m, "id") !== undefined) assertServerRequestSpecValid(rev, m)
      continue
    }
    const method = methods.get(get(m, "id"))
    assert(method !== undefined, `a response to no request: ${JSON.stringify(m)}`)
    assertSpecValid(rev, method, m)
    if (method === "tools/call") {
      calls.push({ request: wire.sent.find((s) => get(s, "id") === get(m, "id")), response: m })
    }
  }
  return calls
}

const textOf = (result: unknown): unknown => get(result, "content", 0, "text")

const CLIENT_INFO = { name: "interop-input", version: "0.0.0" }

/** The scenario both official clients go through: accept, decline, two questions. */
const confirmScenario = (
  callTool: (params: { name: string; arguments: Record<string, unknown> }) => Promise<unknown>,
  answer: { current: Input.ElicitResult },
  seen: Array<unknown>
) =>
  Effect.gen(function*() {
    const deleted = yield* promise("delete_file", () =>
      callTool({ name: "delete_file", arguments: { path: "report.txt" } }))
    expect(textOf(deleted)).toBe("deleted report.txt")
    expect(seen).toEqual([asked("Delete report.txt?")])
    answer.current = DECLINE
    const kept = yield* promise("delete_file", () =>
      callTool({ name: "delete_file", arguments: { path: "report.txt" } }))
    expect(textOf(kept)).toBe("kept report.txt (decline)")
    answer.current = YES
    const twice = yield* promise(
      "delete_file_twice",
      () => callTool({ name: "delete_file_twice", arguments: { path: "notes.txt" } })
    )
    expect(textOf(twice)).toBe("deleted notes.txt")
    expect(seen.slice(2)).toEqual([asked("Delete notes.txt?"), asked("Really delete notes.txt?")])
  })

/** The tools/call rounds of the scenario in the modern era: 2 + 2 + 3, the last echoing the state. */
const expectModernRounds = (calls: ReadonlyArray<{ readonly request: unknown; readonly response: unknown }>) => {
  expect(calls.map((c) => get(c.response, "result", "resultType"))).toEqual([
    "input_required",
    "complete",
    "input_required",
    "complete",
    "input_required",
    "input_required",
    "complete"
  ])
  expect(Object.values(get(calls[1]?.request, "params", "inputResponses") as JsonObject)).toEqual([YES])
  const state = get(calls[5]?.response, "result", "requestState")
  assert(typeof state === "string" && state.length > 0)
  expect(get(calls[6]?.request, "params", "requestState")).toBe(state)
}

// ---------------------------------------------------------------------------------------------
// 3. the official SDK v2 client answers our input_required
// ---------------------------------------------------------------------------------------------

/** An SDK v2 client pinned to 2026-07-28; with `answer`, it declares elicitation and registers its handler. */
const v2Client = (answer?: { current: Input.ElicitResult }, seen?: Array<unknown>): V2Client => {
  const client = new V2Client(CLIENT_INFO, {
    versionNegotiation: { mode: { pin: MODERN } },
    ...(answer === undefined ? {} : { capabilities: { elicitation: {} } })
  })
  if (answer !== undefined) {
    client.setRequestHandler("elicitation/create", (request) => {
      seen?.push(toWire(request.params))
      return Promise.resolve(sdkAnswer(answer.current))
    })
  }
  return client
}

const connectedV2 = (client: V2Client, transport: V2Transport) =>
  Effect.acquireRelease(
    Effect.as(promise("v2 connect", () => client.connect(transport)), client),
    (c) => promise("v2 close", () => c.close()).pipe(Effect.ignore)
  )

const v2Stdio = () => new V2Stdio({ command: process.execPath, args: NODE_ARGS, cwd: ROOT, stderr: "ignore" })

const serveHttp = Effect.flatMap(makeServer, (server) => StreamableHttp.serve(server, { port: 0 }))

describe("official SDK v2 client (2026-07-28) answers our input_required", () => {
  it.scopedLive("Streamable HTTP: its elicitation/create handler is called; results reflect its answers", () =>
    Effect.gen(function*() {
      const { url } = yield* serveHttp
      const recorder = recordingFetch()
      const answer = { current: YES }
      const seen: Array<unknown> = []
      const client = yield* connectedV2(v2Client(answer, seen), new V2Http(new URL(url), { fetch: recorder.fetch }))
      expect(client.getProtocolEra()).toBe("modern")
      yield* confirmScenario((p) => client.callTool(p), answer, seen)
      const checked = yield* checkExchanges(recorder.exchanges, MODERN)
      expect(checked.requests).toEqual(["server/discover", ...Array<string>(7).fill("tools/call")])
      const calls = yield* promise("bodies", async () => {
        const out: Array<{ request: unknown; response: unknown }> = []
        for (const x of recorder.exchanges) {
          if (get(x.requestBody, "method") !== "tools/call") continue
          out.push({ request: x.requestBody, response: (await messagesOf(x)).at(-1) })
        }
        return out
      })
      expectModernRounds(calls)
    }))

  it.scopedLive("stdio: its elicitation/create handler is called; results reflect its answers", () =>
    Effect.gen(function*() {
      const wire: Wire = { sent: [], received: [] }
      const answer = { current: YES }
      const seen: Array<unknown> = []
      const client = yield* connectedV2(v2Client(answer, seen), recordV2(v2Stdio(), wire))
      expect(client.getProtocolEra()).toBe("modern")
      yield* confirmScenario((p) => client.callTool(p), answer, seen)
      expectModernRounds(checkWire(wire, MODERN))
    }))

  for (const kind of ["HTTP", "stdio"] as const) {
    it.scopedLive(`${kind}: without the elicitation capability it gets our -32021`, () =>
      Effect.gen(function*() {
        const transport = kind === "stdio" ? v2Stdio() : new V2Http(new URL((yield* serveHttp).url))
        const client = yield* connectedV2(v2Client(), transport)
        const e = yield* rejection(
          "delete_file",
          () => client.callTool({ name: "delete_file", arguments: { path: "report.txt" } })
        )
        expect(get(e, "code")).toBe(-32021)
        expect(get(e, "data", "requiredCapabilities")).toEqual({ elicitation: {} })
      }))
  }
})

// ---------------------------------------------------------------------------------------------
// 4. the official SDK v1 client answers our legacy elicitation/create
// ---------------------------------------------------------------------------------------------

const v1Client = (answer: { current: Input.ElicitResult }, seen: Array<unknown>): V1Client => {
  const client = new V1Client(CLIENT_INFO, { capabilities: { elicitation: {} } })
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    seen.push(toWire(request.params))
    return Promise.resolve(sdkAnswer(answer.current))
  })
  return client
}

const connectedV1 = (client: V1Client, transport: V1Transport) =>
  Effect.acquireRelease(
    Effect.as(promise("v1 connect", () => client.connect(transport)), client),
    (c) => promise("v1 close", () => c.close()).pipe(Effect.ignore)
  )

describe("official SDK v1 client (2025-11-25) answers our legacy elicitation/create", () => {
  it.scopedLive("stdio: the request goes on the pipe; its handler's answers decide the results", () =>
    Effect.gen(function*() {
      const wire: Wire = { sent: [], received: [] }
      const answer = { current: YES }
      const seen: Array<unknown> = []
      const client = yield* connectedV1(
        v1Client(answer, seen),
        recordV1(new V1Stdio({ command: process.execPath, args: NODE_ARGS, cwd: ROOT, stderr: "ignore" }), wire)
      )
      yield* confirmScenario((p) => client.callTool(p), answer, seen)
      expect(checkWire(wire, LEGACY).length).toBe(3) // one tools/call per call: the questions were requests
      const requests = wire.received.filter((m) => get(m, "method") === "elicitation/create")
      expect(requests.map((m) => get(m, "params", "message"))).toEqual([
        "Delete report.txt?",
        "Delete report.txt?",
        "Delete notes.txt?",
        "Really delete notes.txt?"
      ])
      // each answered once, by id
      const answered = wire.sent.filter((m) => get(m, "method") === undefined).map((m) => get(m, "id"))
      expect(answered).toEqual(requests.map((m) => get(m, "id")))
    }))

  it.scopedLive("Streamable HTTP: the request goes on the call's SSE stream; its handler's answers decide the results", () =>
    Effect.gen(function*() {
      const { url } = yield* serveHttp
      const recorder = recordingFetch()
      const answer = { current: YES }
      const seen: Array<unknown> = []
      const client = yield* connectedV1(v1Client(answer, seen), new V1Http(new URL(url), { fetch: recorder.fetch }))
      yield* confirmScenario((p) => client.callTool(p), answer, seen)
      const checked = yield* checkExchanges(recorder.exchanges, LEGACY)
      expect(checked.requests.filter((m) => m === "tools/call").length).toBe(3)
      const requests = yield* promise("bodies", async () => {
        const out: Array<unknown> = []
        for (const x of recorder.exchanges) {
          if (x.method !== "POST") continue // the standalone GET stream stays open
          for (const m of await messagesOf(x)) if (get(m, "method") === "elicitation/create") out.push(m)
        }
        return out
      })
      expect(requests.length).toBe(4)
      for (const r of requests) assertServerRequestSpecValid(LEGACY, r)
    }))
})
