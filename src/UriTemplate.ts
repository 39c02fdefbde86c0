/**
 * RFC 6570 URI Templates, as used by MCP resource templates (`ResourceTemplate.uriTemplate`).
 *
 * - {@link parse} / {@link unsafeParse} read a template (RFC 6570 §2) into a {@link UriTemplate}.
 * - {@link expand} performs full level 1–4 expansion (RFC 6570 §3), exactly as the RFC specifies.
 * - {@link match} is the inverse a server needs for `resources/read`: it matches a concrete URI
 *   exactly against a template and returns the percent-decoded variable values.
 *
 * RFC 6570 does not define matching; the rules used here are documented on {@link match}. The
 * matcher is compiled at parse time into a small backtracking program with memoization (each
 * (instruction, position) state is visited at most once), so matching runs in
 * O(template size × URI length) whatever the input: no catastrophic backtracking.
 *
 * This module is pure: it returns plain values, `Either` and `Option`.
 *
 * Guide: [Servers, resources and templates](https://github.com/presa-mcp/presa-mcp/blob/main/docs/servers.md#resources-and-templates).
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import { dual } from "effect/Function"
import * as Option from "effect/Option"

// ---------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------

/**
 * An expression operator (RFC 6570 §2.2): `""` (simple string expansion, §3.2.2), `"+"`
 * (reserved, §3.2.3), `"#"` (fragment, §3.2.4), `"."` (label, §3.2.5), `"/"` (path segment,
 * §3.2.6), `";"` (path-style parameter, §3.2.7), `"?"` (form-style query, §3.2.8) and `"&"`
 * (query continuation, §3.2.9). The operators reserved for future extensions (`= , ! @ |`) are
 * rejected by {@link parse}.
 *
 * @since 0.1.0
 * @category models
 */
export type Operator = "" | "+" | "#" | "." | "/" | ";" | "?" | "&"

/**
 * One variable of an expression (RFC 6570 §2.3–2.4): its `name` as written in the template,
 * whether it carries the explode modifier `*` (§2.4.2), and its prefix modifier `:N`
 * (§2.4.1; `N` is a count of Unicode characters in 1–9999, `undefined` when absent).
 *
 * @since 0.1.0
 * @category models
 */
export interface VarSpec {
  readonly name: string
  readonly explode: boolean
  readonly prefix: number | undefined
}

/**
 * A literal run of template text (RFC 6570 §2.1), copied to the expansion (characters not
 * allowed in a URI are percent-encoded, §3.1).
 *
 * @since 0.1.0
 * @category models
 */
export interface Literal {
  readonly _tag: "Literal"
  readonly value: string
}

/**
 * A `{...}` expression (RFC 6570 §2.2): an operator and one or more variable specifications.
 *
 * @since 0.1.0
 * @category models
 */
export interface Expression {
  readonly _tag: "Expression"
  readonly operator: Operator
  readonly variables: ReadonlyArray<VarSpec>
}

/**
 * A parsed template component: a {@link Literal} or an {@link Expression}.
 *
 * @since 0.1.0
 * @category models
 */
export type Part = Literal | Expression

/**
 * A parsed RFC 6570 template.
 *
 * - `template`: the source text, unchanged (what goes on the wire as `uriTemplate`);
 * - `variables`: the distinct variable names, in order of first appearance;
 * - `parts`: the literals and expressions, in template order.
 *
 * Build one with {@link parse} or {@link unsafeParse}; the matcher used by {@link match} is
 * compiled there.
 *
 * @since 0.1.0
 * @category models
 */
export interface UriTemplate {
  readonly template: string
  readonly variables: ReadonlyArray<string>
  readonly parts: ReadonlyArray<Part>
}

/**
 * A value for {@link expand} (RFC 6570 §2.3, §2.4.2): a string (numbers and booleans are
 * converted with `String`), a list, or an associative array. `undefined`, an empty list and an
 * empty record are *undefined* in the RFC sense (§3.2.1): the variable is skipped. An empty
 * string is defined.
 *
 * @since 0.1.0
 * @category models
 */
export type ExpandValue =
  | string
  | number
  | boolean
  | ReadonlyArray<string>
  | Readonly<Record<string, string>>
  | undefined

// ---------------------------------------------------------------------------------------------
// errors
// ---------------------------------------------------------------------------------------------

/**
 * A template that is not valid RFC 6570 (§2): unbalanced braces, an empty expression, an empty
 * or invalid variable name (§2.3), a prefix outside 1–9999 or any other modifier than `:N` and
 * `*` (§2.4), or an operator reserved for future extensions (`= , ! @ |`, §2.2).
 *
 * `template` is the offending template; `message` says what is wrong and where (0-based index).
 *
 * @since 0.1.0
 * @category errors
 */
export class UriTemplateError extends Data.TaggedError("UriTemplateError")<{
  readonly template: string
  readonly message: string
}> {}

// ---------------------------------------------------------------------------------------------
// constructors
// ---------------------------------------------------------------------------------------------

/**
 * Parses an RFC 6570 template (levels 1–4) and compiles its matcher.
 *
 * Literal text is taken as-is apart from braces (characters RFC 6570 §2.1 excludes from
 * literals are accepted and percent-encoded on expansion).
 *
 * Fails with {@link UriTemplateError} on an unbalanced `{` or `}`, an empty expression `{}`, an
 * empty or invalid variable name (`{a b}`, `{a,}`), an invalid modifier (`{a:0}`, `{a:3*}`,
 * `{a^}`) or an unsupported operator (`{=x}`).
 *
 * @example
 * import * as Either from "effect/Either"
 * import * as UriTemplate from "presa-mcp/UriTemplate"
 *
 * const t = UriTemplate.parse("x://repo/{owner}/{name}")
 * // Either.right({ template: "x://repo/{owner}/{name}", variables: ["owner", "name"], parts: [...] })
 * UriTemplate.parse("x://repo/{owner") // Either.left(UriTemplateError)
 *
 * @since 0.1.0
 * @category constructors
 */
export const parse = (template: string): Either.Either<UriTemplate, UriTemplateError> => {
  const parts: Array<Part> = []
  let literal = ""
  let i = 0
  while (i < template.length) {
    const ch = template.charAt(i)
    if (ch === "}") {
      return Either.left(new UriTemplateError({ template, message: `unmatched '}' at index ${i}` }))
    }
    if (ch !== "{") {
      literal += ch
      i++
      continue
    }
    const close = template.indexOf("}", i + 1)
    const body = close < 0 ? "" : template.slice(i + 1, close)
    if (close < 0 || body.includes("{")) {
      return Either.left(new UriTemplateError({ template, message: `unclosed expression starting at index ${i}` }))
    }
    const expression = parseExpression(body)
    if (Either.isLeft(expression)) {
      return Either.left(new UriTemplateError({ template, message: `${expression.left} (at index ${i})` }))
    }
    if (literal !== "") {
      parts.push({ _tag: "Literal", value: literal })
      literal = ""
    }
    parts.push(expression.right)
    i = close + 1
  }
  if (literal !== "") {
    parts.push({ _tag: "Literal", value: literal })
  }
  const variables: Array<string> = []
  for (const part of parts) {
    if (part._tag === "Expression") {
      for (const v of part.variables) {
        if (!variables.includes(v.name)) variables.push(v.name)
      }
    }
  }
  const self: UriTemplate = { template, variables, parts }
  matchers.set(self, compile(parts))
  return Either.right(self)
}

/**
 * Like {@link parse}, but throws the {@link UriTemplateError}. Meant for definition time
 * (templates written in source code), where an invalid template is a programming error.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unsafeParse = (template: string): UriTemplate => Either.getOrThrowWith(parse(template), (e) => e)

// ---------------------------------------------------------------------------------------------
// combinators
// ---------------------------------------------------------------------------------------------

/**
 * Expands a template with the given variables, following RFC 6570 §3 (levels 1–4, the
 * algorithm of Appendix A) exactly: every operator, the prefix modifier `:N` (counted in
 * Unicode characters, applied before encoding; ignored for lists and records, to which the RFC
 * says it does not apply) and the explode modifier `*`.
 *
 * Values are percent-encoded as UTF-8: only unreserved characters pass for `""`, `.`, `/`, `;`,
 * `?`, `&`; reserved characters and existing `%XX` triplets also pass for `+` and `#` (§3.2.1).
 * Variables that are missing, `undefined`, `[]` or `{}` are skipped. Never fails.
 *
 * @example
 * import * as UriTemplate from "presa-mcp/UriTemplate"
 *
 * const t = UriTemplate.unsafeParse("x://search{?q,lang}")
 * UriTemplate.expand(t, { q: "Hello World!" }) // "x://search?q=Hello%20World%21"
 * UriTemplate.expand({ q: "a", lang: "en" })(t) // data-last: "x://search?q=a&lang=en"
 *
 * @since 0.1.0
 * @category combinators
 */
export const expand: {
  (vars: Readonly<Record<string, ExpandValue>>): (self: UriTemplate) => string
  (self: UriTemplate, vars: Readonly<Record<string, ExpandValue>>): string
} = dual(2, (self: UriTemplate, vars: Readonly<Record<string, ExpandValue>>): string => {
  let out = ""
  for (const part of self.parts) {
    out += part._tag === "Literal" ? encodeLiteral(part.value) : expandExpression(part, vars)
  }
  return out
})

/**
 * Matches a concrete URI exactly against the template and returns the variable values, or
 * `Option.none()` when it does not match. RFC 6570 does not define matching (§1.4); the rules:
 *
 * - The whole URI must match; literal parts compare exactly (or in their RFC 6570 §3.1
 *   percent-encoded form, so a template with non-ASCII literals matches its own expansions).
 * - `{var}`: one or more characters other than `/`, `?`, `#` (and `,` when the expression has
 *   several variables). So `x://content/{path}` does not match `x://content/a/b`.
 * - `{+var}`, `{#var}`: one or more of any character, `/` included (`,` excluded when the
 *   expression has several variables); `{#...}` needs the leading `#` and is optional as a whole.
 * - `{.var}`, `{/var}`: an optional `.` / `/` followed by one or more characters other than
 *   `/ ? #` (and `.` for labels).
 * - `{;a,b}`, `{?a,b}`, `{&a}`: optional `name=value` pairs (`name` alone and `name=` give `""`),
 *   in template order; any of them may be missing. Values exclude `#` and the pair separator.
 * - Several variables in one expression are matched left to right with the operator's
 *   separator; variables not present in the URI are omitted from the result.
 * - Where a split is ambiguous, earlier variables take the shortest text that lets the rest of
 *   the template match (`{name}{.ext}` on `a.tar.gz` gives `a.tar` and `gz`).
 * - Prefix modifiers are not checked (`{var:3}` matches like `{var}`). An exploded variable
 *   captures the whole run of members as one string (`{/path*}` on `/a/b` gives `a/b`).
 *
 * Values are percent-decoded with `decodeURIComponent`, for every operator, reserved ones
 * included (`a%2Fb` gives `a/b` in `{var}` and in `{+var}`). Exception: exploded `;`, `?`, `&`
 * variables return the raw `k=v` run undecoded, so it stays parseable (e.g. with
 * `URLSearchParams`). A malformed escape (`%zz`, invalid UTF-8) means no match; this function
 * never throws. If a variable occurs twice, its first occurrence wins.
 *
 * @example
 * import * as UriTemplate from "presa-mcp/UriTemplate"
 *
 * const t = UriTemplate.unsafeParse("x://repo/{owner}/{name}/blob/{+path}")
 * UriTemplate.match(t, "x://repo/acme/widgets/blob/src/a%20b/c.ts")
 * // Option.some({ owner: "acme", name: "widgets", path: "src/a b/c.ts" })
 *
 * @since 0.1.0
 * @category combinators
 */
export const match = (self: UriTemplate, uri: string): Option.Option<Readonly<Record<string, string>>> => {
  let matcher = matchers.get(self)
  if (matcher === undefined) {
    matcher = compile(self.parts)
    matchers.set(self, matcher)
  }
  if (!matcher.prefixes.some((p) => uri.startsWith(p)) || !matcher.suffixes.some((s) => uri.endsWith(s))) {
    return Option.none()
  }
  const caps = run(matcher.program, uri, matcher.slots.length)
  if (caps === undefined) return Option.none()
  const entries: Array<[string, string]> = []
  const seen = new Set<string>()
  for (let slot = 0; slot < matcher.slots.length; slot++) {
    const info = matcher.slots[slot]
    const start = caps[2 * slot] ?? -1
    const end = caps[2 * slot + 1] ?? -1
    if (info === undefined || start < 0 || end < 0 || seen.has(info.name)) continue
    const raw = uri.slice(start, end)
    const value = info.decode ? decode(raw) : Option.some(raw)
    if (Option.isNone(value)) return Option.none()
    seen.add(info.name)
    entries.push([info.name, value.value])
  }
  return Option.some(Object.fromEntries(entries))
}

// ---------------------------------------------------------------------------------------------
// internal: parsing
// ---------------------------------------------------------------------------------------------

const OPERATORS = "+#./;?&"
const RESERVED_OPERATORS = "=,!@|"
const VARNAME = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(?:\.(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)*$/
const MAX_LENGTH = /^[1-9][0-9]{0,3}$/

const isOperator = (c: string): c is Exclude<Operator, ""> => c !== "" && OPERATORS.includes(c)

/** Parses the text between `{` and `}`; the left is a message. @internal */
const parseExpression = (body: string): Either.Either<Expression, string> => {
  if (body === "") return Either.left("empty expression")
  const first = body.charAt(0)
  if (RESERVED_OPERATORS.includes(first)) {
    return Either.left(`unsupported operator '${first}'`)
  }
  const operator: Operator = isOperator(first) ? first : ""
  const list = operator === "" ? body : body.slice(1)
  const variables: Array<VarSpec> = []
  for (const spec of list.split(",")) {
    const parsed = parseVarSpec(spec)
    if (Either.isLeft(parsed)) return Either.left(parsed.left)
    variables.push(parsed.right)
  }
  return Either.right({ _tag: "Expression", operator, variables })
}

const parseVarSpec = (spec: string): Either.Either<VarSpec, string> => {
  let name = spec
  let explode = false
  let prefix: number | undefined = undefined
  const colon = spec.indexOf(":")
  if (colon >= 0) {
    name = spec.slice(0, colon)
    const length = spec.slice(colon + 1)
    if (!MAX_LENGTH.test(length)) {
      return Either.left(`invalid prefix modifier ':${length}' (expected 1-9999)`)
    }
    prefix = Number(length)
  } else if (spec.endsWith("*")) {
    name = spec.slice(0, -1)
    explode = true
  }
  if (name === "") return Either.left("empty variable name")
  if (!VARNAME.test(name)) return Either.left(`invalid variable name '${name}'`)
  return Either.right({ name, explode, prefix })
}

// ---------------------------------------------------------------------------------------------
// internal: expansion (RFC 6570 §3.2.1 table and Appendix A)
// ---------------------------------------------------------------------------------------------

interface OperatorSpec {
  readonly first: string
  readonly sep: string
  readonly named: boolean
  readonly ifemp: string
  readonly allowReserved: boolean
}

const OPERATOR_SPECS: { readonly [K in Operator]: OperatorSpec } = {
  "": { first: "", sep: ",", named: false, ifemp: "", allowReserved: false },
  "+": { first: "", sep: ",", named: false, ifemp: "", allowReserved: true },
  "#": { first: "#", sep: ",", named: false, ifemp: "", allowReserved: true },
  ".": { first: ".", sep: ".", named: false, ifemp: "", allowReserved: false },
  "/": { first: "/", sep: "/", named: false, ifemp: "", allowReserved: false },
  ";": { first: ";", sep: ";", named: true, ifemp: "", allowReserved: false },
  "?": { first: "?", sep: "&", named: true, ifemp: "=", allowReserved: false },
  "&": { first: "&", sep: "&", named: true, ifemp: "=", allowReserved: false }
}

const RESERVED = ":/?#[]@!$&'()*+,;="

const isUnreservedCode = (c: number): boolean =>
  (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e ||
  c === 0x5f || c === 0x7e

const isHexCode = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)

const textEncoder = new TextEncoder()

const pctEncodeUtf8 = (s: string): string => {
  let out = ""
  for (const byte of textEncoder.encode(s)) {
    out += "%" + byte.toString(16).toUpperCase().padStart(2, "0")
  }
  return out
}

/**
 * Percent-encodes as RFC 6570 §3.2.1 requires: unreserved characters pass; with
 * `allowReserved`, reserved characters and well-formed `%XX` triplets pass too. Everything
 * else is encoded as UTF-8 (a lone surrogate becomes U+FFFD). Never throws.
 * @internal
 */
const encode = (value: string, allowReserved: boolean): string => {
  let out = ""
  let i = 0
  while (i < value.length) {
    const code = value.charCodeAt(i)
    const ch = value.charAt(i)
    if (isUnreservedCode(code) || (allowReserved && RESERVED.includes(ch))) {
      out += ch
      i++
    } else if (
      allowReserved && code === 0x25 && isHexCode(value.charCodeAt(i + 1)) && isHexCode(value.charCodeAt(i + 2))
    ) {
      out += value.slice(i, i + 3)
      i += 3
    } else {
      const point = value.codePointAt(i) ?? code
      out += pctEncodeUtf8(String.fromCodePoint(point))
      i += point > 0xffff ? 2 : 1
    }
  }
  return out
}

/** Literals (§3.1): URI characters are copied, others percent-encoded like `+` values. */
const encodeLiteral = (literal: string): string => encode(literal, true)

const isList = (value: ExpandValue): value is ReadonlyArray<string> => Array.isArray(value)

const lookup = (vars: Readonly<Record<string, ExpandValue>>, name: string): ExpandValue =>
  Object.hasOwn(vars, name) ? vars[name] : undefined

const expandExpression = (expression: Expression, vars: Readonly<Record<string, ExpandValue>>): string => {
  const spec = OPERATOR_SPECS[expression.operator]
  const pieces: Array<string> = []
  for (const v of expression.variables) {
    const piece = expandVariable(spec, v, lookup(vars, v.name))
    if (piece !== undefined) pieces.push(piece)
  }
  return pieces.length === 0 ? "" : spec.first + pieces.join(spec.sep)
}

/** One variable's expansion, or `undefined` when the value is undefined (§2.3). */
const expandVariable = (spec: OperatorSpec, v: VarSpec, value: ExpandValue): string | undefined => {
  const enc = (s: string): string => encode(s, spec.allowReserved)
  const named = (name: string, s: string): string => s === "" ? name + spec.ifemp : `${name}=${s}`
  if (value === undefined) return undefined
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
    const full = String(value)
    const s = v.prefix === undefined ? full : Array.from(full).slice(0, v.prefix).join("")
    return spec.named ? named(v.name, enc(s)) : enc(s)
  }
  if (isList(value)) {
    if (value.length === 0) return undefined
    if (!v.explode) {
      const joined = value.map(enc).join(",")
      return spec.named ? named(v.name, joined) : joined
    }
    return value.map((item) => spec.named ? named(v.name, enc(item)) : enc(item)).join(spec.sep)
  }
  const entries = Object.entries(value)
  if (entries.length === 0) return undefined
  if (!v.explode) {
    const joined = entries.map(([k, x]) => `${enc(k)},${enc(x)}`).join(",")
    return spec.named ? named(v.name, joined) : joined
  }
  return entries.map(([k, x]) => spec.named ? named(enc(k), enc(x)) : `${enc(k)}=${enc(x)}`).join(spec.sep)
}

// ---------------------------------------------------------------------------------------------
// internal: matching
//
// Each template compiles to a pattern tree, then to a program for a backtracking matcher that
// memoizes visited (instruction, position) states (the BitState technique of RE2). Captures
// never influence success, so a state that failed once fails again: the search is bounded by
// program length × (URI length + 1) steps, and the first success found is the one preferred by
// the pattern's priorities (lazy variables, greedy optional parts).
// ---------------------------------------------------------------------------------------------

type Pattern =
  | { readonly _tag: "Lit"; readonly text: string }
  | { readonly _tag: "Chars"; readonly excluded: string; readonly min: 0 | 1; readonly lazy: boolean }
  | { readonly _tag: "Seq"; readonly items: ReadonlyArray<Pattern> }
  | { readonly _tag: "Alt"; readonly items: ReadonlyArray<Pattern> }
  | { readonly _tag: "Opt"; readonly item: Pattern }
  | { readonly _tag: "Star"; readonly item: Pattern }
  | { readonly _tag: "Capture"; readonly slot: number; readonly item: Pattern }

type Instruction =
  | { readonly op: "lit"; readonly text: string }
  | { readonly op: "char"; readonly excluded: string }
  | { op: "split"; x: number; y: number }
  | { op: "jmp"; to: number }
  | { readonly op: "save"; readonly slot: number }
  | { readonly op: "match" }

interface SlotInfo {
  readonly name: string
  readonly decode: boolean
}

interface Matcher {
  readonly program: ReadonlyArray<Instruction>
  readonly slots: ReadonlyArray<SlotInfo>
  /** The URI must start with one of these (cheap pre-check before running the program). */
  readonly prefixes: ReadonlyArray<string>
  /** The URI must end with one of these. */
  readonly suffixes: ReadonlyArray<string>
}

/** Matchers compiled by `parse`, keyed by the template value. @internal */
const matchers = new WeakMap<UriTemplate, Matcher>()

const Lit = (text: string): Pattern => ({ _tag: "Lit", text })
const Seq = (...items: ReadonlyArray<Pattern>): Pattern => ({ _tag: "Seq", items })
const Opt = (item: Pattern): Pattern => ({ _tag: "Opt", item })
const Star = (item: Pattern): Pattern => ({ _tag: "Star", item })
const Plus = (excluded: string): Pattern => ({ _tag: "Chars", excluded, min: 1, lazy: true })
const Any = (excluded: string): Pattern => ({ _tag: "Chars", excluded, min: 0, lazy: false })

/** The alternatives a literal may appear as: as written, or RFC 6570 §3.1-encoded. */
const literalForms = (literal: string): ReadonlyArray<string> => {
  const encoded = encodeLiteral(literal)
  return encoded === literal ? [literal] : [literal, encoded]
}

/** Characters a single value may not contain, per operator (see `match`). */
const excludedChars = (operator: Operator, several: boolean): string => {
  switch (operator) {
    case "":
      return several ? "/?#," : "/?#"
    case "+":
    case "#":
      return several ? "," : ""
    case ".":
      return "/?#."
    case "/":
      return "/?#"
    case ";":
      return "/?#;"
    case "?":
    case "&":
      return "#&"
  }
}

const compile = (parts: ReadonlyArray<Part>): Matcher => {
  const slots: Array<SlotInfo> = []
  const capture = (name: string, decode: boolean, item: Pattern): Pattern => {
    slots.push({ name, decode })
    return { _tag: "Capture", slot: slots.length - 1, item }
  }
  const expressionPattern = (expression: Expression): Pattern => {
    const { operator, variables } = expression
    const spec = OPERATOR_SPECS[operator]
    const excluded = excludedChars(operator, variables.length > 1)
    const members = (): Pattern => Seq(Plus(excluded), Star(Seq(Lit(spec.sep), Plus(excluded))))
    if (!spec.named) {
      const value = (v: VarSpec): Pattern => capture(v.name, true, v.explode ? members() : Plus(excluded))
      const [head, ...tail] = variables
      if (head === undefined) return Seq()
      const body = Seq(value(head), ...tail.map((v) => Opt(Seq(Lit(spec.sep), value(v)))))
      return operator === "" || operator === "+" ? body : Opt(Seq(Lit(spec.first), body))
    }
    const pair = (v: VarSpec): Pattern =>
      v.explode
        ? capture(v.name, false, members())
        : Seq(Lit(v.name), {
          _tag: "Alt",
          items: [Seq(Lit("="), capture(v.name, true, Any(excluded))), capture(v.name, true, Seq())]
        })
    const alternatives = variables.map((v, i) =>
      Seq(pair(v), ...variables.slice(i + 1).map((w) => Opt(Seq(Lit(spec.sep), pair(w)))))
    )
    return Opt(Seq(Lit(spec.first), { _tag: "Alt", items: alternatives }))
  }
  const root = Seq(
    ...parts.map((part): Pattern =>
      part._tag === "Literal"
        ? { _tag: "Alt", items: literalForms(part.value).map(Lit) }
        : expressionPattern(part)
    )
  )
  const first = parts[0]
  const last = parts[parts.length - 1]
  return {
    program: assemble(root),
    slots,
    prefixes: first?._tag === "Literal" ? literalForms(first.value) : [""],
    suffixes: last?._tag === "Literal" ? literalForms(last.value) : [""]
  }
}

/** Compiles a pattern tree to instructions (Thompson construction, priorities preserved). */
const assemble = (root: Pattern): ReadonlyArray<Instruction> => {
  const program: Array<Instruction> = []
  const split = (): { op: "split"; x: number; y: number } => {
    const inst: { op: "split"; x: number; y: number } = { op: "split", x: -1, y: -1 }
    program.push(inst)
    return inst
  }
  const emit = (p: Pattern): void => {
    switch (p._tag) {
      case "Lit": {
        if (p.text !== "") program.push({ op: "lit", text: p.text })
        return
      }
      case "Chars": {
        if (p.min === 1) {
          const loop = program.length
          program.push({ op: "char", excluded: p.excluded })
          const s = split()
          s.x = p.lazy ? program.length : loop
          s.y = p.lazy ? loop : program.length
        } else {
          const s = split()
          const loop = program.length - 1
          program.push({ op: "char", excluded: p.excluded })
          program.push({ op: "jmp", to: loop })
          s.x = p.lazy ? program.length : loop + 1
          s.y = p.lazy ? loop + 1 : program.length
        }
        return
      }
      case "Seq": {
        for (const item of p.items) emit(item)
        return
      }
      case "Alt": {
        const jumps: Array<{ op: "jmp"; to: number }> = []
        p.items.forEach((item, i) => {
          if (i < p.items.length - 1) {
            const s = split()
            s.x = program.length
            emit(item)
            const j: { op: "jmp"; to: number } = { op: "jmp", to: -1 }
            program.push(j)
            jumps.push(j)
            s.y = program.length
          } else {
            emit(item)
          }
        })
        for (const j of jumps) j.to = program.length
        return
      }
      case "Opt": {
        const s = split()
        s.x = program.length
        emit(p.item)
        s.y = program.length
        return
      }
      case "Star": {
        const s = split()
        const loop = program.length - 1
        s.x = program.length
        emit(p.item)
        program.push({ op: "jmp", to: loop })
        s.y = program.length
        return
      }
      case "Capture": {
        program.push({ op: "save", slot: 2 * p.slot })
        emit(p.item)
        program.push({ op: "save", slot: 2 * p.slot + 1 })
        return
      }
    }
  }
  emit(root)
  program.push({ op: "match" })
  return program
}

/**
 * Runs a program against the whole input; returns the capture positions (`-1` = unset) of the
 * highest-priority full match, or `undefined`. Work and memory are bounded by
 * `program.length × (input.length + 1)`.
 * @internal
 */
const run = (program: ReadonlyArray<Instruction>, input: string, slotCount: number): Array<number> | undefined => {
  const width = input.length + 1
  const visited = new Uint32Array(Math.ceil((program.length * width) / 32))
  const caps: Array<number> = new Array<number>(2 * slotCount).fill(-1)
  // Backtrack stack of triples: [0, pc, pos] = try a state; [1, slot, value] = restore a capture.
  const stack: Array<number> = [0, 0, 0]
  while (stack.length > 0) {
    const b = stack.pop() ?? 0
    const a = stack.pop() ?? 0
    const kind = stack.pop() ?? 0
    if (kind === 1) {
      caps[a] = b
      continue
    }
    let pc = a
    let pos = b
    for (;;) {
      const key = pc * width + pos
      const word = key >>> 5
      const bit = 1 << (key & 31)
      if (((visited[word] ?? 0) & bit) !== 0) break
      visited[word] = (visited[word] ?? 0) | bit
      const inst = program[pc]
      if (inst === undefined) break
      if (inst.op === "lit") {
        if (!input.startsWith(inst.text, pos)) break
        pc++
        pos += inst.text.length
      } else if (inst.op === "char") {
        if (pos >= input.length || inst.excluded.includes(input.charAt(pos))) break
        pc++
        pos++
      } else if (inst.op === "split") {
        stack.push(0, inst.y, pos)
        pc = inst.x
      } else if (inst.op === "jmp") {
        pc = inst.to
      } else if (inst.op === "save") {
        stack.push(1, inst.slot, caps[inst.slot] ?? -1)
        caps[inst.slot] = pos
        pc++
      } else {
        if (pos === input.length) return caps
        break
      }
    }
  }
  return undefined
}

const decode: (raw: string) => Option.Option<string> = Option.liftThrowable(decodeURIComponent)
