/**
 * Definitions added to a running server carry the environment of the add call: their handlers
 * (and completion functions) see it beneath the request's own environment (the server's captured
 * context and what the middlewares provide win).
 * @internal
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { lift } from "../../Handler.js"
import type * as Prompt from "../../Prompt.js"
import type { RequestContext } from "../../RequestContext.js"
import type * as Resource from "../../Resource.js"
import type * as Tool from "../../Tool.js"
import { erase } from "../erase.js"
import * as ToolArguments from "./toolArguments.js"

/**
 * Runs `effect` with `context` beneath the current environment. Erasing its services is the point
 * of this module: the add call's type required (and captured) what the handler needs beyond the server.
 */
const under = <A, E>(
  context: Context.Context<never>,
  effect: Effect.Effect<A, E, unknown>
): Effect.Effect<A, E, RequestContext> =>
  Effect.mapInputContext(
    erase<Effect.Effect<A, E>>(effect),
    (current: Context.Context<RequestContext>) => Context.merge(context, current)
  )

const completes = (
  context: Context.Context<never>,
  complete: Readonly<Record<string, Resource.Complete<unknown>>> | undefined
): { readonly complete?: Readonly<Record<string, Resource.Complete>> } =>
  complete === undefined ? {} : {
    complete: Object.fromEntries(
      Object.entries(complete).map((
        [name, fn]
      ) => [name, (value, others, ctx) => under(context, lift(() => fn(value, others, ctx)))] as const)
    )
  }

/** Whether there is anything to provide (an empty context needs no wrapper). */
const empty = (context: Context.Context<never>): boolean => context.unsafeMap.size === 0

/** A tool whose handler runs with `context` beneath the request's environment. */
export const tool = (context: Context.Context<never>, def: Tool.Any): Tool.Tool => {
  if (empty(context)) return erase<Tool.Tool>(def)
  const handler: Tool.Tool["handler"] = (args, ctx) => under(context, lift(() => def.handler(args, ctx)))
  // A `Tool.make` tool keeps its one check (its Schema decode), the rest of its handler provided the same way.
  ToolArguments.registerWrapped(handler, def.handler, (output) => under(context, lift(output)))
  return { ...def, handler }
}

/** A static resource whose handler runs with `context` beneath the request's environment. */
export const resource = (context: Context.Context<never>, def: Resource.AnyResource): Resource.Resource =>
  empty(context) ? erase<Resource.Resource>(def) : {
    ...def,
    handler: (uri, ctx) => under(context, lift(() => def.handler(uri, ctx)))
  }

/** A resource template whose handler and completions run with `context` beneath the request's. */
export const template = (context: Context.Context<never>, def: Resource.AnyTemplate): Resource.ResourceTemplate => {
  if (empty(context)) return erase<Resource.ResourceTemplate>(def)
  const { complete, ...rest } = def
  return {
    ...rest,
    ...completes(context, complete),
    handler: (variables, ctx) => under(context, lift(() => def.handler(variables, ctx)))
  }
}

/** A prompt whose handler and completions run with `context` beneath the request's environment. */
export const prompt = (context: Context.Context<never>, def: Prompt.Any): Prompt.Prompt => {
  if (empty(context)) return erase<Prompt.Prompt>(def)
  const { complete, ...rest } = def
  return {
    ...rest,
    ...completes(context, complete),
    handler: (args, ctx) => under(context, lift(() => def.handler(args, ctx)))
  }
}
