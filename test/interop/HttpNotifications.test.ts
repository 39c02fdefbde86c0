/**
 * Server → client notifications over Streamable HTTP, received by the official SDK clients:
 *
 * - legacy (SDK v1 client, 2025-11-25): `notifications/tools/list_changed` on the session's GET
 *   stream after `McpServer.addTool` (seen by a `ToolListChangedNotificationSchema` handler, and by
 *   the client's `listChanged` option, which refetches the list);
 * - progress: `notifications/progress` on the POST response stream of a `tools/call` carrying a
 *   progress token (`onprogress`), for the SDK v1 client (legacy) and the SDK v2 client (modern).
 *
 * Our server runs in-process (`StreamableHttp.serve`, 127.0.0.1, port 0). Every wait is bounded.
 */
import { describe, expect, it } from "@effect/vitest"
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from "@modelcontextprotocol/client"
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Runtime from "effect/Runtime"
import * as McpServer from "../../src/McpServer.js"
import * as Tool from "../../src/Tool.js"
import * as StreamableHttp from "../../src/transport/StreamableHttp.js"
import {
  bounded,
  checkExchanges,
  eventually,
  LEGACY,
  MODERN,
  promise,
  type Recorder,
  recordingFetch,
  sseMessages
} from "../fixtures/interop-http.js"
import { assertNotificationSpecValid } from "../support/SpecSchema.js"

const CLIENT_INFO = { name: "interop-test", version: "0.0.0" }

/** Sends progress 1, 2, 3 of 3 (with a message each), then answers "done". */
const steps = Tool.fromJsonSchema({
  name: "steps",
  description: "Reports three steps of progress, then finishes.",
  handler: (_args, ctx) =>
    Effect.gen(function*() {
      for (const step of [1, 2, 3]) {
        yield* ctx.progress(step, { total: 3, message: `step ${step}` })
      }
      return "done"
    })
})

const echo = Tool.fromJsonSchema({
  name: "echo",
  description: "Echoes its text.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  handler: ({ text }) => Effect.succeed(String(text))
})

const late = Tool.fromJsonSchema({
  name: "late",
  description: "Added after the client connected.",
  handler: () => Effect.succeed("late")
})

/** A fresh server (its own tool list) served on a free port for the test's scope. */
const serveFresh = Effect.gen(function*() {
  const server = yield* McpServer.make({
    name: "interop-notifications",
    version: "0.0.0",
    listChanged: true,
    tools: [steps, echo]
  })
  const { url } = yield* StreamableHttp.serve(server, { port: 0 })
  return { server, url }
}).pipe(Effect.orDie)

const v1Connect = (client: V1Client, url: string, recorder: Recorder) =>
  Effect.acquireRelease(
    promise("v1 connect", () => client.connect(new V1Transport(new URL(url), { fetch: recorder.fetch }))),
    () => promise("v1 close", () => client.close()).pipe(Effect.ignore)
  )

const v2Connect = (client: V2Client, url: string, recorder: Recorder) =>
  Effect.acquireRelease(
    promise("v2 connect", () => client.connect(new V2Transport(new URL(url), { fetch: recorder.fetch }))),
    () => promise("v2 close", () => client.close()).pipe(Effect.ignore)
  )

/** Waits (bounded) until the v1 client's standalone GET stream is open (response headers in). */
const getStreamOpen = (recorder: Recorder) =>
  eventually("the GET stream to open", () => recorder.exchanges.some((x) => x.method === "GET" && x.status === 200))

interface ProgressSeen {
  readonly progress: number
  readonly total?: number | undefined
  readonly message?: string | undefined
}

describe("legacy list changes reach the SDK v1 client", () => {
  it.scopedLive("a ToolListChangedNotificationSchema handler fires after McpServer.addTool", () =>
    Effect.gen(function*() {
      const { server, url } = yield* serveFresh
      const recorder = recordingFetch()
      const client = new V1Client(CLIENT_INFO)
      const changed = yield* Deferred.make<unknown>()
      const runtime = yield* Effect.runtime<never>()
      client.setNotificationHandler(ToolListChangedNotificationSchema, (notification) => {
        Runtime.runSync(runtime)(Deferred.succeed(changed, notification))
      })
      yield* v1Connect(client, url, recorder)
      expect(client.getServerCapabilities()?.tools).toMatchObject({ listChanged: true })
      const before = yield* promise("tools/list", () => client.listTools())
      expect(before.tools.map((t) => t.name).sort()).toEqual(["echo", "steps"])

      yield* getStreamOpen(recorder)
      yield* McpServer.addTool(server, late)
      const notification = yield* bounded(Deferred.await(changed), "notifications/tools/list_changed")
      expect(notification).toMatchObject({ method: "notifications/tools/list_changed" })

      const after = yield* promise("tools/list", () => client.listTools())
      expect(after.tools.map((t) => t.name).sort()).toEqual(["echo", "late", "steps"])
      const call = yield* promise("tools/call late", () => client.callTool({ name: "late", arguments: {} }))
      expect(call.content).toEqual([{ type: "text", text: "late" }])

      // on the wire: the GET stream carried the notification, valid for 2025-11-25
      const get = recorder.exchanges.find((x) => x.method === "GET" && x.status === 200)
      expect(get?.contentType).toBe("text/event-stream")
      const onStream = sseMessages(get?.received() ?? "")
      expect(onStream).toContainEqual({ jsonrpc: "2.0", method: "notifications/tools/list_changed" })
      for (const m of onStream) assertNotificationSpecValid(LEGACY, m)
      yield* checkExchanges(recorder.exchanges, LEGACY)
    }))

  it.scopedLive("the client's listChanged option refetches the list after McpServer.addTool", () =>
    Effect.gen(function*() {
      const { server, url } = yield* serveFresh
      const recorder = recordingFetch()
      const refreshed = yield* Deferred.make<ReadonlyArray<string>, unknown>()
      const runtime = yield* Effect.runtime<never>()
      const client = new V1Client(CLIENT_INFO, {
        listChanged: {
          tools: {
            debounceMs: 0,
            onChanged: (error, tools) => {
              Runtime.runSync(runtime)(
                error === null
                  ? Deferred.succeed(refreshed, (tools ?? []).map((t) => t.name).sort())
                  : Deferred.fail(refreshed, error)
              )
            }
          }
        }
      })
      yield* v1Connect(client, url, recorder)
      yield* getStreamOpen(recorder)
      yield* McpServer.addTool(server, late)
      const names = yield* bounded(Deferred.await(refreshed), "listChanged.tools.onChanged")
      expect(names).toEqual(["echo", "late", "steps"])
    }))
})

describe("modern list changes reach the SDK v2 client", () => {
  it.scopedLive("the v2 client's listChanged option (subscriptions/listen) refetches after McpServer.addTool", () =>
    Effect.gen(function*() {
      const { server, url } = yield* serveFresh
      const recorder = recordingFetch()
      const refreshed = yield* Deferred.make<ReadonlyArray<string>, unknown>()
      const runtime = yield* Effect.runtime<never>()
      const client = new V2Client(CLIENT_INFO, {
        versionNegotiation: { mode: { pin: MODERN } },
        listChanged: {
          tools: {
            debounceMs: 0,
            onChanged: (error, tools) => {
              Runtime.runSync(runtime)(
                error === null
                  ? Deferred.succeed(refreshed, (tools ?? []).map((t) => t.name).sort())
                  : Deferred.fail(refreshed, error)
              )
            }
          }
        }
      })
      yield* v2Connect(client, url, recorder)
      expect(client.getProtocolEra()).toBe("modern")
      // the subscription stream is open once the server acknowledged it on the listen response
      yield* eventually(
        "subscriptions/listen acknowledged",
        () =>
          recorder.exchanges.some((x) =>
            typeof x.requestBody === "object" && x.requestBody !== null && "method" in x.requestBody &&
            x.requestBody.method === "subscriptions/listen" &&
            sseMessages(x.received()).some((m) =>
              typeof m === "object" && m !== null && "method" in m &&
              m.method === "notifications/subscriptions/acknowledged"
            )
          )
      )
      yield* McpServer.addTool(server, late)
      const names = yield* bounded(Deferred.await(refreshed), "listChanged.tools.onChanged")
      expect(names).toEqual(["echo", "late", "steps"])
      const listen = recorder.exchanges.find((x) =>
        typeof x.requestBody === "object" && x.requestBody !== null && "method" in x.requestBody &&
        x.requestBody.method === "subscriptions/listen"
      )
      expect(listen?.status).toBe(200)
      expect(listen?.contentType).toBe("text/event-stream")
      const onStream = sseMessages(listen?.received() ?? "")
      expect(onStream.map((m) => (typeof m === "object" && m !== null && "method" in m ? m.method : undefined)))
        .toContain("notifications/tools/list_changed")
      for (const m of onStream) assertNotificationSpecValid(MODERN, m)
    }))
})

describe("progress reaches the SDK clients' onprogress", () => {
  it.scopedLive("SDK v1 client (legacy): progress notifications on the POST response stream", () =>
    Effect.gen(function*() {
      const { url } = yield* serveFresh
      const recorder = recordingFetch()
      const client = new V1Client(CLIENT_INFO)
      yield* v1Connect(client, url, recorder)
      const seen: Array<ProgressSeen> = []
      const result = yield* promise(
        "tools/call steps",
        () =>
          client.callTool({ name: "steps", arguments: {} }, undefined, {
            onprogress: (p) => {
              seen.push({ progress: p.progress, total: p.total, message: p.message })
            }
          })
      )
      expect(result.content).toEqual([{ type: "text", text: "done" }])
      expect(seen).toEqual([
        { progress: 1, total: 3, message: "step 1" },
        { progress: 2, total: 3, message: "step 2" },
        { progress: 3, total: 3, message: "step 3" }
      ])
      const checked = yield* checkExchanges(recorder.exchanges, LEGACY)
      expect(checked.serverNotifications).toHaveLength(3)
      const call = recorder.exchanges.find((x) =>
        typeof x.requestBody === "object" && x.requestBody !== null && "method" in x.requestBody &&
        x.requestBody.method === "tools/call"
      )
      expect(call?.contentType).toBe("text/event-stream")
    }))

  it.scopedLive("SDK v2 client (modern, pinned 2026-07-28): progress notifications on the POST response stream", () =>
    Effect.gen(function*() {
      const { url } = yield* serveFresh
      const recorder = recordingFetch()
      const client = new V2Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } })
      yield* v2Connect(client, url, recorder)
      expect(client.getProtocolEra()).toBe("modern")
      const seen: Array<ProgressSeen> = []
      const result = yield* promise("tools/call steps", () =>
        client.callTool({ name: "steps", arguments: {} }, {
          onprogress: (p) => {
            seen.push({ progress: p.progress, total: p.total, message: p.message })
          }
        }))
      expect(result.content).toEqual([{ type: "text", text: "done" }])
      expect(seen).toEqual([
        { progress: 1, total: 3, message: "step 1" },
        { progress: 2, total: 3, message: "step 2" },
        { progress: 3, total: 3, message: "step 3" }
      ])
      const checked = yield* checkExchanges(recorder.exchanges, MODERN)
      expect(checked.requests).toEqual(["server/discover", "tools/call"])
      expect(checked.serverNotifications).toHaveLength(3)
    }))

  it.scopedLive("SDK v2 client (modern): a call without onprogress gets a plain JSON response", () =>
    Effect.gen(function*() {
      const { url } = yield* serveFresh
      const recorder = recordingFetch()
      const client = new V2Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } })
      yield* v2Connect(client, url, recorder)
      const result = yield* promise("tools/call steps", () => client.callTool({ name: "steps", arguments: {} }))
      expect(result.content).toEqual([{ type: "text", text: "done" }])
      const checked = yield* checkExchanges(recorder.exchanges, MODERN)
      expect(checked.serverNotifications).toEqual([])
      expect(recorder.exchanges.at(-1)?.contentType).toBe("application/json")
    }))
})
