/**
 * Building a server value (the capabilities it derives from what it serves are `methods.ts`'s:
 * its gates read them on every request).
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as Cluster from "../../Cluster.js"
import * as McpSchema from "../../McpSchema.js"
import { erase } from "../erase.js"
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
    const options = erase<Options>(typed)
    const context = yield* Effect.context<never>()
    const skills = yield* Effect.forEach(options.skills ?? [], Defs.compileSkill)
    const snapshot = yield* Defs.build({ ...options, skills }, 1, Defs.validatorOf(options))
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
    // An empty string is no HMAC key (WebCrypto refuses one): a configuration read from an unset
    // variable (`"".split(",")` is `[""]`) falls back to a random key of this process, logged.
    const givenKeys = options.inputState?.keys ?? []
    const keys = givenKeys.filter((key) => key.length > 0)
    if (keys.length < givenKeys.length) {
      yield* Effect.logWarning(
        keys.length === 0
          ? "inputState.keys has only empty keys: requestState is signed with a random key of this process (a retry on another instance is refused)"
          : "inputState.keys: empty keys ignored"
      )
    }
    const stateKeys = keys.length > 0 ? keys : [InputState.randomSecret()]
    const tasks = options.tasks === undefined ? undefined : yield* Tasks.makeRuntime(
      options.tasks,
      shutdown,
      (taskId) => events.publish({ _tag: "TaskStatus", taskId })
    )
    return { info, options, context, versions, state, events, stopped: shutdown, stateKeys, tasks }
  })

export { capabilities } from "./methods.js"
