/**
 * Typed services: handlers that use the app's services and a service a middleware provides, with
 * the server composed as a Layer.
 *
 *   npx tsx examples/services.ts         (http://127.0.0.1:3002/mcp)
 *
 * - `Notes` is the app's own service (an in-memory store here; a database layer in a real app):
 *   `McpServer.layer` requires it, because the tools need it and no middleware provides it.
 * - `CurrentUser` is provided per request by a middleware (`Middleware.provide`), from the
 *   verified token's subject or else the client's name: the tools `yield*` it, and the server
 *   does not require it.
 * - `Middleware.timing` logs each request's duration; `Middleware.rateLimit` answers 429 with
 *   `data.retryAfterMs` once a caller has used up its 20 tokens (refilled at 5 per second).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { McpServer, Middleware, Tool } from "presa-mcp"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"

class Notes extends Context.Tag("example/Notes")<Notes, {
  readonly add: (owner: string, text: string) => Effect.Effect<number>
  readonly of: (owner: string) => Effect.Effect<ReadonlyArray<string>>
}>() {
  static readonly InMemory = Layer.effect(
    Notes,
    Effect.map(Ref.make<ReadonlyArray<{ readonly owner: string; readonly text: string }>>([]), (store) => ({
      add: (owner, text) =>
        Ref.modify(store, (all) => {
          const next = [...all, { owner, text }]
          return [next.filter((n) => n.owner === owner).length, next]
        }),
      of: (owner) => Effect.map(Ref.get(store), (all) => all.filter((n) => n.owner === owner).map((n) => n.text))
    }))
  )
}

class CurrentUser extends Context.Tag("example/CurrentUser")<CurrentUser, { readonly name: string }>() {}

const currentUser = Middleware.provide(
  CurrentUser,
  (request) => Effect.succeed({ name: request.ctx.auth?.subject ?? request.ctx.clientInfo?.name ?? "anonymous" })
)

const addNote = Tool.make({
  name: "add_note",
  description: "Saves a note for the caller",
  parameters: Schema.Struct({ text: Schema.String }),
  handler: ({ text }) =>
    Effect.gen(function*() {
      const user = yield* CurrentUser
      const count = yield* (yield* Notes).add(user.name, text)
      return `saved (${user.name} has ${count} notes)`
    })
})

const myNotes = Tool.fromJsonSchema({
  name: "my_notes",
  description: "Lists the caller's notes",
  handler: () =>
    Effect.gen(function*() {
      const user = yield* CurrentUser
      return { notes: yield* (yield* Notes).of(user.name) }
    })
})

// Layer<McpServer, DefinitionError, Notes>: CurrentUser comes from the middleware. (Tools that
// need a middleware's service go in the options; a tool Layer, `McpServer.tool(t)`, would require
// it from the Layer graph.)
const McpLive = Layer.unwrapEffect(
  Effect.map(Middleware.rateLimit({ capacity: 20, refillPerSecond: 5 }), (limit) =>
    McpServer.layer({
      name: "notes",
      version: "0.1.0",
      tools: [addNote, myNotes],
      middleware: [Middleware.timing, limit, currentUser]
    }))
)

// Serves the McpServer service over HTTP while the Layer lives, and logs where.
const HttpLive = Layer.effectDiscard(
  Effect.flatMap(StreamableHttp.ServerAddress, ({ url }) => Effect.logInfo(`notes MCP server listening on ${url}`))
).pipe(Layer.provideMerge(StreamableHttp.layerServer({ port: 3002 })))

HttpLive.pipe(
  Layer.provide(McpLive),
  Layer.provide(Notes.InMemory),
  Layer.launch,
  NodeRuntime.runMain
)
