/**
 * A legacy request's POST SSE stream, recorded and resumed with a GET (MCP 2025-11-25, Basic,
 * Transports, "Sending Messages to the Server", "Resumability and Redelivery"), one instance over
 * HTTP on 127.0.0.1 port 0 (`StreamableHttp.serve`, and the platform handler on `HttpLayerRouter`).
 *
 * The `stages` tool sends progress 1..3, waits for the test's first gate, sends progress 4, waits
 * for the second gate, sends progress 5 and answers. Raw `fetch` reads the POST's SSE stream and
 * cancels it after a few events; a GET with the last id read gets the missed events, then (the
 * gates opened) the rest live, then the response, and the GET response ends: every event once,
 * in order. A 2025-06-18 session gets no priming event (its events still carry ids). An id this
 * server did not issue for the session replays nothing and is no error. A GET following a stream
 * ends when its request is cancelled (no response will come) or its session is deleted. Our `McpClient` and the
 * official SDK v1 client complete a call whose POST connection a TCP proxy cuts.
 * Every wait is bounded.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import { assert, describe, expect, it } from "@effect/vitest"
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeHttp from "node:http"
import * as McpClient from "../../src/McpClient.js"
import * as McpServer from "../../src/McpServer.js"
import * as StreamableHttp from "../../src/transport/StreamableHttp.js"
import {
  bounded,
  callStages,
  describeEvent,
  makeServer,
  openSession,
  parts,
  read,
  resume,
  run,
  WAIT_MS
} from "../support/PostStream.js"
import * as TcpProxy from "../support/TcpProxy.js"

/**
 * The scenario on `url`: the POST stream read up to `progress 2` and cancelled; progress 4
 * recorded while no connection is open; a GET with the last id read gets progress 3 and 4
 * (replayed), then progress 5 and the response live, and ends.
 */
const cutAndResume = (url: string, open: Effect.Effect<boolean>, version: "2025-11-25" | "2025-06-18") =>
  Effect.gen(function*() {
    const session = yield* openSession(url, version)
    const posted = yield* callStages(url, version, session, 7)
    const primed = version === "2025-11-25"
    const before = yield* read(posted, primed ? 3 : 2)
    expect(before.map(describeEvent)).toEqual([...(primed ? ["priming"] : []), "progress 1", "progress 2"])
    const { key } = parts(before[0]?.id)
    // ids name the stream and count from the priming event
    expect(before.map((e) => parts(e.id))).toEqual(
      (primed ? [0, 1, 2] : [1, 2]).map((n) => ({ key, n }))
    )
    const last = before[before.length - 1]?.id
    assert(last !== undefined)
    yield* posted.cancel()
    yield* open
    const resumed = yield* resume(url, version, session, last)
    const replayed = yield* read(resumed, 2)
    expect(replayed.map(describeEvent)).toEqual(["progress 3", "progress 4"])
    yield* open
    const rest = yield* resumed.rest()
    expect(rest.map(describeEvent)).toEqual(["progress 5", "result staged"])
    expect([...replayed, ...rest].map((e) => parts(e.id))).toEqual([3, 4, 5, 6].map((n) => ({ key, n })))
    return { session, key }
  })

describe("a legacy request's POST stream resumed with a GET (one instance)", () => {
  it.scopedLive("StreamableHttp.serve, 2025-11-25: priming, ids naming the stream; missed events then the rest live, once, in order; then the GET ends", () =>
    Effect.gen(function*() {
      const { open, server } = yield* makeServer()
      const { url } = yield* StreamableHttp.serve(server)
      const { key, session } = yield* cutAndResume(url, open, "2025-11-25")
      // resumed again from the start: the whole stream, once more, up to the response
      const again = yield* resume(url, "2025-11-25", session, `${key}.0`)
      expect((yield* again.rest()).map(describeEvent)).toEqual([
        "progress 1",
        "progress 2",
        "progress 3",
        "progress 4",
        "progress 5",
        "result staged"
      ])
    }))

  it.scopedLive("StreamableHttp.serve, 2025-06-18: no priming event; ids and resumption as for 2025-11-25", () =>
    Effect.gen(function*() {
      const { open, server } = yield* makeServer()
      const { url } = yield* StreamableHttp.serve(server)
      yield* cutAndResume(url, open, "2025-06-18")
    }))

  it.scopedLive("the platform handler (StreamableHttp.layer on HttpLayerRouter): the same", () =>
    Effect.gen(function*() {
      const { open, server } = yield* makeServer()
      const ctx = yield* Layer.build(
        HttpLayerRouter.serve(
          StreamableHttp.layer().pipe(Layer.provide(Layer.succeed(McpServer.McpServer, server))),
          { disableListenLog: true, disableLogger: true }
        ).pipe(
          Layer.provideMerge(NodeHttpServer.layer(() => NodeHttp.createServer(), { port: 0, host: "127.0.0.1" }))
        )
      )
      const address = Context.get(ctx, HttpServer.HttpServer).address
      assert(address._tag === "TcpAddress")
      yield* cutAndResume(`http://127.0.0.1:${address.port}/mcp`, open, "2025-11-25")
    }))

  it.scopedLive("an id the server did not issue for the session replays nothing and is no error", () =>
    Effect.gen(function*() {
      const { open, server } = yield* makeServer()
      const { url } = yield* StreamableHttp.serve(server)
      const session = yield* openSession(url, "2025-11-25")
      const other = yield* openSession(url, "2025-11-25")
      const posted = yield* callStages(url, "2025-11-25", session, 3)
      const [priming] = yield* read(posted, 2)
      const { key } = parts(priming?.id)
      // another session's stream, an unknown key, an id ahead of the stream: an SSE response that ends empty
      for (
        const [who, id] of [[other, `${key}.0`], [session, `${"0".repeat(32)}.1`], [session, `${key}.99`]] as const
      ) {
        const resumed = yield* resume(url, "2025-11-25", who, id)
        expect(yield* resumed.rest()).toEqual([])
      }
      // an id of no form this server issues: the standalone stream opens, as without one
      const standalone = yield* resume(url, "2025-11-25", session, "not-an-id")
      expect(yield* standalone.next()).toEqual({ id: "0", data: "" })
      yield* standalone.cancel()
      // the request goes on: its stream still ends with its response
      yield* open
      yield* open
      expect((yield* posted.rest()).map(describeEvent)).toEqual([
        "progress 2",
        "progress 3",
        "progress 4",
        "progress 5",
        "result staged"
      ])
    }))
})

describe("a GET following a POST stream ends when the stream cannot finish", () => {
  it.scopedLive("the request is cancelled (no response will come): the GET ends, with what was recorded and no response", () =>
    Effect.gen(function*() {
      const { server } = yield* makeServer()
      const { url } = yield* StreamableHttp.serve(server)
      const session = yield* openSession(url, "2025-11-25")
      const posted = yield* callStages(url, "2025-11-25", session, 11)
      const [priming] = yield* read(posted, 1)
      yield* posted.cancel()
      const following = yield* resume(url, "2025-11-25", session, priming?.id ?? "")
      expect((yield* read(following, 3)).map(describeEvent)).toEqual(["progress 1", "progress 2", "progress 3"])
      yield* run("cancel", () =>
        fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25",
            "mcp-session-id": session
          },
          body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 11 } })
        }).then((r) => r.text()))
      expect(yield* following.rest()).toEqual([])
    }))

  it.scopedLive("the session is terminated (DELETE): the GET ends", () =>
    Effect.gen(function*() {
      const { server } = yield* makeServer()
      const { url } = yield* StreamableHttp.serve(server)
      const session = yield* openSession(url, "2025-11-25")
      const posted = yield* callStages(url, "2025-11-25", session, 12)
      const [priming] = yield* read(posted, 1)
      const following = yield* resume(url, "2025-11-25", session, priming?.id ?? "")
      expect((yield* read(following, 3)).map(describeEvent)).toEqual(["progress 1", "progress 2", "progress 3"])
      const deleted = yield* run("DELETE", () =>
        fetch(url, { method: "DELETE", headers: { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" } })
          .then((r) =>
            r.status
          ))
      expect(deleted).toBe(204)
      expect(yield* following.rest()).toEqual([])
    }))
})

describe("clients complete a call whose POST connection is cut", () => {
  it.scopedLive("our McpClient (2025-11-25): the result arrives through the resumed GET", () =>
    Effect.gen(function*() {
      const { open, server } = yield* makeServer()
      const { port, url } = yield* StreamableHttp.serve(server)
      const proxy = yield* TcpProxy.make(port)
      const via = url.replace(`:${port}/`, `:${proxy.port}/`)
      const transport = yield* StreamableHttp.client({ url: via, resumption: { initialDelay: "50 millis" } })
      const client = yield* bounded(McpClient.connect(transport, { versions: ["2025-11-25"] }))
      assert.strictEqual(client.info.era, "legacy")
      const seen: Array<number> = []
      const progressed = (n: number) =>
        bounded(Effect.repeat(Effect.sleep("5 millis"), { until: () => seen.length >= n }))
      const call = yield* Effect.fork(bounded(client.callTool("stages", {}, {
        onProgress: (p) => Effect.sync(() => seen.push(p.progress))
      })))
      yield* progressed(3)
      yield* proxy.cut
      yield* open
      yield* progressed(4)
      yield* open
      const result = yield* call.await.pipe(Effect.flatten)
      expect(result.content).toEqual([{ type: "text", text: "staged" }])
      expect(seen).toEqual([1, 2, 3, 4, 5])
    }))

  it.scopedLive("the official SDK v1 client: the result arrives through its resumed GET", () =>
    Effect.gen(function*() {
      const { open, server } = yield* makeServer()
      const { port, url } = yield* StreamableHttp.serve(server)
      const proxy = yield* TcpProxy.make(port)
      const via = new URL(url.replace(`:${port}/`, `:${proxy.port}/`))
      const client = new V1Client({ name: "v1", version: "1.0.0" })
      const transport = new V1Transport(via, {
        reconnectionOptions: {
          initialReconnectionDelay: 50,
          maxReconnectionDelay: 500,
          reconnectionDelayGrowFactor: 1.5,
          maxRetries: 5
        }
      })
      yield* run("connect", () => client.connect(transport))
      yield* Effect.addFinalizer(() => Effect.promise(() => client.close()))
      const seen: Array<number> = []
      const progressed = (n: number) =>
        bounded(Effect.repeat(Effect.sleep("5 millis"), { until: () => seen.length >= n }))
      const called = client.callTool({ name: "stages", arguments: {} }, undefined, {
        onprogress: (p) => {
          seen.push(p.progress)
        },
        timeout: WAIT_MS
      })
      yield* progressed(3)
      yield* proxy.cut
      yield* open
      yield* progressed(4)
      yield* open
      const result = yield* run("call", () => called)
      expect(result.content).toEqual([{ type: "text", text: "staged" }])
      expect(seen).toEqual([1, 2, 3, 4, 5])
    }))
})
