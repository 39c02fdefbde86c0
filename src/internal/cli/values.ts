/**
 * Parsing of the values typed on the command line: `key=value` arguments, `--args` JSON,
 * `--header K:V`, `--timeout` durations. Pure functions returning `Either`, the failure being the
 * usage message.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as JsonRpc from "../../JsonRpc.js"

const parseJson = (text: string): Either.Either<unknown, string> =>
  Either.try({ try: (): unknown => JSON.parse(text), catch: (e) => (e instanceof Error ? e.message : String(e)) })

/**
 * Splits `key=value` at the first `=`. `key` must not be empty. With `json`, the value is parsed
 * as JSON when it is valid JSON (`n=3` → 3, `xs=[1,2]` → [1,2], `flag=true` → true, `s="3"` →
 * "3") and kept as a string otherwise (`name=Ada` → "Ada"); without, it is always the string.
 *
 * @internal
 */
export const keyValue = (
  arg: string,
  json: boolean
): Either.Either<readonly [string, unknown], string> => {
  const at = arg.indexOf("=")
  if (at <= 0) return Either.left(`expected key=value, got '${arg}'`)
  const key = arg.slice(0, at)
  const raw = arg.slice(at + 1)
  return Either.right([key, json ? Either.getOrElse(parseJson(raw), () => raw) : raw])
}

/** `key=value` arguments into an object; a later key wins. @internal */
export const keyValues = (
  args: ReadonlyArray<string>,
  json: boolean
): Either.Either<Record<string, unknown>, string> => {
  const out: Record<string, unknown> = {}
  for (const arg of args) {
    const kv = keyValue(arg, json)
    if (Either.isLeft(kv)) return Either.left(kv.left)
    out[kv.right[0]] = kv.right[1]
  }
  return Either.right(out)
}

/** The `--args` value: a JSON object. @internal */
export const jsonObject = (text: string, what: string): Either.Either<JsonRpc.JsonObject, string> =>
  Either.flatMap(
    Either.mapLeft(parseJson(text), (e) => `${what} is not valid JSON: ${e}`),
    (value) => JsonRpc.isObject(value) ? Either.right(value) : Either.left(`${what} must be a JSON object`)
  )

/**
 * A tool's arguments: `--args` (a JSON object) merged with `key=value` arguments (values as JSON
 * when valid, else strings); a `key=value` wins over the same key in `--args`.
 *
 * @internal
 */
export const toolArguments = (
  argsJson: string | undefined,
  pairs: ReadonlyArray<string>
): Either.Either<JsonRpc.JsonObject, string> =>
  Either.gen(function*() {
    const base = argsJson === undefined ? {} : yield* jsonObject(argsJson, "--args")
    const more = yield* keyValues(pairs, true)
    const merged: JsonRpc.JsonObject = { ...base, ...more }
    return merged
  })

/** String-valued `key=value` arguments (prompt arguments, completion context). @internal */
export const stringPairs = (pairs: ReadonlyArray<string>): Either.Either<Record<string, string>, string> =>
  Either.map(keyValues(pairs, false), (o) => {
    const out: Record<string, string> = {}
    for (const [k, v] of Object.entries(o)) out[k] = String(v)
    return out
  })

// RFC 9110 §5.6.2 token: the characters a header field name may have.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** `--header K:V` values (the value trimmed); a later header of the same name wins. @internal */
export const headers = (values: ReadonlyArray<string>): Either.Either<Record<string, string>, string> => {
  const out: Record<string, string> = {}
  for (const value of values) {
    const at = value.indexOf(":")
    const name = at < 0 ? "" : value.slice(0, at).trim()
    if (!TOKEN.test(name)) return Either.left(`--header expects NAME:VALUE with a valid header name, got '${value}'`)
    out[name] = value.slice(at + 1).trim()
  }
  return Either.right(out)
}

/**
 * A `--timeout`: a number of seconds (`30`, `1.5`) or an Effect duration (`500 millis`,
 * `2 minutes`). Must be positive.
 *
 * @internal
 */
export const duration = (text: string): Either.Either<Duration.Duration, string> => {
  const trimmed = text.trim()
  const seconds = /^\d+(\.\d+)?$/.test(trimmed) ? Duration.seconds(Number(trimmed)) : undefined
  const parsed = seconds ?? Duration.decodeUnknown(trimmed).pipe((o) => (o._tag === "Some" ? o.value : undefined))
  return parsed !== undefined && Duration.greaterThan(parsed, Duration.zero)
    ? Either.right(parsed)
    : Either.left(`--timeout expects seconds (e.g. 30) or a duration (e.g. "500 millis"), got '${text}'`)
}
