/**
 * The Skills extension, client side (`io.modelcontextprotocol/skills`, SEP-2640): `skills/get`,
 * reading a skill's files through `resources/read` with the host's verification (size, digest,
 * front matter, listed files), and `resources/directory/read`.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { CallError } from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import * as Skill from "../../Skill.js"
import { call } from "./call.js"
import { decoder } from "./decode.js"
import { ClientError } from "./error.js"
import { listAll } from "./lists.js"
import type { State } from "./state.js"

const decodeGetSkillResult = decoder(Skill.GetSkillResult, Skill.Method.get)
const decodeReadResourceResult = decoder(McpSchema.ReadResourceResult, McpSchema.Method.resourcesRead)
const decodeReadDirectoryResult = decoder(Skill.ReadDirectoryResult, Skill.Method.directoryRead)

/** `skills/get`: the entry of one skill by its SKILL.md URI. */
export const getSkill = (state: State, uri: string): Effect.Effect<Skill.SkillEntry, CallError> =>
  call(state, Skill.Method.get, { uri }).pipe(
    Effect.flatMap(decodeGetSkillResult),
    Effect.map((r) => r.skill)
  )

/** `resources/read` of a file that must come as exactly one contents item. */
const readOne = (state: State, uri: string): Effect.Effect<McpSchema.ResourceContents, CallError> =>
  call(state, McpSchema.Method.resourcesRead, { uri }).pipe(
    Effect.flatMap(decodeReadResourceResult),
    Effect.flatMap((r) =>
      r.contents.length === 1 && r.contents[0] !== undefined
        ? Effect.succeed(r.contents[0])
        : Effect.fail(new ClientError({ reason: "InvalidResult", message: `${uri}: expected one contents item` }))
    )
  )

/** The bytes of a contents item (text as UTF-8, blob decoded). */
const contentOf = (uri: string, contents: McpSchema.ResourceContents): Effect.Effect<Uint8Array, ClientError> =>
  Option.match(Skill.contentsBytes(contents), {
    onNone: () =>
      Effect.fail(new ClientError({ reason: "InvalidResult", message: `${uri}: contents are not valid base64` })),
    onSome: (bytes) => Effect.succeed(bytes)
  })

/** `skills/get`, then SKILL.md read and checked against the entry. */
export const readSkill = (
  state: State,
  uri: string
): Effect.Effect<
  { readonly entry: Skill.SkillEntry; readonly text: string },
  CallError | Skill.SkillVerificationError
> =>
  Effect.gen(function*() {
    const entry = yield* getSkill(state, uri)
    const contents = yield* readOne(state, uri)
    const text = yield* Skill.verifySkillMd(entry, yield* contentOf(uri, contents))
    return { entry, text }
  })

/** One file of a skill, read and checked against `entry` (an unlisted file is not read). */
export const readSkillFile = (
  state: State,
  entry: Skill.SkillEntry,
  uri: string
): Effect.Effect<McpSchema.ResourceContents, CallError | Skill.SkillVerificationError> =>
  Effect.gen(function*() {
    if (entry.resources !== Skill.DYNAMIC_RESOURCES && !entry.resources.some((r) => r.uri === uri)) {
      return yield* new Skill.SkillVerificationError({
        reason: "unlisted",
        uri,
        message: `${uri} is not listed in the skill's entry`
      })
    }
    const contents = yield* readOne(state, uri)
    yield* Skill.verifyFile(entry, uri, yield* contentOf(uri, contents))
    return contents
  })

/** All pages of `resources/directory/read` for `uri`. */
export const readDirectory = (state: State, uri: string): Effect.Effect<ReadonlyArray<McpSchema.Resource>, CallError> =>
  listAll(
    (cursor?: string) =>
      call(state, Skill.Method.directoryRead, cursor === undefined ? { uri } : { uri, cursor }).pipe(
        Effect.flatMap(decodeReadDirectoryResult)
      ),
    "resources"
  )
