/**
 * The public connection seam (`presa-mcp/Connection`) in memory: `serve` over a `Stream` of message
 * texts, `send` collecting what the connection writes.
 * - at `maxInFlight`, a request waits in the queue while the reader goes on; cancelling it drops it
 *   unstarted and nothing answers it; the running request answers;
 * - `overflow: "reject"` with a full queue answers -32603 "Server busy" at once, unstarted;
 * - `receive` never answers a notification, and answers a text that is not JSON with -32700.
 * Every wait is bounded.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Mailbox from "effect/Mailbox"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Connection from "../src/Connection.js"
import * as JsonRpc from "../src/JsonRpc.js"
import * as McpServer from "../src/McpServer.js"
import * as Tool from "../src/Tool.js"

const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.timeoutFail(effect, { duration: "10 seconds", onTimeout: () => new Error("timed out") })

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {}
}

const call = (id: JsonRpc.RequestId, tag: string): string =>
  JsonRpc.encode(JsonRpc.request(id, "tools/call", { name: "gated", arguments: { tag }, _meta: META }))

/** A server whose `gated` tool records its start and waits for `gate`. */
const makeServer = Effect.gen(function*() {
  const gate = yield* Deferred.make<void>()
  const starts = yield* Ref.make<ReadonlyArray<string>>([])
  const gated = Tool.make({
    name: "gated",
    parameters: Schema.Struct({ tag: Schema.String }),
    handler: ({ tag }) =>
      Ref.update(starts, (s) => [...s, tag]).pipe(Effect.zipRight(Deferred.await(gate)), Effect.as(tag))
  })
  const server = yield* McpServer.make({ name: "seam", version: "1.0.0", tools: [gated] })
  return { server, gate, starts }
})

/** What `send` received, parsed. */
const collector = Effect.map(Ref.make<ReadonlyArray<JsonRpc.Classified>>([]), (sent) => ({
  send: (text: string) => Ref.update(sent, (s) => [...s, JsonRpc.parse(text)]),
  responses: Effect.map(
    Ref.get(sent),
    (s) => s.flatMap((c) => c._tag === "Response" ? [c.message] : [])
  )
}))

const waitUntil = (check: Effect.Effect<boolean>) =>
  bounded(Effect.asVoid(Effect.repeat(check, { until: (ok) => ok, schedule: Schedule.spaced("5 millis") })))

describe("Connection (public seam, in memory)", () => {
  it.live("a waiting request cancelled while the reader goes on never starts and gets no reply", () =>
    Effect.gen(function*() {
      const { gate, server, starts } = yield* makeServer
      const out = yield* collector
      const inbox = yield* Mailbox.make<string>()
      const serving = yield* Effect.fork(Connection.serve(server, {
        incoming: Mailbox.toStream(inbox),
        send: out.send,
        maxInFlight: 1,
        maxQueued: 4
      }))
      yield* inbox.offer(call(1, "first"))
      yield* waitUntil(Effect.map(Ref.get(starts), (s) => s.length === 1))
      yield* inbox.offer(call(2, "waiting"))
      yield* inbox.offer(
        JsonRpc.encode(JsonRpc.notification("notifications/cancelled", { requestId: 2, reason: "no longer needed" }))
      )
      yield* inbox.offer("{not json")
      // the reader went on past the waiting request: the -32700 is out while `first` still runs
      yield* waitUntil(Effect.map(out.responses, (r) => r.length === 1))
      const [parseError] = yield* out.responses
      assert(parseError !== undefined && JsonRpc.isErrorResponse(parseError))
      expect(parseError.error.code).toBe(-32700)
      yield* Deferred.succeed(gate, undefined)
      yield* inbox.end
      yield* bounded(Fiber.join(serving))
      const responses = yield* out.responses
      expect(responses.map((r) => r.id)).toEqual([undefined, 1])
      expect(yield* Ref.get(starts)).toEqual(["first"])
    }))

  it.live("overflow: \"reject\": a request beyond the slots and the queue gets -32603 Server busy, unstarted", () =>
    Effect.gen(function*() {
      const { gate, server, starts } = yield* makeServer
      const out = yield* collector
      const inbox = yield* Mailbox.make<string>()
      const serving = yield* Effect.fork(Connection.serve(server, {
        incoming: Mailbox.toStream(inbox),
        send: out.send,
        maxInFlight: 1,
        maxQueued: 1,
        overflow: "reject"
      }))
      yield* inbox.offer(call("a", "a"))
      yield* waitUntil(Effect.map(Ref.get(starts), (s) => s.length === 1))
      yield* inbox.offer(call("b", "b"))
      yield* inbox.offer(call("c", "c"))
      yield* waitUntil(Effect.map(out.responses, (r) => r.length === 1))
      const [busy] = yield* out.responses
      assert(busy !== undefined && JsonRpc.isErrorResponse(busy))
      expect(busy.id).toBe("c")
      expect(busy.error).toEqual({ code: -32603, message: "Server busy: too many requests in flight; retry later" })
      yield* Deferred.succeed(gate, undefined)
      yield* inbox.end
      yield* bounded(Fiber.join(serving))
      expect((yield* out.responses).map((r) => r.id)).toEqual(["c", "a", "b"])
      expect(yield* Ref.get(starts)).toEqual(["a", "b"])
    }))
})
