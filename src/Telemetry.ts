/**
 * Observability by the OpenTelemetry semantic conventions for MCP (semantic-conventions-genai,
 * `docs/gen-ai/mcp.md`, status Development).
 *
 * Nothing to switch on: with a tracer installed, every request a server answers runs in a SERVER
 * span and every request a client sends in a CLIENT span, both named `{mcp.method.name} {target}` (the tool or prompt name;
 * resource URIs stay out of names) with the conventions' attributes (`mcp.method.name`,
 * `jsonrpc.request.id`, `mcp.protocol.version`, `gen_ai.tool.name` and `gen_ai.operation.name:
 * execute_tool`, `gen_ai.prompt.name`, `mcp.resource.uri`, `mcp.session.id` for HTTP legacy
 * sessions, `network.transport` `pipe` / `tcp`, `network.protocol.name` `http`, `client.address`
 * on HTTP servers, `server.address` / `server.port` on HTTP clients, and on failure `error.type`
 * and `rpc.response.status_code`). The client writes its span's `traceparent` (and the current
 * {@link TraceContext}'s `tracestate` / `baggage`) into `params._meta`; the server continues the
 * caller's trace from it, so a proxy keeps one trace from its caller to its backends. Spans go to
 * whatever `Tracer` the app provides (`@effect/opentelemetry` exports them; see `examples/tracing.ts`).
 * Without one (Effect's built-in tracer, or tracing disabled) no span is made and no `traceparent`
 * written unless there is a trace to continue (a caller's `traceparent`; a span the client is
 * called beneath); the metrics below are recorded either way, with the same labels.
 *
 * The durations are Effect `Metric` histograms in seconds with the conventions' bucket
 * boundaries; the app's metric exporter reads them from Effect's registry.
 *
 * Guide: [Observability](https://github.com/presa-mcp/presa-mcp/blob/main/docs/observability.md).
 *
 * @since 0.2.0
 */
import type * as Metric from "effect/Metric"
import * as internal from "./internal/telemetry.js"

/**
 * What a transport knows of the other end of a connection, recorded on spans and metrics:
 * `transport` is `network.transport` (`pipe` for stdio, `tcp` for HTTP); `protocolName` /
 * `protocolVersion` are `network.protocol.*`; `address` / `port` are the peer's (`client.*` on a
 * server span, `server.*` on a client span; a port is recorded only with an address);
 * `sessionId` is `mcp.session.id`.
 *
 * @since 0.2.0
 * @category models
 */
export type Peer = internal.Peer

/**
 * Telemetry options of a server (`McpServer.Options.telemetry`) or a client
 * (`McpClient.Options.telemetry`): `recordToolContent` records a tool call's arguments and result
 * as `gen_ai.tool.call.arguments` / `gen_ai.tool.call.result` (JSON text; they may hold sensitive
 * data, so this is opt-in). Default `false`.
 *
 * @since 0.2.0
 * @category models
 */
export type Options = internal.Options

/**
 * The W3C `tracestate` and `baggage` values that travel beside the trace in `params._meta`. A
 * server provides the caller's values to the request's handlers; a client adds the current values
 * to every request it sends unless the request's own `_meta` has them (so a proxy passes them
 * on). Default: none. Provide it to send baggage of your own:
 * `Effect.provideService(effect, Telemetry.TraceContext, { baggage: "tenant=acme" })`.
 *
 * @since 0.2.0
 * @category models
 */
export const TraceContext = internal.TraceContext

/**
 * The bucket boundaries, in seconds, of every `mcp.*.duration` histogram:
 * `[0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]` (the conventions'
 * `ExplicitBucketBoundaries`).
 *
 * @since 0.2.0
 * @category models
 */
export const DURATION_BOUNDARIES: ReadonlyArray<number> = internal.DURATION_BOUNDARIES

/**
 * `mcp.server.operation.duration`: seconds from receiving a request until its response is
 * ready (histogram, unit `s`). Labels: `mcp.method.name`, `gen_ai.tool.name`,
 * `gen_ai.prompt.name`, `gen_ai.operation.name`, `mcp.protocol.version`, `network.transport`,
 * `network.protocol.name`, and on failure `error.type` (the JSON-RPC code, `tool_error`,
 * `cancelled`) and `rpc.response.status_code`, and `unit: "s"` (how `@effect/opentelemetry` learns
 * the unit). Names a peer makes up must not grow the label sets: a -32602 answer carries no tool
 * or prompt name, a -32601 answer records the method as `_OTHER`. Read the values with
 * `Metric.snapshot` (one entry per label set).
 *
 * @since 0.2.0
 * @category models
 */
export const serverOperationDuration: Metric.Metric.Histogram<number> = internal.serverOperationDuration

/**
 * `mcp.client.operation.duration`: seconds from sending a request until its response arrived
 * (histogram, unit `s`); the server labels plus `server.address` / `server.port` where the
 * transport knows them; `error.type` is also `timeout` (the request's deadline) or the failure's
 * tag (`TransportError`, `ClientError`).
 *
 * @since 0.2.0
 * @category models
 */
export const clientOperationDuration: Metric.Metric.Histogram<number> = internal.clientOperationDuration

/**
 * `mcp.server.session.duration`: seconds a legacy session (a stdio process, an HTTP
 * `Mcp-Session-Id`) lasted, recorded when it ends, if it was initialized (histogram, unit
 * `s`). Labels: `mcp.protocol.version`, `network.transport`, `network.protocol.name`.
 *
 * @since 0.2.0
 * @category models
 */
export const serverSessionDuration: Metric.Metric.Histogram<number> = internal.serverSessionDuration

/**
 * `mcp.client.session.duration`: seconds a client's legacy session lasted, from `connect` to
 * `close` (histogram, unit `s`). Labels: `mcp.protocol.version`, `network.transport`,
 * `network.protocol.name`.
 *
 * @since 0.2.0
 * @category models
 */
export const clientSessionDuration: Metric.Metric.Histogram<number> = internal.clientSessionDuration
