/**
 * Live changes of the definitions: add/remove over the snapshot Ref, with change events.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type * as Prompt from "../../Prompt.js"
import type * as Resource from "../../Resource.js"
import type * as Skill from "../../Skill.js"
import type * as Tool from "../../Tool.js"
import * as Defs from "./snapshot.js"

import type { Server } from "./model.js"
import { listChanged } from "./subscriptions.js"

// ---------------------------------------------------------------------------------------------
// live changes
// ---------------------------------------------------------------------------------------------

const change = (
  server: Server,
  kind: "tools" | "prompts" | "resources",
  f: (s: Defs.Snapshot) => Either.Either<Defs.Snapshot, Defs.DefinitionError>
): Effect.Effect<void, Defs.DefinitionError> =>
  SubscriptionRef.modifyEffect(server.state, (s) =>
    Either.match(f(s), {
      onLeft: (e) => Effect.fail(e),
      onRight: (next) => Effect.succeed([undefined, { ...next, revision: s.revision + 1 }] as const)
    })).pipe(Effect.zipRight(listChanged(server, kind)))

const rebuild = (server: Server, s: Defs.Snapshot, patch: {
  readonly tools?: ReadonlyArray<Tool.Tool>
  readonly resources?: ReadonlyArray<Resource.Resource>
  readonly resourceTemplates?: ReadonlyArray<Resource.ResourceTemplate>
  readonly prompts?: ReadonlyArray<Prompt.Prompt>
  readonly skills?: ReadonlyArray<Defs.CompiledSkill>
}) =>
  Defs.build(
    {
      tools: patch.tools ?? s.tools.map((t) => t.def),
      resources: patch.resources ?? s.resources.map((r) => r.def),
      resourceTemplates: patch.resourceTemplates ?? s.templates.map((t) => t.def),
      prompts: patch.prompts ?? s.prompts.map((p) => p.def),
      skills: patch.skills ?? s.skills
    },
    s.revision,
    Defs.validatorOf(server.options)
  )

export const addTool = (server: Server, tool: Tool.Tool) =>
  change(server, "tools", (s) => rebuild(server, s, { tools: [...s.tools.map((t) => t.def), tool] }))
export const removeTool = (server: Server, name: string) =>
  change(
    server,
    "tools",
    (s) => rebuild(server, s, { tools: s.tools.map((t) => t.def).filter((t) => t.name !== name) })
  )
export const addResource = (server: Server, resource: Resource.Resource) =>
  change(server, "resources", (s) => rebuild(server, s, { resources: [...s.resources.map((r) => r.def), resource] }))
export const removeResource = (server: Server, uri: string) =>
  change(
    server,
    "resources",
    (s) => rebuild(server, s, { resources: s.resources.map((r) => r.def).filter((r) => r.uri !== uri) })
  )
export const addResourceTemplate = (server: Server, template: Resource.ResourceTemplate) =>
  change(
    server,
    "resources",
    (s) => rebuild(server, s, { resourceTemplates: [...s.templates.map((t) => t.def), template] })
  )
export const removeResourceTemplate = (server: Server, uriTemplate: string) =>
  change(
    server,
    "resources",
    (s) =>
      rebuild(server, s, {
        resourceTemplates: s.templates.map((t) => t.def).filter((t) => t.uriTemplate !== uriTemplate)
      })
  )
export const addPrompt = (server: Server, prompt: Prompt.Prompt) =>
  change(server, "prompts", (s) => rebuild(server, s, { prompts: [...s.prompts.map((p) => p.def), prompt] }))
export const removePrompt = (server: Server, name: string) =>
  change(
    server,
    "prompts",
    (s) => rebuild(server, s, { prompts: s.prompts.map((p) => p.def).filter((p) => p.name !== name) })
  )

/** Adds a skill, or replaces the one served at the same path; its files come and go with it. */
export const addSkill = (server: Server, skill: Skill.Skill) =>
  Effect.flatMap(Defs.compileSkill(skill), (compiled) =>
    change(
      server,
      "resources",
      (s) => rebuild(server, s, { skills: [...s.skills.filter((c) => c.skill.uri !== skill.uri), compiled] })
    ))

/** Removes the skill whose SKILL.md URI is `uri` (no-op when absent). */
export const removeSkill = (server: Server, uri: string) =>
  change(server, "resources", (s) => rebuild(server, s, { skills: s.skills.filter((c) => c.skill.uri !== uri) }))
