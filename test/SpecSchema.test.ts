import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, describe, expect, it, vi } from "vitest"
import {
  assertNotificationSpecValid,
  assertSpecValid,
  checkNotification,
  checkResponse,
  checkServerRequest,
  examplesDir,
  listExamples,
  readExample,
  resultTable,
  type Revision,
  revisions,
  specAvailable
} from "./support/SpecSchema.js"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const envelope = <R>(result: R, id: string | number = 1) => ({ jsonrpc: "2.0", id, result })

/** A CallToolResult that is valid in `rev` (2026-07-28 requires `resultType`). */
const callToolResult = (rev: Revision): Record<string, unknown> => ({
  ...(rev === "2026-07-28" ? { resultType: "complete" } : {}),
  content: [{ type: "text", text: "hi" }],
  isError: false
})

/** The request method whose result type is `resultDef` in `rev`, per the table derived from the schema. */
const methodFor = (rev: Revision, resultDef: string): string | undefined => {
  const table = resultTable(rev)
  if (table === undefined) return undefined
  for (const [method, results] of table) {
    if (results.includes(resultDef) && !(resultDef === "InputRequiredResult" && method !== "tools/call")) return method
  }
  return undefined
}

/**
 * Official examples that contradict the official schema of the same revision (upstream inconsistency, not ours):
 * the 2026-07-28 schema requires `ttlMs` and `cacheScope` on ReadResourceResult, but this example omits them.
 * They must keep failing with exactly these problems; when upstream fixes them, remove the entry.
 */
const inconsistentExamples: ReadonlyMap<string, ReadonlyArray<string>> = new Map([
  ["ReadResourceResultResponse/read-resource-result-response.json", ["'cacheScope'", "'ttlMs'"]]
])

const exampleTypes = (): ReadonlyArray<string> =>
  Fs.existsSync(examplesDir) ? Fs.readdirSync(examplesDir).filter((d) => listExamples(d).length > 0).sort() : []

describe("SpecSchema (official JSON Schema cross-check)", () => {
  describe.each(revisions)("%s", (rev) => {
    it.skipIf(!specAvailable)("accepts a valid CallToolResult response", () => {
      const message = envelope(callToolResult(rev))
      expect(checkResponse(rev, "tools/call", message)).toEqual({ skipped: false, problems: [] })
      expect(() => assertSpecValid(rev, "tools/call", message)).not.toThrow()
    })

    it.skipIf(!specAvailable)("rejects a CallToolResult response without content", () => {
      const { content: _content, ...rest } = callToolResult(rev)
      const check = checkResponse(rev, "tools/call", envelope(rest))
      expect(check.skipped).toBe(false)
      expect(check.problems.join("\n")).toContain("'content'")
      expect(() => assertSpecValid(rev, "tools/call", envelope(rest))).toThrow(/content/)
    })

    it.skipIf(!specAvailable)("rejects a broken envelope and a non-object", () => {
      expect(checkResponse(rev, "tools/call", { jsonrpc: "1.0", id: 1, result: callToolResult(rev) }).problems)
        .not.toEqual([])
      expect(checkResponse(rev, "tools/call", { jsonrpc: "2.0", result: callToolResult(rev) }).problems).not.toEqual(
        []
      )
      expect(checkResponse(rev, "tools/call", "nope").problems).not.toEqual([])
      expect(checkResponse(rev, "tools/call", { jsonrpc: "2.0", id: 1 }).problems).not.toEqual([])
    })

    it.skipIf(!specAvailable)("checks error responses, tolerating JSON-RPC's id: null", () => {
      expect(checkResponse(rev, "tools/call", { jsonrpc: "2.0", id: 3, error: { code: -32601, message: "nope" } }))
        .toEqual({ skipped: false, problems: [] })
      expect(
        checkResponse(rev, "tools/call", { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } })
          .problems
      ).toEqual([])
      expect(checkResponse(rev, "tools/call", { jsonrpc: "2.0", id: 3, error: { code: "x" } }).problems.length)
        .toBeGreaterThan(0)
    })

    it.skipIf(!specAvailable)("checks server notifications by method", () => {
      const ok = { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "t", progress: 1 } }
      expect(checkNotification(rev, ok)).toEqual({ skipped: false, problems: [] })
      expect(() => assertNotificationSpecValid(rev, ok)).not.toThrow()
      const bad = { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "t" } }
      expect(checkNotification(rev, bad).problems.join("\n")).toContain("'progress'")
      expect(() => assertNotificationSpecValid(rev, bad)).toThrow(/progress/)
      expect(checkNotification(rev, { jsonrpc: "2.0", method: "notifications/made_up" }).problems).not.toEqual([])
      // a client → server notification is not something a server may send
      expect(checkNotification(rev, { jsonrpc: "2.0", method: "notifications/roots/list_changed" }).problems)
        .not.toEqual([])
    })
  })

  it.skipIf(!specAvailable)("2026-07-28 ListToolsResult requires ttlMs and resultType; 2025-11-25 does not", () => {
    const shape = envelope({ tools: [{ name: "echo", inputSchema: { type: "object" } }], cacheScope: "public" })
    const modern = checkResponse("2026-07-28", "tools/list", shape)
    expect(modern.skipped).toBe(false)
    const text = modern.problems.join("\n")
    expect(text).toContain("'ttlMs'")
    expect(text).toContain("'resultType'")
    expect(() => assertSpecValid("2026-07-28", "tools/list", shape)).toThrow(/ttlMs/)
    expect(checkResponse("2025-11-25", "tools/list", shape)).toEqual({ skipped: false, problems: [] })
    expect(checkResponse("2025-06-18", "tools/list", shape)).toEqual({ skipped: false, problems: [] })
    // …and with them it is valid in 2026-07-28
    expect(
      checkResponse(
        "2026-07-28",
        "tools/list",
        envelope({ ...shape.result, ttlMs: 0, resultType: "complete" })
      ).problems
    ).toEqual([])
  })

  it.skipIf(!specAvailable)("derives the method → result table from the schema definitions", () => {
    expect(resultTable("2026-07-28")?.get("tools/call")).toEqual(["InputRequiredResult", "CallToolResult"])
    expect(resultTable("2026-07-28")?.get("server/discover")).toEqual(["DiscoverResult"])
    expect(resultTable("2026-07-28")?.get("subscriptions/listen")).toEqual(["SubscriptionsListenResult"])
    expect(resultTable("2026-07-28")?.has("initialize")).toBe(false)
    expect(resultTable("2025-11-25")?.get("initialize")).toEqual(["InitializeResult"])
    expect(resultTable("2025-11-25")?.get("ping")).toEqual(["EmptyResult"])
    expect(resultTable("2025-06-18")?.get("resources/templates/list")).toEqual(["ListResourceTemplatesResult"])
    // a method the revision does not define cannot be checked, and says so
    expect(checkResponse("2026-07-28", "initialize", envelope({})).problems.join()).toContain("not a request")
  })

  it.skipIf(!specAvailable)(
    "server→client requests: elicitation/create in the legacy revisions, none in 2026-07-28",
    () => {
      const elicit = {
        jsonrpc: "2.0",
        id: "s2c-1",
        method: "elicitation/create",
        params: { message: "Ok?", requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } } }
      }
      expect(checkServerRequest("2025-11-25", elicit).problems).toEqual([])
      expect(checkServerRequest("2025-06-18", elicit).problems).toEqual([])
      const { requestedSchema: _, ...noSchema } = elicit.params
      expect(checkServerRequest("2025-06-18", { ...elicit, params: noSchema }).problems.join()).toContain(
        "requestedSchema"
      )
      expect(checkServerRequest("2025-11-25", { ...elicit, id: undefined }).problems).not.toEqual([])
      // a client → server request is not something a server may send
      expect(checkServerRequest("2025-11-25", { jsonrpc: "2.0", id: 1, method: "tools/list" }).problems.join())
        .toContain("not a server request")
      expect(checkServerRequest("2026-07-28", elicit).problems.join()).toContain("not a server request")
    }
  )

  it.skipIf(!specAvailable)("2026-07-28: input_required only where the envelope allows it", () => {
    const inputRequired = envelope({ resultType: "input_required", requestState: "abc" })
    expect(checkResponse("2026-07-28", "tools/call", inputRequired).problems).toEqual([])
    expect(checkResponse("2026-07-28", "tools/list", inputRequired).problems).not.toEqual([])
  })

  describe("official 2026-07-28 examples", () => {
    it.skipIf(!specAvailable)("the examples folder has the expected types", () => {
      const types = exampleTypes()
      expect(types).toContain("CallToolResultResponse")
      expect(types).toContain("DiscoverResultResponse")
    })

    it.skipIf(!specAvailable)("every *ResultResponse example passes as a response to its method", () => {
      const checked: Array<string> = []
      for (const type of exampleTypes().filter((t) => t.endsWith("ResultResponse"))) {
        const method = methodFor("2026-07-28", type.slice(0, -"Response".length))
        expect(method, type).toBeDefined()
        for (const file of listExamples(type)) {
          const problems = checkResponse("2026-07-28", method ?? "", readExample(type, file)).problems
          const known = inconsistentExamples.get(`${type}/${file}`)
          if (known === undefined) {
            expect(problems, `${type}/${file}`).toEqual([])
            checked.push(type)
          } else {
            expect(problems.length, `${type}/${file} now passes: remove it from inconsistentExamples`).toBe(
              known.length
            )
            known.forEach((needle, i) => expect(problems[i]).toContain(needle))
          }
        }
      }
      expect(checked).toContain("CallToolResultResponse")
      expect(checked).toContain("DiscoverResultResponse")
    })

    it.skipIf(!specAvailable)("every server *Result example passes once wrapped in a response envelope", () => {
      let count = 0
      for (const type of exampleTypes().filter((t) => t.endsWith("Result"))) {
        const method = methodFor("2026-07-28", type)
        if (method === undefined) continue
        for (const file of listExamples(type)) {
          expect(checkResponse("2026-07-28", method, envelope(readExample(type, file))).problems, `${type}/${file}`)
            .toEqual([])
          count++
        }
      }
      expect(count).toBeGreaterThan(3)
    })

    it.skipIf(!specAvailable)("every error example passes (error objects wrapped, envelopes as they are)", () => {
      let count = 0
      for (const type of exampleTypes().filter((t) => t.endsWith("Error"))) {
        for (const file of listExamples(type)) {
          const example = readExample(type, file)
          const message = isRecord(example) && "jsonrpc" in example
            ? example
            : { jsonrpc: "2.0", id: 7, error: example }
          expect(checkResponse("2026-07-28", "tools/call", message).problems, `${type}/${file}`).toEqual([])
          count++
        }
      }
      expect(count).toBeGreaterThan(3)
    })

    it.skipIf(!specAvailable)("every server notification example passes", () => {
      let count = 0
      for (const type of exampleTypes().filter((t) => t.endsWith("Notification"))) {
        for (const file of listExamples(type)) {
          expect(checkNotification("2026-07-28", readExample(type, file)).problems, `${type}/${file}`).toEqual([])
          count++
        }
      }
      expect(count).toBeGreaterThan(3)
    })

    it.skipIf(!specAvailable)("damaged examples fail", () => {
      const discover = readExample("DiscoverResultResponse", "discover-result-response.json")
      if (!isRecord(discover) || !isRecord(discover["result"])) throw new Error("unexpected example shape")
      const { supportedVersions: _versions, ...withoutVersions } = discover["result"]
      expect(checkResponse("2026-07-28", "server/discover", { ...discover, result: withoutVersions }).problems)
        .not.toEqual([])
      const { ttlMs: _ttl, ...withoutTtl } = discover["result"]
      expect(checkResponse("2026-07-28", "server/discover", { ...discover, result: withoutTtl }).problems)
        .not.toEqual([])

      const unsupported = readExample("UnsupportedProtocolVersionError", "unsupported-version.json")
      if (!isRecord(unsupported) || !isRecord(unsupported["error"])) throw new Error("unexpected example shape")
      const { data: _data, ...errorWithoutData } = unsupported["error"]
      expect(checkResponse("2026-07-28", "server/discover", { ...unsupported, error: errorWithoutData }).problems)
        .not.toEqual([])
    })
  })
})

describe("SpecSchema without the spec folder", () => {
  afterEach(() => {
    vi.unstubAllEnvs()
    vi.restoreAllMocks()
    vi.resetModules()
  })

  it("reports skipped (never a silent pass) and warns once on stderr", async () => {
    const empty = Fs.mkdtempSync(Path.join(Os.tmpdir(), "presa-no-spec-"))
    vi.stubEnv("PRESA_SPEC_DIR", empty)
    vi.resetModules()
    const lines: Array<string> = []
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk))
      return true
    })
    const mod = await import("./support/SpecSchema.js")
    expect(mod.specAvailable).toBe(false)
    expect(mod.specDir).toBe(Path.resolve(empty))
    expect(mod.checkResponse("2026-07-28", "tools/call", {})).toEqual({ skipped: true, problems: [] })
    expect(mod.checkNotification("2025-06-18", {})).toEqual({ skipped: true, problems: [] })
    mod.assertSpecValid("2026-07-28", "tools/call", {})
    mod.assertNotificationSpecValid("2025-11-25", { method: "notifications/progress" })
    expect(mod.skippedChecks()).toEqual(["2026-07-28 tools/call", "2025-11-25 notification notifications/progress"])
    expect(lines).toEqual([`spec cross-check SKIPPED: ${Path.resolve(empty)} not found\n`])
    Fs.rmSync(empty, { recursive: true, force: true })
  })
})
