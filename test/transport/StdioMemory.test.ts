/**
 * `Stdio.serve` over in-memory streams (no process): exact framing at every chunk boundary, the
 * line-length bound, the single writer, shutdown, and failures of the sink.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Sink from "effect/Sink"
import * as JsonRpc from "../../src/JsonRpc.js"
import * as McpSchema from "../../src/McpSchema.js"
import * as McpServer from "../../src/McpServer.js"
import * as Tool from "../../src/Tool.js"
import type { TransportError } from "../../src/Transport.js"
import * as Stdio from "../../src/transport/Stdio.js"

const META: JsonRpc.JsonObject = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {}
}

const call = (id: JsonRpc.RequestId, name: string, args: JsonRpc.JsonObject): JsonRpc.Request =>
  JsonRpc.request(id, "tools/call", { name, arguments: args, _meta: META })

const tools = (started: Deferred.Deferred<void>) => [
  Tool.make({
    name: "echo",
    parameters: Schema.Struct({ text: Schema.String }),
    handler: ({ text }) => text
  }),
  Tool.make({
    name: "slow",
    parameters: Schema.Struct({ ms: Schema.Number }),
    handler: ({ ms }) =>
      Deferred.succeed(started, undefined).pipe(
        Effect.zipRight(Effect.sleep(`${ms} millis`)),
        Effect.as(`slept ${ms}ms`)
      )
  })
]

const responseOf = (text: string): JsonRpc.Response => {
  const c = JsonRpc.parse(text)
  if (c._tag !== "Response") throw new Error(`expected a response, got ${text.slice(0, 200)}`)
  return c.message
}

const textOf = (r: JsonRpc.Response): string => {
  if (JsonRpc.isErrorResponse(r)) throw new Error(`expected a result, got ${JSON.stringify(r)}`)
  const block = Schema.decodeUnknownSync(McpSchema.CallToolResult)(r.result).content[0]
  if (block === undefined || block.type !== "text") throw new Error("expected a text block")
  return block.text
}

interface Harness {
  readonly push: (data: string | Uint8Array) => Effect.Effect<void>
  readonly end: Effect.Effect<void>
  readonly next: Effect.Effect<string>
  /** Lines written so far and not yet taken. */
  readonly pending: Effect.Effect<ReadonlyArray<string>>
  readonly started: Deferred.Deferred<void>
  readonly fiber: Fiber.RuntimeFiber<void, TransportError>
}

const harness = (
  options: { readonly maxLineBytes?: number; readonly drainTimeout?: Duration.DurationInput } = {}
): Effect.Effect<Harness, never, Scope.Scope> =>
  Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    const server = yield* Effect.orDie(McpServer.make({ name: "memory", version: "0.1.0", tools: tools(started) }))
    const stdin = yield* Mailbox.make<Uint8Array>()
    const out = yield* Queue.unbounded<string>()
    const decoder = new TextDecoder()
    let partial = ""
    const stdout = Sink.forEach((bytes: Uint8Array) =>
      Effect.sync(() => {
        const parts = (partial + decoder.decode(bytes, { stream: true })).split("\n")
        partial = parts.pop() ?? ""
        for (const part of parts) Queue.unsafeOffer(out, part)
      })
    )
    const fiber = yield* Stdio.serve(server, {
      stdin: Mailbox.toStream(stdin),
      stdout,
      ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
      ...(options.drainTimeout === undefined ? {} : { drainTimeout: options.drainTimeout })
    }).pipe(Effect.forkScoped)
    const encoder = new TextEncoder()
    return {
      push: (data) => Effect.asVoid(stdin.offer(typeof data === "string" ? encoder.encode(data) : data)),
      end: Effect.asVoid(stdin.end),
      next: Queue.take(out).pipe(
        Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error("no line") }),
        Effect.orDie
      ),
      pending: Effect.map(Queue.takeAll(out), (c) => Array.from(c)),
      started,
      fiber
    }
  })

const line = (message: JsonRpc.Message): string => JSON.stringify(message) + "\n"

describe("Stdio.serve (in memory)", () => {
  it.scopedLive("decodes a message split at every byte offset (2-, 3- and 4-byte UTF-8)", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const text = "héllo 世界 🎉"
      const bytes = new TextEncoder().encode(line(call("x", "echo", { text })))
      for (let at = 1; at < bytes.length; at++) {
        const one = new TextEncoder().encode(line(call(at, "echo", { text })))
        yield* h.push(one.slice(0, at))
        yield* h.push(one.slice(at))
        const reply = responseOf(yield* h.next)
        expect(reply.id).toBe(at)
        expect(textOf(reply)).toBe(text)
      }
    }))

  it.scopedLive("maxLineBytes is exact: a line of N bytes passes, N + 1 gets -32600 without id", () =>
    Effect.gen(function*() {
      const h = yield* harness({ maxLineBytes: 100 })
      const ping = JSON.stringify(JsonRpc.request(1, "ping"))
      yield* h.push(ping.padEnd(100, " ") + "\n")
      expect(responseOf(yield* h.next)).toEqual({ jsonrpc: "2.0", id: 1, result: {} })
      yield* h.push(ping.padEnd(101, " ") + "\n")
      const rejected = responseOf(yield* h.next)
      expect(JsonRpc.isErrorResponse(rejected) && rejected.error.code).toBe(-32600)
      expect("id" in rejected).toBe(false)
      // a long line trickling in 7-byte chunks is still dropped whole, once
      const long = line(call(2, "echo", { text: "y".repeat(1000) }))
      for (let i = 0; i < long.length; i += 7) yield* h.push(long.slice(i, i + 7))
      yield* h.push(line(JsonRpc.request(3, "ping")))
      const again = responseOf(yield* h.next)
      expect(JsonRpc.isErrorResponse(again) && again.error.code).toBe(-32600)
      expect(responseOf(yield* h.next).id).toBe(3)
    }))

  it.scopedLive("responses and notifications from the peer get no reply; a last line without \\n is served", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      yield* h.push(line(JsonRpc.success(5, {})))
      yield* h.push(line(JsonRpc.notification("notifications/initialized")))
      yield* h.push(JSON.stringify(JsonRpc.request(6, "ping")))
      yield* h.end
      yield* Fiber.join(h.fiber)
      expect((yield* h.pending).map(responseOf)).toEqual([{ jsonrpc: "2.0", id: 6, result: {} }])
    }))

  it.scopedLive("errors without a readable id: no id, or \"id\": null in a 2025-06-18 session", () =>
    Effect.gen(function*() {
      const h = yield* harness({ maxLineBytes: 200 })
      yield* h.push("not json\n")
      expect("id" in responseOf(yield* h.next)).toBe(false)
      yield* h.push(line(JsonRpc.request("init", "initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "memory-test", version: "1.0.0" }
      })))
      expect(responseOf(yield* h.next).id).toBe("init")
      yield* h.push("not json\n")
      yield* h.push("[]\n")
      yield* h.push(" ".repeat(300) + "\n")
      for (const code of [-32700, -32600, -32600]) {
        const text = yield* h.next
        const wire: unknown = JSON.parse(text)
        expect(JsonRpc.isObject(wire) && "id" in wire && wire.id === null, text).toBe(true)
        const reply = responseOf(text)
        expect(JsonRpc.isErrorResponse(reply) && reply.error.code).toBe(code)
      }
    }))

  it.scopedLive("a request reusing the id of one in flight is ignored", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      yield* h.push(line(call("dup", "slow", { ms: 100 })))
      yield* Deferred.await(h.started)
      yield* h.push(line(call("dup", "echo", { text: "second" })))
      const reply = responseOf(yield* h.next)
      expect(reply.id).toBe("dup")
      expect(textOf(reply)).toBe("slept 100ms")
      yield* h.end
      yield* Fiber.join(h.fiber)
      expect(yield* h.pending).toEqual([])
    }))

  it.scopedLive("concurrent large replies are written as whole lines", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const text = "z".repeat(200_000)
      for (let i = 0; i < 20; i++) yield* h.push(line(call(i, "echo", { text })))
      yield* h.end
      yield* Fiber.join(h.fiber)
      const replies = (yield* h.pending).map(responseOf)
      expect(replies.map((r) => r.id).sort((a, b) => Number(a) - Number(b))).toEqual(
        Array.from({ length: 20 }, (_, i) => i)
      )
      for (const r of replies) expect(textOf(r).length).toBe(200_000)
    }))

  it.scopedLive("at EOF, requests past drainTimeout are interrupted and unanswered; serve returns", () =>
    Effect.gen(function*() {
      const h = yield* harness({ drainTimeout: "100 millis" })
      yield* h.push(line(call("stuck", "slow", { ms: 60_000 })))
      yield* h.push(line(call("quick", "slow", { ms: 20 })))
      yield* Deferred.await(h.started)
      yield* h.end
      yield* Fiber.join(h.fiber).pipe(Effect.timeout("5 seconds"))
      expect((yield* h.pending).map((l) => responseOf(l).id)).toEqual(["quick"])
    }))

  it.scopedLive("a failing stdout ends serve with TransportError Closed", () =>
    Effect.gen(function*() {
      const server = yield* Effect.orDie(McpServer.make({ name: "memory", version: "0.1.0" }))
      const stdin = yield* Mailbox.make<Uint8Array>()
      const fiber = yield* Stdio.serve(server, {
        stdin: Mailbox.toStream(stdin),
        stdout: Sink.forEach((_: Uint8Array) => Effect.fail("EPIPE" as const))
      }).pipe(Effect.fork)
      yield* stdin.offer(new TextEncoder().encode(line(JsonRpc.request(1, "ping"))))
      const exit = yield* Fiber.await(fiber).pipe(Effect.timeout("5 seconds"))
      expect(Exit.isFailure(exit)).toBe(true)
      const error = yield* Effect.flip(Fiber.join(fiber))
      expect(error._tag).toBe("TransportError")
      expect(error.reason).toBe("Closed")
      expect(error.cause).toBe("EPIPE")
    }))

  it.scopedLive("layerServer serves the McpServer service in the background", () =>
    Effect.gen(function*() {
      const stdin = yield* Mailbox.make<Uint8Array>()
      const out = yield* Queue.unbounded<Uint8Array>()
      yield* Layer.build(
        Stdio.layerServer({
          stdin: Mailbox.toStream(stdin),
          stdout: Sink.forEach((b: Uint8Array) => Queue.offer(out, b))
        })
          .pipe(Layer.provide(McpServer.layer({ name: "layered", version: "0.1.0" })))
      )
      yield* stdin.offer(new TextEncoder().encode(line(JsonRpc.request("L", "ping"))))
      const bytes = yield* Queue.take(out).pipe(Effect.timeout("5 seconds"))
      expect(new TextDecoder().decode(bytes)).toBe("{\"jsonrpc\":\"2.0\",\"id\":\"L\",\"result\":{}}\n")
    }))
})
