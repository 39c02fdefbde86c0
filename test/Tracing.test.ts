/**
 * Observability by the OpenTelemetry semantic conventions for MCP (semantic-conventions-genai,
 * docs/gen-ai/mcp.md): span names, kinds, attributes and status on both sides, trace context in
 * `params._meta` across real transports (stdio process, HTTP on 127.0.0.1) and across the proxy,
 * a raw request's and the official SDK v2 client's `traceparent` continued by our server, and the
 * `mcp.*.duration` histograms.
 *
 * Spans are collected with `@effect/opentelemetry` and the SDK's `InMemorySpanExporter` (the stdio
 * server, another process, exports its spans to a file as JSON lines).
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { assert, describe, expect, it } from "@effect/vitest"
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from "@modelcontextprotocol/client"
import { SpanKind, SpanStatusCode } from "@opentelemetry/api"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as MetricState from "effect/MetricState"
import * as Schema from "effect/Schema"
import * as Tracer from "effect/Tracer"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { InProcess, McpClient, McpProxy, McpServer, Telemetry, Tool } from "presa-mcp"
import * as Stdio from "../src/transport/Stdio.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import { promise } from "./fixtures/interop-http.js"
import { connect } from "./support/Wire.js"

/**
 * At least `millis` by the clock the metrics read: a timer alone can fire up to the event loop's
 * cached time early, so whatever is left is slept again (at most 5 more times).
 */
const sleepAtLeast = (millis: number): Effect.Effect<void> =>
  Effect.gen(function*() {
    const start = yield* Clock.currentTimeNanos
    for (let i = 0; i < 6; i++) {
      const left = millis - Number((yield* Clock.currentTimeNanos) - start) / 1e6
      if (left <= 0) return
      yield* Effect.sleep(Math.max(1, Math.ceil(left)))
    }
  })

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const TRACED_SERVER = Path.join(ROOT, "test/fixtures/traced-stdio-server.ts")

// ---------------------------------------------------------------------------------------------
// collecting spans
// ---------------------------------------------------------------------------------------------

/**
 * Runs `self` with the OpenTelemetry tracer (`@effect/opentelemetry` over an in-memory exporter of
 * its own: shutting the SDK down stops its exporter) and yields the spans it ended.
 */
const traced = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const exporter = new InMemorySpanExporter()
    const TracingLive = NodeSdk.layer(() => ({
      resource: { serviceName: "presa-mcp-tracing-test" },
      spanProcessor: new SimpleSpanProcessor(exporter)
    }))
    return self.pipe(
      Effect.map((a) => ({ a, spans: exporter.getFinishedSpans() })),
      Effect.provide(TracingLive)
    )
  })

const attrs = (span: ReadableSpan | undefined): Record<string, unknown> => ({ ...span?.attributes })

/** The one span with this name and kind. */
const one = (spans: ReadonlyArray<ReadableSpan>, name: string, kind: SpanKind): ReadableSpan => {
  const found = spans.filter((s) => s.name === name && s.kind === kind)
  assert.strictEqual(found.length, 1, `one ${SpanKind[kind]} span "${name}", got ${found.length}`)
  const span = found[0]
  if (span === undefined) throw new Error("unreachable")
  return span
}

const idOf = (span: ReadableSpan) => span.spanContext().spanId
const traceOf = (span: ReadableSpan) => span.spanContext().traceId

/** Is `ancestor` on `span`'s chain of parents (within `spans`)? */
const descendsFrom = (spans: ReadonlyArray<ReadableSpan>, span: ReadableSpan, ancestor: ReadableSpan): boolean => {
  let parent = span.parentSpanContext?.spanId
  for (let depth = 0; parent !== undefined && depth < 32; depth++) {
    if (parent === idOf(ancestor)) return true
    parent = spans.find((s) => idOf(s) === parent)?.parentSpanContext?.spanId
  }
  return false
}

// ---------------------------------------------------------------------------------------------
// fixtures
// ---------------------------------------------------------------------------------------------

const echo = Tool.make({
  name: "echo",
  parameters: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) => text
})
const refuse = Tool.fromJsonSchema({
  name: "refuse",
  handler: () => Effect.fail(new Tool.ToolError({ message: "no" }))
})
/** Answers with the `baggage` of the trace context it runs in. */
const baggage = Tool.fromJsonSchema({
  name: "baggage",
  handler: () => Effect.map(Telemetry.TraceContext, (trace) => trace.baggage ?? "none")
})

const makeServer = (telemetry?: Telemetry.Options) =>
  McpServer.make({
    name: "traced",
    version: "1",
    tools: [echo, refuse, baggage],
    ...(telemetry === undefined ? {} : { telemetry })
  })

const LOOPBACK = ["127.0.0.1", "::ffff:127.0.0.1"]

// ---------------------------------------------------------------------------------------------
// server spans, in process (the recording tracer of effect itself)
// ---------------------------------------------------------------------------------------------

const recording = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.tracerWith((base) => {
    const spans: Array<Tracer.Span> = []
    const tracer = Tracer.make({
      span: (...args) => {
        const span = base.span(...args)
        spans.push(span)
        return span
      },
      context: base.context
    })
    return Effect.map(Effect.withTracer(self, tracer), (a) => ({ a, spans }))
  })

describe("server spans by the conventions", () => {
  it.effect.each(["2026-07-28", "2025-11-25"] as const)(
    "tools/call: name, kind, attributes, error.type and status (%s)",
    (rev) =>
      Effect.gen(function*() {
        const server = yield* McpServer.make({
          name: "traced",
          version: "1",
          tools: [
            Tool.fromJsonSchema({ name: "ok", handler: () => "fine" }),
            Tool.fromJsonSchema({ name: "boom", handler: () => Effect.die(new TypeError("x")) })
          ]
        })
        const conn = yield* connect(server, rev)
        const { spans } = yield* recording(Effect.gen(function*() {
          yield* conn.call("tools/call", { name: "ok" })
          yield* conn.call("tools/call", { name: "boom" })
          yield* conn.call("tools/call", { name: "missing" })
        }))
        const calls = spans.filter((s) => s.attributes.get("mcp.method.name") === "tools/call")
        expect(calls.map((s) => [s.name, s.kind])).toEqual([
          ["tools/call ok", "server"],
          ["tools/call boom", "server"],
          ["tools/call missing", "server"]
        ])
        const all = calls.map((s) => Object.fromEntries(s.attributes))
        for (const a of all) {
          assert.strictEqual(a["mcp.protocol.version"], rev)
          assert.strictEqual(a["gen_ai.operation.name"], "execute_tool")
          assert.strictEqual(typeof a["jsonrpc.request.id"], "string")
          // in-process: no network
          assert.strictEqual(a["network.transport"], undefined)
        }
        expect(all.map((a) => [a["gen_ai.tool.name"], a["error.type"], a["rpc.response.status_code"]])).toEqual([
          ["ok", undefined, undefined],
          ["boom", "tool_error", undefined],
          ["missing", "-32602", "-32602"]
        ])
        // ERROR status (a failed exit) exactly when error.type is set; the description is the JSON-RPC message
        const exits = calls.map((s) => s.status._tag === "Ended" ? s.status.exit : undefined)
        expect(exits.map((e) => e?._tag)).toEqual(["Success", "Failure", "Failure"])
        const missing = exits[2]
        assert(missing !== undefined && missing._tag === "Failure")
        expect(String(missing.cause)).toContain("Unknown tool")
      })
  )

  it.effect("resources/read carries mcp.resource.uri, never in the name; prompts/get its prompt name", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "traced", version: "1" })
      const conn = yield* connect(server, "2026-07-28")
      const { spans } = yield* recording(Effect.gen(function*() {
        yield* conn.call("resources/read", { uri: "file:///nope" })
        yield* conn.call("prompts/get", { name: "p" })
      }))
      const read = spans.find((s) => s.attributes.get("mcp.method.name") === "resources/read")
      assert.strictEqual(read?.name, "resources/read")
      assert.strictEqual(read?.attributes.get("mcp.resource.uri"), "file:///nope")
      const get = spans.find((s) => s.attributes.get("mcp.method.name") === "prompts/get")
      assert.strictEqual(get?.name, "prompts/get p")
      assert.strictEqual(get?.attributes.get("gen_ai.prompt.name"), "p")
    }))
})

// ---------------------------------------------------------------------------------------------
// client → server over real transports
// ---------------------------------------------------------------------------------------------

describe("client → server", () => {
  it.live.each(["2026-07-28", "2025-11-25"] as const)(
    "over HTTP on 127.0.0.1: one trace, CLIENT → SERVER (%s)",
    (rev) =>
      Effect.gen(function*() {
        const { a: port, spans } = yield* traced(
          Effect.gen(function*() {
            const server = yield* makeServer()
            const { url } = yield* StreamableHttp.serve(server)
            const client = yield* McpClient.connect(yield* StreamableHttp.client({ url }), { versions: [rev] })
            yield* client.callTool("echo", { text: "hi" })
            yield* client.callTool("refuse", {})
            yield* Effect.flip(client.callTool("missing", {}))
            return Number(new URL(url).port)
          }).pipe(Effect.scoped)
        )

        const clientSpan = one(spans, "tools/call echo", SpanKind.CLIENT)
        const serverSpan = one(spans, "tools/call echo", SpanKind.SERVER)
        assert.strictEqual(traceOf(serverSpan), traceOf(clientSpan))
        assert.strictEqual(serverSpan.parentSpanContext?.spanId, idOf(clientSpan))
        expect(attrs(clientSpan)).toMatchObject({
          "mcp.method.name": "tools/call",
          "gen_ai.tool.name": "echo",
          "gen_ai.operation.name": "execute_tool",
          "mcp.protocol.version": rev,
          "network.transport": "tcp",
          "network.protocol.name": "http",
          "server.address": "127.0.0.1",
          "server.port": port
        })
        expect(attrs(serverSpan)).toMatchObject({
          "mcp.method.name": "tools/call",
          "gen_ai.tool.name": "echo",
          "mcp.protocol.version": rev,
          "network.transport": "tcp",
          "network.protocol.name": "http",
          "jsonrpc.request.id": attrs(clientSpan)["jsonrpc.request.id"]
        })
        expect(LOOPBACK).toContain(attrs(serverSpan)["client.address"])
        // no tool content unless opted in
        assert.strictEqual(attrs(serverSpan)["gen_ai.tool.call.arguments"], undefined)
        // a legacy session has an id; a stateless request has none
        if (rev === "2025-11-25") {
          expect(attrs(serverSpan)["mcp.session.id"]).toMatch(/.+/)
        } else {
          assert.strictEqual(attrs(serverSpan)["mcp.session.id"], undefined)
        }
        for (const span of [clientSpan, serverSpan]) {
          assert.strictEqual(span.status.code, SpanStatusCode.OK)
          assert.strictEqual(attrs(span)["error.type"], undefined)
        }

        for (const kind of [SpanKind.CLIENT, SpanKind.SERVER]) {
          const refused = one(spans, "tools/call refuse", kind)
          assert.strictEqual(attrs(refused)["error.type"], "tool_error")
          assert.strictEqual(attrs(refused)["rpc.response.status_code"], undefined)
          assert.strictEqual(refused.status.code, SpanStatusCode.ERROR)
          const missing = one(spans, "tools/call missing", kind)
          assert.strictEqual(attrs(missing)["error.type"], "-32602")
          assert.strictEqual(attrs(missing)["rpc.response.status_code"], "-32602")
          assert.strictEqual(missing.status.code, SpanStatusCode.ERROR)
          expect(missing.status.message).toContain("Unknown tool")
        }
      }),
    30_000
  )

  it.live(
    "over stdio (a spawned process): the server span's parent is the client span; network.transport pipe",
    () =>
      Effect.gen(function*() {
        const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "presa-trace-"))
        const file = Path.join(dir, "spans.jsonl")
        const { spans } = yield* traced(
          Effect.gen(function*() {
            const transport = yield* Stdio.spawn({
              command: process.execPath,
              args: ["--import", "tsx", TRACED_SERVER, file],
              cwd: ROOT
            })
            const client = yield* McpClient.connect(transport, { versions: ["2025-11-25"] })
            yield* client.callTool("echo", { text: "over a pipe" })
            yield* client.callTool("refuse", {})
          }).pipe(Effect.scoped)
        )
        const remote: ReadonlyArray<{
          readonly name: string
          readonly kind: number
          readonly traceId: string
          readonly spanId: string
          readonly parentSpanId?: string
          readonly attributes: Record<string, unknown>
          readonly status: { readonly code: number }
        }> = Fs.readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line))
        Fs.rmSync(dir, { recursive: true, force: true })

        for (const name of ["initialize", "tools/call echo", "tools/call refuse"]) {
          const clientSpan = one(spans, name, SpanKind.CLIENT)
          const serverSpans = remote.filter((s) => s.name === name)
          assert.strictEqual(serverSpans.length, 1, name)
          const serverSpan = serverSpans[0]
          assert.strictEqual(serverSpan?.kind, SpanKind.SERVER)
          assert.strictEqual(serverSpan?.traceId, traceOf(clientSpan))
          assert.strictEqual(serverSpan?.parentSpanId, idOf(clientSpan))
          assert.strictEqual(serverSpan?.attributes["network.transport"], "pipe")
          assert.strictEqual(attrs(clientSpan)["network.transport"], "pipe")
          assert.strictEqual(serverSpan?.attributes["mcp.protocol.version"], "2025-11-25")
        }
        const refused = remote.find((s) => s.name === "tools/call refuse")
        assert.strictEqual(refused?.attributes["error.type"], "tool_error")
        assert.strictEqual(refused?.status.code, SpanStatusCode.ERROR)
      }),
    30_000
  )
})

// ---------------------------------------------------------------------------------------------
// the proxy keeps one trace
// ---------------------------------------------------------------------------------------------

describe("across the proxy", () => {
  it.live(
    "caller → proxy (HTTP) → backend (in process): one trace; baggage reaches the backend",
    () =>
      Effect.gen(function*() {
        const { a: answered, spans } = yield* traced(
          Effect.gen(function*() {
            const backend = yield* makeServer()
            const backendClient = yield* McpClient.connect(yield* InProcess.client(backend))
            const proxy = yield* McpProxy.make([{ prefix: "b", client: backendClient }])
            const { url } = yield* StreamableHttp.serve(proxy)
            const front = yield* McpClient.connect(yield* StreamableHttp.client({ url }))
            yield* front.callTool("b_echo", { text: "through" })
            return yield* front.callTool("b_baggage", {}).pipe(
              Effect.provideService(Telemetry.TraceContext, { baggage: "tenant=acme" })
            )
          }).pipe(Effect.scoped)
        )

        const callerSpan = one(spans, "tools/call b_echo", SpanKind.CLIENT)
        const proxySpan = one(spans, "tools/call b_echo", SpanKind.SERVER)
        const proxyClientSpan = one(spans, "tools/call echo", SpanKind.CLIENT)
        const backendSpan = one(spans, "tools/call echo", SpanKind.SERVER)
        for (const span of [proxySpan, proxyClientSpan, backendSpan]) {
          assert.strictEqual(traceOf(span), traceOf(callerSpan))
        }
        assert.strictEqual(proxySpan.parentSpanContext?.spanId, idOf(callerSpan))
        assert(descendsFrom(spans, proxyClientSpan, proxySpan), "the backend call runs beneath the proxy's span")
        assert.strictEqual(backendSpan.parentSpanContext?.spanId, idOf(proxyClientSpan))
        expect(answered.content).toEqual([{ type: "text", text: "tenant=acme" }])
      }),
    30_000
  )
})

// ---------------------------------------------------------------------------------------------
// a foreign caller's traceparent
// ---------------------------------------------------------------------------------------------

const REMOTE_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
const REMOTE_SPAN = "00f067aa0ba902b7"
const TRACEPARENT = `00-${REMOTE_TRACE}-${REMOTE_SPAN}-01`

describe("a foreign caller's traceparent is continued", () => {
  it.live(
    "a raw HTTP request with _meta.traceparent (and a malformed one, which starts a new trace)",
    () =>
      Effect.gen(function*() {
        const { spans } = yield* traced(
          Effect.gen(function*() {
            const server = yield* makeServer()
            const { url } = yield* StreamableHttp.serve(server)
            const post = (id: number, traceparent: string, baggage?: string) =>
              promise("POST", () =>
                fetch(url, {
                  method: "POST",
                  headers: {
                    "content-type": "application/json",
                    accept: "application/json, text/event-stream",
                    "mcp-protocol-version": "2026-07-28",
                    "mcp-method": "tools/call",
                    "mcp-name": "baggage"
                  },
                  body: JSON.stringify({
                    jsonrpc: "2.0",
                    id,
                    method: "tools/call",
                    params: {
                      name: "baggage",
                      arguments: {},
                      _meta: {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                        traceparent,
                        tracestate: "rojo=00f067aa0ba902b7",
                        ...(baggage === undefined ? {} : { baggage })
                      }
                    }
                  })
                }).then((r) => r.json()))
            const reply = yield* post(1, TRACEPARENT, "userId=alice")
            expect(reply).toMatchObject({ id: 1, result: { content: [{ type: "text", text: "userId=alice" }] } })
            yield* post(2, `00-${REMOTE_TRACE}-0000000000000000-01`)
          }).pipe(Effect.scoped)
        )
        const calls = spans.filter((s) => s.name === "tools/call baggage" && s.kind === SpanKind.SERVER)
        assert.strictEqual(calls.length, 2)
        const [continued, fresh] = calls
        assert.strictEqual(continued && traceOf(continued), REMOTE_TRACE)
        assert.strictEqual(continued?.parentSpanContext?.spanId, REMOTE_SPAN)
        assert.strictEqual(continued?.parentSpanContext?.isRemote, true)
        assert.notStrictEqual(fresh && traceOf(fresh), REMOTE_TRACE)
        assert.strictEqual(fresh?.parentSpanContext, undefined)
      }),
    30_000
  )

  it.live("the official SDK v2 client's request carrying a traceparent", () =>
    Effect.gen(function*() {
      const { a: result, spans } = yield* traced(
        Effect.gen(function*() {
          const server = yield* makeServer()
          const { url } = yield* StreamableHttp.serve(server)
          const client = new V2Client({ name: "sdk-v2", version: "0.0.0" }, {
            versionNegotiation: { mode: { pin: "2026-07-28" } }
          })
          yield* Effect.acquireRelease(
            promise("connect", () => client.connect(new V2Transport(new URL(url)))),
            () => promise("close", () => client.close()).pipe(Effect.ignore)
          )
          return yield* promise(
            "tools/call",
            () => client.callTool({ name: "echo", arguments: { text: "sdk" }, _meta: { traceparent: TRACEPARENT } })
          )
        }).pipe(Effect.scoped)
      )
      expect(result.content).toEqual([{ type: "text", text: "sdk" }])
      const span = one(spans, "tools/call echo", SpanKind.SERVER)
      assert.strictEqual(traceOf(span), REMOTE_TRACE)
      assert.strictEqual(span.parentSpanContext?.spanId, REMOTE_SPAN)
      assert.strictEqual(attrs(span)["mcp.protocol.version"], "2026-07-28")
    }), 30_000)
})

// ---------------------------------------------------------------------------------------------
// opt-in content, metrics
// ---------------------------------------------------------------------------------------------

describe("tool content (opt-in) and metrics", () => {
  it.scopedLive("recordToolContent puts the arguments and the result on both spans", () =>
    Effect.gen(function*() {
      const { spans } = yield* traced(Effect.gen(function*() {
        const server = yield* makeServer({ recordToolContent: true })
        const client = yield* McpClient.connect(yield* InProcess.client(server), {
          telemetry: { recordToolContent: true }
        })
        yield* client.callTool("echo", { text: "secret" })
      }))
      for (const kind of [SpanKind.CLIENT, SpanKind.SERVER]) {
        const span = one(spans, "tools/call echo", kind)
        assert.strictEqual(attrs(span)["gen_ai.tool.call.arguments"], "{\"text\":\"secret\"}")
        assert.strictEqual(attrs(span)["gen_ai.tool.call.result"], "[{\"type\":\"text\",\"text\":\"secret\"}]")
      }
    }))

  /** The histograms named `name` whose labels include `labels`. */
  const histograms = (name: string, labels: Record<string, string>) =>
    Effect.map(Metric.snapshot, (pairs) =>
      pairs.filter((p) =>
        p.metricKey.name === name &&
        Object.entries(labels).every(([k, v]) => p.metricKey.tags.some((t) => t.key === k && t.value === v))
      ))

  it.scoped("with the tracer disabled the metrics keep the request's labels", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "untraced",
        version: "1",
        tools: [Tool.fromJsonSchema({ name: "untraced_ok", handler: () => "ok" })]
      })
      const client = yield* McpClient.connect(yield* InProcess.client(server))
      yield* client.callTool("untraced_ok", {}).pipe(Effect.withTracerEnabled(false))
      for (const side of ["server", "client"] as const) {
        const found = yield* histograms(`mcp.${side}.operation.duration`, {
          "mcp.method.name": "tools/call",
          "gen_ai.tool.name": "untraced_ok",
          "gen_ai.operation.name": "execute_tool"
        })
        assert.strictEqual(found.length, 1, side)
        const state = found[0]?.metricState
        assert(state !== undefined && MetricState.isHistogramState(state) && state.count === 1, side)
      }
    }))

  it.live(
    "mcp.server/client.operation.duration: seconds, the conventions' buckets and labels; session durations",
    () =>
      Effect.gen(function*() {
        yield* Effect.gen(function*() {
          const server = yield* McpServer.make({
            name: "metered",
            version: "1",
            tools: [
              Tool.fromJsonSchema({ name: "metered_ok", handler: () => Effect.as(sleepAtLeast(30), "ok") })
            ]
          })
          const { url } = yield* StreamableHttp.serve(server)
          const client = yield* McpClient.connect(yield* StreamableHttp.client({ url }), { versions: ["2025-11-25"] })
          yield* client.callTool("metered_ok", {})
          yield* client.callTool("metered_ok", {})
          yield* Effect.flip(client.callTool("metered_unknown", {}))
          const unknownMethod = yield* Effect.flip(client.request("metered/unknown-method"))
          assert.strictEqual(unknownMethod._tag === "McpError" && unknownMethod.code, -32601)
        }).pipe(Effect.scoped)

        for (const side of ["server", "client"] as const) {
          const name = `mcp.${side}.operation.duration`
          const ok = yield* histograms(name, {
            "mcp.method.name": "tools/call",
            "gen_ai.tool.name": "metered_ok",
            "gen_ai.operation.name": "execute_tool",
            "mcp.protocol.version": "2025-11-25",
            "network.transport": "tcp",
            "network.protocol.name": "http",
            unit: "s"
          })
          assert.strictEqual(ok.length, 1, name)
          const state = ok[0]?.metricState
          assert(state !== undefined && MetricState.isHistogramState(state))
          assert.strictEqual(state.count, 2)
          // seconds: two calls of at least 30 ms each, well under a minute
          assert(state.min >= 0.03 && state.max < 60, `${state.min}..${state.max}`)
          expect(state.buckets.map(([bound]) => bound).slice(0, 14)).toEqual(Telemetry.DURATION_BOUNDARIES)
          expect(ok[0]?.metricKey.tags.some((t) => t.key === "error.type")).toBe(false)
          // an unknown tool: error.type and the status code, and no tool name label
          const unknown = yield* histograms(name, { "mcp.method.name": "tools/call", "error.type": "-32602" })
          const unnamed = unknown.filter((p) => p.metricKey.tags.some((t) => t.key === "mcp.protocol.version"))
          expect(unnamed.length).toBeGreaterThanOrEqual(1)
          for (const p of unnamed) {
            expect(p.metricKey.tags.some((t) => t.key === "gen_ai.tool.name")).toBe(false)
            expect(p.metricKey.tags).toContainEqual(expect.objectContaining({ key: "rpc.response.status_code" }))
          }
        }
        for (const side of ["server", "client"] as const) {
          // an unknown method is not a label value of its own
          const other = yield* histograms(`mcp.${side}.operation.duration`, { "error.type": "-32601" })
          expect(other.map((p) => p.metricKey.tags.find((t) => t.key === "mcp.method.name")?.value)).toContain("_OTHER")
          for (const p of other) {
            expect(p.metricKey.tags).not.toContainEqual(expect.objectContaining({ value: "metered/unknown-method" }))
          }
          const sessions = yield* histograms(`mcp.${side}.session.duration`, {
            "mcp.protocol.version": "2025-11-25",
            "network.transport": "tcp",
            unit: "s"
          })
          assert.strictEqual(sessions.length, 1, side)
          const state = sessions[0]?.metricState
          assert(state !== undefined && MetricState.isHistogramState(state))
          assert(state.count >= 1 && state.max >= 0.06, `${side}: ${state.count} sessions, max ${state.max}s`)
        }
      }),
    30_000
  )
})
