/**
 * The proxy's configuration file (documented on `McpProxy.Config`): the `mcpServers` object desktop
 * hosts use — per server `command`, `args`, `env`, `cwd` (stdio) or `url`, `headers` (Streamable
 * HTTP) — plus our optional per-server `prefix`, `include` / `exclude`, `rename`, the
 * `prompts` / `resources` / `resourceTemplates` filters, `prefixUris`, `retry` and `disabled`. Decoding reports the first offending field by its path (`mcpServers.files.args[0]`).
 * @internal
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpClient from "../../McpClient.js"
import type * as McpServer from "../../McpServer.js"
import type * as OAuth from "../../OAuth.js"
import type * as ToolTransform from "../../ToolTransform.js"
import * as Transport from "../../Transport.js"
import { redactUrl } from "../redact.js"
import { ConfigError, type ProxyError } from "./error.js"
import { make, type Options } from "./make.js"
import type { Connector, InputOptions } from "./reconnect.js"

const PREFIX = /^[A-Za-z0-9_.-]+$/

const Prefix = Schema.String.pipe(
  Schema.pattern(PREFIX, { message: () => "expected 1 or more of A-Z a-z 0-9 _ . -" })
)
const ToolName = Schema.String.pipe(Schema.minLength(1, { message: () => "expected a non-empty tool name" }))
const PositiveMs = Schema.Int.pipe(Schema.positive({ message: () => "expected a positive integer (milliseconds)" }))

/**
 * A value that may be a secret (an `env` or `headers` value, the OAuth client secret): a decoding
 * error names its field and never quotes it.
 */
const Secret = Schema.String.annotations({
  message: () => "expected a string (the value is not shown: it may be a secret)"
})
const Secrets = Schema.Record({ key: Schema.String, value: Secret }).annotations({
  message: () => "expected an object of strings (the values are not shown: they may be secrets)"
})

/** `retry`: delays in milliseconds; `maxAttempts` absent ⇒ for ever. */
export const Retry = Schema.Struct({
  initialDelayMs: Schema.optional(PositiveMs),
  maxDelayMs: Schema.optional(PositiveMs),
  maxAttempts: Schema.optional(
    Schema.Int.pipe(Schema.nonNegative({ message: () => "expected a non-negative integer" }))
  )
})

/**
 * One argument of a `transform` (by the backend's argument name): visible (`name`, `description`,
 * `default`, `schema`, `required`) or hidden (`"hide": true` with the `value` the proxy sends).
 */
export const TransformArgument = Schema.Struct({
  name: Schema.optional(Schema.String.pipe(Schema.minLength(1, { message: () => "expected a non-empty name" }))),
  description: Schema.optional(Schema.String),
  default: Schema.optional(Schema.Unknown),
  schema: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  required: Schema.optional(Schema.Boolean),
  hide: Schema.optional(Schema.Boolean),
  value: Schema.optional(Schema.Unknown)
}).pipe(Schema.filter((a) => {
  if (a.hide === true) {
    if (!("value" in a)) return "a hidden argument needs the `value` the proxy sends for it"
    const extra = ["name", "description", "default", "schema", "required"].filter((k) => k in a)
    return extra.length === 0 || `a hidden argument takes only \`value\` (remove ${extra.join(", ")})`
  }
  return !("value" in a) || "`value` is for a hidden argument: add \"hide\": true, or give a `default`"
}))

/** A tool's `transform` (see `McpProxy.Config`). */
export const TransformEntry = Schema.Struct({
  name: Schema.optional(ToolName),
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  arguments: Schema.optional(Schema.Record({ key: Schema.String, value: TransformArgument }))
})

/** A decoded `transform` entry as the `ToolTransform.Transform` it means. */
const toTransform = (entry: typeof TransformEntry.Type): ToolTransform.Transform => {
  const { arguments: args, ...rest } = entry
  if (args === undefined) return rest
  const out: Record<string, ToolTransform.Argument> = {}
  for (const [k, a] of Object.entries(args)) {
    const { hide, value, ...visible } = a
    out[k] = hide === true ? { hide: true, value } : visible
  }
  return { ...rest, arguments: out }
}

/** An include / exclude list of exact names or URIs (`McpProxy.Filter`). */
export const Filter = Schema.Struct({
  include: Schema.optional(Schema.Array(Schema.String)),
  exclude: Schema.optional(Schema.Array(Schema.String))
})

const common = {
  prefix: Schema.optional(Prefix),
  include: Schema.optional(Schema.Array(ToolName)),
  exclude: Schema.optional(Schema.Array(ToolName)),
  rename: Schema.optional(Schema.Record({ key: Schema.String, value: ToolName })),
  transform: Schema.optional(Schema.Record({ key: Schema.String, value: TransformEntry })),
  prompts: Schema.optional(Filter),
  resources: Schema.optional(Filter),
  resourceTemplates: Schema.optional(Filter),
  prefixUris: Schema.optional(Schema.Boolean),
  retry: Schema.optional(Retry),
  disabled: Schema.optional(Schema.Boolean)
}

/** A server started as a child process and spoken to over stdio. */
export const StdioServer = Schema.Struct({
  type: Schema.optional(Schema.Literal("stdio")),
  command: Schema.String.pipe(Schema.minLength(1, { message: () => "expected a non-empty command" })),
  args: Schema.optional(Schema.Array(Schema.String)),
  env: Schema.optional(Secrets),
  cwd: Schema.optional(Schema.String),
  ...common
})

const isHttpUrl = (u: string): boolean => {
  try {
    const url = new URL(u)
    return url.protocol === "http:" || url.protocol === "https:"
  } catch {
    return false
  }
}

/** The `oauth` block of an HTTP server (documented on `McpProxy.HttpServer`). */
export const OAuthSettings = Schema.Struct({
  clientId: Schema.optional(Schema.String),
  clientSecret: Schema.optional(Secret),
  grant: Schema.optional(Schema.Literal("authorization_code", "client_credentials")),
  scopes: Schema.optional(Schema.Array(Schema.String)),
  tokenStore: Schema.optional(Schema.String)
})

/** A server reached over Streamable HTTP. */
export const HttpServer = Schema.Struct({
  type: Schema.optional(Schema.Literal("http", "streamable-http", "streamableHttp")),
  url: Schema.String.pipe(Schema.filter(isHttpUrl, { message: () => "expected an http: or https: URL" })),
  headers: Schema.optional(Secrets),
  oauth: Schema.optional(OAuthSettings),
  ...common
})

/** One entry of `mcpServers`. */
export const ServerEntry = Schema.Union(StdioServer, HttpServer)

/** The whole file. */
export const Config = Schema.Struct({
  mcpServers: Schema.Record({ key: Schema.String, value: ServerEntry })
})

export type Config = typeof Config.Type
export type ServerEntry = typeof ServerEntry.Type

/** `a.b[0].c` from a parse issue's path. */
const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (out, key) =>
      typeof key === "number"
        ? `${out}[${key}]`
        : out.length === 0
        ? String(key)
        : /^[A-Za-z_$][\w$]*$/.test(String(key))
        ? `${out}.${String(key)}`
        : `${out}[${JSON.stringify(String(key))}]`,
    ""
  )

const invalid = (file: string | undefined, path: ReadonlyArray<PropertyKey>, message: string) => {
  const at = pathText(path)
  return new ConfigError({
    reason: "Invalid",
    path: at,
    message: `${file === undefined ? "" : `${file}: `}${at.length === 0 ? "" : `${at}: `}${message}`,
    ...(file === undefined ? {} : { file })
  })
}

const firstIssue = (file: string | undefined, base: ReadonlyArray<PropertyKey>, e: ParseResult.ParseError) => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(e)[0]
  return invalid(file, [...base, ...(issue?.path ?? [])], issue?.message ?? e.message)
}

const decodeWith =
  <A, I>(schema: Schema.Schema<A, I>, file: string | undefined, base: ReadonlyArray<PropertyKey>) =>
  (u: unknown): Either.Either<A, ConfigError> =>
    Either.mapLeft(Schema.decodeUnknownEither(schema, { errors: "first" })(u), (e) => firstIssue(file, base, e))

/**
 * Decodes a parsed configuration: each entry as stdio (it has `command`) or HTTP (it has `url`),
 * so an error names the field of the kind meant; then the effective prefixes (`prefix`, default
 * the entry's name) of enabled entries must be valid and distinct.
 */
export const decode = (u: unknown, file?: string): Either.Either<Config, ConfigError> =>
  Either.gen(function*() {
    if (!JsonRpc.isObject(u)) return yield* Either.left(invalid(file, [], "expected a JSON object"))
    const servers = u.mcpServers
    if (!JsonRpc.isObject(servers)) {
      return yield* Either.left(invalid(file, ["mcpServers"], "expected an object of servers by name"))
    }
    const out: Record<string, ServerEntry> = {}
    const owners = new Map<string, string>()
    for (const [name, entry] of Object.entries(servers)) {
      const at = ["mcpServers", name]
      if (!JsonRpc.isObject(entry)) return yield* Either.left(invalid(file, at, "expected an object"))
      if ("command" in entry && "url" in entry) {
        return yield* Either.left(invalid(file, at, "has both `command` (stdio) and `url` (HTTP); give one"))
      }
      const decoded: ServerEntry = "command" in entry
        ? yield* decodeWith(StdioServer, file, at)(entry)
        : "url" in entry
        ? yield* decodeWith(HttpServer, file, at)(entry)
        : yield* Either.left(invalid(file, at, "needs `command` (a stdio server) or `url` (a Streamable HTTP server)"))
      out[name] = decoded
      const both = Object.keys(decoded.transform ?? {}).find((tool) =>
        decoded.transform?.[tool]?.name !== undefined && Object.hasOwn(decoded.rename ?? {}, tool)
      )
      if (both !== undefined) {
        return yield* Either.left(
          invalid(file, [...at, "transform", both, "name"], "the tool is also in `rename`: give its new name once")
        )
      }
      if (decoded.disabled === true) continue
      const prefix = decoded.prefix ?? name
      if (decoded.prefix === undefined && !PREFIX.test(name)) {
        return yield* Either.left(
          invalid(
            file,
            at,
            "the server's name is its prefix, and it is not 1 or more of A-Z a-z 0-9 _ . -: give a `prefix`"
          )
        )
      }
      const other = owners.get(prefix)
      if (other !== undefined) {
        return yield* Either.left(
          invalid(file, [...at, "prefix"], `prefix ${JSON.stringify(prefix)} is also the prefix of ${other}`)
        )
      }
      owners.set(prefix, name)
    }
    return { mcpServers: out }
  })

/**
 * What `JSON.parse` said, without the text it quotes (V8 quotes the input around the problem,
 * e.g. `Unexpected token 's', ..."token": sec"... is not valid JSON`, which may be a secret).
 */
const jsonProblem = (e: unknown): string =>
  e instanceof Error ? e.message.replace(/, (?:\.\.\.)?".*$/s, "") : "not JSON"

/** Reads `file` (UTF-8 JSON) and decodes it. */
export const load = (file: string): Effect.Effect<Config, ConfigError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((e) =>
        new ConfigError({ reason: "Read", file, path: "", message: `${file}: cannot be read: ${e.message}`, cause: e })
      )
    )
    const json = yield* Effect.try({
      try: (): unknown => JSON.parse(text),
      catch: (e) =>
        new ConfigError({
          reason: "Json",
          file,
          path: "",
          // no `cause`: the SyntaxError's own message quotes the file
          message: `${file}: not JSON: ${jsonProblem(e)}`
        })
    })
    return yield* decode(json, file)
  })

/** The retry `Schedule` of a `retry` setting: exponential from `initialDelayMs` (500), capped at `maxDelayMs` (30 000). */
export const retrySchedule = (retry: typeof Retry.Type | undefined): Schedule.Schedule<unknown, unknown> => {
  const initial = Duration.millis(retry?.initialDelayMs ?? 500)
  const max = Duration.millis(Math.max(retry?.maxDelayMs ?? 30_000, retry?.initialDelayMs ?? 0))
  const capped = Schedule.exponential(initial).pipe(Schedule.union(Schedule.spaced(max)))
  return retry?.maxAttempts === undefined ? capped : capped.pipe(Schedule.intersect(Schedule.recurs(retry.maxAttempts)))
}

/** Options of `fromConfig`: the proxy's own, plus what every backend's client and process get. */
export interface FromConfigOptions extends Options {
  readonly client?: Omit<McpClient.Options, keyof InputOptions> | undefined
  readonly stderr?: "inherit" | ((prefix: string, line: string) => Effect.Effect<void>) | undefined
  readonly oauth?:
    | ((
      name: string,
      url: string,
      settings: typeof OAuthSettings.Type
    ) => Effect.Effect<OAuth.Provider, OAuth.OAuthError, Scope.Scope>)
    | undefined
}

/**
 * The default `oauth` of `fromConfig`: `OAuth.make` with the block's client, grant and scopes
 * over a token store in memory for this connection, and no interaction (so only machine grants,
 * or a server that needs no user, succeed).
 */
const defaultOAuth = (settings: typeof OAuthSettings.Type): Effect.Effect<OAuth.Provider> =>
  Effect.gen(function*() {
    const OAuthModule = yield* Effect.promise(() => import("../../OAuth.js"))
    const store = yield* OAuthModule.memoryStore
    const clientId = settings.clientId
    return yield* OAuthModule.make({
      ...(settings.grant === undefined ? {} : { grant: settings.grant }),
      ...(settings.scopes === undefined ? {} : { scopes: settings.scopes }),
      ...(clientId === undefined ? {} : {
        client: {
          clientId,
          ...(settings.clientSecret === undefined ? {} : { clientSecret: settings.clientSecret })
        }
      })
    }).pipe(Effect.provideService(OAuthModule.TokenStore, store))
  })

const connectStdio =
  (entry: typeof StdioServer.Type, prefix: string, options: FromConfigOptions) =>
  (input: InputOptions): Effect.Effect<McpClient.McpClient, McpClient.CallError, Scope.Scope> =>
    Effect.gen(function*() {
      const Stdio = yield* Effect.promise(() => import("../../transport/Stdio.js"))
      const stderr = options.stderr
      const transport: import("../../Transport.js").ClientTransport = yield* Stdio.spawn({
        command: entry.command,
        args: entry.args,
        env: entry.env,
        cwd: entry.cwd,
        stderr: stderr === undefined || stderr === "inherit" ? "inherit" : (line) => stderr(prefix, line)
      })
      return yield* clientOver(transport, input, options)
    })

const connectHttp =
  (name: string, entry: typeof HttpServer.Type, options: FromConfigOptions) =>
  (input: InputOptions): Effect.Effect<McpClient.McpClient, McpClient.CallError, Scope.Scope> =>
    Effect.gen(function*() {
      const StreamableHttp = yield* Effect.promise(() => import("../../transport/StreamableHttp.js"))
      const settings = entry.oauth
      const auth = settings === undefined ? undefined : yield* (options.oauth === undefined
        ? defaultOAuth(settings)
        : options.oauth(name, entry.url, settings)).pipe(
          Effect.mapError((cause) =>
            new Transport.TransportError({
              reason: "Unauthorized",
              message: `OAuth for ${redactUrl(entry.url)} could not start: ${cause.message}`,
              cause
            })
          )
        )
      const transport = yield* StreamableHttp.client({
        url: entry.url,
        headers: entry.headers,
        ...(auth === undefined ? {} : { auth })
      })
      return yield* clientOver(transport, input, options)
    })

/**
 * The proxy reconnects the whole backend, so the client does not re-listen on its own. It declares
 * the MCP Apps extension (`apps: true`) so that a backend lists its app-only tools to it: the
 * proxy itself shows them only to callers that declare the extension (internal/proxy/apps.ts).
 */
const clientOver = (
  transport: import("../../Transport.js").ClientTransport,
  input: InputOptions,
  options: FromConfigOptions
): Effect.Effect<McpClient.McpClient, McpClient.CallError | Transport.TransportError, Scope.Scope> =>
  McpClient.connect(transport, { relisten: Schedule.stop, apps: true, ...options.client, ...input })

/** The enabled entries as connectors, in the file's order. */
export const connectors = (config: Config, options: FromConfigOptions = {}): ReadonlyArray<Connector> =>
  Object.entries(config.mcpServers).flatMap(([name, entry]) => {
    if (entry.disabled === true) return []
    const prefix = entry.prefix ?? name
    return [{
      prefix,
      include: entry.include,
      exclude: entry.exclude,
      rename: entry.rename,
      transform: entry.transform === undefined
        ? undefined
        : Object.fromEntries(Object.entries(entry.transform).map(([k, t]) => [k, toTransform(t)])),
      prompts: entry.prompts,
      resources: entry.resources,
      resourceTemplates: entry.resourceTemplates,
      prefixUris: entry.prefixUris,
      retry: retrySchedule(entry.retry),
      connect: "command" in entry ? connectStdio(entry, prefix, options) : connectHttp(name, entry, options)
    }]
  })

/**
 * `fromConfig`'s default `pingInterval`: a backend that died while no call was in flight (and
 * that has no listen open to notice it) is found and reconnected within about this long.
 */
export const DEFAULT_PING_INTERVAL: Duration.DurationInput = "15 seconds"

/** The proxy over a decoded configuration. */
export const fromConfig = (
  config: Config,
  options: FromConfigOptions = {}
): Effect.Effect<McpServer.McpServer, ProxyError, Scope.Scope> => {
  const { client: _client, oauth: _oauth, stderr: _stderr, ...proxyOptions } = options
  return make(connectors(config, options), { pingInterval: DEFAULT_PING_INTERVAL, ...proxyOptions })
}
