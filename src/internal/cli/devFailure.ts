/**
 * `presa-mcp dev`: what a client is told while the server file is down (it failed to start, or
 * exited on its own) and `dev` waits for the next save. A `tools/call` gets an `isError` result,
 * `prompts/get` and `resources/read` a -32603 error, each saying which file, the first error line
 * of its output (else the connection's error; no stack; paths relative to the working directory,
 * as `dev`'s own lines show them) and that `dev` restarts it on the next save. Also when the first start failed and
 * the proxy has no definitions yet: any name then gets this answer rather than "Unknown tool".
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Middleware from "../../Middleware.js"
import { quote } from "../quote.js"

/** Lines of the child's stderr kept per start (the first error line is near the top). */
const MAX_LINES = 200
/** The longest error line quoted, in characters. */
const MAX_LINE = 300

/** Why the server is down: `"start"` (it did not start) or `"exit"` (it exited on its own). */
export type Reason = "start" | "exit"

/** @internal */
export interface Failure {
  /** Set while the server is down and `dev` waits for a save: why, and the connection's error. */
  readonly reason: Ref.Ref<Option.Option<{ readonly reason: Reason; readonly error: string }>>
  /** The current process's stderr lines (the first {@link MAX_LINES}). */
  readonly lines: Ref.Ref<ReadonlyArray<string>>
}

/** @internal */
export const make: Effect.Effect<Failure> = Effect.all({
  reason: Ref.make(Option.none<{ readonly reason: Reason; readonly error: string }>()),
  lines: Ref.make<ReadonlyArray<string>>([])
})

/** Records one stderr line of the current process. @internal */
export const line = (failure: Failure, text: string): Effect.Effect<void> =>
  Ref.update(failure.lines, (lines) => lines.length < MAX_LINES ? [...lines, text] : lines)

/** A new process starts: its predecessor's lines and failure are forgotten. @internal */
export const reset = (failure: Failure): Effect.Effect<void> =>
  Effect.zipRight(Ref.set(failure.lines, []), Ref.set(failure.reason, Option.none()))

/** The server is down for `reason` (the first reason of a process is kept). @internal */
export const down = (failure: Failure, reason: Reason, error: string): Effect.Effect<void> =>
  Ref.update(failure.reason, (current) => Option.isSome(current) ? current : Option.some({ reason, error }))

const ESBUILD = /: ERROR: /
const THROWN = /^\s*(?:[A-Z]\w*)?Error(?: \[\w+\])?: /
const TRANSFORM = /^Error: Transform failed with \d+ errors?:?$/

/**
 * The first error line of a process's output: an esbuild/tsx compile error (`file:line:col: ERROR:
 * …`), else the first thrown error (`TypeError: …`, `Error [ERR_MODULE_NOT_FOUND]: …`), else
 * `undefined`; trimmed, at most {@link MAX_LINE} characters.
 *
 * @internal
 */
export const firstErrorLine = (lines: ReadonlyArray<string>): string | undefined => {
  const found = lines.find((l) => ESBUILD.test(l)) ?? lines.find((l) => THROWN.test(l) && !TRANSFORM.test(l.trim()))
  if (found === undefined) return undefined
  return quote(found.trim(), MAX_LINE)
}

/** The message for the file `file` (as `dev` names it) down for `reason`. @internal */
export const message = (file: string, reason: Reason, errorLine: string): string =>
  `${file} ${reason === "start" ? "failed to start" : "exited"}: ${errorLine}` +
  ` — presa-mcp dev restarts it on the next save (its tools are unavailable until then)`

/**
 * The middleware (before the proxy's own) answering `tools/call`, `prompts/get` and
 * `resources/read` while the server is down; `file` names the server file, `shorten` makes the
 * absolute paths of a line relative (as `dev` shows them). @internal
 */
export const middleware = (
  failure: Failure,
  file: string,
  shorten: (text: string) => string
): Middleware.Middleware =>
(request, next) => {
  const tool = request.method === McpSchema.Method.toolsCall
  if (!tool && request.method !== McpSchema.Method.promptsGet && request.method !== McpSchema.Method.resourcesRead) {
    return next
  }
  return Effect.flatMap(Ref.get(failure.reason), (down): typeof next => {
    if (Option.isNone(down)) return next
    return Effect.flatMap(Ref.get(failure.lines), (lines) => {
      const text = message(file, down.value.reason, shorten(firstErrorLine(lines) ?? down.value.error))
      return tool
        ? Effect.succeed({ content: [{ type: "text", text }], isError: true })
        : Effect.fail(JsonRpc.McpError.internalError(text))
    })
  })
}
