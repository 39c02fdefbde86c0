/**
 * `completion/complete`: argument completions of prompts and resource templates (MCP 2026-07-28,
 * Completion).
 * @internal
 */
import * as Effect from "effect/Effect"
import type { InputRequired } from "../../Input.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import { type RequestContextShape } from "../../RequestContext.js"
import type * as Resource from "../../Resource.js"
import { quote } from "../quote.js"
import { fail, type Failure } from "./failure.js"
import { liftIn } from "./requestContext.js"
import type * as Defs from "./snapshot.js"

const { McpError } = JsonRpc

const MAX_COMPLETIONS = 100

/** What a completion function (`Resource.Complete`) may return: the values, or the values with `total` / `hasMore`. */
type Completions =
  | ReadonlyArray<string>
  | { readonly values: ReadonlyArray<string>; readonly total?: number; readonly hasMore?: boolean }

const isValueList = (out: Completions): out is ReadonlyArray<string> => Array.isArray(out)

/**
 * `completion/complete`: the completion function of a prompt's or a resource template's argument
 * (none: no values); an unknown prompt, or a URI that is neither a template nor a resource, is
 * -32602. At most 100 values go out (the spec's limit); `total` and `hasMore` then say there are more.
 */
export const complete = (
  snapshot: Defs.Snapshot,
  { argument, context, ref }: typeof McpSchema.CompleteParams.Type,
  ctx: RequestContextShape
): Effect.Effect<McpSchema.CompleteResult, Failure | InputRequired> =>
  Effect.gen(function*() {
    let completers: Readonly<Record<string, Resource.Complete>> | undefined
    if (ref.type === "ref/prompt") {
      const prompt = snapshot.promptsByName.get(ref.name)
      if (prompt === undefined) {
        return yield* fail(McpError.invalidParams(`Unknown prompt: ${quote(ref.name)}`, { name: quote(ref.name) }))
      }
      completers = prompt.def.complete
    } else {
      const template = snapshot.templatesByUriTemplate.get(ref.uri)
      if (template === undefined && !snapshot.resourcesByUri.has(ref.uri)) {
        return yield* fail(
          McpError.invalidParams(`Unknown resource or template: ${quote(ref.uri)}`, { uri: quote(ref.uri) })
        )
      }
      completers = template?.def.complete
    }
    // An own property only: `constructor` or `toString` as an argument name is just unknown.
    const fn = completers !== undefined && Object.hasOwn(completers, argument.name)
      ? completers[argument.name]
      : undefined
    if (fn === undefined) return { completion: { values: [] } }
    const out = yield* liftIn(ctx, () => fn(argument.value, context?.arguments ?? {}, ctx)).pipe(
      Effect.catchTag("McpError", (e) => fail(e))
    )
    const values = isValueList(out) ? out : out.values
    const total = isValueList(out) ? undefined : out.total
    const hasMore = isValueList(out) ? undefined : out.hasMore
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
