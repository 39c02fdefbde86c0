import { describe, expect, it } from "@effect/vitest"
import * as JsonSchema from "../src/JsonSchema.js"

const { formatIssues, validate } = JsonSchema

const one = (path: string, message: string) => [{ path, message }]

describe("JsonSchema.validate", () => {
  describe("type", () => {
    it("accepts matching primitive types", () => {
      expect(validate({ type: "string" }, "x")).toEqual([])
      expect(validate({ type: "number" }, 1.5)).toEqual([])
      expect(validate({ type: "number" }, 5)).toEqual([])
      expect(validate({ type: "integer" }, 5)).toEqual([])
      expect(validate({ type: "integer" }, 5.0)).toEqual([])
      expect(validate({ type: "boolean" }, false)).toEqual([])
      expect(validate({ type: "null" }, null)).toEqual([])
      expect(validate({ type: "array" }, [])).toEqual([])
      expect(validate({ type: "object" }, {})).toEqual([])
    })

    it("reports the JSON type that was found", () => {
      expect(validate({ type: "number" }, "1")).toEqual(one("", "expected number, got string"))
      expect(validate({ type: "string" }, 1)).toEqual(one("", "expected string, got number"))
      expect(validate({ type: "string" }, null)).toEqual(one("", "expected string, got null"))
      expect(validate({ type: "string" }, true)).toEqual(one("", "expected string, got boolean"))
      expect(validate({ type: "object" }, [])).toEqual(one("", "expected object, got array"))
      expect(validate({ type: "array" }, {})).toEqual(one("", "expected array, got object"))
      expect(validate({ type: "null" }, 0)).toEqual(one("", "expected null, got number"))
      expect(validate({ type: "boolean" }, "true")).toEqual(one("", "expected boolean, got string"))
    })

    it("integer rejects 5.5 and accepts 5", () => {
      expect(validate({ type: "integer" }, 5.5)).toEqual(one("", "expected integer, got number"))
      expect(validate({ type: "integer" }, "5")).toEqual(one("", "expected integer, got string"))
      expect(validate({ type: "integer" }, 5)).toEqual([])
    })

    it("supports type arrays", () => {
      const schema = { type: ["string", "null"] }
      expect(validate(schema, "a")).toEqual([])
      expect(validate(schema, null)).toEqual([])
      expect(validate(schema, 1)).toEqual(one("", "expected string or null, got number"))
      expect(validate({ type: ["integer", "boolean"] }, 1.5)).toEqual(
        one("", "expected integer or boolean, got number")
      )
    })

    it("stops at the type failure for that node", () => {
      const schema = { type: "string", minLength: 10, enum: ["a"], pattern: "^x$" }
      expect(validate(schema, 1)).toEqual(one("", "expected string, got number"))
      const obj = { type: "object", required: ["a"], additionalProperties: false }
      expect(validate(obj, [1])).toEqual(one("", "expected object, got array"))
    })
  })

  describe("enum and const", () => {
    it("enum", () => {
      const schema = { enum: ["a", "b"] }
      expect(validate(schema, "a")).toEqual([])
      expect(validate(schema, "c")).toEqual(one("", "must be one of \"a\", \"b\""))
      expect(validate({ enum: [1, null, { x: [1] }] }, { x: [1] })).toEqual([])
      expect(validate({ enum: [1, null] }, "1")).toEqual(one("", "must be one of 1, null"))
    })

    it("const uses deep equality", () => {
      expect(validate({ const: 42 }, 42)).toEqual([])
      expect(validate({ const: 42 }, 43)).toEqual(one("", "must be equal to 42"))
      expect(validate({ const: { a: [1, { b: 2 }], c: null } }, { c: null, a: [1, { b: 2 }] })).toEqual([])
      expect(validate({ const: { a: [1, 2] } }, { a: [2, 1] })).toEqual(one("", "must be equal to {\"a\":[1,2]}"))
      expect(validate({ const: { a: 1 } }, { a: 1, b: 2 })).toEqual(one("", "must be equal to {\"a\":1}"))
      expect(validate({ const: [1] }, { 0: 1 })).toEqual(one("", "must be equal to [1]"))
      expect(validate({ const: null }, null)).toEqual([])
      expect(validate({ const: "x" }, "y")).toEqual(one("", "must be equal to \"x\""))
    })
  })

  describe("strings", () => {
    it("minLength / maxLength count code points", () => {
      expect(validate({ minLength: 3 }, "ab")).toEqual(one("", "must be at least 3 characters long"))
      expect(validate({ maxLength: 3 }, "abcd")).toEqual(one("", "must be at most 3 characters long"))
      expect(validate({ minLength: 3, maxLength: 3 }, "abc")).toEqual([])
      // three astral code points are six UTF-16 code units
      expect(validate({ maxLength: 3 }, "😀😀😀")).toEqual([])
      expect(validate({ minLength: 2 }, "😀")).toEqual(one("", "must be at least 2 characters long"))
    })

    it("pattern", () => {
      expect(validate({ pattern: "^a+$" }, "aaa")).toEqual([])
      expect(validate({ pattern: "^a+$" }, "aab")).toEqual(one("", "must match pattern \"^a+$\""))
      // unanchored: a match anywhere is enough; the u flag enables \p{...}
      expect(validate({ pattern: "b" }, "abc")).toEqual([])
      expect(validate({ pattern: "^\\p{Lu}$" }, "Ä")).toEqual([])
    })

    it("an invalid pattern is an issue, not a throw", () => {
      const issues = validate({ pattern: "(" }, "a")
      expect(issues).toEqual(one("", "invalid schema: pattern \"(\" is not a valid regular expression"))
    })

    it("string keywords ignore non-strings", () => {
      expect(validate({ minLength: 3, pattern: "^a$" }, 1)).toEqual([])
    })
  })

  describe("numbers", () => {
    it("minimum / maximum", () => {
      expect(validate({ minimum: 1 }, 1)).toEqual([])
      expect(validate({ minimum: 1 }, 0)).toEqual(one("", "must be >= 1"))
      expect(validate({ maximum: 10 }, 10)).toEqual([])
      expect(validate({ maximum: 10 }, 11)).toEqual(one("", "must be <= 10"))
    })

    it("exclusiveMinimum / exclusiveMaximum (2020-12 numeric form)", () => {
      expect(validate({ exclusiveMinimum: 1 }, 1)).toEqual(one("", "must be > 1"))
      expect(validate({ exclusiveMinimum: 1 }, 1.5)).toEqual([])
      expect(validate({ exclusiveMaximum: 10 }, 10)).toEqual(one("", "must be < 10"))
      expect(validate({ exclusiveMaximum: 10 }, 9.99)).toEqual([])
    })

    it("reports every failing bound", () => {
      expect(validate({ minimum: 5, exclusiveMinimum: 5 }, 4)).toEqual([
        { path: "", message: "must be >= 5" },
        { path: "", message: "must be > 5" }
      ])
    })

    it("numeric keywords ignore non-numbers", () => {
      expect(validate({ minimum: 1 }, "0")).toEqual([])
    })
  })

  describe("arrays", () => {
    it("minItems / maxItems", () => {
      expect(validate({ minItems: 2 }, [1])).toEqual(one("", "must have at least 2 items"))
      expect(validate({ maxItems: 2 }, [1, 2, 3])).toEqual(one("", "must have at most 2 items"))
      expect(validate({ minItems: 2, maxItems: 2 }, [1, 2])).toEqual([])
    })

    it("items validates every element", () => {
      const schema = { type: "array", items: { type: "string" } }
      expect(validate(schema, ["a", "b"])).toEqual([])
      expect(validate(schema, ["a", 1, "b", null])).toEqual([
        { path: "/1", message: "expected string, got number" },
        { path: "/3", message: "expected string, got null" }
      ])
    })

    it("tolerates boolean items", () => {
      expect(validate({ items: true }, [1, "x"])).toEqual([])
      expect(validate({ items: false }, [])).toEqual([])
      expect(validate({ items: false }, [1])).toEqual(one("/0", "is not allowed"))
    })

    it("tolerates the draft-07 tuple form of items", () => {
      const schema = { items: [{ type: "string" }, { type: "number" }] }
      expect(validate(schema, ["a", 1, "extra"])).toEqual([])
      expect(validate(schema, [1])).toEqual(one("/0", "expected string, got number"))
    })
  })

  describe("objects", () => {
    it("required reports the path of the missing property", () => {
      const schema = { type: "object", required: ["text", "n"] }
      expect(validate(schema, { text: "x", n: 1 })).toEqual([])
      expect(validate(schema, { n: 1 })).toEqual(one("/text", "is required"))
      expect(validate(schema, {})).toEqual([
        { path: "/text", message: "is required" },
        { path: "/n", message: "is required" }
      ])
    })

    it("required ignores inherited properties", () => {
      expect(validate({ required: ["toString", "constructor"] }, {})).toEqual([
        { path: "/toString", message: "is required" },
        { path: "/constructor", message: "is required" }
      ])
    })

    it("properties validates present properties only", () => {
      const schema = { properties: { a: { type: "string" }, b: { type: "number" } } }
      expect(validate(schema, {})).toEqual([])
      expect(validate(schema, { a: 1, b: "x", c: true })).toEqual([
        { path: "/a", message: "expected string, got number" },
        { path: "/b", message: "expected number, got string" }
      ])
    })

    it("properties does not resolve keys through the prototype", () => {
      expect(validate({ properties: {} }, { constructor: 1, __proto__x: 2 })).toEqual([])
      expect(validate({ properties: {}, additionalProperties: false }, { constructor: 1 })).toEqual(
        one("/constructor", "is not allowed")
      )
    })

    it("additionalProperties: false reports each extra property", () => {
      const schema = { type: "object", properties: { a: { type: "string" } }, additionalProperties: false }
      expect(validate(schema, { a: "x" })).toEqual([])
      expect(validate(schema, { a: "x", b: 1, c: 2 })).toEqual([
        { path: "/b", message: "is not allowed" },
        { path: "/c", message: "is not allowed" }
      ])
    })

    it("additionalProperties: true and schema-valued", () => {
      expect(validate({ properties: {}, additionalProperties: true }, { x: 1 })).toEqual([])
      const schema = { properties: { name: { type: "string" } }, additionalProperties: { type: "number" } }
      expect(validate(schema, { name: "n", x: 1, y: 2 })).toEqual([])
      expect(validate(schema, { name: "n", x: "1" })).toEqual(one("/x", "expected number, got string"))
    })

    it("patternProperties counts as declared for additionalProperties", () => {
      const schema = {
        patternProperties: { "^x-": { type: "string" } },
        additionalProperties: false
      }
      expect(validate(schema, { "x-a": "ok" })).toEqual([])
      expect(validate(schema, { "x-a": 1, y: 1 })).toEqual([
        { path: "/x-a", message: "expected string, got number" },
        { path: "/y", message: "is not allowed" }
      ])
    })
  })

  describe("paths", () => {
    const schema = {
      type: "object",
      properties: { numbers: { type: "array", items: { type: "number" } } },
      required: ["numbers"]
    }

    it("nested array element", () => {
      const issues = validate(schema, { numbers: ["one"] })
      expect(issues).toEqual(one("/numbers/0", "expected number, got string"))
      expect(formatIssues("Invalid arguments", issues)).toBe(
        "Invalid arguments at /numbers/0: expected number, got string"
      )
      expect(validate(schema, { numbers: [1, 2.5] })).toEqual([])
    })

    it("deeply nested objects", () => {
      const deep = {
        properties: {
          a: { properties: { b: { items: { properties: { c: { type: "boolean" } }, required: ["d"] } } } }
        }
      }
      expect(validate(deep, { a: { b: [{ c: true, d: 1 }, { c: "no" }] } })).toEqual([
        { path: "/a/b/1/d", message: "is required" },
        { path: "/a/b/1/c", message: "expected boolean, got string" }
      ])
    })

    it("escapes ~ and / in property names (RFC 6901)", () => {
      const schema = {
        properties: { "a/b": { type: "string" }, "c~d": { type: "string" } },
        required: ["e/~f"],
        additionalProperties: false
      }
      expect(validate(schema, { "a/b": 1, "c~d": 2, "~/": 3 })).toEqual([
        { path: "/e~1~0f", message: "is required" },
        { path: "/a~1b", message: "expected string, got number" },
        { path: "/c~0d", message: "expected string, got number" },
        { path: "/~0~1", message: "is not allowed" }
      ])
    })
  })

  describe("boolean schemas", () => {
    it("true accepts everything, false rejects everything", () => {
      expect(validate(true, { any: ["thing"] })).toEqual([])
      expect(validate(false, 1)).toEqual(one("", "is not allowed"))
      expect(validate({ properties: { a: false } }, { a: 1 })).toEqual(one("/a", "is not allowed"))
      expect(validate({ properties: { a: false } }, {})).toEqual([])
    })

    it("the empty schema accepts everything", () => {
      for (const value of [null, 0, "", [], {}, true]) expect(validate({}, value)).toEqual([])
    })
  })

  describe("robustness", () => {
    it("ignores unknown keywords and malformed keyword values", () => {
      expect(validate({ format: "email", anyOf: [{ type: "number" }], "x-foo": 1 }, "not-an-email")).toEqual([])
      expect(validate({ type: 5, minLength: "3", required: "a", enum: "a", properties: [] }, "b")).toEqual([])
    })

    it("never throws on garbage schemas", () => {
      for (const schema of [null, undefined, 5, "x", [], [{ type: "string" }], () => 1, Symbol("s"), 10n]) {
        const issues = validate(schema, { a: 1 })
        expect(issues).toHaveLength(1)
        expect(issues[0]?.path).toBe("")
        expect(issues[0]?.message).toMatch(/^invalid schema: expected an object or boolean, got /)
      }
      expect(validate(null, 1)).toEqual(one("", "invalid schema: expected an object or boolean, got null"))
      expect(validate([], 1)).toEqual(one("", "invalid schema: expected an object or boolean, got array"))
      expect(validate({ properties: { a: 5 } }, { a: 1 })).toEqual(
        one("/a", "invalid schema: expected an object or boolean, got number")
      )
    })

    it("never throws on non-JSON values", () => {
      expect(validate({ type: "object" }, undefined)).toEqual(one("", "expected object, got undefined"))
      expect(validate({ type: "number" }, 1n)).toEqual(one("", "expected number, got bigint"))
      expect(validate({ properties: { a: { type: "string" } } }, { a: undefined })).toEqual(
        one("/a", "expected string, got undefined")
      )
      const throwing = {
        get a() {
          throw new Error("boom")
        }
      }
      expect(validate({ properties: { a: { type: "string" } } }, throwing)).toEqual(
        one("", "validation failed: boom")
      )
    })

    it("bounds recursion depth on cyclic input", () => {
      const schema: Record<string, unknown> = { type: "object" }
      schema["additionalProperties"] = schema
      const value: Record<string, unknown> = {}
      value["self"] = value
      const issues = validate(schema, value)
      expect(issues).toHaveLength(1)
      expect(issues[0]?.message).toBe("exceeds the maximum nesting depth of 64")
      expect(issues[0]?.path.startsWith("/self/self/self")).toBe(true)
    })

    it("stops after 100 issues", () => {
      const issues = validate({ items: { type: "string" } }, Array.from({ length: 1000 }, (_, i) => i))
      expect(issues).toHaveLength(100)
      expect(issues[99]).toEqual({ path: "/99", message: "expected string, got number" })
    })

    it("does not modify the schema", () => {
      const schema = Object.freeze({
        type: "object",
        properties: Object.freeze({ a: Object.freeze({ pattern: "^a" }) })
      })
      expect(validate(schema, { a: "b" })).toEqual(one("/a", "must match pattern \"^a\""))
    })
  })
})

describe("JsonSchema.validate: values JSON cannot carry", () => {
  it("NaN and ±Infinity are not numbers (nor integers), at the root and nested", () => {
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(JsonSchema.validate({ type: "number" }, value).length).toBeGreaterThan(0)
      expect(JsonSchema.validate({ type: "integer" }, value).length).toBeGreaterThan(0)
      const nested = JsonSchema.validate(
        { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] },
        { sum: value }
      )
      expect(nested.map((i) => i.path)).toEqual(["/sum"])
    }
    expect(JsonSchema.validate({ type: "number" }, 1.5)).toEqual([])
  })
})

describe("JsonSchema.formatIssues", () => {
  it("formats one issue", () => {
    expect(formatIssues("Invalid arguments", [{ path: "/numbers/0", message: "expected number, got string" }])).toBe(
      "Invalid arguments at /numbers/0: expected number, got string"
    )
  })

  it("joins several issues with '; '", () => {
    expect(
      formatIssues("Invalid arguments", [{ path: "/a", message: "x" }, { path: "/b", message: "y" }])
    ).toBe("Invalid arguments at /a: x; at /b: y")
  })

  it("prints the root path as /", () => {
    expect(formatIssues("Invalid arguments", [{ path: "", message: "expected object, got array" }])).toBe(
      "Invalid arguments at /: expected object, got array"
    )
  })

  it("returns the prefix alone when there are no issues", () => {
    expect(formatIssues("Invalid arguments", [])).toBe("Invalid arguments")
  })
})
