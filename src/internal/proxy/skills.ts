/**
 * Skills through the proxy (the Skills extension, SEP-2640): every skill a
 * backend lists is fetched and verified against the backend's entry, then served from the proxy
 * with `Skill.make`, so its entry carries the same digests (the bytes are identical).
 *
 * - A skill that fails verification or cannot be fetched is left out with its files (logged);
 *   the rest of the backend is served.
 * - A `"dynamic"` skill stays dynamic: its files are generators that read from the backend on
 *   every read (the file list comes from `resources/directory/read` when the backend offers it,
 *   else it is just `SKILL.md`).
 * - A skill the backend answers through `skills/get` but does not list is not served.
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpClient from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import * as Skill from "../../Skill.js"
import { type Claim, isFatal, type Item, item, type Link, toMcpError } from "./definitions.js"
import { boundedList, jsonBytes, type Limits } from "./listing.js"
import * as Names from "./names.js"

const SKILL_MD = "SKILL.md"
const SKILL_MD_SUFFIX = `/${SKILL_MD}`
const SCHEME = `${Skill.SCHEME}://`
/** How deep a dynamic skill's directories are walked. */
const MAX_DEPTH = 16

/** Why one skill is not served. */
class LeftOut extends Data.TaggedError("LeftOut")<{ readonly message: string }> {}

/** What the backend's skills listing yields: the items to serve, and which URIs belong to its skills. */
export interface SkillListing {
  readonly items: ReadonlyArray<Item>
  /** Is `uri` a skill's `SKILL.md`, root directory or file (served or left out)? */
  readonly covers: (uri: string) => boolean
}

const rootOf = (entry: Skill.SkillEntry): string => entry.uri.slice(0, -SKILL_MD_SUFFIX.length)

const decodeSegment = (segment: string): Option.Option<string> => {
  try {
    return Option.some(decodeURIComponent(segment))
  } catch {
    return Option.none()
  }
}

/** The file path of `uri` relative to the skill root (segments percent-decoded), if below it. */
const relativeOf = (root: string, uri: string): Option.Option<string> => {
  if (!uri.startsWith(`${root}/`)) return Option.none()
  const segments = uri.slice(root.length + 1).split("/").map(decodeSegment)
  return Option.map(Option.all(segments), (parts) => parts.join("/"))
}

const isDirectoryRead = (client: McpClient.McpClient): boolean => {
  const settings = client.info.capabilities.extensions?.[Skill.EXTENSION_ID]
  return JsonRpc.isObject(settings) && settings.directoryRead === true
}

/** The bytes and served form of one contents item (text stays text, so the bytes are identical). */
const fileOf = (uri: string, contents: McpSchema.ResourceContents) =>
  Option.match(Skill.contentsBytes(contents), {
    onNone: () => Effect.fail(new LeftOut({ message: `${uri} is not valid base64` })),
    onSome: (bytes) => Effect.succeed({ bytes, source: "text" in contents ? contents.text : bytes })
  })

/** A static skill: every listed file fetched and verified (size, digest; SKILL.md front matter). */
const loadStatic = (
  link: Link,
  entry: Skill.SkillEntry,
  resources: ReadonlyArray<Skill.SkillResource>
): Effect.Effect<Item, LeftOut | McpClient.CallError | Skill.SkillVerificationError> =>
  Effect.gen(function*() {
    const root = rootOf(entry)
    const total = resources.reduce((n, r) => n + r.size, 0)
    if (resources.length > Skill.MAX_RESOURCES_PER_SKILL || total > Skill.MAX_TOTAL_SIZE_PER_SKILL) {
      return yield* new LeftOut({ message: `over the per-skill limits (${resources.length} files, ${total} bytes)` })
    }
    const files: Record<string, Skill.FileContent> = {}
    const mimeTypes: Record<string, string> = {}
    let skillMd: Uint8Array | undefined
    for (const resource of resources) {
      const relative = relativeOf(root, resource.uri)
      if (Option.isNone(relative)) return yield* new LeftOut({ message: `${resource.uri} has no path below ${root}` })
      const contents = yield* link.client.readSkillFile(entry, resource.uri)
      const file = yield* fileOf(resource.uri, contents)
      if (resource.uri === entry.uri) {
        yield* Skill.verifySkillMd(entry, file.bytes)
        skillMd = file.bytes
      }
      files[relative.value] = file.source
      if (contents.mimeType !== undefined) mimeTypes[relative.value] = contents.mimeType
    }
    const skill = yield* rebuild(root, files, { mimeTypes })
    const served = yield* Skill.entry(skill)
    const same = served.resources !== Skill.DYNAMIC_RESOURCES && served.resources.length === resources.length &&
      resources.every((r) =>
        served.resources !== Skill.DYNAMIC_RESOURCES &&
        served.resources.some((s) => s.uri === r.uri && s.digest === r.digest && s.size === r.size)
      )
    if (!same) return yield* new LeftOut({ message: "its files cannot be served under the same URIs and digests" })
    // Hosts read front matter leniently; the rebuilt entry must agree with that reading.
    if (skillMd !== undefined) yield* Skill.verifySkillMd(served, skillMd)
    const claims: ReadonlyArray<Claim> = resources.map((r) => ({ kind: "resource", key: r.uri }))
    return item("skill", entry.uri, JSON.stringify(entry), { _tag: "skill", def: skill }, claims)
  })

const rebuild = (root: string, files: Readonly<Record<string, Skill.FileSource>>, options: Skill.Options) =>
  Skill.make(root.slice(SCHEME.length), files, options).pipe(
    Effect.mapError((e) => new LeftOut({ message: `it cannot be served: ${e.message}` }))
  )

/** One file of a dynamic skill: read from the backend on every read (a failure is a defect of that read). */
const generator = (link: Link, entry: Skill.SkillEntry, uri: string): Effect.Effect<Skill.FileContent> =>
  Effect.gen(function*() {
    if (yield* link.isDown) return yield* Effect.dieMessage(`${Names.logged(link.prefix)} is unavailable`)
    const result = yield* link.client.readResource(uri)
    const contents = result.contents[0]
    if (result.contents.length !== 1 || contents === undefined) {
      return yield* new McpClient.ClientError({
        reason: "InvalidResult",
        message: `${uri}: expected one contents item`
      })
    }
    const file = yield* fileOf(uri, contents)
    yield* Skill.verifyFile(entry, uri, file.bytes)
    return file.source
  }).pipe(
    Effect.catchAll((e) =>
      (e._tag === "McpError" || e._tag === "TransportError" || e._tag === "ClientError"
        ? Effect.asVoid(toMcpError(link, e))
        : Effect.void).pipe(
          Effect.zipRight(Effect.dieMessage(`${Names.logged(link.prefix)}: ${uri} could not be read: ${e.message}`))
        )
    )
  )

interface DynamicFile {
  readonly relative: string
  readonly uri: string
  readonly mimeType: string | undefined
}

/** The files of a dynamic skill, from `resources/directory/read` (bounded), always with SKILL.md. */
const dynamicFiles = (
  link: Link,
  entry: Skill.SkillEntry
): Effect.Effect<ReadonlyArray<DynamicFile>, McpClient.CallError> =>
  Effect.gen(function*() {
    const root = rootOf(entry)
    const out: Array<DynamicFile> = []
    if (isDirectoryRead(link.client)) {
      const walk = (dir: string, depth: number): Effect.Effect<void, McpClient.CallError> =>
        Effect.gen(function*() {
          for (const child of yield* link.client.readDirectory(dir)) {
            if (out.length >= Skill.MAX_RESOURCES_PER_SKILL) return
            if (child.mimeType === Skill.DIRECTORY_MIME_TYPE) {
              if (depth < MAX_DEPTH && child.uri.startsWith(`${dir}/`)) yield* walk(child.uri, depth + 1)
              continue
            }
            const relative = relativeOf(root, child.uri)
            if (Option.isSome(relative) && !out.some((f) => f.uri === child.uri)) {
              out.push({ relative: relative.value, uri: child.uri, mimeType: child.mimeType })
            }
          }
        })
      yield* walk(root, 0).pipe(
        Effect.catchIf(
          (e) => e._tag === "McpError",
          (e) => Effect.logWarning(`${Names.logged(link.prefix)}: directory of ${root} not read: ${e.message}`)
        )
      )
    }
    if (!out.some((f) => f.uri === entry.uri)) {
      out.unshift({ relative: SKILL_MD, uri: entry.uri, mimeType: "text/markdown" })
    }
    return out
  })

/** A dynamic skill: generator files reading from the backend. */
const loadDynamic = (link: Link, entry: Skill.SkillEntry): Effect.Effect<Item, LeftOut | McpClient.CallError> =>
  Effect.gen(function*() {
    const root = rootOf(entry)
    const listed = yield* dynamicFiles(link, entry)
    const files: Record<string, Skill.FileSource> = {}
    const mimeTypes: Record<string, string> = {}
    for (const file of listed) {
      files[file.relative] = generator(link, entry, file.uri)
      if (file.mimeType !== undefined) mimeTypes[file.relative] = file.mimeType
    }
    const skill = yield* rebuild(root, files, { frontmatter: entry.frontmatter, mimeTypes })
    for (const file of listed) {
      if (Skill.fileUri(skill, file.relative) !== file.uri) {
        return yield* new LeftOut({ message: `${file.uri} cannot be served under the same URI` })
      }
    }
    const claims: ReadonlyArray<Claim> = listed.map((f) => ({ kind: "resource", key: f.uri }))
    return item("skill", entry.uri, JSON.stringify({ entry, files: listed }), { _tag: "skill", def: skill }, claims)
  })

/**
 * The backend's listed skills as items. `current` holds what is served now: an unchanged static
 * entry (same digests) is not fetched again. A fatal transport failure fails the listing (the
 * backend is down); any other failure leaves that one skill out.
 */
export const listSkills = (
  link: Link,
  limits: Limits,
  current: ReadonlyMap<string, Item>
): Effect.Effect<SkillListing, McpClient.CallError> =>
  Effect.gen(function*() {
    if (!link.client.skillsSupported) return { items: [], covers: () => false }
    // A static skill's files are fetched and held: their sizes count against `maxListBytes`.
    const entries = yield* boundedList(link, limits, {
      method: Skill.Method.list,
      field: "skills",
      schema: Skill.SkillEntry,
      weigh: (entry) =>
        jsonBytes(entry) +
        (entry.resources === Skill.DYNAMIC_RESOURCES ? 0 : entry.resources.reduce((n, r) => n + r.size, 0))
    })
    const roots = entries.map((e) => ({ uri: e.uri, root: rootOf(e) }))
    const covers = (uri: string) => roots.some((r) => uri === r.uri || uri === r.root || uri.startsWith(`${r.root}/`))
    const loaded = yield* Effect.forEach(entries, (entry) => {
      if (!entry.uri.startsWith(SCHEME)) {
        return leftOut(link, entry, `it is served under ${entry.uri}, not a ${SCHEME} URI`)
      }
      if (entry.resources === Skill.DYNAMIC_RESOURCES) return tolerate(link, entry, loadDynamic(link, entry))
      const held = current.get(`skill ${entry.uri}`)
      if (held !== undefined && held.fingerprint === JSON.stringify(entry)) return Effect.succeed(Option.some(held))
      return tolerate(link, entry, loadStatic(link, entry, entry.resources))
    }, { concurrency: 4 })
    return { items: loaded.flatMap(Option.toArray), covers }
  })

const leftOut = (link: Link, entry: Skill.SkillEntry, why: string): Effect.Effect<Option.Option<Item>> =>
  Effect.as(
    Effect.logWarning(`${Names.logged(link.prefix)}: skill ${entry.uri} left out with its files: ${why}`),
    Option.none()
  )

/** Leaves the skill out on any failure except a fatal transport failure, which fails the listing. */
const tolerate = (
  link: Link,
  entry: Skill.SkillEntry,
  load: Effect.Effect<Item, LeftOut | McpClient.CallError | Skill.SkillVerificationError>
): Effect.Effect<Option.Option<Item>, McpClient.CallError> =>
  load.pipe(
    Effect.map(Option.some),
    Effect.catchAll((e) =>
      e._tag === "TransportError" && isFatal(e)
        ? Effect.fail(e)
        : leftOut(
          link,
          entry,
          e._tag === "SkillVerificationError"
            ? `${e.uri} failed verification (${e.reason}): ${e.message}`
            : `it cannot be fetched: ${e.message}`
        )
    )
  )
