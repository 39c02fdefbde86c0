/**
 * The client's connection core (`internal/client/connection.ts`), through the public client
 * transports:
 *
 * - stdio (`Stdio.spawn`) against `test/fixtures/client-core-peer.ts`, a scripted peer: responses
 *   out of order, a response for an id nobody asked for, a server→client request answered while a
 *   call is pending, and a request given up (interrupted, or past its timeout) told to the peer
 *   with `notifications/cancelled`, its late response dropped;
 * - Streamable HTTP (`StreamableHttp.client` against `StreamableHttp.serve`): a request past its
 *   timeout aborts its POST (the server's handler is interrupted) and the next call goes through.
 *
 * Every wait is bounded.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as JsonRpc from "../../src/JsonRpc.js"
import * as McpSchema from "../../src/McpSchema.js"
import * as McpServer from "../../src/McpServer.js"
import * as Tool from "../../src/Tool.js"
import type { TransportError } from "../../src/Transport.js"
import * as Stdio from "../../src/transport/Stdio.js"
import * as StreamableHttp from "../../src/transport/StreamableHttp.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const PEER = Path.join(ROOT, "test", "fixtures", "client-core-peer.ts")
const WAIT: Duration.DurationInput = "15 seconds"
const ROOTS = { roots: [{ uri: "file:///tmp/core", name: "core" }] }

interface Peer {
  readonly transport: Stdio.StdioClientTransport
  readonly waitStderr: (text: string) => Effect.Effect<void>
}

const spawnPeer: Effect.Effect<Peer, TransportError, Scope.Scope> = Effect.gen(function*() {
  const stderr = yield* Ref.make<ReadonlyArray<string>>([])
  const transport = yield* Stdio.spawn({
    command: process.execPath,
    args: ["--import", "tsx", PEER],
    cwd: ROOT,
    stderr: (line) => Ref.update(stderr, (lines) => [...lines, line]),
    onRequest: (request) => Effect.succeed(JsonRpc.success(request.id, ROOTS))
  })
  const waitStderr = (text: string): Effect.Effect<void> =>
    Ref.get(stderr).pipe(
      Effect.repeat({ until: (lines) => lines.some((l) => l.includes(text)), schedule: Schedule.spaced("20 millis") }),
      Effect.timeoutFail({ duration: WAIT, onTimeout: () => new Error(`timed out waiting for stderr "${text}"`) }),
      Effect.orDie,
      Effect.asVoid
    )
  yield* waitStderr("[client-core-peer] ready")
  return { transport, waitStderr }
})

const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.timeoutFail(effect, { duration: WAIT, onTimeout: () => new Error("timed out") })

describe("the client connection core, over stdio", () => {
  it.scopedLive(
    "a later request answered first; a stray id ignored; the server's request answered while a call is pending",
    () =>
      Effect.gen(function*() {
        const { transport, waitStderr } = yield* spawnPeer
        const held = yield* Effect.fork(transport.request(JsonRpc.request(1, "held")))
        yield* waitStderr("HELD 1")
        // the peer asked roots/list while request 1 is pending: answered by the transport's handler
        yield* waitStderr(`GOT ${JSON.stringify({ jsonrpc: "2.0", id: "srv-roots", result: ROOTS })}`)
        // request 2 is answered (after a response for id 424242, which settles nothing); 1 still waits
        const released = yield* bounded(transport.request(JsonRpc.request(2, "release")))
        expect(released).toEqual({ jsonrpc: "2.0", id: 2, result: { released: true } })
        assert.isNull(held.unsafePoll())
        const finished = yield* bounded(transport.request(JsonRpc.request(3, "finish")))
        expect(finished).toEqual({ jsonrpc: "2.0", id: 3, result: { finished: true } })
        expect(yield* bounded(Fiber.join(held))).toEqual({
          jsonrpc: "2.0",
          id: 1,
          result: { held: true, answer: { jsonrpc: "2.0", id: "srv-roots", result: ROOTS } }
        })
      })
  )

  it.scopedLive("an interrupted call sends notifications/cancelled; its late response is dropped", () =>
    Effect.gen(function*() {
      const { transport, waitStderr } = yield* spawnPeer
      const hanging = yield* Effect.fork(transport.request(JsonRpc.request("h-1", "hang")))
      yield* waitStderr(`HANG "h-1"`)
      yield* Fiber.interrupt(hanging)
      yield* waitStderr(`CANCELLED "h-1"`)
      // the peer answered h-1 late: dropped, and the connection goes on
      expect(yield* bounded(transport.request(JsonRpc.request("h-2", "echo")))).toEqual({
        jsonrpc: "2.0",
        id: "h-2",
        result: { method: "echo" }
      })
      assert.isTrue(Exit.isInterrupted(yield* Fiber.await(hanging)))
    }))

  it.scopedLive("a call past its timeout fails Timeout and sends notifications/cancelled", () =>
    Effect.gen(function*() {
      const { transport, waitStderr } = yield* spawnPeer
      const error = yield* Effect.flip(transport.request(JsonRpc.request(8, "hang"), { timeout: "200 millis" }))
      expect(error.reason).toBe("Timeout")
      yield* waitStderr("CANCELLED 8")
      expect(yield* bounded(transport.request(JsonRpc.request(9, "echo")))).toEqual({
        jsonrpc: "2.0",
        id: 9,
        result: { method: "echo" }
      })
    }))
})

describe("the client connection core, over Streamable HTTP", () => {
  it.scopedLive("a call past its timeout aborts its POST: the server's handler is interrupted; the next call goes through", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const server = yield* McpServer.make({
        name: "core-http",
        version: "1.0.0",
        tools: [
          Tool.fromJsonSchema({
            name: "slow",
            handler: () =>
              Deferred.succeed(started, undefined).pipe(
                Effect.zipRight(Effect.never),
                Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
              )
          }),
          Tool.fromJsonSchema({ name: "quick", handler: () => Effect.succeed("quick") })
        ]
      })
      const { url } = yield* StreamableHttp.serve(server)
      const transport = yield* StreamableHttp.client({ url })
      const meta = {
        [McpSchema.MetaKey.protocolVersion]: "2026-07-28",
        [McpSchema.MetaKey.clientCapabilities]: {},
        [McpSchema.MetaKey.clientInfo]: { name: "core-test", version: "1" }
      }
      const call = (id: number, name: string) => JsonRpc.request(id, "tools/call", { name, arguments: {}, _meta: meta })
      const error = yield* Effect.flip(transport.request(call(1, "slow"), { timeout: "300 millis" }))
      expect(error.reason).toBe("Timeout")
      yield* bounded(Deferred.await(started))
      yield* bounded(Deferred.await(interrupted))
      const quick = yield* bounded(transport.request(call(2, "quick")))
      expect(quick).toMatchObject({ jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "quick" }] } })
    }))
})
