/**
 * Full JSON Schema validation (2020-12 by default, also 2019-09, draft-07 and draft-04) built on
 * `@cfworker/json-schema`, behind the same `Validator` signature as the built-in subset validator
 * in `JsonSchema`. Import it from `presa-mcp/JsonSchemaFull` when tool schemas use `$ref`,
 * `$defs`, `anyOf`, `oneOf`, `allOf`, `if`/`then`/`else`, `format` and the other keywords the
 * built-in validator ignores.
 *
 * `pattern` and `patternProperties` run on JavaScript's backtracking `RegExp` here (cfworker
 * compiles them itself and offers no hook for another engine), without a length bound: a
 * pattern that backtracks (`^(a+)+$`) can stall the event loop on a short crafted argument. The
 * built-in `JsonSchema.validate` matches them in linear time instead; with this validator, keep
 * tool patterns free of nested quantifiers over overlapping alternatives.
 *
 * Guide: [Servers, tools](https://github.com/presa-mcp/presa-mcp/blob/main/docs/servers.md#tools).
 *
 * @since 0.1.0
 */
import { Validator as CfValidator } from "@cfworker/json-schema"
import type { OutputUnit, Schema as CfSchema, SchemaDraft } from "@cfworker/json-schema"
import type { Issue, Validator } from "./JsonSchema.js"

/** @internal */
const MAX_ISSUES = 100

/** @internal */
type Compiled =
  | { readonly _tag: "Compiled"; readonly validator: CfValidator }
  | { readonly _tag: "Invalid"; readonly message: string }

/** Compiled validators per schema object. Schemas are treated as immutable once validated. */
const cache = new WeakMap<object, Compiled>()

/** @internal */
const isSchemaObject = (u: unknown): u is CfSchema => typeof u === "object" && u !== null && !Array.isArray(u)

/** @internal */
const typeName = (u: unknown): string => u === null ? "null" : Array.isArray(u) ? "array" : typeof u

/** First line of an exception's message (cfworker appends a list of known schema URIs to some). */
const errorMessage = (error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error)
  return message.split("\n", 1)[0] ?? message
}

/** Picks the cfworker draft from `$schema`; anything unrecognised means 2020-12. */
const draftOf = (schema: CfSchema | boolean): SchemaDraft => {
  if (typeof schema === "boolean") return "2020-12"
  const uri: unknown = schema["$schema"]
  if (typeof uri !== "string") return "2020-12"
  if (uri.includes("draft-04")) return "4"
  if (uri.includes("draft-06") || uri.includes("draft-07")) return "7"
  if (uri.includes("2019-09")) return "2019-09"
  return "2020-12"
}

/**
 * Builds a cfworker validator over a deep copy of `schema`: cfworker annotates the schema objects
 * it walks (non-enumerable `__absolute_uri__` properties), which must not touch the caller's
 * value and would fail on frozen schemas.
 */
const compile = (schema: CfSchema | boolean): Compiled => {
  try {
    const copy = structuredClone(schema)
    return { _tag: "Compiled", validator: new CfValidator(copy, draftOf(schema), false) }
  } catch (error) {
    return { _tag: "Invalid", message: errorMessage(error) }
  }
}

/** @internal */
const compiled = (schema: CfSchema | boolean): Compiled => {
  if (typeof schema === "boolean") return compile(schema)
  const hit = cache.get(schema)
  if (hit !== undefined) return hit
  const fresh = compile(schema)
  cache.set(schema, fresh)
  return fresh
}

/** cfworker's `instanceLocation` (`#/a%20b/0`, URI-encoded pointer) to an RFC 6901 pointer (`/a b/0`). */
const toPointer = (instanceLocation: string): string => {
  const raw = instanceLocation.startsWith("#") ? instanceLocation.slice(1) : instanceLocation
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}

/**
 * Keywords whose error only says "a subschema failed" and is followed by that subschema's errors.
 * @internal
 */
const WRAPPERS: ReadonlySet<string> = new Set([
  "properties",
  "patternProperties",
  "additionalProperties",
  "unevaluatedProperties",
  "items",
  "prefixItems",
  "additionalItems",
  "unevaluatedItems",
  "$ref",
  "$recursiveRef",
  "$dynamicRef",
  "allOf",
  "if",
  "dependentSchemas"
])

/** @internal */
const isWrapper = (unit: OutputUnit): boolean =>
  WRAPPERS.has(unit.keyword)
  || (unit.keyword === "dependencies" && unit.error.endsWith("does not match dependant schema."))

/**
 * Keywords whose subschema errors are alternatives rather than requirements: for a failing
 * `anyOf`/`oneOf` each branch's errors describe one option; for `contains` each item's errors
 * say why that item did not match; for `propertyNames` the errors are about the key, not the
 * value. For these the keyword's own error is kept and its subschema errors are dropped.
 * @internal
 */
const ALTERNATIVES: ReadonlySet<string> = new Set(["anyOf", "oneOf", "contains", "propertyNames"])

/** Keywords followed in a keyword location by a property name (or `$defs` name), not a keyword. */
const NAMED_CHILDREN: ReadonlySet<string> = new Set([
  "properties",
  "patternProperties",
  "$defs",
  "definitions",
  "dependentSchemas",
  "dependencies"
])

/** @internal */
const isIndex = (segment: string | undefined): boolean => segment !== undefined && /^\d+$/.test(segment)

/** True when a keyword location lies strictly inside an alternative keyword's subschema. */
const insideAlternative = (keywordLocation: string): boolean => {
  const segments = keywordLocation.split("/").slice(1)
  let i = 0
  while (i < segments.length) {
    const segment = segments[i] ?? ""
    if (NAMED_CHILDREN.has(segment)) {
      i += 2
    } else if (segment === "anyOf" || segment === "oneOf") {
      if (i + 2 < segments.length) return true
      i += 2
    } else if (segment === "contains" || segment === "propertyNames") {
      if (i + 1 < segments.length) return true
      i += 1
    } else if ((segment === "allOf" || segment === "prefixItems" || segment === "items") && isIndex(segments[i + 1])) {
      i += 2
    } else {
      i += 1
    }
  }
  return false
}

/** @internal */
const isAlternativeRoot = (unit: OutputUnit): boolean =>
  ALTERNATIVES.has(unit.keyword) && unit.keywordLocation.endsWith(`/${unit.keyword}`)

/** Adds a pointer and all of its ancestors (`/a/b` → `/a/b`, `/a`, ``) to `into`. */
const addWithAncestors = (pointer: string, into: Set<string>): void => {
  let current = pointer
  for (;;) {
    into.add(current)
    const slash = current.lastIndexOf("/")
    if (slash < 0) return
    current = current.slice(0, slash)
  }
}

/**
 * Reduces cfworker's error list (wrappers followed by their subschema errors) to the specific
 * errors: subschema errors of alternatives are dropped, then wrappers are dropped when a more
 * specific error exists at the same or a deeper instance location.
 */
const toIssues = (units: ReadonlyArray<OutputUnit>): ReadonlyArray<Issue> => {
  const kept: Array<OutputUnit> = []
  let previousDropped = false
  let previousAlternativeRoot = false
  for (const unit of units) {
    // A `false` schema's error carries the instance location as its keyword location, so it is
    // placed by its neighbour: cfworker emits it right after its wrapper or sibling branch errors.
    const drop: boolean = unit.keyword === "false"
      ? previousDropped || previousAlternativeRoot
      : insideAlternative(unit.keywordLocation)
    previousDropped = drop
    previousAlternativeRoot = !drop && isAlternativeRoot(unit)
    if (!drop) kept.push(unit)
  }
  const specific = new Set<string>()
  for (const unit of kept) {
    if (!isWrapper(unit)) addWithAncestors(toPointer(unit.instanceLocation), specific)
  }
  const issues: Array<Issue> = []
  const seen = new Set<string>()
  for (const unit of kept) {
    const path = toPointer(unit.instanceLocation)
    if (isWrapper(unit) && specific.has(path)) continue
    const key = `${path}\u0000${unit.error}`
    if (seen.has(key)) continue
    seen.add(key)
    issues.push({ path, message: unit.error })
    if (issues.length >= MAX_ISSUES) break
  }
  // Defensive: never turn an invalid result into "no issues".
  if (issues.length === 0 && units.length > 0) {
    return units.slice(0, MAX_ISSUES).map((unit) => ({ path: toPointer(unit.instanceLocation), message: unit.error }))
  }
  return issues
}

/**
 * Validates `value` against `schema` with full JSON Schema support (`$ref`/`$defs`, `anyOf`,
 * `oneOf`, `allOf`, `not`, `if`/`then`/`else`, `format`, `unevaluated*`, …).
 *
 * The draft comes from `$schema` (draft-07 → 7, 2019-09, draft-04; anything else or absent →
 * 2020-12). All errors are collected (no short-circuit) and reduced to the specific ones: a
 * wrapper such as `Property "x" does not match schema.` is dropped when a more specific error
 * exists at the same or a deeper location, and a failing `anyOf`/`oneOf`/`contains` reports its
 * own error rather than every branch's. `path` is an RFC 6901 pointer (`/numbers/0`), `message`
 * is cfworker's text (`Instance type "string" is invalid. Expected "number".`). At most 100 issues.
 *
 * Compiled validators are cached per schema object in a `WeakMap`, so a schema object must not
 * be mutated after its first use. The caller's schema is never modified.
 *
 * Never throws: a schema that is not an object or boolean, or an exception from cfworker
 * (invalid regular expression, unresolvable `$ref`, duplicate `$id`), becomes one issue at `""`
 * with message `invalid schema: <message>`; a value that is not JSON (e.g. `undefined` where a
 * schema applies) becomes `invalid value: <message>`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const validate: Validator = (schema, value) => {
  if (typeof schema !== "boolean" && !isSchemaObject(schema)) {
    return [{ path: "", message: `invalid schema: expected an object or boolean, got ${typeName(schema)}` }]
  }
  const entry = compiled(schema)
  if (entry._tag === "Invalid") return [{ path: "", message: `invalid schema: ${entry.message}` }]
  try {
    const result = entry.validator.validate(value)
    return result.valid ? [] : toIssues(result.errors)
  } catch (error) {
    const message = errorMessage(error)
    return [{
      path: "",
      message: message.startsWith("Instances of") ? `invalid value: ${message}` : `invalid schema: ${message}`
    }]
  }
}
