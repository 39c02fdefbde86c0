/**
 * Resources (MCP 2026-07-28, Resources): `resources/list`,
 * `resources/templates/list`, `resources/read` (static resources, templates and skill files), and
 * the Skills extension's `skills/list`, `skills/get` and `resources/directory/read` (SEP-2640).
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Content from "../../Content.js"
import type { InputRequired } from "../../Input.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import { type RequestContextShape } from "../../RequestContext.js"
import type * as Resource from "../../Resource.js"
import type * as SkillApi from "../../Skill.js"
import * as UriTemplate from "../../UriTemplate.js"
import { quote } from "../quote.js"
import * as Skill from "../skill/build.js"
import { fail, Failure } from "./failure.js"
import type { Server } from "./model.js"
import { nextCursor, page } from "./paging.js"
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

/** `resources/list`: the static resources, then the listed skills' SKILL.md files, paged. */
export const listResources = (
  server: Server,
  snapshot: Defs.Snapshot,
  { cursor }: typeof McpSchema.PaginatedParams.Type
): Either.Either<McpSchema.ListResourcesResult, Failure> =>
  Either.map(
    page(
      server,
      snapshot,
      cursor,
      [...snapshot.resources.map((r) => r.wire), ...listedSkills(snapshot).map((s) => s.wire)],
      "resources",
      (r) => r
    ),
    (p) => ({ resources: p.items, ...nextCursor(p) })
  )

/** `resources/templates/list`, paged. */
export const listTemplates = (
  server: Server,
  snapshot: Defs.Snapshot,
  { cursor }: typeof McpSchema.PaginatedParams.Type
): Either.Either<McpSchema.ListResourceTemplatesResult, Failure> =>
  Either.map(
    page(server, snapshot, cursor, snapshot.templates, "resourceTemplates", (t) => t.wire),
    (p) => ({ resourceTemplates: p.items, ...nextCursor(p) })
  )

/**
 * `resources/read`: a skill's file, else the static resource at `uri`, else the first template
 * that matches it; nothing (or a handler yielding nothing) is -32602 "Resource not found" with
 * `data.uri` (MCP 2026-07-28, Resources › Error Handling).
 */
export const readResource = (
  snapshot: Defs.Snapshot,
  { uri }: typeof McpSchema.ReadResourceParams.Type,
  ctx: RequestContextShape
): Effect.Effect<McpSchema.ReadResourceResult, Failure | InputRequired> =>
  Effect.gen(function*() {
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

// ---------------------------------------------------------------------------------------------
// skills (io.modelcontextprotocol/skills, SEP-2640)
// ---------------------------------------------------------------------------------------------

const listedSkills = (snapshot: Defs.Snapshot): ReadonlyArray<Defs.CompiledSkill> =>
  snapshot.skills.filter((s) => !s.skill.unlisted)

/** `skills/list`: the entries of the listed skills, paged. */
export const listSkills = (
  server: Server,
  snapshot: Defs.Snapshot,
  { cursor }: typeof McpSchema.PaginatedParams.Type
): Either.Either<SkillApi.ListSkillsResult, Failure> =>
  Either.map(
    page(server, snapshot, cursor, listedSkills(snapshot), "skills", (s) => s.entry),
    (p) => ({ skills: p.items, ...nextCursor(p) })
  )

/** `skills/get`: the entry of the skill whose SKILL.md is `uri` (listed or not); else -32602. */
export const getSkill = (
  snapshot: Defs.Snapshot,
  { uri }: typeof Skill.GetSkillParams.Type
): Either.Either<SkillApi.GetSkillResult, Failure> => {
  const found = snapshot.skills.find((s) => s.skill.uri === uri)
  return found === undefined
    ? Either.left(new Failure(McpError.invalidParams(`No skill is served at ${quote(uri)}`, { uri: quote(uri) })))
    : Either.right({ skill: found.entry })
}

/** `resources/directory/read`: direct children of a skill directory, paged; else -32602. */
export const readDirectory = (
  server: Server,
  snapshot: Defs.Snapshot,
  { cursor, uri }: typeof Skill.ReadDirectoryParams.Type
): Either.Either<typeof SkillApi.ReadDirectoryResult.Type, Failure> => {
  for (const s of snapshot.skills) {
    const children = Skill.children(s.skill, uri)
    if (Option.isSome(children)) {
      return Either.map(
        page(server, snapshot, cursor, children.value, `resources@${uri}`, (r) => r),
        (p) => ({ resources: p.items, ...nextCursor(p) })
      )
    }
  }
  return Either.left(
    new Failure(McpError.invalidParams(`${quote(uri)} is not a directory resource`, { uri: quote(uri) }))
  )
}
