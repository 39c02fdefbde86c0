#!/usr/bin/env node
/**
 * The `presa-mcp` command line (the package's `bin`): the Node edge of `src/internal/cli/`. It
 * provides the process's streams and terminal, runs the program and exits with its code. See the
 * guide docs/cli.md, or `presa-mcp --help`.
 *
 * Not a module to import: it runs when loaded (and is not in the package's `exports`).
 *
 * @since 0.2.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Terminal from "@effect/platform/Terminal"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { ExitCode } from "./internal/cli/exitCode.js"
import * as CliIo from "./internal/cli/io.js"
import type { Streams } from "./internal/cli/io.js"
import * as Main from "./internal/cli/main.js"
import * as Stdio from "./transport/Stdio.js"

const write = (stream: NodeJS.WriteStream) => (text: string): Effect.Effect<void> =>
  text === "" ? Effect.void : Effect.async<void>((resume) => {
    stream.write(text, () => resume(Effect.void))
  })

// The raw streams; `CliIo.make` puts the terminal-safety rule (control characters a server sends
// are shown, not obeyed) in front of them.
const streams: Streams = {
  out: write(process.stdout),
  err: write(process.stderr),
  errSync: (text) => {
    process.stderr.write(text)
  },
  stdinIsTTY: process.stdin.isTTY === true,
  stdoutIsTTY: process.stdout.isTTY === true,
  stderrIsTTY: process.stderr.isTTY === true,
  stderrColumns: process.stderr.columns ?? 0
}

// @effect/cli's prompts draw on the terminal's `display`: ours goes to stderr, so that prompts
// (elicitation) never mix with the command's output on stdout. It is the CLI's own drawing (escape
// sequences included), written as is; the server's words in it are made visible where the prompts
// are built (`interaction.ts`).
const StderrTerminal = Layer.scoped(
  Terminal.Terminal,
  Effect.map(NodeTerminal.make(), (terminal) =>
    Terminal.Terminal.of({
      ...terminal,
      columns: Effect.sync(() => process.stderr.columns ?? 0),
      display: streams.err
    }))
)

// Ctrl-C (SIGINT) interrupts the program; once `listen` is acknowledged that is its normal end.
let interruptedCode: number = ExitCode.interrupted

const program = Effect.flatMap(Effect.console, (console) =>
  Main.run(
    process.argv.slice(2),
    Effect.sync(() => {
      interruptedCode = ExitCode.ok
    })
  ).pipe(Effect.provideService(CliIo.CliIo, CliIo.make(streams, console)))).pipe(
    // logs (a client's reconnection notices, a proxy's backend events) go to stderr: stdout carries
    // only the command's output (one JSON document per line under --json) or the proxy's MCP wire
    Effect.provide(Stdio.layerLogger),
    Effect.provide(StderrTerminal),
    Effect.provide(NodeContext.layer)
  )

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  teardown: (exit) => {
    process.exit(
      Exit.isSuccess(exit) && typeof exit.value === "number"
        ? exit.value
        : Exit.isInterrupted(exit)
        ? interruptedCode
        : 1
    )
  }
})
