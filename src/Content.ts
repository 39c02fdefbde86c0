/**
 * Content blocks (MCP `ContentBlock`: text, image, audio, resource link, embedded resource) and
 * helpers that read the text out of results.
 *
 * Spec: Server › Tools › Tool Result (content types); Server › Prompts (PromptMessage content).
 *
 * Guide: [Servers, results and errors](https://github.com/presa-mcp/presa-mcp/blob/main/docs/servers.md#results-and-errors).
 *
 * @since 0.1.0
 */
import { dual } from "effect/Function"
import * as Runtime from "./internal/runtime.js"
import type * as McpSchema from "./McpSchema.js"

/**
 * A text block: `{type: "text", text}`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const text = (value: string, annotations?: McpSchema.Annotations): McpSchema.ContentBlock =>
  annotations === undefined ? { type: "text", text: value } : { type: "text", text: value, annotations }

/**
 * An image block: `{type: "image", data, mimeType}`; `data` is base64 (a `Uint8Array` is encoded).
 *
 * @since 0.1.0
 * @category constructors
 */
export const image = (data: string | Uint8Array, mimeType: string): McpSchema.ContentBlock => ({
  type: "image",
  data: typeof data === "string" ? data : toBase64(data),
  mimeType
})

/**
 * An audio block: `{type: "audio", data, mimeType}`; `data` is base64 (a `Uint8Array` is encoded).
 *
 * @since 0.1.0
 * @category constructors
 */
export const audio = (data: string | Uint8Array, mimeType: string): McpSchema.ContentBlock => ({
  type: "audio",
  data: typeof data === "string" ? data : toBase64(data),
  mimeType
})

/**
 * A resource link: `{type: "resource_link", uri, name, ...}`. The target need not be listed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resourceLink = (link: {
  readonly uri: string
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly mimeType?: string
  readonly size?: number
}): McpSchema.ContentBlock => ({ type: "resource_link", ...link })

/**
 * An embedded resource: `{type: "resource", resource: {uri, mimeType?, text | blob}}`.
 * A `Uint8Array` becomes a base64 `blob`, a string a `text`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const embeddedResource = (
  uri: string,
  contents: string | Uint8Array,
  mimeType?: string
): McpSchema.ContentBlock => ({ type: "resource", resource: resourceContents(uri, contents, mimeType) })

/**
 * Resource contents: a string → `{uri, mimeType?, text}`, bytes → `{uri, mimeType?, blob}` (base64).
 *
 * @since 0.1.0
 * @category constructors
 */
export const resourceContents = (
  uri: string,
  contents: string | Uint8Array,
  mimeType?: string
): McpSchema.ResourceContents => {
  const base = mimeType === undefined ? { uri } : { uri, mimeType }
  return typeof contents === "string" ? { ...base, text: contents } : { ...base, blob: toBase64(contents) }
}

/**
 * A list of content blocks a tool handler returns as its result content, as is
 * (no `structuredContent`).
 *
 * @since 0.1.0
 * @category models
 */
export class Blocks {
  constructor(readonly blocks: ReadonlyArray<McpSchema.ContentBlock>) {}
}

/**
 * Wraps content blocks so a tool handler can return them as the result's `content`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const blocks = (content: ReadonlyArray<McpSchema.ContentBlock>): Blocks => new Blocks(content)

/**
 * Sets `annotations.audience` on a content block (data-first or data-last).
 *
 * @since 0.1.0
 * @category combinators
 */
export const withAudience: {
  (audience: ReadonlyArray<"user" | "assistant">): (self: McpSchema.ContentBlock) => McpSchema.ContentBlock
  (self: McpSchema.ContentBlock, audience: ReadonlyArray<"user" | "assistant">): McpSchema.ContentBlock
} = dual(
  2,
  (self: McpSchema.ContentBlock, audience: ReadonlyArray<"user" | "assistant">): McpSchema.ContentBlock => ({
    ...self,
    annotations: { ...self.annotations, audience }
  })
)

/**
 * The text of a result: the `text` blocks of a `CallToolResult`, the text contents of a
 * `ReadResourceResult`, or the text blocks of a `GetPromptResult`'s messages, joined with "\n".
 *
 * @since 0.1.0
 * @category combinators
 */
export const textOf = (result: {
  readonly content?: ReadonlyArray<McpSchema.ContentBlock>
  readonly contents?: ReadonlyArray<McpSchema.ResourceContents>
  readonly messages?: ReadonlyArray<McpSchema.PromptMessage>
}): string => {
  const out: Array<string> = []
  for (const block of result.content ?? []) if (block.type === "text") out.push(block.text)
  for (const c of result.contents ?? []) if ("text" in c) out.push(c.text)
  for (const m of result.messages ?? []) if (m.content.type === "text") out.push(m.content.text)
  return out.join("\n")
}

/**
 * Base64 of bytes, on any runtime (Node's `Buffer` where it exists, `btoa` elsewhere).
 *
 * @since 0.1.0
 * @category encoding
 */
export const toBase64: (bytes: Uint8Array) => string = Runtime.toBase64
