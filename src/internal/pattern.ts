/**
 * JSON Schema `pattern` / `patternProperties` matching (JSON Schema 2020-12, Validation §6.3.3:
 * an ECMA-262 regular expression, unanchored, here with the `u` flag) on a linear-time engine.
 *
 * A pattern is first checked with JavaScript's `RegExp` (so what is valid is exactly what
 * ECMA-262 accepts in Unicode mode), then translated to RE2 syntax and compiled with `re2js`, a
 * pure-JavaScript port of RE2 whose matching time is linear in the input: no pattern can make it
 * backtrack. The translation keeps ECMA-262's meaning where RE2's differs: `\s` / `\S` are
 * ECMA-262's whitespace and line terminators (RE2's `\s` is ASCII only), `.` excludes the four
 * line terminators (`\n`, `\r`, U+2028, U+2029), `\uXXXX`, `\u{X}` and `\cX` escapes become
 * `\x{X}`, `\0` is NUL, `[` inside a class is a literal, and `[]` / `[^]` match nothing /
 * anything. `\d`, `\w`, `\b`, `^` and `$` already agree (ASCII classes; input anchors).
 *
 * What RE2 cannot run — backreferences (`\1`, `\k<name>`), lookahead and lookbehind, counted
 * repetitions over 1,000, Unicode property names RE2 does not know — falls back to the `RegExp`,
 * which backtracks: such a match is {@link Compiled.linear} `false`, and the caller bounds the
 * input it runs on.
 *
 * @internal
 */
import { RE2JS } from "re2js"

/** A compiled pattern. @internal */
export interface Compiled {
  /** `true`: matched by RE2 in linear time; `false`: by the backtracking `RegExp` (the fallback). */
  readonly linear: boolean
  /** Does the pattern match somewhere in `input` (unanchored, as `RegExp.prototype.test`)? */
  readonly test: (input: string) => boolean
}

/** ECMA-262 `WhiteSpace` and `LineTerminator` (what `\s` matches), as code point ranges. */
const WHITESPACE: ReadonlyArray<readonly [number, number]> = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff]
]

const hex = (code: number): string => `\\x{${code.toString(16)}}`

const rangesToClass = (ranges: ReadonlyArray<readonly [number, number]>): string =>
  ranges.map(([from, to]) => (from === to ? hex(from) : `${hex(from)}-${hex(to)}`)).join("")

/** The complement of sorted, disjoint ranges within U+0000..U+10FFFF. */
const complement = (ranges: ReadonlyArray<readonly [number, number]>): Array<readonly [number, number]> => {
  const out: Array<readonly [number, number]> = []
  let next = 0
  for (const [from, to] of ranges) {
    if (from > next) out.push([next, from - 1])
    next = to + 1
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff])
  return out
}

/** `\s` and `\S` as class contents (without brackets), usable inside a class too. */
const SPACE = rangesToClass(WHITESPACE)
const NOT_SPACE = rangesToClass(complement(WHITESPACE))
/** `.` without the `s` flag. */
const DOT = `[^\\n\\r${hex(0x2028)}${hex(0x2029)}]`
const ANYTHING = `${hex(0)}-${hex(0x10ffff)}`

const isHex = (s: string): boolean => /^[0-9a-fA-F]+$/.test(s)

/** A `\u` escape at `i` (the backslash): the code point and the length consumed, surrogate pairs joined. */
const unicodeEscape = (p: string, i: number): readonly [number, number] | undefined => {
  if (p[i + 2] === "{") {
    const end = p.indexOf("}", i + 3)
    const digits = p.slice(i + 3, end)
    return end > 0 && isHex(digits) ? [parseInt(digits, 16), end + 1 - i] : undefined
  }
  const digits = p.slice(i + 2, i + 6)
  if (digits.length !== 4 || !isHex(digits)) return undefined
  const code = parseInt(digits, 16)
  const low = p.slice(i + 8, i + 12)
  if (code >= 0xd800 && code <= 0xdbff && p.slice(i + 6, i + 8) === "\\u" && low.length === 4 && isHex(low)) {
    const lowCode = parseInt(low, 16)
    if (lowCode >= 0xdc00 && lowCode <= 0xdfff) return [(code - 0xd800) * 0x400 + (lowCode - 0xdc00) + 0x10000, 12]
  }
  return [code, 6]
}

/** `\p{…}` / `\P{…}` at `i`: RE2's spelling (`gc=` / `Script=` prefixes dropped) and the length consumed. */
const propertyEscape = (p: string, i: number): readonly [string, number] | undefined => {
  const end = p.indexOf("}", i + 3)
  if (p[i + 2] !== "{" || end < 0) return undefined
  const body = p.slice(i + 3, end)
  const eq = body.indexOf("=")
  const [key, value] = eq < 0 ? ["", body] : [body.slice(0, eq), body.slice(eq + 1)]
  // Script_Extensions has no RE2 form; other keys than these are not ECMA-262.
  if (!["", "General_Category", "gc", "Script", "sc"].includes(key)) return undefined
  return [`\\${p[i + 1]}{${value}}`, end + 1 - i]
}

/**
 * One escape at `i` (the backslash), in or out of a class: its RE2 form and the length consumed,
 * or `undefined` for what RE2 lacks (backreferences).
 */
const escape = (p: string, i: number, inClass: boolean): readonly [string, number] | undefined => {
  const c = p[i + 1] ?? ""
  switch (c) {
    case "s":
      return [inClass ? SPACE : `[${SPACE}]`, 2]
    case "S":
      return [inClass ? NOT_SPACE : `[${NOT_SPACE}]`, 2]
    case "b":
      return [inClass ? hex(8) : "\\b", 2]
    case "0":
      return [hex(0), 2]
    case "u": {
      const u = unicodeEscape(p, i)
      return u === undefined ? undefined : [hex(u[0]), u[1]]
    }
    case "c": {
      const letter = p.charCodeAt(i + 2)
      return Number.isNaN(letter) ? undefined : [hex(letter % 32), 3]
    }
    case "p":
    case "P":
      return propertyEscape(p, i)
    case "k":
      return undefined
    default:
      // \1-\9 are backreferences; \d \D \w \W \B \t \n \v \f \r \x.. and escaped syntax
      // characters mean the same in RE2.
      return c >= "1" && c <= "9" ? undefined : [`\\${c}`, 2]
  }
}

/** A class starting at `i` (the `[`): its RE2 form and the length consumed. */
const characterClass = (p: string, i: number): readonly [string, number] | undefined => {
  const negated = p[i + 1] === "^"
  let j = i + (negated ? 2 : 1)
  if (p[j] === "]") return [negated ? `[${ANYTHING}]` : `[^${ANYTHING}]`, j + 1 - i]
  let out = negated ? "[^" : "["
  while (j < p.length && p[j] !== "]") {
    const c = p[j] ?? ""
    if (c === "\\") {
      const e = escape(p, j, true)
      if (e === undefined) return undefined
      out += e[0]
      j += e[1]
    } else {
      out += c === "[" ? "\\[" : c
      j++
    }
  }
  return [`${out}]`, j + 1 - i]
}

/** A group opening at `i` (the `(`): RE2's form and the length consumed; lookaround has none. */
const groupOpen = (p: string, i: number): readonly [string, number] | undefined => {
  if (p[i + 1] !== "?") return ["(", 1]
  if (p[i + 2] === ":") return ["(?:", 3]
  if (p[i + 2] === "<" && p[i + 3] !== "=" && p[i + 3] !== "!") {
    // a named group: only `test` is used, so the name is dropped (ECMA-262 names may hold
    // characters RE2's cannot)
    const end = p.indexOf(">", i + 3)
    return end < 0 ? undefined : ["(", end + 1 - i]
  }
  return undefined
}

/**
 * The RE2 form of a pattern `RegExp` accepted with the `u` flag, or `undefined` when it uses what
 * RE2 lacks (backreferences, lookaround).
 *
 * @internal
 */
export const toRe2 = (p: string): string | undefined => {
  let out = ""
  let i = 0
  while (i < p.length) {
    const c = p[i] ?? ""
    const piece = c === "\\"
      ? escape(p, i, false)
      : c === "["
      ? characterClass(p, i)
      : c === "("
      ? groupOpen(p, i)
      : c === "."
      ? [DOT, 1] as const
      : [c, 1] as const
    if (piece === undefined) return undefined
    out += piece[0]
    i += piece[1]
  }
  return out
}

/**
 * Compiles a JSON Schema pattern: `undefined` when it is not a valid ECMA-262 regular expression
 * (Unicode mode); otherwise its RE2 translation when RE2 can run it, else the `RegExp` itself.
 *
 * @internal
 */
export const compile = (pattern: string): Compiled | undefined => {
  let regex: RegExp
  try {
    regex = new RegExp(pattern, "u")
  } catch {
    return undefined
  }
  const translated = toRe2(pattern)
  if (translated !== undefined) {
    try {
      const re2 = RE2JS.compile(translated)
      return { linear: true, test: (input) => re2.test(input) }
    } catch {
      // a construct RE2 rejects (a repetition count over 1,000, an unknown property name)
    }
  }
  return { linear: false, test: (input) => regex.test(input) }
}
