/**
 * The `presa-mcp` program: splits the command line (`target.ts`), runs the `@effect/cli` command
 * tree (`commands.ts`) and yields the process's exit code (`exitCode.ts`). Platform-neutral: the
 * bin provides `CliIo` and `@effect/cli`'s environment (file system, path, terminal).
 *
 * @internal
 */
import type * as CliApp from "@effect/cli/CliApp"
import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Commands from "./commands.js"
import { ExitCode } from "./exitCode.js"
import * as Inspector from "./inspector.js"
import * as InspectorArgs from "./inspectorArgs.js"
import * as Io from "./io.js"
import * as Target from "./target.js"

/**
 * Runs the command line `args` (without the runtime and the script). `onListening` runs once a
 * `listen` subscription is acknowledged. Yields the exit code; never fails (a usage error that
 * `@effect/cli` found was printed by it, and is exit code 3).
 *
 * @internal
 */
export const run = (
  args: ReadonlyArray<string>,
  onListening: Effect.Effect<void>
): Effect.Effect<number, never, Io.CliIo | CliApp.CliApp.Environment> =>
  Effect.gen(function*() {
    // `--cli --method …`: the official MCP Inspector CLI's command line (inspector.ts)
    if (InspectorArgs.isInvocation(args)) return yield* Inspector.run(args).pipe(Io.withConsole)
    const split = Target.split(args, Commands.names, Commands.valueOptions)
    const exit = yield* Ref.make<number>(ExitCode.ok)
    const cli = Command.run(Commands.make(split, exit, onListening), {
      name: "presa-mcp",
      version: Target.VERSION,
      executable: "presa-mcp",
      footer: Commands.footer
    })
    // log lines (Effect's stderr logger writes through the Console) follow the terminal rule too
    yield* cli(["node", "presa-mcp", ...split.cliArgs]).pipe(
      Effect.catchAll(() => Ref.set(exit, ExitCode.usage)),
      Io.withConsole
    )
    return yield* Ref.get(exit)
  })
