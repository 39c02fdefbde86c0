/**
 * `resources/read` (static resources, templates and skill files), and the Skills extension's
 * `skills/get` and `resources/directory/read` (MCP 2026-07-28, Server Features, Resources).
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Content from "../../Content.js"
import type { InputRequired } from "../../Input.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import { type RequestContextShape } from "../../RequestContext.js"
import type * as Resource from "../../Resource.js"
import * as UriTemplate from "../../UriTemplate.js"
import * as Skill from "../skill/build.js"
import { decodeParams, fail, type Failure } from "./failure.js"
import type { Server } from "./model.js"
import { page } from "./paging.js"
import { liftIn } from "./requestContext.js"
import type * as Defs from "./snapshot.js"

const { McpError } = JsonRpc

const DecodeContents = Schema.decodeUnknownOption(Schema.Array(McpSchema.ResourceContents), {
  onExcessProperty: "preserve"
})

const toContents = (
  uri: string,
  mimeType: string | undefined,
  out: Resource.ResourceReturn
): Effect.Effect<Option.Option<ReadonlyArray<McpSchema.ResourceContents>>> => {
  if (out === undefined || out === null) return Effect.succeedNone
  if (typeof out === "string" || out instanceof Uint8Array) {
    return Effect.succeed(Option.some([Content.resourceContents(uri, out, mimeType)]))
  }
  const list: unknown = Array.isArray(out) ? out : "contents" in out ? out.contents : undefined
  const decoded = DecodeContents(list)
  return Option.isSome(decoded)
    ? Effect.succeed(decoded)
    : Effect.dieMessage("resource handler returned contents that are not {uri, text} or {uri, blob}")
}

export const readResource = (
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject,
  ctx: RequestContextShape
): Effect.Effect<JsonRpc.JsonObject, Failure | InputRequired> =>
  Effect.gen(function*() {
    const { uri } = yield* decodeParams(McpSchema.ReadResourceParams, params)
    const run = (
      handler: () => ReturnType<Resource.Resource["handler"]>,
      mimeType: string | undefined
    ) =>
      liftIn(ctx, handler).pipe(
        Effect.flatMap((out) => toContents(uri, mimeType, out)),
        Effect.catchTag("McpError", (e) => fail(e))
      )
    for (const s of snapshot.skills) {
      if (uri !== s.skill.uri && !uri.startsWith(Skill.root(s.skill) + "/")) continue
      const file = yield* Skill.read(s.skill, uri)
      if (Option.isSome(file)) return { contents: [Skill.toResourceContents(file.value)] }
    }
    const resource = snapshot.resourcesByUri.get(uri)
    if (resource !== undefined) {
      const contents = yield* run(() => resource.def.handler(uri, ctx), resource.def.mimeType)
      if (Option.isSome(contents)) return { contents: contents.value }
      return yield* fail(McpError.resourceNotFound(uri))
    }
    for (const template of snapshot.templates) {
      const vars = UriTemplate.match(template.parsed, uri)
      if (Option.isNone(vars)) continue
      const contents = yield* run(() => template.def.handler(vars.value, { ...ctx, uri }), template.def.mimeType)
      if (Option.isSome(contents)) return { contents: contents.value }
      return yield* fail(McpError.resourceNotFound(uri))
    }
    return yield* fail(McpError.resourceNotFound(uri))
  })

/** `skills/get`: the entry of the skill whose SKILL.md is `uri` (listed or not); else -32602. */
export const getSkill = (
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject
): Effect.Effect<JsonRpc.JsonObject, Failure> =>
  Effect.gen(function*() {
    const { uri } = yield* decodeParams(Skill.GetSkillParams, params)
    const found = snapshot.skills.find((s) => s.skill.uri === uri)
    if (found === undefined) return yield* fail(McpError.invalidParams(`No skill is served at ${uri}`, { uri }))
    return { skill: found.entry }
  })

/** `resources/directory/read`: direct children of a skill directory, paged; else -32602. */
export const readDirectory = (
  server: Server,
  snapshot: Defs.Snapshot,
  params: JsonRpc.JsonObject
): Effect.Effect<JsonRpc.JsonObject, Failure> =>
  Effect.gen(function*() {
    const { uri } = yield* decodeParams(Skill.ReadDirectoryParams, params)
    for (const s of snapshot.skills) {
      const children = Skill.children(s.skill, uri)
      if (Option.isSome(children)) {
        return yield* page(server, snapshot, params, children.value, `resources@${uri}`, (r) => r, "resources")
      }
    }
    return yield* fail(McpError.invalidParams(`${uri} is not a directory resource`, { uri }))
  })
