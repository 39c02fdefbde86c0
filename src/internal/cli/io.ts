/**
 * The command line's view of its process: the two output streams and whether each standard stream
 * is a terminal. `src/bin.ts` provides it from Node's `process`; everything under
 * `src/internal/cli/` stays platform-neutral and writes through it.
 *
 * @internal
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

/** @internal */
export interface Io {
  /** Writes `text` to stdout as it is (no line end added); completes once the write is flushed. */
  readonly out: (text: string) => Effect.Effect<void>
  /** Writes `text` to stderr as it is (no line end added). */
  readonly err: (text: string) => Effect.Effect<void>
  readonly stdinIsTTY: boolean
  readonly stdoutIsTTY: boolean
  readonly stderrIsTTY: boolean
  /** Width of the stderr terminal in columns (0 when unknown). */
  readonly stderrColumns: number
}

/** @internal */
export class CliIo extends Context.Tag("presa-mcp/cli/Io")<CliIo, Io>() {}
