/**
 * JSON text → value for everything a peer sends (stdio lines, HTTP bodies, SSE events).
 *
 * `JSON.parse` turns a `"__proto__"` key into an own property, which stays harmless only as long
 * as nothing copies it by assignment. Schema decoding does (`effect/Schema` builds its output with
 * `out[key] = value`): a record or an open struct would get the peer's object as its prototype, so
 * a field the decoded type promises to be a string could read as anything (issue #20, "Names that
 * are also `Object.prototype` members"). Such keys are dropped here, once, at the boundary. Text
 * that cannot hold one (no `__proto__` and no `\u` escape) is parsed without a reviver, at full speed.
 * @internal
 */

const mayHoldProto = (text: string): boolean => text.includes("__proto__") || text.includes("\\u")

const dropProto = (key: string, value: unknown): unknown => key === "__proto__" ? undefined : value

/** `JSON.parse` without `__proto__` keys; throws as `JSON.parse` does on text that is not JSON. */
export const parseJson = (text: string): unknown => mayHoldProto(text) ? JSON.parse(text, dropProto) : JSON.parse(text)
