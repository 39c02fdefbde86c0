/**
 * An application built from Layers only (MCP 2026-07-28 and 2025-11-25 over Streamable HTTP),
 * called with the official SDK v2 client: a tools Layer whose handler needs a `Greeter` service
 * (provided by its own Layer), a resources Layer, `McpServer.layer` and the HTTP transport Layer
 * on 127.0.0.1, port 0. Also: a definition Layer's scope owns the definition (closing it removes
 * the tool), and the type-level contract of the definition Layers (services required, error
 * channel closed).
 */
import { assert, describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from "@modelcontextprotocol/client"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Content from "../../src/Content.js"
import * as McpClient from "../../src/McpClient.js"
import * as McpServer from "../../src/McpServer.js"
import * as Part from "../../src/Part.js"
import * as Prompt from "../../src/Prompt.js"
import * as Resource from "../../src/Resource.js"
import * as Tool from "../../src/Tool.js"
import * as InProcess from "../../src/transport/InProcess.js"
import * as StreamableHttp from "../../src/transport/StreamableHttp.js"
import { MODERN, promise, textOf } from "../fixtures/interop-http.js"

class Greeter extends Context.Tag("test/interop/Layers/Greeter")<Greeter, {
  readonly greet: (name: string) => string
}>() {}

const GreeterLive = Layer.succeed(Greeter, { greet: (name) => `Hello, ${name}!` })

const greet = Tool.make({
  name: "greet",
  description: "Greets someone",
  parameters: Schema.Struct({ name: Schema.String }),
  handler: ({ name }) => Effect.map(Greeter, (g) => g.greet(name))
})

const readme = Resource.make({
  uri: "app://readme",
  name: "readme",
  mimeType: "text/plain",
  handler: () => "built from Layers"
})

const note = Resource.template({
  uriTemplate: "app://notes/{id}",
  name: "note",
  handler: (vars) => `note ${String(vars.id)}`
})

// The application: nothing but Layers.
const ToolsLive = McpServer.tool(greet).pipe(Layer.provide(GreeterLive))
const ResourcesLive = Layer.mergeAll(McpServer.resource(readme), McpServer.resourceTemplate(note))
const AppLive = Layer.mergeAll(ToolsLive, ResourcesLive, StreamableHttp.layerServer({ port: 0 })).pipe(
  Layer.provide(McpServer.layer({ name: "layered-app", version: "1.0.0" }))
)

const CLIENT_INFO = { name: "layers-test", version: "0.0.0" }

const v2Client = (url: string, mode: "auto" | { readonly pin: "2026-07-28" }) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const client = new V2Client(CLIENT_INFO, {
        versionNegotiation: mode === "auto"
          ? { mode: "auto", probe: { timeoutMs: 2000, maxRetries: 0 } }
          : { mode: { pin: mode.pin } }
      })
      yield* promise("connect", () => client.connect(new V2Transport(new URL(url))))
      return client
    }),
    (c) => promise("close", () => c.close()).pipe(Effect.ignore)
  )

describe("an application made of Layers, called with the SDK v2 client", () => {
  it.scopedLive("tools Layer (needs Greeter), resources Layer, McpServer.layer, HTTP Layer", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(AppLive)
      const { url } = Context.get(context, StreamableHttp.ServerAddress)
      for (const mode of [{ pin: MODERN } as const, "auto" as const]) {
        const client = yield* v2Client(url, mode)
        expect(client.getServerVersion()).toMatchObject({ name: "layered-app", version: "1.0.0" })
        const tools = yield* promise("tools/list", () => client.listTools())
        expect(tools.tools.map((t) => t.name)).toEqual(["greet"])
        const called = yield* promise(
          "tools/call",
          () => client.callTool({ name: "greet", arguments: { name: "Ada" } })
        )
        assert.strictEqual(textOf(called.content), "Hello, Ada!")
        assert.notStrictEqual(called.isError, true)
        const resources = yield* promise("resources/list", () => client.listResources())
        expect(resources.resources.map((r) => r.uri)).toEqual(["app://readme"])
        const templates = yield* promise("resources/templates/list", () => client.listResourceTemplates())
        expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toEqual(["app://notes/{id}"])
        const read = yield* promise("resources/read", () => client.readResource({ uri: "app://readme" }))
        expect(read.contents).toEqual([{ uri: "app://readme", mimeType: "text/plain", text: "built from Layers" }])
        const readNote = yield* promise("resources/read", () => client.readResource({ uri: "app://notes/7" }))
        expect(readNote.contents).toMatchObject([{ uri: "app://notes/7", text: "note 7" }])
      }
    }))

  it.scopedLive("a definition Layer's scope owns the definition: closing it removes the tool", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(
        StreamableHttp.layerServer({ port: 0 }).pipe(
          Layer.provideMerge(McpServer.layer({ name: "scoped", version: "1.0.0" }))
        )
      )
      const server = Context.get(context, McpServer.McpServer)
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(Layer.provide(ToolsLive, Layer.succeed(McpServer.McpServer, server)), scope)
      expect((yield* server.snapshot).tools.map((t) => t.name)).toEqual(["greet"])
      const { url } = Context.get(context, StreamableHttp.ServerAddress)
      const client = yield* v2Client(url, { pin: MODERN })
      const called = yield* promise("tools/call", () => client.callTool({ name: "greet", arguments: { name: "Bo" } }))
      assert.strictEqual(textOf(called.content), "Hello, Bo!")
      yield* Scope.close(scope, Exit.void)
      expect((yield* server.snapshot).tools).toEqual([])
      // Without tools the server no longer advertises the tools capability (a new client sees it).
      expect((yield* server.capabilities).tools).toBeUndefined()
      const later = yield* v2Client(url, { pin: MODERN })
      expect(later.getServerCapabilities()?.tools).toBeUndefined()
      expect(client.getServerCapabilities()?.tools).toEqual({})
      // The same definition twice is refused with DefinitionError, from the Layer's error channel.
      const twice = Layer.merge(McpServer.tool(greet), McpServer.tool(greet)).pipe(
        Layer.provide(GreeterLive),
        Layer.provide(Layer.succeed(McpServer.McpServer, server))
      )
      const error = yield* Effect.flip(Effect.scoped(Layer.build(twice)))
      assert.strictEqual(error._tag, "DefinitionError")
      expect((yield* server.snapshot).tools).toEqual([])
    }))

  it.scoped("McpServer.part and McpServer.prompt: a part built by an Effect, registered and removed as a whole", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "parts", version: "1.0.0" })
      const provided = Layer.succeed(McpServer.McpServer, server)
      const built = Effect.map(Greeter, (g) =>
        Part.make({
          tools: [Tool.make({ name: "hello", handler: () => g.greet("part") })],
          resources: [readme]
        }))
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(
        Layer.mergeAll(McpServer.part(built), McpServer.prompt(Prompt.make({ name: "p", handler: () => "hi" }))).pipe(
          Layer.provide(GreeterLive),
          Layer.provide(provided)
        ),
        scope
      )
      const during = yield* server.snapshot
      expect(during.tools.map((t) => t.name)).toEqual(["hello"])
      expect(during.resources.map((r) => r.uri)).toEqual(["app://readme"])
      expect(during.prompts.map((p) => p.name)).toEqual(["p"])
      const client = yield* McpClient.connect(yield* InProcess.clientFromService().pipe(Effect.provide(provided)))
      assert.strictEqual(Content.textOf(yield* client.callTool("hello")), "Hello, part!")
      yield* Scope.close(scope, Exit.void)
      const after = yield* server.snapshot
      expect([after.tools, after.resources, after.prompts]).toEqual([[], [], []])
      // A part whose second definition clashes: the Layer fails and the first one is removed again.
      const first = Tool.make({ name: "first", handler: () => "1" })
      const clash = McpServer.part(Part.make({ tools: [first, greet] })).pipe(
        Layer.provide(GreeterLive),
        Layer.provideMerge(McpServer.tool(Tool.make({ name: "greet", handler: () => "taken" }))),
        Layer.provide(provided)
      )
      const error = yield* Effect.flip(Effect.scoped(Layer.build(clash)))
      assert.strictEqual(error._tag, "DefinitionError")
      expect((yield* server.snapshot).tools).toEqual([])
    }))

  it("types: a definition Layer requires its handler's services; handler errors are closed", () => {
    expectTypeOf(McpServer.tool(greet)).toEqualTypeOf<
      Layer.Layer<never, McpServer.DefinitionError, McpServer.McpServer | Greeter>
    >()
    expectTypeOf(ToolsLive).toEqualTypeOf<Layer.Layer<never, McpServer.DefinitionError, McpServer.McpServer>>()
    expectTypeOf(McpServer.resource(readme)).toEqualTypeOf<
      Layer.Layer<never, McpServer.DefinitionError, McpServer.McpServer>
    >()
    // @ts-expect-error: the tool's handler needs Greeter, so its Layer is not a Layer without requirements
    const missing: Layer.Layer<never, McpServer.DefinitionError, McpServer.McpServer> = McpServer.tool(greet)
    // @ts-expect-error: a handler may fail only with ToolError, McpError or InputRequired
    const failing = McpServer.tool(Tool.make({ name: "f", handler: () => Effect.fail("boom") }))
    // @ts-expect-error: same for a plain Error
    const failingError = McpServer.tool(Tool.make({ name: "g", handler: () => Effect.fail(new Error("boom")) }))
    const allowed = McpServer.tool(
      Tool.make({ name: "h", handler: () => Effect.fail(new Tool.ToolError({ message: "no" })) })
    )
    expectTypeOf(allowed).toEqualTypeOf<Layer.Layer<never, McpServer.DefinitionError, McpServer.McpServer>>()
    // @ts-expect-error: the server Layer of an app requires what the options' handlers need
    const app: Layer.Layer<McpServer.McpServer, McpServer.DefinitionError> = McpServer.layer({
      name: "a",
      version: "1",
      tools: [greet]
    })
    assert.isDefined([missing, failing, failingError, app])
  })
})
