/**
 * The paginated lists of a client (MCP 2026-07-28, Pagination): one page of a list method, all
 * pages of it, and the `tools/list` filter that leaves out tools with invalid `x-mcp-header`
 * annotations.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import type { CallError } from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import * as Skill from "../../Skill.js"
import * as Headers from "../server/headerAgreement.js"
import { call } from "./call.js"
import { decoder } from "./decode.js"
import * as Output from "./output.js"
import type { State } from "./state.js"

/** How many pages `listAll` follows at the most. */
const MAX_PAGES = 1000

/** One page of `method`: the request (with `cursor` when given), decoded as `schema`. */
const page = <A, I>(method: string, schema: Schema.Schema<A, I>) => {
  const decode = decoder(schema, method)
  return (state: State, cursor?: string): Effect.Effect<A, CallError> =>
    call(state, method, cursor === undefined ? undefined : { cursor }).pipe(Effect.flatMap(decode))
}

/** All pages `one` yields, following `nextCursor` (at most `MAX_PAGES` pages), their `key` items concatenated. */
export const listAll = <
  K extends string,
  T,
  A extends { readonly nextCursor?: string | undefined } & Record<K, ReadonlyArray<T>>
>(
  one: (cursor?: string) => Effect.Effect<A, CallError>,
  key: K
): Effect.Effect<ReadonlyArray<T>, CallError> =>
  Effect.gen(function*() {
    const out: Array<T> = []
    let cursor: string | undefined = undefined
    for (let i = 0; i < MAX_PAGES; i++) {
      const page: A = yield* one(cursor)
      out.push(...page[key])
      if (page.nextCursor === undefined) return out
      cursor = page.nextCursor
    }
    return out
  })

const toolsPage = page(McpSchema.Method.toolsList, McpSchema.ListToolsResult)

/**
 * A page of the tools with valid `x-mcp-header` annotations (MCP 2026-07-28, Streamable HTTP ›
 * Custom Headers from Tool Parameters): a tool whose annotations are invalid is left out, with
 * a warning naming it; the other tools are unaffected.
 */
const keepValidHeaderTools = (
  page: typeof McpSchema.ListToolsResult.Type
): Effect.Effect<typeof McpSchema.ListToolsResult.Type> =>
  Effect.gen(function*() {
    const kept: Array<McpSchema.Tool> = []
    for (const tool of page.tools) {
      const bad = Headers.invalidHeaderAnnotation(tool.inputSchema)
      if (Option.isSome(bad)) yield* Effect.logWarning(`tool ${tool.name} left out: ${bad.value}`)
      else kept.push(tool)
    }
    return kept.length === page.tools.length ? page : { ...page, tools: kept }
  })

/**
 * One page of `tools/list`, tools with invalid `x-mcp-header` annotations left out; their
 * `outputSchema`s are remembered for the check of `tools/call` results (`output.ts`).
 */
export const listTools = (
  state: State,
  cursor?: string
): Effect.Effect<typeof McpSchema.ListToolsResult.Type, CallError> =>
  toolsPage(state, cursor).pipe(
    Effect.flatMap(keepValidHeaderTools),
    Effect.flatMap((page) => Output.remember(state, page))
  )

/** One page of `resources/list`. */
export const listResources = page(McpSchema.Method.resourcesList, McpSchema.ListResourcesResult)

/** One page of `resources/templates/list`. */
export const listResourceTemplates = page(
  McpSchema.Method.resourcesTemplatesList,
  McpSchema.ListResourceTemplatesResult
)

/** One page of `prompts/list`. */
export const listPrompts = page(McpSchema.Method.promptsList, McpSchema.ListPromptsResult)

/** One page of `skills/list` (Skills extension). */
export const listSkills = page(Skill.Method.list, Skill.ListSkillsResult)
