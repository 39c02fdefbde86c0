/** Every request runs in a span named after its method, with era, version, target and outcome. */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Tracer from "effect/Tracer"
import { McpServer, Tool } from "presa-mcp"
import { connect } from "./support/Wire.js"

const recording = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.tracerWith((base) => {
    const spans: Array<Tracer.Span> = []
    const tracer = Tracer.make({
      span: (...args) => {
        const span = base.span(...args)
        spans.push(span)
        return span
      },
      context: base.context
    })
    return Effect.map(Effect.withTracer(self, tracer), (a) => ({ a, spans }))
  })

describe("instrumentation", () => {
  it.effect.each(["2026-07-28", "2025-11-25"] as const)(
    "tools/call spans carry era, version, name, outcome (%s)",
    (rev) =>
      Effect.gen(function*() {
        const server = yield* McpServer.make({
          name: "traced",
          version: "1",
          tools: [
            Tool.make({ name: "ok", handler: () => "fine" }),
            Tool.make({ name: "boom", handler: () => Effect.die(new TypeError("x")) })
          ]
        })
        const conn = yield* connect(server, rev)
        const { spans } = yield* recording(Effect.gen(function*() {
          yield* conn.call("tools/call", { name: "ok" })
          yield* conn.call("tools/call", { name: "boom" })
          yield* conn.call("tools/call", { name: "missing" })
        }))
        const calls = spans.filter((s) => s.name === "tools/call")
        expect(calls).toHaveLength(3)
        const attrs = calls.map((s) => Object.fromEntries(s.attributes))
        for (const a of attrs) {
          assert.strictEqual(a["mcp.era"], rev === "2026-07-28" ? "modern" : "legacy")
          assert.strictEqual(a["mcp.protocol_version"], rev)
          assert.strictEqual(a["mcp.method"], "tools/call")
        }
        expect(attrs.map((a) => [a["mcp.name"], a["mcp.outcome"], a["mcp.error.code"]])).toEqual([
          ["ok", "ok", undefined],
          ["boom", "tool_error", undefined],
          ["missing", "error", -32602]
        ])
      })
  )
})
