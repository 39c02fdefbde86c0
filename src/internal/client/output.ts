/**
 * The client's check of a tool's `structuredContent` against the `outputSchema` its last
 * `tools/list` listed (MCP 2026-07-28, Tools › Output Schema: "Clients SHOULD validate structured
 * results against this schema"). The schema's own dialect (`$schema`, draft-07 included) is the
 * validator's business: nothing is refused for declaring one.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import * as JsonSchema from "../../JsonSchema.js"
import * as McpSchema from "../../McpSchema.js"
import { ClientError } from "./error.js"
import type { State } from "./state.js"

/** Remembers the `outputSchema` of each tool of a `tools/list` page (a tool listed without one forgets its old one). */
export const remember = (
  state: State,
  page: typeof McpSchema.ListToolsResult.Type
): Effect.Effect<typeof McpSchema.ListToolsResult.Type> =>
  Effect.sync(() => {
    MutableRef.update(state.outputSchemas, (schemas) => {
      let next = schemas
      for (const tool of page.tools) {
        next = tool.outputSchema === undefined
          ? HashMap.remove(next, tool.name)
          : HashMap.set(next, tool.name, tool.outputSchema)
      }
      return next
    })
    return page
  })

/**
 * `result` when it is an error result, when tool `name` has no known `outputSchema`, or when its
 * `structuredContent` matches it; else `ClientError` "InvalidResult" naming the first problems.
 * On a 2025-03-26 session nothing is checked: that revision has no structured tool output (MCP
 * 2025-06-18, Key Changes), so an `outputSchema` a server lists there is not part of its contract.
 */
export const check = (
  state: State,
  name: string,
  result: McpSchema.CallToolResult
): Effect.Effect<McpSchema.CallToolResult, ClientError> => {
  if (result.isError === true || McpSchema.isBefore20250618(state.info.protocolVersion)) return Effect.succeed(result)
  // read synchronously: no Effect step on the call path
  const schema = HashMap.get(MutableRef.get(state.outputSchemas), name)
  if (Option.isNone(schema)) return Effect.succeed(result)
  if (result.structuredContent === undefined) {
    return Effect.fail(
      new ClientError({
        reason: "InvalidResult",
        message: `tools/call ${name}: the tool declares an outputSchema but the result has no structuredContent`
      })
    )
  }
  const issues = state.validator(schema.value, result.structuredContent)
  return issues.length === 0 ? Effect.succeed(result) : Effect.fail(
    new ClientError({
      reason: "InvalidResult",
      message: JsonSchema.formatIssues(`tools/call ${name}: structuredContent does not match the outputSchema`, issues),
      cause: issues
    })
  )
}
