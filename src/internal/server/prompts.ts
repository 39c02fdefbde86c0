/**
 * `prompts/get`: required arguments, the prompt's handler and its messages (MCP 2026-07-28,
 * Server Features, Prompts).
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Content from "../../Content.js"
import type { InputRequired } from "../../Input.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Prompt from "../../Prompt.js"
import { type RequestContextShape } from "../../RequestContext.js"
import { decodeParams, fail, type Failure } from "./failure.js"
import { liftIn } from "./requestContext.js"
import type * as Defs from "./snapshot.js"

const { McpError } = JsonRpc

const toMessage = (m: Prompt.MessageInput): McpSchema.PromptMessage =>
  typeof m === "string"
    ? { role: "user", content: Content.text(m) }
    : { role: m.role, content: typeof m.content === "string" ? Content.text(m.content) : m.content }

export const getPrompt = (
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject,
  ctx: RequestContextShape
): Effect.Effect<JsonRpc.JsonObject, Failure | InputRequired> =>
  Effect.gen(function*() {
    const decoded = yield* decodeParams(McpSchema.GetPromptParams, params)
    const prompt = snapshot.promptsByName.get(decoded.name)
    if (prompt === undefined) {
      return yield* fail(McpError.invalidParams(`Unknown prompt: ${decoded.name}`, { name: decoded.name }))
    }
    const args = decoded.arguments ?? {}
    for (const a of prompt.def.arguments ?? []) {
      if (a.required === true && args[a.name] === undefined) {
        return yield* fail(McpError.invalidParams(`Missing required argument: ${a.name}`, { argument: a.name }))
      }
    }
    const out = yield* liftIn(ctx, () => prompt.def.handler(args, ctx)).pipe(
      Effect.catchTag("McpError", (e) => fail(e))
    )
    if (typeof out === "string") return { messages: [toMessage(out)] }
    if (Array.isArray(out)) return { messages: out.map(toMessage) }
    const { description, messages } = out as Exclude<Prompt.PromptReturn, string | ReadonlyArray<unknown>>
    return {
      ...(description === undefined ? {} : { description }),
      messages: messages.map(toMessage)
    }
  })
