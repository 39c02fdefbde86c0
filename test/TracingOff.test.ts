/**
 * Telemetry without a tracer (docs/architecture.md, "Observability"): when the app installs no
 * tracer and there is no trace to continue, neither side makes a span or writes a `traceparent`,
 * yet both `mcp.*.operation.duration` histograms are recorded with the very label sets a traced
 * request gets; a trace to continue (a caller's `traceparent`, a span the client is called
 * beneath) is still continued, and the `TraceContext`'s baggage still travels.
 * `test/Tracing.test.ts` covers the traced side.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import * as MetricState from "effect/MetricState"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import { InProcess, McpClient, McpServer, Telemetry, Tool } from "presa-mcp"
import type * as Middleware from "presa-mcp/Middleware"

/** The `_meta` of every request the server saw, in order. */
const seen: Array<Record<string, unknown>> = []
const record: Middleware.Middleware = (req, next) =>
  Effect.suspend(() => {
    const meta = req.params._meta
    seen.push(typeof meta === "object" && meta !== null && !Array.isArray(meta) ? { ...meta } : {})
    return next
  })

/** Answers with the trace id of the span its handler runs beneath, or `none`. */
const probe = (name: string) =>
  Tool.make({
    name,
    handler: () =>
      Effect.map(Effect.option(Effect.currentSpan), Option.match({ onNone: () => "none", onSome: (s) => s.traceId }))
  })

const makeClient = Effect.gen(function*() {
  const server = yield* McpServer.make({
    name: "untraced",
    version: "1",
    tools: [probe("off_probe"), probe("on_probe"), probe("beneath_probe"), probe("baggage_probe")],
    middleware: [record]
  })
  return yield* McpClient.connect(yield* InProcess.client(server))
})

const textOf = (result: { readonly content: ReadonlyArray<unknown> }): unknown => {
  const block = result.content[0]
  return typeof block === "object" && block !== null && "text" in block ? block.text : undefined
}

/** The histograms named `name` with the label `gen_ai.tool.name: tool`. */
const histograms = (name: string, tool: string) =>
  Effect.map(Metric.snapshot, (pairs) =>
    pairs.filter((p) =>
      p.metricKey.name === name &&
      p.metricKey.tags.some((t) => t.key === "gen_ai.tool.name" && t.value === tool)
    ))

/** A tracer of its own (spans recorded in memory): what an installed OpenTelemetry tracer is to the library. */
const recordingTracer = Effect.tracerWith((base) =>
  Effect.succeed(Tracer.make({ span: (...args) => base.span(...args), context: base.context }))
)

describe("telemetry without a tracer", () => {
  it.scoped("no span and no traceparent; the duration metrics keep the traced label sets", () =>
    Effect.gen(function*() {
      const client = yield* makeClient
      seen.length = 0
      const off = yield* client.callTool("off_probe", {})
      assert.strictEqual(textOf(off), "none")
      assert.strictEqual(seen.length, 1)
      assert.strictEqual(seen[0]?.traceparent, undefined)

      const tracer = yield* recordingTracer
      const on = yield* Effect.withTracer(client.callTool("on_probe", {}), tracer)
      assert.match(String(textOf(on)), /^[0-9a-f]{32}$/)
      assert.match(String(seen[1]?.traceparent), /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/)

      for (const side of ["server", "client"] as const) {
        const name = `mcp.${side}.operation.duration`
        const [untraced] = yield* histograms(name, "off_probe")
        const [traced] = yield* histograms(name, "on_probe")
        assert(untraced !== undefined && traced !== undefined, side)
        const state = untraced.metricState
        assert(MetricState.isHistogramState(state) && state.count === 1, side)
        const labels = (tags: ReadonlyArray<{ readonly key: string; readonly value: string }>) =>
          tags.filter((t) => t.key !== "gen_ai.tool.name").map((t) => `${t.key}=${t.value}`)
        expect(labels(untraced.metricKey.tags)).toEqual(labels(traced.metricKey.tags))
        expect(labels(untraced.metricKey.tags)).toEqual(
          expect.arrayContaining([
            "unit=s",
            "mcp.method.name=tools/call",
            "gen_ai.operation.name=execute_tool",
            "mcp.protocol.version=2026-07-28"
          ])
        )
      }
    }))

  it.scopedLive("an untraced call that times out or is interrupted is recorded with its outcome and the fiber's own labels", () =>
    Effect.gen(function*() {
      const started: Array<string> = []
      const slow = (name: string) =>
        Tool.make({ name, handler: () => Effect.zipRight(Effect.sync(() => started.push(name)), Effect.never) })
      const server = yield* McpServer.make({
        name: "untraced-slow",
        version: "1",
        tools: [slow("off_timeout"), slow("off_interrupted")]
      })
      const client = yield* McpClient.connect(yield* InProcess.client(server))
      const timedOut = yield* Effect.flip(
        client.callTool("off_timeout", {}, { timeout: "50 millis" }).pipe(Effect.tagMetrics("app", "off"))
      )
      assert.strictEqual(timedOut._tag, "ClientError")
      const fiber = yield* Effect.fork(client.callTool("off_interrupted", {}).pipe(Effect.tagMetrics("app", "off")))
      for (let i = 0; i < 200 && !started.includes("off_interrupted"); i++) yield* Effect.sleep("5 millis")
      assert.deepStrictEqual(started, ["off_timeout", "off_interrupted"])
      yield* Fiber.interrupt(fiber)
      for (const [tool, errorType] of [["off_timeout", "timeout"], ["off_interrupted", "cancelled"]] as const) {
        const [client] = yield* histograms("mcp.client.operation.duration", tool)
        assert(client !== undefined, tool)
        const state = client.metricState
        assert(MetricState.isHistogramState(state) && state.count === 1, tool)
        expect(client.metricKey.tags.map((t) => `${t.key}=${t.value}`)).toEqual(
          expect.arrayContaining([`error.type=${errorType}`, "app=off", "mcp.method.name=tools/call"])
        )
      }
    }))

  it.scoped("beneath a span the client writes its traceparent and the server continues the trace", () =>
    Effect.gen(function*() {
      const client = yield* makeClient
      seen.length = 0
      const { result, traceId } = yield* Effect.gen(function*() {
        const span = yield* Effect.currentSpan
        return { result: yield* client.callTool("beneath_probe", {}), traceId: span.traceId }
      }).pipe(Effect.withSpan("app"))
      assert.strictEqual(textOf(result), traceId)
      assert(String(seen[0]?.traceparent).startsWith(`00-${traceId}-`), String(seen[0]?.traceparent))
    }))

  it.scoped("the TraceContext's baggage is sent without a traceparent", () =>
    Effect.gen(function*() {
      const client = yield* makeClient
      seen.length = 0
      yield* client.callTool("baggage_probe", {}).pipe(
        Effect.provideService(Telemetry.TraceContext, { baggage: "tenant=acme", tracestate: "k=v" })
      )
      assert.strictEqual(seen[0]?.baggage, "tenant=acme")
      assert.strictEqual(seen[0]?.tracestate, "k=v")
      assert.strictEqual(seen[0]?.traceparent, undefined)
    }))

  it.effect("a request carrying a traceparent is continued by a server without a tracer", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "continued", version: "1", tools: [probe("remote_probe")] })
      const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
      const reply = yield* McpServer.handleMessage(server, {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "remote_probe",
          arguments: {},
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            traceparent: `00-${traceId}-00f067aa0ba902b7-01`
          }
        }
      })
      assert(Option.isSome(reply))
      expect(JSON.stringify(reply.value)).toContain(`"text":"${traceId}"`)
    }))
})
