/**
 * What the stdio server writes, as the client reads it: each stdout line is decoded once and
 * handed to the connection core (`internal/client/connection`); a response whose caller waits is
 * settled right in the read callback (no fiber), anything else (notifications, server→client
 * requests, stray lines) is handled by an Effect that runs before the next line. Also the child's
 * stderr lines. Framing: MCP 2025-11-25, Transports › stdio (one JSON-RPC message per line; stderr
 * is free-form logging).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import { identity } from "effect/Function"
import * as Option from "effect/Option"
import * as JsonRpc from "../../../../JsonRpc.js"
import * as Core from "../../../client/connection.js"
import * as Frame from "../frame.js"
import { type Client, STDERR_MAX_LINE_BYTES } from "./state.js"

type RunFork = (effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>

const preview = (text: string): string => text.length > 200 ? `${text.slice(0, 200)}…` : text

/** One stdout line: to the core, parsed once; a line that is too long or not JSON is logged. */
const onLine = (client: Client, frame: Frame.Frame): Effect.Effect<void> | undefined => {
  if (frame._tag === "Oversized") {
    return Effect.logWarning(`dropped a line of ${frame.bytes} bytes from the server (limit ${client.maxLineBytes})`)
  }
  const value = Frame.parseJson(frame.text)
  if (Option.isNone(value)) {
    return Effect.logWarning(`skipped a line from the server that is not JSON: ${preview(frame.text)}`)
  }
  const incoming = JsonRpc.classify(value.value)
  if (incoming._tag === "Response" && Core.unsafeSettle(client.connection, incoming.message)) return undefined
  return Core.receive(client.connection, incoming)
}

/**
 * Reads the process's stdout until it ends: a response whose caller waits is settled right in
 * the read callback; anything else runs in a fiber (`runFork`) before the next line is handled.
 */
export const readStdout = (client: Client, stdout: Frame.Readable, runFork: RunFork): Effect.Effect<void, unknown> =>
  Frame.readFrom(stdout, client.maxLineBytes, (frame) => onLine(client, frame), runFork, identity)

/** A user handler (`stderr`): its defect is logged, never fatal. */
const safely = (handler: Effect.Effect<void>): Effect.Effect<void> =>
  handler.pipe(Effect.catchAllDefect((defect) => Effect.logWarning("a stderr handler died", defect)))

/** Hands each stderr line to `onStderr` (lines over 1 MiB are dropped and logged). */
export const readStderr = (
  stderr: Frame.Readable,
  onStderr: (line: string) => Effect.Effect<void>,
  runFork: RunFork
): Effect.Effect<void, unknown> => {
  const onStderrLine = (frame: Frame.Frame): Effect.Effect<void> =>
    frame._tag === "Line"
      ? safely(onStderr(frame.text))
      : Effect.logDebug(`dropped a stderr line of ${frame.bytes} bytes`)
  return Frame.readFrom(stderr, STDERR_MAX_LINE_BYTES, onStderrLine, runFork, identity)
}
