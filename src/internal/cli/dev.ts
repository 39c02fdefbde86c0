/**
 * `presa-mcp dev ENTRY` (issue #40, point 3): runs a server file (TypeScript through tsx) as the
 * one backend of an `McpProxy` (with the empty prefix unless `--prefix` is given: clients see the
 * server's own tool and prompt names and URIs), restarts it when a file under its folder changes, and serves the
 * proxy on this process's stdio (default) or over Streamable HTTP (`--http`), so the clients stay
 * connected across restarts. With `--app TOOL` it also runs the MCP Apps dev host (`app.ts`)
 * against the proxy.
 *
 * How a restart goes: each change (debounced) starts a new generation and closes the child's
 * Scope (its stdin, then SIGTERM); the proxy sees its backend gone and reconnects it, which starts
 * the child again. Each generation is started once: a child that fails to start (a compile error)
 * or exits on its own waits for the next change, and meanwhile calls get an answer saying that the
 * server file failed to start (or exited), its first error line, and that the next save restarts
 * it (devFailure.ts; also before any good start, when the proxy has no definitions yet).
 *
 * @internal
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as McpClient from "../../McpClient.js"
import type * as McpProxy from "../../McpProxy.js"
import type * as McpServer from "../../McpServer.js"
import * as InProcess from "../../transport/InProcess.js"
import * as Stdio from "../../transport/Stdio.js"
import * as StreamableHttp from "../../transport/StreamableHttp.js"
import * as DevEntry from "../node/devEntry.js"
import * as Watch from "../node/devWatch.js"
import * as ProxyMake from "../proxy/make.js"
import * as App from "./app.js"
import * as DevFailure from "./devFailure.js"
import { ExitCode, UsageError } from "./exitCode.js"
import { CliIo, type Io } from "./io.js"
import * as Values from "./values.js"

/** @internal */
export interface DevArgs {
  readonly entry: string
  readonly http: boolean
  readonly port: number
  readonly prefix: string
  readonly watch: ReadonlyArray<string>
  readonly app: Option.Option<string>
  readonly args: Option.Option<string>
  /** The server's own arguments (after `--`), after `--stdio`. */
  readonly serverArgs: ReadonlyArray<string>
}

/** The child's state: the last generation started, and the Scope of the running child. */
interface Child {
  readonly generation: SubscriptionRef.SubscriptionRef<number>
  readonly started: Ref.Ref<number>
  readonly scope: Ref.Ref<Option.Option<Scope.CloseableScope>>
  /** Why it is down while `dev` waits for a save, and its output (what clients are told). */
  readonly failure: DevFailure.Failure
}

/**
 * The proxy's one backend: spawns `node [--import tsx] ENTRY --stdio ARGS` once per generation.
 * A call for a generation already started (the child failed or exited on its own) waits for the
 * next change first.
 */
const connector = (io: Io, a: DevArgs, entry: DevEntry.Ready, child: Child): McpProxy.Connector => ({
  prefix: a.prefix,
  retry: Schedule.spaced("100 millis"),
  connect: (input) =>
    Effect.gen(function*() {
      const started = yield* Ref.get(child.started)
      const generation = yield* SubscriptionRef.get(child.generation)
      if (generation <= started) {
        yield* DevFailure.down(child.failure, "exit", "no error line in its output")
        yield* io.err(`presa-mcp dev: the server is not running; it restarts on the next change\n`)
      }
      const next = yield* child.generation.changes.pipe(
        Stream.filter((g) => g > started),
        Stream.runHead,
        Effect.map(Option.getOrElse(() => started + 1))
      )
      yield* Ref.set(child.started, next)
      yield* DevFailure.reset(child.failure)
      const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
      yield* Ref.set(child.scope, Option.some(scope))
      const client = yield* Stdio.spawn({
        command: entry.command,
        args: [...entry.loader, entry.file, "--stdio", ...a.serverArgs],
        stderr: (line) => Effect.zipRight(DevFailure.line(child.failure, line), io.err(`[server] ${line}\n`)),
        closeTimeout: "500 millis"
      }).pipe(
        Effect.flatMap((transport) =>
          McpClient.connect(transport, { ...input, relisten: Schedule.stop, apps: Option.isSome(a.app) })
        ),
        Scope.extend(scope),
        Effect.tapError((e) =>
          Effect.zipRight(
            DevFailure.down(child.failure, "start", e.message),
            io.err(
              `presa-mcp dev: the server did not start: ${e.message}\n` +
                `presa-mcp dev: calls get an error until the next change starts it\n`
            )
          )
        )
      )
      const info = client.info.serverInfo
      yield* io.err(`presa-mcp dev: server started${info === undefined ? "" : ` (${info.name} ${info.version})`}\n`)
      return client
    })
})

/**
 * The proxy's client as the view knows its server: tools under the server's own names (the view
 * calls `callServerTool` with them), each call sent under the proxy's `PREFIX_<name>` when a
 * `--prefix` is given (without one the proxy serves the server's own names: the client as is).
 */
const unprefixed = (client: McpClient.McpClient, prefix: string): McpClient.McpClient =>
  prefix === "" ? client : ({
    ...client,
    listAllTools: Effect.map(
      client.listAllTools,
      (tools) =>
        tools.flatMap((t) => t.name.startsWith(`${prefix}_`) ? [{ ...t, name: t.name.slice(prefix.length + 1) }] : [])
    ),
    callTool: (name, args, options) => client.callTool(`${prefix}_${name}`, args, options)
  })

/** The MCP Apps dev host on an in-process client of the proxy; its URL goes to stderr. */
const appHost = (io: Io, server: McpServer.McpServer, a: DevArgs, tool: string) =>
  Effect.gen(function*() {
    const args = Option.isNone(a.args) ? {} : yield* Effect.mapError(
      Values.jsonObject(a.args.value, "--args"),
      (message) => new UsageError({ message })
    )
    const client = yield* McpClient.connect(yield* InProcess.client(server), { capabilities: App.capabilities })
    // stdout may be the MCP wire: the dev host's "where" line goes to stderr too
    return yield* App.serve(unprefixed(client, a.prefix), { ...io, out: io.err }, {
      tool,
      args,
      port: 0,
      json: false
    }, Effect.void)
  }).pipe(
    Effect.catchAll((e) => io.err(`presa-mcp dev: the MCP Apps dev host did not start: ${e.message}\n`))
  )

/**
 * Serves the proxy until stdin ends (stdio) or until interrupted (HTTP). Exit code 3 when the
 * entry does not exist or is TypeScript without tsx, 4 when the HTTP port cannot be had.
 */
const serve = (exit: Ref.Ref<number>, a: DevArgs): Effect.Effect<void, never, CliIo> =>
  Effect.gen(function*() {
    const io = yield* CliIo
    const usage = (message: string) =>
      Effect.zipRight(io.err(`presa-mcp dev: ${message}\n`), Ref.set(exit, ExitCode.usage))
    const entry = DevEntry.resolve(a.entry)
    if (entry._tag === "Missing") return yield* usage(`no such file: ${entry.file}`)
    if (entry._tag === "NoTsx") {
      return yield* usage(
        `${entry.file} is TypeScript and tsx cannot be found from ${entry.dir} or the working directory: ` +
          `install it (npm install --save-dev tsx), or give a .js file`
      )
    }
    const child: Child = {
      generation: yield* SubscriptionRef.make(0),
      started: yield* Ref.make(-1),
      scope: yield* Ref.make(Option.none<Scope.CloseableScope>()),
      failure: yield* DevFailure.make
    }
    const dirs = a.watch.length > 0 ? DevEntry.absolute(a.watch) : [entry.dir]
    yield* Watch.changes(dirs).pipe(
      Stream.debounce("150 millis"),
      Stream.runForEach((file) =>
        Effect.gen(function*() {
          yield* io.err(`presa-mcp dev: ${DevEntry.relative(file)} changed, restarting\n`)
          // restarting: the proxy's own answer ("try again later") holds until the new start fails
          yield* DevFailure.reset(child.failure)
          yield* SubscriptionRef.update(child.generation, (g) => g + 1)
          const running = yield* Ref.getAndSet(child.scope, Option.none())
          if (Option.isSome(running)) yield* Scope.close(running.value, Exit.void)
        })
      ),
      Effect.forkScoped
    )
    const failed = DevFailure.middleware(
      child.failure,
      DevEntry.relative(entry.file),
      DevEntry.shorten([entry.dir, DevEntry.cwd()])
    )
    const server = yield* ProxyMake.make([connector(io, a, entry, child)], {
      name: "presa-mcp-dev",
      pingInterval: "2 seconds"
    }, [failed])
    const names = a.prefix === ""
      ? "tools and prompts under their own names"
      : `tools and prompts as ${a.prefix}_<name>`
    const where = `${names}; watching ${dirs.join(", ")}`
    if (Option.isSome(a.app)) yield* Effect.forkScoped(appHost(io, server, a, a.app.value))
    if (!a.http) {
      yield* io.err(`presa-mcp dev: serving ${entry.file} on stdio (${where})\n`)
      return yield* Stdio.run(server)
    }
    const address = yield* StreamableHttp.serve(server, { port: a.port, host: "127.0.0.1" })
    yield* io.err(`presa-mcp dev: serving ${entry.file} at ${address.url} (${where}; Ctrl-C to stop)\n`)
    return yield* Effect.never
  }).pipe(
    Effect.scoped,
    Effect.provide(Stdio.layerLogger),
    Effect.catchAll((e) =>
      Effect.gen(function*() {
        const io = yield* CliIo
        yield* io.err(`presa-mcp dev: ${e.message}\n`)
        // a bad --prefix is the user's; the HTTP port taken is the machine's
        yield* Ref.set(exit, e._tag === "ProxyError" && e.reason === "Prefix" ? ExitCode.usage : ExitCode.connection)
      })
    )
  )

/**
 * The `dev` command; `serverArgs` are the arguments after `--`.
 *
 * @internal
 */
export const command = (exit: Ref.Ref<number>, serverArgs: ReadonlyArray<string>) =>
  Command.make("dev", {
    entry: Args.text({ name: "ENTRY" }).pipe(
      Args.withDescription("The server file: TypeScript (run with tsx) or JavaScript; it is started with --stdio.")
    ),
    http: Options.boolean("http").pipe(Options.withDescription("Serve over Streamable HTTP instead of stdio.")),
    port: Options.integer("port").pipe(
      Options.withDefault(0),
      Options.withDescription("The HTTP port on 127.0.0.1 (with --http; default 0: a free port, printed on stderr).")
    ),
    prefix: Options.text("prefix").pipe(
      Options.withDefault(""),
      Options.withDescription(
        "Serve tools and prompts as PREFIX_<name> and URIs with PREFIX (default none: the server's own names)."
      )
    ),
    watch: Options.text("watch").pipe(
      Options.withDescription("A folder to watch (repeatable; default the entry's folder)."),
      Options.repeated
    ),
    app: Options.text("app").pipe(
      Options.withDescription("Also run the MCP Apps dev host on this tool (the server's own name); URL on stderr."),
      Options.optional
    ),
    args: Options.text("args").pipe(
      Options.withDescription("With --app: the tool's arguments, a JSON object."),
      Options.optional
    )
  }, (o) => serve(exit, { ...o, serverArgs })).pipe(
    Command.withDescription(
      "Runs a server file, restarts it when a file under its folder changes, and serves it through a proxy " +
        "(stdio, or --http) so clients stay connected; a server that fails to start is shown, not fatal."
    )
  )
