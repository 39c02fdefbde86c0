/**
 * The body of `presa-mcp/Testing`: the recording in-process transport, the scripted input
 * handlers, the assertions and the normalised listing. Documented on `Testing`.
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Content from "../Content.js"
import type * as Input from "../Input.js"
import * as JsonRpc from "../JsonRpc.js"
import * as McpClient from "../McpClient.js"
import * as McpSchema from "../McpSchema.js"
import * as McpServer from "../McpServer.js"
import type {
  Asked,
  AssertionError as AssertionErrorType,
  ListingSnapshot,
  Options,
  Script,
  TestClient
} from "../Testing.js"
import type { ClientTransport } from "../Transport.js"
import * as InProcess from "../transport/InProcess.js"

/** The failure of a `Testing` assertion. */
export class AssertionError extends Schema.TaggedError<AssertionError>("presa-mcp/Testing/AssertionError")(
  "AssertionError",
  { message: Schema.String }
) {}

const fail = (message: string): Effect.Effect<never, AssertionErrorType> => Effect.fail(new AssertionError({ message }))

export const TestClientTag = Context.GenericTag<TestClient>("presa-mcp/Testing/TestClient")

/** The live clock: `awaitNotification` waits in real time, whatever clock the test runs on. */
const LIVE_CLOCK = Context.get(DefaultServices.liveServices, Clock.Clock)

/** Methods whose requests get a progress token (and, modern, a log level) so that their notifications are recorded. */
const OBSERVED: ReadonlySet<string> = new Set([
  McpSchema.Method.toolsCall,
  McpSchema.Method.promptsGet,
  McpSchema.Method.resourcesRead
])

/** The progress token the testing transport adds to a request that carries none. */
const TOKEN_PREFIX = "presa-mcp/testing-"

/** `message` with a progress token and, modern, the log level, unless it carries its own. */
const observed = (
  message: JsonRpc.Request,
  modern: boolean,
  logLevel: McpSchema.LoggingLevel | undefined
): JsonRpc.Request => {
  if (!OBSERVED.has(message.method)) return message
  const params = message.params ?? {}
  const meta = JsonRpc.isObject(params._meta) ? params._meta : {}
  const added: JsonRpc.JsonObject = {
    ...(meta[McpSchema.MetaKey.progressToken] === undefined
      ? { [McpSchema.MetaKey.progressToken]: `${TOKEN_PREFIX}${String(message.id)}` }
      : {}),
    ...(modern && logLevel !== undefined && meta[McpSchema.MetaKey.logLevel] === undefined
      ? { [McpSchema.MetaKey.logLevel]: logLevel }
      : {})
  }
  return { ...message, params: { ...params, _meta: { ...meta, ...added } } }
}

/** A scripted answer: the next of a list (then an error), or a function of the params. */
const scripted = <A>(
  method: string,
  script: Script<A>,
  asked: Ref.Ref<ReadonlyArray<Asked>>
): (params: JsonRpc.JsonObject) => Effect.Effect<A, JsonRpc.McpError> => {
  const answers = typeof script === "function" ? undefined : script
  return (params) =>
    Effect.flatMap(
      Ref.modify(asked, (all): [number, ReadonlyArray<Asked>] => {
        const n = all.filter((a) => a.method === method).length
        return [n, [...all, { method, params }]]
      }),
      (n): Effect.Effect<A, JsonRpc.McpError> => {
        if (typeof script === "function") return script(params)
        const answer = answers?.[n]
        return answer === undefined
          ? Effect.fail(JsonRpc.McpError.internalError(`Testing: no scripted answer left for ${method} #${n + 1}`))
          : Effect.succeed(answer)
      }
    )
}

/** The client's input handlers from the scripts (none given: no handler, no capability). */
const handlersOf = (options: Options, asked: Ref.Ref<ReadonlyArray<Asked>>): McpClient.InputHandlers => {
  const { elicit, roots, sample } = options
  return {
    ...(elicit === undefined
      ? {}
      : { onElicit: scripted<Input.ElicitResult>(McpSchema.ClientMethod.elicitationCreate, elicit, asked) }),
    ...(sample === undefined
      ? {}
      : { onSample: scripted<Input.CreateMessageResult>(McpSchema.ClientMethod.samplingCreateMessage, sample, asked) }),
    ...(roots === undefined ? {} : {
      onRoots: () =>
        Effect.as(
          Ref.update(asked, (all) => [...all, { method: McpSchema.ClientMethod.rootsList, params: {} }]),
          { roots }
        )
    })
  }
}

/** The client of a test against `server`: recording transport, scripted answers, a listen for list changes. */
export const make = (
  server: McpServer.McpServer,
  options: Options = {}
): Effect.Effect<TestClient, McpClient.CallError, Scope.Scope> =>
  Effect.gen(function*() {
    const modern = (options.era ?? "modern") === "modern"
    const recorded = yield* SubscriptionRef.make<ReadonlyArray<JsonRpc.Notification>>([])
    const record = (n: JsonRpc.Notification) => SubscriptionRef.update(recorded, (all) => [...all, n])
    const asked = yield* Ref.make<ReadonlyArray<Asked>>([])
    const inner = yield* InProcess.client(server)
    const logLevel = options.logLevel === undefined ? "debug" : options.logLevel ?? undefined
    const transport: ClientTransport = {
      ...inner,
      request: (message, requestOptions) => {
        const own = requestOptions?.onNotification
        // a listen's notifications are recorded from its stream (below), once
        const listen = message.method === McpSchema.Method.subscriptionsListen
        return inner.request(observed(message, modern, logLevel), {
          ...requestOptions,
          onNotification: (n) =>
            Effect.zipRight(listen ? Effect.void : record(n), own === undefined ? Effect.void : own(n))
        })
      }
    }
    const client = yield* McpClient.connect(transport, {
      ...options.client,
      ...handlersOf(options, asked),
      versions: modern ? ["2026-07-28"] : ["2025-11-25"]
    })
    if (options.listen !== false) {
      yield* client.listen({ toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true }).pipe(
        Effect.flatMap((subscription) =>
          subscription.notifications.pipe(
            Stream.runForEach(record),
            Effect.catchAll((e) => Effect.logDebug(`Testing: the listen stream ended: ${e.message}`)),
            Effect.forkScoped
          )
        ),
        Effect.catchAll((e) => Effect.logDebug(`Testing: no listen (${e.message})`))
      )
    }
    const notifications = SubscriptionRef.get(recorded)
    const awaitNotification: TestClient["awaitNotification"] = (method, awaitOptions) => {
      const count = awaitOptions?.count ?? 1
      const within = awaitOptions?.within ?? "2 seconds"
      const matching = (all: ReadonlyArray<JsonRpc.Notification>) => all.filter((n) => n.method === method)
      return recorded.changes.pipe(
        Stream.map(matching),
        Stream.filter((ns) => ns.length >= count),
        Stream.runHead,
        Effect.flatMap((found) =>
          found._tag === "Some"
            ? Effect.succeed(found.value)
            : fail(`Testing: the notifications ended before ${count} ${method}`)
        ),
        Effect.timeoutFail({
          duration: within,
          onTimeout: () =>
            new AssertionError({
              message: `Testing: expected ${count} ${method} notification(s) within ${
                Duration.format(Duration.decode(within))
              } (real time)`
            })
        }),
        Effect.withClock(LIVE_CLOCK)
      )
    }
    return {
      client,
      server,
      notifications,
      notificationsOf: (method) => Effect.map(notifications, (all) => all.filter((n) => n.method === method)),
      clearNotifications: SubscriptionRef.set(recorded, []),
      awaitNotification,
      asked: Ref.get(asked)
    }
  })

export const layerFromService = (
  options?: Options
): Layer.Layer<TestClient | McpClient.McpClient, McpClient.CallError, McpServer.McpServer> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const server = yield* McpServer.McpServer
      const test = yield* make(server, options)
      return Context.make(TestClientTag, test).pipe(Context.add(McpClient.McpClient, test.client))
    })
  )

// -- assertions ----------------------------------------------------------------------------------

const describeResult = (result: McpSchema.CallToolResult): string => {
  const text = Content.textOf(result)
  return text === "" ? JSON.stringify(result) : JSON.stringify(text)
}

export const expectSuccess = (
  result: McpSchema.CallToolResult
): Effect.Effect<McpSchema.CallToolResult, AssertionErrorType> =>
  result.isError === true
    ? fail(`expected a successful tool result, got an error result: ${describeResult(result)}`)
    : Effect.succeed(result)

export const expectError = (result: McpSchema.CallToolResult): Effect.Effect<string, AssertionErrorType> =>
  result.isError === true
    ? Effect.succeed(Content.textOf(result))
    : fail(`expected an error result (isError: true), got a successful one: ${describeResult(result)}`)

export const structured = <A, I>(
  schema: Schema.Schema<A, I>
): (result: McpSchema.CallToolResult) => Effect.Effect<A, AssertionErrorType> => {
  const decode = Schema.decodeUnknownEither(schema)
  return (result) => {
    if (result.isError === true) {
      return fail(`expected structured content, got an error result: ${describeResult(result)}`)
    }
    if (result.structuredContent === undefined) {
      return fail(`expected structured content, the result has none: ${describeResult(result)}`)
    }
    const decoded = decode(result.structuredContent)
    return Either.isRight(decoded)
      ? Effect.succeed(decoded.right)
      : fail(
        `the structured content does not decode:\n${
          ParseResult.TreeFormatter.formatErrorSync(decoded.left)
        }\nstructuredContent: ${JSON.stringify(result.structuredContent)}`
      )
  }
}

// -- the listing snapshot ------------------------------------------------------------------------

/** A JSON value with every object's keys sorted (arrays keep their order). */
const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (!JsonRpc.isObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) out[key] = sortKeys(value[key])
  return out
}

const byKey = <T>(key: (t: T) => string) => (a: T, b: T): number => {
  const x = key(a)
  const y = key(b)
  return x < y ? -1 : x > y ? 1 : 0
}

export const listing: Effect.Effect<ListingSnapshot, McpClient.CallError, McpClient.McpClient> = Effect.gen(
  function*() {
    const client = yield* McpClient.McpClient
    const caps = client.info.capabilities
    const tools = caps.tools === undefined ? [] : yield* client.listAllTools
    const prompts = caps.prompts === undefined ? [] : yield* client.listAllPrompts
    const resources = caps.resources === undefined ? [] : yield* client.listAllResources
    const resourceTemplates = caps.resources === undefined ? [] : yield* client.listAllResourceTemplates
    const snapshot = {
      tools: [...tools].sort(byKey((t) => t.name)),
      prompts: [...prompts].sort(byKey((p) => p.name)),
      resources: [...resources].sort(byKey((r) => r.uri)),
      resourceTemplates: [...resourceTemplates].sort(byKey((t) => t.uriTemplate))
    }
    const normalised = sortKeys(snapshot)
    return {
      ...snapshot,
      json: JSON.stringify(normalised, null, 2)
    }
  }
)
