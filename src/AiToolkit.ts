/**
 * A bridge to `@effect/ai` (0.37, an optional peer dependency: only this module needs it), both ways:
 *
 * - **MCP tools for an agent**: {@link make} / {@link layer} turn the tools of a connected
 *   `McpClient` into an `@effect/ai` `Toolkit` for `LanguageModel.generateText({ toolkit })`. The
 *   provider sees each tool's own `inputSchema`; calling a tool sends `tools/call`; an `isError`
 *   result is the tool's failure the model reads; the toolkit follows
 *   `notifications/tools/list_changed`.
 * - **A Toolkit over MCP**: {@link serve} is a definition Layer (as `McpServer.tool`) that serves
 *   every tool of a `Toolkit` with its handlers: schemas derived, typed failures as `isError`.
 *   On the other side, {@link handlersFromClient} gives the same `Toolkit` handlers that call the
 *   server, typed by the shared definitions.
 *
 * Import it as `presa-mcp/AiToolkit` (the package root does not re-export it, so `presa-mcp` never
 * loads `@effect/ai`). Spec: Server › Tools (2026-07-28, 2025-11-25).
 *
 * @since 0.2.0
 */
import type * as AiTool from "@effect/ai/Tool"
import type * as Toolkit from "@effect/ai/Toolkit"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { DefinitionError } from "./Errors.js"
import * as client from "./internal/ai/client.js"
import * as remote from "./internal/ai/remote.js"
import * as server from "./internal/ai/server.js"
import * as McpClient from "./McpClient.js"
import type * as McpSchema from "./McpSchema.js"
import type * as McpServer from "./McpServer.js"
import type * as Tool from "./Tool.js"

/**
 * The parameters Schema of every MCP tool: any JSON object (`{ readonly [k: string]: unknown }`),
 * annotated per tool with the tool's `inputSchema` as its `jsonSchema`, so `Tool.getJsonSchema` (what
 * providers send to the model) yields the server's schema unchanged. The server validates the
 * arguments.
 *
 * @since 0.2.0
 * @category models
 */
export const Arguments: typeof client.Arguments = client.Arguments

/**
 * An MCP tool as an `@effect/ai` `Tool`: parameters {@link Arguments}; success and failure the
 * `CallToolResult` (`content`, `structuredContent`, `_meta` passed through as the server sent
 * them); `failureMode: "return"`, so a failure is a tool result the model reads, never a failure
 * of `generateText`. `Tool.Title` and the hints (`Readonly`, `Destructive`, `Idempotent`,
 * `OpenWorld`) are annotated from the tool's `title` and `annotations`.
 *
 * @since 0.2.0
 * @category models
 */
export type McpTool = client.McpTool

/**
 * The tools of a server by name (as renamed by {@link Options.rename}).
 *
 * @since 0.2.0
 * @category models
 */
export type McpTools = client.McpTools

/**
 * How {@link make} turns a server's tools into a toolkit.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** Keep only the tools this accepts (default: all). Applied on every refresh. */
  readonly filter?: ((tool: McpSchema.Tool) => boolean) | undefined
  /**
   * The name the model sees (default: the tool's own). Calls still use the server's name. Two tools
   * with one name: the first listed is kept, the other left out with a warning (so is a tool named
   * `__proto__`, which a toolkit cannot hold). Providers restrict
   * names (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`): rename dotted or long names here.
   */
  readonly rename?: ((tool: McpSchema.Tool) => string) | undefined
  /**
   * Follow `notifications/tools/list_changed` (a `McpClient.listen` for the Scope's lifetime; each
   * notification lists the tools again). Default `true`; without it, or when the server does not
   * announce changes, call {@link McpToolkit.refresh}.
   */
  readonly follow?: boolean | undefined
  /** Deadline of each `tools/call` (default: the client's `requestTimeout`). */
  readonly timeout?: McpClient.CallOptions["timeout"]
  /** Called with each `notifications/progress` of a call, with the tool's (renamed) name. */
  readonly onProgress?: ((name: string, progress: McpClient.Progress) => Effect.Effect<void>) | undefined
}

/**
 * The toolkit as it is now: the tools as listed (after `filter`), the `Toolkit` of their
 * {@link McpTool}s, a Layer of their handlers (provide it to run the `Toolkit`, e.g. merged with
 * tools of your own: `Toolkit.merge(snapshot.toolkit, Mine)`), and both together (`handled`).
 *
 * @since 0.2.0
 * @category models
 */
export interface Snapshot {
  readonly tools: ReadonlyArray<McpSchema.Tool>
  readonly toolkit: Toolkit.Toolkit<McpTools>
  readonly handlers: Layer.Layer<AiTool.Handler<string>>
  readonly handled: Toolkit.WithHandler<McpTools>
}

/**
 * A server's tools for an agent.
 *
 * - `toolkit`: the current tools with their handlers; pass it as `generateText({ toolkit })` (it is
 *   read on every call, so a turn sees the latest list). A handler sends `tools/call` with the
 *   model's arguments; `isError: true` and a failed call (`McpError`, `TransportError`,
 *   `RequestTimeout`, `ClientError`, as an `isError` text result naming it) are the tool's failure,
 *   which the model reads. Interrupting the agent's fiber interrupts the call, which cancels it
 *   (`notifications/cancelled`).
 * - `snapshot`: the same as a {@link Snapshot}.
 * - `refresh`: lists the tools again now (fails with `McpClient.CallError`; the toolkit is then
 *   unchanged).
 * - `following`: whether `tools/list_changed` is followed (see {@link Options.follow}).
 *
 * @since 0.2.0
 * @category models
 */
export interface McpToolkit {
  readonly toolkit: Effect.Effect<Toolkit.WithHandler<McpTools>>
  readonly snapshot: Effect.Effect<Snapshot>
  readonly refresh: Effect.Effect<void, McpClient.CallError>
  readonly following: boolean
}

/**
 * The service Tag of {@link layer}'s {@link McpToolkit}.
 *
 * @since 0.2.0
 * @category tags
 */
export const McpToolkit: Context.Tag<McpToolkit, McpToolkit> = client.McpToolkitTag

/**
 * The tools of `mcp` (a connected client) as an {@link McpToolkit}, for as long as the Scope is
 * open. Lists the tools (`tools/list`, every page) and, unless `follow: false`, listens for their
 * changes. Fails with `McpClient.CallError` when the first list fails; a server without listen
 * support is not an error (the toolkit then changes only on `refresh`).
 *
 * @example
 * ```ts
 * import * as LanguageModel from "@effect/ai/LanguageModel"
 * import * as Effect from "effect/Effect"
 * import * as AiToolkit from "presa-mcp/AiToolkit"
 * import * as McpClient from "presa-mcp/McpClient"
 *
 * const answer = Effect.gen(function*() {
 *   const mcp = yield* AiToolkit.fromClient(yield* McpClient.McpClient)
 *   const response = yield* LanguageModel.generateText({ prompt: "What is 2 + 3?", toolkit: mcp.toolkit })
 *   return response.text
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromClient: (
  mcp: McpClient.McpClient,
  options?: Options
) => Effect.Effect<McpToolkit, McpClient.CallError, Scope.Scope> = client.make

/**
 * {@link fromClient} with the `McpClient` of the context.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (
  options?: Options
): Effect.Effect<McpToolkit, McpClient.CallError, McpClient.McpClient | Scope.Scope> =>
  Effect.flatMap(McpClient.McpClient, (mcp) => client.make(mcp, options))

/**
 * {@link make} as a Layer of {@link McpToolkit} (needs `McpClient.layer(...)`): the listen lives
 * as long as the Layer. Fails to build with `McpClient.CallError` as {@link make} fails.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<McpToolkit, McpClient.CallError, McpClient.McpClient> =>
  Layer.scoped(McpToolkit, make(options))

/**
 * The services a toolkit's handlers need besides their handlers Layer (tools' `dependencies`).
 *
 * @since 0.2.0
 * @category type-level
 */
export type Requirements<Tools extends Record<string, AiTool.Any>> = server.Requirements<Tools>

/**
 * The user-defined tools of `toolkit` as MCP tools (provider-defined tools run at the provider
 * and are left out), for `McpServer.make({ tools })`, `Part.make` or `McpServer.addTool`. Needs the
 * toolkit's handlers (its `toLayer` Layer). Each tool:
 *
 * - `name`, `description` (`Tool.getDescription`), `title` from `Tool.Title`, `annotations` from
 *   the hints set on it (`Readonly` → `readOnlyHint`, `Destructive`, `Idempotent`, `OpenWorld`);
 * - `inputSchema`: `Tool.deriveJsonSchema` of its parameters (`{type: "object", properties: {}}`
 *   for none); the server validates the arguments against it (SEP-1303: a refused call is an
 *   `isError` result), the toolkit decodes them with the Schema;
 * - `outputSchema`: derived from its success Schema (none for `Void`); the encoded success is
 *   `structuredContent` (a non-object one as `{value}`, as `Tool.make` does) plus its JSON as text;
 * - a failure (`failureMode: "error"` failing, or `"return"` returning one): an `isError` result
 *   whose text is the encoded failure's JSON (and `structuredContent` when it is an object), as a
 *   `ToolError` is; arguments the Schema refuses: `isError` "Invalid arguments: …"; a result the
 *   toolkit cannot encode, or an error of another type: a defect (an `isError` result naming it).
 *
 * @since 0.2.0
 * @category constructors
 */
export const toTools: <Tools extends Record<string, AiTool.Any>>(
  toolkit: Toolkit.Toolkit<Tools>
) => Effect.Effect<ReadonlyArray<Tool.Tool<Requirements<Tools>>>, never, AiTool.HandlersFor<Tools>> = server.toTools

/**
 * A definition Layer (as `McpServer.tool`) that adds every tool of `toolkit` ({@link toTools}) to
 * the `McpServer` of its context, removed when its scope closes. It requires the toolkit's handlers
 * (`Toolkit.toLayer(...)`) and what they need. Fails with `DefinitionError` (a name taken, a bad
 * schema).
 *
 * @example
 * ```ts
 * import * as AiTool from "@effect/ai/Tool"
 * import * as Toolkit from "@effect/ai/Toolkit"
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import * as Schema from "effect/Schema"
 * import { McpServer } from "presa-mcp"
 * import * as AiToolkit from "presa-mcp/AiToolkit"
 *
 * const Add = AiTool.make("add", {
 *   parameters: { a: Schema.Number, b: Schema.Number },
 *   success: Schema.Struct({ sum: Schema.Number })
 * })
 * const Calculator = Toolkit.make(Add)
 * const Handlers = Calculator.toLayer({ add: ({ a, b }) => Effect.succeed({ sum: a + b }) })
 *
 * const App = AiToolkit.serve(Calculator).pipe(
 *   Layer.provide(Handlers),
 *   Layer.provideMerge(McpServer.layer({ name: "calculator", version: "1.0.0" }))
 * )
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const serve: <Tools extends Record<string, AiTool.Any>>(
  toolkit: Toolkit.Toolkit<Tools>
) => Layer.Layer<never, DefinitionError, McpServer.McpServer | AiTool.HandlersFor<Tools> | Requirements<Tools>> =
  server.layer

/**
 * The handlers of `toolkit` as calls to the tools of the same names on the `McpClient` of the
 * context: the typed side of {@link serve}, for a client that shares the `Toolkit`'s definitions
 * with the server. Each handler encodes its parameters with the tool's parameters Schema, sends
 * `tools/call`, and decodes the result with the tool's Schemas: a success from `structuredContent`
 * (unwrapping `{value}` as {@link serve} wraps it), an `isError` result's `structuredContent` as
 * the tool's failure (so a `failureMode: "error"` tool fails `generateText` with its own typed
 * error, a `"return"` one is a result with `isFailure`). What the Schemas cannot read is a defect:
 * an `isError` result without a typed failure (invalid arguments, a server's defect: a
 * `Tool.ToolError` holding its content), a result that does not decode, a failed call
 * (`McpClient.CallError`). Interrupting a handler cancels its call.
 *
 * @example
 * ```ts
 * import * as LanguageModel from "@effect/ai/LanguageModel"
 * import * as AiTool from "@effect/ai/Tool"
 * import * as Toolkit from "@effect/ai/Toolkit"
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 * import * as AiToolkit from "presa-mcp/AiToolkit"
 *
 * // Shared with the server, which serves it with AiToolkit.serve(Calculator)
 * const Add = AiTool.make("add", {
 *   parameters: { a: Schema.Number, b: Schema.Number },
 *   success: Schema.Struct({ sum: Schema.Number })
 * })
 * const Calculator = Toolkit.make(Add)
 *
 * const answer = LanguageModel.generateText({ prompt: "What is 2 + 3?", toolkit: Calculator }).pipe(
 *   Effect.provide(AiToolkit.handlersFromClient(Calculator))
 * ) // needs McpClient.McpClient and a LanguageModel
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const handlersFromClient: <Tools extends Record<string, AiTool.Any>>(
  toolkit: Toolkit.Toolkit<Tools>,
  options?: Pick<Options, "timeout" | "onProgress">
) => Layer.Layer<AiTool.HandlersFor<Tools>, never, McpClient.McpClient> = remote.handlers
