/**
 * The exit codes of the `presa-mcp` command line, and the failures that lead to them. The guide
 * (docs/cli.md) and `presa-mcp --help` list the same table.
 *
 * @internal
 */
import * as Data from "effect/Data"

/** @internal */
export const ExitCode = {
  /** The command did what was asked. */
  ok: 0,
  /** `call`: the tool answered with `isError: true`. */
  toolError: 1,
  /** The server answered with a JSON-RPC error (MCP 2025-11-25, Basic › Responses). */
  jsonRpcError: 2,
  /** The command line was wrong: unknown command or option, bad JSON, no target. */
  usage: 3,
  /**
   * The server could not be reached or talked to: the process did not start or exited, an HTTP
   * failure, no reply within `--timeout`, no common protocol version, a malformed result.
   */
  connection: 4,
  /** `skills`: at least one skill failed verification (size, digest, front matter, unlisted file). */
  verification: 5,
  /** Interrupted (Ctrl-C / SIGINT) before the command finished; `listen` ends with 0 instead. */
  interrupted: 130
} as const

/** A mistake in the command line, found after `@effect/cli` parsed it (exit code 3). @internal */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}
