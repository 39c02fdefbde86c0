/**
 * The host side of the MCP Apps view protocol (2026-01-26, "Communication Protocol", "MCP Apps
 * Specific Messages", "Lifecycle"): JSON-RPC 2.0 over a postMessage-style port. Platform-neutral
 * (it runs in a browser page as well as in Node): no Node API, no timer but Effect's Clock.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import * as AppMeta from "../appMeta.js"
import { quote } from "../quote.js"

/** The MCP Apps revision this host speaks. @internal */
export const PROTOCOL_VERSION = "2026-01-26"

/** @internal */
export interface Port {
  readonly postMessage: (message: unknown) => void
  readonly subscribe: (onMessage: (message: unknown) => void) => () => void
}

/** What a failed server call may fail with: a JSON-RPC error is relayed, anything else is -32603. @internal */
export type ServerError = JsonRpc.McpError | { readonly _tag: string; readonly message: string }

/** @internal */
export interface Server {
  readonly callTool: (
    name: string,
    args?: JsonRpc.JsonObject
  ) => Effect.Effect<McpSchema.CallToolResult, ServerError>
  readonly readResource: (uri: string) => Effect.Effect<McpSchema.ReadResourceResult, ServerError>
}

/** @internal */
export type Visibility = "model" | "app"

/** @internal */
export interface SizeChange {
  readonly width?: number | undefined
  readonly height?: number | undefined
}

/** @internal */
export interface Options {
  readonly port: Port
  readonly server: Server
  readonly tool: McpSchema.Tool
  readonly tools: ReadonlyArray<McpSchema.Tool>
  readonly resolveTool?:
    | ((name: string, tools: ReadonlyArray<McpSchema.Tool>) => McpSchema.Tool | undefined)
    | undefined
  readonly hostInfo?: McpSchema.Implementation | undefined
  readonly hostContext?: JsonRpc.JsonObject | undefined
  readonly approvedCsp?: JsonRpc.JsonObject | undefined
  readonly onOpenLink?: ((url: string) => Effect.Effect<void, JsonRpc.McpError>) | undefined
  readonly onMessage?: ((params: JsonRpc.JsonObject) => Effect.Effect<void, JsonRpc.McpError>) | undefined
  readonly onUpdateModelContext?: ((params: JsonRpc.JsonObject) => Effect.Effect<void, JsonRpc.McpError>) | undefined
  readonly onLog?: ((params: JsonRpc.JsonObject) => Effect.Effect<void>) | undefined
  readonly onSizeChange?: ((size: SizeChange) => Effect.Effect<void>) | undefined
  readonly onRequestTeardown?: Effect.Effect<void> | undefined
  readonly onCall?: ((method: string, params: JsonRpc.JsonObject | undefined) => Effect.Effect<void>) | undefined
}

/** @internal */
export interface Bridge {
  readonly initialized: Effect.Effect<void>
  readonly appInfo: Effect.Effect<Option.Option<JsonRpc.JsonObject>>
  readonly sendToolInput: (args: JsonRpc.JsonObject) => Effect.Effect<void>
  readonly sendToolInputPartial: (args: JsonRpc.JsonObject) => Effect.Effect<void>
  readonly sendToolResult: (result: McpSchema.CallToolResult) => Effect.Effect<void>
  readonly sendToolCancelled: (reason?: string) => Effect.Effect<void>
  readonly setHostContext: (changes: JsonRpc.JsonObject) => Effect.Effect<void>
  readonly teardown: (reason?: string) => Effect.Effect<void, JsonRpc.McpError>
}

/**
 * A tool's `_meta.ui.visibility` by the library's one rule (internal/appMeta.ts; MCP Apps
 * 2026-01-26, "Resource Discovery" › Visibility): `["model", "app"]` when `_meta.ui` or its
 * `visibility` is absent, none when `_meta.ui` is malformed.
 *
 * @internal
 */
export const visibility = (tool: McpSchema.Tool): ReadonlyArray<Visibility> => AppMeta.visibility(tool._meta)

/** The tool's `_meta.ui.resourceUri` (or the deprecated flat `_meta["ui/resourceUri"]`); none when `_meta.ui` is malformed. @internal */
export const resourceUri = (tool: McpSchema.Tool): string | undefined => AppMeta.resourceUri(tool._meta)

/** The default tool lookup: the tool of that exact name. @internal */
export const exactTool = (name: string, tools: ReadonlyArray<McpSchema.Tool>): McpSchema.Tool | undefined =>
  tools.find((t) => t.name === name)

const HOST_INFO = { name: "presa-mcp-app-host", version: "0.1.0" }

const InitializeParams = Schema.Struct({
  protocolVersion: Schema.String,
  appInfo: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  appCapabilities: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})
const SizeParams = Schema.Struct({
  width: Schema.optional(Schema.Number.pipe(Schema.finite(), Schema.nonNegative())),
  height: Schema.optional(Schema.Number.pipe(Schema.finite(), Schema.nonNegative()))
})
const OpenLinkParams = Schema.Struct({ url: Schema.String })
const DisplayModeParams = Schema.Struct({ mode: Schema.Literal("inline", "fullscreen", "pip") })

type Pending = ReadonlyMap<JsonRpc.RequestId, Deferred.Deferred<JsonRpc.JsonObject, JsonRpc.McpError>>

interface State {
  readonly options: Options
  readonly initialized: Deferred.Deferred<void>
  readonly appInfo: Ref.Ref<Option.Option<JsonRpc.JsonObject>>
  readonly pending: Ref.Ref<Pending>
  readonly nextId: Ref.Ref<number>
  readonly torn: Ref.Ref<boolean>
}

const post = (state: State, message: JsonRpc.Message): Effect.Effect<void> =>
  Effect.sync(() => state.options.port.postMessage(message))

const decode = <A, I>(schema: Schema.Schema<A, I>, params: JsonRpc.JsonObject | undefined) =>
  Schema.decodeUnknown(schema)(params ?? {}).pipe(
    Effect.mapError((e) => JsonRpc.McpError.invalidParams(`Invalid params: ${quote(e.message, 512)}`))
  )

/** A server failure as the view sees it: its JSON-RPC error as is, anything else a fixed -32603. */
const relayed = (e: ServerError): JsonRpc.McpError =>
  e instanceof JsonRpc.McpError ? e : JsonRpc.McpError.internalError("The server could not be reached")

/** `tools/call` from the view: only a tool of this server whose visibility includes "app". */
const callTool = (state: State, params: JsonRpc.JsonObject | undefined) =>
  Effect.gen(function*() {
    const decoded = yield* decode(McpSchema.CallToolParams, params)
    const resolve = state.options.resolveTool ?? exactTool
    const tool = resolve(decoded.name, state.options.tools)
    if (tool === undefined || !visibility(tool).includes("app")) {
      return yield* JsonRpc.McpError.invalidParams(
        `Tool not callable from this view: ${quote(decoded.name)} (its visibility does not include "app")`,
        { name: quote(decoded.name) }
      )
    }
    const args = decoded.arguments
    if (args !== undefined && args !== null && !JsonRpc.isObject(args)) {
      return yield* JsonRpc.McpError.invalidParams("Invalid params: arguments must be an object")
    }
    // the server's own name for the tool (a resolver may map the view's name to it)
    return yield* state.options.server.callTool(tool.name, args ?? undefined).pipe(Effect.mapError(relayed))
  })

const initializeResult = (state: State): JsonRpc.JsonObject => ({
  protocolVersion: PROTOCOL_VERSION,
  hostInfo: state.options.hostInfo ?? HOST_INFO,
  hostCapabilities: {
    serverTools: {},
    serverResources: {},
    logging: {},
    ...(state.options.onOpenLink === undefined ? {} : { openLinks: {} }),
    ...(state.options.onMessage === undefined ? {} : { message: { text: {} } }),
    ...(state.options.onUpdateModelContext === undefined ? {} : { updateModelContext: { text: {} } }),
    sandbox: { permissions: {}, ...(state.options.approvedCsp === undefined ? {} : { csp: state.options.approvedCsp }) }
  },
  hostContext: {
    displayMode: "inline",
    availableDisplayModes: ["inline"],
    ...state.options.hostContext,
    toolInfo: { tool: state.options.tool }
  }
})

const optional = <A>(
  handler: ((a: A) => Effect.Effect<void, JsonRpc.McpError>) | undefined,
  method: string,
  a: A
): Effect.Effect<JsonRpc.JsonObject, JsonRpc.McpError> =>
  handler === undefined ? Effect.fail(JsonRpc.McpError.methodNotFound(method)) : Effect.as(handler(a), {})

/** Answers one request from the view. */
const answer = (
  state: State,
  method: string,
  params: JsonRpc.JsonObject | undefined
): Effect.Effect<JsonRpc.JsonObject, JsonRpc.McpError> => {
  const o = state.options
  switch (method) {
    case "ui/initialize":
      return Effect.gen(function*() {
        const p = yield* decode(InitializeParams, params)
        yield* Ref.set(state.appInfo, Option.some(p.appInfo))
        return initializeResult(state)
      })
    case "ping":
      return Effect.succeed({})
    case "tools/call":
      return callTool(state, params)
    case "resources/read":
      return Effect.flatMap(
        decode(McpSchema.ReadResourceParams, params),
        (p) => o.server.readResource(p.uri).pipe(Effect.mapError(relayed))
      )
    case "ui/open-link":
      return Effect.flatMap(decode(OpenLinkParams, params), (p) => {
        if (!/^https?:\/\//i.test(p.url) || !URL.canParse(p.url)) {
          return Effect.fail(JsonRpc.McpError.invalidParams("Invalid URL: only http(s) links are opened"))
        }
        return optional(o.onOpenLink, method, p.url)
      })
    case "ui/message":
      return optional(o.onMessage, method, params ?? {})
    case "ui/update-model-context":
      return optional(o.onUpdateModelContext, method, params ?? {})
    case "ui/request-display-mode":
      // only "inline" is offered (hostContext.availableDisplayModes): the answer is the current mode
      return Effect.as(decode(DisplayModeParams, params), { mode: "inline" })
    default:
      return Effect.fail(JsonRpc.McpError.methodNotFound(method))
  }
}

const onNotification = (state: State, method: string, params: JsonRpc.JsonObject | undefined): Effect.Effect<void> => {
  const o = state.options
  switch (method) {
    case "ui/notifications/initialized":
      return Deferred.succeed(state.initialized, undefined)
    case "ui/notifications/size-changed":
      return decode(SizeParams, params).pipe(
        Effect.flatMap((size) => o.onSizeChange === undefined ? Effect.void : o.onSizeChange(size)),
        Effect.ignore
      )
    case "notifications/message":
      return o.onLog === undefined ? Effect.void : o.onLog(params ?? {})
    case "ui/notifications/request-teardown":
      return o.onRequestTeardown ?? Effect.void
    default:
      return Effect.void
  }
}

const onResponse = (state: State, response: JsonRpc.Response): Effect.Effect<void> =>
  Effect.gen(function*() {
    const id = "id" in response ? response.id : undefined
    if (id === undefined || id === null) return
    const pending = yield* Ref.get(state.pending)
    const waiting = pending.get(id)
    if (waiting === undefined) return
    yield* Ref.update(state.pending, (m) => new Map([...m].filter(([k]) => k !== id)))
    yield* JsonRpc.isErrorResponse(response)
      ? Deferred.fail(waiting, JsonRpc.McpError.fromErrorObject(response.error))
      : Deferred.succeed(waiting, response.result)
  })

/** Handles one message from the view; each request runs in its own fiber (a slow tool blocks nothing). */
const receive = (state: State, message: unknown): Effect.Effect<void, never, Scope.Scope> => {
  const classified = JsonRpc.classify(message)
  switch (classified._tag) {
    case "Invalid":
      return classified.id === undefined ? Effect.void : post(state, JsonRpc.failure(classified.id, classified.error))
    case "Response":
      return onResponse(state, classified.message)
    case "Notification":
      return onNotification(state, classified.message.method, classified.message.params)
    case "Request": {
      const { id, method, params } = classified.message
      const logged = state.options.onCall === undefined ? Effect.void : state.options.onCall(method, params)
      return logged.pipe(
        Effect.zipRight(answer(state, method, params)),
        Effect.matchEffect({
          onFailure: (e) => post(state, JsonRpc.failure(id, e)),
          onSuccess: (result) => post(state, JsonRpc.success(id, result))
        }),
        Effect.forkScoped,
        Effect.asVoid
      )
    }
  }
}

/** Sends a notification once the view said `ui/notifications/initialized` (never before: "Sandbox proxy", 6). */
const notify = (state: State, method: string, params: JsonRpc.JsonObject): Effect.Effect<void> =>
  Deferred.await(state.initialized).pipe(Effect.zipRight(post(state, JsonRpc.notification(method, params))))

const request = (
  state: State,
  method: string,
  params: JsonRpc.JsonObject
): Effect.Effect<JsonRpc.JsonObject, JsonRpc.McpError> =>
  Effect.gen(function*() {
    yield* Deferred.await(state.initialized)
    const id = yield* Ref.getAndUpdate(state.nextId, (n) => n + 1)
    const reply = yield* Deferred.make<JsonRpc.JsonObject, JsonRpc.McpError>()
    yield* Ref.update(state.pending, (m) => new Map([...m, [id, reply]]))
    yield* post(state, JsonRpc.request(id, method, params))
    return yield* Deferred.await(reply)
  })

/** @internal */
export const make = (options: Options): Effect.Effect<Bridge, never, Scope.Scope> =>
  Effect.gen(function*() {
    const state: State = {
      options,
      initialized: yield* Deferred.make<void>(),
      appInfo: yield* Ref.make(Option.none<JsonRpc.JsonObject>()),
      pending: yield* Ref.make<Pending>(new Map()),
      nextId: yield* Ref.make(1),
      torn: yield* Ref.make(false)
    }
    // The port's listener only enqueues; one fiber of this scope handles the messages in order.
    const inbox = yield* Queue.sliding<unknown>(1024)
    yield* Effect.acquireRelease(
      Effect.sync(() => options.port.subscribe((message) => Queue.unsafeOffer(inbox, message))),
      (unsubscribe) => Effect.sync(unsubscribe)
    )
    yield* Queue.take(inbox).pipe(
      Effect.flatMap((message) => receive(state, message)),
      Effect.forever,
      Effect.forkScoped
    )
    return {
      initialized: Deferred.await(state.initialized),
      appInfo: Ref.get(state.appInfo),
      sendToolInput: (args) => notify(state, "ui/notifications/tool-input", { arguments: args }),
      sendToolInputPartial: (args) => notify(state, "ui/notifications/tool-input-partial", { arguments: args }),
      sendToolResult: (result) => notify(state, "ui/notifications/tool-result", result),
      sendToolCancelled: (reason) =>
        notify(state, "ui/notifications/tool-cancelled", reason === undefined ? {} : { reason }),
      setHostContext: (changes) => notify(state, "ui/notifications/host-context-changed", changes),
      teardown: (reason) =>
        Ref.getAndSet(state.torn, true).pipe(
          Effect.flatMap((torn) =>
            torn
              ? Effect.void
              : Effect.asVoid(request(state, "ui/resource-teardown", reason === undefined ? {} : { reason }))
          )
        )
    }
  })
