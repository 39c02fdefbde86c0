/**
 * Type-level tests for typed services (checked by `npm run typecheck`, which includes test/):
 * what a middleware provides is visible to handlers and absent from the server's requirements;
 * what nothing provides is required by `McpServer.make` / `McpServer.layer`; live additions
 * require only what the server does not offer. The `it` blocks only make vitest count the file.
 */
import { describe, expectTypeOf, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { McpServer, Middleware, Part, Prompt, RequestContext, Resource, Tool } from "presa-mcp"

class CurrentUser extends Context.Tag("types/CurrentUser")<CurrentUser, { readonly name: string }>() {}
class Db extends Context.Tag("types/Db")<Db, { readonly get: (key: string) => string }>() {}
class Audit extends Context.Tag("types/Audit")<Audit, { readonly record: (line: string) => Effect.Effect<void> }>() {}

const whoami = Tool.fromJsonSchema({
  name: "whoami",
  handler: () =>
    Effect.gen(function*() {
      const ctx = yield* RequestContext.RequestContext
      const user = yield* CurrentUser
      return `${user.name} (${ctx.era})`
    })
})
const lookup = Tool.fromJsonSchema({
  name: "lookup",
  handler: (args) => Effect.map(Db, (db) => db.get(String(args.key)))
})
const plain = Tool.fromJsonSchema({ name: "plain", handler: () => "hi" })
const currentUser = Middleware.provide(CurrentUser, (request) => Effect.succeed({ name: request.ctx.era }))
const audited = Middleware.make((request, next) =>
  Effect.flatMap(Audit, (audit) => Effect.zipRight(audit.record(request.method), next))
)

describe("typed services", () => {
  it("constructors infer a handler's services besides RequestContext", () => {
    expectTypeOf(whoami).toEqualTypeOf<Tool.Tool<CurrentUser>>()
    expectTypeOf(lookup).toEqualTypeOf<Tool.Tool<Db>>()
    expectTypeOf(plain).toEqualTypeOf<Tool.Tool>()
    expectTypeOf(Tool.make({
      name: "typed",
      parameters: Schema.Struct({ key: Schema.String }),
      handler: ({ key }) => Effect.map(Db, (db) => db.get(key))
    })).toEqualTypeOf<
      Tool.SchemaTool<{ readonly key: string }, { readonly key: string }, never, never, never, never, Db>
    >()
    expectTypeOf(Resource.make({ uri: "x://a", name: "a", handler: () => Effect.map(Db, (db) => db.get("a")) }))
      .toEqualTypeOf<Resource.Resource<Db>>()
    expectTypeOf(Resource.template({
      uriTemplate: "x://{id}",
      name: "t",
      handler: ({ id }) => Effect.map(Db, (db) => db.get(String(id)))
    })).toEqualTypeOf<Resource.ResourceTemplate<Db>>()
    expectTypeOf(Prompt.make({ name: "p", handler: () => Effect.map(CurrentUser, (u) => u.name) }))
      .toEqualTypeOf<Prompt.Prompt<CurrentUser>>()
  })

  it("a service a middleware provides is not required by the server", () => {
    const server = McpServer.make({ name: "s", version: "1", tools: [whoami, plain], middleware: [currentUser] })
    expectTypeOf(server).toEqualTypeOf<
      Effect.Effect<McpServer.McpServer<CurrentUser>, McpServer.DefinitionError, never>
    >()
  })

  it("a service nothing provides is required by make and layer", () => {
    expectTypeOf(McpServer.layer({ name: "s", version: "1", tools: [lookup, whoami], middleware: [currentUser] }))
      .toEqualTypeOf<Layer.Layer<McpServer.McpServer, McpServer.DefinitionError, Db>>()
    expectTypeOf(McpServer.layer({ name: "s", version: "1", tools: [lookup, whoami] }))
      .toEqualTypeOf<Layer.Layer<McpServer.McpServer, McpServer.DefinitionError, Db | CurrentUser>>()
    // Every kind of definition counts, and so does what a middleware itself needs.
    const all = McpServer.make({
      name: "s",
      version: "1",
      prompts: [Prompt.make({ name: "p", handler: () => Effect.map(CurrentUser, (u) => u.name) })],
      resourceTemplates: [Resource.template({
        uriTemplate: "x://{id}",
        name: "t",
        handler: () => "x",
        complete: { id: () => Effect.map(Db, (db) => [db.get("ids")]) }
      })],
      middleware: [audited]
    })
    expectTypeOf(all).toEqualTypeOf<
      Effect.Effect<McpServer.McpServer<CurrentUser | Db | Audit>, McpServer.DefinitionError, CurrentUser | Db | Audit>
    >()
  })

  it("untyped uses keep compiling: inline middlewares and definitions without services", () => {
    const server = McpServer.make({
      name: "s",
      version: "1",
      tools: [{ name: "inline", handler: () => "x" }],
      middleware: [(_request, next) => next]
    })
    expectTypeOf(server).toEqualTypeOf<Effect.Effect<McpServer.McpServer, McpServer.DefinitionError, never>>()
  })

  it("a middleware must provide what it declares", () => {
    // @ts-expect-error `next` still needs CurrentUser: this middleware does not provide it
    const _bad: Middleware.Middleware<CurrentUser> = (_request, next) => next
    // @ts-expect-error a handler needing CurrentUser is not a tool without services
    const _tool: Tool.Tool = whoami
  })

  it("live additions require only what the server does not offer", () => {
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "s", version: "1", tools: [whoami], middleware: [currentUser] })
      const both = Tool.fromJsonSchema({
        name: "both",
        handler: () => Effect.zipWith(CurrentUser, Db, (u, db) => db.get(u.name))
      })
      expectTypeOf(McpServer.addTool(server, both)).toEqualTypeOf<
        Effect.Effect<void, McpServer.DefinitionError, Db>
      >()
      expectTypeOf(McpServer.addTool(server, whoami)).toEqualTypeOf<
        Effect.Effect<void, McpServer.DefinitionError, never>
      >()
      // A server seen without its services (e.g. through the McpServer Tag) offers none.
      const untyped: McpServer.McpServer = server
      expectTypeOf(McpServer.addTool(untyped, whoami)).toEqualTypeOf<
        Effect.Effect<void, McpServer.DefinitionError, CurrentUser>
      >()
    })
  })

  it("parts carry their handlers' services into Part.server / Part.layer", () => {
    const part = Part.make({ tools: [whoami, lookup], prompts: [Prompt.make({ name: "p", handler: () => "p" })] })
    expectTypeOf(part).toEqualTypeOf<Part.Part<CurrentUser | Db>>()
    const promptsOnly = { prompts: [Prompt.make({ name: "q", handler: () => Effect.map(Db, (db) => db.get("q")) })] }
    expectTypeOf(Part.layer({ name: "s", version: "1" }, [promptsOnly]))
      .toEqualTypeOf<Layer.Layer<McpServer.McpServer, Part.PartError | McpServer.DefinitionError, Db>>()
    const built = Effect.map(
      Audit,
      (audit) => Part.make({ tools: [Tool.fromJsonSchema({ name: "a", handler: () => audit.record("a") })] })
    )
    expectTypeOf(Part.layer({ name: "s", version: "1", middleware: [currentUser] }, [part, built, { tools: [plain] }]))
      .toEqualTypeOf<Layer.Layer<McpServer.McpServer, Part.PartError | McpServer.DefinitionError, Db | Audit>>()
  })
})
