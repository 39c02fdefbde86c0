/**
 * The official MCP Inspector CLI's command line (`--cli --method M --tool-name X --tool-arg k=v …
 * -- command args`), parsed the way the Inspector parses it (issue #40, point 2). The Inspector
 * uses commander with unknown options allowed: variadic options (`--tool-arg a=1 b=2`) take the
 * arguments that follow up to the next option, an unknown option (`--stdio`) and any other
 * argument belong to the server's command line. Its launcher drops the first `--` before the CLI
 * parses the line, so `--` protects nothing: `--prompt-args id=ada -- node server.js` takes `node`
 * as one more key=value (an error in both); put the server's command first. `@effect/cli` has no
 * variadic options, hence this small parser.
 *
 * @internal
 */
import * as Either from "effect/Either"

/** The flags of Inspector 0.15 and 0.x (`--header`, `--server-url`) and 2.x (`--format`, `--tool-args-json`). @internal */
export interface Invocation {
  readonly method: string | undefined
  readonly toolName: string | undefined
  /** `--tool-arg key=value` (repeatable, variadic): the values as given, converted by the tool's schema later. */
  readonly toolArgs: Readonly<Record<string, string>>
  readonly toolArgsJson: string | undefined
  readonly uri: string | undefined
  readonly promptName: string | undefined
  readonly promptArgs: Readonly<Record<string, string>>
  readonly logLevel: string | undefined
  readonly transport: string | undefined
  readonly serverUrl: string | undefined
  /** `--header "Name: Value"` (repeatable, variadic). */
  readonly headers: ReadonlyArray<string>
  /** `-e KEY=VALUE` (repeatable): the stdio server's environment. */
  readonly env: Readonly<Record<string, string>>
  readonly format: string | undefined
  readonly config: string | undefined
  readonly server: string | undefined
  /** The server's command line or URL: the arguments that are not ours, in order. */
  readonly target: ReadonlyArray<string>
}

type Single =
  | "method"
  | "toolName"
  | "toolArgsJson"
  | "uri"
  | "promptName"
  | "logLevel"
  | "transport"
  | "serverUrl"
  | "format"
  | "config"
  | "server"
type Pairs = "toolArgs" | "promptArgs" | "env"

const singles: Readonly<Record<string, Single>> = {
  "--method": "method",
  "--tool-name": "toolName",
  "--tool-args-json": "toolArgsJson",
  "--uri": "uri",
  "--prompt-name": "promptName",
  "--log-level": "logLevel",
  "--transport": "transport",
  "--server-url": "serverUrl",
  "--format": "format",
  "--config": "config",
  "--server": "server"
}

/** Options with `<values...>` (they take every following argument up to the next option). */
const variadic: Readonly<Record<string, Pairs | "headers">> = {
  "--tool-arg": "toolArgs",
  "--prompt-args": "promptArgs",
  "--header": "headers"
}

/**
 * Does `args` ask for the Inspector's CLI mode (a `--cli` before any `--`)?
 *
 * @internal
 */
export const isInvocation = (args: ReadonlyArray<string>): boolean => {
  const at = args.indexOf("--")
  return (at < 0 ? args : args.slice(0, at)).includes("--cli")
}

/** The Inspector's `key=value`: split at the first `=`; an empty value is an error. */
const pair = (value: string): Either.Either<readonly [string, string], string> => {
  const at = value.indexOf("=")
  return at < 0 || at === value.length - 1
    ? Either.left(`Invalid parameter format: ${value}. Use key=value format.`)
    : Either.right([value.slice(0, at), value.slice(at + 1)] as const)
}

/**
 * Parses the Inspector's command line (without the runtime and script). Fails with the message
 * the Inspector prints for the same mistake where it has one.
 *
 * @internal
 */
export const parse = (args: ReadonlyArray<string>): Either.Either<Invocation, string> =>
  Either.gen(function*() {
    const at = args.indexOf("--")
    const before = at < 0 ? args : [...args.slice(0, at), ...args.slice(at + 1)]
    const single: Partial<Record<Single, string>> = {}
    const pairs: Record<Pairs, Record<string, string>> = { toolArgs: {}, promptArgs: {}, env: {} }
    const headers: Array<string> = []
    const target: Array<string> = []
    let collecting: Pairs | "headers" | undefined
    const add = (into: Pairs | "headers", value: string) =>
      into === "headers"
        ? Either.right(headers.push(value))
        : Either.map(pair(value), ([k, v]) => (pairs[into][k] = v))
    for (let i = 0; i < before.length; i++) {
      const arg = before[i] ?? ""
      const eq = arg.startsWith("--") ? arg.indexOf("=") : -1
      const name = eq < 0 ? arg : arg.slice(0, eq)
      const inline = eq < 0 ? undefined : arg.slice(eq + 1)
      const next = (): Either.Either<string, string> => {
        if (inline !== undefined) return Either.right(inline)
        const value = before[i + 1]
        if (value === undefined) return Either.left(`error: option '${name}' argument missing`)
        i++
        return Either.right(value)
      }
      if (name === "--cli") {
        collecting = undefined
      } else if (name === "-e") {
        collecting = undefined
        yield* add("env", yield* next())
      } else if (singles[name] !== undefined) {
        collecting = undefined
        single[singles[name]] = yield* next()
      } else if (variadic[name] !== undefined) {
        collecting = variadic[name]
        yield* add(collecting, yield* next())
      } else if (collecting !== undefined && !arg.startsWith("-")) {
        yield* add(collecting, arg)
      } else {
        // commander with allowUnknownOption: an unknown option is one of the server's arguments
        collecting = undefined
        target.push(arg)
      }
    }
    if ((single.config === undefined) !== (single.server === undefined)) {
      return yield* Either.left(
        "Both --config and --server must be provided together. If you specify one, you must specify the other."
      )
    }
    const invocation: Invocation = {
      method: single.method,
      toolName: single.toolName,
      toolArgs: pairs.toolArgs,
      toolArgsJson: single.toolArgsJson,
      uri: single.uri,
      promptName: single.promptName,
      promptArgs: pairs.promptArgs,
      logLevel: single.logLevel,
      transport: single.transport,
      serverUrl: single.serverUrl,
      headers,
      env: pairs.env,
      format: single.format,
      config: single.config,
      server: single.server,
      target
    }
    return invocation
  })
