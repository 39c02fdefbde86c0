/**
 * Building a server value, and the capabilities it derives from what it serves.
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Cluster from "../../Cluster.js"
import * as McpSchema from "../../McpSchema.js"
import * as Task from "../../Task.js"
import * as Skill from "../skill/build.js"
import { type AnyOptions, type Core, memoryBus, type Options } from "./model.js"
import * as InputState from "./requestState.js"
import * as Defs from "./snapshot.js"
import * as Tasks from "./tasks.js"

/**
 * Builds a server and captures its environment (`Effect.context`): dispatch provides it to every
 * request, beneath the request's own environment and what the middlewares provide. `McpServer.make` types what that environment must hold; here the
 * definitions' service types are erased.
 */
export const make = (typed: AnyOptions): Effect.Effect<Core, Defs.DefinitionError> =>
  Effect.gen(function*() {
    const options = typed as Options
    const context = yield* Effect.context<never>()
    const skills = yield* Effect.forEach(options.skills ?? [], Defs.compileSkill)
    const snapshot = yield* Defs.build({ ...options, skills }, 1)
    const state = yield* SubscriptionRef.make(snapshot)
    const bus = yield* Effect.serviceOption(Cluster.ChangeBus)
    const events = Option.isSome(bus) ? bus.value : yield* memoryBus
    const shutdown = yield* Deferred.make<void>()
    const versions = McpSchema.ALL_VERSIONS.filter((v) => (options.versions ?? McpSchema.ALL_VERSIONS).includes(v))
    const info: McpSchema.Implementation = {
      name: options.name,
      version: options.version,
      ...(options.title === undefined ? {} : { title: options.title }),
      ...(options.description === undefined ? {} : { description: options.description }),
      ...(options.websiteUrl === undefined ? {} : { websiteUrl: options.websiteUrl }),
      ...(options.icons === undefined ? {} : { icons: options.icons })
    }
    const stateKeys = options.inputState?.keys !== undefined && options.inputState.keys.length > 0
      ? options.inputState.keys
      : [InputState.randomSecret()]
    const tasks = options.tasks === undefined ? undefined : yield* Tasks.makeRuntime(options.tasks, shutdown)
    return { info, options, context, versions, state, events, stopped: shutdown, stateKeys, tasks }
  })

/** Capabilities per snapshot: derived once, not on every request (a snapshot never changes). */
const capabilitiesCache = new WeakMap<Defs.Snapshot, McpSchema.ServerCapabilities>()

export const capabilities = (server: Core, snapshot: Defs.Snapshot): McpSchema.ServerCapabilities => {
  const cached = capabilitiesCache.get(snapshot)
  if (cached !== undefined) return cached
  const caps = deriveCapabilities(server, snapshot)
  capabilitiesCache.set(snapshot, caps)
  return caps
}

const deriveCapabilities = (server: Core, snapshot: Defs.Snapshot): McpSchema.ServerCapabilities => {
  const caps: Record<string, Record<string, unknown>> = {}
  const listChanged = server.options.listChanged === true ? { listChanged: true } : {}
  if (snapshot.tools.length > 0) caps.tools = { ...listChanged }
  if (snapshot.resources.length > 0 || snapshot.templates.length > 0 || snapshot.skills.length > 0) {
    caps.resources = { ...(server.options.subscribe === true ? { subscribe: true } : {}), ...listChanged }
  }
  if (snapshot.prompts.length > 0) caps.prompts = { ...listChanged }
  const completes = snapshot.prompts.some((p) => p.def.complete !== undefined) ||
    snapshot.templates.some((t) => t.def.complete !== undefined)
  if (completes) caps.completions = {}
  if (server.options.logging === true) caps.logging = {}
  // Skills extension (SEP-2640): declared only when skills are served; settings inline.
  if (snapshot.skills.length > 0) caps.extensions = { [Skill.EXTENSION_ID]: { directoryRead: true } }
  // Tasks extension (SEP-2663): declared when the `tasks` option is set; no settings.
  if (server.tasks !== undefined) caps.extensions = { ...caps.extensions, [Task.EXTENSION_ID]: {} }
  return caps
}
