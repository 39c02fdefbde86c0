/**
 * Connecting a client: the era detection (a `server/discover` probe, else the legacy
 * `initialize` handshake) and the assembly of the `McpClient` record over the client's `State`.
 * The calls themselves live in `call`, `lists`, `listen`, `skills` and `tasks`. Documented on
 * `McpClient`.
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as JsonRpc from "../../JsonRpc.js"
import type { CallError, Info, McpClient, Options } from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import * as Skill from "../../Skill.js"
import * as Task from "../../Task.js"
import type { ClientTransport } from "../../Transport.js"
import { call, send } from "./call.js"
import { decoder } from "./decode.js"
import { ClientError } from "./error.js"
import * as Listen from "./listen.js"
import * as Lists from "./lists.js"
import * as Skills from "./skills.js"
import { legacyVersions, makeSetup, makeState, modernMeta, modernVersions, type Setup, type State } from "./state.js"
import * as TaskClient from "./tasks.js"

const decodeDiscoverResult = decoder(McpSchema.DiscoverResult, McpSchema.Method.discover)
const decodeInitializeResult = decoder(McpSchema.InitializeResult, McpSchema.Method.initialize)
const decodeReadResourceResult = decoder(McpSchema.ReadResourceResult, McpSchema.Method.resourcesRead)
const decodeGetPromptResult = decoder(McpSchema.GetPromptResult, McpSchema.Method.promptsGet)
const decodeCompleteResult = decoder(McpSchema.CompleteResult, McpSchema.Method.complete)

/** The `Info` of a modern server from its `server/discover` result, speaking `version`. */
const modernInfo = (version: string, result: typeof McpSchema.DiscoverResult.Type): Info => {
  const serverInfo = result._meta !== undefined && JsonRpc.isObject(result._meta)
    ? Schema.decodeUnknownOption(McpSchema.Implementation)(result._meta[McpSchema.MetaKey.serverInfo])
    : undefined
  return {
    era: "modern",
    protocolVersion: version,
    serverInfo: serverInfo !== undefined && serverInfo._tag === "Some" ? serverInfo.value : undefined,
    capabilities: result.capabilities,
    instructions: result.instructions,
    supportedVersions: result.supportedVersions
  }
}

/**
 * The era probe (MCP 2026-07-28, Versioning and Compatibility › Backward Compatibility with
 * Initialization-Based Versions): `server/discover` at `version`. A `DiscoverResult` means modern
 * (`Info`); -32022 with a shared version in `data.supported` means modern at that version (one
 * retry, Protocol Version Negotiation); any other error, or silence past `probeTimeout`, means
 * legacy (`undefined`). A server offering neither a modern version nor a legacy one this client
 * allows fails with `ClientError` "NoCommonVersion".
 */
const probe = (setup: Setup, version: string, attempt: number): Effect.Effect<Info | undefined, CallError> =>
  send(
    setup,
    McpSchema.Method.discover,
    { _meta: modernMeta(setup, version) },
    // with no legacy version to fall back to, silence is just a slow server
    legacyVersions(setup.allowed).length === 0
      ? setup.timeout
      : Duration.decode(setup.options.probeTimeout ?? "3 seconds")
  ).pipe(
    Effect.flatMap(decodeDiscoverResult),
    Effect.flatMap((result) => {
      const shared = modernVersions(setup.allowed).find((v) => result.supportedVersions.includes(v))
      if (shared === undefined) {
        const legacy = legacyVersions(result.supportedVersions)
        return setup.allowed.some((v) => legacy.includes(v))
          ? Effect.succeed(undefined)
          : Effect.fail(
            new ClientError({
              reason: "NoCommonVersion",
              message: `server supports ${result.supportedVersions.join(", ")}`
            })
          )
      }
      const info = modernInfo(shared, result)
      return shared === version ? Effect.succeed(info) : attempt > 0 ? Effect.succeed(info) : probe(setup, shared, 1)
    }),
    Effect.catchAll((e): Effect.Effect<Info | undefined, CallError> => {
      if (e._tag === "McpError" && e.code === JsonRpc.ErrorCode.UnsupportedProtocolVersion && attempt === 0) {
        const supported = JsonRpc.isObject(e.data) && Array.isArray(e.data.supported) ? e.data.supported : []
        const next = modernVersions(setup.allowed).find((v) => supported.includes(v))
        if (next !== undefined) return probe(setup, next, 1)
        return Effect.succeed(undefined)
      }
      if (e._tag === "ClientError" && e.reason === "NoCommonVersion") return Effect.fail(e)
      return Effect.succeed(undefined)
    })
  )

/**
 * The legacy handshake (MCP 2025-11-25, Lifecycle › Initialization): `initialize` offering the
 * newest legacy version this client allows, then `notifications/initialized`. A version the
 * client does not allow (offered or answered) fails with `ClientError` "NoCommonVersion".
 */
const handshake = (setup: Setup): Effect.Effect<Info, CallError> =>
  Effect.gen(function*() {
    const offer = legacyVersions(setup.allowed)[0]
    if (offer === undefined) {
      return yield* new ClientError({
        reason: "NoCommonVersion",
        message: "the server does not speak a modern version this client allows"
      })
    }
    const result = yield* send(setup, McpSchema.Method.initialize, {
      protocolVersion: offer,
      capabilities: setup.capabilities,
      clientInfo: setup.clientInfo
    }).pipe(Effect.flatMap(decodeInitializeResult))
    if (!setup.allowed.some((v) => v === result.protocolVersion)) {
      return yield* new ClientError({
        reason: "NoCommonVersion",
        message: `server offered protocol version ${result.protocolVersion}`
      })
    }
    yield* setup.transport.notify(JsonRpc.notification(McpSchema.Method.initialized))
    const info: Info = {
      era: "legacy",
      protocolVersion: result.protocolVersion,
      serverInfo: result.serverInfo,
      capabilities: result.capabilities,
      instructions: result.instructions,
      supportedVersions: [result.protocolVersion]
    }
    return info
  })

/** `tools/call`, a task answer polled to its end (Tasks extension). */
const callTool = (
  state: State,
  tasks: Task.TaskClient
): McpClient["callTool"] =>
(name, args, callOptions) =>
  call(state, McpSchema.Method.toolsCall, {
    name,
    arguments: args ?? {},
    ...(callOptions?._meta === undefined ? {} : { _meta: callOptions._meta })
  }, callOptions).pipe(
    Effect.flatMap((result) =>
      TaskClient.isTaskResult(result)
        ? Effect.flatMap(TaskClient.decodeCreateTaskResult(result), (created) => tasks.awaitResult(created.taskId))
        : TaskClient.decodeCallToolResult(result)
    )
  )

/** The `McpClient` record over a connected client's state. */
const assemble = (state: State): McpClient => {
  const { info, transport } = state
  const listTools = (cursor?: string) => Lists.listTools(state, cursor)
  const listResources = (cursor?: string) => Lists.listResources(state, cursor)
  const listResourceTemplates = (cursor?: string) => Lists.listResourceTemplates(state, cursor)
  const listPrompts = (cursor?: string) => Lists.listPrompts(state, cursor)
  const tasks = TaskClient.make({
    supported: state.isModern && JsonRpc.isObject(info.capabilities.extensions?.[Task.EXTENSION_ID]),
    call: (method, params) => call(state, method, params),
    handlers: state.handlers
  })
  const cache = state.cache
  return {
    info,
    request: (method, params, callOptions) => call(state, method, params, callOptions),
    notify: (method, params) => transport.notify(JsonRpc.notification(method, params)),
    listTools,
    listAllTools: Lists.listAll(listTools, "tools"),
    listResources,
    listAllResources: Lists.listAll(listResources, "resources"),
    listResourceTemplates,
    listAllResourceTemplates: Lists.listAll(listResourceTemplates, "resourceTemplates"),
    listPrompts,
    listAllPrompts: Lists.listAll(listPrompts, "prompts"),
    callTool: callTool(state, tasks),
    readResource: (uri, callOptions) =>
      call(state, McpSchema.Method.resourcesRead, { uri }, callOptions).pipe(Effect.flatMap(decodeReadResourceResult)),
    getPrompt: (name, args, callOptions) =>
      call(state, McpSchema.Method.promptsGet, args === undefined ? { name } : { name, arguments: args }, callOptions)
        .pipe(Effect.flatMap(decodeGetPromptResult)),
    complete: (ref, argument, value, context) =>
      call(state, McpSchema.Method.complete, {
        ref,
        argument: { name: argument, value },
        ...(context === undefined ? {} : { context: { arguments: context } })
      }).pipe(
        Effect.flatMap(decodeCompleteResult),
        Effect.map((r) => r.completion)
      ),
    listen: (filter) => Listen.listen(state, filter),
    clearCache: cache === undefined ? Effect.void : cache.clear,
    skillsSupported: info.capabilities.extensions !== undefined &&
      JsonRpc.isObject(info.capabilities.extensions[Skill.EXTENSION_ID]),
    listSkills: Lists.listAll((cursor?: string) => Lists.listSkills(state, cursor), "skills"),
    getSkill: (uri) => Skills.getSkill(state, uri),
    readSkill: (uri) => Skills.readSkill(state, uri),
    readSkillFile: (entry, uri) => Skills.readSkillFile(state, entry, uri),
    readDirectory: (uri) => Skills.readDirectory(state, uri),
    tasks,
    close: Effect.zipRight(Ref.set(state.closed, true), transport.close)
  }
}

/** `McpClient.connect`: installs the answer to server→client requests, detects the era, assembles the client. */
export const connect = (
  transport: ClientTransport,
  options: Options = {}
): Effect.Effect<McpClient, CallError> =>
  Effect.gen(function*() {
    const setup = makeSetup(transport, options)
    if (transport.setRequestHandler !== undefined) yield* transport.setRequestHandler(setup.answerServer)
    const modern = modernVersions(setup.allowed)[0]
    const probed = modern === undefined ? undefined : yield* probe(setup, modern, 0)
    const info = probed ?? (yield* handshake(setup))
    return assemble(yield* makeState(setup, info, Listen.DEFAULT_RELISTEN))
  })
