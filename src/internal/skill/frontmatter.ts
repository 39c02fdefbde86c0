/**
 * SKILL.md front matter: splitting the `---` block off, the plain scalars of the strict YAML subset,
 * and JSON equality. The YAML parsing itself is in `skillYaml.ts`, kept apart so that a server
 * without skills does not load the `yaml` package.
 *
 * Failures are `Either.left(message)`; `Skill.ts` wraps them into its error types.
 *
 * @since 0.1.0
 * @internal
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"

/** @internal */
export interface Split {
  /** The YAML between the two `---` lines (without them). */
  readonly yaml: string
  /** Everything after the closing `---` line. */
  readonly body: string
}

/**
 * The longest front matter (characters between the `---` lines) a client parses in a `SKILL.md` a
 * server sent: 64 KiB. The Agent Skills fields fit in a few KiB (`description` ≤ 1,024 characters).
 *
 * @internal
 */
export const MAX_CLIENT_FRONTMATTER = 65_536

const OPEN = /^\uFEFF?---[ \t]*\r?\n/
const CLOSE = /^---[ \t]*\r?$/

/**
 * Splits `---\n<yaml>\n---\n<body>`. The file must begin with a `---` line (a UTF-8 BOM before it
 * is tolerated, `\r\n` line ends too); the front matter ends at the next line that is exactly
 * `---` (trailing blanks allowed).
 *
 * @internal
 */
export const split = (text: string): Either.Either<Split, string> => {
  const open = OPEN.exec(text)
  if (open === null) return Either.left("SKILL.md must start with a '---' front matter line")
  let offset = open[0].length
  while (offset <= text.length) {
    const nl = text.indexOf("\n", offset)
    const end = nl === -1 ? text.length : nl
    if (CLOSE.test(text.slice(offset, end))) {
      return Either.right({ yaml: text.slice(open[0].length, offset), body: nl === -1 ? "" : text.slice(nl + 1) })
    }
    if (nl === -1) break
    offset = nl + 1
  }
  return Either.left("SKILL.md front matter has no closing '---' line")
}

// ---------------------------------------------------------------------------------------------
// Strict subset
// ---------------------------------------------------------------------------------------------

// Plain scalars that some YAML reader (1.1 or 1.2, core or not) resolves to something other than
// the string or number everybody agrees on.
const AMBIGUOUS_WORDS =
  /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|True|TRUE|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~|<<|=)$/
const AMBIGUOUS_INT = /^[-+]?(?:0b[01_]+|0o[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*)$/
const AMBIGUOUS_FLOAT = /^[-+]?(?:\.[0-9][0-9_]*|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?$/
const AMBIGUOUS_SEXAGESIMAL = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/
const AMBIGUOUS_SPECIAL_FLOAT = /^(?:[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/
const AMBIGUOUS_TIMESTAMP = /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:$|[Tt \t])/

// What the subset reads as numbers: decimal integers without leading zeros or sign `+`, and
// decimal fractions with digits on both sides of the point. No exponent, no `_`.
const PLAIN_INT = /^-?(?:0|[1-9][0-9]*)$/
const PLAIN_DECIMAL = /^-?(?:0|[1-9][0-9]*)\.[0-9]+$/

type Scalar = string | number | boolean

/**
 * Reads one unquoted plain scalar under the subset's rules.
 *
 * @internal
 */
export const plainScalar = (source: string): Either.Either<Scalar, string> => {
  if (source === "") return Either.left("an empty value (read as null) is not allowed; quote it: \"\"")
  if (source === "true") return Either.right(true)
  if (source === "false") return Either.right(false)
  if (PLAIN_INT.test(source)) {
    const n = Number(source)
    return Number.isSafeInteger(n)
      ? Either.right(n)
      : Either.left(`${source} is too large to read the same everywhere; quote it`)
  }
  if (PLAIN_DECIMAL.test(source)) return Either.right(Number(source))
  if (
    AMBIGUOUS_WORDS.test(source) || AMBIGUOUS_INT.test(source) || AMBIGUOUS_FLOAT.test(source) ||
    AMBIGUOUS_SEXAGESIMAL.test(source) || AMBIGUOUS_SPECIAL_FLOAT.test(source) || AMBIGUOUS_TIMESTAMP.test(source)
  ) {
    return Either.left(`YAML readers disagree on the unquoted value ${source}; quote it`)
  }
  return Either.right(source)
}

// ---------------------------------------------------------------------------------------------
// JSON values
// ---------------------------------------------------------------------------------------------

/** @internal */
export const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const isPlainObject = (u: unknown): u is Record<string, unknown> => {
  if (!isRecord(u)) return false
  const proto: unknown = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

/**
 * Is `u` plain JSON data: `null`, a string, a finite number, a boolean, an array of JSON, or a
 * plain object of JSON (no `undefined`, functions, `Date`s, class instances, cycles)?
 *
 * @internal
 */
export const isJson = (u: unknown, seen: ReadonlySet<unknown> = new Set()): boolean => {
  if (u === null || typeof u === "string" || typeof u === "boolean") return true
  if (typeof u === "number") return Number.isFinite(u)
  if (seen.has(u)) return false
  const next = new Set(seen).add(u)
  if (Array.isArray(u)) return u.every((v) => isJson(v, next))
  return isPlainObject(u) && Object.values(u).every((v) => isJson(v, next))
}

/**
 * Deep equality of JSON values: same primitives (`===`), same array elements in order, same object
 * keys (any order) with equal values.
 *
 * @internal
 */
export const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]))
  }
  if (isRecord(a) && isRecord(b)) {
    const ka = Object.keys(a)
    const kb = Object.keys(b)
    return ka.length === kb.length &&
      ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]))
  }
  return false
}

/**
 * The first top-level field on which two front matters differ: `expected`'s keys in order, then
 * keys only `actual` has.
 *
 * @internal
 */
export const firstDifference = (
  expected: Readonly<Record<string, unknown>>,
  actual: Readonly<Record<string, unknown>>
): Option.Option<string> => {
  for (const key of Object.keys(expected)) {
    if (!Object.prototype.hasOwnProperty.call(actual, key) || !jsonEqual(expected[key], actual[key])) {
      return Option.some(key)
    }
  }
  for (const key of Object.keys(actual)) {
    if (!Object.prototype.hasOwnProperty.call(expected, key)) return Option.some(key)
  }
  return Option.none()
}
