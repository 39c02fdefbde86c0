/**
 * A consumer's TypeScript file: the main APIs as a project that installed the package uses them.
 * scripts/package-test.sh type-checks it in a fresh project against the packed tarball under
 * `NodeNext`, `bundler` and `node10` resolution (tsconfig.*.json here: `strict`,
 * `skipLibCheck: false`, `@types/node`, no DOM lib). It is never run.
 */
import { HttpRouter, HttpServerResponse } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import {
  Auth,
  Connection,
  Content,
  Input,
  JsonRpc,
  McpClient,
  McpServer,
  Middleware,
  Part,
  Prompt,
  Resource,
  Skill,
  Task,
  Tool,
  Transport,
  UriTemplate
} from "presa-mcp"
import * as ConnectionModule from "presa-mcp/Connection"
import * as JsonSchemaFull from "presa-mcp/JsonSchemaFull"
import * as McpProxy from "presa-mcp/McpProxy"
import * as ToolModule from "presa-mcp/Tool"
import * as InProcess from "presa-mcp/transport/InProcess"
import * as Stdio from "presa-mcp/transport/Stdio"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import * as WebHandler from "presa-mcp/WebHandler"

class Db extends Context.Tag("consumer/Db")<Db, { readonly orders: Effect.Effect<ReadonlyArray<string>> }>() {}
class CurrentUser extends Context.Tag("consumer/CurrentUser")<CurrentUser, { readonly name: string }>() {}

const add = Tool.make({
  name: "add",
  description: "Adds numbers",
  parameters: Schema.Struct({ numbers: Schema.Array(Schema.Number) }),
  success: Schema.Struct({ sum: Schema.Number }),
  handler: ({ numbers }) => Effect.succeed({ sum: numbers.reduce((a, n) => a + n, 0) })
})

const greet = ToolModule.make({
  name: "greet",
  parameters: Schema.Struct({ name: Schema.String, times: Schema.optional(Schema.Int) }),
  handler: ({ name, times }) => Effect.succeed(`Hello, ${name}!`.repeat(times ?? 1))
})

const deploy = Tool.fromJsonSchema({
  name: "deploy",
  task: "optional",
  handler: (_args, ctx) =>
    Effect.gen(function*() {
      yield* ctx.progress(0, { total: 2, message: "checking" })
      const answer = yield* Input.elicit("Deploy?", { type: "object", properties: { ok: { type: "boolean" } } })
      yield* ctx.log("info", { answer: answer.action })
      return answer.action === "accept" ? "deployed" : "cancelled"
    })
})

const orders = Tool.fromJsonSchema({
  name: "orders",
  handler: () => Effect.flatMap(Db, (db) => Effect.map(db.orders, (o) => o.join(", ")))
})
const me = Tool.fromJsonSchema({ name: "me", handler: () => Effect.map(CurrentUser, (u) => u.name) })
const refuse = Tool.fromJsonSchema({
  name: "refuse",
  handler: () => Effect.fail(new JsonRpc.McpError({ code: -32602, message: "no", data: { why: "because" } }))
})

const readme = Resource.make({
  uri: "file:///readme.txt",
  name: "readme",
  mimeType: "text/plain",
  handler: () => "Read me first."
})
const greetPrompt = Prompt.make({
  name: "greet",
  arguments: [{ name: "who", required: true }],
  handler: ({ who }) => `Say hello to ${who}.`
})

const currentUser = Middleware.provide(CurrentUser, () => Effect.succeed({ name: "ada" }))

export const server = Effect.gen(function*() {
  const limit = yield* Middleware.rateLimit({ capacity: 10, refillPerSecond: 5 })
  return yield* McpServer.make({
    name: "consumer",
    version: "1.0.0",
    logging: true,
    listChanged: true,
    tasks: { ttl: "1 hour", pollInterval: "2 seconds", maxTasks: 10 },
    validator: JsonSchemaFull.validate,
    middleware: [Middleware.timing, limit, currentUser],
    tools: [add, greet, deploy, orders, me, refuse],
    resources: [readme],
    prompts: [greetPrompt]
  })
})

// The server requires Db (no middleware provides it) and nothing else.
export const provided: Effect.Effect<McpServer.McpServer, McpServer.DefinitionError> = server.pipe(
  Effect.provideService(Db, { orders: Effect.succeed(["a"]) })
)

export const inProcess = Effect.gen(function*() {
  const s = yield* provided
  yield* McpServer.addTool(s, Tool.fromJsonSchema({ name: "late", handler: () => "hi" }))
  const client = yield* McpClient.connect(yield* InProcess.client(s), {
    tasks: true,
    probeTimeout: "10 seconds",
    onElicit: () => Effect.succeed({ action: "accept" as const, content: { ok: true } })
  })
  const info: McpClient.Info = client.info
  const result = yield* client.callTool("add", { numbers: [1, 2, 3] }, { onProgress: () => Effect.void })
  const text: string = Content.textOf(yield* client.readResource("file:///readme.txt"))
  const created = yield* client.tasks.callTool("deploy")
  if (Task.isCreateTaskResult(created)) yield* client.tasks.cancel(created.taskId)
  const refused = yield* client.callTool("refuse").pipe(
    Effect.map(() => 0),
    Effect.catchTag("McpError", (e) => Effect.succeed(e.code))
  )
  const sub = yield* client.listen({ toolsListChanged: true })
  yield* Effect.fork(Stream.runDrain(sub.notifications))
  return { era: info.era, structured: result.structuredContent, text, refused }
}).pipe(Effect.scoped)

export const overStdio = Effect.gen(function*() {
  const transport: Transport.ClientTransport = yield* Stdio.spawn({ command: "node", args: ["server.mjs"] })
  const client = yield* McpClient.connect(transport)
  return yield* client.listAllTools
}).pipe(
  Effect.scoped,
  Effect.catchTags({
    TransportError: (e) => Effect.succeed(e.message),
    ClientError: (e) => Effect.succeed(e.reason),
    McpError: (e) => Effect.succeed(e.message)
  })
)

export const stdioMain = Effect.flatMap(provided, (s) => Stdio.run(s))

export const overHttp = Effect.gen(function*() {
  const s = yield* provided
  const auth: Auth.ResourceServer = {
    resource: "https://mcp.example.com/mcp",
    authorizationServers: ["https://auth.example.com"],
    scopesSupported: ["mcp:read"],
    verifier: Auth.jwtVerifier({
      issuer: "https://auth.example.com",
      audience: "https://mcp.example.com/mcp",
      jwksUrl: "https://auth.example.com/jwks"
    })
  }
  const address: StreamableHttp.Address = yield* StreamableHttp.serve(s, { port: 0, auth })
  const transport = yield* StreamableHttp.client({ url: address.url })
  const client = yield* McpClient.connect(transport)
  const mcp = yield* StreamableHttp.router(s, { path: "/mcp" })
  const app = HttpRouter.empty.pipe(HttpRouter.get("/health", HttpServerResponse.text("ok")), HttpRouter.concat(mcp))
  return { app, tools: yield* client.listAllTools }
}).pipe(Effect.scoped)

export const fetchHandler = async (request: Request): Promise<Response> => {
  const handler = WebHandler.toWebHandler(await Effect.runPromise(provided))
  const response = await handler(request)
  await handler.dispose()
  return response
}

/** A transport of one's own over the public connection seam: message texts in, texts out. */
export const overLines = (lines: Stream.Stream<string>, write: (text: string) => Effect.Effect<void>) =>
  Effect.flatMap(provided, (s) => Connection.serve(s, { incoming: lines, send: write, maxInFlight: 16, maxQueued: 8 }))

export const oneConnection = (write: (text: string) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    const connection: ConnectionModule.Connection = yield* ConnectionModule.make(yield* provided, { send: write })
    yield* connection.receive(ConnectionModule.parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"))
    yield* connection.stop()
  }).pipe(Effect.scoped)

export const proxy = Effect.gen(function*() {
  const backend = yield* McpClient.connect(yield* InProcess.client(yield* provided), McpProxy.inputHandlers)
  return yield* McpProxy.make([{ prefix: "backend", client: backend }])
}).pipe(Effect.scoped)

export const parts = Part.server({ name: "parts", version: "1" }, [
  Part.prefix(Part.make({ tools: [add] }), "math")
])

export const skill = Skill.make("code-review", {
  "SKILL.md": "---\nname: code-review\ndescription: Review a change\n---\n# Reviewing a change\n"
})

export const template = UriTemplate.unsafeParse("x://repo/{owner}/{name}")

export const layer: Layer.Layer<never> = Layer.empty

export const main = () => NodeRuntime.runMain(Effect.asVoid(inProcess))
