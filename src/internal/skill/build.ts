/**
 * Implementation of `Skill.ts`: constructors, serving, directory listing and host-side checks.
 *
 * @since 0.1.0
 * @internal
 */
import type { PlatformError } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Content from "../../Content.js"
import type * as McpSchema from "../../McpSchema.js"
import type {
  FileContent,
  FileSource,
  Options,
  Skill,
  SkillEntry,
  SkillFile,
  SkillFileContents,
  SkillResource
} from "../../Skill.js"
import * as files_ from "./files.js"
import * as frontmatter_ from "./frontmatter.js"
import type * as SkillYaml from "./yaml.js"

// `yaml` is loaded on the first skill built or verified (`Skill.parseFrontmatter`, synchronous,
// has `Skill.ts` import it up front): a server that serves no skills does not load it.
let yamlLoaded: Promise<typeof SkillYaml> | undefined
const loadYaml: Effect.Effect<typeof SkillYaml> = Effect.promise(() => yamlLoaded ??= import("./yaml.js"))

/** @internal */
export const EXTENSION_ID = "io.modelcontextprotocol/skills"

/** @internal */
export const Method = {
  list: "skills/list",
  get: "skills/get",
  directoryRead: "resources/directory/read"
} as const

const OpenRecord = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** @internal */
export const GetSkillParams = Schema.Struct({ uri: Schema.String }, OpenRecord)

/** @internal */
export const ReadDirectoryParams = Schema.Struct(
  { uri: Schema.String, cursor: Schema.optional(Schema.String) },
  OpenRecord
)

/** @internal */
export const MAX_RESOURCES_PER_SKILL = 512

/** @internal */
export const MAX_TOTAL_SIZE_PER_SKILL = 16_777_216

/** @internal */
export const DYNAMIC_RESOURCES = "dynamic"

/** @internal */
export const SCHEME = "skill"

/** @internal */
export const SKILL_MD = "SKILL.md"

/** @internal */
export const SKILL_MD_SUFFIX = `/${SKILL_MD}`

/** @internal */
export type SkillErrorReason =
  | "missing-skill-md"
  | "frontmatter"
  | "name-mismatch"
  | "too-many-files"
  | "too-large"
  | "invalid-path"

/** @internal */
export class SkillError extends Data.TaggedError("SkillError")<{
  readonly reason: SkillErrorReason
  readonly message: string
}> {}

/** @internal */
export class SkillVerificationError extends Schema.TaggedError<SkillVerificationError>(
  "presa-mcp/SkillVerificationError"
)("SkillVerificationError", {
  reason: Schema.Literal("unlisted", "size", "digest", "frontmatter"),
  uri: Schema.String,
  message: Schema.String
}) {}

/** @internal */
export const splitFrontmatter = (
  text: string
): Either.Either<{ readonly yaml: string; readonly body: string }, SkillError> =>
  Either.mapLeft(frontmatter_.split(text), (message) => new SkillError({ reason: "frontmatter", message }))

/** @internal `Skill.parseFrontmatter`, given the YAML parsers (see `loadYaml`). */
export const parseFrontmatter = (
  yaml: typeof SkillYaml,
  text: string
): Either.Either<Record<string, unknown>, SkillError> =>
  frontmatter_.split(text).pipe(
    Either.flatMap((split) => yaml.parseStrict(split.yaml)),
    Either.mapLeft((message) => new SkillError({ reason: "frontmatter", message: `SKILL.md front matter: ${message}` }))
  )

const fail = (reason: SkillErrorReason, message: string): Effect.Effect<never, SkillError> =>
  Effect.fail(new SkillError({ reason, message }))

const isPromiseLike = (u: unknown): u is PromiseLike<FileContent> =>
  typeof u === "object" && u !== null && "then" in u && typeof u.then === "function"

const checkContent = (u: unknown): Effect.Effect<FileContent> =>
  typeof u === "string" || u instanceof Uint8Array
    ? Effect.succeed(u)
    : Effect.dieMessage("a skill file generator produced neither a string nor a Uint8Array")

const generatorOf = (
  source: Effect.Effect<FileContent> | (() => FileContent | PromiseLike<FileContent> | Effect.Effect<FileContent>)
): Effect.Effect<FileContent> =>
  Effect.isEffect(source)
    ? Effect.flatMap(source, checkContent)
    : Effect.suspend(() => {
      const produced = source()
      if (Effect.isEffect(produced)) return Effect.flatMap(produced, checkContent)
      if (isPromiseLike(produced)) return Effect.flatMap(Effect.promise(() => Promise.resolve(produced)), checkContent)
      return checkContent(produced)
    })

const textOfBytes = (bytes: Uint8Array, mimeType: string): string | undefined =>
  files_.isTextMimeType(mimeType) ? Option.getOrUndefined(files_.decodeUtf8(bytes)) : undefined

const skillRoot = (path: string): string => `${SCHEME}://${path}`

const uriIn = (path: string, relative: string): string => `${skillRoot(path)}/${files_.encodePath(relative)}`

const byPath = (a: { readonly path: string }, b: { readonly path: string }): number =>
  a.path === SKILL_MD ? -1 : b.path === SKILL_MD ? 1 : a.path < b.path ? -1 : a.path > b.path ? 1 : 0

/** @internal */
export const make: (
  path: string,
  files: Readonly<Record<string, FileSource>>,
  options?: Options
) => Effect.Effect<Skill, SkillError> = Effect.fn("Skill.make")(function*(
  path: string,
  files: Readonly<Record<string, FileSource>>,
  options: Options = {}
) {
  const badPath = files_.checkSkillPath(path)
  if (Option.isSome(badPath)) return yield* fail("invalid-path", badPath.value)
  const name = path.slice(path.lastIndexOf("/") + 1)

  const entries = Object.entries(files)
  if (entries.length > MAX_RESOURCES_PER_SKILL) {
    return yield* fail(
      "too-many-files",
      `skill ${path} has ${entries.length} files; at most ${MAX_RESOURCES_PER_SKILL} are allowed`
    )
  }
  for (const [relative] of entries) {
    const bad = files_.checkFilePath(relative)
    if (Option.isSome(bad)) return yield* fail("invalid-path", bad.value)
  }
  const clash = files_.findFileDirectoryClash(entries.map(([relative]) => relative))
  if (Option.isSome(clash)) return yield* fail("invalid-path", clash.value)
  for (const key of Object.keys(options.mimeTypes ?? {})) {
    if (!Object.prototype.hasOwnProperty.call(files, key)) {
      return yield* fail("invalid-path", `mimeTypes names ${JSON.stringify(key)}, which is not a file of the skill`)
    }
  }
  if (!Object.prototype.hasOwnProperty.call(files, SKILL_MD)) {
    return yield* fail("missing-skill-md", `skill ${path} has no ${SKILL_MD}`)
  }

  let total = 0
  const built: Array<SkillFile> = []
  for (const [relative, source] of entries) {
    const uri = uriIn(path, relative)
    const explicit = options.mimeTypes?.[relative]
    if (typeof source === "string" || source instanceof Uint8Array) {
      const bytes = typeof source === "string" ? files_.utf8(source) : new Uint8Array(source)
      total += bytes.length
      if (total > MAX_TOTAL_SIZE_PER_SKILL) {
        return yield* fail(
          "too-large",
          `skill ${path} has more than ${MAX_TOTAL_SIZE_PER_SKILL} bytes (16 MiB) of files`
        )
      }
      const isText = typeof source === "string" || Option.isSome(files_.looksLikeText(bytes))
      const mimeType = explicit ?? files_.mimeTypeFor(relative, isText)
      const text = typeof source === "string" ? source : textOfBytes(bytes, mimeType)
      const digest = yield* files_.digest(bytes)
      built.push({
        path: relative,
        uri,
        mimeType,
        content: { _tag: "Static", bytes, text, size: bytes.length, digest }
      })
    } else {
      const mimeType = explicit ?? files_.mimeTypeFor(relative, false)
      built.push({ path: relative, uri, mimeType, content: { _tag: "Dynamic", generate: generatorOf(source) } })
    }
  }
  built.sort(byPath)

  const skillMd = built.find((file) => file.path === SKILL_MD)
  let frontmatter: Record<string, unknown> | undefined
  if (skillMd !== undefined && skillMd.content._tag === "Static") {
    const text = skillMd.content.text ?? Option.getOrUndefined(files_.decodeUtf8(skillMd.content.bytes))
    if (text === undefined) return yield* fail("frontmatter", `${SKILL_MD} of skill ${path} is not UTF-8 text`)
    const parsed = parseFrontmatter(yield* loadYaml, text)
    if (Either.isLeft(parsed)) return yield* Effect.fail(parsed.left)
    frontmatter = parsed.right
  }
  if (options.frontmatter !== undefined) {
    if (!frontmatter_.isJson(options.frontmatter)) {
      return yield* fail("frontmatter", "options.frontmatter must be plain JSON data")
    }
    if (frontmatter !== undefined) {
      const field = frontmatter_.firstDifference(options.frontmatter, frontmatter)
      if (Option.isSome(field)) {
        return yield* fail(
          "frontmatter",
          `options.frontmatter differs from the ${SKILL_MD} front matter in field ${JSON.stringify(field.value)}`
        )
      }
    } else {
      frontmatter = structuredClone(options.frontmatter)
    }
  }
  if (frontmatter === undefined) {
    return yield* fail("frontmatter", `the ${SKILL_MD} of skill ${path} is generated; give options.frontmatter`)
  }
  const fmName = frontmatter.name
  const description = frontmatter.description
  if (typeof fmName !== "string" || fmName === "") {
    return yield* fail("frontmatter", `the front matter of skill ${path} needs a string name`)
  }
  if (typeof description !== "string" || description === "") {
    return yield* fail("frontmatter", `the front matter of skill ${path} needs a non-empty string description`)
  }
  if (fmName !== name) {
    return yield* fail(
      "name-mismatch",
      `front matter name ${JSON.stringify(fmName)} differs from the last segment of the skill path ${path}`
    )
  }
  return {
    path,
    name,
    uri: uriIn(path, SKILL_MD),
    frontmatter: { ...frontmatter, name: fmName, description },
    files: built,
    dynamic: built.some((file) => file.content._tag === "Dynamic"),
    unlisted: options.unlisted ?? false,
    requiredScopes: options.requiredScopes ?? []
  }
})

const tooMany = (path: string): Effect.Effect<never, SkillError> =>
  fail("too-many-files", `skill ${path} has more than ${MAX_RESOURCES_PER_SKILL} files`)

const tooLarge = (path: string): Effect.Effect<never, SkillError> =>
  fail("too-large", `skill ${path} has more than ${MAX_TOTAL_SIZE_PER_SKILL} bytes (16 MiB) of files`)

/** @internal */
export const fromDirectory: (
  dir: string,
  path?: string,
  options?: Options
) => Effect.Effect<Skill, SkillError | PlatformError, FileSystem.FileSystem | Path.Path> = Effect.fn(
  "Skill.fromDirectory"
)(function*(dir: string, path?: string, options?: Options) {
  const fs = yield* FileSystem.FileSystem
  const paths = yield* Path.Path
  const skillPath = path ?? paths.basename(paths.resolve(dir))
  const root = yield* fs.realPath(dir)
  const inside = (real: string): boolean => {
    const rel = paths.relative(root, real)
    return rel !== ".." && !rel.startsWith(`..${paths.sep}`) && !paths.isAbsolute(rel)
  }
  const found: Array<readonly [string, string]> = []
  const visited = new Set<string>([root])
  const pending: Array<readonly [string, string]> = [[root, ""]]
  let total = 0
  while (pending.length > 0) {
    const next = pending.pop()
    if (next === undefined) break
    const [absolute, prefix] = next
    const names = (yield* fs.readDirectory(absolute)).sort()
    for (const entryName of names) {
      if (entryName.startsWith(".")) continue
      const relative = prefix === "" ? entryName : `${prefix}/${entryName}`
      const real = yield* fs.realPath(paths.join(absolute, entryName)).pipe(
        Effect.map(Option.some),
        Effect.catchIf(
          (e) => e._tag === "SystemError" && e.reason === "NotFound",
          () => Effect.succeedNone
        )
      )
      if (Option.isNone(real) || !inside(real.value)) continue
      const info = yield* fs.stat(real.value)
      if (info.type === "Directory") {
        if (visited.has(real.value)) continue
        visited.add(real.value)
        pending.push([real.value, relative])
      } else if (info.type === "File") {
        if (found.length >= MAX_RESOURCES_PER_SKILL) return yield* tooMany(skillPath)
        total += Number(info.size)
        if (total > MAX_TOTAL_SIZE_PER_SKILL) return yield* tooLarge(skillPath)
        found.push([relative, real.value])
      }
    }
  }
  const files: Record<string, FileSource> = {}
  total = 0
  for (const [relative, real] of found) {
    const bytes = yield* fs.readFile(real)
    total += bytes.length
    if (total > MAX_TOTAL_SIZE_PER_SKILL) return yield* tooLarge(skillPath)
    files[relative] = bytes
  }
  return yield* make(skillPath, files, options)
})

/** @internal */
export const fromFiles: (
  baseUrl: URL,
  names: ReadonlyArray<string>,
  path?: string,
  options?: Options
) => Effect.Effect<Skill, SkillError | PlatformError, FileSystem.FileSystem | Path.Path> = Effect.fn(
  "Skill.fromFiles"
)(function*(baseUrl: URL, names: ReadonlyArray<string>, path?: string, options?: Options) {
  const fs = yield* FileSystem.FileSystem
  const paths = yield* Path.Path
  const base = new URL(baseUrl.href)
  if (!base.pathname.endsWith("/")) base.pathname = `${base.pathname}/`
  const lastSegment = base.pathname.split("/").filter((s) => s !== "").pop() ?? ""
  const skillPath = path ?? decodeURIComponent(lastSegment)
  if (names.length > MAX_RESOURCES_PER_SKILL) return yield* tooMany(skillPath)
  for (const name of names) {
    const bad = files_.checkFilePath(name)
    if (Option.isSome(bad)) return yield* fail("invalid-path", bad.value)
  }
  const located: Array<readonly [string, string]> = []
  let total = 0
  for (const name of names) {
    const file = yield* paths.fromFileUrl(new URL(`./${files_.encodePath(name)}`, base))
    total += Number((yield* fs.stat(file)).size)
    if (total > MAX_TOTAL_SIZE_PER_SKILL) return yield* tooLarge(skillPath)
    located.push([name, file])
  }
  const files: Record<string, FileSource> = {}
  total = 0
  for (const [name, file] of located) {
    const bytes = yield* fs.readFile(file)
    total += bytes.length
    if (total > MAX_TOTAL_SIZE_PER_SKILL) return yield* tooLarge(skillPath)
    files[name] = bytes
  }
  return yield* make(skillPath, files, options)
})

// ---------------------------------------------------------------------------------------------
// URIs
// ---------------------------------------------------------------------------------------------

/** @internal */
export const uri = (skill: Skill): string => skill.uri

/** @internal */
export const root = (skill: Skill): string => skillRoot(skill.path)

/** @internal */
export const fileUri = (skill: Skill, relative: string): string => uriIn(skill.path, relative)

// ---------------------------------------------------------------------------------------------
// Serving
// ---------------------------------------------------------------------------------------------

/** @internal */
export const entry = (skill: Skill): Effect.Effect<SkillEntry> =>
  Effect.sync((): SkillEntry => {
    const resources: Array<SkillResource> = []
    for (const file of skill.files) {
      if (file.content._tag === "Dynamic") {
        return { uri: skill.uri, frontmatter: skill.frontmatter, resources: "dynamic" }
      }
      resources.push({ uri: file.uri, digest: file.content.digest, size: file.content.size })
    }
    return { uri: skill.uri, frontmatter: skill.frontmatter, resources }
  })

/** @internal */
export const read = (skill: Skill, uri: string): Effect.Effect<Option.Option<SkillFileContents>> => {
  const file = skill.files.find((f) => f.uri === uri)
  if (file === undefined) return Effect.succeedNone
  const content = file.content
  const contents = (bytes: Uint8Array, text: string | undefined): SkillFileContents =>
    text === undefined
      ? { uri: file.uri, mimeType: file.mimeType, bytes }
      : { uri: file.uri, mimeType: file.mimeType, bytes, text }
  if (content._tag === "Static") return Effect.succeed(Option.some(contents(content.bytes, content.text)))
  return Effect.map(content.generate, (produced) =>
    Option.some(
      typeof produced === "string"
        ? contents(files_.utf8(produced), produced)
        : contents(produced, textOfBytes(produced, file.mimeType))
    ))
}

/** @internal */
export const toResourceContents = (contents: SkillFileContents): McpSchema.ResourceContents =>
  Content.resourceContents(contents.uri, contents.text ?? contents.bytes, contents.mimeType)

const baseName = (relative: string): string => relative.slice(relative.lastIndexOf("/") + 1)

const parentOf = (relative: string): string => {
  const slash = relative.lastIndexOf("/")
  return slash === -1 ? "" : relative.slice(0, slash)
}

const fileResource = (skill: Skill, file: SkillFile): McpSchema.Resource => {
  const base = { uri: file.uri, name: baseName(file.path), mimeType: file.mimeType }
  const sized = file.content._tag === "Static" ? { ...base, size: file.content.size } : base
  return file.path === SKILL_MD ? { ...sized, description: skill.frontmatter.description } : sized
}

/** @internal */
export const resources = (skill: Skill): ReadonlyArray<McpSchema.Resource> =>
  skill.files.map((file) => fileResource(skill, file))

const directoryPaths = (skill: Skill): ReadonlyArray<string> => {
  const dirs = new Set<string>([""])
  for (const file of skill.files) {
    for (let dir = parentOf(file.path); dir !== ""; dir = parentOf(dir)) dirs.add(dir)
  }
  return [...dirs].sort()
}

const directoryUri = (skill: Skill, relative: string): string =>
  relative === "" ? root(skill) : uriIn(skill.path, relative)

/** @internal */
export const directories = (skill: Skill): ReadonlyArray<string> =>
  directoryPaths(skill).map((relative) => directoryUri(skill, relative))

/** @internal */
export const children = (skill: Skill, dirUri: string): Option.Option<ReadonlyArray<McpSchema.Resource>> => {
  const dirs = directoryPaths(skill)
  const dir = dirs.find((relative) => directoryUri(skill, relative) === dirUri)
  if (dir === undefined) return Option.none()
  const out: Array<McpSchema.Resource> = []
  for (const sub of dirs) {
    if (sub !== "" && parentOf(sub) === dir) {
      out.push({ uri: directoryUri(skill, sub), name: baseName(sub), mimeType: files_.DIRECTORY_MIME_TYPE })
    }
  }
  for (const file of skill.files) if (parentOf(file.path) === dir) out.push(fileResource(skill, file))
  out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return Option.some(out)
}

// ---------------------------------------------------------------------------------------------
// Host-side verification
// ---------------------------------------------------------------------------------------------

const unverified = (
  reason: SkillVerificationError["reason"],
  uri: string,
  message: string
): Effect.Effect<never, SkillVerificationError> => Effect.fail(new SkillVerificationError({ reason, uri, message }))

const bytesOf = (content: FileContent): Uint8Array => typeof content === "string" ? files_.utf8(content) : content

/** @internal */
export const verifyFile: (
  entry: SkillEntry,
  uri: string,
  content: FileContent
) => Effect.Effect<void, SkillVerificationError> = Effect.fn("Skill.verifyFile")(function*(
  entry: SkillEntry,
  uri: string,
  content: FileContent
) {
  const bytes = bytesOf(content)
  if (entry.resources === DYNAMIC_RESOURCES) {
    const dir = entry.uri.slice(0, entry.uri.length - SKILL_MD_SUFFIX.length)
    if (!uri.startsWith(`${dir}/`)) {
      return yield* unverified("unlisted", uri, `${uri} is not a file of skill ${entry.uri}`)
    }
    if (bytes.length > MAX_TOTAL_SIZE_PER_SKILL) {
      return yield* unverified(
        "size",
        uri,
        `${uri} has ${bytes.length} bytes, over the ${MAX_TOTAL_SIZE_PER_SKILL}-byte (16 MiB) skill limit`
      )
    }
    return
  }
  const listed = entry.resources.find((resource) => resource.uri === uri)
  if (listed === undefined) return yield* unverified("unlisted", uri, `${uri} is not listed in skill ${entry.uri}`)
  if (bytes.length !== listed.size) {
    return yield* unverified("size", uri, `${uri} has ${bytes.length} bytes; the skill entry says ${listed.size}`)
  }
  const digest = yield* files_.digest(bytes)
  if (digest !== listed.digest) {
    return yield* unverified("digest", uri, `${uri} has digest ${digest}; the skill entry says ${listed.digest}`)
  }
})

/** @internal */
export const verifySkillMd: (
  entry: SkillEntry,
  content: FileContent
) => Effect.Effect<string, SkillVerificationError> = Effect.fn("Skill.verifySkillMd")(function*(
  entry: SkillEntry,
  content: FileContent
) {
  yield* verifyFile(entry, entry.uri, content)
  const text = typeof content === "string" ? Option.some(content) : files_.decodeUtf8(content)
  if (Option.isNone(text)) return yield* unverified("frontmatter", entry.uri, `${entry.uri} is not UTF-8 text`)
  const yaml = yield* loadYaml
  // The server is not trusted: front matter larger than the bound is refused before YAML parsing.
  const parsed = frontmatter_.split(text.value).pipe(
    Either.filterOrLeft(
      (split) => split.yaml.length <= frontmatter_.MAX_CLIENT_FRONTMATTER,
      (split) =>
        `front matter of ${split.yaml.length} characters exceeds the client's limit of ${frontmatter_.MAX_CLIENT_FRONTMATTER}`
    ),
    Either.flatMap((split) => yaml.parseLenient(split.yaml))
  )
  if (Either.isLeft(parsed)) {
    return yield* unverified("frontmatter", entry.uri, `${entry.uri}: ${parsed.left}`)
  }
  const field = frontmatter_.firstDifference(entry.frontmatter, parsed.right)
  if (Option.isSome(field)) {
    return yield* unverified(
      "frontmatter",
      entry.uri,
      `${entry.uri}: front matter field ${JSON.stringify(field.value)} differs from the skill entry`
    )
  }
  return text.value
})

/** @internal */
export const contentsBytes = (contents: McpSchema.ResourceContents): Option.Option<Uint8Array> => {
  if ("text" in contents) return Option.some(files_.utf8(contents.text))
  return Option.liftThrowable(atob)(contents.blob).pipe(Option.map((binary) => {
    const bytes = new Uint8Array(binary.length)
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
    return bytes
  }))
}
