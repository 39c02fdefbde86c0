/**
 * The command line's view of its process: the two output streams and whether each standard stream
 * is a terminal. `src/bin.ts` provides it from Node's `process`; everything under
 * `src/internal/cli/` stays platform-neutral and writes through it.
 *
 * The terminal-safety rule (issue #34, point 4) lives here, at the one point where the CLI writes:
 * what a server controls (tool names, descriptions, results, log lines, progress messages,
 * elicitation questions, error messages) may carry escape sequences that rewrite the screen, hide
 * text, fake a prompt, set the clipboard (OSC 52) or the window title. On a stream that is a
 * terminal, {@link make}'s `out` and `err` pass every text through {@link visible}, which shows
 * control characters as `\u001b`-style escapes instead of sending them. Only the CLI's own
 * control sequences (clearing the progress line, `@effect/cli`'s prompts) go through `errControl`
 * as they are.
 *
 * @internal
 */
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

/**
 * What a terminal would act on rather than show: C0 controls but tab and line feed (a carriage
 * return only when no line feed follows it), DEL, C1 controls (U+0080–U+009F, where a lone CSI
 * U+009B starts an escape sequence), and the bidirectional controls that reorder what is shown
 * (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069).
 */
const CONTROL = new RegExp(
  "\\r(?!\\n)|[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f" +
    "\\u202a-\\u202e\\u2066-\\u2069]",
  "g"
)

/**
 * `text` with every control character (see `CONTROL`) replaced by its JSON escape, `\u001b` for
 * ESC: nothing in the result moves the cursor, erases, sets a title or the clipboard, or reorders
 * text. Applied to JSON text the result is still exactly JSON (raw C1 and bidirectional
 * characters can only be inside strings, where the escape means the same character; JSON.stringify
 * already escapes C0), so `--json` output parses to the same value.
 *
 * @internal
 */
export const visible = (text: string): string =>
  text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** The process's raw writers and terminal facts (what the bin provides). @internal */
export interface Streams {
  /** Writes `text` to stdout as it is; completes once the write is flushed. */
  readonly out: (text: string) => Effect.Effect<void>
  /** Writes `text` to stderr as it is; completes once the write is flushed. */
  readonly err: (text: string) => Effect.Effect<void>
  /** Writes `text` to stderr as it is, at once (a logger cannot wait). */
  readonly errSync: (text: string) => void
  readonly stdinIsTTY: boolean
  readonly stdoutIsTTY: boolean
  readonly stderrIsTTY: boolean
  /** Width of the stderr terminal in columns (0 when unknown). */
  readonly stderrColumns: number
}

/** @internal */
export interface Io {
  /** Writes `text` to stdout (no line end added), through {@link visible} when stdout is a terminal. */
  readonly out: (text: string) => Effect.Effect<void>
  /** Writes `text` to stderr (no line end added), through {@link visible} when stderr is a terminal. */
  readonly err: (text: string) => Effect.Effect<void>
  /** Writes the CLI's own control sequences to stderr as they are (never text a server controls). */
  readonly errControl: (sequence: string) => Effect.Effect<void>
  /** A `Console` whose `error` writes like `err`: what Effect's stderr logger uses (`main.ts`). */
  readonly console: Console.Console
  readonly stdinIsTTY: boolean
  readonly stdoutIsTTY: boolean
  readonly stderrIsTTY: boolean
  /** Width of the stderr terminal in columns (0 when unknown). */
  readonly stderrColumns: number
}

/** The `Io` over the process's streams, with the terminal-safety rule (module header). @internal */
export const make = (streams: Streams, base: Console.Console): Io => {
  const onStdout = streams.stdoutIsTTY ? visible : (text: string) => text
  const onStderr = streams.stderrIsTTY ? visible : (text: string) => text
  const line = (args: ReadonlyArray<unknown>): string =>
    `${args.map((a) => (typeof a === "string" ? a : String(a))).join(" ")}\n`
  const console: Console.Console = {
    ...base,
    error: (...args) => streams.err(onStderr(line(args))),
    unsafe: { ...base.unsafe, error: (...args) => streams.errSync(onStderr(line(args))) }
  }
  return {
    out: (text) => streams.out(onStdout(text)),
    err: (text) => streams.err(onStderr(text)),
    errControl: streams.err,
    console,
    stdinIsTTY: streams.stdinIsTTY,
    stdoutIsTTY: streams.stdoutIsTTY,
    stderrIsTTY: streams.stderrIsTTY,
    stderrColumns: streams.stderrColumns
  }
}

/**
 * Runs `effect` with the `Io`'s console, so that Effect's stderr logger (`Stdio.layerLogger`)
 * writes log lines under the same rule as `err`.
 *
 * @internal
 */
export const withConsole = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | CliIo> =>
  Effect.flatMap(CliIo, (io) => Effect.withConsole(effect, io.console))

/** @internal */
export class CliIo extends Context.Tag("presa-mcp/cli/Io")<CliIo, Io>() {}
