/**
 * Cross-checks JSON-RPC messages against the OFFICIAL JSON Schema of each MCP protocol revision.
 *
 * The schemas are read at runtime from the shared spec folder (they are never copied into this repository):
 * `$PRESA_SPEC_DIR` when set, otherwise `<repo root>/../shared/spec`, with one folder per revision
 * (`<dir>/<revision>/schema.json`).
 *
 * The method → result-type table is derived from each schema's definitions, not hand-written:
 * - every `*Request` definition whose `method` is a `const` maps to the `*Result` definition of the same stem,
 *   or to `EmptyResult` when there is none (ping, resources/subscribe, logging/setLevel, …);
 * - in 2026-07-28, the `*ResultResponse` envelope of that stem (when defined) names the allowed result branches
 *   (e.g. tools/call → InputRequiredResult | CallToolResult) and the whole message is validated against it too;
 * - error codes map to the definitions that pin `code` with a `const` (ParseError, UnsupportedProtocolVersionError …);
 * - notification methods map to the `*Notification` definitions listed in the `ServerNotification` union.
 * Two deliberate additions to the bare schema: in 2025-11-25 a result carrying `task` and no `content` is checked as
 * `CreateTaskResult` (task-augmented requests), and `"id": null` is accepted on error responses (JSON-RPC 2.0 §5).
 */
import { Ajv } from "ajv"
import type { ErrorObject, ValidateFunction } from "ajv"
import { Ajv2020 } from "ajv/dist/2020.js"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

export type Revision = "2026-07-28" | "2025-11-25" | "2025-06-18"

export const revisions: ReadonlyArray<Revision> = ["2026-07-28", "2025-11-25", "2025-06-18"]

export interface SpecCheck {
  readonly skipped: boolean
  readonly problems: ReadonlyArray<string>
}

/** Where the spec folder is looked for (absolute path). */
export const specDir: string = process.env["PRESA_SPEC_DIR"] !== undefined && process.env["PRESA_SPEC_DIR"] !== ""
  ? Path.resolve(process.env["PRESA_SPEC_DIR"])
  : fileURLToPath(new URL("../../../shared/spec/", import.meta.url))

const schemaPath = (rev: Revision): string => Path.join(specDir, rev, "schema.json")

/** Directory holding the official 2026-07-28 examples (`<TypeName>/*.json`). */
export const examplesDir: string = Path.join(specDir, "2026-07-28", "examples")

/** True when the schema of every revision is present. */
export const specAvailable: boolean = revisions.every((rev) => Fs.existsSync(schemaPath(rev)))

// ---------------------------------------------------------------------------------------------------------------
// guards

type JsonObject = { readonly [key: string]: unknown }

const isRecord = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

const getRecord = (o: JsonObject, key: string): JsonObject | undefined => {
  const v = o[key]
  return isRecord(v) ? v : undefined
}

const constOf = (def: JsonObject, ...path: ReadonlyArray<string>): unknown => {
  let cur: JsonObject | undefined = def
  for (const key of path) {
    cur = cur === undefined ? undefined : getRecord(cur, key)
  }
  return cur?.["const"]
}

const refName = (u: unknown): string | undefined => {
  if (!isRecord(u)) return undefined
  const ref = u["$ref"]
  if (typeof ref !== "string") return undefined
  const m = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref)
  return m?.[1]
}

/** Definition names referenced by `anyOf` members, or by a single `$ref`. */
const unionMembers = (u: unknown): ReadonlyArray<string> => {
  if (!isRecord(u)) return []
  const single = refName(u)
  if (single !== undefined) return [single]
  const anyOf = u["anyOf"] ?? u["oneOf"]
  if (!Array.isArray(anyOf)) return []
  return anyOf.map(refName).filter((n): n is string => n !== undefined)
}

// ---------------------------------------------------------------------------------------------------------------
// per-revision model

interface ResultEntry {
  /** The result definitions a successful response may carry, e.g. ["InputRequiredResult", "CallToolResult"]. */
  readonly results: ReadonlyArray<string>
  /** A definition describing the whole response envelope for this method (2026-07-28 `*ResultResponse`). */
  readonly responseDef: string | undefined
}

interface RevisionModel {
  readonly rev: Revision
  readonly defsKey: "$defs" | "definitions"
  readonly defs: JsonObject
  readonly resultTable: ReadonlyMap<string, ResultEntry>
  /** error code → definition that pins it. `envelope` = the def describes the whole response, else `error`. */
  readonly errorCodes: ReadonlyMap<number, { readonly def: string; readonly level: "envelope" | "error" }>
  /** notification method → definition, for every notification in the ServerNotification union. */
  readonly serverNotifications: ReadonlyMap<string, string>
  /** notification method → definition, for every notification defined at all. */
  readonly allNotifications: ReadonlyMap<string, string>
  /** request method → definition, for every request in the ServerRequest union (empty in 2026-07-28). */
  readonly serverRequests: ReadonlyMap<string, string>
  readonly resultEnvelope: string
  readonly errorEnvelope: string
  readonly validator: (def: string) => ValidateFunction
}

const buildModel = (rev: Revision, raw: unknown): RevisionModel => {
  if (!isRecord(raw)) throw new Error(`${schemaPath(rev)}: not a JSON object`)
  const defsKey = isRecord(raw["$defs"]) ? "$defs" : "definitions"
  const defs = getRecord(raw, defsKey)
  if (defs === undefined) throw new Error(`${schemaPath(rev)}: neither $defs nor definitions`)
  const has = (name: string): boolean => isRecord(defs[name])
  const def = (name: string): JsonObject => getRecord(defs, name) ?? {}

  const resultTable = new Map<string, ResultEntry>()
  const allNotifications = new Map<string, string>()
  const errorCodes = new Map<number, { readonly def: string; readonly level: "envelope" | "error" }>()
  for (const name of Object.keys(defs)) {
    const d = def(name)
    const method = constOf(d, "properties", "method")
    if (typeof method === "string" && name.endsWith("Request")) {
      const stem = name.slice(0, -"Request".length)
      const resultName = has(`${stem}Result`) ? `${stem}Result` : "EmptyResult"
      const responseDef = has(`${stem}ResultResponse`) ? `${stem}ResultResponse` : undefined
      const fromEnvelope = responseDef === undefined
        ? []
        : unionMembers(getRecord(getRecord(def(responseDef), "properties") ?? {}, "result"))
      const results = fromEnvelope.length > 0 ? fromEnvelope : [resultName]
      resultTable.set(method, { results, responseDef })
    }
    if (typeof method === "string" && name.endsWith("Notification")) {
      allNotifications.set(method, name)
    }
    const code = constOf(d, "properties", "code")
    if (typeof code === "number") errorCodes.set(code, { def: name, level: "error" })
    const errorProp = getRecord(getRecord(d, "properties") ?? {}, "error")
    const allOf = errorProp?.["allOf"]
    if (Array.isArray(allOf)) {
      for (const part of allOf) {
        const c = isRecord(part) ? constOf(part, "properties", "code") : undefined
        if (typeof c === "number") errorCodes.set(c, { def: name, level: "envelope" })
      }
    }
  }
  const serverNotifications = new Map<string, string>()
  for (const name of unionMembers(defs["ServerNotification"])) {
    const method = constOf(def(name), "properties", "method")
    if (typeof method === "string") serverNotifications.set(method, name)
  }
  const serverRequests = new Map<string, string>()
  for (const name of unionMembers(defs["ServerRequest"])) {
    const method = constOf(def(name), "properties", "method")
    if (typeof method === "string") serverRequests.set(method, name)
  }

  const resultEnvelope = has("JSONRPCResultResponse") ? "JSONRPCResultResponse" : "JSONRPCResponse"
  const errorEnvelope = has("JSONRPCErrorResponse") ? "JSONRPCErrorResponse" : "JSONRPCError"

  const options = { strict: false, allErrors: true, validateFormats: false, logger: false } as const
  const ajv = defsKey === "$defs" && String(raw["$schema"]).includes("2020-12")
    ? new Ajv2020(options)
    : new Ajv(options)
  const key = `mcp-${rev}`
  ajv.addSchema(raw, key)
  const cache = new Map<string, ValidateFunction>()
  const validator = (name: string): ValidateFunction => {
    const cached = cache.get(name)
    if (cached !== undefined) return cached
    if (!has(name)) throw new Error(`${rev}: schema has no definition ${name}`)
    const fn = ajv.getSchema(`${key}#/${defsKey}/${name}`)
    if (fn === undefined) throw new Error(`${rev}: ajv could not compile ${name}`)
    cache.set(name, fn)
    return fn
  }

  return {
    rev,
    defsKey,
    defs,
    resultTable,
    errorCodes,
    serverNotifications,
    allNotifications,
    serverRequests,
    resultEnvelope,
    errorEnvelope,
    validator
  }
}

const models = new Map<Revision, RevisionModel | null>()

const loadModel = (rev: Revision): RevisionModel | null => {
  const cached = models.get(rev)
  if (cached !== undefined) return cached
  const file = schemaPath(rev)
  const model = Fs.existsSync(file) ? buildModel(rev, JSON.parse(Fs.readFileSync(file, "utf8"))) : null
  models.set(rev, model)
  return model
}

/** The derived method → result definitions table of a revision (for reports and tests). Undefined when skipped. */
export const resultTable = (rev: Revision): ReadonlyMap<string, ReadonlyArray<string>> | undefined => {
  const model = loadModel(rev)
  if (model === null) return undefined
  return new Map([...model.resultTable].map(([method, entry]) => [method, entry.results]))
}

/** The derived notification method → definition table (ServerNotification union members) of a revision. */
export const serverNotificationTable = (rev: Revision): ReadonlyMap<string, string> | undefined =>
  loadModel(rev)?.serverNotifications

// ---------------------------------------------------------------------------------------------------------------
// checking

const describe = (e: ErrorObject, base: string): string => {
  const path = `${base}${e.instancePath}`
  const where = path === "" ? "(root)" : path
  const params = e.params
  const extra = e.keyword === "const" && "allowedValue" in params
    ? ` ${JSON.stringify(params["allowedValue"])}`
    : e.keyword === "enum" && "allowedValues" in params
    ? ` ${JSON.stringify(params["allowedValues"])}`
    : e.keyword === "additionalProperties" && "additionalProperty" in params
    ? ` (${JSON.stringify(params["additionalProperty"])})`
    : ""
  return `${where} ${e.message ?? e.keyword}${extra}`
}

const run = (
  model: RevisionModel,
  def: string,
  value: unknown,
  label: string,
  options: { readonly base?: string; readonly keep?: (e: ErrorObject) => boolean } = {}
): Array<string> => {
  const keep = options.keep ?? (() => true)
  const validate = model.validator(def)
  if (validate(value)) return []
  const errors = (validate.errors ?? []).filter(keep)
  const seen = new Set<string>()
  const out: Array<string> = []
  for (const e of errors) {
    const text = `${label} (${model.rev} ${def}): ${describe(e, options.base ?? "")}`
    if (!seen.has(text)) {
      seen.add(text)
      out.push(text)
    }
  }
  return out
}

/**
 * JSON-RPC 2.0 (§5) requires `"id": null` on an error response when the request id could not be determined
 * (parse error, invalid request); the MCP schemas type `id` as string | integer only. Such `id: null` errors on
 * error responses are therefore not reported.
 */
const isNullIdTypeError = (message: JsonObject) => (e: ErrorObject): boolean =>
  !(message["id"] === null && e.instancePath === "/id" && e.keyword === "type")

const skipped: SpecCheck = { skipped: true, problems: [] }

const checkErrorResponse = (model: RevisionModel, message: JsonObject): Array<string> => {
  const problems = run(model, model.errorEnvelope, message, "error response", {
    keep: isNullIdTypeError(message)
  })
  if ("result" in message) problems.push(`error response: must not carry both "error" and "result"`)
  const error = getRecord(message, "error")
  const code = error?.["code"]
  if (typeof code === "number") {
    const specific = model.errorCodes.get(code)
    if (specific !== undefined) {
      problems.push(
        ...(specific.level === "envelope"
          ? run(model, specific.def, message, `error ${code}`, { keep: isNullIdTypeError(message) })
          : run(model, specific.def, error, `error ${code}`, { base: "/error" }))
      )
    }
  }
  return problems
}

// Tasks extension (io.modelcontextprotocol/tasks, SEP-2663): the 2026-07-28 schema does not define its
// methods or CreateTaskResult, so their results are checked against the SEP's TypeScript shapes written out
// below as JSON Schema (Task, DetailedTask, CreateTaskResult), with the schema's own definitions for what they
// embed: the generic `Result` and envelope, `InputRequests`, the inlined `CallToolResult`, the error object.
const TASK_METHODS: ReadonlySet<string> = new Set(["tasks/get", "tasks/update", "tasks/cancel"])
const TASK_PROPERTIES: JsonObject = {
  taskId: { type: "string" },
  status: { enum: ["working", "input_required", "completed", "failed", "cancelled"] },
  statusMessage: { type: "string" },
  createdAt: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$" },
  lastUpdatedAt: {
    type: "string",
    pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$"
  },
  ttlMs: { type: ["integer", "null"] },
  pollIntervalMs: { type: "integer" }
}
const TASK_REQUIRED = ["taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs"]
const taskAjv = new Ajv2020({ strict: false, allErrors: true })
const createTaskResult = taskAjv.compile({
  type: "object",
  properties: { ...TASK_PROPERTIES, resultType: { const: "task" } },
  required: [...TASK_REQUIRED, "resultType"],
  not: {
    anyOf: [{ required: ["result"] }, { required: ["error"] }, { required: ["inputRequests"] }, {
      required: ["requestState"]
    }]
  }
})
const detailedTask = taskAjv.compile({
  type: "object",
  properties: { ...TASK_PROPERTIES, resultType: { const: "complete" } },
  required: [...TASK_REQUIRED, "resultType"],
  not: { required: ["requestState"] },
  allOf: [
    {
      if: { properties: { status: { const: "input_required" } } },
      then: { required: ["inputRequests"] },
      else: { not: { required: ["inputRequests"] } }
    },
    {
      if: { properties: { status: { const: "completed" } } },
      then: { required: ["result"] },
      else: { not: { required: ["result"] } }
    },
    {
      if: { properties: { status: { const: "failed" } } },
      then: { required: ["error"] },
      else: { not: { required: ["error"] } }
    }
  ]
})
const ackResult = taskAjv.compile({
  type: "object",
  properties: { resultType: { const: "complete" } },
  required: ["resultType"],
  not: { anyOf: ["taskId", "status", "result", "error", "inputRequests"].map((k) => ({ required: [k] })) }
})

const checkTaskResult = (model: RevisionModel, method: string, message: JsonObject): Array<string> => {
  const problems = run(model, model.resultEnvelope, message, "response envelope")
  const result = getRecord(message, "result") ?? {}
  const label = `result of ${method} (Tasks extension, SEP-2663)`
  const shape = method === "tools/call" ? createTaskResult : method === "tasks/get" ? detailedTask : ackResult
  if (!shape(result)) {
    for (const e of shape.errors ?? []) problems.push(`${label}: ${describe(e, "/result")}`)
  }
  if (method === "tasks/get") {
    const inner = getRecord(result, "result")
    if (inner !== undefined) problems.push(...run(model, "CallToolResult", inner, label, { base: "/result/result" }))
    const requests = getRecord(result, "inputRequests")
    if (requests !== undefined) {
      problems.push(...run(model, "InputRequests", requests, label, { base: "/result/inputRequests" }))
    }
    const error = getRecord(result, "error")
    if (error !== undefined) problems.push(...run(model, "Error", error, label, { base: "/result/error" }))
  }
  return problems
}

const checkResultResponse = (model: RevisionModel, method: string, message: JsonObject): Array<string> => {
  if (
    model.rev === "2026-07-28" &&
    (TASK_METHODS.has(method) || (method === "tools/call" && getRecord(message, "result")?.["resultType"] === "task"))
  ) return checkTaskResult(model, method, message)
  const entry = model.resultTable.get(method)
  if (entry === undefined) {
    return [`method ${JSON.stringify(method)} is not a request of revision ${model.rev} (no result type to check)`]
  }
  const result = message["result"]
  // the envelope's own `result` check is the generic `Result`; the specific result check below is stricter
  const problems = run(
    model,
    model.resultEnvelope,
    message,
    "response envelope",
    { keep: (e) => !e.instancePath.startsWith("/result") }
  )
  if (!isRecord(result)) {
    problems.push(`response envelope (${model.rev}): /result must be an object`)
    return problems
  }
  const resultType = result["resultType"]
  const inputRequired = entry.results.includes("InputRequiredResult")
  let branch: string | undefined
  if (resultType === "input_required") {
    branch = inputRequired ? "InputRequiredResult" : undefined
    if (branch === undefined) {
      problems.push(`result (${model.rev}): resultType "input_required" is not allowed for ${method}`)
    }
  } else if (
    model.rev === "2025-11-25" && "task" in result && !("content" in result) && model.defs["CreateTaskResult"]
  ) {
    branch = "CreateTaskResult"
  } else {
    branch = entry.results.find((r) => r !== "InputRequiredResult") ?? entry.results[0]
  }
  if (branch !== undefined) problems.push(...run(model, branch, result, `result of ${method}`, { base: "/result" }))
  if (problems.length === 0 && entry.responseDef !== undefined) {
    problems.push(...run(model, entry.responseDef, message, `response to ${method}`))
  }
  return problems
}

/** Validates a JSON-RPC response (whole envelope) answering a request with `method`, against revision `rev`. */
export const checkResponse = (rev: Revision, method: string, message: unknown): SpecCheck => {
  const model = loadModel(rev)
  if (model === null) return skipped
  if (!isRecord(message)) return { skipped: false, problems: ["response must be a JSON object"] }
  const problems = "error" in message
    ? checkErrorResponse(model, message)
    : "result" in message
    ? checkResultResponse(model, method, message)
    : [`response must carry "result" or "error" (got keys ${JSON.stringify(Object.keys(message))})`]
  return { skipped: false, problems }
}

/** Validates a JSON-RPC notification sent by a server against revision `rev`. */
export const checkNotification = (rev: Revision, message: unknown): SpecCheck => {
  const model = loadModel(rev)
  if (model === null) return skipped
  if (!isRecord(message)) return { skipped: false, problems: ["notification must be a JSON object"] }
  const problems = run(model, "JSONRPCNotification", message, "notification envelope")
  if ("id" in message) problems.push(`notification envelope (${rev}): must not carry "id"`)
  const method = message["method"]
  if (typeof method === "string") {
    const def = model.serverNotifications.get(method)
    if (def !== undefined) {
      problems.push(...run(model, def, message, `notification ${method}`))
    } else if (model.allNotifications.has(method)) {
      problems.push(`notification ${method} is defined in ${rev} but is not a server notification`)
    } else {
      problems.push(`notification ${method} is not defined in ${rev}`)
    }
  }
  return { skipped: false, problems }
}

/**
 * Validates a JSON-RPC request sent by a server to its client (legacy server→client requests such as
 * `elicitation/create`) against revision `rev`: the request envelope and the `ServerRequest` union member of
 * its method. 2026-07-28 defines no server requests: every one is a problem there.
 */
export const checkServerRequest = (rev: Revision, message: unknown): SpecCheck => {
  const model = loadModel(rev)
  if (model === null) return skipped
  if (!isRecord(message)) return { skipped: false, problems: ["request must be a JSON object"] }
  const problems = run(model, "JSONRPCRequest", message, "request envelope")
  const method = message["method"]
  const def = typeof method === "string" ? model.serverRequests.get(method) : undefined
  if (def === undefined) problems.push(`${JSON.stringify(method)} is not a server request of ${rev}`)
  else problems.push(...run(model, def, message, `request ${String(method)}`))
  return { skipped: false, problems }
}

// ---------------------------------------------------------------------------------------------------------------
// vitest-friendly assertions

let warned = false
const skips: Array<string> = []

/** Every check that was skipped because the spec folder was absent (`rev method`), in order. */
export const skippedChecks = (): ReadonlyArray<string> => skips

const recordSkip = (what: string): void => {
  skips.push(what)
  if (!warned) {
    warned = true
    process.stderr.write(`spec cross-check SKIPPED: ${specDir} not found\n`)
  }
}

const raise = (what: string, message: unknown, problems: ReadonlyArray<string>): never => {
  throw new Error(
    `${what} does not match the official schema:\n  - ${problems.join("\n  - ")}\nmessage: ${
      JSON.stringify(message)?.slice(0, 2000)
    }`
  )
}

export const assertSpecValid = (rev: Revision, method: string, message: unknown): void => {
  const check = checkResponse(rev, method, message)
  if (check.skipped) return recordSkip(`${rev} ${method}`)
  if (check.problems.length > 0) raise(`${rev} response to ${method}`, message, check.problems)
}

export const assertNotificationSpecValid = (rev: Revision, message: unknown): void => {
  const check = checkNotification(rev, message)
  const method = isRecord(message) && typeof message["method"] === "string" ? message["method"] : "?"
  if (check.skipped) return recordSkip(`${rev} notification ${method}`)
  if (check.problems.length > 0) raise(`${rev} notification ${method}`, message, check.problems)
}

export const assertServerRequestSpecValid = (rev: Revision, message: unknown): void => {
  const check = checkServerRequest(rev, message)
  const method = isRecord(message) && typeof message["method"] === "string" ? message["method"] : "?"
  if (check.skipped) return recordSkip(`${rev} server request ${method}`)
  if (check.problems.length > 0) raise(`${rev} server request ${method}`, message, check.problems)
}

/** Reads an official 2026-07-28 example, `examples/<typeName>/<file>`; undefined when absent. */
export const readExample = (typeName: string, file: string): unknown => {
  const path = Path.join(examplesDir, typeName, file)
  return Fs.existsSync(path) ? JSON.parse(Fs.readFileSync(path, "utf8")) : undefined
}

/** Lists the example files of one type (empty when absent). */
export const listExamples = (typeName: string): ReadonlyArray<string> => {
  const dir = Path.join(examplesDir, typeName)
  return Fs.existsSync(dir) ? Fs.readdirSync(dir).filter((f) => f.endsWith(".json")).sort() : []
}
