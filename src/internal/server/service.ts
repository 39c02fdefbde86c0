/**
 * The server service: the public `McpServer.McpServer` object is the internal `Server` itself,
 * with methods that close over it. The public type declares only the methods and `info` /
 * `versions`; the library's modules reach the internals with {@link internal} (a type-level
 * view of the same object: no wrapper, no lookup, so the per-request path is what it was).
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

/**
 * The internals of a server made by {@link make}. Every `McpServer.McpServer` is one (the public
 * type cannot be built any other way than by `McpServer.make`), so this is a view, not a check.
 */
export const internal = <S>(server: McpServer.McpServer<S>): Server<S> => server as Server<S>

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
    return server
  })
