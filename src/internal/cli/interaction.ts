/**
 * What the command line does while a request is in flight: a progress bar on stderr for the
 * server's `notifications/progress` (MCP 2026-07-28, Progress), only when stderr is a terminal;
 * and answers to elicitation (MCP 2025-11-25, Client Features › Elicitation): on a terminal each
 * field of the requested schema is asked with `@effect/cli`'s prompts, otherwise the request is
 * declined.
 *
 * @internal
 */
import * as Prompt from "@effect/cli/Prompt"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Input from "../../Input.js"
import * as JsonRpc from "../../JsonRpc.js"
import type * as McpClient from "../../McpClient.js"
import { type Io, visible } from "./io.js"

// ---------------------------------------------------------------------------------------------
// Progress

/** `[#####-----]  50% message` (or `… 3 message` when the total is unknown), fitted to `columns`. @internal */
export const progressLine = (p: McpClient.Progress, columns: number): string => {
  const message = p.message === undefined ? "" : ` ${p.message}`
  const line = p.total !== undefined && p.total > 0
    ? (() => {
      const ratio = Math.min(1, Math.max(0, p.progress / p.total))
      const width = 30
      const filled = Math.round(ratio * width)
      return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${
        String(Math.round(ratio * 100)).padStart(3)
      }%${message}`
    })()
    : `… ${p.progress}${message}`
  return columns > 1 && line.length >= columns ? line.slice(0, columns - 1) : line
}

/** Carriage return, then erase the line (ECMA-48 EL 2): the progress line is redrawn in place. */
const CLEAR_LINE = "\r\x1b[2K"

/** A progress display: the `onProgress` hook (when stderr is a terminal) and `clear`, run when the call ends. @internal */
export interface ProgressDisplay {
  readonly onProgress: ((p: McpClient.Progress) => Effect.Effect<void>) | undefined
  readonly clear: Effect.Effect<void>
}

/** @internal */
export const progressDisplay = (io: Io): Effect.Effect<ProgressDisplay> =>
  Effect.map(Ref.make(false), (shown) =>
    io.stderrIsTTY
      ? {
        onProgress: (p) =>
          Ref.set(shown, true).pipe(
            Effect.zipRight(io.errControl(CLEAR_LINE)),
            Effect.zipRight(io.err(progressLine(p, io.stderrColumns)))
          ),
        clear: Effect.flatMap(Ref.get(shown), (was) => (was ? io.errControl(CLEAR_LINE) : Effect.void))
      }
      : { onProgress: undefined, clear: Effect.void })

// ---------------------------------------------------------------------------------------------
// Elicitation

const objectAt = (o: JsonRpc.JsonObject, key: string): JsonRpc.JsonObject | undefined => {
  const v = o[key]
  return JsonRpc.isObject(v) ? v : undefined
}
const stringAt = (o: JsonRpc.JsonObject, key: string): string | undefined => {
  const v = o[key]
  return typeof v === "string" ? v : undefined
}
const numberAt = (o: JsonRpc.JsonObject, key: string): number | undefined => {
  const v = o[key]
  return typeof v === "number" ? v : undefined
}

/** The choices of an enum field: `enum` (+ legacy `enumNames`) or `oneOf`/`anyOf` of `{const, title}`. */
const choicesOf = (field: JsonRpc.JsonObject): ReadonlyArray<{ title: string; value: string }> | undefined => {
  const values = field.enum
  if (Array.isArray(values)) {
    const names = Array.isArray(field.enumNames) ? field.enumNames : []
    return values.filter((v): v is string => typeof v === "string").map((value, i) => {
      const name = names[i]
      return { title: typeof name === "string" ? name : value, value }
    })
  }
  const options = Array.isArray(field.oneOf) ? field.oneOf : Array.isArray(field.anyOf) ? field.anyOf : undefined
  if (options === undefined) return undefined
  return options.filter(JsonRpc.isObject).flatMap((o) => {
    const value = o.const
    return typeof value === "string" ? [{ title: stringAt(o, "title") ?? value, value }] : []
  })
}

/** An answer to one field (`ElicitResult.content` values); `undefined` leaves an optional field out. */
type Answer = string | number | boolean | ReadonlyArray<string> | undefined

/** The prompt of one field of a requested schema. */
const fieldPrompt = (
  name: string,
  field: JsonRpc.JsonObject,
  required: boolean
): Prompt.Prompt<Answer> => {
  // @effect/cli draws prompts with escape sequences of its own, so they go to the terminal as they
  // are (`Io.errControl`): the server's words in them are made visible here instead.
  const label = visible(
    `${stringAt(field, "title") ?? name}${
      stringAt(field, "description") === undefined ? "" : ` (${stringAt(field, "description")})`
    }${required ? "" : " [optional]"}`
  )
  const type = stringAt(field, "type")
  const choices = choicesOf(field)?.map((c) => ({ ...c, title: visible(c.title) }))
  if (type === "array") {
    const items = objectAt(field, "items")
    const itemChoices = items === undefined ? undefined : choicesOf(items)
    if (itemChoices !== undefined) {
      const shown = itemChoices.map((c) => ({ ...c, title: visible(c.title) }))
      return Prompt.multiSelect({ message: label, choices: shown }).pipe(Prompt.map((xs): Answer => xs))
    }
  }
  if (choices !== undefined && choices.length > 0) {
    const select = Prompt.select<string | undefined>({
      message: label,
      choices: required ? choices : [...choices, { title: "(leave empty)", value: undefined }]
    })
    return select
  }
  if (type === "boolean") {
    const initial = field.default
    return Prompt.confirm({ message: label, initial: typeof initial === "boolean" ? initial : false })
  }
  if (type === "integer" || type === "number") {
    const min = numberAt(field, "minimum")
    const max = numberAt(field, "maximum")
    const bounds = { ...(min === undefined ? {} : { min }), ...(max === undefined ? {} : { max }) }
    return type === "integer"
      ? Prompt.integer({ message: label, ...bounds })
      : Prompt.float({ message: label, ...bounds })
  }
  const fallback = field.default
  return Prompt.text({
    message: label,
    ...(typeof fallback === "string" ? { default: visible(fallback) } : {}),
    validate: (value) => (required && value === "" ? Effect.fail("a value is required") : Effect.succeed(value))
  }).pipe(Prompt.map((value) => (value === "" && !required ? undefined : value)))
}

/** @internal */
export type ElicitHandler = NonNullable<McpClient.InputHandlers["onElicit"]>

/**
 * The elicitation handler. `interactive` (stdin and stderr are terminals): shows the server's
 * message, asks each field of `requestedSchema.properties` (strings, numbers, integers, booleans,
 * single- and multi-select enums; an optional field may be left empty), then asks whether to send;
 * yes ⇒ `accept` with the answers, no ⇒ `decline`, Ctrl-C ⇒ `cancel`. A URL-mode request is shown
 * and declined (the CLI does not declare URL mode). Not interactive: `decline`, with a line on
 * stderr saying so.
 *
 * @internal
 */
export const elicitHandler = (
  io: Io,
  interactive: boolean
): Effect.Effect<ElicitHandler, never, Prompt.Prompt.Environment> =>
  Effect.map(Effect.context<Prompt.Prompt.Environment>(), (environment) => (params) => {
    const message = stringAt(params, "message") ?? ""
    const schema = objectAt(params, "requestedSchema")
    if (!interactive || stringAt(params, "mode") === "url" || schema === undefined) {
      const why = !interactive ? "not a terminal" : "unsupported request"
      return Effect.as(io.err(`elicitation declined (${why}): ${message}\n`), { action: "decline" } as const)
    }
    const properties = objectAt(schema, "properties") ?? {}
    const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : [])
    const ask = Effect.gen(function*() {
      yield* io.err(`The server asks: ${message}\n`)
      const content: Record<string, string | number | boolean | ReadonlyArray<string>> = {}
      for (const [name, field] of Object.entries(properties)) {
        if (!JsonRpc.isObject(field)) continue
        const answer = yield* Prompt.run(fieldPrompt(name, field, required.has(name)))
        if (answer !== undefined) content[name] = answer
      }
      const send = yield* Prompt.run(Prompt.confirm({ message: "Send these answers?", initial: true }))
      const result: Input.ElicitResult = send ? { action: "accept", content } : { action: "decline" }
      return result
    })
    return ask.pipe(
      Effect.provide(environment),
      Effect.catchTag("QuitException", () => Effect.succeed<Input.ElicitResult>({ action: "cancel" }))
    )
  })
