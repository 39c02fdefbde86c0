/**
 * McpClient → @effect/ai Toolkit: the server's tools as `Tool`s whose parameters carry the tools'
 * JSON Schemas, handlers that call `tools/call`, a toolkit that follows `tools/list_changed`.
 * Public surface: src/AiToolkit.ts.
 * @internal
 */
import * as AiTool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SynchronizedRef from "effect/SynchronizedRef"
import type { McpToolkit, Options, Snapshot } from "../../AiToolkit.js"
import type * as JsonRpc from "../../JsonRpc.js"
import type * as McpClient from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"

/** Any JSON object: what a tool takes; the provider sees the tool's own `inputSchema` instead. */
export const Arguments = Schema.Struct({}, Schema.Record({ key: Schema.String, value: Schema.Unknown }))

/** An MCP tool as an @effect/ai tool. */
export type McpTool = AiTool.Tool<string, {
  readonly parameters: typeof Arguments
  readonly success: typeof McpSchema.CallToolResult
  readonly failure: typeof McpSchema.CallToolResult
  readonly failureMode: "return"
}>

/** The tools of a server, by (possibly renamed) name. */
export type McpTools = { readonly [name: string]: McpTool }

/** What the model reads when the call itself failed (a JSON-RPC error, a lost connection). */
const callFailure = (error: McpClient.CallError): McpSchema.CallToolResult => ({
  content: [{
    type: "text",
    text: error._tag === "McpError"
      ? `MCP error ${error.code}: ${error.message}`
      : `MCP call failed (${error._tag}): ${error.message}`
  }],
  isError: true
})

const annotate = (tool: McpTool, listed: McpSchema.Tool): McpTool => {
  const hints = listed.annotations
  const title = listed.title ?? hints?.title
  let annotated = title === undefined ? tool : tool.annotate(AiTool.Title, title)
  if (hints?.readOnlyHint !== undefined) annotated = annotated.annotate(AiTool.Readonly, hints.readOnlyHint)
  if (hints?.destructiveHint !== undefined) annotated = annotated.annotate(AiTool.Destructive, hints.destructiveHint)
  if (hints?.idempotentHint !== undefined) annotated = annotated.annotate(AiTool.Idempotent, hints.idempotentHint)
  if (hints?.openWorldHint !== undefined) annotated = annotated.annotate(AiTool.OpenWorld, hints.openWorldHint)
  return annotated
}

const toAiTool = (name: string, listed: McpSchema.Tool): McpTool =>
  annotate(
    AiTool.make(name, {
      description: listed.description,
      success: McpSchema.CallToolResult,
      failure: McpSchema.CallToolResult,
      failureMode: "return"
    }).setParameters(Arguments.annotations({ jsonSchema: listed.inputSchema })),
    listed
  )

const build = (
  client: McpClient.McpClient,
  options: Options,
  listed: ReadonlyArray<McpSchema.Tool>
): Effect.Effect<Snapshot> =>
  Effect.gen(function*() {
    const tools: Array<McpTool> = []
    const handlers: Record<
      string,
      (params: JsonRpc.JsonObject) => Effect.Effect<McpSchema.CallToolResult, McpSchema.CallToolResult>
    > = {}
    const kept: Array<McpSchema.Tool> = []
    const { onProgress, timeout } = options
    for (const tool of listed) {
      if (options.filter !== undefined && !options.filter(tool)) continue
      const name = options.rename === undefined ? tool.name : options.rename(tool)
      // `__proto__` cannot be a key of the toolkit's records (Toolkit.make, the handlers).
      if (Object.hasOwn(handlers, name) || name === "__proto__") {
        yield* Effect.logWarning(`AiToolkit: tool "${tool.name}" left out: the name "${name}" is taken`)
        continue
      }
      kept.push(tool)
      tools.push(toAiTool(name, tool))
      handlers[name] = (params) =>
        client.callTool(tool.name, params, {
          ...(timeout === undefined ? {} : { timeout }),
          ...(onProgress === undefined ? {} : { onProgress: (progress) => onProgress(name, progress) })
        }).pipe(
          Effect.catchAll((error) => Effect.succeed(callFailure(error))),
          Effect.flatMap((result) => result.isError === true ? Effect.fail(result) : Effect.succeed(result))
        )
    }
    const toolkit: Toolkit.Toolkit<McpTools> = Toolkit.make(...tools)
    const context = yield* toolkit.toContext(handlers)
    const handled = yield* Effect.provide(toolkit, context)
    return { tools: kept, toolkit, handlers: Layer.succeedContext(context), handled }
  })

export const make = (
  client: McpClient.McpClient,
  options: Options = {}
): Effect.Effect<McpToolkit, McpClient.CallError, Scope.Scope> =>
  Effect.gen(function*() {
    const load = Effect.flatMap(client.listAllTools, (listed) => build(client, options, listed))
    const state = yield* SynchronizedRef.make(yield* load)
    const refresh = SynchronizedRef.updateEffect(state, () => load)
    const following = options.follow === false ? false : yield* follow(client, refresh)
    // A change between the first list and the listen's acknowledgement would be missed.
    if (following) yield* refresh
    const snapshot = SynchronizedRef.get(state)
    return { toolkit: Effect.map(snapshot, (s) => s.handled), snapshot, refresh, following }
  })

/**
 * Listens for `notifications/tools/list_changed` and refreshes on each one, for the Scope's
 * lifetime. `false` when the server does not announce tool list changes (or serves no listen).
 */
const follow = (
  client: McpClient.McpClient,
  refresh: Effect.Effect<void, McpClient.CallError>
): Effect.Effect<boolean, never, Scope.Scope> =>
  client.listen({ toolsListChanged: true }).pipe(
    Effect.flatMap((subscription) =>
      subscription.acknowledged.toolsListChanged !== true
        ? Effect.succeed(false)
        : subscription.notifications.pipe(
          Stream.filter((n) => n.method === McpSchema.Method.toolsListChanged),
          Stream.runForEach(() =>
            refresh.pipe(
              Effect.catchAll((error) => Effect.logWarning("AiToolkit: refreshing the tools failed", error))
            )
          ),
          Effect.catchAll((error) => Effect.logWarning("AiToolkit: the tools/list_changed stream ended", error)),
          Effect.forkScoped,
          Effect.as(true)
        )
    ),
    Effect.catchAll((error) =>
      Effect.logDebug("AiToolkit: not following tools/list_changed", error).pipe(Effect.as(false))
    )
  )

export const McpToolkitTag: Context.Tag<McpToolkit, McpToolkit> = Context.GenericTag<McpToolkit>(
  "presa-mcp/AiToolkit/McpToolkit"
)
