/**
 * Traces and metrics by the OpenTelemetry MCP semantic conventions, exported with
 * `@effect/opentelemetry`.
 *
 *   npx tsx examples/tracing.ts                                               (console exporters)
 *   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 npx tsx examples/tracing.ts   (OTLP over HTTP)
 *
 * It serves a proxy in front of the reference library (in process) over Streamable HTTP on
 * 127.0.0.1 (a free port), connects a client to it and calls `library_add` inside a span of its
 * own ("agent turn"). One trace covers the whole path: the client's CLIENT span → the proxy's
 * SERVER span → the proxy's CLIENT span to the library → the library's SERVER span, linked through
 * `params._meta.traceparent`. The `mcp.*.duration` histograms (Effect metrics) are exported too.
 *
 * The spans go to the console exporter (or OTLP) and, at the end, the trace is printed to stderr
 * as a tree: each span's name, kind and its `mcp.*` / `gen_ai.*` / `network.*` attributes.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { SpanKind } from "@opentelemetry/api"
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { ConsoleMetricExporter, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics"
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor
} from "@opentelemetry/sdk-trace-base"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { InProcess, McpClient } from "presa-mcp"
import * as McpProxy from "presa-mcp/McpProxy"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import { makeLibrary } from "./library-definitions.js"

const otlp = process.env.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined
const collected = new InMemorySpanExporter()

const TracingLive = NodeSdk.layer(() => ({
  resource: { serviceName: "presa-mcp-example" },
  spanProcessor: [
    // OTLP exporters read OTEL_EXPORTER_OTLP_ENDPOINT (and the other OTEL_EXPORTER_OTLP_* variables) themselves
    otlp ? new BatchSpanProcessor(new OTLPTraceExporter()) : new SimpleSpanProcessor(new ConsoleSpanExporter()),
    new SimpleSpanProcessor(collected)
  ],
  metricReader: new PeriodicExportingMetricReader({
    exporter: otlp ? new OTLPMetricExporter() : new ConsoleMetricExporter(),
    exportIntervalMillis: 60_000
  })
}))

const program = Effect.gen(function*() {
  const library = yield* McpClient.connect(yield* InProcess.client(yield* makeLibrary), McpProxy.inputHandlers)
  const proxy = yield* McpProxy.make([{ prefix: "library", client: library }], {
    name: "presa-otel-proxy",
    version: "0.1.0"
  })
  const { url } = yield* StreamableHttp.serve(proxy)
  const client = yield* McpClient.connect(yield* StreamableHttp.client({ url }))
  const sum = yield* client.callTool("library_add", { numbers: [1, 2, 3] }).pipe(Effect.withSpan("agent turn"))
  yield* Console.error(`library_add → ${JSON.stringify(sum.structuredContent)}`)
  yield* Console.error(tree(collected.getFinishedSpans(), "agent turn"))
})

const KINDS: Record<number, string> = {
  [SpanKind.INTERNAL]: "INTERNAL",
  [SpanKind.SERVER]: "SERVER",
  [SpanKind.CLIENT]: "CLIENT",
  [SpanKind.PRODUCER]: "PRODUCER",
  [SpanKind.CONSUMER]: "CONSUMER"
}
const SHOWN = /^(mcp\.|gen_ai\.|network\.|server\.|client\.|error\.type|rpc\.|jsonrpc\.)/

/** The trace under the span named `root`, one line per span, children indented. */
const tree = (spans: ReadonlyArray<ReadableSpan>, root: string): string => {
  const lines: Array<string> = []
  const walk = (span: ReadableSpan, depth: number) => {
    const shown = Object.entries(span.attributes).filter(([k]) => SHOWN.test(k)).map(([k, v]) =>
      `${k}=${JSON.stringify(v)}`
    )
    lines.push(`${"  ".repeat(depth)}${span.name} [${KINDS[span.kind] ?? span.kind}] ${shown.join(" ")}`)
    const id = span.spanContext().spanId
    for (const child of spans.filter((s) => s.parentSpanContext?.spanId === id)) walk(child, depth + 1)
  }
  for (const span of spans.filter((s) => s.name === root)) walk(span, 0)
  return lines.join("\n")
}

NodeRuntime.runMain(program.pipe(Effect.scoped, Effect.provide(TracingLive)))
