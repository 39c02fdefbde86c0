/**
 * SKILL.md front matter YAML: the strict subset skills are written in (server side) and the
 * lenient JSON-compatible reading hosts use (client side). The only module that imports `yaml`:
 * `Skill.ts` imports it for the synchronous `Skill.parseFrontmatter`, `internal/skill.ts` on the
 * first `Skill.make` or `verifySkillMd`, so a server that serves no skills never loads it.
 *
 * Failures are `Either.left(message)`; `Skill.ts` wraps them into its error types.
 *
 * @since 0.1.0
 * @internal
 */
import * as Either from "effect/Either"
import * as Yaml from "yaml"
import { isRecord, plainScalar } from "./frontmatter.js"

/** Lexer tokens whose syntax is outside the subset, with the reason shown to the author. */
const REFUSED_TOKENS: Readonly<Record<string, string>> = {
  "flow-map-start": "flow mappings ({a: 1}) are not allowed; use a block mapping",
  "flow-seq-start": "flow sequences ([a, b]) are not allowed; use a block list (- a)",
  "anchor": "anchors (&name) are not allowed",
  "alias": "aliases (*name) are not allowed",
  "tag": "tags (!tag) are not allowed",
  "explicit-key-ind": "explicit keys (? key) are not allowed",
  "directive-line": "directives (%...) are not allowed",
  "doc-start": "a second document ('---') is not allowed",
  "doc-end": "a document end marker ('...') is not allowed"
}

const firstLine = (message: string): string => message.split("\n")[0] ?? message

/** Reads one node under the subset: its JSON value, or why it is outside the subset. */
const strictNode = (node: unknown, source: string, where: string): Either.Either<unknown, string> => {
  if (node === null || node === undefined) {
    return Either.left(`${where}: an empty value (read as null) is not allowed; quote it: ""`)
  }
  if (Yaml.isAlias(node)) return Either.left(`${where}: aliases (*name) are not allowed`)
  if (Yaml.isScalar(node)) {
    if (node.anchor !== undefined) return Either.left(`${where}: anchors (&name) are not allowed`)
    if (node.tag !== undefined) return Either.left(`${where}: tags (!tag) are not allowed`)
    const text = typeof node.source === "string" ? node.source : typeof node.value === "string" ? node.value : ""
    switch (node.type) {
      case "QUOTE_DOUBLE":
      case "QUOTE_SINGLE":
      case "BLOCK_LITERAL":
      case "BLOCK_FOLDED":
        return Either.right(text)
      default: {
        const range = node.range
        if (range !== undefined && range !== null && /[\r\n]/.test(source.slice(range[0], range[1]))) {
          return Either.left(`${where}: multi-line plain values are not allowed; use a | or > block, or quote it`)
        }
        return Either.mapLeft(plainScalar(text), (reason) => `${where}: ${reason}`)
      }
    }
  }
  if (Yaml.isMap(node)) return strictMap(node, source, where)
  if (Yaml.isSeq(node)) {
    if (node.flow === true) return Either.left(`${where}: flow sequences ([a, b]) are not allowed`)
    if (node.anchor !== undefined) return Either.left(`${where}: anchors (&name) are not allowed`)
    if (node.tag !== undefined) return Either.left(`${where}: tags (!tag) are not allowed`)
    const out: Array<unknown> = []
    for (let i = 0; i < node.items.length; i++) {
      const item = node.items[i]
      const at = `${where}[${i}]`
      if (!Yaml.isScalar(item) && !Yaml.isAlias(item)) {
        return Either.left(`${at}: list items must be scalars (nested lists and maps are not allowed)`)
      }
      const value = strictNode(item, source, at)
      if (Either.isLeft(value)) return value
      out.push(value.right)
    }
    return Either.right(out)
  }
  return Either.left(`${where}: unsupported YAML node`)
}

const strictMap = (node: Yaml.YAMLMap, source: string, where: string): Either.Either<unknown, string> => {
  if (node.flow === true) return Either.left(`${where}: flow mappings ({a: 1}) are not allowed`)
  if (node.anchor !== undefined) return Either.left(`${where}: anchors (&name) are not allowed`)
  if (node.tag !== undefined) return Either.left(`${where}: tags (!tag) are not allowed`)
  const out: Record<string, unknown> = {}
  for (const pair of node.items) {
    const keyNode: unknown = pair.key
    if (!Yaml.isScalar(keyNode)) return Either.left(`${where}: keys must be strings`)
    const key = strictNode(keyNode, source, where === "" ? "key" : `${where} key`)
    if (Either.isLeft(key)) return key
    if (typeof key.right !== "string") {
      return Either.left(`${where === "" ? "" : `${where}: `}key ${String(key.right)} is not a string; quote it`)
    }
    const name = key.right
    if (Object.prototype.hasOwnProperty.call(out, name)) {
      return Either.left(`${where === "" ? "" : `${where}: `}duplicate key ${JSON.stringify(name)}`)
    }
    const at = where === "" ? name : `${where}.${name}`
    const value = strictNode(pair.value, source, at)
    if (Either.isLeft(value)) return value
    Object.defineProperty(out, name, { value: value.right, enumerable: true, writable: true, configurable: true })
  }
  return Either.right(out)
}

/**
 * Parses front matter YAML under the strict subset (see `Skill.parseFrontmatter`). The result is
 * a JSON object of strings, numbers, booleans, arrays of those, and nested objects.
 *
 * @internal
 */
export const parseStrict = (yaml: string): Either.Either<Record<string, unknown>, string> => {
  for (const token of new Yaml.Lexer().lex(yaml)) {
    const type = Yaml.CST.tokenType(token)
    const refused = type === null ? undefined : REFUSED_TOKENS[type]
    if (refused !== undefined) return Either.left(refused)
  }
  // `uniqueKeys` is left to `strictMap` (a Set-like own-key check): the `yaml` package compares
  // each key with every earlier one, quadratic in the number of keys.
  const doc = Yaml.parseDocument(yaml, { schema: "failsafe", uniqueKeys: false, strict: true, version: "1.2" })
  const problem = doc.errors[0] ?? doc.warnings[0]
  if (problem !== undefined) return Either.left(firstLine(problem.message))
  const contents: unknown = doc.contents
  if (!Yaml.isMap(contents)) return Either.left("front matter must be a YAML mapping of keys to values")
  const result = strictMap(contents, yaml, "")
  if (Either.isLeft(result)) return Either.left(result.left)
  return isRecord(result.right) ? Either.right(result.right) : Either.left("front matter must be a mapping")
}

/** The first key that occurs twice in one mapping of `doc` (keys compared by their source text). */
const firstDuplicateKey = (doc: Yaml.Document): string | undefined => {
  let found: string | undefined
  Yaml.visit(doc, {
    Map: (_, map) => {
      const seen = new Set<string>()
      for (const pair of map.items) {
        const key = Yaml.isScalar(pair.key) ? String(pair.key.value) : String(pair.key)
        if (seen.has(key)) {
          found = key
          return Yaml.visit.BREAK
        }
        seen.add(key)
      }
      return undefined
    }
  })
  return found
}

/**
 * Parses front matter YAML leniently: the YAML 1.2 core schema (JSON-compatible, no timestamp or
 * `Date` coercion, no merge keys), every construct allowed, aliases bounded. The top level must be
 * a mapping. Duplicate keys in a mapping are refused (checked here with a Set per mapping: the
 * `yaml` package's own `uniqueKeys` check is quadratic in the number of keys).
 *
 * @internal
 */
export const parseLenient = (yaml: string): Either.Either<Record<string, unknown>, string> => {
  const doc = Yaml.parseDocument(yaml, { schema: "core", merge: false, uniqueKeys: false })
  const problem = doc.errors[0]
  if (problem !== undefined) return Either.left(firstLine(problem.message))
  const duplicate = firstDuplicateKey(doc)
  if (duplicate !== undefined) return Either.left(`Map keys must be unique: ${JSON.stringify(duplicate)}`)
  return Either.try({
    try: (): unknown => doc.toJS({ maxAliasCount: 100 }),
    catch: (e) => e instanceof Error ? e.message : String(e)
  }).pipe(
    Either.flatMap((value) =>
      isRecord(value) ? Either.right(value) : Either.left("front matter must be a YAML mapping of keys to values")
    )
  )
}
