/**
 * The `presa-mcp proxy CONFIG` subcommand (issue #18, item 3): serves one MCP server in front of
 * the servers an `mcpServers` configuration file names (`McpProxy.loadConfig` /
 * `McpProxy.fromConfig`: per-backend prefixes, include/exclude/rename, reconnection with
 * backoff), over stdio (default) or Streamable HTTP (`--http --port --host`). Each backend's
 * status change is a line on stderr; with `--http`, `GET /health/backends` answers
 * `{"status":"ok"|"degraded","<prefix>":"up"|"down",…}` (503 while one is not connected).
 *
 * @internal
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import type * as Prompt from "@effect/cli/Prompt"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Cluster from "../../Cluster.js"
import * as McpProxy from "../../McpProxy.js"
import * as Stdio from "../../transport/Stdio.js"
import * as StreamableHttp from "../../transport/StreamableHttp.js"
import { ExitCode } from "./exitCode.js"
import { CliIo } from "./io.js"
import * as OAuthCli from "./oauth.js"

interface ProxyArgs {
  readonly config: string
  readonly http: boolean
  readonly port: number
  readonly host: string
}

/** The health route of `--http`: `{"status":"ok"|"degraded", "<prefix>":"up"|"down", …}`. */
const HEALTH_PATH: `/${string}` = "/health/backends"

/**
 * Prints a line on stderr for each backend whose status changes (the first state included):
 * `presa-mcp proxy: backend files is reconnecting (Closed: …)`.
 */
const reportHealth = (health: McpProxy.Health, print: (line: string) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    const seen = new Map<string, string>()
    yield* health.changes.pipe(
      Stream.runForEach((all) =>
        Effect.forEach(all, (b) => {
          if (seen.get(b.prefix) === b.status) return Effect.void
          seen.set(b.prefix, b.status)
          const why = b.status !== "connected" && b.lastError !== undefined ? ` (${b.lastError})` : ""
          return print(`presa-mcp proxy: backend ${b.prefix} is ${b.status}${why}\n`)
        }, { discard: true })
      )
    )
  })

/**
 * Loads the file and serves until stdin ends (stdio) or until interrupted (HTTP). A bad file is
 * exit code 3 (usage) with the `ConfigError` naming the field; a proxy that cannot start (a
 * name clash between backends, the port taken) is exit code 4.
 */
const serve = (exit: Ref.Ref<number>, args: ProxyArgs): Effect.Effect<void, never, CliIo | Prompt.Prompt.Environment> =>
  Effect.gen(function*() {
    const io = yield* CliIo
    const config = yield* McpProxy.loadConfig(args.config)
    const names = Object.keys(config.mcpServers).join(", ")
    // stdio: stdout is the MCP channel; the backends' stderr and every log line go to stderr
    const fs = yield* FileSystem.FileSystem
    const health = yield* McpProxy.makeHealth
    const server = yield* McpProxy.fromConfig(config, {
      health,
      stderr: (prefix, line) => io.err(`[${prefix}] ${line}\n`),
      // HTTP backends with an `oauth` block: the token file and the loopback redirect listener;
      // the authorization URL goes to stderr (stdout is the MCP channel under stdio).
      oauth: (name, _url, settings) =>
        OAuthCli.provider({
          clientId: settings.clientId,
          clientSecret: settings.clientSecret,
          store: settings.tokenStore,
          grant: settings.grant,
          scopes: settings.scopes
        }, (line) => io.err(`presa-mcp proxy [${name}]: ${line}`)).pipe(
          Effect.provideService(FileSystem.FileSystem, fs)
        )
    })
    yield* Effect.forkScoped(reportHealth(health, (line) => io.err(line)))
    if (!args.http) {
      yield* io.err(`presa-mcp proxy: serving ${names} on stdio\n`)
      return yield* Stdio.run(server)
    }
    const checks: ReadonlyArray<Cluster.HealthCheck> = (yield* SubscriptionRef.get(health)).map(({ prefix }) => ({
      name: prefix,
      up: Effect.map(
        SubscriptionRef.get(health),
        (all) => all.some((b) => b.prefix === prefix && b.status === "connected")
      )
    }))
    const address = yield* StreamableHttp.serve(server, { port: args.port, host: args.host, healthPath: HEALTH_PATH })
      .pipe(Effect.provideService(Cluster.Health, checks))
    yield* io.err(
      `presa-mcp proxy: serving ${names} on ${address.url} (Ctrl-C to stop); health: GET ${
        new URL(HEALTH_PATH, address.url).href
      }\n`
    )
    return yield* Effect.never
  }).pipe(
    Effect.scoped,
    Effect.provide(Stdio.layerLogger),
    Effect.catchAll((e) =>
      Effect.gen(function*() {
        const io = yield* CliIo
        yield* io.err(`presa-mcp proxy: ${e.message}\n`)
        yield* Ref.set(exit, e._tag === "ConfigError" ? ExitCode.usage : ExitCode.connection)
      })
    )
  )

/**
 * The `proxy` command.
 *
 * @internal
 */
export const command = (exit: Ref.Ref<number>) =>
  Command.make("proxy", {
    config: Args.text({ name: "CONFIG" }).pipe(
      Args.withDescription("A JSON file in the mcpServers shape desktop hosts use (see docs/proxy.md).")
    ),
    http: Options.boolean("http").pipe(
      Options.withDescription("Serve over Streamable HTTP instead of stdio.")
    ),
    port: Options.integer("port").pipe(
      Options.withDefault(0),
      Options.withDescription("The HTTP port (with --http; default 0: a free port, printed on stderr).")
    ),
    host: Options.text("host").pipe(
      Options.withDefault("127.0.0.1"),
      Options.withDescription("The HTTP host to bind (with --http).")
    )
  }, (args) => serve(exit, args)).pipe(
    Command.withDescription(
      "Serves one MCP server in front of the servers a config file names, over stdio (default) or " +
        "HTTP: tools and prompts under each entry's prefix, resource URIs with the prefix after the scheme; a backend " +
        "that fails or dies is retried with backoff (status changes on stderr; GET /health/backends with --http)."
    )
  )
