/** Parts: combine (every duplicate named), prefix, and parts built from Layer-provided dependencies. */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { Content, InProcess, McpClient, McpServer, Middleware, Part, Prompt, Resource, Skill, Tool } from "presa-mcp"

const tool = (name: string) => Tool.fromJsonSchema({ name, handler: () => name })

class Clock extends Context.Tag("test/Clock")<Clock, { readonly now: () => string }>() {}

describe("Part", () => {
  it.effect("combine names every duplicate (tool, prompt, resource, template, skill)", () =>
    Effect.gen(function*() {
      const skill = yield* Skill.make("dup", { "SKILL.md": "---\nname: dup\ndescription: d\n---\nbody\n" })
      const a = Part.make({
        tools: [tool("add")],
        prompts: [Prompt.make({ name: "greet", handler: () => "hi" })],
        resources: [Resource.make({ uri: "file:///a", name: "a", handler: () => "a" })],
        resourceTemplates: [Resource.template({ uriTemplate: "x://{id}", name: "x", handler: () => "x" })],
        skills: [skill]
      })
      const result = Part.combine([a, a])
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result)) {
        expect(result.left.duplicates).toEqual([
          "tool add",
          "resource file:///a",
          "resourceTemplate x://{id}",
          "prompt greet",
          "skill skill://dup/SKILL.md"
        ])
      }
    }))

  it("combine concatenates in order and joins instructions", () => {
    const result = Part.combine([
      { tools: [tool("a")], instructions: "A does a." },
      { tools: [tool("b")] },
      { tools: [tool("c")], instructions: "C does c." }
    ])
    assert.isTrue(Either.isRight(result))
    if (Either.isRight(result)) {
      expect(result.right.tools?.map((t) => t.name)).toEqual(["a", "b", "c"])
      assert.strictEqual(result.right.instructions, "A does a.\n\nC does c.")
    }
  })

  it("prefix renames tools and prompts, keeps URIs", () => {
    const p = Part.prefix({
      tools: [tool("now")],
      prompts: [Prompt.make({ name: "tz", handler: () => "x" })],
      resources: [Resource.make({ uri: "clock://now", name: "now", handler: () => "x" })]
    }, "clock")
    expect(p.tools?.map((t) => t.name)).toEqual(["clock_now"])
    expect(p.prompts?.map((t) => t.name)).toEqual(["clock_tz"])
    expect(p.resources?.map((r) => r.uri)).toEqual(["clock://now"])
  })

  it.scoped("a part built from a Layer-provided dependency; the server from parts serves both", () =>
    Effect.gen(function*() {
      const clockPart = Effect.map(
        Clock,
        (clock) => Part.prefix({ tools: [Tool.fromJsonSchema({ name: "now", handler: () => clock.now() })] }, "clock")
      )
      const server = yield* Part.server({ name: "parts", version: "1" }, [clockPart, { tools: [tool("echo")] }]).pipe(
        Effect.provide(Layer.succeed(Clock, { now: () => "12:00" }))
      )
      const client = yield* McpClient.connect(yield* InProcess.client(server))
      expect((yield* client.listAllTools).map((t) => t.name)).toEqual(["clock_now", "echo"])
      assert.strictEqual(Content.textOf(yield* client.callTool("clock_now")), "12:00")
      assert.isUndefined(client.info.capabilities.extensions)
    }))

  it.scoped("duplicates across parts fail the server with PartError; as a Layer too", () =>
    Effect.gen(function*() {
      const e = yield* Effect.flip(
        Part.server({ name: "p", version: "1" }, [{ tools: [tool("x")] }, { tools: [tool("x")] }])
      )
      assert.strictEqual(e._tag, "PartError")
      const layerError = yield* Effect.flip(
        Layer.build(Part.layer({ name: "p", version: "1" }, [{ tools: [tool("y")] }, { tools: [tool("y")] }]))
      )
      assert.strictEqual(layerError._tag, "PartError")
      const ok = yield* Layer.build(Part.layer({ name: "p", version: "1" }, [{ tools: [tool("z")] }]))
      const server = Context.get(ok, McpServer.McpServer)
      expect((yield* McpServer.capabilities(server)).tools).toEqual({})
    }))

  it.scoped("a part's handler reads a service per request: from a middleware, or from the app's Layer", () =>
    Effect.gen(function*() {
      class Caller extends Context.Tag("test/Caller")<Caller, { readonly name: string }>() {}
      const part = Part.make({
        tools: [
          Tool.fromJsonSchema({ name: "time", handler: () => Effect.map(Clock, (c) => c.now()) }),
          Tool.fromJsonSchema({ name: "caller", handler: () => Effect.map(Caller, (c) => c.name) })
        ]
      })
      const layer = Part.layer({
        name: "parts",
        version: "1",
        middleware: [Middleware.provide(Caller, (req) => Effect.succeed({ name: req.ctx.clientInfo?.name ?? "?" }))]
      }, [part]).pipe(Layer.provide(Layer.succeed(Clock, { now: () => "13:00" })))
      const server = Context.get(yield* Layer.build(layer), McpServer.McpServer)
      const client = yield* McpClient.connect(yield* InProcess.client(server), { name: "zoe" })
      assert.strictEqual(Content.textOf(yield* client.callTool("time")), "13:00")
      assert.strictEqual(Content.textOf(yield* client.callTool("caller")), "zoe")
    }))
})
