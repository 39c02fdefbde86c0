/**
 * Observability by the OpenTelemetry semantic conventions for MCP (semantic-conventions-genai,
 * `docs/gen-ai/mcp.md`, status Development): span names, kinds and attributes, trace context in
 * `params._meta`, and the `mcp.*.duration` histograms. Server and client share it.
 *
 * What the conventions leave to the instrumentation, decided here (docs/architecture.md,
 * "Observability"):
 * - `error.type` is the JSON-RPC error code as a string, `tool_error` for a `CallToolResult` with
 *   `isError: true`, `timeout` for a client deadline, `cancelled` for a request that was
 *   interrupted, and the error's tag for other client failures (`TransportError`, `ClientError`);
 * - the metrics leave out `gen_ai.tool.name` / `gen_ai.prompt.name` when the answer is -32602
 *   (an unknown name from a peer must not grow the metric's label sets without bound);
 * - span names never carry a resource URI (the conventions' default: URIs are high-cardinality).
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import * as JsonRpc from "../JsonRpc.js"
import * as McpSchema from "../McpSchema.js"

// ---------------------------------------------------------------------------------------------
// attribute keys (semantic-conventions-genai, docs/gen-ai/mcp.md, "Spans", "Metrics")
// ---------------------------------------------------------------------------------------------

export const Attr = {
  methodName: "mcp.method.name",
  protocolVersion: "mcp.protocol.version",
  sessionId: "mcp.session.id",
  resourceUri: "mcp.resource.uri",
  toolName: "gen_ai.tool.name",
  promptName: "gen_ai.prompt.name",
  operationName: "gen_ai.operation.name",
  toolArguments: "gen_ai.tool.call.arguments",
  toolResult: "gen_ai.tool.call.result",
  requestId: "jsonrpc.request.id",
  errorType: "error.type",
  statusCode: "rpc.response.status_code",
  networkTransport: "network.transport",
  networkProtocolName: "network.protocol.name",
  networkProtocolVersion: "network.protocol.version",
  serverAddress: "server.address",
  serverPort: "server.port",
  clientAddress: "client.address",
  clientPort: "client.port"
} as const

/** The trace context keys of `params._meta`, written unprefixed (SEP-414; W3C Trace Context, W3C Baggage). */
export const MetaKey = { traceparent: "traceparent", tracestate: "tracestate", baggage: "baggage" } as const

/** What a transport knows of the other end of a connection (all optional but `transport`). */
export interface Peer {
  /** `network.transport`: `pipe` for stdio, `tcp` for HTTP. */
  readonly transport: "pipe" | "tcp" | "quic" | "unix"
  /** `network.protocol.name`, lower-case (`http`). */
  readonly protocolName?: string | undefined
  /** `network.protocol.version` (`1.1`, `2`). */
  readonly protocolVersion?: string | undefined
  /** The peer's address: `client.address` on a server span, `server.address` on a client span. */
  readonly address?: string | undefined
  /** The peer's port: `client.port` on a server span, `server.port` on a client span. */
  readonly port?: number | undefined
  /** `mcp.session.id`: the legacy session's id where it has one (`Mcp-Session-Id`). */
  readonly sessionId?: string | undefined
}

/** Options shared by server and client: content capture is opt-in (it may hold sensitive data). */
export interface Options {
  /** Record `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` (JSON text). Default false. */
  readonly recordToolContent?: boolean | undefined
}

// ---------------------------------------------------------------------------------------------
// trace context carried beside the span: tracestate and baggage
// ---------------------------------------------------------------------------------------------

/**
 * The W3C `tracestate` and `baggage` values a request carries beside its span: set by the server
 * from the caller's `params._meta` for the time of the request, added by the client to the
 * requests it sends. An app may provide its own (`Effect.provideService`).
 */
export class TraceContext extends Context.Reference<TraceContext>()("presa-mcp/TraceContext", {
  defaultValue: (): { readonly tracestate?: string | undefined; readonly baggage?: string | undefined } => ({})
}) {}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/
const ZERO_TRACE = "00000000000000000000000000000000"
const ZERO_SPAN = "0000000000000000"

/**
 * The remote parent a `traceparent` value names (W3C Trace Context, "traceparent Header"): version
 * `ff`, all-zero ids, or a version 00 value with more fields are invalid and ignored.
 */
export const parseTraceparent = (value: unknown): Tracer.ExternalSpan | undefined => {
  if (typeof value !== "string") return undefined
  const m = TRACEPARENT.exec(value.trim())
  if (m === null) return undefined
  const [, version, traceId, spanId, flags] = m
  if (
    version === undefined || traceId === undefined || spanId === undefined || flags === undefined ||
    version === "ff" || traceId === ZERO_TRACE || spanId === ZERO_SPAN ||
    (version === "00" && value.trim().length !== 55)
  ) return undefined
  return Tracer.externalSpan({ traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 })
}

/** The `traceparent` value of a span (version 00). */
export const formatTraceparent = (span: Tracer.AnySpan): string =>
  `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`

// ---------------------------------------------------------------------------------------------
// names and attributes
// ---------------------------------------------------------------------------------------------

/** The methods whose params name a resource URI (`mcp.resource.uri`). */
const URI_METHODS: ReadonlySet<string> = new Set([
  McpSchema.Method.resourcesRead,
  McpSchema.Method.resourcesSubscribe,
  McpSchema.Method.resourcesUnsubscribe,
  McpSchema.Method.resourcesUpdated
])

/**
 * The span name: `{mcp.method.name} {target}` where the target is the tool or prompt name, else
 * `{mcp.method.name}` (a resource URI is high-cardinality and is left out).
 */
export const spanName = (method: string, params: JsonRpc.JsonObject | undefined): string => {
  const target = lowTarget(method, params)
  return target === undefined ? method : `${method} ${target}`
}

const lowTarget = (method: string, params: JsonRpc.JsonObject | undefined): string | undefined =>
  (method === McpSchema.Method.toolsCall || method === McpSchema.Method.promptsGet) && typeof params?.name === "string"
    ? params.name
    : undefined

/** The attributes a request's method and params give (both sides). */
export const requestAttributes = (
  method: string,
  params: JsonRpc.JsonObject | undefined,
  id: JsonRpc.RequestId | undefined,
  content: boolean
): Record<string, unknown> => {
  const out: Record<string, unknown> = { [Attr.methodName]: method }
  if (id !== undefined && id !== null) out[Attr.requestId] = String(id)
  if (method === McpSchema.Method.toolsCall) {
    out[Attr.operationName] = "execute_tool"
    if (typeof params?.name === "string") out[Attr.toolName] = params.name
    if (content && params?.arguments !== undefined) out[Attr.toolArguments] = jsonText(params.arguments)
  } else if (method === McpSchema.Method.promptsGet) {
    if (typeof params?.name === "string") out[Attr.promptName] = params.name
  } else if (URI_METHODS.has(method) && typeof params?.uri === "string") {
    out[Attr.resourceUri] = params.uri
  }
  return out
}

/** `network.*` and the peer's address: `client.*` seen from a server, `server.*` from a client. */
export const peerAttributes = (
  out: Record<string, unknown>,
  peer: Peer | undefined,
  side: "server" | "client"
): Record<string, unknown> => {
  if (peer === undefined) return out
  out[Attr.networkTransport] = peer.transport
  if (peer.protocolName !== undefined) out[Attr.networkProtocolName] = peer.protocolName
  if (peer.protocolVersion !== undefined) out[Attr.networkProtocolVersion] = peer.protocolVersion
  if (peer.address !== undefined) {
    out[side === "server" ? Attr.clientAddress : Attr.serverAddress] = peer.address
    if (peer.port !== undefined) out[side === "server" ? Attr.clientPort : Attr.serverPort] = peer.port
  }
  if (peer.sessionId !== undefined) out[Attr.sessionId] = peer.sessionId
  return out
}

const jsonText = (u: unknown): string => {
  try {
    return JSON.stringify(u) ?? "null"
  } catch {
    return "\"[unencodable]\""
  }
}

// ---------------------------------------------------------------------------------------------
// outcomes
// ---------------------------------------------------------------------------------------------

/** What ended an operation, for `error.type`, `rpc.response.status_code` and the span status. */
export interface Outcome {
  /** `error.type`; absent on success. */
  readonly errorType?: string | undefined
  /** `rpc.response.status_code`: the JSON-RPC error code, when the response carries one. */
  readonly statusCode?: string | undefined
  /** The span status description: the JSON-RPC error's message. */
  readonly message?: string | undefined
  /** The tool's result (content capture). */
  readonly toolResult?: unknown
}

/** The outcome of a JSON-RPC response (either side). */
export const responseOutcome = (response: JsonRpc.Response): Outcome => {
  if (JsonRpc.isErrorResponse(response)) {
    const code = String(response.error.code)
    return { errorType: code, statusCode: code, message: response.error.message }
  }
  return resultOutcome(response.result)
}

/** The outcome of a result: `tool_error` for `isError: true`. */
export const resultOutcome = (result: JsonRpc.JsonObject): Outcome =>
  result.isError === true
    ? { errorType: "tool_error", message: "tool_error" }
    : { toolResult: result.structuredContent ?? result.content }

/** Why the span has the ERROR status: its description is the error's message. */
export class OperationError extends Data.TaggedError("OperationError")<{ readonly message: string }> {}

/**
 * Sets the outcome's attributes on `span` and ends it: ERROR (with the message) when
 * `error.type` is set, else OK; an interruption ends it as interrupted.
 */
export const endSpan = (
  span: Tracer.Span,
  endNanos: bigint,
  outcome: Outcome | undefined,
  interrupted: Exit.Exit<unknown, unknown> | undefined,
  content: boolean
): void => {
  if (outcome?.errorType !== undefined) span.attribute(Attr.errorType, outcome.errorType)
  if (outcome?.statusCode !== undefined) span.attribute(Attr.statusCode, outcome.statusCode)
  if (content && outcome?.errorType === undefined && outcome?.toolResult !== undefined) {
    span.attribute(Attr.toolResult, jsonText(outcome.toolResult))
  }
  span.end(
    endNanos,
    interrupted ?? (outcome?.errorType === undefined
      ? Exit.void
      : Exit.fail(new OperationError({ message: outcome.message ?? outcome.errorType })))
  )
}

// ---------------------------------------------------------------------------------------------
// metrics (semantic-conventions-genai, docs/gen-ai/mcp.md, "Metrics")
// ---------------------------------------------------------------------------------------------

/** The conventions' explicit bucket boundaries for every `mcp.*.duration` histogram, in seconds. */
export const DURATION_BOUNDARIES: ReadonlyArray<number> = [
  0.01,
  0.02,
  0.05,
  0.1,
  0.2,
  0.5,
  1,
  2,
  5,
  10,
  30,
  60,
  120,
  300
]

const histogram = (name: string, description: string): Metric.Metric.Histogram<number> =>
  Metric.histogram(name, MetricBoundaries.fromIterable(DURATION_BOUNDARIES), description)

export const serverOperationDuration = histogram(
  "mcp.server.operation.duration",
  "MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent."
)
export const clientOperationDuration = histogram(
  "mcp.client.operation.duration",
  "The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received."
)
export const serverSessionDuration = histogram(
  "mcp.server.session.duration",
  "The duration of the MCP session as observed on the MCP server."
)
export const clientSessionDuration = histogram(
  "mcp.client.session.duration",
  "The duration of the MCP session as observed on the MCP client."
)

/** The unit (UCUM `s`): Effect metrics carry it as a label, which `@effect/opentelemetry` reads as the unit. */
const UNIT = MetricLabel.make("unit", "s")

/** The attribute keys an operation metric takes from the span's attributes (conventions' metric tables). */
const OPERATION_METRIC_KEYS = [
  Attr.methodName,
  Attr.toolName,
  Attr.promptName,
  Attr.operationName,
  Attr.protocolVersion,
  Attr.networkTransport,
  Attr.networkProtocolName,
  Attr.networkProtocolVersion,
  Attr.serverAddress,
  Attr.serverPort,
  Attr.errorType,
  Attr.statusCode
] as const

/**
 * Label arrays by their text, so that each distinct label set is one array: effect's metric hooks
 * are cached by the identity of the label array (a fresh array per update would look the
 * registry up, hashing every label, each time). Bounded: past the bound arrays are not kept.
 */
const labelSets = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()
const MAX_LABEL_SETS = 4096

const labelsOf = (pairs: ReadonlyArray<readonly [string, string]>): ReadonlyArray<MetricLabel.MetricLabel> => {
  let text = ""
  for (const [k, v] of pairs) text += `${k}\u0000${v}\u0001`
  const cached = labelSets.get(text)
  if (cached !== undefined) return cached
  const labels = [UNIT, ...pairs.map(([k, v]) => MetricLabel.make(k, v))]
  if (labelSets.size < MAX_LABEL_SETS) labelSets.set(text, labels)
  return labels
}

/** Updates `metric` with `labels` and the fiber's own metric labels (`Effect.tagMetrics`), if any. */
const update = (
  metric: Metric.Metric.Histogram<number>,
  labels: ReadonlyArray<MetricLabel.MetricLabel>,
  seconds: number
): Effect.Effect<void> =>
  Effect.withFiberRuntime((fiber) => {
    updateNow(fiber, metric, labels, seconds)
    return Effect.void
  })

/**
 * {@link update} at once, in a step of `fiber` that already runs (its own metric labels as they
 * are now): what `update` runs, for a caller already inside such a step.
 */
const updateNow = (
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  metric: Metric.Metric.Histogram<number>,
  labels: ReadonlyArray<MetricLabel.MetricLabel>,
  seconds: number
): void => {
  const own = fiber.getFiberRef(FiberRef.currentMetricLabels)
  metric.unsafeUpdate(seconds, own.length === 0 ? labels : [...labels, ...own])
}

/**
 * Records one operation's duration with the span's low-cardinality attributes and its outcome.
 * Kept bounded against names a peer makes up: a -32602 answer (unknown tool or prompt) drops
 * the tool / prompt name, a -32601 answer (unknown method) records the method as `_OTHER`.
 */
export const recordOperation = (
  metric: Metric.Metric.Histogram<number>,
  span: Tracer.Span,
  initial: Record<string, unknown>,
  outcome: Outcome | undefined,
  seconds: number
): Effect.Effect<void> => {
  const invalidName = outcome?.statusCode === INVALID_PARAMS
  const unknownMethod = outcome?.statusCode === METHOD_NOT_FOUND
  const pairs: Array<readonly [string, string]> = []
  for (const key of OPERATION_METRIC_KEYS) {
    if (invalidName && (key === Attr.toolName || key === Attr.promptName)) continue
    const value = key === Attr.errorType
      ? outcome?.errorType
      : key === Attr.statusCode
      ? outcome?.statusCode
      : key === Attr.methodName && unknownMethod
      ? "_OTHER"
      : attributeOf(span, initial, key)
    if (typeof value === "string") pairs.push([key, value])
    else if (typeof value === "number") pairs.push([key, String(value)])
  }
  return update(metric, labelsOf(pairs), seconds)
}

/**
 * An attribute of the span, else of the attributes it was opened with (a span of a disabled
 * tracer keeps none: the metric still gets the request's own).
 */
const attributeOf = (span: Tracer.Span, initial: Record<string, unknown>, key: string): unknown => {
  const value = span.attributes.get(key)
  return value === undefined ? initial[key] : value
}

const INVALID_PARAMS = String(JsonRpc.ErrorCode.InvalidParams)
const METHOD_NOT_FOUND = String(JsonRpc.ErrorCode.MethodNotFound)

/** Nanoseconds between two clock readings, in seconds. */
export const secondsBetween = (startNanos: bigint, endNanos: bigint): number => Number(endNanos - startNanos) / 1e9

// ---------------------------------------------------------------------------------------------
// is anyone watching? (the fast path without a tracer)
// ---------------------------------------------------------------------------------------------

/** Effect's built-in tracer, the one a fiber has when the app installed none (its spans go nowhere). */
const NATIVE_TRACER = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/**
 * Do this fiber's spans go anywhere? Yes when tracing is enabled and the app installed a tracer
 * (`@effect/opentelemetry`, `Effect.withTracer`, `Layer.setTracer`). Two field reads: checked
 * once per request (docs/architecture.md, "Observability").
 */
const isTracing = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean =>
  fiber.currentTracer !== NATIVE_TRACER && fiber.getFiberRef(FiberRef.currentTracerEnabled)

/**
 * One request's telemetry while a server handles it: its SERVER span when one was made, and the
 * protocol version once the request's era is known (a label of the duration metric).
 */
export interface Operation {
  readonly span: Tracer.Span | undefined
  protocolVersion: string | undefined
}

/** Records the request's protocol version, on the span too when there is one (`mcp.protocol.version`). */
export const setProtocolVersion = (operation: Operation, protocolVersion: string): void => {
  operation.protocolVersion = protocolVersion
  operation.span?.attribute(Attr.protocolVersion, protocolVersion)
}

const CANCELLED: Outcome = { errorType: "cancelled" }

/**
 * The labels of an operation metric without a span: the same label sets, in the same order, that
 * `recordOperation` takes from a span's attributes (see there for the bounds against made-up
 * names). Cached by a key of the label values, so a repeated request builds nothing.
 */
const operationLabels = (
  side: "server" | "client",
  peer: Peer | undefined,
  method: string,
  name: unknown,
  protocolVersion: string | undefined,
  outcome: Outcome
): ReadonlyArray<MetricLabel.MetricLabel> => {
  const target = typeof name === "string" &&
      (method === McpSchema.Method.toolsCall || method === McpSchema.Method.promptsGet)
    ? name
    : undefined
  const serverSide = side === "server" || peer?.address === undefined
  // Looked up by each value in turn (no key text built per request: the values are strings the
  // request already holds): peer, method, target, protocol version, outcome.
  const pk = peerKey(side, peer, serverSide)
  const outcomeKey = outcome.errorType === undefined && outcome.statusCode === undefined
    ? undefined
    : `${outcome.errorType ?? "\u0001"}\u0000${outcome.statusCode ?? "\u0001"}`
  const cached = fastLabels.get(pk)?.get(method)?.get(target)?.get(protocolVersion)?.get(outcomeKey)
  if (cached !== undefined) return cached
  const invalidName = outcome.statusCode === INVALID_PARAMS
  const pairs: Array<readonly [string, string]> = [
    [Attr.methodName, outcome.statusCode === METHOD_NOT_FOUND ? "_OTHER" : method]
  ]
  if (target !== undefined && !invalidName) {
    pairs.push([method === McpSchema.Method.toolsCall ? Attr.toolName : Attr.promptName, target])
  }
  if (method === McpSchema.Method.toolsCall) pairs.push([Attr.operationName, "execute_tool"])
  if (protocolVersion !== undefined) pairs.push([Attr.protocolVersion, protocolVersion])
  if (peer !== undefined) {
    pairs.push([Attr.networkTransport, peer.transport])
    if (peer.protocolName !== undefined) pairs.push([Attr.networkProtocolName, peer.protocolName])
    if (peer.protocolVersion !== undefined) pairs.push([Attr.networkProtocolVersion, peer.protocolVersion])
    if (!serverSide && peer.address !== undefined) {
      pairs.push([Attr.serverAddress, peer.address])
      if (peer.port !== undefined) pairs.push([Attr.serverPort, String(peer.port)])
    }
  }
  if (outcome.errorType !== undefined) pairs.push([Attr.errorType, outcome.errorType])
  if (outcome.statusCode !== undefined) pairs.push([Attr.statusCode, outcome.statusCode])
  const labels = labelsOf(pairs)
  if (fastLabelSets < MAX_LABEL_SETS) {
    fastLabelSets++
    levelOf(levelOf(levelOf(levelOf(fastLabels, pk), method), target), protocolVersion).set(outcomeKey, labels)
  }
  return labels
}

/** One level of `operationLabels`' cache: a value of the label set → the next level. */
type Level<A> = Map<string | undefined, A>
type Labels = ReadonlyArray<MetricLabel.MetricLabel>

/**
 * `operationLabels`' cache: label arrays by their values, one level per value (bounded as
 * `labelSets`: past `MAX_LABEL_SETS` arrays, new ones are not kept).
 */
const fastLabels: Level<Level<Level<Level<Level<Labels>>>>> = new Map()
let fastLabelSets = 0

/** The next level of the cache under `key`, made when missing. */
const levelOf = <A>(level: Level<Level<A>>, key: string | undefined): Level<A> => {
  let next = level.get(key)
  if (next === undefined) {
    next = new Map()
    level.set(key, next)
  }
  return next
}

/**
 * The part of the label set a peer gives, as one key: the side, the transport and protocol and,
 * seen from a client, the server's address. The last peer's key is kept (one connection's peer is
 * one object: stdio's `pipe` is built once).
 */
const peerKey = (side: "server" | "client", peer: Peer | undefined, serverSide: boolean): string => {
  if (peer === undefined) return side
  const last = side === "server" ? lastServerPeer : lastClientPeer
  if (last !== undefined && last.peer === peer) return last.key
  const key = `${side}\u0000${peer.transport}\u0000${peer.protocolName}\u0000${peer.protocolVersion}\u0000${
    serverSide ? "\u0001" : `${peer.address}\u0000${peer.port}`
  }`
  if (side === "server") lastServerPeer = { peer, key }
  else lastClientPeer = { peer, key }
  return key
}
let lastServerPeer: { readonly peer: Peer; readonly key: string } | undefined
let lastClientPeer: { readonly peer: Peer; readonly key: string } | undefined

// ---------------------------------------------------------------------------------------------
// the server side of one request
// ---------------------------------------------------------------------------------------------

/**
 * Runs `handle` for one request and records `mcp.server.operation.duration`. When a tracer is
 * installed, or `params._meta` carries a caller's `traceparent` to continue, `handle` runs inside
 * the request's SERVER span: named and attributed by the conventions, the child of the caller's
 * `traceparent` (the ambient span, if any, becomes a link), ended with the reply's outcome.
 * A server made beneath a span (`spanned`: its captured environment holds one) makes the span too,
 * so that its handlers never run beneath that make-time span. Otherwise no span is made and no
 * attribute is built (the metric's labels come from a cache). `handle` gets the `Operation` (its
 * span, if any, is the parent of whatever the request traces).
 */
export const serverRequest = <R extends { readonly message: JsonRpc.Response }>(
  request: JsonRpc.Request,
  peer: Peer | undefined,
  options: Options | undefined,
  spanned: boolean,
  handle: (operation: Operation, trace: TraceContext["Type"] | undefined) => Effect.Effect<R>
): Effect.Effect<R> =>
  Effect.withFiberRuntime((fiber) => {
    const params = request.params
    const meta = JsonRpc.isObject(params?._meta) ? params._meta : undefined
    const remote = meta === undefined ? undefined : parseTraceparent(meta[MetaKey.traceparent])
    const trace = meta === undefined ? undefined : traceContextOf(meta)
    const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
    if (remote === undefined && !spanned && !isTracing(fiber)) {
      const operation: Operation = { span: undefined, protocolVersion: undefined }
      const start = clock.unsafeCurrentTimeNanos()
      return Effect.onExit(handle(operation, trace), (exit) => {
        const end = clock.unsafeCurrentTimeNanos()
        let outcome = CANCELLED
        if (Exit.isSuccess(exit)) {
          const response = exit.value.message
          outcome = responseOutcome(response)
          if (
            request.method === McpSchema.Method.initialize && !JsonRpc.isErrorResponse(response) &&
            typeof response.result.protocolVersion === "string"
          ) operation.protocolVersion = response.result.protocolVersion
        }
        return update(
          serverOperationDuration,
          operationLabels("server", peer, request.method, params?.name, operation.protocolVersion, outcome),
          secondsBetween(start, end)
        )
      })
    }
    return tracedServerRequest(request, params, remote, trace, clock, peer, options, handle)
  })

const tracedServerRequest = <R extends { readonly message: JsonRpc.Response }>(
  request: JsonRpc.Request,
  params: JsonRpc.JsonObject | undefined,
  remote: Tracer.ExternalSpan | undefined,
  trace: TraceContext["Type"] | undefined,
  clock: Clock.Clock,
  peer: Peer | undefined,
  options: Options | undefined,
  handle: (operation: Operation, trace: TraceContext["Type"] | undefined) => Effect.Effect<R>
): Effect.Effect<R> => {
  const content = options?.recordToolContent === true
  const attributes = peerAttributes(
    requestAttributes(request.method, params, request.id, content),
    peer,
    "server"
  )
  const start = clock.unsafeCurrentTimeNanos()
  const open = remote === undefined
    ? Effect.makeSpan(spanName(request.method, params), { kind: "server", attributes, captureStackTrace: false })
    : Effect.flatMap(
      Effect.serviceOption(Tracer.ParentSpan),
      (ambient) =>
        Effect.makeSpan(spanName(request.method, params), {
          kind: "server",
          attributes,
          captureStackTrace: false,
          parent: remote,
          links: Option.isSome(ambient) ? [{ _tag: "SpanLink", span: ambient.value, attributes: {} }] : []
        })
    )
  return Effect.flatMap(open, (span) =>
    Effect.onExit(handle({ span, protocolVersion: undefined }, trace), (exit) => {
      const end = clock.unsafeCurrentTimeNanos()
      const outcome = Exit.isSuccess(exit)
        ? responseOutcome(exit.value.message)
        : CANCELLED
      if (Exit.isSuccess(exit) && request.method === McpSchema.Method.initialize) {
        const response = exit.value.message
        if (!JsonRpc.isErrorResponse(response) && typeof response.result.protocolVersion === "string") {
          span.attribute(Attr.protocolVersion, response.result.protocolVersion)
        }
      }
      endSpan(span, end, Exit.isSuccess(exit) ? outcome : undefined, Exit.isSuccess(exit) ? undefined : exit, content)
      return recordOperation(serverOperationDuration, span, attributes, outcome, secondsBetween(start, end))
    }))
}

/** The `tracestate` / `baggage` of a request's `_meta`, if it carries either. */
export const traceContextOf = (meta: JsonRpc.JsonObject): TraceContext["Type"] | undefined => {
  const tracestate = meta[MetaKey.tracestate]
  const baggage = meta[MetaKey.baggage]
  if (typeof tracestate !== "string" && typeof baggage !== "string") return undefined
  return {
    ...(typeof tracestate === "string" ? { tracestate } : {}),
    ...(typeof baggage === "string" ? { baggage } : {})
  }
}

// ---------------------------------------------------------------------------------------------
// the client side of one request
// ---------------------------------------------------------------------------------------------

/**
 * Runs `send` with the params to send and records `mcp.client.operation.duration`. When a tracer
 * is installed, or the request is sent beneath a span (a trace to continue: a proxy forwarding a
 * traced call, an app's `Effect.withSpan`), `send` runs inside the request's CLIENT span and the
 * params carry `params._meta.traceparent` naming it; the span ends with the outcome. Otherwise no
 * span is made and no `traceparent` written. Either way the current `TraceContext`'s `tracestate`
 * / `baggage` are added unless the params carry their own.
 */
export const clientRequest = <A, E1, E extends { readonly _tag: string }>(
  method: string,
  params: JsonRpc.JsonObject | undefined,
  id: JsonRpc.RequestId,
  protocolVersion: string | undefined,
  peer: Peer | undefined,
  options: Options | undefined,
  send: (params: JsonRpc.JsonObject | undefined) => Effect.Effect<A, E1>,
  settle: (exit: Exit.Exit<A, E1>) => Exit.Exit<JsonRpc.JsonObject, E>
): Effect.Effect<JsonRpc.JsonObject, E> =>
  Effect.withFiberRuntime((fiber) => {
    const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
    const trace = Context.get(fiber.currentContext, TraceContext)
    if (fiber.currentSpan === undefined && !isTracing(fiber)) {
      const start = clock.unsafeCurrentTimeNanos()
      const sent = trace.tracestate === undefined && trace.baggage === undefined
        ? params
        : withTraceMeta(params, undefined, trace)
      // `Effect.onExit` without its cleanup step: the metric is updated in the step that sees the
      // outcome, which is then returned as it is (bench/README.md, "Issue #24: in-process, session 8").
      // `settle` runs in that step too (no step of its own for the transport's answer).
      const record = (exit: Exit.Exit<JsonRpc.JsonObject, E>): Exit.Exit<JsonRpc.JsonObject, E> => {
        const end = clock.unsafeCurrentTimeNanos()
        const outcome = Exit.isSuccess(exit) ? resultOutcome(exit.value) : failureOutcome(exit) ?? CANCELLED
        updateNow(
          fiber,
          clientOperationDuration,
          operationLabels("client", peer, method, params?.name, protocolVersion, outcome),
          secondsBetween(start, end)
        )
        return exit
      }
      return Effect.uninterruptibleMask((restore) =>
        Effect.matchCauseEffect(restore(send(sent)), {
          onFailure: (cause) => record(settle(Exit.failCause(cause))),
          onSuccess: (answer) => record(settle(Exit.succeed(answer)))
        })
      )
    }
    const content = options?.recordToolContent === true
    const attributes = peerAttributes(requestAttributes(method, params, id, content), peer, "client")
    if (protocolVersion !== undefined) attributes[Attr.protocolVersion] = protocolVersion
    const start = clock.unsafeCurrentTimeNanos()
    return Effect.flatMap(
      Effect.makeSpan(spanName(method, params), { kind: "client", attributes, captureStackTrace: false }),
      (span) =>
        send(withTraceMeta(params, span, trace)).pipe(
          Effect.matchCauseEffect({
            onFailure: (cause) => settle(Exit.failCause(cause)),
            onSuccess: (answer) => settle(Exit.succeed(answer))
          }),
          // what the transport traces (an HTTP request) runs beneath the MCP span
          Effect.withParentSpan(span),
          Effect.onExit((exit) => {
            const end = clock.unsafeCurrentTimeNanos()
            const outcome = Exit.isSuccess(exit) ? resultOutcome(exit.value) : failureOutcome(exit)
            endSpan(span, end, outcome, outcome === undefined ? exit : undefined, content)
            return recordOperation(
              clientOperationDuration,
              span,
              attributes,
              outcome ?? CANCELLED,
              secondsBetween(start, end)
            )
          })
        )
    )
  })

/** A client failure's outcome: an `McpError` by its code, a deadline as `timeout`, else the error's tag; `undefined` for an interruption. */
const failureOutcome = (exit: Exit.Exit<unknown, { readonly _tag: string }>): Outcome | undefined => {
  if (Exit.isSuccess(exit)) return undefined
  const failure = Option.getOrUndefined(Cause.failureOption(exit.cause))
  if (failure === undefined) return undefined
  if (failure instanceof JsonRpc.McpError) {
    const code = String(failure.code)
    return { errorType: code, statusCode: code, message: failure.message }
  }
  const reason = "reason" in failure ? failure.reason : undefined
  const message = "message" in failure && typeof failure.message === "string" ? failure.message : failure._tag
  return reason === "Timeout" ? { errorType: "timeout", message } : { errorType: failure._tag, message }
}

/** `params` with the trace context keys in `_meta`: the span's `traceparent` (always wins), if any, and the trace context's unless the params carry their own. */
const withTraceMeta = (
  params: JsonRpc.JsonObject | undefined,
  span: Tracer.Span | undefined,
  trace: TraceContext["Type"]
): JsonRpc.JsonObject => {
  const own = params !== undefined && JsonRpc.isObject(params._meta) ? params._meta : undefined
  const meta: Record<string, unknown> = span === undefined
    ? { ...own }
    : { ...own, [MetaKey.traceparent]: formatTraceparent(span) }
  if (trace.tracestate !== undefined && own?.[MetaKey.tracestate] === undefined) {
    meta[MetaKey.tracestate] = trace.tracestate
  }
  if (trace.baggage !== undefined && own?.[MetaKey.baggage] === undefined) meta[MetaKey.baggage] = trace.baggage
  return { ...params, _meta: meta }
}

/** Records a legacy session's duration (`mcp.{side}.session.duration`) from `startNanos` to now. */
export const recordSession = (
  side: "server" | "client",
  startNanos: bigint,
  protocolVersion: string | undefined,
  peer: Peer | undefined
): Effect.Effect<void> =>
  Effect.flatMap(Clock.currentTimeNanos, (now) => {
    const pairs: Array<readonly [string, string]> = []
    if (protocolVersion !== undefined) pairs.push([Attr.protocolVersion, protocolVersion])
    if (peer !== undefined) {
      pairs.push([Attr.networkTransport, peer.transport])
      if (peer.protocolName !== undefined) pairs.push([Attr.networkProtocolName, peer.protocolName])
    }
    return update(
      side === "server" ? serverSessionDuration : clientSessionDuration,
      labelsOf(pairs),
      secondsBetween(startNanos, now)
    )
  })
