/**
 * Prompts (MCP 2026-07-28, Prompts): `prompts/list`, and `prompts/get` (required
 * arguments, the prompt's handler and its messages).
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Content from "../../Content.js"
import type { InputRequired } from "../../Input.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Prompt from "../../Prompt.js"
import { type RequestContextShape } from "../../RequestContext.js"
import { quote } from "../quote.js"
import { fail, type Failure } from "./failure.js"
import type { Server } from "./model.js"
import { nextCursor, page } from "./paging.js"
import { liftIn } from "./requestContext.js"
import type * as Defs from "./snapshot.js"

const { McpError } = JsonRpc

const toMessage = (m: Prompt.MessageInput): McpSchema.PromptMessage =>
  typeof m === "string"
    ? { role: "user", content: Content.text(m) }
    : { role: m.role, content: typeof m.content === "string" ? Content.text(m.content) : m.content }

const isMessageList = (out: Prompt.PromptReturn): out is ReadonlyArray<Prompt.MessageInput> => Array.isArray(out)

/** `prompts/list`, paged. */
export const listPrompts = (
  server: Server,
  snapshot: Defs.Snapshot,
  { cursor }: typeof McpSchema.PaginatedParams.Type
): Either.Either<McpSchema.ListPromptsResult, Failure> =>
  Either.map(
    page(server, snapshot, cursor, snapshot.prompts, "prompts", (p) => p.wire),
    (p) => ({ prompts: p.items, ...nextCursor(p) })
  )

/**
 * `prompts/get`: an unknown prompt or a missing required argument is -32602; the handler's return
 * becomes the messages.
 */
export const getPrompt = (
  snapshot: Defs.Snapshot,
  params: typeof McpSchema.GetPromptParams.Type,
  ctx: RequestContextShape
): Effect.Effect<McpSchema.GetPromptResult, Failure | InputRequired> =>
  Effect.gen(function*() {
    const prompt = snapshot.promptsByName.get(params.name)
    if (prompt === undefined) {
      return yield* fail(McpError.invalidParams(`Unknown prompt: ${quote(params.name)}`, { name: quote(params.name) }))
    }
    const args = params.arguments ?? {}
    for (const a of prompt.def.arguments ?? []) {
      if (a.required === true && (!Object.hasOwn(args, a.name) || args[a.name] === undefined)) {
        return yield* fail(McpError.invalidParams(`Missing required argument: ${a.name}`, { argument: a.name }))
      }
    }
    const out = yield* liftIn(ctx, () => prompt.def.handler(args, ctx)).pipe(
      Effect.catchTag("McpError", (e) => fail(e))
    )
    if (typeof out === "string") return { messages: [toMessage(out)] }
    if (isMessageList(out)) return { messages: out.map(toMessage) }
    return {
      ...(out.description === undefined ? {} : { description: out.description }),
      messages: out.messages.map(toMessage)
    }
  })
