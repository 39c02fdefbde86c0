/**
 * The `presa-mcp` command tree (issue #18, item 2) on `@effect/cli`: one subcommand per MCP
 * operation, each connecting to the target (`target.ts`), doing its requests with `McpClient`,
 * printing text (`render.ts`) or, with `--json`, one JSON document, and setting the exit code
 * (`exitCode.ts`).
 *
 * @internal
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import type * as Prompt from "@effect/cli/Prompt"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as JsonRpc from "../../JsonRpc.js"
import type * as McpClient from "../../McpClient.js"
import type * as McpSchema from "../../McpSchema.js"
import type * as OAuth from "../../OAuth.js"
import type * as Skill from "../../Skill.js"
import * as App from "./app.js"
import * as Dev from "./dev.js"
import { ExitCode, UsageError } from "./exitCode.js"
import * as Interaction from "./interaction.js"
import { CliIo, type Io } from "./io.js"
import * as Proxy from "./proxy.js"
import * as Registry from "./registry.js"
import * as Render from "./render.js"
import * as Target from "./target.js"
import * as TargetOptions from "./targetOptions.js"
import * as Values from "./values.js"

// ---------------------------------------------------------------------------------------------
// Options every command has (targetOptions.ts, shared with `registry init`)

const targetOptions = TargetOptions.targetOptions

interface Common extends Target.TargetOptions {
  readonly json: boolean
  /** Client capabilities the command declares besides those its handlers imply (`app`: MCP Apps). */
  readonly capabilities?: McpSchema.ClientCapabilities
}

// ---------------------------------------------------------------------------------------------
// Running a command against the target

/** What a command yields: the JSON document, its text form, and the exit code. */
interface Outcome {
  readonly json: unknown
  readonly text: string
  readonly code: number
}

const ok = (json: unknown, text: string): Outcome => ({ json, text, code: ExitCode.ok })

type Failure = McpClient.CallError | UsageError | Skill.SkillVerificationError | OAuth.OAuthError

const failureCode = (e: Failure): number => {
  switch (e._tag) {
    case "UsageError":
      return ExitCode.usage
    case "McpError":
      return ExitCode.jsonRpcError
    case "SkillVerificationError":
      return ExitCode.verification
    case "TransportError":
    case "ClientError":
    case "OAuthError":
      return ExitCode.connection
  }
}

const failureJson = (e: Failure): JsonRpc.JsonObject => {
  switch (e._tag) {
    case "UsageError":
      return { error: { kind: "usage", message: e.message } }
    case "McpError":
      return {
        error: { kind: "jsonrpc", code: e.code, message: e.message, ...(e.data === undefined ? {} : { data: e.data }) }
      }
    case "SkillVerificationError":
      return { error: { kind: "verification", reason: e.reason, uri: e.uri, message: e.message } }
    case "TransportError":
      return {
        error: {
          kind: "transport",
          reason: e.reason,
          message: e.message,
          ...(e.status === undefined ? {} : { status: e.status })
        }
      }
    case "ClientError":
      return { error: { kind: "client", reason: e.reason, message: e.message } }
    case "OAuthError":
      return { error: { kind: "oauth", reason: e.reason, message: e.message } }
  }
}

const failureText = (e: Failure): string => {
  switch (e._tag) {
    case "UsageError":
      return `usage: ${e.message}`
    case "McpError":
      return `the server answered with error ${e.code}: ${e.message}${
        e.data === undefined ? "" : ` ${JSON.stringify(e.data)}`
      }`
    case "SkillVerificationError":
      return `skill verification failed (${e.reason}) for ${e.uri}: ${e.message}`
    case "TransportError":
      return `connection failed (${e.reason}${e.status === undefined ? "" : ` ${e.status}`}): ${e.message}`
    case "ClientError":
      return `client error (${e.reason}): ${e.message}`
    case "OAuthError":
      return `authorization failed (${e.reason}): ${e.message}`
  }
}

/** What a command's body gets: the connected client, the I/O, and the progress hook for its calls. */
interface Session {
  readonly client: McpClient.McpClient
  /** With `--oauth`: does the provider hold tokens for the server now? */
  readonly hasTokens: Effect.Effect<boolean>
  readonly io: Io
  readonly callOptions: McpClient.CallOptions
}

/** The services a command's body may use besides those of the session. */
type Env = CliIo | Prompt.Prompt.Environment

/**
 * Connects to the target, runs `body`, prints its outcome (or the failure) and records the exit
 * code in `exit`. Usage errors print nothing on stdout; other failures print a JSON `{error}`
 * document with `--json`, and always one line on stderr.
 */
const session = (
  exit: Ref.Ref<number>,
  split: Target.Split,
  common: Common,
  body: (s: Session) => Effect.Effect<Outcome, Failure, Scope.Scope | Env>
): Effect.Effect<void, never, Env> =>
  Effect.gen(function*() {
    const io = yield* CliIo
    const outcome = yield* Effect.scoped(Effect.gen(function*() {
      const target = yield* Target.resolve(common, split)
      const onElicit = yield* Interaction.elicitHandler(io, io.stdinIsTTY && io.stderrIsTTY)
      const { client, hasTokens } = yield* Target.connect(
        target,
        common,
        { onElicit, ...(common.capabilities === undefined ? {} : { capabilities: common.capabilities }) },
        (line) => io.err(`presa-mcp: ${line}`),
        // a stdio server's stderr reaches the terminal through `io` too (the terminal-safety rule)
        (line) => io.err(`${line}\n`)
      )
      const progress = yield* Interaction.progressDisplay(io)
      const callOptions: McpClient.CallOptions = progress.onProgress === undefined
        ? {}
        : { onProgress: progress.onProgress }
      return yield* body({ client, hasTokens, io, callOptions }).pipe(Effect.ensuring(progress.clear))
    })).pipe(Effect.either)
    if (Either.isRight(outcome)) {
      const { code, json, text } = outcome.right
      // `listen` prints as it goes and yields no document (json `undefined`, text "").
      yield* io.out(
        common.json ? (json === undefined ? "" : `${JSON.stringify(json, null, 2)}\n`) : text === "" ? "" : `${text}\n`
      )
      return yield* Ref.set(exit, code)
    }
    const e = outcome.left
    if (common.json && e._tag !== "UsageError") yield* io.out(`${JSON.stringify(failureJson(e), null, 2)}\n`)
    yield* io.err(`presa-mcp: ${failureText(e)}\n`)
    return yield* Ref.set(exit, failureCode(e))
  })

const fromEither = <A>(e: Either.Either<A, string>): Effect.Effect<A, UsageError> =>
  Either.match(e, { onLeft: (message) => Effect.fail(new UsageError({ message })), onRight: Effect.succeed })

// ---------------------------------------------------------------------------------------------
// Skills

/** One skill as `skills` reports it: the entry, and whether it passed verification. */
const verifySkill = (
  client: McpClient.McpClient,
  entry: Skill.SkillEntry
): Effect.Effect<JsonRpc.JsonObject, McpClient.CallError> =>
  Effect.gen(function*() {
    const read = yield* client.readSkill(entry.uri)
    if (Array.isArray(read.entry.resources)) {
      for (const file of read.entry.resources) {
        if (file.uri !== read.entry.uri) yield* client.readSkillFile(read.entry, file.uri)
      }
    }
    return { ...entry, verified: true }
  }).pipe(
    Effect.catchTag("SkillVerificationError", (e) =>
      Effect.succeed({ ...entry, verified: false, error: { reason: e.reason, uri: e.uri, message: e.message } }))
  )

const skillText = (skill: JsonRpc.JsonObject, entry: Skill.SkillEntry): string => {
  const files = Array.isArray(entry.resources) ? `${entry.resources.length} files` : "dynamic files"
  const head = `${entry.frontmatter.name}  ${entry.uri} — ${entry.frontmatter.description} (${files})`
  const error = skill.error
  return skill.verified === true
    ? `verified  ${head}`
    : `FAILED    ${head}\n          ${
      typeof error === "object" && error !== null && "message" in error ? String(error.message) : ""
    }`
}

// ---------------------------------------------------------------------------------------------
// The commands

/**
 * The options that take a value as the next argument (for `Target.split`): ours and
 * `@effect/cli`'s built-in ones.
 *
 * @internal
 */
export const valueOptions: ReadonlySet<string> = new Set([
  "--url",
  "--header",
  "-H",
  "--bearer",
  "--era",
  "--timeout",
  "--oauth-client-id",
  "--oauth-client-secret",
  "--oauth-store",
  "--args",
  "--prompt",
  "--resource",
  "--context",
  "--log-level",
  "--completions",
  "--port",
  // registry init's own (`--remote URL` is not the target)
  "--name",
  "--description",
  "--env",
  "--secret",
  "--remote",
  "--remote-header",
  "--remote-variable",
  "--package-json",
  "--out"
])

/** The subcommand names (for `Target.split`), a subcommand of a group as `group sub`. @internal */
export const names: ReadonlySet<string> = new Set([
  "info",
  "tools",
  "call",
  "resources",
  "templates",
  "read",
  "prompts",
  "prompt",
  "complete",
  "skills",
  "listen",
  "login",
  "app",
  "registry init"
])

/** Runs a command's body against the target (see {@link session}); `make` binds it to the exit code. */
type Run = (
  common: Common,
  body: (s: Session) => Effect.Effect<Outcome, Failure, Scope.Scope | Env>
) => Effect.Effect<void, never, Env>

/** A list command: one `McpClient` list (every page), its JSON key and its text. */
const listCommand = <A>(
  name: string,
  description: string,
  list: (client: McpClient.McpClient) => Effect.Effect<A, McpClient.CallError>,
  json: (value: A) => unknown,
  text: (value: A) => string
) =>
(run: Run) =>
  Command.make(
    name,
    targetOptions,
    (o) => run(o, ({ client }) => Effect.map(list(client), (value) => ok(json(value), text(value))))
  ).pipe(Command.withDescription(description))

const info = (run: Run) =>
  Command.make(
    "info",
    targetOptions,
    (o) => run(o, ({ client }) => Effect.succeed(ok(client.info, Render.info(client.info))))
  ).pipe(
    Command.withDescription(`Shows the era, protocol version, server info, capabilities and instructions.`)
  )

const tools = listCommand(
  "tools",
  "Lists the tools (every page).",
  (client) => client.listAllTools,
  (tools) => ({ tools }),
  Render.tools
)

const resources = listCommand(
  "resources",
  "Lists the resources (every page).",
  (client) => client.listAllResources,
  (resources) => ({ resources }),
  Render.resources
)

const templates = listCommand(
  "templates",
  "Lists the resource templates (every page).",
  (client) => client.listAllResourceTemplates,
  (resourceTemplates) => ({ resourceTemplates }),
  Render.templates
)

const prompts = listCommand(
  "prompts",
  "Lists the prompts (every page).",
  (client) => client.listAllPrompts,
  (prompts) => ({ prompts }),
  Render.prompts
)

const callOptions = {
  ...targetOptions,
  args: Options.text("args").pipe(
    Options.withDescription("The tool's arguments as one JSON object; key=value arguments are merged over it."),
    Options.optional
  ),
  name: Args.text({ name: "name" }).pipe(Args.withDescription("The tool's name.")),
  pairs: Args.text({ name: "key=value" }).pipe(
    Args.withDescription(
      "A tool argument; the value is parsed as JSON when it is valid JSON, else kept as a string."
    ),
    Args.repeated
  )
}

const call = (run: Run) =>
  Command.make("call", callOptions, (o) =>
    run(o, ({ callOptions, client }) =>
      Effect.gen(function*() {
        const args = yield* fromEither(Values.toolArguments(Option.getOrUndefined(o.args), o.pairs))
        const result = yield* client.callTool(o.name, args, callOptions)
        return {
          json: result,
          text: Render.callResult(result),
          code: result.isError === true ? ExitCode.toolError : ExitCode.ok
        }
      }))).pipe(
      Command.withDescription(
        `Calls a tool; exit code 1 when the result has isError. ` +
          "Example: presa-mcp call add numbers=[1,2,3] -- node server.js"
      )
    )

const read = (run: Run) =>
  Command.make(
    "read",
    {
      ...targetOptions,
      uri: Args.text({ name: "uri" }).pipe(Args.withDescription("The resource's URI."))
    },
    (o) =>
      run(
        o,
        ({ callOptions, client }) =>
          Effect.map(client.readResource(o.uri, callOptions), (result) => ok(result, Render.read(result)))
      )
  ).pipe(
    Command.withDescription(`Reads a resource.`)
  )

const prompt = (run: Run) =>
  Command.make("prompt", {
    ...targetOptions,
    name: Args.text({ name: "name" }).pipe(Args.withDescription("The prompt's name.")),
    pairs: Args.text({ name: "key=value" }).pipe(
      Args.withDescription("A prompt argument (always a string)."),
      Args.repeated
    )
  }, (o) =>
    run(o, ({ callOptions, client }) =>
      Effect.gen(function*() {
        const args = yield* fromEither(Values.stringPairs(o.pairs))
        const result = yield* client.getPrompt(o.name, args, callOptions)
        return ok(result, Render.prompt(result))
      }))).pipe(
      Command.withDescription(`Gets a prompt with its arguments.`)
    )

const completeOptions = {
  ...targetOptions,
  prompt: Options.text("prompt").pipe(
    Options.withDescription("Complete an argument of this prompt (ref/prompt)."),
    Options.optional
  ),
  resource: Options.text("resource").pipe(
    Options.withDescription(
      "Complete a variable of this resource template URI (ref/resource), e.g. 'people://{id}'."
    ),
    Options.optional
  ),
  context: Options.text("context").pipe(
    Options.withDescription("An already-resolved argument key=value sent as context.arguments (repeatable)."),
    Options.repeated
  ),
  argument: Args.text({ name: "argument=value" }).pipe(
    Args.withDescription("The argument being completed and the partial value typed so far (may be empty: id=).")
  )
}

const complete = (run: Run) =>
  Command.make("complete", completeOptions, (o) =>
    run(o, ({ client }) =>
      Effect.gen(function*() {
        const ref: McpClient.CompleteRef | undefined = Option.isSome(o.prompt) && Option.isNone(o.resource)
          ? { type: "ref/prompt", name: o.prompt.value }
          : Option.isSome(o.resource) && Option.isNone(o.prompt)
          ? { type: "ref/resource", uri: o.resource.value }
          : undefined
        if (ref === undefined) {
          return yield* new UsageError({ message: "complete needs exactly one of --prompt NAME or --resource URI" })
        }
        const [argument, value] = yield* fromEither(Values.keyValue(o.argument, false))
        const context = yield* fromEither(Values.stringPairs(o.context))
        const completion = yield* client.complete(
          ref,
          argument,
          String(value),
          Object.keys(context).length === 0 ? undefined : context
        )
        return ok({ completion }, Render.completion(completion))
      }))).pipe(
      Command.withDescription(
        `Asks the server to complete an argument value (completion/complete). ` +
          "Example: presa-mcp complete --prompt introduce id=a -- node server.js"
      )
    )

const skills = (run: Run) =>
  Command.make("skills", targetOptions, (o) =>
    run(o, ({ client }) =>
      Effect.gen(function*() {
        if (!client.skillsSupported) {
          return ok({ supported: false, skills: [] }, "(the server does not declare the skills extension)")
        }
        const entries = yield* client.listSkills
        const checked = yield* Effect.forEach(entries, (entry) => verifySkill(client, entry))
        const failed = checked.some((s) => s.verified !== true)
        return {
          json: { supported: true, skills: checked },
          text: entries.length === 0
            ? "(no skills)"
            : checked.map((s, i) => (entries[i] === undefined ? "" : skillText(s, entries[i]))).join("\n"),
          code: failed ? ExitCode.verification : ExitCode.ok
        }
      }))).pipe(
      Command.withDescription(
        "Lists the skills and verifies each: SKILL.md and every listed file are read and checked " +
          `against the entry (size, digest, front matter); exit code 5 when one fails.`
      )
    )

const listen = (run: Run, onListening: Effect.Effect<void>) =>
  Command.make("listen", {
    ...targetOptions,
    resource: Options.text("resource").pipe(
      Options.withDescription("Also subscribe to updates of this resource URI (repeatable)."),
      Options.repeated
    )
  }, (o) =>
    run(o, ({ client, io }) =>
      Effect.gen(function*() {
        const subscription = yield* client.listen({
          toolsListChanged: true,
          promptsListChanged: true,
          resourcesListChanged: true,
          ...(o.resource.length === 0 ? {} : { resourceSubscriptions: o.resource })
        })
        yield* io.err(`listening: ${JSON.stringify(subscription.acknowledged)} (Ctrl-C to stop)\n`)
        yield* onListening
        yield* subscription.notifications.pipe(
          Stream.runForEach((n) => io.out(`${o.json ? JSON.stringify(n) : Render.notification(n)}\n`))
        )
        return ok(undefined, "")
      }))).pipe(
      Command.withDescription(
        "Prints the server's change notifications (list changes; resource updates with --resource) " +
          "until Ctrl-C (exit code 0) or until the server ends the subscription. With --json, one " +
          `JSON-RPC notification object per line.`
      )
    )

const app = (run: Run, onListening: Effect.Effect<void>) =>
  Command.make("app", {
    ...callOptions,
    port: Options.integer("port").pipe(
      Options.withDefault(0),
      Options.withDescription("The page's port on 127.0.0.1 (default 0: a free port; the URL is printed).")
    )
  }, (o) =>
    run({ ...o, capabilities: App.capabilities }, ({ client, io }) =>
      Effect.gen(function*() {
        const args = yield* fromEither(Values.toolArguments(Option.getOrUndefined(o.args), o.pairs))
        return yield* App.serve(client, io, { tool: o.name, args, port: o.port, json: o.json }, onListening)
      }))).pipe(
      Command.withDescription(
        "A local MCP Apps host: calls the tool, serves a page on 127.0.0.1 that shows the tool's view " +
          "(its ui:// resource) in a sandboxed iframe under the CSP the view declares, relays the view's " +
          "tool calls and resource reads to the server, and prints the page's URL; runs until Ctrl-C. " +
          "Example: presa-mcp app show_order --args '{\"id\":\"A-17\"}' -- node server.js"
      )
    )

const login = (run: Run) =>
  Command.make(
    "login",
    targetOptions,
    (o) =>
      run({ ...o, oauth: true }, ({ client, hasTokens }) =>
        Effect.map(hasTokens, (authorized) => {
          const server = client.info.serverInfo === undefined
            ? ""
            : `: ${client.info.serverInfo.name} ${client.info.serverInfo.version}`
          return ok(
            { authorized, ...(client.info.serverInfo === undefined ? {} : { server: client.info.serverInfo }) },
            authorized
              ? `authorized${server} (tokens stored in the token file)`
              : `connected${server}: the server asked for no authorization, no tokens stored`
          )
        }))
  ).pipe(
    Command.withDescription(
      "Authorizes with OAuth (as --oauth does) and stores the tokens in the token file, so that later commands " +
        "with --oauth need no browser until the tokens can no longer be refreshed."
    )
  )

/**
 * The command tree. `exit` receives the exit code; `onListening` runs once `listen` is
 * acknowledged (the bin then treats Ctrl-C as a normal end).
 *
 * @internal
 */
export const make = (split: Target.Split, exit: Ref.Ref<number>, onListening: Effect.Effect<void>) => {
  const run: Run = (common, body) => session(exit, split, common, body)
  return Command.make("presa-mcp").pipe(
    Command.withDescription("Call, inspect and listen to MCP servers from the shell."),
    Command.withSubcommands([
      info(run),
      tools(run),
      call(run),
      resources(run),
      templates(run),
      read(run),
      prompts(run),
      prompt(run),
      complete(run),
      skills(run),
      listen(run, onListening),
      login(run),
      app(run, onListening),
      Proxy.command(exit),
      Registry.command(split, exit),
      Dev.command(exit, split.command)
    ])
  )
}

/** The text after the generated help: targets, output and exit codes. @internal */
export const footer: HelpDoc.HelpDoc = HelpDoc.blocks([
  HelpDoc.h1("TARGET"),
  HelpDoc.p(
    "A Streamable HTTP URL, the first argument that is an http(s) URL (or --url URL), with --header NAME:VALUE " +
      "and --bearer TOKEN, or --oauth (OAuth; presa-mcp login URL authorizes ahead); or the server's command line after --, started over stdio. " +
      "Examples: presa-mcp tools http://127.0.0.1:3000/mcp ; presa-mcp tools -- npx tsx examples/library.ts --stdio"
  ),
  HelpDoc.h1("OUTPUT"),
  HelpDoc.p(
    "Text by default; --json prints exactly one JSON document on stdout (listen: one per line). " +
      "Progress of a long call is shown on stderr when stderr is a terminal. The server's questions " +
      "(elicitation) are asked on the terminal, and declined when stdin or stderr is not one."
  ),
  HelpDoc.h1("INSPECTOR-COMPATIBLE"),
  HelpDoc.p(
    "presa-mcp --cli [server command or URL] --method M [--tool-name X --tool-arg k=v | --tool-args-json JSON] " +
      "[--uri U] [--prompt-name P --prompt-args k=v] [--format json] [-e K=V] [--transport T] [--server-url URL]: " +
      "the official MCP Inspector CLI's flags, output and exit codes (0 also for isError, 1 otherwise); see docs/cli.md."
  ),
  HelpDoc.h1("EXIT CODES"),
  HelpDoc.enumeration([
    HelpDoc.p("0  success (listen, app: also after Ctrl-C)"),
    HelpDoc.p("1  call: the tool result has isError: true"),
    HelpDoc.p("2  the server answered with a JSON-RPC error"),
    HelpDoc.p("3  usage error (unknown command or option, bad JSON or key=value, no target)"),
    HelpDoc.p("4  connection error (cannot start or reach the server, it exited, timeout, no common protocol version)"),
    HelpDoc.p("5  skills: a skill failed verification; registry: the server.json is not valid"),
    HelpDoc.p("130  interrupted (Ctrl-C) before the command finished")
  ])
])
