/**
 * Built-in validator for the JSON Schema subset that MCP tool schemas use (`inputSchema`,
 * `outputSchema`, elicitation `requestedSchema`).
 *
 * Supported keywords: `type` (a name or an array of names), `enum`, `const`, `required`,
 * `properties`, `patternProperties`, `additionalProperties`, `items`, `minLength`, `maxLength`,
 * `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `minItems`, `maxItems` and
 * `pattern`, plus the boolean schemas `true` and `false`. Every other keyword (`$ref`, `anyOf`,
 * `oneOf`, `format`, …) is ignored, so a schema that relies on them validates more loosely here.
 * Use `presa-mcp/JsonSchemaFull` when full JSON Schema 2020-12 is needed.
 *
 * The module is pure (no I/O) and a validator never throws.
 *
 * `pattern` and `patternProperties` are ECMA-262 regular expressions in Unicode mode (the `u`
 * flag), matched unanchored, as JSON Schema specifies. They run on a linear-time engine (`re2js`,
 * a pure-JavaScript port of RE2): matching time grows with the input's length only, so a string
 * of any length is checked (a 100,000-character argument that matches passes) and no pattern,
 * `^(a+)+$` included, can stall the event loop by backtracking. The pattern is translated so that
 * ECMA-262's meaning holds where RE2's differs (`\s` is Unicode whitespace, `.` stops at the four
 * line terminators, `\uXXXX` / `\u{…}` / `\cX` escapes, `[]` / `[^]`).
 *
 * A pattern RE2 cannot run — backreferences (`\1`, `\k<name>`), lookahead or lookbehind, a
 * counted repetition over 1,000, a Unicode property RE2 does not know — falls back to
 * JavaScript's backtracking `RegExp`, on strings (or property names) of at most 4,096 UTF-16 code
 * units; a longer one fails with `is too long to check against pattern "…" (over 4096 characters;
 * the pattern needs backtracking: backreferences or lookaround)`. That bound keeps polynomial
 * backtracking short; a fallback pattern that is exponential on short inputs is the author's to
 * avoid. Each pattern is compiled once per schema object (the schema is treated as immutable
 * once validated).
 *
 * Guide: [Servers, tools](https://github.com/presa-mcp/presa-mcp/blob/main/docs/servers.md#tools).
 *
 * @since 0.1.0
 */
import * as Pattern from "./internal/pattern.js"
import { quote } from "./internal/quote.js"

/**
 * One validation problem.
 *
 * `path` is an RFC 6901 JSON Pointer into the *instance* (`""` is the root, `"/numbers/0"` the
 * first element of `numbers`); `message` is a short lowercase sentence fragment such as
 * `expected number, got string`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Issue {
  readonly path: string
  readonly message: string
}

/**
 * A validator: checks `value` against `schema` and returns every problem found, or `[]` when the
 * value is valid.
 *
 * A validator never throws, whatever `schema` and `value` are. A malformed schema is reported as
 * an issue whose message starts with `invalid schema:`.
 *
 * @since 0.1.0
 * @category models
 */
export type Validator = (schema: unknown, value: unknown) => ReadonlyArray<Issue>

/** @internal */
const MAX_DEPTH = 64

/** @internal */
const MAX_ISSUES = 100

/** Longest string (UTF-16 code units) a fallback (backtracking) pattern runs on. @internal */
const MAX_FALLBACK_INPUT = 4096

/** @internal */
type JsonObject = { readonly [key: string]: unknown }

/** @internal */
interface Context {
  readonly issues: Array<Issue>
  /** Compiled patterns of the schema being validated; `undefined` marks an invalid pattern. */
  readonly patterns: Map<string, Pattern.Compiled | undefined>
}

/** @internal */
const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

/** @internal */
const isString = (u: unknown): u is string => typeof u === "string"

/** @internal */
const isNumber = (u: unknown): u is number => typeof u === "number"

/** Reads an own property only, so `"constructor"` or `"__proto__"` never resolve through the prototype. */
const own = (o: JsonObject, key: string): unknown => Object.hasOwn(o, key) ? o[key] : undefined

/** @internal */
const escapePointer = (key: string): string => key.replace(/~/g, "~0").replace(/\//g, "~1")

/** @internal */
const child = (path: string, key: string | number): string =>
  `${path}/${typeof key === "number" ? String(key) : escapePointer(key)}`

/** The JSON type name of a value; numbers are always `number`. Non-JSON values get their `typeof`. */
const typeName = (u: unknown): string => {
  if (u === null) return "null"
  if (Array.isArray(u)) return "array"
  return typeof u
}

/** @internal */
const matchesType = (type: string, value: unknown): boolean => {
  switch (type) {
    case "null":
      return value === null
    case "boolean":
      return typeof value === "boolean"
    case "string":
      return typeof value === "string"
    case "number":
      // JSON cannot carry NaN or ±Infinity (RFC 8259, section 6): they are not JSON numbers.
      return typeof value === "number" && Number.isFinite(value)
    case "integer":
      return typeof value === "number" && Number.isInteger(value)
    case "array":
      return Array.isArray(value)
    case "object":
      return isObject(value)
    default:
      return false
  }
}

/** JSON.stringify that never throws and never returns `undefined`. */
const show = (u: unknown): string => {
  try {
    const json: unknown = JSON.stringify(u)
    return typeof json === "string" ? json : String(u)
  } catch {
    return String(u)
  }
}

/** Structural equality over JSON values; object key order is irrelevant. */
const deepEqual = (a: unknown, b: unknown, depth: number): boolean => {
  if (a === b) return true
  if (depth > MAX_DEPTH) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) {
      if (!deepEqual(a[i], b[i], depth + 1)) return false
    }
    return true
  }
  if (isObject(a)) {
    if (!isObject(b)) return false
    const keys = Object.keys(a)
    if (keys.length !== Object.keys(b).length) return false
    for (const key of keys) {
      if (!Object.hasOwn(b, key) || !deepEqual(a[key], b[key], depth + 1)) return false
    }
    return true
  }
  return false
}

/** Length in Unicode code points, as JSON Schema counts string length. */
const codePointLength = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}

/** @internal */
const isFull = (ctx: Context): boolean => ctx.issues.length >= MAX_ISSUES

/** @internal */
const report = (ctx: Context, path: string, message: string): void => {
  if (!isFull(ctx)) ctx.issues.push({ path, message })
}

/** Compiled patterns per root schema object, so that each pattern of a tool's schema compiles once. */
const compiledPatterns = new WeakMap<object, Map<string, Pattern.Compiled | undefined>>()

/** The pattern cache of a root schema (a fresh one for a boolean or non-object schema). */
const patternsOf = (schema: unknown): Map<string, Pattern.Compiled | undefined> => {
  if (typeof schema !== "object" || schema === null) return new Map()
  const hit = compiledPatterns.get(schema)
  if (hit !== undefined) return hit
  const fresh = new Map<string, Pattern.Compiled | undefined>()
  compiledPatterns.set(schema, fresh)
  return fresh
}

/** @internal */
const compilePattern = (ctx: Context, pattern: string): Pattern.Compiled | undefined => {
  if (ctx.patterns.has(pattern)) return ctx.patterns.get(pattern)
  const compiled = Pattern.compile(pattern)
  ctx.patterns.set(pattern, compiled)
  return compiled
}

/**
 * Matches `input` against `pattern`: `true` / `false`, or an issue's message when the pattern is
 * invalid or is a fallback pattern and `input` is over {@link MAX_FALLBACK_INPUT}.
 */
const matchPattern = (ctx: Context, pattern: string, input: string): boolean | string => {
  const compiled = compilePattern(ctx, pattern)
  if (compiled === undefined) return `invalid schema: pattern "${pattern}" is not a valid regular expression`
  if (!compiled.linear && input.length > MAX_FALLBACK_INPUT) {
    return `is too long to check against pattern "${pattern}" (over ${MAX_FALLBACK_INPUT} characters; ` +
      "the pattern needs backtracking: backreferences or lookaround)"
  }
  return compiled.test(input)
}

/** @internal */
const validateString = (ctx: Context, schema: JsonObject, value: string, path: string): void => {
  const minLength = own(schema, "minLength")
  const maxLength = own(schema, "maxLength")
  if (isNumber(minLength) || isNumber(maxLength)) {
    const length = codePointLength(value)
    if (isNumber(minLength) && length < minLength) {
      report(ctx, path, `must be at least ${minLength} characters long`)
    }
    if (isNumber(maxLength) && length > maxLength) {
      report(ctx, path, `must be at most ${maxLength} characters long`)
    }
  }
  const pattern = own(schema, "pattern")
  if (isString(pattern)) {
    const matched = matchPattern(ctx, pattern, value)
    if (typeof matched === "string") report(ctx, path, matched)
    else if (!matched) report(ctx, path, `must match pattern "${pattern}"`)
  }
}

/** @internal */
const validateNumber = (ctx: Context, schema: JsonObject, value: number, path: string): void => {
  const minimum = own(schema, "minimum")
  const maximum = own(schema, "maximum")
  if (isNumber(minimum) && isNumber(maximum) && (value < minimum || value > maximum)) {
    // Both bounds read as one range, with the value given.
    const what = own(schema, "type") === "integer" ? "an integer" : "a number"
    report(ctx, path, `expected ${what} between ${minimum} and ${maximum}, got ${value}`)
  } else {
    if (isNumber(minimum) && value < minimum) report(ctx, path, `must be >= ${minimum}`)
    if (isNumber(maximum) && value > maximum) report(ctx, path, `must be <= ${maximum}`)
  }
  const exclusiveMinimum = own(schema, "exclusiveMinimum")
  if (isNumber(exclusiveMinimum) && value <= exclusiveMinimum) report(ctx, path, `must be > ${exclusiveMinimum}`)
  const exclusiveMaximum = own(schema, "exclusiveMaximum")
  if (isNumber(exclusiveMaximum) && value >= exclusiveMaximum) report(ctx, path, `must be < ${exclusiveMaximum}`)
}

/** @internal */
const validateArray = (
  ctx: Context,
  schema: JsonObject,
  value: ReadonlyArray<unknown>,
  path: string,
  depth: number
): void => {
  const minItems = own(schema, "minItems")
  if (isNumber(minItems) && value.length < minItems) report(ctx, path, `must have at least ${minItems} items`)
  const maxItems = own(schema, "maxItems")
  if (isNumber(maxItems) && value.length > maxItems) report(ctx, path, `must have at most ${maxItems} items`)
  const items = own(schema, "items")
  if (items === undefined) return
  // An array-valued `items` is the draft-07 tuple form: one schema per position.
  const length = Array.isArray(items) ? Math.min(items.length, value.length) : value.length
  for (let i = 0; i < length && !isFull(ctx); i++) {
    const itemSchema: unknown = Array.isArray(items) ? items[i] : items
    validateNode(ctx, itemSchema, value[i], child(path, i), depth + 1)
  }
}

/** @internal */
const validateObject = (ctx: Context, schema: JsonObject, value: JsonObject, path: string, depth: number): void => {
  const required = own(schema, "required")
  if (Array.isArray(required)) {
    for (const key of required) {
      if (isString(key) && !Object.hasOwn(value, key)) report(ctx, child(path, key), "is required")
    }
  }
  const propertiesValue = own(schema, "properties")
  const properties = isObject(propertiesValue) ? propertiesValue : undefined
  const patternPropertiesValue = own(schema, "patternProperties")
  const patternProperties = isObject(patternPropertiesValue) ? Object.keys(patternPropertiesValue) : []
  const additional = own(schema, "additionalProperties")
  if (properties === undefined && patternProperties.length === 0 && additional === undefined) return
  for (const key of Object.keys(value)) {
    if (isFull(ctx)) return
    const keyPath = child(path, key)
    let declared = false
    if (properties !== undefined && Object.hasOwn(properties, key)) {
      declared = true
      validateNode(ctx, properties[key], value[key], keyPath, depth + 1)
    }
    if (isObject(patternPropertiesValue)) {
      for (const pattern of patternProperties) {
        const matched = matchPattern(ctx, pattern, key)
        if (typeof matched === "string") {
          report(ctx, keyPath, matched)
        } else if (matched) {
          declared = true
          validateNode(ctx, patternPropertiesValue[pattern], value[key], keyPath, depth + 1)
        }
      }
    }
    if (!declared && additional !== undefined) {
      validateNode(ctx, additional, value[key], keyPath, depth + 1)
    }
  }
}

/** @internal */
const validateNode = (ctx: Context, schema: unknown, value: unknown, path: string, depth: number): void => {
  if (isFull(ctx) || schema === true) return
  if (schema === false) {
    report(ctx, path, "is not allowed")
    return
  }
  if (!isObject(schema)) {
    report(ctx, path, `invalid schema: expected an object or boolean, got ${typeName(schema)}`)
    return
  }
  if (depth > MAX_DEPTH) {
    report(ctx, path, `exceeds the maximum nesting depth of ${MAX_DEPTH}`)
    return
  }

  const type = own(schema, "type")
  const types = isString(type) ? [type] : Array.isArray(type) ? type.filter(isString) : []
  if (types.length > 0 && !types.some((t) => matchesType(t, value))) {
    report(ctx, path, `expected ${types.join(" or ")}, got ${typeName(value)}`)
    return
  }

  const enumValues = own(schema, "enum")
  if (Array.isArray(enumValues) && !enumValues.some((e) => deepEqual(e, value, 0))) {
    report(ctx, path, `must be one of ${enumValues.map(show).join(", ")}`)
  }
  if (Object.hasOwn(schema, "const")) {
    const constValue = schema["const"]
    if (!deepEqual(constValue, value, 0)) report(ctx, path, `must be equal to ${show(constValue)}`)
  }

  if (typeof value === "string") validateString(ctx, schema, value, path)
  else if (typeof value === "number") validateNumber(ctx, schema, value, path)
  else if (Array.isArray(value)) validateArray(ctx, schema, value, path, depth)
  else if (isObject(value)) validateObject(ctx, schema, value, path, depth)
}

/**
 * Validates `value` against `schema` using the built-in keyword subset (see the module header).
 *
 * Returns `[]` when valid, otherwise the issues in document order, at most 100 of them. When
 * `type` fails for a node, no further issues are reported for that node. Messages:
 * `expected number, got string` (`expected string or null, got number` for type arrays),
 * `is required` and `is not allowed` (at the path of the missing / extra property),
 * `must be one of "a", "b"`, `must be equal to 42`, `must be at least 3 characters long`,
 * `must be >= 1`, `must be > 1`, `must have at least 2 items`, `must match pattern "^a+$"`.
 *
 * Never throws: a schema that is not an object or boolean, an invalid `pattern`, or nesting deeper
 * than 64 levels each become an issue (`invalid schema: …` / `exceeds the maximum nesting depth of 64`);
 * an exception raised by exotic input (a throwing getter, a Proxy) becomes the issue
 * `validation failed: <message>` at the root.
 *
 * @example
 * ```ts
 * import * as JsonSchema from "presa-mcp/JsonSchema"
 *
 * const schema = { type: "object", properties: { n: { type: "number" } }, required: ["n"] }
 * JsonSchema.validate(schema, { n: "one" }) // [{ path: "/n", message: "expected number, got string" }]
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const validate: Validator = (schema, value) => {
  const ctx: Context = { issues: [], patterns: patternsOf(schema) }
  try {
    validateNode(ctx, schema, value, "", 0)
  } catch (error) {
    report(ctx, "", `validation failed: ${error instanceof Error ? error.message : show(error)}`)
  }
  return ctx.issues
}

/**
 * Renders issues as one line: `"<prefix> at <path>: <message>"`, several issues joined with `"; "`
 * (`"Invalid arguments at /a: x; at /b: y"`). The root path `""` prints as `/`. With no issues the
 * result is `prefix` alone. Never throws.
 *
 * The text is bounded, since paths hold the instance's own keys (a peer's): at most 10 issues are
 * rendered (then `; and N more`), each path and message cut after 256 characters (then `…`).
 *
 * @since 0.1.0
 * @category encoding
 */
export const formatIssues = (prefix: string, issues: ReadonlyArray<Issue>): string => {
  if (issues.length === 0) return prefix
  const shown = issues.slice(0, MAX_FORMATTED).map((issue) =>
    `at ${issue.path === "" ? "/" : quote(issue.path)}: ${quote(issue.message)}`
  )
  const more = issues.length > MAX_FORMATTED ? `; and ${issues.length - MAX_FORMATTED} more` : ""
  return `${prefix} ${shown.join("; ")}${more}`
}

/** Issues {@link formatIssues} renders at most. @internal */
const MAX_FORMATTED = 10
