/**
 * The connection core at the seam, through real transports (docs/architecture.md, "Transports are
 * Layers over ONE connection core"):
 * - a stdio client that stops reading during a burst of thousands of requests, then reads again,
 *   gets every reply, and later requests are answered; meanwhile the server stops reading its
 *   stdin instead of buffering (it starts at most `maxInFlight` requests past what the pipe holds);
 * - the bound on requests in flight (`maxInFlight`) holds;
 * - a stdout reader stuck past `writeTimeout` closes the connection (the process exits);
 * - a tool result JSON cannot carry gets exactly one answer on stdio, HTTP and in-process.
 *
 * Processes run as `node --import tsx test/fixtures/stdio-seam-server.ts`. Every wait is bounded.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Mailbox from "effect/Mailbox"
import * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import * as ChildProcess from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as JsonRpc from "../../src/JsonRpc.js"
import * as McpClient from "../../src/McpClient.js"
import * as McpServer from "../../src/McpServer.js"
import * as Resource from "../../src/Resource.js"
import * as Tool from "../../src/Tool.js"
import * as InProcess from "../../src/transport/InProcess.js"
import * as Stdio from "../../src/transport/Stdio.js"
import * as StreamableHttp from "../../src/transport/StreamableHttp.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const SERVER = Path.join(ROOT, "test", "fixtures", "stdio-seam-server.ts")

const META: JsonRpc.JsonObject = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {}
}

const call = (id: JsonRpc.RequestId, name: string, args: JsonRpc.JsonObject): string =>
  JSON.stringify(JsonRpc.request(id, "tools/call", { name, arguments: args, _meta: META })) + "\n"

const responseOf = (text: string): JsonRpc.Response => {
  const c = JsonRpc.parse(text)
  if (c._tag !== "Response") throw new Error(`expected a response, got ${text.slice(0, 200)}`)
  return c.message
}

/** Resolves once `check` holds (polled every 20 ms), or rejects after `ms`. */
const until = (what: string, check: () => boolean, ms: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const started = Date.now()
    const poll = () => {
      if (check()) return resolve()
      if (Date.now() - started > ms) return reject(new Error(`timed out after ${ms} ms waiting for ${what}`))
      setTimeout(poll, 20)
    }
    poll()
  })

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** A fixture process whose stdout is read only while `reading` (the pipe fills otherwise). */
const spawnFixture = (args: ReadonlyArray<string>) => {
  const child = ChildProcess.spawn(process.execPath, ["--import", "tsx", SERVER, ...args], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"]
  })
  const lines: Array<string> = []
  let pending = ""
  let stderr = ""
  child.stdout.setEncoding("utf8")
  child.stdout.on("data", (chunk: string) => {
    pending += chunk
    let i = pending.indexOf("\n")
    while (i !== -1) {
      lines.push(pending.slice(0, i))
      pending = pending.slice(i + 1)
      i = pending.indexOf("\n")
    }
  })
  // The fixture may be gone while a write is pending (a killed process): not this test's error.
  child.stdin.on("error", () => {})
  child.stderr.setEncoding("utf8")
  child.stderr.on("data", (chunk: string) => {
    stderr += chunk
  })
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  /** The highest `started <n>` the `burst` tool has written to stderr. */
  const started = (): number => {
    let max = 0
    for (const m of stderr.matchAll(/started (\d+)/g)) max = Math.max(max, Number(m[1]))
    return max
  }
  return { child, lines, stderr: () => stderr, started, exited }
}

type Fixture = ReturnType<typeof spawnFixture>

const withFixture = (args: ReadonlyArray<string>, f: (fx: Fixture) => Promise<void>) =>
  Effect.promise(async () => {
    const fx = spawnFixture(args)
    try {
      await until("the fixture to start", () => fx.stderr().includes("ready pid="), 20_000)
      await f(fx)
    } finally {
      if (fx.child.exitCode === null) fx.child.kill("SIGKILL")
      await fx.exited
    }
  })

describe("connection core: backpressure and bounds (stdio process)", () => {
  it.live(
    "a client that stops reading during a burst of 3,000 requests gets every reply once it reads again",
    () =>
      withFixture(["--max-in-flight", "16"], async (fx) => {
        const total = 3_000
        const bytes = 2_000
        fx.child.stdout.pause()
        let body = ""
        for (let id = 1; id <= total; id++) body += call(id, "burst", { bytes })
        fx.child.stdin.write(body)
        // Stalled: the server starts what the OS pipe buffers, stdout's buffer and the 16 requests
        // in flight hold, then stops reading stdin (no unbounded buffering): the count of started
        // requests stops growing, far below the 3,000 sent (~6 MB of replies).
        await sleep(3_000)
        const startedWhileStalled = fx.started()
        await sleep(2_000)
        expect(fx.lines.length).toBe(0)
        expect(startedWhileStalled).toBeGreaterThan(0)
        expect(fx.started()).toBe(startedWhileStalled)
        expect(startedWhileStalled).toBeLessThan(total / 2)
        fx.child.stdout.resume()
        await until(`${total} replies`, () => fx.lines.length >= total, 60_000)
        const ids = new Set(fx.lines.map((l) => responseOf(l).id))
        expect(ids.size).toBe(total)
        for (let id = 1; id <= total; id++) expect(ids.has(id)).toBe(true)
        // A later request is answered.
        fx.child.stdin.write(call("after", "echo", { text: "still here" }))
        await until("the later reply", () => fx.lines.length === total + 1, 20_000)
        const later = responseOf(fx.lines[total] ?? "")
        expect(later.id).toBe("after")
        assert(!JsonRpc.isErrorResponse(later))
        expect(later.result.content).toEqual([{ type: "text", text: "still here" }])
      }),
    120_000
  )

  it.live(
    "a reader stuck past writeTimeout closes the connection: the serve fails, requests stop, the process exits 1",
    () =>
      withFixture(["--write-timeout-ms", "1000", "--max-in-flight", "8"], async (fx) => {
        fx.child.stdout.pause()
        let body = ""
        for (let id = 1; id <= 200; id++) body += call(id, "burst", { bytes: 50_000 })
        fx.child.stdin.write(body)
        await until("the stuck-reader error", () => fx.stderr().includes("has read nothing for 1s"), 20_000)
        expect(fx.stderr()).toContain("the stdio server failed")
        const started = fx.started()
        expect(started).toBeLessThan(200)
        await sleep(500)
        expect(fx.started()).toBe(started)
        // What stdout still holds is the OS's; once the client lets go of the pipe the process ends.
        fx.child.stdout.destroy()
        const code = await Promise.race([fx.exited, sleep(20_000).then(() => "still running" as const)])
        expect(code).toBe(1)
      }),
    60_000
  )
})

describe("connection core: the bound on requests in flight (in memory)", () => {
  it.live("maxInFlight: never more handlers running than the bound; every request answered", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      let running = 0
      let highest = 0
      const hold = Tool.fromJsonSchema({
        name: "hold",
        handler: () =>
          Effect.acquireUseRelease(
            Effect.sync(() => {
              running++
              highest = Math.max(highest, running)
            }),
            () => Effect.as(Deferred.await(release), "released"),
            () =>
              Effect.sync(() => {
                running--
              })
          )
      })
      const server = yield* McpServer.make({ name: "bound", version: "1.0.0", tools: [hold] })
      const input = yield* Mailbox.make<Uint8Array>()
      const output = yield* Mailbox.make<string>()
      const encoder = new TextEncoder()
      const serving = yield* Stdio.serve(server, {
        stdin: Mailbox.toStream(input),
        stdout: Sink.forEach((bytes: Uint8Array) =>
          Effect.forEach(new TextDecoder().decode(bytes).split("\n").filter((l) => l !== ""), (l) => output.offer(l))
        ),
        maxInFlight: 4
      }).pipe(Effect.fork)
      for (let id = 1; id <= 40; id++) yield* input.offer(encoder.encode(call(id, "hold", {})))
      // Give the server time to start all it would start.
      yield* Effect.sleep("300 millis")
      expect(highest).toBe(4)
      yield* Deferred.succeed(release, undefined)
      const replies = yield* Stream.runCollect(Stream.take(Mailbox.toStream(output), 40)).pipe(
        Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("replies timed out") })
      )
      const ids = new Set(Array.from(replies, (l) => responseOf(l).id))
      expect(ids.size).toBe(40)
      expect(highest).toBe(4)
      yield* input.end
      yield* Fiber.join(serving)
    }))
})

describe("connection core: a sink that never takes (in memory)", () => {
  it.live("writeTimeout: the serve fails with TransportError Closed and its requests are interrupted", () =>
    Effect.gen(function*() {
      let interrupted = 0
      const wait = Tool.fromJsonSchema({
        name: "wait",
        handler: () =>
          Effect.never.pipe(Effect.onInterrupt(() =>
            Effect.sync(() => {
              interrupted++
            })
          ))
      })
      const echo = Tool.fromJsonSchema({ name: "echo", handler: () => Effect.succeed("e") })
      const server = yield* McpServer.make({ name: "stuck", version: "1.0.0", tools: [wait, echo] })
      const input = yield* Mailbox.make<Uint8Array>()
      const encoder = new TextEncoder()
      const serving = yield* Stdio.serve(server, {
        stdin: Mailbox.toStream(input),
        stdout: Sink.forEach(() => Effect.never),
        writeTimeout: "200 millis"
      }).pipe(Effect.fork)
      yield* input.offer(encoder.encode(call("w", "wait", {})))
      for (let id = 1; id <= 3_000; id++) yield* input.offer(encoder.encode(call(id, "echo", {})))
      const exit = yield* Fiber.await(serving).pipe(
        Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("the serve did not end") })
      )
      assert(exit._tag === "Failure")
      const failure = Cause.failureOption(exit.cause)
      assert(failure._tag === "Some")
      const error = failure.value
      expect(error.reason).toBe("Closed")
      expect(error.message).toContain("has read nothing for 200ms")
      expect(interrupted).toBe(1)
    }))
})

// ---------------------------------------------------------------------------------------------
// results JSON cannot carry: exactly one answer on every transport
// ---------------------------------------------------------------------------------------------

const unencodableTools = [
  Tool.fromJsonSchema({
    name: "bigint",
    handler: () => Effect.succeed({ content: [{ type: "text", text: "fine" }], structuredContent: { n: 10n } })
  }),
  Tool.fromJsonSchema({
    name: "cycle",
    handler: () => {
      const loop: Record<string, unknown> = { a: 1 }
      loop.self = loop
      return Effect.succeed({ content: [{ type: "text", text: "fine" }], structuredContent: loop })
    }
  }),
  Tool.fromJsonSchema({
    name: "deep",
    handler: () => {
      let deep: Record<string, unknown> = {}
      for (let i = 0; i < 100_000; i++) deep = { d: deep }
      return Effect.succeed({ content: [{ type: "text", text: "fine" }], structuredContent: deep })
    }
  })
]

const unencodableResource = Resource.make({
  uri: "file:///bigint.txt",
  name: "bigint",
  handler: () => Effect.succeed({ contents: [{ uri: "file:///bigint.txt", text: "t", _meta: { n: 1n } }] })
})

const makeUnencodable = McpServer.make({
  name: "unencodable",
  version: "1.0.0",
  tools: unencodableTools,
  resources: [unencodableResource]
})

const isUnencodableToolResult = (result: JsonRpc.JsonObject): boolean =>
  result.isError === true &&
  JSON.stringify(result.content) === JSON.stringify([{
      type: "text",
      text: "The tool's result cannot be encoded as JSON"
    }])

describe("connection core: a result JSON cannot carry", () => {
  it.live(
    "stdio: an isError result for tools/call, -32603 for resources/read, then later requests",
    () =>
      Effect.promise(async () => {
        const fx = spawnFixture([])
        try {
          await until("the fixture to start", () => fx.stderr().includes("ready pid="), 20_000)
          fx.child.stdin.write(call(1, "unencodable", {}))
          fx.child.stdin.write(call(2, "echo", { text: "next" }))
          await until("two replies", () => fx.lines.length >= 2, 20_000)
          const replies = fx.lines.map(responseOf)
          const first = replies.find((r) => r.id === 1)
          assert(first !== undefined && !JsonRpc.isErrorResponse(first))
          expect(isUnencodableToolResult(first.result)).toBe(true)
          expect(first.result.resultType).toBe("complete")
          expect(replies.find((r) => r.id === 2)).toBeDefined()
          expect(fx.stderr()).toContain("cannot be encoded as JSON")
        } finally {
          fx.child.kill("SIGKILL")
          await fx.exited
        }
      }),
    60_000
  )

  it.scoped("HTTP: every unencodable tool result is an isError result (200), a read is -32603", () =>
    Effect.gen(function*() {
      const server = yield* makeUnencodable
      const address = yield* StreamableHttp.serve(server, { port: 0 })
      const post = (id: number, method: string, params: JsonRpc.JsonObject, name: string) =>
        Effect.promise(async () => {
          const response = await fetch(address.url, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
              "mcp-protocol-version": "2026-07-28",
              "mcp-method": method,
              "mcp-name": name
            },
            body: JSON.stringify(JsonRpc.request(id, method, { ...params, _meta: META }))
          })
          return { status: response.status, body: responseOf(await response.text()) }
        })
      for (const [i, name] of ["bigint", "cycle", "deep"].entries()) {
        const { body, status } = yield* post(i + 1, "tools/call", { name, arguments: {} }, name)
        expect(status).toBe(200)
        assert(!JsonRpc.isErrorResponse(body))
        expect(isUnencodableToolResult(body.result)).toBe(true)
      }
      const read = yield* post(9, "resources/read", { uri: "file:///bigint.txt" }, "file:///bigint.txt")
      assert(JsonRpc.isErrorResponse(read.body))
      expect(read.body.error.code).toBe(-32603)
      expect(read.body.id).toBe(9)
    }))

  it.scoped("in-process: the client gets the isError result (and McpError -32603 for a read), not a transport error", () =>
    Effect.gen(function*() {
      const server = yield* makeUnencodable
      const client = yield* McpClient.connect(yield* InProcess.client(server))
      for (const name of ["bigint", "cycle", "deep"]) {
        const result = yield* client.callTool(name, {})
        expect(result.isError).toBe(true)
        expect(result.content).toEqual([{ type: "text", text: "The tool's result cannot be encoded as JSON" }])
      }
      const error = yield* Effect.flip(client.readResource("file:///bigint.txt"))
      assert(error._tag === "McpError")
      expect(error.code).toBe(-32603)
      // The connection goes on.
      const listed = yield* client.listTools()
      expect(listed.tools.map((t) => t.name)).toEqual(["bigint", "cycle", "deep"])
    }))

  it.scoped("a non-finite number where the outputSchema says number: an isError result, not a silent null", () =>
    Effect.gen(function*() {
      const nan = Tool.fromJsonSchema({
        name: "nan",
        outputSchema: { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] },
        handler: () => Effect.succeed({ sum: Number.NaN })
      })
      const server = yield* McpServer.make({ name: "nan", version: "1.0.0", tools: [nan] })
      const client = yield* McpClient.connect(yield* InProcess.client(server))
      const result = yield* client.callTool("nan", {})
      expect(result.isError).toBe(true)
      expect(JSON.stringify(result.content)).toContain("outputSchema at /sum")
      expect(result.structuredContent).toBeUndefined()
    }))
})
