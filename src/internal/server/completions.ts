/**
 * `completion/complete`: argument completions of prompts and resource templates (MCP 2026-07-28,
 * Server Utilities, Completion).
 * @internal
 */
import * as Effect from "effect/Effect"
import type { InputRequired } from "../../Input.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import { type RequestContextShape } from "../../RequestContext.js"
import type * as Resource from "../../Resource.js"
import { decodeParams, fail, type Failure } from "./failure.js"
import { liftIn } from "./requestContext.js"
import type * as Defs from "./snapshot.js"

const { McpError } = JsonRpc

const MAX_COMPLETIONS = 100

export const complete = (
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject,
  ctx: RequestContextShape
): Effect.Effect<JsonRpc.JsonObject, Failure | InputRequired> =>
  Effect.gen(function*() {
    const { argument, context, ref } = yield* decodeParams(McpSchema.CompleteParams, params)
    let completers: Readonly<Record<string, Resource.Complete>> | undefined
    if (ref.type === "ref/prompt") {
      const prompt = snapshot.promptsByName.get(ref.name)
      if (prompt === undefined) {
        return yield* fail(McpError.invalidParams(`Unknown prompt: ${ref.name}`, { name: ref.name }))
      }
      completers = prompt.def.complete
    } else {
      const template = snapshot.templatesByUriTemplate.get(ref.uri)
      if (template === undefined && !snapshot.resourcesByUri.has(ref.uri)) {
        return yield* fail(McpError.invalidParams(`Unknown resource or template: ${ref.uri}`, { uri: ref.uri }))
      }
      completers = template?.def.complete
    }
    const fn = completers?.[argument.name]
    if (fn === undefined) return { completion: { values: [] } }
    const out = yield* liftIn(ctx, () => fn(argument.value, context?.arguments ?? {}, ctx)).pipe(
      Effect.catchTag("McpError", (e) => fail(e))
    )
    const values = Array.isArray(out) ? out : (out as { readonly values: ReadonlyArray<string> }).values
    const total = Array.isArray(out) ? undefined : (out as { readonly total?: number }).total
    const hasMore = Array.isArray(out) ? undefined : (out as { readonly hasMore?: boolean }).hasMore
    if (values.length > MAX_COMPLETIONS) {
      return {
        completion: {
          values: values.slice(0, MAX_COMPLETIONS),
          total: Math.max(total ?? 0, values.length),
          hasMore: true
        }
      }
    }
    return {
      completion: {
        values,
        ...(total === undefined ? {} : { total }),
        ...(hasMore === undefined ? {} : { hasMore })
      }
    }
  })
