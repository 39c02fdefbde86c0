/**
 * The server service: the public `McpServer.McpServer` object is the internal `Server` itself,
 * with methods that close over it. The public type declares only the brand ({@link TypeId}), the
 * methods and `info` / `versions`; the library's modules reach the internals with
 * {@link internal}, which finds the server among those {@link make} built (a `WeakMap`, read once
 * per connection or call, never per message of a connection) and dies on anything else: a
 * hand-made `McpServer` service (`Layer.succeed(McpServer.McpServer, {...})`) fails at once with
 * a message that says so, not later on a missing field.
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.js"
import type * as McpServer from "../../McpServer.js"
import type * as Prompt from "../../Prompt.js"
import type * as Resource from "../../Resource.js"
import type * as Tool from "../../Tool.js"
import * as Connection from "./connection.js"
import * as Dispatch from "./dispatch.js"
import type { AnyOptions, Server } from "./model.js"
import * as Provide from "./provide.js"
import type * as Defs from "./snapshot.js"

/** The brand of a server (`McpServer.TypeId`): a value of the public type carries it. */
export const TypeId: unique symbol = Symbol.for("presa-mcp/McpServer")

/** The brand's type. */
export type TypeId = typeof TypeId

/** The servers {@link make} built, by their public face (the same object). */
const servers = new WeakMap<McpServer.McpServer, Server>()

/** What {@link internal} dies with on a value {@link make} did not build. */
export const NOT_A_SERVER =
  "McpServer: this service was not built by McpServer.make or McpServer.layer (a hand-made McpServer value has no server behind it)"

/**
 * The internals of a server made by {@link make}; a defect (a thrown `Error` whose message is
 * {@link NOT_A_SERVER}) for any other value: callers run it inside an Effect, where it dies.
 */
export const internal = (server: McpServer.McpServer): Server => {
  const found = servers.get(server)
  if (found === undefined) throw new Error(NOT_A_SERVER)
  return found
}

/**
 * `f` of the internals of `server`, or a defect ({@link NOT_A_SERVER}) for a value {@link make} did
 * not build: {@link internal} for the module functions that return an Effect, with no step added.
 */
export const withInternal = <A, E, R>(
  server: McpServer.McpServer,
  f: (server: Server) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => {
  const found = servers.get(server)
  return found === undefined ? Effect.die(new Error(NOT_A_SERVER)) : f(found)
}

/** The brand's value: `Services` is type-level only. */
const brand: McpServer.McpServer<unknown>[TypeId] = { _Services: () => undefined }

/** What `McpServer.Snapshot` shows of a snapshot: the wire forms, in the order they were added. */
export const publicSnapshot = (s: Defs.Snapshot): McpServer.Snapshot => ({
  revision: s.revision,
  tools: s.tools.map((t) => t.wire),
  resources: s.resources.map((r) => r.wire),
  resourceTemplates: s.templates.map((t) => t.wire),
  prompts: s.prompts.map((p) => p.wire),
  skills: s.skills.map((k) => k.wire)
})

/** Builds a server: its internals (`./make.ts`) and the service methods over them. */
export const make = <S = never>(options: AnyOptions): Effect.Effect<Server<S>, Defs.DefinitionError> =>
  Effect.map(Dispatch.make(options), (core) => {
    const server: Server<S> = {
      ...core,
      [TypeId]: brand,
      dispatch: (message, dispatchOptions) =>
        Connection.dispatchOnce(server, JsonRpc.classify(message), dispatchOptions),
      handleMessage: (message, dispatchOptions) =>
        Effect.map(
          Connection.dispatchOnce(server, JsonRpc.classify(message), dispatchOptions),
          Option.map((r) => r.message)
        ),
      snapshot: Effect.map(core.state.get, publicSnapshot),
      changes: Stream.map(core.state.changes, publicSnapshot),
      capabilities: Effect.map(core.state.get, (s) => Dispatch.capabilities(server, s)),
      addTool: <R>(tool: Tool.Tool<R>) =>
        Effect.flatMap(Effect.context<never>(), (context) => Dispatch.addTool(server, Provide.tool(context, tool))),
      removeTool: (name) => Dispatch.removeTool(server, name),
      addResource: <R>(resource: Resource.Resource<R>) =>
        Effect.flatMap(
          Effect.context<never>(),
          (context) => Dispatch.addResource(server, Provide.resource(context, resource))
        ),
      removeResource: (uri) => Dispatch.removeResource(server, uri),
      addResourceTemplate: <R>(template: Resource.ResourceTemplate<R>) =>
        Effect.flatMap(
          Effect.context<never>(),
          (context) => Dispatch.addResourceTemplate(server, Provide.template(context, template))
        ),
      removeResourceTemplate: (uriTemplate) => Dispatch.removeResourceTemplate(server, uriTemplate),
      addPrompt: <R>(prompt: Prompt.Prompt<R>) =>
        Effect.flatMap(
          Effect.context<never>(),
          (context) => Dispatch.addPrompt(server, Provide.prompt(context, prompt))
        ),
      removePrompt: (name) => Dispatch.removePrompt(server, name),
      addSkill: (skill) => Dispatch.addSkill(server, skill),
      removeSkill: (uri) => Dispatch.removeSkill(server, uri),
      listChanged: (kind) => Dispatch.listChanged(server, kind),
      resourceUpdated: (uri) => Dispatch.resourceUpdated(server, uri),
      shutdown: Effect.asVoid(Deferred.succeed(core.stopped, undefined))
    }
    servers.set(server, server)
    return server
  })
