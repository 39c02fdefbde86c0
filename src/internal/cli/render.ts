/**
 * Readable text for each command's result (what a terminal shows without `--json`). With
 * `--json` the results are printed as they are (see `commands.ts`); these functions only make
 * text. Pure.
 *
 * @internal
 */
import * as JsonRpc from "../../JsonRpc.js"
import type * as McpClient from "../../McpClient.js"
import type * as McpSchema from "../../McpSchema.js"

const compact = (value: unknown): string => JSON.stringify(value)
const pretty = (value: unknown): string => JSON.stringify(value, null, 2)

/** Bytes held by a base64 string (without decoding it). */
const base64Bytes = (data: string): number => {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding)
}

const described = (name: string, title: string | undefined, description: string | undefined): string =>
  [
    name,
    title !== undefined && title !== name ? ` (${title})` : "",
    description !== undefined ? ` — ${description}` : ""
  ]
    .join("")

/** `info`. @internal */
export const info = (info: McpClient.Info): string => {
  const lines = [
    `server:       ${
      info.serverInfo === undefined ? "(no serverInfo)" : `${info.serverInfo.name} ${info.serverInfo.version}`
    }`,
    `era:          ${info.era}`,
    `protocol:     ${info.protocolVersion}`,
    `supported:    ${info.supportedVersions.join(", ")}`,
    `capabilities: ${
      Object.entries(info.capabilities).map(([k, v]) =>
        v !== null && typeof v === "object" && Object.keys(v).length > 0 ? `${k} ${compact(v)}` : k
      ).join(", ") || "(none)"
    }`
  ]
  if (info.instructions !== undefined) lines.push("instructions:", indent(info.instructions))
  return lines.join("\n")
}

const indent = (text: string): string => text.split("\n").map((line) => `  ${line}`).join("\n")

/** The values listed of one argument's `enum` / `const`, at most. */
const MAX_VALUES = 12

/**
 * The values an argument's schema allows, when it lists them: `enum`, `const`, or an `anyOf` /
 * `oneOf` whose every branch does (a union of literals); `undefined` otherwise.
 */
const allowedValues = (p: unknown): ReadonlyArray<unknown> | undefined => {
  if (!JsonRpc.isObject(p)) return undefined
  if (Array.isArray(p.enum)) return p.enum
  if ("const" in p) return [p.const]
  const branches = Array.isArray(p.anyOf) ? p.anyOf : Array.isArray(p.oneOf) ? p.oneOf : undefined
  if (branches === undefined || branches.length === 0) return undefined
  const each = branches.map(allowedValues)
  return each.every((v) => v !== undefined) ? each.flatMap((v) => v ?? []) : undefined
}

/** `"a" | "b" | 3`, the first {@link MAX_VALUES} values and how many more. */
const valueList = (values: ReadonlyArray<unknown>): string => {
  const shown = values.slice(0, MAX_VALUES).map((v) => compact(v)).join(" | ")
  return values.length > MAX_VALUES ? `${shown} | … (${values.length} values)` : shown
}

/** `name: type` per argument (`?` when optional), with the values it allows: `mode: string ("a" | "b")`. */
const schemaArguments = (schema: JsonRpc.JsonObject): string => {
  const properties = schema.properties
  if (properties === null || typeof properties !== "object" || Array.isArray(properties)) return ""
  const required = Array.isArray(schema.required) ? schema.required : []
  return Object.entries(properties).map(([name, p]) => {
    const declared = p !== null && typeof p === "object" && "type" in p ? String(p.type) : undefined
    const values = allowedValues(p)
    const type = values === undefined
      ? declared ?? "any"
      : declared === undefined
      ? `(${valueList(values)})`
      : `${declared} (${valueList(values)})`
    return `${name}: ${type}${required.includes(name) ? "" : "?"}`
  }).join(", ")
}

/** `tools`. @internal */
export const tools = (tools: ReadonlyArray<McpSchema.Tool>): string =>
  tools.length === 0 ? "(no tools)" : tools.map((t) => {
    const args = schemaArguments(t.inputSchema)
    return described(t.name, t.title, t.description) + (args === "" ? "" : `\n  arguments: ${args}`)
  }).join("\n")

/** One resource's contents. */
const contents = (c: McpSchema.ResourceContents): string =>
  "text" in c ? c.text : `[blob ${c.mimeType ?? "application/octet-stream"}, ${base64Bytes(c.blob)} bytes] ${c.uri}`

/** One content block. @internal */
export const block = (b: McpSchema.ContentBlock): string => {
  switch (b.type) {
    case "text":
      return b.text
    case "image":
    case "audio":
      return `[${b.type} ${b.mimeType}, ${base64Bytes(b.data)} bytes]`
    case "resource_link":
      return `[link ${described(b.name, b.title, b.description)}] ${b.uri}`
    case "resource":
      return "text" in b.resource ? `[resource ${b.resource.uri}]\n${b.resource.text}` : contents(b.resource)
  }
}

/** `call`. @internal */
export const callResult = (result: McpSchema.CallToolResult): string => {
  const parts = result.content.map(block)
  if (result.structuredContent !== undefined) parts.push(`structuredContent: ${pretty(result.structuredContent)}`)
  const text = parts.length === 0 ? "(empty result)" : parts.join("\n")
  return result.isError === true ? `tool error:\n${text}` : text
}

/** `resources`. @internal */
export const resources = (resources: ReadonlyArray<McpSchema.Resource>): string =>
  resources.length === 0
    ? "(no resources)"
    : resources.map((r) =>
      `${r.uri}  ${described(r.name, r.title, r.description)}${r.mimeType === undefined ? "" : ` [${r.mimeType}]`}`
    ).join("\n")

/** `templates`. @internal */
export const templates = (templates: ReadonlyArray<McpSchema.ResourceTemplate>): string =>
  templates.length === 0
    ? "(no resource templates)"
    : templates.map((t) =>
      `${t.uriTemplate}  ${described(t.name, t.title, t.description)}${
        t.mimeType === undefined ? "" : ` [${t.mimeType}]`
      }`
    ).join("\n")

/** `read`. @internal */
export const read = (result: McpSchema.ReadResourceResult): string =>
  result.contents.length === 1 && result.contents[0] !== undefined
    ? contents(result.contents[0])
    : result.contents.map((c) => `--- ${c.uri}\n${contents(c)}`).join("\n")

/** `prompts`. @internal */
export const prompts = (prompts: ReadonlyArray<McpSchema.Prompt>): string =>
  prompts.length === 0 ? "(no prompts)" : prompts.map((p) =>
    [
      described(p.name, p.title, p.description),
      ...(p.arguments ?? []).map((a) =>
        `  ${a.name}${a.required === true ? " (required)" : ""}${
          a.description === undefined ? "" : `: ${a.description}`
        }`
      )
    ].join("\n")
  ).join("\n")

/** `prompt`. @internal */
export const prompt = (result: McpSchema.GetPromptResult): string =>
  [
    ...(result.description === undefined ? [] : [result.description, ""]),
    ...result.messages.map((m) => `[${m.role}] ${block(m.content)}`)
  ].join("\n")

/** `complete`. @internal */
export const completion = (completion: McpSchema.CompleteResult["completion"]): string => {
  const more = completion.hasMore === true ? ", more available" : ""
  const total = completion.total === undefined ? "" : ` of ${completion.total}`
  return [...completion.values, `(${completion.values.length}${total}${more})`].join("\n")
}

/** One line of `listen`. @internal */
export const notification = (n: JsonRpc.Notification): string =>
  n.params === undefined ? n.method : `${n.method} ${compact(n.params)}`
