/**
 * Prompt definitions: plain records with a handler.
 *
 * Spec: Server › Prompts (unknown prompt and missing required argument are -32602).
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type { DefinitionServices, HandlerResult } from "./Handler.js"
import type { InputRequired } from "./Input.js"
import type * as JsonRpc from "./JsonRpc.js"
import type * as McpSchema from "./McpSchema.js"
import type { RequestContext, RequestContextShape } from "./RequestContext.js"
import type { Complete } from "./Resource.js"

/**
 * A message a prompt handler may return: a string (a user text message), or
 * `{role, content}` where `content` is a string (text) or a content block.
 *
 * @since 0.1.0
 * @category models
 */
export type MessageInput = string | {
  readonly role: "user" | "assistant"
  readonly content: string | McpSchema.ContentBlock
}

/**
 * What a prompt handler may return: a string → one user message; an array of messages; or an
 * object with `messages` (and optional `description`) → as is.
 *
 * @since 0.1.0
 * @category models
 */
export type PromptReturn =
  | string
  | ReadonlyArray<MessageInput>
  | { readonly description?: string; readonly messages: ReadonlyArray<MessageInput> }

/**
 * A prompt: `{name, title?, description?, arguments?, handler(args, ctx), complete?}`. Required
 * arguments are checked before the handler runs (-32602 naming the missing one). `R`: the services
 * its handler (and completion functions) need besides `RequestContext` (default none).
 *
 * @since 0.1.0
 * @category models
 */
export interface Prompt<R = never> {
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly arguments?: ReadonlyArray<McpSchema.PromptArgument>
  readonly icons?: ReadonlyArray<McpSchema.Icon>
  readonly _meta?: JsonRpc.JsonObject
  /**
   * Per-caller visibility: when it yields `false` the definition is absent from every list and,
   * named directly, gets the same error as one that does not exist. A predicate that fails hides it.
   */
  readonly visible?: (ctx: RequestContextShape) => boolean | PromiseLike<boolean> | Effect.Effect<boolean>
  readonly handler: (
    args: Readonly<Record<string, string>>,
    ctx: RequestContextShape
  ) => HandlerResult<PromptReturn, JsonRpc.McpError | InputRequired, R>
  readonly complete?: Readonly<Record<string, Complete<R>>>
}

/**
 * Any prompt, whatever services it needs (the constraint `McpServer.make` infers against).
 *
 * @since 0.1.0
 * @category models
 */
export type Any = Prompt<unknown>

/**
 * The services a prompt's handler and completion functions need besides `RequestContext`
 * (distributes over a union of prompts).
 *
 * @since 0.1.0
 * @category type-level
 */
export type Services<P> = DefinitionServices<P>

/**
 * Defines a prompt (identity, for inference of the handler's services `R`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <R = never>(prompt: Prompt<R>): Prompt<Exclude<R, RequestContext>> =>
  // `R` as inferred may include `RequestContext` (always provided): the result type drops it.
  prompt as Prompt<Exclude<R, RequestContext>>
