/**
 * The client's answers to a server's questions, and per-call progress and log hooks.
 *
 * - Modern (2026-07-28) MRTR through InProcess: `input_required` rounds answered with the
 *   `onElicit` / `onSample` / `onRoots` handlers; retries carry a new id, the same params,
 *   `inputResponses` and the exact `requestState` (only when one was sent); round cap; missing
 *   capability (-32021 from the server); missing handler; failing handler; URL mode.
 * - Legacy server→client requests: InProcess (`sendRequest`), stdio (a scripted legacy peer:
 *   and our own stdio server) and Streamable HTTP (our server's legacy path).
 * - Progress (`onProgress`: token 0, a string token, unknown tokens and non-increasing values
 *   dropped) and logs (`onLog` + `logLevel`).
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Content, InProcess, Input, JsonRpc, McpClient, McpServer, Prompt, Resource, Tool, Transport } from "presa-mcp"
import * as Stdio from "../src/transport/Stdio.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import { get } from "./support/Wire.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const FIXTURE = Path.join(ROOT, "test", "fixtures", "client-input-server.ts")
const WAIT: Duration.DurationInput = "10 seconds"

/** A spawned server may take seconds to start under load: give the era probe time (it falls back to legacy on silence). */
const PROBE = "8 seconds"
const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | Error, R> =>
  Effect.timeoutFail(effect, { duration: WAIT, onTimeout: () => new Error(`timed out after ${Duration.format(WAIT)}`) })

type JsonObject = JsonRpc.JsonObject

// ---------------------------------------------------------------------------------------------
// fixtures
// ---------------------------------------------------------------------------------------------

const SCHEMA: JsonObject = { type: "object", properties: { name: { type: "string" } }, required: ["name"] }

const makeServer = (patch: Partial<McpServer.Options> = {}) =>
  McpServer.make({
    name: "input-test",
    version: "1.0.0",
    logging: true,
    tools: [
      Tool.fromJsonSchema({
        name: "greet",
        handler: () => Effect.map(Input.elicit("Who are you?", SCHEMA), (r) => `hello ${String(r.content?.name)}`)
      }),
      Tool.fromJsonSchema({
        name: "all",
        handler: () =>
          Effect.map(
            Input.all({
              who: Input.elicit("Who?", SCHEMA),
              model: Input.sample([{ role: "user", content: { type: "text", text: "2+2?" } }], { maxTokens: 5 }),
              roots: Input.roots()
            }),
            (r) =>
              JSON.stringify({
                who: r.who.content?.name,
                model: r.model.model,
                roots: r.roots.roots.map((x) => x.uri)
              })
          )
      }),
      Tool.fromJsonSchema({
        name: "twice",
        handler: () =>
          Effect.gen(function*() {
            const a = yield* Input.elicit("First?", SCHEMA)
            const b = yield* Input.elicit("Second?", SCHEMA)
            return `${String(a.content?.name)} then ${String(b.content?.name)}`
          })
      }),
      Tool.fromJsonSchema({
        name: "url",
        handler: () => Effect.map(Input.elicitUrl("Sign in", "https://example.com/auth"), (r) => `url ${r.action}`)
      }),
      Tool.fromJsonSchema({
        name: "work",
        handler: (_args, ctx) =>
          Effect.gen(function*() {
            yield* ctx.progress(0.25, { total: 1 })
            yield* ctx.progress(0.5)
            yield* ctx.progress(1, { total: 1, message: "done" })
            yield* ctx.log("debug", "dbg")
            yield* ctx.log("info", "inf")
            yield* ctx.log("error", { e: 1 }, "worker")
            return "worked"
          })
      })
    ],
    prompts: [
      Prompt.make({
        name: "who",
        handler: () => Effect.map(Input.elicit("Who?", SCHEMA), (r) => `prompted ${String(r.content?.name)}`)
      })
    ],
    resources: [
      Resource.make({
        uri: "mem://secret",
        name: "secret",
        handler: () => Effect.map(Input.elicit("Consent?", SCHEMA), (r) => `secret for ${String(r.content?.name)}`)
      })
    ],
    ...patch
  })

interface Exchange {
  readonly request: JsonRpc.Request
  readonly response: JsonRpc.Response | undefined
}

/** Wraps a transport and records every request with its response. */
const recording = (inner: Transport.ClientTransport) =>
  Effect.gen(function*() {
    const log = yield* Ref.make<ReadonlyArray<Exchange>>([])
    const transport: Transport.ClientTransport = {
      ...inner,
      request: (message, options) =>
        inner.request(message, options).pipe(
          Effect.tap((response) => Ref.update(log, (xs) => [...xs, { request: message, response }]))
        )
    }
    return { transport, log }
  })

const callsOf = (log: Ref.Ref<ReadonlyArray<Exchange>>, method = "tools/call") =>
  Effect.map(Ref.get(log), (xs) => xs.filter((x) => x.request.method === method))

const resultOf = (x: Exchange | undefined): JsonObject => {
  const r = x?.response
  if (r === undefined || JsonRpc.isErrorResponse(r)) throw new Error(`expected a result, got ${JSON.stringify(r)}`)
  return r.result
}

const accept = (name: string) => () => Effect.succeed<Input.ElicitResult>({ action: "accept", content: { name } })

const sampled = () =>
  Effect.succeed<Input.CreateMessageResult>({
    role: "assistant",
    content: { type: "text", text: "4" },
    model: "test-model"
  })

const roots = () => Effect.succeed<Input.ListRootsResult>({ roots: [{ uri: "file:///work", name: "work" }] })

const connectInProcess = (server: McpServer.McpServer, options: McpClient.Options = {}) =>
  Effect.gen(function*() {
    const { log, transport } = yield* recording(yield* InProcess.client(server))
    const client = yield* McpClient.connect(transport, options)
    return { client, log }
  })

// ---------------------------------------------------------------------------------------------
// modern MRTR
// ---------------------------------------------------------------------------------------------

describe("McpClient input (modern MRTR, in process)", () => {
  it.scoped("one elicitation round: retry with a new id, the same params, inputResponses, no requestState", () =>
    Effect.gen(function*() {
      const asked = yield* Ref.make<ReadonlyArray<JsonObject>>([])
      const { client, log } = yield* connectInProcess(yield* makeServer(), {
        onElicit: (params) => Effect.zipRight(Ref.update(asked, (xs) => [...xs, params]), accept("Ada")())
      })
      const r = yield* client.callTool("greet", {}, { _meta: { "com.example/trace": "t1" } })
      assert.strictEqual(Content.textOf(r), "hello Ada")
      expect((yield* Ref.get(asked)).map((p) => p.message)).toEqual(["Who are you?"])

      const [first, second, ...rest] = yield* callsOf(log)
      expect(rest).toEqual([])
      assert(first !== undefined && second !== undefined)
      const interim = resultOf(first)
      expect(interim.resultType).toBe("input_required")
      expect("requestState" in interim).toBe(false)
      const keys = Object.keys(interim.inputRequests as JsonObject)
      expect(keys.length).toBe(1)
      expect(get(interim, "inputRequests", keys[0] ?? "", "method")).toBe("elicitation/create")

      expect(second.request.id).not.toEqual(first.request.id)
      expect(get(second.request.params, "name")).toBe("greet")
      expect(get(second.request.params, "arguments")).toEqual({})
      expect(get(second.request.params, "_meta", "com.example/trace")).toBe("t1")
      expect(get(second.request.params, "inputResponses")).toEqual({
        [keys[0] ?? ""]: { action: "accept", content: { name: "Ada" } }
      })
      expect(second.request.params !== undefined && "requestState" in second.request.params).toBe(false)
      expect(first.request.params !== undefined && "inputResponses" in first.request.params).toBe(false)
      // the capability the handler implies is declared on every request
      expect(get(first.request.params, "_meta", "io.modelcontextprotocol/clientCapabilities")).toEqual({
        elicitation: {}
      })

      // nothing leaks into later requests
      yield* client.listTools()
      yield* client.callTool("work")
      const later = (yield* Ref.get(log)).slice(-2)
      for (const x of later) {
        expect(x.request.params !== undefined && "inputResponses" in x.request.params).toBe(false)
        expect(x.request.params !== undefined && "requestState" in x.request.params).toBe(false)
      }
    }))

  it.scoped("Input.all: elicitation, sampling and roots asked in one round, answered in one retry", () =>
    Effect.gen(function*() {
      const counts = yield* Ref.make({ elicit: 0, sample: 0, roots: 0 })
      const { client, log } = yield* connectInProcess(yield* makeServer(), {
        onElicit: () => Effect.zipRight(Ref.update(counts, (c) => ({ ...c, elicit: c.elicit + 1 })), accept("Bo")()),
        onSample: () => Effect.zipRight(Ref.update(counts, (c) => ({ ...c, sample: c.sample + 1 })), sampled()),
        onRoots: () => Effect.zipRight(Ref.update(counts, (c) => ({ ...c, roots: c.roots + 1 })), roots())
      })
      const r = yield* client.callTool("all")
      expect(JSON.parse(Content.textOf(r))).toEqual({ who: "Bo", model: "test-model", roots: ["file:///work"] })
      expect(yield* Ref.get(counts)).toEqual({ elicit: 1, sample: 1, roots: 1 })
      const calls = yield* callsOf(log)
      expect(calls.length).toBe(2)
      const requested = get(resultOf(calls[0]), "inputRequests")
      expect(Object.values(requested as JsonObject).map((q) => get(q, "method")).sort()).toEqual([
        "elicitation/create",
        "roots/list",
        "sampling/createMessage"
      ])
      expect(Object.keys(get(calls[1]?.request.params, "inputResponses") as JsonObject).sort()).toEqual(
        Object.keys(requested as JsonObject).sort()
      )
      expect(get(calls[0]?.request.params, "_meta", "io.modelcontextprotocol/clientCapabilities")).toEqual({
        elicitation: {},
        sampling: {},
        roots: {}
      })
    }))

  it.scoped("two rounds: the second retry echoes the exact requestState, each retry only its own answers", () =>
    Effect.gen(function*() {
      const names = ["Ann", "Bea"]
      const i = yield* Ref.make(0)
      const { client, log } = yield* connectInProcess(yield* makeServer(), {
        onElicit: () =>
          Effect.map(
            Ref.getAndUpdate(i, (n) => n + 1),
            (n): Input.ElicitResult => ({ action: "accept", content: { name: names[n] ?? "?" } })
          )
      })
      const r = yield* client.callTool("twice")
      assert.strictEqual(Content.textOf(r), "Ann then Bea")
      const calls = yield* callsOf(log)
      expect(calls.length).toBe(3)
      const ids = calls.map((c) => c.request.id)
      expect(new Set(ids).size).toBe(3)
      const secondInterim = resultOf(calls[1])
      expect(secondInterim.resultType).toBe("input_required")
      const state = secondInterim.requestState
      assert(typeof state === "string" && state.length > 0)
      expect(calls[1]?.request.params !== undefined && "requestState" in calls[1].request.params).toBe(false)
      expect(get(calls[2]?.request.params, "requestState")).toBe(state)
      const secondKeys = Object.keys(secondInterim.inputRequests as JsonObject)
      expect(Object.keys(get(calls[2]?.request.params, "inputResponses") as JsonObject)).toEqual(secondKeys)
    }))

  it.scoped("prompts/get and resources/read go through the same rounds", () =>
    Effect.gen(function*() {
      const { client } = yield* connectInProcess(yield* makeServer(), { onElicit: accept("Cy") })
      const prompt = yield* client.getPrompt("who")
      expect(get(prompt, "messages", 0, "content", "text")).toBe("prompted Cy")
      const read = yield* client.readResource("mem://secret")
      expect(get(read, "contents", 0, "text")).toBe("secret for Cy")
    }))

  it.scoped("more rounds than maxInputRounds → ClientError InputRounds", () =>
    Effect.gen(function*() {
      const server = yield* makeServer()
      const { client } = yield* connectInProcess(server, { onElicit: accept("x"), maxInputRounds: 1 })
      expect(yield* Effect.flip(client.callTool("twice"))).toMatchObject({ _tag: "ClientError", reason: "InputRounds" })
      assert.strictEqual(Content.textOf(yield* client.callTool("greet")), "hello x")
      const none = yield* connectInProcess(server, { onElicit: accept("x"), maxInputRounds: 0 })
      expect(yield* Effect.flip(none.client.callTool("greet"))).toMatchObject({
        _tag: "ClientError",
        reason: "InputRounds"
      })
    }))

  it.scoped("without onElicit the client declares no elicitation: the server answers -32021 (McpError)", () =>
    Effect.gen(function*() {
      const { client } = yield* connectInProcess(yield* makeServer())
      const e = yield* Effect.flip(client.callTool("greet"))
      expect(e).toMatchObject({ _tag: "McpError", code: -32021 })
      expect(e._tag === "McpError" ? get(e.data, "requiredCapabilities") : undefined).toEqual({ elicitation: {} })
    }))

  it.scoped("a declared capability without a handler → ClientError Input; a failing handler → ClientError Input", () =>
    Effect.gen(function*() {
      const server = yield* makeServer()
      const declared = yield* connectInProcess(server, {
        onElicit: accept("x"),
        onRoots: roots,
        capabilities: { sampling: {} }
      })
      const e = yield* Effect.flip(declared.client.callTool("all"))
      expect(e).toMatchObject({ _tag: "ClientError", reason: "Input" })
      expect(e.message).toContain("sampling/createMessage")

      const refusal = new JsonRpc.McpError({ code: 4001, message: "the user closed the dialog" })
      const failing = yield* connectInProcess(server, { onElicit: () => Effect.fail(refusal) })
      const f = yield* Effect.flip(failing.client.callTool("greet"))
      expect(f).toMatchObject({ _tag: "ClientError", reason: "Input" })
      expect(f._tag === "ClientError" ? f.cause : undefined).toBe(refusal)

      // an answer that does not match ElicitResult (as an untyped handler could produce)
      const notAnElicitResult: Input.ElicitResult = JSON.parse("{\"action\":\"maybe\"}")
      const invalid = yield* connectInProcess(server, { onElicit: () => Effect.succeed(notAnElicitResult) })
      expect(yield* Effect.flip(invalid.client.callTool("greet"))).toMatchObject({
        _tag: "ClientError",
        reason: "Input"
      })
    }))

  it.scoped("URL-mode elicitation needs elicitUrl: declared as {form, url}", () =>
    Effect.gen(function*() {
      const server = yield* makeServer()
      const withUrl = yield* connectInProcess(server, {
        elicitUrl: true,
        onElicit: (params) =>
          Effect.succeed<Input.ElicitResult>({ action: params.mode === "url" ? "accept" : "decline" })
      })
      assert.strictEqual(Content.textOf(yield* withUrl.client.callTool("url")), "url accept")
      const [first] = yield* callsOf(withUrl.log)
      expect(get(first?.request.params, "_meta", "io.modelcontextprotocol/clientCapabilities")).toEqual({
        elicitation: { form: {}, url: {} }
      })
      const formOnly = yield* connectInProcess(server, { onElicit: accept("x") })
      expect(yield* Effect.flip(formOnly.client.callTool("url"))).toMatchObject({ _tag: "McpError", code: -32021 })
    }))
})

// ---------------------------------------------------------------------------------------------
// legacy server→client requests
// ---------------------------------------------------------------------------------------------

describe("McpClient input (legacy server→client requests)", () => {
  it.scoped("in process: the session's requests are answered by the handlers; one tools/call on the wire", () =>
    Effect.gen(function*() {
      const { client, log } = yield* connectInProcess(yield* makeServer(), {
        versions: ["2025-11-25"],
        onElicit: accept("Lee"),
        onSample: sampled,
        onRoots: roots
      })
      assert.strictEqual(client.info.era, "legacy")
      const init = (yield* Ref.get(log)).find((x) => x.request.method === "initialize")
      expect(get(init?.request.params, "capabilities")).toEqual({ elicitation: {}, sampling: {}, roots: {} })
      const r = yield* client.callTool("all")
      expect(JSON.parse(Content.textOf(r))).toEqual({ who: "Lee", model: "test-model", roots: ["file:///work"] })
      assert.strictEqual(Content.textOf(yield* client.callTool("twice")), "Lee then Lee")
      expect((yield* callsOf(log)).length).toBe(2)
    }))

  it.scoped("in process: no handler → -32021 from the server; a handler's McpError reaches the server", () =>
    Effect.gen(function*() {
      const server = yield* makeServer()
      const bare = yield* connectInProcess(server, { versions: ["2025-11-25"] })
      expect(yield* Effect.flip(bare.client.callTool("greet"))).toMatchObject({ _tag: "McpError", code: -32021 })
      const failing = yield* connectInProcess(server, {
        versions: ["2025-11-25"],
        onElicit: () => Effect.fail(new JsonRpc.McpError({ code: 4001, message: "closed" }))
      })
      expect(yield* Effect.flip(failing.client.callTool("greet"))).toMatchObject({ _tag: "McpError", code: 4001 })
    }))

  const spawnScripted = (options: McpClient.Options) =>
    Effect.gen(function*() {
      const transport = yield* Stdio.spawn({
        command: process.execPath,
        args: ["--import", "tsx", FIXTURE, "--scripted"],
        cwd: ROOT,
        stderr: () => Effect.void
      })
      return yield* McpClient.connect(transport, { probeTimeout: PROBE, ...options })
    })

  it.scopedLive("stdio (scripted legacy peer): ping, elicitation, sampling, roots answered; unknown → -32601", () =>
    Effect.gen(function*() {
      const client = yield* bounded(spawnScripted({ onElicit: accept("Stdio"), onSample: sampled, onRoots: roots }))
      assert.strictEqual(client.info.era, "legacy")
      const r = yield* bounded(client.callTool("ask"))
      const answers: unknown = JSON.parse(Content.textOf(r))
      expect(get(answers, "q-ping", "result")).toEqual({})
      expect(get(answers, "q-elicit", "result")).toEqual({ action: "accept", content: { name: "Stdio" } })
      expect(get(answers, "7", "id")).toBe(7)
      expect(get(answers, "7", "result", "model")).toBe("test-model")
      expect(get(answers, "q-roots", "result")).toEqual({ roots: [{ uri: "file:///work", name: "work" }] })
      expect(get(answers, "q-weird", "error", "code")).toBe(-32601)
    }))

  it.scopedLive("stdio: the server's notifications/cancelled for its request interrupts the handler, no answer", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const client = yield* bounded(spawnScripted({
        onElicit: () => Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
      }))
      const r = yield* bounded(client.callTool("abandon"))
      assert.strictEqual(Content.textOf(r), "not answered")
      yield* bounded(Deferred.await(interrupted))
    }))

  it.scopedLive("stdio: modern MRTR against our stdio server", () =>
    Effect.gen(function*() {
      const transport = yield* Stdio.spawn({
        command: process.execPath,
        args: ["--import", "tsx", FIXTURE],
        cwd: ROOT,
        stderr: () => Effect.void
      })
      const client = yield* bounded(McpClient.connect(transport, { probeTimeout: PROBE, onElicit: accept("Pipe") }))
      assert.strictEqual(client.info.era, "modern")
      assert.strictEqual(Content.textOf(yield* bounded(client.callTool("ask"))), "hello {\"name\":\"Pipe\"}")
    }))

  it.scopedLive("stdio legacy: our stdio server sends elicitation/create on the pipe; the client's answer settles it", () =>
    Effect.gen(function*() {
      const transport = yield* Stdio.spawn({
        command: process.execPath,
        args: ["--import", "tsx", FIXTURE],
        cwd: ROOT,
        stderr: () => Effect.void
      })
      const client = yield* bounded(
        McpClient.connect(transport, { versions: ["2025-11-25"], onElicit: accept("Legacy") })
      )
      assert.strictEqual(client.info.era, "legacy")
      assert.strictEqual(Content.textOf(yield* bounded(client.callTool("ask"))), "hello {\"name\":\"Legacy\"}")
    }))

  const serveHttp = (options: McpClient.Options): Effect.Effect<McpClient.McpClient, unknown, Scope.Scope> =>
    Effect.gen(function*() {
      const { url } = yield* StreamableHttp.serve(yield* makeServer())
      return yield* bounded(McpClient.connect(yield* StreamableHttp.client({ url }), options))
    })

  it.scopedLive("Streamable HTTP legacy: requests on the call's SSE stream answered by POST (session headers)", () =>
    Effect.gen(function*() {
      const client = yield* serveHttp({
        versions: ["2025-11-25"],
        onElicit: accept("Http"),
        onSample: sampled,
        onRoots: roots
      })
      assert.strictEqual(client.info.era, "legacy")
      const r = yield* bounded(client.callTool("all"))
      expect(JSON.parse(Content.textOf(r))).toEqual({ who: "Http", model: "test-model", roots: ["file:///work"] })
      assert.strictEqual(Content.textOf(yield* bounded(client.callTool("twice"))), "Http then Http")
    }))

  it.scopedLive("Streamable HTTP modern: MRTR rounds", () =>
    Effect.gen(function*() {
      const names = ["One", "Two"]
      const i = yield* Ref.make(0)
      const client = yield* serveHttp({
        onElicit: () =>
          Effect.map(
            Ref.getAndUpdate(i, (n) => n + 1),
            (n): Input.ElicitResult => ({ action: "accept", content: { name: names[n] ?? "?" } })
          )
      })
      assert.strictEqual(client.info.era, "modern")
      assert.strictEqual(Content.textOf(yield* bounded(client.callTool("twice"))), "One then Two")
    }))
})

// ---------------------------------------------------------------------------------------------
// progress and logs
// ---------------------------------------------------------------------------------------------

describe("McpClient per-call progress and logs", () => {
  it.scoped("onProgress: a fresh token (0 first), or the caller's string token; values, total, message", () =>
    Effect.gen(function*() {
      const { client, log } = yield* connectInProcess(yield* makeServer())
      const seen = yield* Ref.make<ReadonlyArray<McpClient.Progress>>([])
      const onProgress = (p: McpClient.Progress) => Ref.update(seen, (xs) => [...xs, p])
      yield* client.callTool("work", {}, { onProgress })
      yield* client.callTool("work", {}, { onProgress, progressToken: "tok-a" })
      yield* client.callTool("work", {}, { onProgress })
      const tokens = (yield* callsOf(log)).map((c) => get(c.request.params, "_meta", "progressToken"))
      expect(tokens).toEqual([0, "tok-a", 1])
      const progress = yield* Ref.get(seen)
      expect(progress.slice(0, 3)).toEqual([
        { progressToken: 0, progress: 0.25, total: 1 },
        { progressToken: 0, progress: 0.5 },
        { progressToken: 0, progress: 1, total: 1, message: "done" }
      ])
      expect(progress.slice(3, 6).map((p) => p.progressToken)).toEqual(["tok-a", "tok-a", "tok-a"])
      expect(progress.length).toBe(9)
      // without onProgress no token is sent
      yield* client.callTool("work")
      const last = (yield* callsOf(log)).at(-1)
      expect(get(last?.request.params, "_meta", "progressToken")).toBeUndefined()
    }))

  it.scoped("unknown tokens and values that do not increase are dropped", () =>
    Effect.gen(function*() {
      const progress = (token: JsonRpc.RequestId, value: number) =>
        JsonRpc.notification("notifications/progress", { progressToken: token, progress: value })
      const fake: Transport.ClientTransport = {
        request: (message, options) =>
          Effect.gen(function*() {
            if (message.method === "server/discover") {
              return JsonRpc.success(message.id, {
                resultType: "complete",
                supportedVersions: ["2026-07-28"],
                capabilities: { tools: {} }
              })
            }
            const sent = get(message.params, "_meta", "progressToken")
            const token = JsonRpc.isRequestId(sent) ? sent : "missing"
            const deliver = options?.onNotification ?? (() => Effect.void)
            for (const n of [progress("other", 1), progress(token, 1), progress(token, 1), progress(token, 0.5)]) {
              yield* deliver(n)
            }
            yield* deliver(progress(String(token), 3))
            yield* deliver(progress(token, 2))
            return JsonRpc.success(message.id, { resultType: "complete", content: [] })
          }),
        notify: () => Effect.void
      }
      const client = yield* McpClient.connect(fake)
      const seen = yield* Ref.make<ReadonlyArray<number>>([])
      const raw = yield* Ref.make(0)
      yield* client.callTool("x", {}, {
        onProgress: (p) => Ref.update(seen, (xs) => [...xs, p.progress]),
        onNotification: () => Ref.update(raw, (n) => n + 1)
      })
      expect(yield* Ref.get(seen)).toEqual([1, 2])
      assert.strictEqual(yield* Ref.get(raw), 6) // onNotification still sees everything
    }))

  it.scoped("onLog with logLevel (modern): _meta logLevel sent, messages at or above it delivered", () =>
    Effect.gen(function*() {
      const { client, log } = yield* connectInProcess(yield* makeServer())
      const seen = yield* Ref.make<ReadonlyArray<McpClient.LogMessage>>([])
      const onLog = (m: McpClient.LogMessage) => Ref.update(seen, (xs) => [...xs, m])
      yield* client.callTool("work", {}, { onLog, logLevel: "info" })
      expect(yield* Ref.get(seen)).toEqual([
        { level: "info", data: "inf" },
        { level: "error", data: { e: 1 }, logger: "worker" }
      ])
      const [first] = yield* callsOf(log)
      expect(get(first?.request.params, "_meta", "io.modelcontextprotocol/logLevel")).toBe("info")
      // without logLevel a modern server sends no log messages
      yield* Ref.set(seen, [])
      yield* client.callTool("work", {}, { onLog })
      expect(yield* Ref.get(seen)).toEqual([])
    }))

  it.scoped("onLog (legacy): the session's messages of the call", () =>
    Effect.gen(function*() {
      const { client } = yield* connectInProcess(yield* makeServer(), { versions: ["2025-11-25"] })
      const seen = yield* Ref.make<ReadonlyArray<string>>([])
      yield* client.callTool("work", {}, { onLog: (m) => Ref.update(seen, (xs) => [...xs, m.level]) })
      expect(yield* Ref.get(seen)).toEqual(["debug", "info", "error"])
    }))
})
