/**
 * Testing a server in process, made for `@effect/vitest` (guide: docs/testing.md).
 *
 * - {@link layer} builds a server from `McpServer` options and connects a client to it in this
 *   process; {@link layerFromService} connects to the `McpServer.McpServer` of the context (an app
 *   made of definition Layers). Both provide `McpClient.McpClient` and {@link TestClient}. The
 *   client speaks 2026-07-28 ("modern") by default, 2025-11-25 ("legacy") with `era: "legacy"`.
 * - Scripted answers to the server's questions ({@link Options} `elicit`, `sample`, `roots`):
 *   modern `input_required` rounds and legacy server→client requests alike; what was asked is
 *   kept ({@link TestClient} `asked`).
 * - Recorded notifications: progress and log messages of every `tools/call`, `prompts/get` and
 *   `resources/read` (the transport adds a progress token and, modern, the log level `debug`
 *   when the request has none), and list changes (a `subscriptions/listen` / the legacy session
 *   stream, opened with the client).
 * - Time: the in-process deadlines (`requestTimeout`, progress-extended ones, the probe), the
 *   client cache's `ttlMs`, task ttls and handlers' `Effect.sleep` run on the fiber's `Clock`, so
 *   under `it.effect` the `TestClock` drives them (`TestClock.adjust`). List-change coalescing
 *   has no time window (it waits for the end of the event-loop turn), so it needs no clock.
 * - Assertions as Effects failing with {@link AssertionError}: {@link expectSuccess},
 *   {@link expectError}, {@link structured} (decodes `structuredContent` with a Schema).
 * - {@link listing}: `tools/list`, `prompts/list`, `resources/list` and
 *   `resources/templates/list` as one sorted, key-normalised JSON text, for `toMatchSnapshot` /
 *   `toMatchInlineSnapshot`: a schema that drifts changes the text.
 *
 * The module imports neither `vitest` nor `@effect/vitest` (they stay the test's own
 * dependencies); its assertions are plain Effect failures, so any runner reports them.
 *
 * @since 0.2.0
 */
import type * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as Input from "./Input.js"
import * as internal from "./internal/testing.js"
import type * as JsonRpc from "./JsonRpc.js"
import type * as McpClient from "./McpClient.js"
import type * as McpSchema from "./McpSchema.js"
import * as McpServer from "./McpServer.js"
import type * as Middleware from "./Middleware.js"
import type * as Prompt from "./Prompt.js"
import type * as Resource from "./Resource.js"
import type * as Tool from "./Tool.js"

/**
 * Scripted answers to one kind of question: a list (the n-th question gets the n-th answer; one
 * more is answered with an `McpError` -32603 naming the question, which fails the call) or a
 * function of the question's params.
 *
 * @since 0.2.0
 * @category models
 */
export type Script<A> =
  | ReadonlyArray<A>
  | ((params: JsonRpc.JsonObject) => Effect.Effect<A, JsonRpc.McpError>)

/**
 * Options of the test client.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** The revision spoken: `"modern"` (2026-07-28, default) or `"legacy"` (2025-11-25, `initialize`). */
  readonly era?: "modern" | "legacy" | undefined
  /** Answers to `elicitation/create` (declares `elicitation`). Default: none (the client cannot answer). */
  readonly elicit?: Script<Input.ElicitResult> | undefined
  /** Answers to `sampling/createMessage` (declares `sampling`). Default: none. */
  readonly sample?: Script<Input.CreateMessageResult> | undefined
  /** The roots `roots/list` answers (declares `roots`). Default: none. */
  readonly roots?: Input.ListRootsResult["roots"] | undefined
  /**
   * The log level asked for on modern requests that carry none (`null`: ask for none, so the
   * server sends no log messages). Default `"debug"`. Legacy servers use the session's level.
   */
  readonly logLevel?: McpSchema.LoggingLevel | null | undefined
  /** Open a listen for list changes with the client (recorded). Default `true`; it is skipped when the server refuses it. */
  readonly listen?: boolean | undefined
  /**
   * Further `McpClient.Options` (e.g. `requestTimeout`, `cache`, `resetTimeoutOnProgress`);
   * `versions` and the input handlers come from the fields above.
   */
  readonly client?: Omit<McpClient.Options, "versions" | "onElicit" | "onSample" | "onRoots"> | undefined
}

/**
 * One question the server asked the client: its method (`elicitation/create`,
 * `sampling/createMessage`, `roots/list`) and params, in the order asked.
 *
 * @since 0.2.0
 * @category models
 */
export interface Asked {
  readonly method: string
  readonly params: JsonRpc.JsonObject
}

/**
 * The test's handle on the connection.
 *
 * - `client`: the connected `McpClient` (also provided as `McpClient.McpClient`);
 * - `server`: the server under test;
 * - `notifications`: every notification recorded so far, in arrival order (progress, log
 *   messages, list changes, resource updates); `notificationsOf(method)` those of one method;
 *   `clearNotifications` forgets them;
 * - `awaitNotification(method, {count, within})`: waits until `count` (default 1) notifications
 *   of `method` were recorded and yields them; fails with {@link AssertionError} after `within`
 *   (`DurationInput`, default 2 seconds) of *real* time, whatever clock the test runs on (a
 *   list change arrives after the end of the event-loop turn);
 * - `asked`: the questions the server asked, in order.
 *
 * @since 0.2.0
 * @category models
 */
export interface TestClient {
  readonly client: McpClient.McpClient
  readonly server: McpServer.McpServer
  readonly notifications: Effect.Effect<ReadonlyArray<JsonRpc.Notification>>
  readonly notificationsOf: (method: string) => Effect.Effect<ReadonlyArray<JsonRpc.Notification>>
  readonly clearNotifications: Effect.Effect<void>
  readonly awaitNotification: (
    method: string,
    options?: { readonly count?: number; readonly within?: Duration.DurationInput }
  ) => Effect.Effect<ReadonlyArray<JsonRpc.Notification>, AssertionError>
  readonly asked: Effect.Effect<ReadonlyArray<Asked>>
}

/**
 * The service Tag of the {@link TestClient}: `yield* Testing.TestClient` in a test given
 * {@link layer} or {@link layerFromService}.
 *
 * @since 0.2.0
 * @category tags
 */
export const TestClient: Context.Tag<TestClient, TestClient> = internal.TestClientTag

/**
 * The failure of a `Testing` assertion; its `message` says what was expected and what came.
 *
 * @since 0.2.0
 * @category errors
 */
export type AssertionError = internal.AssertionError

/**
 * The class of {@link AssertionError} (tag `"AssertionError"`).
 *
 * @since 0.2.0
 * @category errors
 */
export const AssertionError: typeof internal.AssertionError = internal.AssertionError

/**
 * A test client connected to `server` in this process, for the Scope's lifetime: see
 * {@link TestClient}. Fails as `McpClient.connect` fails.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make: (
  server: McpServer.McpServer,
  options?: Options
) => Effect.Effect<TestClient, McpClient.CallError, Scope.Scope> = internal.make

/**
 * A test client connected to the `McpServer.McpServer` of the context: the server an application
 * builds from Layers (`McpServer.layer`, `McpServer.tool`, `McpServer.part`, …). Provides
 * {@link TestClient} and `McpClient.McpClient`.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import * as Schema from "effect/Schema"
 * import { McpServer, Testing, Tool } from "presa-mcp"
 *
 * const Echo = McpServer.tool(Tool.make({
 *   name: "echo",
 *   parameters: Schema.Struct({ text: Schema.String }),
 *   handler: ({ text }) => Effect.succeed(text)
 * }))
 * const App = Echo.pipe(Layer.provideMerge(McpServer.layer({ name: "app", version: "1.0.0" })))
 * const TestLive = Testing.layerFromService().pipe(Layer.provideMerge(App))
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layerFromService: (
  options?: Options
) => Layer.Layer<TestClient | McpClient.McpClient, McpClient.CallError, McpServer.McpServer> = internal.layerFromService

/**
 * A server built from `serverOptions` (as `McpServer.layer`) with a test client connected to it:
 * provides {@link TestClient}, `McpClient.McpClient` and the `McpServer.McpServer`. Fails with
 * `DefinitionError` (a refused definition) or as `McpClient.connect` fails.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 * import { Testing, Tool } from "presa-mcp"
 *
 * const add = Tool.make({
 *   name: "add",
 *   parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
 *   success: Schema.Struct({ sum: Schema.Number }),
 *   handler: ({ a, b }) => Effect.succeed({ sum: a + b })
 * })
 * const TestLive = Testing.layer({ name: "calc", version: "1.0.0", tools: [add] }, { era: "legacy" })
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = <
  T extends Tool.Any = Tool.Tool,
  Res extends Resource.AnyResource = Resource.Resource,
  Tpl extends Resource.AnyTemplate = Resource.ResourceTemplate,
  P extends Prompt.Any = Prompt.Prompt,
  M extends Middleware.Any = Middleware.Middleware
>(
  serverOptions: McpServer.Options<T, Res, Tpl, P, M>,
  options?: Options
): Layer.Layer<
  TestClient | McpClient.McpClient | McpServer.McpServer,
  McpServer.DefinitionError | McpClient.CallError,
  McpServer.Requirements<T, Res, Tpl, P, M>
> => internal.layerFromService(options).pipe(Layer.provideMerge(McpServer.layer(serverOptions)))

/**
 * `result` when it is not an error result; else fails with {@link AssertionError} quoting its
 * text. Use as `client.callTool(…).pipe(Effect.flatMap(Testing.expectSuccess))`.
 *
 * @since 0.2.0
 * @category testing
 */
export const expectSuccess: (
  result: McpSchema.CallToolResult
) => Effect.Effect<McpSchema.CallToolResult, AssertionError> = internal.expectSuccess

/**
 * The text of an error result (`isError: true`: what the model reads); a successful result fails
 * with {@link AssertionError}.
 *
 * @since 0.2.0
 * @category testing
 */
export const expectError: (result: McpSchema.CallToolResult) => Effect.Effect<string, AssertionError> =
  internal.expectError

/**
 * Decodes a successful result's `structuredContent` with `schema`. An error result, a result
 * without `structuredContent`, or content that does not decode fails with
 * {@link AssertionError} (the decode's issues as a tree, and the content).
 *
 * @since 0.2.0
 * @category testing
 */
export const structured: <A, I>(
  schema: Schema.Schema<A, I>
) => (result: McpSchema.CallToolResult) => Effect.Effect<A, AssertionError> = internal.structured

/**
 * What a server lists, for snapshot tests: every page of `tools/list`, `prompts/list`,
 * `resources/list` and `resources/templates/list` (those its capabilities declare), each sorted by
 * name / URI / URI template, and `json`: all four as one JSON text with every object's keys
 * sorted (2-space indented), stable across runs and definition order.
 *
 * @since 0.2.0
 * @category models
 */
export interface ListingSnapshot {
  readonly tools: ReadonlyArray<McpSchema.Tool>
  readonly prompts: ReadonlyArray<McpSchema.Prompt>
  readonly resources: ReadonlyArray<McpSchema.Resource>
  readonly resourceTemplates: ReadonlyArray<McpSchema.ResourceTemplate>
  readonly json: string
}

/**
 * The {@link ListingSnapshot} of the connected server: `expect((yield* Testing.listing).json)
 * .toMatchSnapshot()` fails when a tool's `inputSchema` / `outputSchema` (or anything else
 * listed) drifts. Fails as the list calls fail.
 *
 * @since 0.2.0
 * @category testing
 */
export const listing: Effect.Effect<ListingSnapshot, McpClient.CallError, McpClient.McpClient> = internal.listing
