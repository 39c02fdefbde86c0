/**
 * The stdio transport against real processes.
 *
 * - Server (raw wire): `test/fixtures/stdio-server.ts` (our `McpServer` + `Stdio.run`) is driven
 *   with `node:child_process`; tests write exact bytes and read exact lines.
 * - Client: `Stdio.spawn` against the same fixture, and against `test/fixtures/stdio-fake.ts`, a
 *   scripted peer that misbehaves on purpose.
 *
 * Processes run as `node --import tsx <fixture>` (no npx layer in between). Every wait is bounded.
 */
import { assert, describe, expect, it, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ChildProcess from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as JsonRpc from "../../src/JsonRpc.js"
import * as McpSchema from "../../src/McpSchema.js"
import type { TransportError } from "../../src/Transport.js"
import * as Stdio from "../../src/transport/Stdio.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const SERVER = Path.join(ROOT, "test", "fixtures", "stdio-server.ts")
const FAKE = Path.join(ROOT, "test", "fixtures", "stdio-fake.ts")
const NODE_ARGS = ["--import", "tsx"]
const WAIT: Duration.DurationInput = "10 seconds"

// ---------------------------------------------------------------------------------------------
// wire helpers (no `any`: JSON is classified with the library's own JsonRpc.classify)
// ---------------------------------------------------------------------------------------------

type JsonObject = JsonRpc.JsonObject

const META: JsonObject = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {}
}

const request = (id: JsonRpc.RequestId | null, method: string, params?: JsonObject): JsonObject =>
  params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params }

const notification = (method: string, params?: JsonObject): JsonObject =>
  params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params }

/** A modern `tools/call` (2026-07-28 `_meta` included). */
const call = (id: JsonRpc.RequestId, name: string, args: JsonObject, meta: JsonObject = {}): JsonObject =>
  request(id, "tools/call", { name, arguments: args, _meta: { ...META, ...meta } })

const line = (message: JsonObject): string => JSON.stringify(message) + "\n"

const classify = (text: string): JsonRpc.Classified => JsonRpc.parse(text)

const responseOf = (text: string): JsonRpc.Response => {
  const c = classify(text)
  if (c._tag !== "Response") throw new Error(`expected a response, got ${text.slice(0, 300)}`)
  return c.message
}

const notificationOf = (text: string): JsonRpc.Notification => {
  const c = classify(text)
  if (c._tag !== "Notification") throw new Error(`expected a notification, got ${text.slice(0, 300)}`)
  return c.message
}

const resultOf = (r: JsonRpc.Response): JsonObject => {
  if (JsonRpc.isErrorResponse(r)) throw new Error(`expected a result, got ${JSON.stringify(r)}`)
  return r.result
}

const errorOf = (r: JsonRpc.Response): JsonRpc.ErrorObject => {
  if (!JsonRpc.isErrorResponse(r)) throw new Error(`expected an error, got ${JSON.stringify(r).slice(0, 300)}`)
  return r.error
}

const decodeCallToolResult = Schema.decodeUnknownSync(McpSchema.CallToolResult)

const textOf = (r: JsonRpc.Response): string => {
  const block = decodeCallToolResult(resultOf(r)).content[0]
  if (block === undefined || block.type !== "text") throw new Error(`expected a text block, got ${JSON.stringify(r)}`)
  return block.text
}

const isGone = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return false
  } catch {
    return true
  }
}

/** Polls `check` every 20 ms until it holds, at most {@link WAIT}. */
const eventually = (what: string, check: Effect.Effect<boolean>): Effect.Effect<void> =>
  check.pipe(
    Effect.repeat({ until: (ok) => ok, schedule: Schedule.spaced("20 millis") }),
    Effect.timeoutFail({ duration: WAIT, onTimeout: () => new Error(`timed out waiting for ${what}`) }),
    Effect.orDie,
    Effect.asVoid
  )

// ---------------------------------------------------------------------------------------------
// a raw fixture process
// ---------------------------------------------------------------------------------------------

interface Raw {
  readonly pid: number
  /** Writes raw text or bytes to the server's stdin. */
  readonly write: (data: string | Uint8Array) => Effect.Effect<void>
  readonly send: (message: JsonObject) => Effect.Effect<void>
  /** Closes the server's stdin. */
  readonly end: Effect.Effect<void>
  /** Closes the read end of the server's stdout: its next write fails (EPIPE). */
  readonly closeStdout: Effect.Effect<void>
  /** The next stdout line. */
  readonly next: Effect.Effect<string>
  /** Every stdout line so far. */
  readonly lines: () => ReadonlyArray<string>
  readonly stderr: () => string
  readonly waitStderr: (text: string, count?: number) => Effect.Effect<void>
  /** The exit code, once the process has exited. */
  readonly exitCode: Effect.Effect<number | null>
}

const startRaw = (args: ReadonlyArray<string> = []): Effect.Effect<Raw, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const queue = yield* Queue.unbounded<string>()
      const exited = yield* Deferred.make<number | null>()
      const child = ChildProcess.spawn(process.execPath, [...NODE_ARGS, SERVER, ...args], {
        cwd: ROOT,
        stdio: ["pipe", "pipe", "pipe"]
      })
      const all: Array<string> = []
      let partial: Array<Buffer> = []
      child.stdout.on("data", (chunk: Buffer) => {
        let start = 0
        for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
          const text = Buffer.concat([...partial, chunk.subarray(start, nl)]).toString("utf8")
          partial = []
          all.push(text)
          Queue.unsafeOffer(queue, text)
          start = nl + 1
        }
        if (start < chunk.length) partial.push(chunk.subarray(start))
      })
      let errText = ""
      child.stderr.setEncoding("utf8")
      child.stderr.on("data", (chunk: string) => {
        errText += chunk
      })
      child.on("exit", (code) => {
        Deferred.unsafeDone(exited, Exit.succeed(code))
      })
      const raw: Raw = {
        pid: child.pid ?? -1,
        write: (data) =>
          Effect.async<void>((resume) => {
            child.stdin.write(data, () => resume(Effect.void))
          }),
        send: (message) => raw.write(line(message)),
        end: Effect.sync(() => {
          child.stdin.end()
        }),
        closeStdout: Effect.sync(() => {
          child.stdout.destroy()
        }),
        next: Queue.take(queue).pipe(
          Effect.timeoutFail({ duration: WAIT, onTimeout: () => new Error("timed out waiting for a stdout line") }),
          Effect.orDie
        ),
        lines: () => all,
        stderr: () => errText,
        waitStderr: (text, count = 1) =>
          eventually(`stderr "${text}" ×${count}`, Effect.sync(() => errText.split(text).length - 1 >= count)),
        exitCode: Deferred.await(exited).pipe(
          Effect.timeoutFail({ duration: WAIT, onTimeout: () => new Error("timed out waiting for the exit") }),
          Effect.orDie
        )
      }
      yield* raw.waitStderr("ready pid=")
      return raw
    }),
    (raw) =>
      Effect.sync(() => {
        if (!isGone(raw.pid)) process.kill(raw.pid, "SIGKILL")
      })
  )

/** Asserts that every line a server wrote is one JSON-RPC response or notification. */
const assertAllJsonRpc = (lines: ReadonlyArray<string>): void => {
  for (const text of lines) {
    const c = classify(text)
    expect(c._tag === "Response" || c._tag === "Notification", text.slice(0, 300)).toBe(true)
  }
}

// ---------------------------------------------------------------------------------------------
// server: one shared process
// ---------------------------------------------------------------------------------------------

class ServerA extends Context.Tag("test/Stdio/ServerA")<ServerA, Raw>() {}

layer(Layer.scoped(ServerA, startRaw()), { excludeTestServices: true, timeout: WAIT })(
  "Stdio server (raw wire)",
  (it) => {
    it.effect("echoes id 0 and a string id exactly", () =>
      Effect.gen(function*() {
        const raw = yield* ServerA
        yield* raw.send(call(0, "echo", { text: "zero" }))
        yield* raw.send(call("0", "echo", { text: "string zero" }))
        const replies = [responseOf(yield* raw.next), responseOf(yield* raw.next)]
        const numeric = replies.find((r) => r.id === 0)
        const string = replies.find((r) => r.id === "0")
        expect(numeric && textOf(numeric)).toBe("zero")
        expect(string && textOf(string)).toBe("string zero")
        expect(numeric && resultOf(numeric).resultType).toBe("complete")
      }))

    it.effect("never answers a notification, even with an unknown method or a request method", () =>
      Effect.gen(function*() {
        const raw = yield* ServerA
        yield* raw.send(notification("notifications/does_not_exist", {}))
        yield* raw.send(notification("tools/list"))
        yield* raw.send(notification("notifications/cancelled", { requestId: 999, reason: "unknown id" }))
        yield* raw.send(request(101, "ping"))
        expect(responseOf(yield* raw.next)).toEqual({ jsonrpc: "2.0", id: 101, result: {} })
      }))

    it.effect("a request with \"id\": null is invalid (-32600, no id)", () =>
      Effect.gen(function*() {
        const raw = yield* ServerA
        yield* raw.write("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}\n")
        const reply = responseOf(yield* raw.next)
        expect(errorOf(reply).code).toBe(-32600)
        expect("id" in reply).toBe(false)
      }))

    it.effect("a line that is not JSON gets -32700 without id, and serving goes on", () =>
      Effect.gen(function*() {
        const raw = yield* ServerA
        yield* raw.write("MCP server starting on stdio...\n{\"jsonrpc\":\"2.0\",\"id\":100,\"method\":\"ping\"\n")
        for (let i = 0; i < 2; i++) {
          const reply = responseOf(yield* raw.next)
          expect(errorOf(reply).code).toBe(-32700)
          expect("id" in reply).toBe(false)
        }
        yield* raw.send(request(103, "ping"))
        expect(responseOf(yield* raw.next).id).toBe(103)
      }))

    it.effect("skips blank lines and accepts \\r\\n endings", () =>
      Effect.gen(function*() {
        const raw = yield* ServerA
        yield* raw.write("\n\r\n   \n\t\r\n")
        yield* raw.write(JSON.stringify(request(104, "ping")) + "\r\n")
        expect(responseOf(yield* raw.next)).toEqual({ jsonrpc: "2.0", id: 104, result: {} })
      }))

    it.effect("reassembles a message split across two writes", () =>
      Effect.gen(function*() {
        const raw = yield* ServerA
        const text = line(call("split", "echo", { text: "two halves" }))
        yield* raw.write(text.slice(0, 25))
        yield* Effect.sleep("50 millis")
        yield* raw.write(text.slice(25))
        const reply = responseOf(yield* raw.next)
        expect(reply.id).toBe("split")
        expect(textOf(reply)).toBe("two halves")
      }))

    it.effect("decodes a multi-byte UTF-8 character split across chunks", () =>
      Effect.gen(function*() {
        const raw = yield* ServerA
        const bytes = new TextEncoder().encode(line(call("utf8", "echo", { text: "héllo 世界" })))
        const world = new TextEncoder().encode("世")
        const at = Buffer.from(bytes).indexOf(Buffer.from(world)) + 1 // inside the 3-byte sequence
        yield* raw.write(bytes.slice(0, at))
        yield* Effect.sleep("50 millis")
        yield* raw.write(bytes.slice(at))
        const reply = responseOf(yield* raw.next)
        expect(reply.id).toBe("utf8")
        expect(textOf(reply)).toBe("héllo 世界")
      }))

    it.effect("carries several-MiB messages in both directions (default 4 MiB limit)", () =>
      Effect.gen(function*() {
        const raw = yield* ServerA
        const text = "é".repeat(1_500_000) // 3,000,000 bytes of UTF-8
        yield* raw.send(call("big-in", "echo", { text }))
        const echoed = responseOf(yield* raw.next)
        expect(echoed.id).toBe("big-in")
        expect(textOf(echoed) === text).toBe(true)
        yield* raw.send(call("big-out", "big", { bytes: 6 * 1024 * 1024 }))
        const big = responseOf(yield* raw.next)
        expect(big.id).toBe("big-out")
        expect(textOf(big).length).toBe(6 * 1024 * 1024)
      }), 30_000)

    it.effect("runs requests concurrently: a slow tool does not hold up the next request", () =>
      Effect.gen(function*() {
        const raw = yield* ServerA
        yield* raw.send(call("slow-1", "slow", { ms: 1000 }))
        yield* raw.send(call("fast-1", "echo", { text: "fast" }))
        expect(responseOf(yield* raw.next).id).toBe("fast-1")
        const slow = responseOf(yield* raw.next)
        expect(slow.id).toBe("slow-1")
        expect(textOf(slow)).toBe("slept 1000ms")
      }))

    it.effect("notifications/cancelled for id 0 interrupts the handler, and nothing is written for 0", () =>
      Effect.gen(function*() {
        const raw = yield* ServerA
        yield* raw.send(call(0, "slow", { ms: 10_000 }, { progressToken: 0 }))
        const progress = notificationOf(yield* raw.next) // the handler is running
        expect(progress.method).toBe("notifications/progress")
        expect(progress.params?.progressToken).toBe(0)
        const mark = raw.lines().length
        yield* raw.send(notification("notifications/cancelled", { requestId: "0", reason: "wrong type: ignored" }))
        yield* raw.send(notification("notifications/cancelled", { requestId: 0, reason: "test" }))
        yield* raw.waitStderr("slow interrupted")
        yield* raw.send(request(105, "ping"))
        expect(responseOf(yield* raw.next)).toEqual({ jsonrpc: "2.0", id: 105, result: {} })
        yield* Effect.sleep("200 millis")
        const after = raw.lines().slice(mark)
        expect(after.some((text) => responseOf(text).id === 0)).toBe(false)
      }))

    it.effect("legacy initialize, then legacy and modern requests on the same pipe", () =>
      Effect.gen(function*() {
        const raw = yield* ServerA
        yield* raw.send(request("init", "initialize", {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "stdio-test", version: "1.0.0" }
        }))
        const init = resultOf(responseOf(yield* raw.next))
        expect(init.protocolVersion).toBe("2025-11-25")
        yield* raw.send(notification("notifications/initialized"))

        yield* raw.send(request(106, "tools/list"))
        const legacy = responseOf(yield* raw.next)
        expect(legacy.id).toBe(106)
        const tools = resultOf(legacy).tools
        expect(Array.isArray(tools) && tools.length).toBe(4)
        expect(resultOf(legacy).resultType).toBeUndefined()

        // the session's unsolicited notifications share the pipe
        yield* raw.send(request(109, "tools/call", { name: "touch", arguments: {} }))
        const both = [classify(yield* raw.next), classify(yield* raw.next)]
        expect(both.map((c) => c._tag).sort()).toEqual(["Notification", "Response"])
        const changed = both.find((c) => c._tag === "Notification")
        expect(changed?._tag === "Notification" && changed.message).toEqual({
          jsonrpc: "2.0",
          method: "notifications/tools/list_changed"
        })

        yield* raw.send(request(107, "tools/list", { _meta: META }))
        const modern = responseOf(yield* raw.next)
        expect(modern.id).toBe(107)
        expect(resultOf(modern).resultType).toBe("complete")

        yield* raw.send(request(108, "tools/list", {
          _meta: { ...META, "io.modelcontextprotocol/protocolVersion": "1999-01-01" }
        }))
        const unsupported = responseOf(yield* raw.next)
        expect(unsupported.id).toBe(108)
        expect(errorOf(unsupported).code).toBe(-32022)
      }))

    it.effect("every line written to stdout is a JSON-RPC response or notification", () =>
      Effect.gen(function*() {
        const raw = yield* ServerA
        expect(raw.lines().length).toBeGreaterThanOrEqual(20)
        assertAllJsonRpc(raw.lines())
      }))
  }
)

// ---------------------------------------------------------------------------------------------
// server: limits and shutdown (one process each)
// ---------------------------------------------------------------------------------------------

describe("Stdio server (limits and shutdown)", () => {
  it.scopedLive("a line over maxLineBytes gets -32600 without id and is skipped; serving goes on", () =>
    Effect.gen(function*() {
      const raw = yield* startRaw(["--max-line-bytes", "1024"])
      const long = line(call("too-long", "echo", { text: "y".repeat(4000) }))
      yield* raw.write(long.slice(0, 1500))
      yield* raw.write(long.slice(1500))
      const reply = responseOf(yield* raw.next)
      expect(errorOf(reply).code).toBe(-32600)
      expect(errorOf(reply).data).toEqual({ maxLineBytes: 1024 })
      expect("id" in reply).toBe(false)
      yield* raw.send(call("fits", "echo", { text: "z".repeat(800) }))
      const fits = responseOf(yield* raw.next)
      expect(fits.id).toBe("fits")
      expect(textOf(fits).length).toBe(800)
      yield* raw.end
      expect(yield* raw.exitCode).toBe(0)
      assertAllJsonRpc(raw.lines())
    }))

  it.scopedLive("lines arriving in one chunk are handled in order: initialize first, a cancel after its request", () =>
    Effect.gen(function*() {
      const raw = yield* startRaw()
      yield* raw.write(
        line(request("o-init", "initialize", {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "stdio-test", version: "1.0.0" }
        })) +
          line(notification("notifications/initialized")) +
          // legacy: answered only if the session created by initialize is already there
          line(request("o-call", "tools/call", { name: "echo", arguments: { text: "after init" } })) +
          line(call("o-slow", "slow", { ms: 30_000 })) +
          line(notification("notifications/cancelled", { requestId: "o-slow" })) +
          line(request("o-ping", "ping"))
      )
      const replies = [responseOf(yield* raw.next), responseOf(yield* raw.next), responseOf(yield* raw.next)]
      expect(replies.map((r) => r.id)).toEqual(["o-init", "o-call", "o-ping"])
      const echoed = replies[1]
      expect(echoed && textOf(echoed)).toBe("after init")
      yield* raw.waitStderr("slow interrupted")
      yield* raw.end
      expect(yield* raw.exitCode).toBe(0)
      expect(raw.lines().length).toBe(3) // nothing for the cancelled request
    }))

  it.scopedLive("a burst behind a stdout that needs draining loses nothing and keeps its order", () =>
    Effect.gen(function*() {
      const raw = yield* startRaw()
      const count = 2000
      // The big reply fills the pipe; the -32700 replies that follow wait for it to drain, so the
      // lines read meanwhile queue up (the server pauses stdin beyond a bound, then resumes: the
      // ping sent afterwards is read).
      yield* raw.write(
        line(call("b-big", "big", { bytes: 4 * 1024 * 1024 - 1024 })) +
          "not json\n".repeat(count) +
          line(request("b-ping", "ping"))
      )
      const replies: Array<JsonRpc.Response> = []
      for (let i = 0; i < count + 2; i++) replies.push(responseOf(yield* raw.next))
      expect(replies[0]?.id).toBe("b-big")
      expect(replies.slice(1, count + 1).every((r) => !("id" in r) && errorOf(r).code === -32700)).toBe(true)
      expect(replies[count + 1]?.id).toBe("b-ping")
      yield* raw.send(request("b-after", "ping"))
      expect(responseOf(yield* raw.next).id).toBe("b-after")
      yield* raw.end
      expect(yield* raw.exitCode).toBe(0)
    }))

  it.scopedLive("a closed stdout (EPIPE) ends serving with an error on stderr; the process exits 1 at stdin EOF", () =>
    Effect.gen(function*() {
      const raw = yield* startRaw()
      yield* raw.send(call("before", "echo", { text: "a" }))
      expect(responseOf(yield* raw.next).id).toBe("before")
      yield* raw.closeStdout
      yield* raw.send(call("after", "echo", { text: "b" }))
      yield* raw.waitStderr("the stdio server failed")
      expect(raw.stderr()).toContain("writing to stdout failed")
      yield* raw.end
      expect(yield* raw.exitCode).toBe(1)
    }))

  it.scopedLive("closing stdin lets requests in flight finish, ends listens gracefully, flushes, exits 0", () =>
    Effect.gen(function*() {
      const raw = yield* startRaw()
      yield* raw.send(
        request("listen-1", "subscriptions/listen", { notifications: { toolsListChanged: true }, _meta: META })
      )
      const ack = notificationOf(yield* raw.next)
      expect(ack.method).toBe("notifications/subscriptions/acknowledged")
      yield* raw.send(call("drain", "slow", { ms: 300 }))
      yield* raw.send(call("flush", "big", { bytes: 2 * 1024 * 1024 }))
      const started = Date.now()
      yield* raw.end
      expect(yield* raw.exitCode).toBe(0)
      expect(Date.now() - started).toBeLessThan(4_000) // the listen did not wait for the drain timeout
      const replies = raw.lines().slice(1).map(responseOf)
      expect(replies.map((r) => String(r.id)).sort()).toEqual(["drain", "flush", "listen-1"])
      const flushed = replies.find((r) => r.id === "flush")
      expect(flushed && textOf(flushed).length).toBe(2 * 1024 * 1024)
      const listen = replies.find((r) => r.id === "listen-1")
      expect(listen && resultOf(listen)).toMatchObject({
        resultType: "complete",
        _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" }
      })
      assertAllJsonRpc(raw.lines())
    }))

  it.scopedLive("requests still running after drainTimeout are interrupted, unanswered", () =>
    Effect.gen(function*() {
      const raw = yield* startRaw(["--drain-timeout-ms", "200"])
      yield* raw.send(call("stuck", "slow", { ms: 30_000 }))
      yield* Effect.sleep("100 millis")
      const started = Date.now()
      yield* raw.end
      expect(yield* raw.exitCode).toBe(0)
      expect(Date.now() - started).toBeLessThan(5_000)
      expect(raw.stderr()).toContain("slow interrupted")
      expect(raw.stderr()).toContain("after the drain timeout") // the server's log went to stderr…
      expect(raw.lines()).toEqual([]) // …and nothing to stdout
    }))
})

// ---------------------------------------------------------------------------------------------
// client: Stdio.spawn
// ---------------------------------------------------------------------------------------------

interface Spawned {
  readonly transport: Stdio.StdioClientTransport
  readonly stderr: Ref.Ref<ReadonlyArray<string>>
  readonly waitStderr: (text: string, count?: number) => Effect.Effect<void>
}

const spawnFixture = (
  fixture: string,
  options: Partial<Stdio.SpawnOptions> = {}
): Effect.Effect<Spawned, TransportError, Scope.Scope> =>
  Effect.gen(function*() {
    const stderr = yield* Ref.make<ReadonlyArray<string>>([])
    const transport = yield* Stdio.spawn({
      command: process.execPath,
      args: [...NODE_ARGS, fixture, ...(options.args ?? [])],
      cwd: ROOT,
      stderr: (text) => Ref.update(stderr, (lines) => [...lines, text]),
      ...(options.closeTimeout === undefined ? {} : { closeTimeout: options.closeTimeout }),
      ...(options.onNotification === undefined ? {} : { onNotification: options.onNotification }),
      ...(options.restart === undefined ? {} : { restart: options.restart })
    })
    const waitStderr = (text: string, n = 1): Effect.Effect<void> =>
      eventually(
        `stderr "${text}" ×${n}`,
        Effect.map(Ref.get(stderr), (lines) => lines.filter((l) => l.includes(text)).length >= n)
      )
    yield* waitStderr("ready pid=")
    return { transport, stderr, waitStderr }
  })

class ClientA extends Context.Tag("test/Stdio/ClientA")<ClientA, Spawned>() {}

layer(Layer.scoped(ClientA, Effect.orDie(spawnFixture(SERVER))), { excludeTestServices: true, timeout: WAIT })(
  "Stdio.spawn (fixture server)",
  (it) => {
    it.effect("request/response, ids echoed exactly (id 0)", () =>
      Effect.gen(function*() {
        const { transport } = yield* ClientA
        expect(yield* transport.request(JsonRpc.request(0, "ping"))).toEqual({ jsonrpc: "2.0", id: 0, result: {} })
        const echo = yield* transport.request(JsonRpc.request("e-1", "tools/call", {
          name: "echo",
          arguments: { text: "héllo 世界" },
          _meta: META
        }))
        expect(echo.id).toBe("e-1")
        expect(textOf(echo)).toBe("héllo 世界")
        const error = yield* transport.request(JsonRpc.request(2, "tools/list", {
          _meta: { ...META, "io.modelcontextprotocol/protocolVersion": "1999-01-01" }
        }))
        expect(errorOf(error).code).toBe(-32022)
      }))

    it.effect("progress reaches the request's onNotification; interrupting sends notifications/cancelled", () =>
      Effect.gen(function*() {
        const { transport, waitStderr } = yield* ClientA
        const progressed = yield* Deferred.make<JsonRpc.Notification>()
        const fiber = yield* transport.request(
          JsonRpc.request(7, "tools/call", {
            name: "slow",
            arguments: { ms: 10_000 },
            _meta: { ...META, progressToken: 7 }
          }),
          { onNotification: (n) => Deferred.succeed(progressed, n) }
        ).pipe(Effect.fork)
        const progress = yield* Deferred.await(progressed).pipe(Effect.timeout(WAIT))
        expect(progress.method).toBe("notifications/progress")
        expect(progress.params?.progressToken).toBe(7)
        yield* Fiber.interrupt(fiber).pipe(Effect.timeout(WAIT))
        yield* waitStderr("slow interrupted", 1)
        expect(yield* transport.request(JsonRpc.request(8, "ping"))).toEqual({ jsonrpc: "2.0", id: 8, result: {} })
      }))

    it.effect("notify writes a notification (a cancel sent by hand interrupts the handler)", () =>
      Effect.gen(function*() {
        const { transport, waitStderr } = yield* ClientA
        const progressed = yield* Deferred.make<void>()
        const fiber = yield* transport.request(
          JsonRpc.request("n-1", "tools/call", {
            name: "slow",
            arguments: { ms: 10_000 },
            _meta: { ...META, progressToken: "n-1" }
          }),
          { onNotification: () => Deferred.succeed(progressed, undefined) }
        ).pipe(Effect.fork)
        yield* Deferred.await(progressed).pipe(Effect.timeout(WAIT))
        yield* transport.notify(JsonRpc.notification("notifications/cancelled", { requestId: "n-1" }))
        yield* waitStderr("slow interrupted", 2)
        expect(fiber.unsafePoll()).toBeNull() // no reply comes for a cancelled request
        yield* Fiber.interrupt(fiber)
      }))

    it.effect("a request past its timeout fails with TransportError Timeout and is cancelled on the wire", () =>
      Effect.gen(function*() {
        const { transport, waitStderr } = yield* ClientA
        const error = yield* transport.request(
          JsonRpc.request("t-1", "tools/call", { name: "slow", arguments: { ms: 10_000 }, _meta: META }),
          { timeout: "200 millis" }
        ).pipe(Effect.flip)
        expect(error).toMatchObject({ _tag: "TransportError", reason: "Timeout" })
        yield* waitStderr("slow interrupted", 3)
        // a request within its timeout is answered; the transport is still usable
        expect(yield* transport.request(JsonRpc.request("t-2", "ping"), { timeout: WAIT })).toEqual({
          jsonrpc: "2.0",
          id: "t-2",
          result: {}
        })
      }))
  }
)

describe("Stdio.spawn (process lifetime)", () => {
  it.scopedLive("pending requests fail with TransportError Closed when the process dies", () =>
    Effect.gen(function*() {
      const { transport } = yield* spawnFixture(SERVER)
      const progressed = yield* Deferred.make<void>()
      const fiber = yield* transport.request(
        JsonRpc.request(1, "tools/call", {
          name: "slow",
          arguments: { ms: 10_000 },
          _meta: { ...META, progressToken: 1 }
        }),
        { onNotification: () => Deferred.succeed(progressed, undefined) }
      ).pipe(Effect.fork)
      yield* Deferred.await(progressed).pipe(Effect.timeout(WAIT))
      process.kill(transport.pid, "SIGKILL")
      const error = yield* Fiber.join(fiber).pipe(Effect.flip, Effect.timeout(WAIT))
      expect(error._tag).toBe("TransportError")
      expect(error.reason).toBe("Closed")
      const after = yield* Effect.flip(transport.request(JsonRpc.request(2, "ping")))
      expect(after.reason).toBe("Closed")
    }))

  it.scopedLive("closing the Scope ends the process (stdin EOF), and later calls fail Closed", () =>
    Effect.gen(function*() {
      const transportScope = yield* Scope.make()
      const { transport, waitStderr } = yield* Scope.extend(spawnFixture(SERVER), transportScope)
      expect(yield* transport.request(JsonRpc.request(1, "ping"))).toEqual({ jsonrpc: "2.0", id: 1, result: {} })
      yield* Scope.close(transportScope, Exit.void).pipe(Effect.timeout(WAIT))
      expect(isGone(transport.pid)).toBe(true)
      yield* waitStderr("stdin closed, exiting")
      expect((yield* Effect.flip(transport.request(JsonRpc.request(2, "ping")))).reason).toBe("Closed")
      expect((yield* Effect.flip(transport.notify(JsonRpc.notification("notifications/initialized")))).reason)
        .toBe("Closed")
      yield* Scope.close(transportScope, Exit.void) // idempotent
    }))

  it.live("interrupting the fiber that owns the Scope leaves no child behind", () =>
    Effect.gen(function*() {
      const pid = yield* Deferred.make<number>()
      const fiber = yield* Effect.scoped(Effect.gen(function*() {
        const { transport } = yield* spawnFixture(SERVER)
        yield* Deferred.succeed(pid, transport.pid)
        return yield* Effect.never
      })).pipe(Effect.fork)
      const child = yield* Deferred.await(pid).pipe(Effect.timeout(WAIT))
      expect(isGone(child)).toBe(false)
      yield* Fiber.interrupt(fiber).pipe(Effect.timeout(WAIT))
      expect(isGone(child)).toBe(true)
    }))

  it.scopedLive("restart: a killed process is started again; the request in flight fails Closed, a request sent meanwhile waits for the new process, the legacy handshake is replayed", () =>
    Effect.gen(function*() {
      const { transport, waitStderr } = yield* spawnFixture(SERVER, {
        restart: Schedule.spaced("50 millis").pipe(Schedule.intersect(Schedule.recurs(2)))
      })
      const init = yield* transport.request(JsonRpc.request("init", "initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "t", version: "1" }
      })).pipe(Effect.timeout(WAIT))
      assert(!JsonRpc.isErrorResponse(init))
      yield* transport.notify(JsonRpc.notification("notifications/initialized"))
      const first = transport.pid
      const session = yield* transport.sessionNotifications
      const sessionEnded = yield* Effect.fork(Stream.runDrain(session))
      const inFlight = yield* transport.request(
        JsonRpc.request(1, "tools/call", { name: "slow", arguments: { ms: 10_000 } })
      )
        .pipe(Effect.fork)
      yield* Effect.sleep("100 millis")
      process.kill(first, "SIGKILL")
      expect((yield* Fiber.join(inFlight).pipe(Effect.flip, Effect.timeout(WAIT))).reason).toBe("Closed")
      // the open session stream ends with the process it belonged to
      expect((yield* Fiber.join(sessionEnded).pipe(Effect.flip, Effect.timeout(WAIT))).reason).toBe("Closed")
      // sent while the new process starts: waits, then is answered by it (in its legacy session)
      const echoed = yield* transport.request(
        JsonRpc.request(2, "tools/call", { name: "echo", arguments: { text: "again" } })
      )
        .pipe(Effect.timeout(WAIT))
      expect(textOf(echoed)).toBe("again")
      expect(transport.pid).not.toBe(first)
      yield* waitStderr("ready pid=", 2)
      // a list change reaches only an initialized legacy session: the replay made it one
      const next = yield* transport.sessionNotifications
      const changed = yield* Effect.fork(Stream.runHead(next))
      yield* transport.request(JsonRpc.request(3, "tools/call", { name: "touch", arguments: {} })).pipe(
        Effect.timeout(WAIT)
      )
      const n = yield* Fiber.join(changed).pipe(Effect.timeout(WAIT))
      expect(Option.getOrUndefined(n)?.method).toBe("notifications/tools/list_changed")
    }))

  it.scopedLive("restart: a request's timeout also bounds its wait for the restarted process", () =>
    Effect.gen(function*() {
      const { transport, waitStderr } = yield* spawnFixture(SERVER, {
        restart: Schedule.spaced("2 seconds").pipe(Schedule.intersect(Schedule.recurs(1)))
      })
      const first = transport.pid
      const lost = yield* Effect.fork(transport.request(JsonRpc.request(1, "tools/call", {
        name: "slow",
        arguments: { ms: 10_000 },
        _meta: META
      })))
      yield* Effect.sleep("100 millis")
      process.kill(first, "SIGKILL")
      expect((yield* Fiber.join(lost).pipe(Effect.flip, Effect.timeout(WAIT))).reason).toBe("Closed")
      // the next process starts 2 seconds later: a request with a 200 ms timeout does not wait for it
      const timedOut = yield* transport.request(JsonRpc.request(2, "ping"), { timeout: "200 millis" }).pipe(
        Effect.flip,
        Effect.timeout(WAIT)
      )
      expect(timedOut.reason).toBe("Timeout")
      // one without a timeout waits and is answered by the new process
      expect(yield* transport.request(JsonRpc.request(3, "ping")).pipe(Effect.timeout(WAIT))).toEqual({
        jsonrpc: "2.0",
        id: 3,
        result: {}
      })
      yield* waitStderr("ready pid=", 2)
    }))

  it.scopedLive("restart: when the schedule is done, the transport is closed for good", () =>
    Effect.gen(function*() {
      const { transport } = yield* spawnFixture(SERVER, {
        // a schedule that allows no restart
        restart: Schedule.recurs(0)
      })
      process.kill(transport.pid, "SIGKILL")
      const lost = yield* transport.request(JsonRpc.request(1, "ping")).pipe(Effect.flip, Effect.timeout(WAIT))
      expect(lost.reason).toBe("Closed")
      // no new process is coming: a later call fails at once
      const after = yield* transport.request(JsonRpc.request(2, "ping")).pipe(Effect.flip, Effect.timeout("1 second"))
      expect(after.reason).toBe("Closed")
    }))

  it.live("a program that cannot be started fails with TransportError Spawn", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Effect.scoped(Stdio.spawn({ command: "/nonexistent/presa-mcp-server" })))
      expect(error.reason).toBe("Spawn")
    }))
})

describe("Stdio.spawn (scripted peer)", () => {
  it.scopedLive("skips junk, answers server requests, matches ids by exact type, routes notifications", () =>
    Effect.gen(function*() {
      const unrouted = yield* Ref.make<ReadonlyArray<string>>([])
      const { transport, waitStderr, stderr } = yield* spawnFixture(FAKE, {
        onNotification: (n) => Ref.update(unrouted, (all) => [...all, n.method])
      })
      // the peer sent junk, a response to an unknown id and an id-less error first: still connected
      const tricky = yield* transport.request(JsonRpc.request(7, "tricky"))
      expect(tricky).toEqual({ jsonrpc: "2.0", id: 7, result: { right: true } })

      // legacy server → client requests: ping → {}, anything else → -32601
      yield* waitStderr("GOT", 2)
      const got = (yield* Ref.get(stderr)).filter((l) => l.startsWith("GOT ")).map((l) => responseOf(l.slice(4)))
      expect(got.find((r) => r.id === "srv-1")).toEqual({ jsonrpc: "2.0", id: "srv-1", result: {} })
      const rejected = got.find((r) => r.id === "srv-2")
      expect(rejected && errorOf(rejected).code).toBe(-32601)

      // progress by token to its request only; log messages to the requests in flight
      const seen = yield* Ref.make<ReadonlyArray<JsonRpc.Notification>>([])
      const chatty = yield* transport.request(
        JsonRpc.request(8, "chatty", { _meta: { progressToken: "tok-8" } }),
        { onNotification: (n) => Ref.update(seen, (all) => [...all, n]) }
      )
      expect(resultOf(chatty)).toEqual({ done: true })
      const routed = yield* Ref.get(seen)
      expect(routed.map((n) => n.method)).toEqual(["notifications/progress", "notifications/message"])
      expect(routed[0]?.params?.progressToken).toBe("tok-8")
      expect(yield* Ref.get(unrouted)).toEqual(["notifications/tools/list_changed"])
    }))

  it.scopedLive("a flood of notifications reaches the handler whole and in order, before the response that follows it", () =>
    Effect.gen(function*() {
      // More lines than the client queues before it pauses the pipe (256): the handler holds
      // the first one until the rest are read, so the pipe is paused and must resume. Nothing is
      // lost, and the response written after them does not overtake them.
      const count = 5_000
      const { transport } = yield* spawnFixture(FAKE)
      const gate = yield* Deferred.make<void>()
      yield* Deferred.succeed(gate, undefined).pipe(Effect.delay("300 millis"), Effect.forkScoped)
      const seen: Array<unknown> = []
      const response = yield* transport.request(
        JsonRpc.request(9, "flood", { count, _meta: { progressToken: "tok-9" } }),
        {
          onNotification: (n) =>
            Effect.zipRight(
              n.params?.progress === 1 ? Deferred.await(gate) : Effect.void,
              Effect.sync(() => seen.push(n.params?.progress))
            )
        }
      ).pipe(Effect.timeout(WAIT))
      expect(resultOf(response)).toEqual({ flooded: count })
      expect(seen.length).toBe(count)
      expect(seen).toEqual(Array.from({ length: count }, (_, i) => i + 1))
    }))

  it.scopedLive("closing the Scope escalates to SIGTERM, then SIGKILL, for a server that ignores both EOF and SIGTERM", () =>
    Effect.gen(function*() {
      const transportScope = yield* Scope.make()
      const { transport, stderr } = yield* Scope.extend(
        spawnFixture(FAKE, { args: ["--stubborn"], closeTimeout: "200 millis" }),
        transportScope
      )
      const hanging = yield* transport.request(JsonRpc.request(1, "hang")).pipe(Effect.fork)
      const started = Date.now()
      yield* Scope.close(transportScope, Exit.void).pipe(Effect.timeout(WAIT))
      expect(Date.now() - started).toBeLessThan(3_000)
      expect(isGone(transport.pid)).toBe(true)
      expect((yield* Ref.get(stderr)).some((l) => l.includes("ignoring SIGTERM"))).toBe(true)
      const error = yield* Fiber.join(hanging).pipe(Effect.flip)
      expect(error.reason).toBe("Closed")
    }))
})
