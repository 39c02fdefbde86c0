/**
 * A server made of Layers only: a tools Layer whose handler needs a `Greeter` service (its own
 * Layer), a resources Layer, the server Layer and the Streamable HTTP transport Layer.
 *   npx tsx examples/layers.ts            (http://127.0.0.1:3003/mcp)
 */
import { NodeRuntime } from "@effect/platform-node"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { McpServer, Resource, Tool } from "presa-mcp"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"

class Greeter extends Context.Tag("examples/Greeter")<Greeter, { readonly greet: (name: string) => string }>() {}

const GreeterLive = Layer.succeed(Greeter, { greet: (name) => `Hello, ${name}!` })

const greet = Tool.make({
  name: "greet",
  description: "Greets someone",
  parameters: Schema.Struct({ name: Schema.String }),
  handler: ({ name }) => Effect.map(Greeter, (g) => g.greet(name))
})

// Layer<never, DefinitionError, McpServer>: the tool's Greeter comes from GreeterLive.
const ToolsLive = McpServer.tool(greet).pipe(Layer.provide(GreeterLive))

const ResourcesLive = Layer.mergeAll(
  McpServer.resource(Resource.make({
    uri: "app://readme",
    name: "readme",
    mimeType: "text/plain",
    handler: () => "A server made of Layers."
  })),
  McpServer.resourceTemplate(Resource.template({
    uriTemplate: "app://notes/{id}",
    name: "note",
    handler: (variables) => `Note ${String(variables.id)}`
  }))
)

// Serves the McpServer service over HTTP while the app runs, and logs where.
const HttpLive = Layer.effectDiscard(
  Effect.flatMap(StreamableHttp.ServerAddress, ({ url }) => Effect.logInfo(`listening on ${url}`))
).pipe(Layer.provideMerge(StreamableHttp.layerServer({ port: 3003 })))

const AppLive = Layer.mergeAll(ToolsLive, ResourcesLive, HttpLive).pipe(
  Layer.provide(McpServer.layer({ name: "layers", version: "1.0.0" }))
)

Layer.launch(AppLive).pipe(NodeRuntime.runMain)
