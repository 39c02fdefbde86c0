/**
 * The official MCP Inspector CLI's way of saying a call (`presa-mcp --cli --method tools/call
 * --tool-name X --tool-arg k=v -- node server.js`), run with our client (issue #40, point 2). The
 * behaviour follows `@modelcontextprotocol/inspector` 0.15.0 (the last one documented to run on
 * Node 20; test/CliInspector.test.ts compares both): the method's result pretty-printed as JSON on
 * stdout, exit code 0 also for a result with `isError: true`, exit code 1 with one message on
 * stderr for anything else (a JSON-RPC error such as an unknown tool, a usage mistake, a server
 * that cannot be reached). From Inspector 2.x: `--tool-args-json '{…}'` (arguments verbatim) and
 * `--format json` (one line `{"result": …}`).
 *
 * @internal
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as JsonRpc from "../../JsonRpc.js"
import type * as McpClient from "../../McpClient.js"
import type * as McpSchema from "../../McpSchema.js"
import * as InspectorArgs from "./inspectorArgs.js"
import { CliIo } from "./io.js"
import * as Target from "./target.js"
import * as Values from "./values.js"

/** The Inspector CLI's exit codes: 0 success (an `isError` result included), 1 every failure. @internal */
export const InspectorExitCode = { ok: 0, failure: 1 } as const

/** A failure: the message the Inspector prints on stderr for it. */
class Failed extends Data.TaggedError("Failed")<{ readonly message: string }> {}

const fail = (message: string) => Effect.fail(new Failed({ message }))

const describe = (e: unknown): string =>
  e instanceof JsonRpc.McpError
    ? `MCP error ${e.code}: ${e.message}`
    : e instanceof Error
    ? e.message
    : String(e)

/** Prefixes a failure's message the way the Inspector does (`Failed to call tool add: …`). */
const failedTo = (what: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Failed, R> =>
  Effect.mapError(effect, (e) => new Failed({ message: `Failed to ${what}: ${describe(e)}` }))

const ServerEntry = Schema.Struct({
  command: Schema.optional(Schema.String),
  args: Schema.optional(Schema.Array(Schema.String)),
  env: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  url: Schema.optional(Schema.String)
})
const ConfigFile = Schema.parseJson(Schema.Struct({
  mcpServers: Schema.Record({ key: Schema.String, value: ServerEntry })
}))

/** `--config FILE --server NAME`: the entry of `mcpServers` (Claude Desktop's format). */
const configEntry = (path: string, name: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* Effect.mapError(fs.readFileString(path), () =>
      new Failed({ message: `Config file not found: ${path}` }))
    const config = yield* Effect.mapError(
      Schema.decodeUnknown(ConfigFile)(text),
      (e) =>
        new Failed({ message: `Invalid config file ${path}: ${e.message}` })
    )
    const entry = config.mcpServers[name]
    return entry === undefined
      ? yield* fail(
        `Server '${name}' not found in config file. Available servers: ${Object.keys(config.mcpServers).join(", ")}`
      )
      : entry
  })

const URL_PATTERN = /^https?:\/\//i

/**
 * The target: a URL (the first target argument, `--server-url`, or the config entry's `url`) over
 * Streamable HTTP, or a command over stdio with `-e` variables. As in the Inspector, a URL whose
 * path does not end in `/mcp` gets `/mcp` with `--transport http`; `--transport sse` (the
 * deprecated HTTP+SSE transport) is not supported.
 */
const resolveTarget = (inv: InspectorArgs.Invocation) =>
  Effect.gen(function*() {
    const entry = inv.config !== undefined && inv.server !== undefined
      ? yield* configEntry(inv.config, inv.server)
      : undefined
    const line = entry?.command === undefined ? inv.target : [entry.command, ...(entry.args ?? []), ...inv.target]
    const [first, ...rest] = line
    const url = inv.serverUrl ?? entry?.url ?? (first !== undefined && URL_PATTERN.test(first) ? first : undefined)
    const transport = inv.transport ?? (url === undefined ? "stdio" : "http")
    if (!["stdio", "http", "sse"].includes(transport)) {
      return yield* fail(`Invalid transport type: ${transport}. Valid types are: sse, http, stdio`)
    }
    if (transport === "sse") {
      return yield* fail("the sse transport (HTTP+SSE, deprecated) is not supported: use --transport http")
    }
    if (url !== undefined) {
      if (transport === "stdio") return yield* fail("stdio transport cannot be used with URLs.")
      if (line.length > (inv.serverUrl === undefined && entry?.url === undefined ? 1 : 0)) {
        return yield* fail("Arguments cannot be passed to a URL-based MCP server.")
      }
      if (!URL.canParse(url)) return yield* fail(`Invalid URL: ${url}`)
      const parsed = new URL(url)
      const endpoint = inv.transport === "http" && !parsed.pathname.endsWith("/mcp") ? new URL("/mcp", parsed) : parsed
      const headers = yield* Either.mapLeft(Values.headers(inv.headers), (message) => new Failed({ message }))
      const target: Target.Target = { _tag: "Http", url: endpoint.href, headers, oauth: undefined }
      return target
    }
    if (transport !== "stdio") return yield* fail("Only stdio transport can be used with local commands.")
    if (first === undefined) return yield* fail("Target is required. Specify a URL or a command to execute.")
    const env = { ...entry?.env, ...inv.env }
    const target: Target.Target = { _tag: "Stdio", command: first, args: rest, env }
    return target
  })

/** The type a tool's input schema gives a property, if any. */
const propertyType = (tool: McpSchema.Tool | undefined, key: string): unknown => {
  const properties = tool?.inputSchema.properties
  const property = JsonRpc.isObject(properties) ? properties[key] : undefined
  return JsonRpc.isObject(property) ? property.type : undefined
}

/**
 * `--tool-arg` values converted as the Inspector converts them, by the tool's input schema:
 * number/integer → `Number(value)`, boolean → `value.toLowerCase() === "true"`, object/array →
 * JSON when it parses, anything else (and a property the schema does not name) → the string.
 */
const convert = (tool: McpSchema.Tool | undefined, args: Readonly<Record<string, string>>): JsonRpc.JsonObject => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(args)) {
    const type = propertyType(tool, key)
    out[key] = type === "number" || type === "integer"
      ? Number(value)
      : type === "boolean"
      ? value.toLowerCase() === "true"
      : type === "object" || type === "array"
      ? Either.getOrElse(Either.try(() => JSON.parse(value)), () => value)
      : value
  }
  return out
}

const toolArguments = (client: McpClient.McpClient, inv: InspectorArgs.Invocation, name: string) =>
  Effect.gen(function*() {
    if (inv.toolArgsJson !== undefined) {
      if (Object.keys(inv.toolArgs).length > 0) {
        return yield* fail("--tool-args-json cannot be combined with --tool-arg; pick one.")
      }
      return yield* Either.mapLeft(
        Values.jsonObject(inv.toolArgsJson, "--tool-args-json"),
        (message) => new Failed({ message })
      )
    }
    const tools = yield* failedTo(`call tool ${name}`)(client.listAllTools)
    return convert(tools.find((t) => t.name === name), inv.toolArgs)
  })

const LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

/** Runs `--method` and yields its result. */
const callMethod = (
  client: McpClient.McpClient,
  inv: InspectorArgs.Invocation
): Effect.Effect<unknown, Failed> => {
  const required = (value: string | undefined, message: string) =>
    value === undefined ? fail(message) : Effect.succeed(value)
  switch (inv.method) {
    case "tools/list":
      return failedTo("list tools")(client.listTools())
    case "tools/call":
      return Effect.gen(function*() {
        const name = yield* required(
          inv.toolName,
          "Tool name is required for tools/call method. Use --tool-name to specify the tool name."
        )
        const args = yield* toolArguments(client, inv, name)
        return yield* failedTo(`call tool ${name}`)(client.callTool(name, args))
      })
    case "resources/list":
      return failedTo("list resources")(client.listResources())
    case "resources/read":
      return Effect.flatMap(
        required(inv.uri, "URI is required for resources/read method. Use --uri to specify the resource URI."),
        (uri) => failedTo(`read resource ${uri}`)(client.readResource(uri))
      )
    case "resources/templates/list":
      return failedTo("list resource templates")(client.listResourceTemplates())
    case "prompts/list":
      return failedTo("list prompts")(client.listPrompts())
    case "prompts/get":
      return Effect.flatMap(
        required(
          inv.promptName,
          "Prompt name is required for prompts/get method. Use --prompt-name to specify the prompt name."
        ),
        (name) => failedTo("get prompt")(client.getPrompt(name, inv.promptArgs))
      )
    case "logging/setLevel":
      return Effect.gen(function*() {
        const level = yield* required(
          inv.logLevel,
          "Log level is required for logging/setLevel method. Use --log-level to specify the log level."
        )
        if (!LOG_LEVELS.includes(level)) {
          return yield* fail(`Invalid log level: ${level}. Valid levels are: ${LOG_LEVELS.join(", ")}`)
        }
        return yield* failedTo("set logging level")(client.request("logging/setLevel", { level }))
      })
    default:
      return fail(
        `Unsupported method: ${inv.method}. Supported methods include: tools/list, tools/call, resources/list, ` +
          "resources/read, resources/templates/list, prompts/list, prompts/get, logging/setLevel"
      )
  }
}

const defaultTargetOptions: Target.TargetOptions = {
  url: Option.none(),
  header: [],
  bearer: Option.none(),
  era: "auto",
  timeout: Option.none(),
  oauth: false,
  oauthClientId: Option.none(),
  oauthClientSecret: Option.none(),
  oauthStore: Option.none()
}

const execute = (
  inv: InspectorArgs.Invocation
): Effect.Effect<string, Failed, Scope.Scope | FileSystem.FileSystem | CliIo> =>
  Effect.gen(function*() {
    const io = yield* CliIo
    if (inv.method === undefined) {
      return yield* fail("Method is required. Use --method to specify the method to invoke.")
    }
    if (inv.format !== undefined && inv.format !== "text" && inv.format !== "json") {
      return yield* fail("--format must be 'text' or 'json'.")
    }
    const target = yield* resolveTarget(inv)
    const { client } = yield* failedTo("connect to MCP server")(
      Target.connect(target, defaultTargetOptions, {}, () => Effect.void, (line) => io.err(`${line}\n`))
    )
    const result = yield* callMethod(client, inv)
    return inv.format === "json" ? `${JSON.stringify({ result })}\n` : `${JSON.stringify(result, null, 2)}\n`
  })

/**
 * Runs an Inspector CLI command line (`args` without the runtime and script; see
 * {@link InspectorArgs.isInvocation}) and yields its exit code ({@link InspectorExitCode}).
 * Never fails: a failure is one line on stderr.
 *
 * @internal
 */
export const run = (args: ReadonlyArray<string>): Effect.Effect<number, never, CliIo | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const io = yield* CliIo
    const outcome = yield* Either.match(InspectorArgs.parse(args), {
      onLeft: (message) => Effect.fail(new Failed({ message })),
      onRight: (inv) => Effect.scoped(execute(inv))
    }).pipe(Effect.either)
    if (Either.isRight(outcome)) {
      yield* io.out(outcome.right)
      return InspectorExitCode.ok
    }
    yield* io.err(`${outcome.left.message}\n`)
    return InspectorExitCode.failure
  })
