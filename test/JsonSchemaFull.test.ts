import { describe, expect, it } from "@effect/vitest"
import * as JsonSchema from "../src/JsonSchema.js"
import * as JsonSchemaFull from "../src/JsonSchemaFull.js"

const { validate } = JsonSchemaFull

const numbersSchema = {
  type: "object",
  properties: { numbers: { type: "array", items: { type: "number" } } },
  required: ["numbers"]
}

describe("JsonSchemaFull.validate", () => {
  it("returns [] for valid values", () => {
    expect(validate(numbersSchema, { numbers: [1, 2.5] })).toEqual([])
    expect(validate(true, "anything")).toEqual([])
    expect(validate({}, null)).toEqual([])
  })

  it("converts instance locations to JSON Pointers and keeps only leaf errors", () => {
    const issues = validate(numbersSchema, { numbers: ["one"] })
    expect(issues).toEqual([{
      path: "/numbers/0",
      message: "Instance type \"string\" is invalid. Expected \"number\"."
    }])
    expect(JsonSchema.formatIssues("Invalid arguments", issues)).toBe(
      "Invalid arguments at /numbers/0: Instance type \"string\" is invalid. Expected \"number\"."
    )
  })

  it("reports all errors (no short-circuit)", () => {
    const issues = validate(numbersSchema, { numbers: ["one", 2, "three"] })
    expect(issues.map((i) => i.path)).toEqual(["/numbers/0", "/numbers/2"])
    const missing = validate({ required: ["a", "b"] }, {})
    expect(missing).toHaveLength(2)
    expect(missing.every((i) => i.path === "")).toBe(true)
    expect(missing[0]?.message).toContain("\"a\"")
  })

  it("decodes and escapes property names in paths", () => {
    const schema = { properties: { "a b/c~#%": { type: "string" } } }
    expect(validate(schema, { "a b/c~#%": 1 })).toEqual([
      { path: "/a b~1c~0#%", message: "Instance type \"number\" is invalid. Expected \"string\"." }
    ])
    expect(validate({ additionalProperties: false }, { "ä/x": 1 }).map((i) => i.path)).toEqual(["/ä~1x"])
  })

  it("resolves $ref / $defs", () => {
    const schema = {
      $defs: {
        positive: { type: "integer", exclusiveMinimum: 0 },
        point: {
          type: "object",
          properties: { x: { $ref: "#/$defs/positive" }, y: { $ref: "#/$defs/positive" } },
          required: ["x", "y"],
          additionalProperties: false
        }
      },
      type: "object",
      properties: { points: { type: "array", items: { $ref: "#/$defs/point" } } }
    }
    expect(validate(schema, { points: [{ x: 1, y: 2 }] })).toEqual([])
    const issues = validate(schema, { points: [{ x: 1, y: 0 }, { x: 1.5, y: 1, z: 1 }] })
    expect(issues.map((i) => i.path)).toEqual(["/points/0/y", "/points/1/x", "/points/1/z"])
    expect(issues[0]?.message).toBe("0 is less than 0.")
    expect(issues[1]?.message).toBe("Instance type \"number\" is invalid. Expected \"integer\".")
  })

  it("supports recursive $ref", () => {
    const tree = {
      $defs: {
        node: {
          type: "object",
          properties: { value: { type: "number" }, children: { type: "array", items: { $ref: "#/$defs/node" } } },
          required: ["value"]
        }
      },
      $ref: "#/$defs/node"
    }
    expect(validate(tree, { value: 1, children: [{ value: 2, children: [] }] })).toEqual([])
    const issues = validate(tree, { value: 1, children: [{ value: 2, children: [{ value: "x" }] }] })
    expect(issues.map((i) => i.path)).toEqual(["/children/0/children/0/value"])
  })

  it("oneOf: reports the oneOf failure, not every branch", () => {
    const schema = { oneOf: [{ type: "string" }, { type: "number" }] }
    expect(validate(schema, "a")).toEqual([])
    expect(validate(schema, 1)).toEqual([])
    expect(validate(schema, true)).toEqual([
      { path: "", message: "Instance does not match exactly one subschema (0 matches)." }
    ])
    const overlapping = { oneOf: [{ type: "number" }, { type: "integer" }] }
    expect(validate(overlapping, 1)).toEqual([
      { path: "", message: "Instance does not match exactly one subschema (2 matches)." }
    ])
    expect(validate(overlapping, 1.5)).toEqual([])
  })

  it("oneOf nested in properties keeps the oneOf error at the property path", () => {
    const schema = {
      properties: {
        shape: {
          oneOf: [
            { properties: { kind: { const: "circle" }, r: { type: "number" } }, required: ["kind", "r"] },
            { properties: { kind: { const: "square" }, side: { type: "number" } }, required: ["kind", "side"] }
          ]
        }
      }
    }
    expect(validate(schema, { shape: { kind: "circle", r: 1 } })).toEqual([])
    expect(validate(schema, { shape: { kind: "triangle" } })).toEqual([
      { path: "/shape", message: "Instance does not match exactly one subschema (0 matches)." }
    ])
  })

  it("anyOf, allOf, not, if/then/else", () => {
    expect(validate({ anyOf: [{ type: "string" }, { minimum: 3 }] }, 1)).toEqual([
      { path: "", message: "Instance does not match any subschemas." }
    ])
    expect(validate({ anyOf: [false, { type: "string" }] }, 1)).toEqual([
      { path: "", message: "Instance does not match any subschemas." }
    ])
    expect(validate({ allOf: [{ type: "number" }, { minimum: 3 }] }, 1)).toEqual([
      { path: "", message: "1 is less than 3." }
    ])
    expect(validate({ not: { type: "string" } }, "x")).toEqual([{
      path: "",
      message: "Instance matched \"not\" schema."
    }])
    const conditional = { if: { type: "string" }, then: { minLength: 3 }, else: { type: "null" } }
    expect(validate(conditional, "abc")).toEqual([])
    expect(validate(conditional, "a")).toEqual([{ path: "", message: "String is too short (1 < 3)." }])
    expect(validate(conditional, 1)).toEqual([{
      path: "",
      message: "Instance type \"number\" is invalid. Expected \"null\"."
    }])
  })

  it("additionalProperties: false reports the extra property's path", () => {
    const issues = validate({ properties: { a: {} }, additionalProperties: false }, { a: 1, b: 2 })
    expect(issues).toEqual([{ path: "/b", message: "False boolean schema." }])
  })

  it("keeps a wrapper error when nothing more specific exists", () => {
    const issues = validate({ type: "array", contains: { type: "string" } }, [1, 2])
    expect(issues).toEqual([{ path: "", message: "Array does not contain item matching schema." }])
  })

  it("respects $schema", () => {
    // draft-07: array-valued items is the tuple form
    const draft7 = { $schema: "http://json-schema.org/draft-07/schema#", items: [{ type: "string" }] }
    expect(validate(draft7, ["a", 1])).toEqual([])
    expect(validate(draft7, [1]).map((i) => i.path)).toEqual(["/0"])
    // 2020-12: prefixItems is the tuple form
    const draft2020 = { prefixItems: [{ type: "string" }], items: { type: "number" } }
    expect(validate(draft2020, ["a", 1])).toEqual([])
    expect(validate(draft2020, ["a", "b"]).map((i) => i.path)).toEqual(["/1"])
  })

  it("validates format", () => {
    expect(validate({ format: "email" }, "a@example.com")).toEqual([])
    expect(validate({ format: "email" }, "nope")).toEqual([{
      path: "",
      message: "String does not match format \"email\"."
    }])
  })

  it("caches per schema object and never modifies the caller's schema", () => {
    const schema = Object.freeze({
      $defs: Object.freeze({ s: Object.freeze({ type: "string" }) }),
      $ref: "#/$defs/s"
    })
    const before = JSON.stringify(schema)
    expect(validate(schema, 1)).toHaveLength(1)
    expect(validate(schema, "x")).toEqual([])
    expect(validate(schema, 2)).toHaveLength(1)
    expect(JSON.stringify(schema)).toBe(before)
    expect(Object.getOwnPropertyNames(schema)).toEqual(["$defs", "$ref"])
  })

  describe("never throws", () => {
    it("on garbage schemas", () => {
      for (const schema of [null, undefined, 5, "x", [], [{ type: "string" }]]) {
        const issues = validate(schema, 1)
        expect(issues).toHaveLength(1)
        expect(issues[0]?.path).toBe("")
        expect(issues[0]?.message).toMatch(/^invalid schema: /)
      }
      expect(validate(null, 1)).toEqual([{
        path: "",
        message: "invalid schema: expected an object or boolean, got null"
      }])
    })

    it("on schemas cfworker rejects", () => {
      const unresolved = validate({ $ref: "#/$defs/missing" }, 1)
      expect(unresolved).toHaveLength(1)
      expect(unresolved[0]?.path).toBe("")
      expect(unresolved[0]?.message).toMatch(/^invalid schema: Unresolved \$ref "#\/\$defs\/missing"\./)
      const pattern = validate({ pattern: "(" }, "a")
      expect(pattern).toHaveLength(1)
      expect(pattern[0]?.message).toMatch(/^invalid schema: Invalid regular expression/)
      const uncloneable = validate({ type: "string", default: () => "x" }, "a")
      expect(uncloneable).toHaveLength(1)
      expect(uncloneable[0]?.message).toMatch(/^invalid schema: /)
    })

    it("on non-JSON values", () => {
      const issues = validate({ type: "object" }, undefined)
      expect(issues).toHaveLength(1)
      expect(issues[0]?.path).toBe("")
      expect(issues[0]?.message).toMatch(/^invalid value: /)
    })
  })

  it("stops after 100 issues", () => {
    const issues = validate({ items: { type: "string" } }, Array.from({ length: 500 }, (_, i) => i))
    expect(issues).toHaveLength(100)
  })
})
