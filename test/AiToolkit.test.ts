/**
 * `presa-mcp/AiToolkit`: the @effect/ai bridge, both ways, through public APIs and real transports.
 *
 * McpClient → Toolkit (`AiToolkit.fromClient` / `layer`), driven by `LanguageModel.generateText`
 * with a scripted model (a `LanguageModel.make` whose turn asks for the given tool calls and records
 * the tools it was offered):
 * - in process (our server): the provider sees each tool's own `inputSchema`; a call returns the
 *   server's `CallToolResult` (structuredContent included); `isError` is the failure the model reads
 *   (`isFailure`); a JSON-RPC error too; `filter` / `rename`; the toolkit follows `tools/list_changed`
 *   (a tool added on the server appears, a removed one goes); `refresh` without following;
 *   interrupting the agent's fiber interrupts the server's handler;
 * - over stdio (test/fixtures/stdio-server.ts spawned): a call; interrupting the agent cancels the
 *   call (the server's handler logs its interruption); a `touch` list change is followed;
 * - the official SDK v2 server over stdio (test/fixtures/sdk-v2-server.ts): its schemas reach the
 *   provider, `add` returns `{sum}`, an invalid call is the model-visible failure.
 *
 * Toolkit → MCP (`AiToolkit.serve`) with test/fixtures/ai-toolkit.ts, in process and over stdio
 * (test/fixtures/ai-toolkit-server.ts): derived `inputSchema` / `outputSchema`, title and hints, the
 * encoded success as `structuredContent`, typed failures (`failureMode` "error" and "return") as
 * `isError` results, invalid arguments refused, a cancelled call interrupts the handler; and the
 * round trips: a served Toolkit consumed with `AiToolkit.fromClient`, and the same Toolkit run with
 * `AiToolkit.handlersFromClient` (typed results, typed failures).
 *
 * examples/agent.ts runs to completion (spawned) and prints the answer it computed with the tool.
 *
 * Live clock (processes, fibers); every wait is bounded.
 */
import * as LanguageModel from "@effect/ai/LanguageModel"
import type * as Response from "@effect/ai/Response"
import * as AiTool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as ChildProcess from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { InProcess, McpClient, McpSchema, McpServer, Tool } from "presa-mcp"
import * as AiToolkit from "presa-mcp/AiToolkit"
import * as Stdio from "../src/transport/Stdio.js"
import { Calculator, DivisionByZero, handlers, NotFound } from "./fixtures/ai-toolkit.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const fixture = (name: string) => Path.join(ROOT, "test", "fixtures", name)
const NODE_ARGS = ["--import", "tsx"]
const WAIT: Duration.DurationInput = "15 seconds"

const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>, what = "a wait"): Effect.Effect<A, E | Error, R> =>
  Effect.timeoutFail(effect, {
    duration: WAIT,
    onTimeout: () => new Error(`${what}: timed out after ${Duration.format(WAIT)}`)
  })

/** Polls `check` every 20 ms until it holds (bounded). */
const eventually = <E, R>(check: Effect.Effect<boolean, E, R>, what: string) =>
  bounded(Effect.repeat(check, { until: (ok) => ok, schedule: Schedule.spaced("20 millis") }), what)

// ---------------------------------------------------------------------------------------------
// the scripted model
// ---------------------------------------------------------------------------------------------

interface Call {
  readonly name: string
  readonly params: unknown
}

interface Offered {
  readonly name: string
  readonly jsonSchema: unknown
  readonly description: string | undefined
}

/** A model whose every turn asks for `calls`; `offered` receives the tools of the last turn. */
const scripted = (calls: ReadonlyArray<Call>, offered: Ref.Ref<ReadonlyArray<Offered>>) =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) =>
        Ref.set(
          offered,
          options.tools.map((tool) => ({
            name: tool.name,
            jsonSchema: AiTool.getJsonSchemaFromSchemaAst(tool.parametersSchema.ast),
            description: tool.description
          }))
        ).pipe(Effect.as([
          ...calls.map((call, i): Response.PartEncoded => ({
            type: "tool-call",
            id: `call-${i}`,
            name: call.name,
            params: call.params
          })),
          {
            type: "finish",
            reason: "tool-calls",
            usage: {
              inputTokens: undefined,
              outputTokens: undefined,
              totalTokens: undefined,
              reasoningTokens: undefined,
              cachedInputTokens: undefined
            }
          }
        ])),
      streamText: () => Effect.dieMessage("not scripted")
    })
  )

/** One turn of `generateText` with the toolkit of `mcp`, the model asking for `calls`. */
const turn = (mcp: AiToolkit.McpToolkit, calls: ReadonlyArray<Call>) =>
  Effect.gen(function*() {
    const offered = yield* Ref.make<ReadonlyArray<Offered>>([])
    const response = yield* LanguageModel.generateText({ prompt: "go", toolkit: mcp.toolkit }).pipe(
      Effect.provide(scripted(calls, offered))
    )
    return { response, offered: yield* Ref.get(offered) }
  })

const decodeResult = Schema.decodeUnknownSync(McpSchema.CallToolResult)
const textOf = (result: unknown): string =>
  decodeResult(result).content.map((block) => block.type === "text" ? block.text : "").join("")

// ---------------------------------------------------------------------------------------------
// McpClient → Toolkit, in process
// ---------------------------------------------------------------------------------------------

const add = Tool.make({
  name: "add",
  title: "Add",
  description: "Adds numbers",
  annotations: { readOnlyHint: true },
  parameters: Schema.Struct({ numbers: Schema.Array(Schema.Number) }),
  success: Schema.Struct({ sum: Schema.Number }),
  handler: ({ numbers }) => ({ sum: numbers.reduce((a, b) => a + b, 0) })
})

const broken = Tool.make({
  name: "broken",
  handler: () => Effect.fail(new Tool.ToolError({ message: "it broke" }))
})

const dotted = Tool.fromJsonSchema({ name: "ns.echo", handler: (args) => JSON.stringify(args) })

const inProcess = (tools: ReadonlyArray<Tool.Tool>, options?: AiToolkit.Options) =>
  Effect.gen(function*() {
    const server = yield* McpServer.make({ name: "bridge-test", version: "1.0.0", listChanged: true, tools })
    const client = yield* McpClient.connect(yield* InProcess.client(server))
    const mcp = yield* AiToolkit.fromClient(client, options)
    return { server, client, mcp }
  })

describe("AiToolkit.fromClient (in process)", () => {
  it.live("the provider sees each tool's inputSchema; a call yields the server's result", () =>
    Effect.gen(function*() {
      const { client, mcp } = yield* inProcess([add, broken])
      const listed = yield* client.listAllTools
      const { offered, response } = yield* turn(mcp, [{ name: "add", params: { numbers: [2, 3] } }])
      expect(offered.map((t) => t.name)).toEqual(["add", "broken"])
      expect(offered[0]?.jsonSchema).toEqual(listed.find((t) => t.name === "add")?.inputSchema)
      expect(offered[0]?.description).toBe("Adds numbers")
      const [result] = response.toolResults
      assert(result !== undefined)
      expect(result.isFailure).toBe(false)
      expect(decodeResult(result.result).structuredContent).toEqual({ sum: 5 })
      expect(decodeResult(result.encodedResult).structuredContent).toEqual({ sum: 5 })
      const snapshot = yield* mcp.snapshot
      const tool = snapshot.toolkit.tools.add
      assert(tool !== undefined)
      expect(AiTool.getJsonSchema(tool)).toEqual(listed.find((t) => t.name === "add")?.inputSchema)
      expect(tool.annotations.unsafeMap.get(AiTool.Title.key)).toBe("Add")
      expect(tool.annotations.unsafeMap.get(AiTool.Readonly.key)).toBe(true)
      expect(mcp.following).toBe(true)
    }).pipe(Effect.scoped))

  it.live("isError and a JSON-RPC error are failures the model reads (isFailure), not failures of generateText", () =>
    Effect.gen(function*() {
      const { mcp, server } = yield* inProcess([add, broken])
      const first = yield* turn(mcp, [{ name: "broken", params: {} }, { name: "add", params: { numbers: "x" } }])
      const [brokenResult, badArgs] = first.response.toolResults
      assert(brokenResult !== undefined && badArgs !== undefined)
      expect(brokenResult.isFailure).toBe(true)
      expect(decodeResult(brokenResult.result).isError).toBe(true)
      expect(textOf(brokenResult.result)).toBe("it broke")
      expect(badArgs.isFailure).toBe(true)
      expect(textOf(badArgs.result)).toMatch(/^Invalid arguments at \/numbers/)
      // The toolkit still offers a tool the server removed (no listen here): the call's -32602.
      const { mcp: stale } = yield* Effect.flatMap(
        McpClient.connect(yield* InProcess.client(server)),
        (client) => Effect.map(AiToolkit.fromClient(client, { follow: false }), (mcp) => ({ mcp }))
      )
      yield* McpServer.removeTool(server, "broken")
      const second = yield* turn(stale, [{ name: "broken", params: {} }])
      const [gone] = second.response.toolResults
      assert(gone !== undefined)
      expect(gone.isFailure).toBe(true)
      expect(textOf(gone.result)).toMatch(/^MCP error -32602: /)
    }).pipe(Effect.scoped))

  it.live("filter and rename: the model sees the new name, the server gets its own", () =>
    Effect.gen(function*() {
      const { mcp } = yield* inProcess([add, broken, dotted], {
        filter: (tool) => tool.name !== "broken",
        rename: (tool) => tool.name.replace(/\./g, "_")
      })
      // Two tools renamed to one name: the first listed is kept.
      const { mcp: clash } = yield* inProcess([add, broken], { rename: () => "same" })
      const kept = yield* clash.snapshot
      expect(Object.keys(kept.toolkit.tools)).toEqual(["same"])
      expect(kept.tools.map((t) => t.name)).toEqual(["add"])
      const { offered, response } = yield* turn(mcp, [{ name: "ns_echo", params: { x: 1 } }])
      expect(offered.map((t) => t.name)).toEqual(["add", "ns_echo"])
      const [result] = response.toolResults
      assert(result !== undefined)
      expect(result.isFailure).toBe(false)
      expect(textOf(result.result)).toBe("{\"x\":1}")
    }).pipe(Effect.scoped))

  it.live("follows tools/list_changed (legacy era: the session's notifications)", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "bridge-test", version: "1.0.0", listChanged: true, tools: [add] })
      const client = yield* McpClient.connect(yield* InProcess.client(server), { versions: ["2025-11-25"] })
      expect(client.info.era).toBe("legacy")
      const mcp = yield* AiToolkit.fromClient(client)
      expect(mcp.following).toBe(true)
      yield* McpServer.addTool(server, broken)
      yield* eventually(
        Effect.map(mcp.snapshot, (s) => Object.keys(s.toolkit.tools).join(",") === "add,broken"),
        "broken added"
      )
    }).pipe(Effect.scoped))

  it.live("follows tools/list_changed; without following, refresh picks the change up", () =>
    Effect.gen(function*() {
      const { client, mcp, server } = yield* inProcess([add])
      const names = (m: AiToolkit.McpToolkit) => Effect.map(m.snapshot, (s) => Object.keys(s.toolkit.tools).join(","))
      const manual = yield* AiToolkit.fromClient(client, { follow: false })
      expect(manual.following).toBe(false)
      yield* McpServer.addTool(server, broken)
      yield* eventually(Effect.map(names(mcp), (n) => n === "add,broken"), "broken added")
      const { response } = yield* turn(mcp, [{ name: "broken", params: {} }])
      expect(textOf(response.toolResults[0]?.result)).toBe("it broke")
      yield* McpServer.removeTool(server, "add")
      yield* eventually(Effect.map(names(mcp), (n) => n === "broken"), "add removed")
      expect(yield* names(manual)).toBe("add")
      yield* manual.refresh
      expect(yield* names(manual)).toBe("broken")
    }).pipe(Effect.scoped))

  it.live("interrupting the agent's fiber interrupts the tool's handler on the server", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const hang = Tool.make({
        name: "hang",
        handler: () =>
          Deferred.succeed(started, undefined).pipe(
            Effect.zipRight(Effect.never),
            Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
          )
      })
      const { mcp } = yield* inProcess([hang])
      const fiber = yield* Effect.fork(turn(mcp, [{ name: "hang", params: {} }]))
      yield* bounded(Deferred.await(started))
      yield* Fiber.interrupt(fiber)
      yield* bounded(Deferred.await(interrupted))
    }).pipe(Effect.scoped))
})

// ---------------------------------------------------------------------------------------------
// McpClient → Toolkit over stdio: our fixture server, the official SDK v2 server
// ---------------------------------------------------------------------------------------------

const spawned = (file: string) =>
  Effect.gen(function*() {
    const stderr = yield* Ref.make<ReadonlyArray<string>>([])
    const transport = yield* Stdio.spawn({
      command: process.execPath,
      args: [...NODE_ARGS, file],
      cwd: ROOT,
      stderr: (line) => Ref.update(stderr, (lines) => [...lines, line])
    })
    const client = yield* McpClient.connect(transport)
    return { client, stderr }
  })

const logged = (stderr: Ref.Ref<ReadonlyArray<string>>, line: string) =>
  eventually(Effect.map(Ref.get(stderr), (lines) => lines.some((l) => l.includes(line))), `stderr "${line}"`)

describe("AiToolkit.layer over stdio (test/fixtures/stdio-server.ts)", () => {
  it.live("a call, a cancelled call, a followed list change", () =>
    Effect.gen(function*() {
      const { client, stderr } = yield* spawned(fixture("stdio-server.ts"))
      const progressed = yield* Deferred.make<string>()
      // Built in the test's Scope: the toolkit follows the list for as long as its Layer lives.
      const built = yield* Layer.build(
        AiToolkit.layer({ onProgress: (name) => Deferred.succeed(progressed, name) }).pipe(
          Layer.provide(Layer.succeed(McpClient.McpClient, client))
        )
      )
      const mcp = Context.get(built, AiToolkit.McpToolkit)
      expect(mcp.following).toBe(true)
      const { response } = yield* turn(mcp, [{ name: "echo", params: { text: "hi" } }])
      expect(response.toolResults[0]?.isFailure).toBe(false)
      expect(textOf(response.toolResults[0]?.result)).toBe("hi")

      const fiber = yield* Effect.fork(turn(mcp, [{ name: "slow", params: { ms: 60_000 } }]))
      // The fixture reports progress 0 once the call runs: `onProgress` gets it with the tool's name.
      expect(yield* bounded(Deferred.await(progressed), "progress")).toBe("slow")
      yield* Fiber.interrupt(fiber)
      yield* logged(stderr, "slow interrupted")

      const before = yield* mcp.snapshot
      yield* turn(mcp, [{ name: "touch", params: {} }])
      yield* eventually(Effect.map(mcp.snapshot, (now) => now !== before), "refreshed after touch")
    }).pipe(Effect.scoped), 60_000)
})

describe("AiToolkit.fromClient against the official SDK v2 server (stdio)", () => {
  it.live(
    "its schemas reach the provider; add yields {sum}; a refused call is the model's failure",
    () =>
      Effect.gen(function*() {
        const { client } = yield* spawned(fixture("sdk-v2-server.ts"))
        const mcp = yield* AiToolkit.fromClient(client)
        const { offered, response } = yield* turn(mcp, [
          { name: "add", params: { a: 2, b: 3 } },
          { name: "echo", params: {} }
        ])
        expect(offered.map((t) => t.name).sort()).toEqual(["add", "echo"])
        const addSchema = offered.find((t) => t.name === "add")?.jsonSchema
        expect(addSchema).toMatchObject({
          type: "object",
          properties: { a: { type: "number" }, b: { type: "number" } }
        })
        const [sum, refused] = response.toolResults
        assert(sum !== undefined && refused !== undefined)
        expect(sum.isFailure).toBe(false)
        expect(decodeResult(sum.result).structuredContent).toEqual({ sum: 5 })
        expect(refused.isFailure).toBe(true)
        expect(decodeResult(refused.result).isError).toBe(true)
      }).pipe(Effect.scoped),
    60_000
  )
})

// ---------------------------------------------------------------------------------------------
// Toolkit → MCP
// ---------------------------------------------------------------------------------------------

/** What every served Calculator answers, whatever the transport. */
const checkServed = (client: McpClient.McpClient) =>
  Effect.gen(function*() {
    const tools = yield* client.listAllTools
    expect(tools.map((t) => t.name)).toEqual(["add", "divide", "lookup", "slow"])
    const [addTool, divideTool] = tools
    expect(addTool).toMatchObject({
      title: "Add two numbers",
      description: "Adds two numbers",
      annotations: { readOnlyHint: true },
      inputSchema: Tool.deriveJsonSchema(Schema.Struct({ a: Schema.Number, b: Schema.Number })),
      outputSchema: Tool.deriveJsonSchema(Schema.Struct({ sum: Schema.Number }))
    })
    expect(divideTool?.outputSchema).toEqual({
      type: "object",
      properties: { value: { type: "number" } },
      required: ["value"]
    })
    const sum = yield* client.callTool("add", { a: 2, b: 3 })
    expect(sum.isError).toBeUndefined()
    expect(sum.structuredContent).toEqual({ sum: 5 })
    expect(sum.content).toEqual([{ type: "text", text: "{\"sum\":5}" }])
    const quarter = yield* client.callTool("divide", { a: 1, b: 4 })
    expect(quarter.structuredContent).toEqual({ value: 0.25 })
    const byZero = yield* client.callTool("divide", { a: 1, b: 0 })
    expect(byZero.isError).toBe(true)
    expect(byZero.structuredContent).toEqual({ _tag: "DivisionByZero", message: "cannot divide by zero" })
    expect(JSON.parse(textOf(byZero))).toEqual({ _tag: "DivisionByZero", message: "cannot divide by zero" })
    const missing = yield* client.callTool("lookup", { key: "z" })
    expect(missing.isError).toBe(true)
    expect(missing.structuredContent).toEqual({ _tag: "NotFound", key: "z" })
    expect((yield* client.callTool("lookup", { key: "a" })).structuredContent).toEqual({ value: "found a" })
    const invalid = yield* client.callTool("add", { a: 1 })
    expect(invalid.isError).toBe(true)
    expect(textOf(invalid)).toMatch(/^Invalid arguments at \/b/)
    // A call that gives up is cancelled: the handler is interrupted.
    const timedOut = yield* Effect.flip(client.callTool("slow", { ms: 60_000 }, { timeout: "300 millis" }))
    expect(timedOut._tag).not.toBe("McpError")
  })

describe("AiToolkit.serve", () => {
  it.live("in process: schemas, results, typed failures, cancellation", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const context = yield* Layer.build(
        AiToolkit.serve(Calculator).pipe(
          Layer.provide(handlers(Deferred.succeed(interrupted, undefined))),
          Layer.provideMerge(McpServer.layer({ name: "served", version: "1.0.0" }))
        )
      )
      const server = Context.get(context, McpServer.McpServer)
      const client = yield* Effect.flatMap(InProcess.client(server), (t) => McpClient.connect(t))
      yield* checkServed(client)
      yield* bounded(Deferred.await(interrupted))
    }).pipe(Effect.scoped))

  it.live("arguments that pass the JSON Schema but fail the parameters Schema: isError, the handler not run", () =>
    Effect.gen(function*() {
      const ran = yield* Ref.make(0)
      const Even = AiTool.make("even", {
        parameters: { n: Schema.Number.pipe(Schema.filter((n) => n % 2 === 0, { message: () => "must be even" })) },
        success: Schema.Void
      })
      const Evens = Toolkit.make(Even)
      const server = yield* McpServer.make({ name: "served", version: "1.0.0" })
      yield* Layer.build(
        AiToolkit.serve(Evens).pipe(
          Layer.provide(Evens.toLayer({ even: () => Ref.update(ran, (n) => n + 1) })),
          Layer.provide(Layer.succeed(McpServer.McpServer, server))
        )
      )
      const client = yield* Effect.flatMap(InProcess.client(server), (t) => McpClient.connect(t))
      const [tool] = yield* client.listAllTools
      expect(tool?.outputSchema).toBeUndefined()
      const odd = yield* client.callTool("even", { n: 3 })
      expect(odd.isError).toBe(true)
      expect(textOf(odd)).toBe("Invalid arguments at /n: must be even")
      expect(yield* Ref.get(ran)).toBe(0)
      const even = yield* client.callTool("even", { n: 4 })
      expect(even).toMatchObject({ content: [] })
      expect(even.isError).toBeUndefined()
      expect(yield* Ref.get(ran)).toBe(1)
    }).pipe(Effect.scoped))

  it.live("over stdio (test/fixtures/ai-toolkit-server.ts), and back into a Toolkit", () =>
    Effect.gen(function*() {
      const { client, stderr } = yield* spawned(fixture("ai-toolkit-server.ts"))
      yield* checkServed(client)
      yield* logged(stderr, "slow interrupted")
      // The round trip: the served Toolkit as a Toolkit again.
      const mcp = yield* AiToolkit.fromClient(client)
      const { response } = yield* turn(mcp, [{ name: "add", params: { a: 1, b: 2 } }, {
        name: "divide",
        params: { a: 1, b: 0 }
      }])
      const [sum, byZero] = response.toolResults
      expect(decodeResult(sum?.result).structuredContent).toEqual({ sum: 3 })
      expect(byZero?.isFailure).toBe(true)
    }).pipe(Effect.scoped), 60_000)
})

describe("AiToolkit.handlersFromClient (the shared Toolkit, typed, over stdio)", () => {
  it.live(
    "results decode with the tool's Schemas; a typed failure fails generateText or returns, as its failureMode says",
    () =>
      Effect.gen(function*() {
        const { client } = yield* spawned(fixture("ai-toolkit-server.ts"))
        const remote = AiToolkit.handlersFromClient(Calculator).pipe(
          Layer.provide(Layer.succeed(McpClient.McpClient, client))
        )
        const run = (calls: ReadonlyArray<Call>) =>
          Effect.gen(function*() {
            const offered = yield* Ref.make<ReadonlyArray<Offered>>([])
            return yield* LanguageModel.generateText({ prompt: "go", toolkit: Calculator }).pipe(
              Effect.provide(Layer.merge(scripted(calls, offered), remote))
            )
          })
        const ok = yield* run([
          { name: "add", params: { a: 1, b: 2 } },
          { name: "divide", params: { a: 1, b: 4 } },
          { name: "lookup", params: { key: "z" } },
          { name: "lookup", params: { key: "a" } }
        ])
        const [sum, quarter, missing, found] = ok.toolResults
        expect(sum?.result).toEqual({ sum: 3 })
        expect(quarter?.result).toBe(0.25)
        expect(missing?.isFailure).toBe(true)
        expect(missing?.result).toBeInstanceOf(NotFound)
        expect(missing?.result).toMatchObject({ key: "z" })
        expect(found?.result).toBe("found a")
        // divide's failureMode is "error": its typed failure fails the turn.
        const failed = yield* Effect.flip(run([{ name: "divide", params: { a: 1, b: 0 } }]))
        expect(failed).toBeInstanceOf(DivisionByZero)
        expect(failed).toMatchObject({ message: "cannot divide by zero" })
      }).pipe(Effect.scoped),
    60_000
  )
})

// ---------------------------------------------------------------------------------------------
// examples/agent.ts
// ---------------------------------------------------------------------------------------------

const runExample = (
  args: ReadonlyArray<string>
): Effect.Effect<{ stdout: string; code: number | null }, Error, Scope.Scope> =>
  Effect.async((resume) => {
    const child = ChildProcess.execFile(
      process.execPath,
      [...NODE_ARGS, Path.join(ROOT, "examples", "agent.ts"), ...args],
      { cwd: ROOT, timeout: 45_000 },
      (error, stdout) =>
        resume(
          Effect.succeed({ stdout, code: error === null ? 0 : error.code === undefined ? null : Number(error.code) })
        )
    )
    return Effect.sync(() => child.kill())
  })

describe("examples/agent.ts", () => {
  it.live("runs the agent loop over the library's add tool and prints the answer", () =>
    Effect.gen(function*() {
      const { code, stdout } = yield* runExample(["What is 2 + 3 + 4?"])
      expect(stdout).toBe("The sum is 9.\n")
      expect(code).toBe(0)
    }).pipe(Effect.scoped), 60_000)
})
