/**
 * `presa-mcp registry init|validate` (issue #40, point 1): publishing to the official MCP Registry.
 *
 * - `init` writes a `server.json` (revision 2025-12-11) from the server's own info (connecting to
 *   the target like the other commands, when one is given), `package.json` and the command line
 *   (`registryServerJson.ts`); with `--write-package-json` it also adds the `mcpName` the
 *   registry needs to verify npm ownership. It refuses to overwrite an existing file without
 *   `--force`, and checks what it wrote.
 * - `validate [FILE]` checks a `server.json` against the registry's schema and rules
 *   (`registryRules.ts`): exit code 0 when valid, 5 when not, each problem as `field: problem (fix)`.
 *
 * @internal
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as McpSchema from "../../McpSchema.js"
import { ExitCode } from "./exitCode.js"
import { CliIo } from "./io.js"
import * as Rules from "./registryRules.js"
import * as ServerJson from "./registryServerJson.js"
import * as Target from "./target.js"
import * as TargetOptions from "./targetOptions.js"

/** A failure that ends the command with its exit code and message. */
interface Stop {
  readonly code: number
  readonly message: string
}

const stop = (code: number, message: string): Stop => ({ code, message })

const parseJson = (text: string): Either.Either<unknown, string> =>
  Either.try({ try: (): unknown => JSON.parse(text), catch: (e) => (e instanceof Error ? e.message : String(e)) })

/** Reads and parses a JSON file; `undefined` when it does not exist and `optional`. */
const readJson = (path: string, optional: boolean) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const exists = yield* fs.exists(path).pipe(Effect.orElseSucceed(() => false))
    if (!exists) {
      if (optional) return undefined
      return yield* Effect.fail(stop(ExitCode.usage, `${path}: no such file`))
    }
    const text = yield* fs.readFileString(path).pipe(
      Effect.mapError((e) => stop(ExitCode.usage, `${path}: ${e.message}`))
    )
    return yield* Either.match(parseJson(text), {
      onLeft: (message) => Effect.fail(stop(ExitCode.verification, `${path}: not JSON: ${message}`)),
      onRight: (value) => Effect.succeed({ value, text })
    })
  })

const decodePackageJson = (path: string, value: unknown) =>
  Either.match(Schema.decodeUnknownEither(ServerJson.PackageJson)(value), {
    onLeft: () => Effect.fail(stop(ExitCode.usage, `${path}: not a package.json (name, version must be strings)`)),
    onRight: Effect.succeed
  })

/** Prints `issues` and yields the exit code: 0 when there are none, 5 otherwise. */
const report = (issues: ReadonlyArray<Rules.Issue>, print: (line: string) => Effect.Effect<void>) =>
  Effect.as(
    Effect.forEach(issues, (issue) => print(`${Rules.format(issue)}\n`), { discard: true }),
    issues.length === 0 ? ExitCode.ok : ExitCode.verification
  )

/** Runs a subcommand body: its exit code, or its `Stop` printed on stderr. */
const finish = <R>(exit: Ref.Ref<number>, body: Effect.Effect<number, Stop, R>) =>
  Effect.gen(function*() {
    const io = yield* CliIo
    const code = yield* body.pipe(
      Effect.catchAll((s) => Effect.as(io.err(`presa-mcp registry: ${s.message}\n`), s.code))
    )
    yield* Ref.set(exit, code)
  })

// ---------------------------------------------------------------------------------------------
// validate

const validateCommand = (exit: Ref.Ref<number>) =>
  Command.make("validate", {
    file: Args.text({ name: "FILE" }).pipe(
      Args.withDescription("The server.json to check (default: server.json)."),
      Args.withDefault("server.json")
    ),
    packageJson: Options.text("package-json").pipe(
      Options.withDescription(
        "The project's package.json, to check the mcpName of npm packages named like it " +
          "(default: package.json next to FILE, when there is one)."
      ),
      Options.optional
    ),
    json: Options.boolean("json").pipe(Options.withDescription("Print {file, valid, issues} as one JSON document."))
  }, (o) =>
    finish(
      exit,
      Effect.gen(function*() {
        const io = yield* CliIo
        const path = yield* Path.Path
        const doc = yield* readJson(o.file, false)
        const pkgPath = Option.getOrElse(o.packageJson, () => path.join(path.dirname(o.file), "package.json"))
        const pkgFile = yield* readJson(pkgPath, Option.isNone(o.packageJson))
        const pkg = pkgFile === undefined ? undefined : yield* decodePackageJson(pkgPath, pkgFile.value)
        const issues = Rules.validate(doc?.value, pkg)
        if (o.json) {
          yield* io.out(`${JSON.stringify({ file: o.file, valid: issues.length === 0, issues }, null, 2)}\n`)
          return issues.length === 0 ? ExitCode.ok : ExitCode.verification
        }
        if (issues.length === 0) yield* io.out(`${o.file}: valid (MCP Registry server.json, revision 2025-12-11)\n`)
        return yield* report(issues, io.out)
      })
    )).pipe(
      Command.withDescription(
        "Checks a server.json against the official MCP Registry's schema (2025-12-11) and rules: name " +
          "NAMESPACE/NAME, description of at most 100 characters, exact versions, package types and transports, " +
          "remote URLs, headers, and mcpName in package.json for npm packages. Exit code 0 when valid, 5 when not; " +
          "each problem printed as field: problem (fix)."
      )
    )

// ---------------------------------------------------------------------------------------------
// init

const repeated = (name: string, description: string) =>
  Options.text(name).pipe(Options.withDescription(description), Options.repeated)

const initOptions = {
  // the target's options as every command has them (the positional URL too), without OAuth
  ...TargetOptions.connection,
  name: Options.text("name").pipe(
    Options.withDescription(
      "The registry name NAMESPACE/NAME, e.g. io.github.YOUR-GITHUB-NAME/weather. Default: mcpName of " +
        "package.json, else io.github.OWNER/PACKAGE from its GitHub repository."
    ),
    Options.optional
  ),
  description: Options.text("description").pipe(
    Options.withDescription("At most 100 characters. Default: the server's description, else package.json's."),
    Options.optional
  ),
  env: repeated("env", "An environment variable of the npm package, NAME or NAME=DESCRIPTION (repeatable)."),
  secret: repeated("secret", "Marks the environment variable or header NAME as a secret (repeatable)."),
  remote: Options.text("remote").pipe(
    Options.withDescription("A public https URL where the server is deployed (a streamable-http remote)."),
    Options.optional
  ),
  remoteHeader: repeated("remote-header", "A header clients send to --remote, NAME or NAME=DESCRIPTION (repeatable)."),
  remoteVariable: repeated(
    "remote-variable",
    "A {variable} of the --remote URL, NAME or NAME=DESCRIPTION (repeatable)."
  ),
  remoteOnly: Options.boolean("remote-only").pipe(
    Options.withDescription("No npm package entry (a server that is only deployed, with --remote).")
  ),
  packageJson: Options.text("package-json").pipe(
    Options.withDescription("The project's package.json (default: package.json, when there is one)."),
    Options.optional
  ),
  writePackageJson: Options.boolean("write-package-json").pipe(
    Options.withDescription("Adds the mcpName npm ownership needs to package.json when it has none.")
  ),
  out: Options.text("out").pipe(
    Options.withDescription("The file to write (default: server.json)."),
    Options.withDefault("server.json")
  ),
  stdout: Options.boolean("stdout").pipe(Options.withDescription("Print the server.json instead of writing it.")),
  force: Options.boolean("force").pipe(Options.withDescription("Overwrite an existing file."))
}

type InitOptions = Command.Command.ParseConfig<typeof initOptions>

/** The server's info, when a target is given (`--url` or a command after `--`). */
const serverInfo = (o: InitOptions, split: Target.Split) =>
  Effect.gen(function*() {
    if (Option.isNone(o.url) && !split.dashDash) return undefined
    const io = yield* CliIo
    const options: Target.TargetOptions = {
      ...o,
      oauth: false,
      oauthClientId: Option.none(),
      oauthClientSecret: Option.none(),
      oauthStore: Option.none()
    }
    const target = yield* Either.mapLeft(Target.resolve(options, split), (e) => stop(ExitCode.usage, e.message))
    return yield* Effect.scoped(
      Effect.map(
        Target.connect(target, options, {}, () => Effect.void, (line) => io.err(`${line}\n`)),
        ({ client }): McpSchema.Implementation | undefined => client.info.serverInfo
      )
    ).pipe(
      Effect.mapError((e) =>
        stop(
          e._tag === "UsageError" ? ExitCode.usage : ExitCode.connection,
          `cannot read the server's info: ${e.message}`
        )
      )
    )
  })

/** Adds `"mcpName"` to the package.json text, keeping its indentation. */
const withMcpName = (text: string, value: unknown, name: string): string | undefined => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
  const indent = /\n([ \t]+)"/.exec(text)?.[1] ?? "  "
  return `${JSON.stringify({ ...value, mcpName: name }, null, indent)}\n`
}

const initCommand = (split: Target.Split, exit: Ref.Ref<number>) =>
  Command.make("init", initOptions, (o) =>
    finish(
      exit,
      Effect.gen(function*() {
        const io = yield* CliIo
        const fs = yield* FileSystem.FileSystem
        if (!o.stdout && !o.force && (yield* fs.exists(o.out).pipe(Effect.orElseSucceed(() => false)))) {
          return yield* Effect.fail(stop(ExitCode.usage, `${o.out} exists: give --force to overwrite it`))
        }
        const pkgPath = Option.getOrElse(o.packageJson, () => "package.json")
        const pkgFile = yield* readJson(pkgPath, Option.isNone(o.packageJson))
        let pkg = pkgFile === undefined ? {} : yield* decodePackageJson(pkgPath, pkgFile.value)
        const info = yield* serverInfo(o, split)
        const doc = yield* Either.mapLeft(
          ServerJson.make(info, pkg, {
            name: Option.getOrUndefined(o.name),
            description: Option.getOrUndefined(o.description),
            env: o.env.map(ServerJson.input),
            secrets: new Set(o.secret),
            remoteOnly: o.remoteOnly,
            remote: Option.getOrUndefined(o.remote),
            remoteHeaders: o.remoteHeader.map(ServerJson.input),
            remoteVariables: o.remoteVariable.map(ServerJson.input)
          }),
          (message) => stop(ExitCode.usage, message)
        )
        const name = String(doc.name)
        const npm = Array.isArray(doc.packages) && doc.packages.length > 0
        if (npm && pkgFile !== undefined && pkg.mcpName === undefined) {
          const updated = o.writePackageJson ? withMcpName(pkgFile.text, pkgFile.value, name) : undefined
          if (updated !== undefined) {
            yield* fs.writeFileString(pkgPath, updated).pipe(
              Effect.mapError((e) => stop(ExitCode.usage, `${pkgPath}: ${e.message}`))
            )
            pkg = { ...pkg, mcpName: name }
            yield* io.err(`added "mcpName": "${name}" to ${pkgPath}\n`)
          } else {
            yield* io.err(
              `${pkgPath} needs "mcpName": "${name}" for the registry to verify the npm package ` +
                "(add it, or run again with --write-package-json)\n"
            )
          }
        }
        const text = `${JSON.stringify(doc, null, 2)}\n`
        if (o.stdout) {
          yield* io.out(text)
        } else {
          yield* fs.writeFileString(o.out, text).pipe(
            Effect.mapError((e) => stop(ExitCode.usage, `${o.out}: ${e.message}`))
          )
          yield* io.out(`wrote ${o.out}: ${name} ${String(doc.version)}\n`)
        }
        return yield* report(Rules.validate(doc, pkgFile === undefined ? undefined : pkg), io.err)
      })
    )).pipe(
      Command.withDescription(
        "Writes a server.json for the official MCP Registry from the server's own info (give its URL with --url or " +
          "its command line after --), package.json (name, version, description, repository; an npm package entry " +
          "run with npx over stdio) and the options (--remote URL for a deployed server). Refuses to overwrite " +
          "without --force; exit code 5 when what it wrote does not pass validate. " +
          "Example: presa-mcp registry init --write-package-json -- npx tsx src/server.ts"
      )
    )

/**
 * The `registry` command with its `init` and `validate` subcommands.
 *
 * @internal
 */
export const command = (split: Target.Split, exit: Ref.Ref<number>) =>
  Command.make("registry").pipe(
    Command.withDescription("Publishing to the official MCP Registry: write (init) and check (validate) server.json."),
    Command.withSubcommands([initCommand(split, exit), validateCommand(exit)])
  )
