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

/** One message: a response whose caller waits is settled now, anything else goes to the core. */
const onMessage = (client: Client, incoming: JsonRpc.Classified): Effect.Effect<void> | undefined =>
  incoming._tag === "Response" && Core.unsafeSettle(client.connection, incoming.message)
    ? undefined
    : Core.receive(client.connection, incoming)

/**
 * One stdout line: to the core, parsed once; a line that is too long or not JSON is logged. A
 * JSON-RPC batch (a 2025-03-26 server may send one, `JsonRpc.classifyBatch`) is handled message
 * by message, in order.
 */
const onLine = (client: Client, frame: Frame.Frame): Effect.Effect<void> | undefined => {
  if (frame._tag === "Oversized") {
    return Effect.logWarning(`dropped a line of ${frame.bytes} bytes from the server (limit ${client.maxLineBytes})`)
  }
  const value = Frame.parseJson(frame.text)
  if (Option.isNone(value)) {
    return Effect.logWarning(`skipped a line from the server that is not JSON: ${preview(frame.text)}`)
  }
  if (!Array.isArray(value.value)) return onMessage(client, JsonRpc.classify(value.value))
  // once one message waits for its Effect, the later ones queue behind it (order kept)
  const rest: Array<Effect.Effect<void>> = []
  for (const incoming of JsonRpc.classifyBatch(value.value)) {
    const effect = rest.length === 0
      ? onMessage(client, incoming)
      : Effect.suspend(() => Core.receive(client.connection, incoming))
    if (effect !== undefined) rest.push(effect)
  }
  return rest.length === 0 ? undefined : Effect.forEach(rest, identity, { discard: true })
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
