/**
 * Connecting a client: the era detection (a `server/discover` probe, else the legacy
 * `initialize` handshake) and the assembly of the `McpClient` record over the client's `State`.
 * The calls themselves live in `call`, `lists`, `listen`, `skills` and `tasks`. Documented on
 * `McpClient`.
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as JsonRpc from "../../JsonRpc.js"
import type { CallError, EraVerdict, Info, McpClient, Options } from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import * as Skill from "../../Skill.js"
import * as Task from "../../Task.js"
import type { ClientTransport } from "../../Transport.js"
import { quote } from "../quote.js"
import * as Telemetry from "../telemetry.js"
import { call, callThen, send } from "./call.js"
import { decoder } from "./decode.js"
import * as EraCache from "./eraCache.js"
import { ClientError } from "./error.js"
import * as Listen from "./listen.js"
import * as Lists from "./lists.js"
import * as Output from "./output.js"
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
 * retry, Protocol Version Negotiation); a refused authorization (`TransportError` "Unauthorized")
 * fails; any other error means legacy (`undefined`). It waits as
 * long as any request (`requestTimeout`); {@link detect} starts the handshake beside it after
 * `probeTimeout`. A server offering neither a modern version nor a legacy one this client
 * allows fails with `ClientError` "NoCommonVersion".
 */
const probe = (setup: Setup, version: string, attempt: number): Effect.Effect<Info | undefined, CallError> =>
  send(setup, McpSchema.Method.discover, { _meta: modernMeta(setup, version) }).pipe(
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
              message: `server supports ${
                result.supportedVersions.map((v) => quote(v)).join(", ")
              }; this client allows ${setup.allowed.join(", ")}`
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
      // A refused authorization says nothing about the version (MCP 2025-11-25, Authorization).
      if (e._tag === "TransportError" && e.reason === "Unauthorized") return Effect.fail(e)
      return Effect.succeed(undefined)
    })
  )

/** The capabilities `initialize` declares at `offer`: no `elicitation` at 2025-03-26, which has none. */
const offeredCapabilities = (
  capabilities: McpSchema.ClientCapabilities,
  offer: string
): McpSchema.ClientCapabilities => {
  if (!McpSchema.isBefore20250618(offer) || capabilities.elicitation === undefined) return capabilities
  const { elicitation: _, ...rest } = capabilities
  return rest
}

/** The `initialize` request of the legacy handshake (MCP 2025-11-25, Lifecycle › Initialization), decoded. */
const initialize = (setup: Setup): Effect.Effect<typeof McpSchema.InitializeResult.Type, CallError> =>
  Effect.suspend(() => {
    const offer = legacyVersions(setup.allowed)[0]
    return offer === undefined
      ? Effect.fail(
        new ClientError({
          reason: "NoCommonVersion",
          message: "the server does not speak a modern version this client allows"
        })
      )
      : send(setup, McpSchema.Method.initialize, {
        protocolVersion: offer,
        capabilities: offeredCapabilities(setup.capabilities, offer),
        clientInfo: setup.clientInfo
      }).pipe(Effect.flatMap(decodeInitializeResult))
  })

/**
 * The rest of the legacy handshake once `initialize` is answered: a version the client does not
 * allow fails with `ClientError` "NoCommonVersion"; else `notifications/initialized`.
 */
const completeHandshake = (
  setup: Setup,
  result: typeof McpSchema.InitializeResult.Type
): Effect.Effect<Info, CallError> =>
  Effect.gen(function*() {
    if (!setup.allowed.some((v) => v === result.protocolVersion)) {
      return yield* new ClientError({
        reason: "NoCommonVersion",
        message: `server offered protocol version ${quote(result.protocolVersion)}; this client allows ${
          setup.allowed.join(", ")
        }`
      })
    }
    MutableRef.set(setup.negotiated, result.protocolVersion)
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

/** The legacy handshake: `initialize` offering the newest legacy version allowed, then `initialized`. */
const handshake = (setup: Setup): Effect.Effect<Info, CallError> =>
  Effect.flatMap(initialize(setup), (result) => completeHandshake(setup, result))

/**
 * Era detection (MCP 2026-07-28, Versioning and Compatibility): a modern answer to the probe →
 * modern; any other error → the legacy handshake. Silence for `probeTimeout` (default 10 s: a
 * server started through `npx` may take seconds to answer anything) sends `initialize` too, and
 * the probe keeps waiting: whichever is answered first decides, except that a failed `initialize`
 * still waits for the probe. When the late probe wins, the `initialize` is left to finish on its
 * own, bounded by `requestTimeout`, and its answer is dropped: a client MUST NOT cancel it (MCP
 * 2025-11-25, Basic › Utilities › Cancellation) and sends no `notifications/initialized`.
 */
const detect = (setup: Setup, modern: string): Effect.Effect<Info, CallError> =>
  Effect.gen(function*() {
    // with no legacy version to fall back to, silence is just a slow server
    if (legacyVersions(setup.allowed).length === 0) {
      return (yield* probe(setup, modern, 0)) ?? (yield* handshake(setup))
    }
    const probing = yield* Effect.fork(probe(setup, modern, 0))
    const early = yield* Fiber.join(probing).pipe(
      Effect.timeoutOption(Duration.decode(setup.options.probeTimeout ?? "10 seconds"))
    )
    if (Option.isSome(early)) return early.value ?? (yield* handshake(setup))
    const initializing = yield* Effect.forkDaemon(initialize(setup))
    return yield* Effect.raceWith(Fiber.join(probing), Fiber.join(initializing), {
      onSelfDone: (probed, initJoin) =>
        Exit.isSuccess(probed) && probed.value !== undefined
          ? Effect.as(Fiber.interrupt(initJoin), probed.value)
          : Exit.isFailure(probed)
          ? Effect.zipRight(Fiber.interrupt(initJoin), Effect.failCause(probed.cause))
          : Effect.flatMap(Fiber.join(initializing), (result) => completeHandshake(setup, result)),
      onOtherDone: (initialized, _probeJoin) =>
        Exit.isSuccess(initialized)
          ? Effect.zipRight(Fiber.interrupt(probing), completeHandshake(setup, initialized.value))
          : Effect.flatMap(
            Fiber.join(probing),
            (probed): Effect.Effect<Info, CallError> =>
              probed === undefined ? Effect.failCause(initialized.cause) : Effect.succeed(probed)
          )
    })
  })

/**
 * `tools/call`, a task answer polled to its end (Tasks extension); the final result's
 * `structuredContent` checked against the tool's listed `outputSchema` (`output.ts`).
 */
const callTool = (
  state: State,
  tasks: Task.TaskClient
): McpClient["callTool"] =>
(name, args, callOptions) =>
  callThen(
    state,
    McpSchema.Method.toolsCall,
    {
      name,
      arguments: args ?? {},
      ...(callOptions?._meta === undefined ? {} : { _meta: callOptions._meta })
    },
    callOptions ?? {},
    (result) =>
      Effect.flatMap(
        TaskClient.isTaskResult(result)
          ? Effect.flatMap(TaskClient.decodeCreateTaskResult(result), (created) => tasks.awaitResult(created.taskId))
          : TaskClient.decodeCallToolResult(result),
        (decoded) => Output.check(state, name, decoded)
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
    handlers: state.handlers,
    listen: state.isModern ? (filter) => Listen.listen(state, filter) : undefined
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
    tasks
  }
}

/**
 * The end of a client's Scope: a listen is not re-established after it, and a legacy session's
 * duration is recorded (semantic-conventions-genai, docs/gen-ai/mcp.md, "Metrics"). The transport
 * is not touched: its own Scope owns it.
 */
const release = (state: State, startedNanos: bigint): Effect.Effect<void> =>
  Effect.flatMap(
    Ref.getAndSet(state.closed, true),
    (wasClosed) =>
      wasClosed || state.isModern
        ? Effect.void
        : Telemetry.recordSession("client", startedNanos, state.info.protocolVersion, state.transport.peer)
  )

/**
 * The `Info` of a modern server known without a probe (`Options.era`, a cache hit): the verdict's
 * own when it speaks a version this client allows, else the newest modern version allowed with
 * nothing known of the server; `undefined` when this client allows no modern version.
 */
const knownModern = (setup: Setup, verdict: EraVerdict): Info | undefined => {
  const allowedModern = modernVersions(setup.allowed)
  const given = verdict.info
  if (given !== undefined && given.era === "modern" && allowedModern.some((v) => v === given.protocolVersion)) {
    return given
  }
  const version = allowedModern[0]
  return version === undefined ? undefined : {
    era: "modern",
    protocolVersion: version,
    serverInfo: undefined,
    capabilities: {},
    instructions: undefined,
    supportedVersions: [version]
  }
}

/**
 * The server's era and `Info`: from a known verdict (`Options.era`, else an `Options.eraCache`
 * hit) without a probe, else detected (and stored in the cache).
 */
const establish = (setup: Setup): Effect.Effect<Info, CallError> =>
  Effect.gen(function*() {
    const { era, eraCache } = setup.options
    const known = era ??
      (eraCache === undefined ? undefined : Option.getOrUndefined(yield* eraCache.cache.get(eraCache.key)))
    if (known !== undefined) {
      const modernInfo = known.era === "modern" ? knownModern(setup, known) : undefined
      if (modernInfo !== undefined) return modernInfo
      if (known.era === "legacy" || modernVersions(setup.allowed).length === 0) return yield* handshake(setup)
    }
    const modern = modernVersions(setup.allowed)[0]
    const info = modern === undefined ? yield* handshake(setup) : yield* detect(setup, modern)
    if (eraCache !== undefined && era === undefined) yield* eraCache.cache.set(eraCache.key, EraCache.verdictOf(info))
    return info
  })

/**
 * `McpClient.connect`: installs the answer to server→client requests, detects the era, assembles
 * the client; the client lives until the Scope closes.
 */
export const connect = (
  transport: ClientTransport,
  options: Options = {}
): Effect.Effect<McpClient, CallError, Scope.Scope> =>
  Effect.gen(function*() {
    const startedNanos = yield* Clock.currentTimeNanos
    const setup = makeSetup(transport, options)
    if (transport.setRequestHandler !== undefined) yield* transport.setRequestHandler(setup.answerServer)
    const info = yield* establish(setup)
    const state = yield* makeState(setup, info, Listen.DEFAULT_RELISTEN)
    yield* Effect.addFinalizer(() => release(state, startedNanos))
    return assemble(state)
  })
