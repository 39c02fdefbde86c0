/**
 * The server a command talks to (issue #18, item 1): a URL (Streamable HTTP, with `--header`,
 * `--bearer` or `--oauth`) or a command after `--` (stdio, MCP 2025-11-25, Transports › stdio). Splits the
 * command line before `@effect/cli` sees it and connects an `McpClient` to the target.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as McpClient from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import type * as OAuth from "../../OAuth.js"
import * as Stdio from "../../transport/Stdio.js"
import * as StreamableHttp from "../../transport/StreamableHttp.js"
import { UsageError } from "./exitCode.js"
import * as OAuthCli from "./oauth.js"
import * as Values from "./values.js"

/** The name and version the CLI's client sends as its `Implementation`. @internal */
export const CLIENT_NAME = "presa-mcp-cli"
/** @internal */
export const VERSION = "0.1.0"

const URL_PATTERN = /^https?:\/\//i

/** The command line split at the first `--`. @internal */
export interface Split {
  /** What `@effect/cli` parses: the subcommand, its options and arguments. */
  readonly cliArgs: ReadonlyArray<string>
  /** The stdio server's command and arguments (after `--`), passed on untouched. */
  readonly command: ReadonlyArray<string>
  /** Whether a `--` was given (an empty command after it is a usage error). */
  readonly dashDash: boolean
}

/**
 * Splits `args` (without the runtime and script) at the first `--`: what follows is the stdio
 * server's command line, never parsed as our options (so `-- node server.js --help` starts that
 * server with `--help`). Without a `--`, the first positional argument after the subcommand (one
 * word, or two: `registry init` in `commands`) that is an http(s) URL (`presa-mcp tools http://…/mcp`, `presa-mcp call --json http://…/mcp add`)
 * is the target and becomes `--url URL`; positional means not the value of an option in
 * `valueOptions` (given as `--opt value`). So for `read` the server's URL comes before the
 * resource's.
 *
 * @internal
 */
export const split = (
  args: ReadonlyArray<string>,
  commands: ReadonlySet<string>,
  valueOptions: ReadonlySet<string>
): Split => {
  const at = args.indexOf("--")
  const before = at < 0 ? args : args.slice(0, at)
  const command = at < 0 ? [] : args.slice(at + 1)
  // the command's words: one (`tools`), or a command and its subcommand (`registry init`)
  const words = commands.has(before.slice(0, 2).join(" ")) ? 2 : commands.has(before[0] ?? "") ? 1 : 0
  if (at >= 0 || words === 0) return { cliArgs: before, command, dashDash: at >= 0 }
  const name = before.slice(0, words)
  for (let i = words; i < before.length; i++) {
    const arg = before[i] ?? ""
    if (arg.startsWith("-")) {
      if (valueOptions.has(arg)) i++ // its value is the next argument
      continue
    }
    if (URL_PATTERN.test(arg)) {
      return {
        cliArgs: [...name, "--url", arg, ...before.slice(words, i), ...before.slice(i + 1)],
        command,
        dashDash: false
      }
    }
  }
  return { cliArgs: before, command, dashDash: false }
}

/** The `--era` choices. @internal */
export type Era = "auto" | "modern" | "legacy"

/** The protocol versions an `--era` allows (`McpClient.Options.versions`). @internal */
export const versionsOf = (era: Era): ReadonlyArray<McpSchema.ClientProtocolVersion> =>
  era === "auto"
    ? McpSchema.CLIENT_VERSIONS
    : McpSchema.CLIENT_VERSIONS.filter((v) => McpSchema.isModernVersion(v) === (era === "modern"))

/** The target options every command has. @internal */
export interface TargetOptions {
  readonly url: Option.Option<string>
  readonly header: ReadonlyArray<string>
  readonly bearer: Option.Option<string>
  readonly era: Era
  readonly timeout: Option.Option<string>
  readonly oauth: boolean
  readonly oauthClientId: Option.Option<string>
  readonly oauthClientSecret: Option.Option<string>
  readonly oauthStore: Option.Option<string>
}

/** A resolved target. @internal */
export type Target =
  | {
    readonly _tag: "Http"
    readonly url: string
    readonly headers: Readonly<Record<string, string>>
    /** With `--oauth`: how to authorize. */
    readonly oauth: OAuthCli.Settings | undefined
  }
  | {
    readonly _tag: "Stdio"
    readonly command: string
    readonly args: ReadonlyArray<string>
    /** Variables added to the server's environment (the Inspector-compatible `-e KEY=VALUE`). */
    readonly env?: Readonly<Record<string, string>>
  }

const usage = (message: string) => new UsageError({ message })

/** Checks the target options against the command after `--`. Fails with `UsageError`. @internal */
export const resolve = (options: TargetOptions, split: Split): Either.Either<Target, UsageError> =>
  Either.gen(function*() {
    const [command, ...args] = split.command
    if (Option.isSome(options.url)) {
      if (split.dashDash) return yield* Either.left(usage("give either a URL or a command after --, not both"))
      const url = options.url.value
      if (!URL_PATTERN.test(url) || !URL.canParse(url)) {
        return yield* Either.left(usage(`not an http(s) URL: '${url}'`))
      }
      const headers = yield* Either.mapLeft(Values.headers(options.header), usage)
      const withBearer = Option.match(options.bearer, {
        onNone: () => headers,
        onSome: (token) => ({ ...headers, Authorization: `Bearer ${token}` })
      })
      if (options.oauth && Option.isSome(options.bearer)) {
        return yield* Either.left(usage("give either --oauth or --bearer, not both"))
      }
      if (Option.isSome(options.oauthClientSecret) && Option.isNone(options.oauthClientId)) {
        return yield* Either.left(usage("--oauth-client-secret needs --oauth-client-id"))
      }
      const oauthOptions = [options.oauthClientId, options.oauthClientSecret, options.oauthStore]
      if (!options.oauth && oauthOptions.some(Option.isSome)) {
        return yield* Either.left(usage("--oauth-client-id, --oauth-client-secret and --oauth-store need --oauth"))
      }
      const oauth: OAuthCli.Settings | undefined = options.oauth
        ? {
          clientId: Option.getOrUndefined(options.oauthClientId),
          clientSecret: Option.getOrUndefined(options.oauthClientSecret),
          store: Option.getOrUndefined(options.oauthStore)
        }
        : undefined
      return { _tag: "Http", url, headers: withBearer, oauth } as const
    }
    if (command === undefined) {
      return yield* Either.left(
        usage(
          split.dashDash
            ? "no command after --"
            : "no server given: put its URL after the command name, or its command line after --"
        )
      )
    }
    if (options.header.length > 0 || Option.isSome(options.bearer) || options.oauth) {
      return yield* Either.left(
        usage(
          "--header, --bearer, --oauth and login apply to a URL target only (an HTTP server), not to a command after --"
        )
      )
    }
    return { _tag: "Stdio", command, args } as const
  })

/**
 * Connects an `McpClient` to `target` for as long as the Scope is open (a stdio server is stopped
 * when it closes; an HTTP session is deleted). `--timeout` becomes the client's `requestTimeout`
 * (default 60 seconds). With `--oauth` the HTTP client authorizes itself (`oauth.ts`; the
 * authorization URL is printed with `show`). A stdio server's stderr lines go to `stderr` (the
 * default: inherited, written by the child itself). Fails with `UsageError` (bad `--timeout`), the
 * client's `CallError`, or `OAuthError` when the token file or the redirect listener is unusable.
 *
 * @internal
 */
export const connect = (
  target: Target,
  options: TargetOptions,
  handlers: McpClient.InputHandlers & { readonly capabilities?: McpSchema.ClientCapabilities },
  show: (line: string) => Effect.Effect<void> = () => Effect.void,
  stderr?: (line: string) => Effect.Effect<void>
): Effect.Effect<
  Connected,
  McpClient.CallError | UsageError | OAuth.OAuthError,
  Scope.Scope | FileSystem.FileSystem
> =>
  Effect.gen(function*() {
    const timeout = Option.isSome(options.timeout)
      ? yield* Either.mapLeft(Values.duration(options.timeout.value), usage)
      : Duration.seconds(60)
    const auth = target._tag === "Http" && target.oauth !== undefined
      ? yield* OAuthCli.provider(target.oauth, show)
      : undefined
    const transport = target._tag === "Http"
      ? yield* StreamableHttp.client({
        url: target.url,
        headers: target.headers,
        ...(auth === undefined ? {} : { auth })
      })
      : yield* Stdio.spawn({
        command: target.command,
        args: target.args,
        ...(target.env === undefined ? {} : { env: target.env }),
        ...(stderr === undefined ? {} : { stderr })
      })
    const client = yield* McpClient.connect(transport, {
      ...handlers,
      name: CLIENT_NAME,
      version: VERSION,
      versions: versionsOf(options.era),
      requestTimeout: timeout,
      // a task tool (SEP-2663) is followed to its result: `call` prints it as for any tool
      tasks: true
    })
    const hasTokens = auth === undefined || target._tag !== "Http"
      ? Effect.succeed(false)
      : Effect.map(auth.headers(target.url, "POST"), (headers) => headers.authorization !== undefined)
    return { client, hasTokens }
  })

/**
 * A connected client, and whether the OAuth provider (with `--oauth`) now holds tokens for the
 * server (what `login` reports).
 *
 * @internal
 */
export interface Connected {
  readonly client: McpClient.McpClient
  readonly hasTokens: Effect.Effect<boolean>
}
