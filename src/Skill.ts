/**
 * Skills: the model of the `io.modelcontextprotocol/skills` extension (SEP-2640).
 *
 * A skill is a directory of files in the Agent Skills format: a `SKILL.md` whose YAML front
 * matter has at least `name` and `description`, plus supporting files. Every file is served as an
 * ordinary resource at `skill://<skill-path>/<file-path>`; `skills/list` and `skills/get` return
 * the skill's {@link SkillEntry} manifest (front matter plus a `sha256:` digest and byte size for
 * every file, or `"dynamic"` for generated content).
 *
 * This module is pure model and verification: building skills ({@link make},
 * {@link fromDirectory}, {@link fromFiles}), the wire entry ({@link entry}), reading files and
 * directory levels ({@link read}, {@link directories}, {@link children}), the strict front-matter
 * subset ({@link parseFrontmatter}), the wire schemas, and the host-side checks
 * ({@link verifyFile}, {@link verifySkillMd}). The server and client wire it to the protocol.
 *
 * Guide: [Skills](https://github.com/presa-mcp/presa-mcp/blob/main/docs/skills.md).
 *
 * @since 0.1.0
 */
import type { PlatformError } from "@effect/platform/Error"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import type * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as internal from "./internal/skill/build.js"
import * as files_ from "./internal/skill/files.js"
import * as yaml_ from "./internal/skill/yaml.js"
import * as McpSchema from "./McpSchema.js"

// ---------------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------------

/**
 * The extension id, the key under `capabilities.extensions` (§21, §22.2).
 *
 * @since 0.1.0
 * @category symbols
 */
export const EXTENSION_ID: typeof internal.EXTENSION_ID = internal.EXTENSION_ID

/**
 * The most `resources` entries a skill may have, `SKILL.md` included (§22.4). Hosts must accept up
 * to this many; {@link make} refuses more.
 *
 * @since 0.1.0
 * @category symbols
 */
export const MAX_RESOURCES_PER_SKILL: typeof internal.MAX_RESOURCES_PER_SKILL = internal.MAX_RESOURCES_PER_SKILL

/**
 * The largest total size of a skill's files, in bytes: 16 MiB (§22.4). {@link make} refuses more
 * static content; hosts apply it to what they fetch of a `"dynamic"` skill.
 *
 * @since 0.1.0
 * @category symbols
 */
export const MAX_TOTAL_SIZE_PER_SKILL: typeof internal.MAX_TOTAL_SIZE_PER_SKILL = internal.MAX_TOTAL_SIZE_PER_SKILL

/**
 * The `resources` value of a skill whose content is generated and cannot be pre-digested (§22.4).
 *
 * @since 0.1.0
 * @category symbols
 */
export const DYNAMIC_RESOURCES: typeof internal.DYNAMIC_RESOURCES = internal.DYNAMIC_RESOURCES

/**
 * The URI scheme of served skills (§22.3).
 *
 * @since 0.1.0
 * @category symbols
 */
export const SCHEME: typeof internal.SCHEME = internal.SCHEME

/**
 * The media type of a directory resource (§22.7).
 *
 * @since 0.1.0
 * @category symbols
 */
export const DIRECTORY_MIME_TYPE = files_.DIRECTORY_MIME_TYPE

/**
 * The extension's method names (§22.5–§22.7).
 *
 * @since 0.1.0
 * @category symbols
 */
export const Method: typeof internal.Method = internal.Method

// ---------------------------------------------------------------------------------------------
// Wire schemas
// ---------------------------------------------------------------------------------------------

const OpenRecord = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/**
 * One file of a skill in its entry: `{uri, digest, size}`; `size` is the raw byte length that
 * `digest` covers (§22.4).
 *
 * @since 0.1.0
 * @category models
 */
export const SkillResource = Schema.Struct({
  uri: Schema.String,
  digest: Schema.String.pipe(Schema.pattern(/^sha256:[0-9a-f]{64}$/)),
  size: Schema.NonNegativeInt
})

/**
 * @since 0.1.0
 * @category models
 */
export type SkillResource = typeof SkillResource.Type

/**
 * The front matter of a `SKILL.md` as JSON: `name` and `description` (strings) plus every other
 * field verbatim (§22.4).
 *
 * @since 0.1.0
 * @category models
 */
export const Frontmatter = Schema.Struct({ name: Schema.String, description: Schema.String }, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type Frontmatter = typeof Frontmatter.Type

const entryProblem = (entry: {
  readonly uri: string
  readonly frontmatter: { readonly name: string }
  readonly resources: "dynamic" | ReadonlyArray<{ readonly uri: string }>
}): string | undefined => {
  if (!entry.uri.endsWith(internal.SKILL_MD_SUFFIX)) {
    return `skill uri ${entry.uri} does not name a ${internal.SKILL_MD}`
  }
  const root = entry.uri.slice(0, -internal.SKILL_MD_SUFFIX.length)
  const last = root.slice(root.lastIndexOf("/") + 1)
  if (last !== entry.frontmatter.name) {
    return `the last segment of the skill path (${last}) differs from frontmatter.name (${entry.frontmatter.name})`
  }
  if (entry.resources === DYNAMIC_RESOURCES) return undefined
  const seen = new Set<string>()
  for (const resource of entry.resources) {
    if (seen.has(resource.uri)) return `resources lists ${resource.uri} twice`
    seen.add(resource.uri)
    if (!resource.uri.startsWith(`${root}/`)) return `resource ${resource.uri} is outside the skill directory ${root}`
  }
  return seen.has(entry.uri) ? undefined : `resources does not list the ${internal.SKILL_MD} itself (${entry.uri})`
}

/**
 * The `Skill` entry shared by `skills/list` and `skills/get` (§22.4):
 * `{uri, frontmatter, resources: SkillResource[] | "dynamic"}`.
 *
 * Decoding fails (the entry is invalid and must not be loaded) when `resources` is missing or is
 * neither an array nor `"dynamic"`, a digest is not `sha256:<64 lowercase hex>`, a size is not a
 * non-negative integer, `uri` does not end in `/<frontmatter.name>/SKILL.md`, or the array lists a
 * URI twice, lists one outside the skill directory, or omits the `SKILL.md`. Decode with
 * {@link decodeSkillEntry} (keeps unknown fields).
 *
 * @since 0.1.0
 * @category models
 */
export const SkillEntry = Schema.Struct({
  uri: Schema.String,
  frontmatter: Frontmatter,
  resources: Schema.Union(Schema.Literal(DYNAMIC_RESOURCES), Schema.Array(SkillResource))
}).pipe(Schema.filter(entryProblem, { identifier: "SkillEntry" }))

/**
 * @since 0.1.0
 * @category models
 */
export type SkillEntry = typeof SkillEntry.Type

const cacheable = {
  resultType: Schema.optional(Schema.String),
  ttlMs: Schema.optional(Schema.Number),
  cacheScope: Schema.optional(Schema.String)
}

/**
 * `skills/list` result: `{skills, nextCursor?, resultType, ttlMs, cacheScope}` (§22.5). The caching
 * fields and `resultType` are required from 2026-07-28 on but read leniently (legacy sessions may
 * omit them). One invalid entry fails the whole decode; decode entries one by one with
 * {@link decodeSkillEntry} to keep the valid ones.
 *
 * @since 0.1.0
 * @category models
 */
export const ListSkillsResult = Schema.Struct({
  skills: Schema.Array(SkillEntry),
  nextCursor: Schema.optional(Schema.String),
  ...cacheable
}, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type ListSkillsResult = typeof ListSkillsResult.Type

/**
 * `skills/get` result: `{skill, resultType, ttlMs, cacheScope}` (§22.6), read leniently like
 * {@link ListSkillsResult}.
 *
 * @since 0.1.0
 * @category models
 */
export const GetSkillResult = Schema.Struct({ skill: SkillEntry, ...cacheable }, OpenRecord)

/**
 * @since 0.1.0
 * @category models
 */
export type GetSkillResult = typeof GetSkillResult.Type

/**
 * `skills/get` params: `{uri}`, the URI of a `SKILL.md` (§22.6).
 *
 * @since 0.1.0
 * @category models
 */
export const GetSkillParams: typeof internal.GetSkillParams = internal.GetSkillParams

/**
 * `resources/directory/read` params: `{uri, cursor?}` (§22.7).
 *
 * @since 0.1.0
 * @category models
 */
export const ReadDirectoryParams: typeof internal.ReadDirectoryParams = internal.ReadDirectoryParams

/**
 * `resources/directory/read` result: `{resources, nextCursor?, resultType?}` — the direct children,
 * subdirectories with `mimeType: "inode/directory"` (§22.7).
 *
 * @since 0.1.0
 * @category models
 */
export const ReadDirectoryResult = Schema.Struct({
  resources: Schema.Array(McpSchema.Resource),
  nextCursor: Schema.optional(Schema.String),
  resultType: Schema.optional(Schema.String)
}, OpenRecord)

/**
 * The extension's settings object under `capabilities.extensions["io.modelcontextprotocol/skills"]`:
 * `{directoryRead?: boolean}` (default `false`, §22.2).
 *
 * @since 0.1.0
 * @category models
 */
export const Capability = Schema.Struct({ directoryRead: Schema.optional(Schema.Boolean) }, OpenRecord)

const preserve = { onExcessProperty: "preserve" } as const

/**
 * Decodes an untrusted skill entry, keeping unknown fields. Fails with `ParseError` when the entry
 * is invalid (see {@link SkillEntry}).
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeSkillEntry = Schema.decodeUnknown(SkillEntry, preserve)

/**
 * Decodes an untrusted `skills/list` result, keeping unknown fields. Fails with `ParseError`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeListSkillsResult = Schema.decodeUnknown(ListSkillsResult, preserve)

/**
 * Decodes an untrusted `skills/get` result, keeping unknown fields. Fails with `ParseError`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeGetSkillResult = Schema.decodeUnknown(GetSkillResult, preserve)

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/**
 * Why a skill could not be built:
 * - `"missing-skill-md"`: no `SKILL.md` at the root;
 * - `"frontmatter"`: no or malformed front matter, outside the strict subset, `name` or
 *   `description` missing or not a non-empty string, a generated `SKILL.md` without
 *   `options.frontmatter`, or `options.frontmatter` differing from the file's;
 * - `"name-mismatch"`: `name` differs from the skill path's last segment;
 * - `"too-many-files"`: more than {@link MAX_RESOURCES_PER_SKILL} files;
 * - `"too-large"`: static files over {@link MAX_TOTAL_SIZE_PER_SKILL} bytes in total;
 * - `"invalid-path"`: a bad skill path or name, a bad file path, a file that is also a directory,
 *   or a `mimeTypes` key that names no file.
 *
 * @since 0.1.0
 * @category errors
 */
export type SkillErrorReason = internal.SkillErrorReason

/**
 * A skill definition is invalid (in-process; never sent on the wire).
 *
 * @since 0.1.0
 * @category errors
 */
export const SkillError: typeof internal.SkillError = internal.SkillError

/**
 * @since 0.1.0
 * @category errors
 */
export type SkillError = internal.SkillError

/**
 * A fetched skill file failed the host's checks against the held entry (§22.9):
 * - `"unlisted"`: the URI is not in the entry's `resources` (for a `"dynamic"` entry: not inside
 *   the skill directory);
 * - `"size"`: the byte length differs from the entry's `size`, or a `"dynamic"` file is over
 *   {@link MAX_TOTAL_SIZE_PER_SKILL} bytes;
 * - `"digest"`: the SHA-256 of the bytes differs from the entry's `digest`;
 * - `"frontmatter"`: the `SKILL.md` front matter cannot be read or differs from
 *   `entry.frontmatter` (the message names the first differing field).
 *
 * Content that fails must not be used; refresh the entry with `skills/get`.
 *
 * @since 0.1.0
 * @category errors
 */
export const SkillVerificationError: typeof internal.SkillVerificationError = internal.SkillVerificationError

/**
 * @since 0.1.0
 * @category errors
 */
export type SkillVerificationError = internal.SkillVerificationError

// ---------------------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------------------

/**
 * File content: a string is served as `text` and hashed as its UTF-8 bytes; bytes are served as
 * `text` when the media type is textual and they are valid UTF-8, else as a base64 `blob`.
 *
 * @since 0.1.0
 * @category models
 */
export type FileContent = string | Uint8Array

/**
 * What a file of {@link make} may be: static content, or a generator run on every read (an
 * `Effect`, or a function returning content, a `Promise` or an `Effect`). A generator makes the
 * skill dynamic. A generator that throws, rejects or dies is a defect of the read.
 *
 * @since 0.1.0
 * @category models
 */
export type FileSource =
  | FileContent
  | Effect.Effect<FileContent>
  | (() => FileContent | PromiseLike<FileContent> | Effect.Effect<FileContent>)

/**
 * Options of {@link make}:
 * - `frontmatter`: the front matter as a JSON record; required when `SKILL.md` is generated, and
 *   when `SKILL.md` is static it must deep-equal the file's (else `"frontmatter"`);
 * - `mimeTypes`: media type per relative file path, overriding the guess by extension;
 * - `unlisted`: served by `skills/get` and `resources/read` but left out of `skills/list`
 *   (default `false`);
 * - `requiredScopes`: OAuth scopes a caller needs to see the skill (default none).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly frontmatter?: Readonly<Record<string, unknown>>
  readonly mimeTypes?: Readonly<Record<string, string>>
  readonly unlisted?: boolean
  readonly requiredScopes?: ReadonlyArray<string>
}

/**
 * A file's content in the model: static bytes with their size (bytes) and digest, plus the text
 * served when it is served as `text`; or a generator.
 *
 * @since 0.1.0
 * @category models
 */
export type SkillFileContent =
  | {
    readonly _tag: "Static"
    readonly bytes: Uint8Array
    readonly text: string | undefined
    readonly size: number
    readonly digest: string
  }
  | { readonly _tag: "Dynamic"; readonly generate: Effect.Effect<FileContent> }

/**
 * One file of a skill: `path` relative to the skill root (`references/checklist.md`), its `uri`
 * (`skill://<skill-path>/<path>`, segments percent-encoded where needed), `mimeType`, content.
 *
 * @since 0.1.0
 * @category models
 */
export interface SkillFile {
  readonly path: string
  readonly uri: string
  readonly mimeType: string
  readonly content: SkillFileContent
}

/**
 * A skill: its `path` (`acme/billing/refunds`), `name` (the last segment), `uri` (of its
 * `SKILL.md`), `frontmatter`, `files` (`SKILL.md` first, then by path), whether any file is
 * generated (`dynamic`), `unlisted` and `requiredScopes`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Skill {
  readonly path: string
  readonly name: string
  readonly uri: string
  readonly frontmatter: Frontmatter
  readonly files: ReadonlyArray<SkillFile>
  readonly dynamic: boolean
  readonly unlisted: boolean
  readonly requiredScopes: ReadonlyArray<string>
}

/**
 * One file read by {@link read}: the exact `bytes` served and, when served as text, `text`.
 *
 * @since 0.1.0
 * @category models
 */
export interface SkillFileContents {
  readonly uri: string
  readonly mimeType: string
  readonly bytes: Uint8Array
  readonly text?: string
}

// ---------------------------------------------------------------------------------------------
// Front matter
// ---------------------------------------------------------------------------------------------

/**
 * Splits a `SKILL.md` into its front matter YAML and body. The text must begin with a `---` line
 * (`\r\n` allowed, a UTF-8 BOM tolerated); the front matter runs until the next line that is exactly
 * `---` (trailing blanks allowed). Fails with `SkillError` `"frontmatter"`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const splitFrontmatter: (
  text: string
) => Either.Either<{ readonly yaml: string; readonly body: string }, SkillError> = internal.splitFrontmatter

/**
 * Parses the front matter of a `SKILL.md` text (see {@link splitFrontmatter}) under the strict
 * YAML subset every host reads the same way; the result is plain JSON.
 *
 * Allowed: block mappings (nested), block lists of scalars, single- and double-quoted scalars
 * (multi-line too), `|` and `>` block scalars, and single-line plain scalars. Plain scalars read
 * as: `true` / `false` → booleans; decimal integers without leading zeros or `+` (`42`, `-7`,
 * within ±2^53) and decimal fractions (`1.5`, so `version: 3.10` is the number 3.1) → numbers;
 * anything else → string.
 *
 * Refused (`SkillError` `"frontmatter"`): flow collections (`[a, b]`, `{a: 1}`), anchors, aliases,
 * tags, explicit `?` keys, directives, multi-line plain scalars, duplicate keys, non-string keys
 * (`42:`, `true:`), lists of lists or maps, empty values, and plain scalars YAML readers disagree
 * on: `yes`/`no`/`on`/`off`/`y`/`n` (any case), `True`/`FALSE`, `null`/`~`, `1e3`, `012`, `0x1F`,
 * `0o17`, `0b1`, `.5`, `1.`, `+1`, `1_000`, `.inf`, `.nan`, `12:30`, dates such as `2024-01-01`,
 * `<<`, `=`. Quote such a value to keep it as a string.
 *
 * @since 0.1.0
 * @category decoding
 */
export const parseFrontmatter = (text: string): Either.Either<Record<string, unknown>, SkillError> =>
  internal.parseFrontmatter(yaml_, text)

// ---------------------------------------------------------------------------------------------
// Constructors
// ---------------------------------------------------------------------------------------------

/**
 * Builds a skill at `path` (`code-review`, or with a prefix `acme/billing/refunds`) from `files`,
 * a record of relative paths (`SKILL.md`, `references/checklist.md`) to {@link FileSource}s.
 * Static content is copied and digested now; a generator is run on every {@link read} and makes the
 * skill dynamic (its entry's `resources` is `"dynamic"`).
 *
 * Media types come from `options.mimeTypes`, else the extension (`.md` → `text/markdown`, `.txt`,
 * source code and scripts → `text/plain`, `.json` → `application/json`, `.yaml` →
 * `application/yaml`, images, PDF, …), else `text/plain` for text and `application/octet-stream`
 * for binary or generated content.
 *
 * Fails with `SkillError` (§22.3, §22.4), checked in this order: `"invalid-path"` (skill path
 * segments must be RFC 3986 unreserved characters, not `.`/`..`; the last one is an Agent Skills
 * name: 1–64 of `a-z`, `0-9`, single inner `-`), `"too-many-files"` (over 512), `"invalid-path"`
 * (file paths: relative, no empty, `.` or `..` segment, no `\`; no file also used as a
 * directory; `mimeTypes` keys must name files), `"missing-skill-md"`, `"too-large"` (static bytes
 * over 16 MiB in total), `"frontmatter"` (see {@link parseFrontmatter}; a generated `SKILL.md`
 * needs `options.frontmatter`, which must be JSON and deep-equal a static file's front matter;
 * `name` and `description` must be non-empty strings), `"name-mismatch"` (`name` ≠ last segment).
 *
 * @example
 * ```ts
 * import { Skill } from "presa-mcp"
 *
 * const review = Skill.make("code-review", {
 *   "SKILL.md": "---\nname: code-review\ndescription: Review a change\n---\n# Reviewing a change\n",
 *   "references/checklist.md": "- tests cover the change\n"
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (
  path: string,
  files: Readonly<Record<string, FileSource>>,
  options?: Options
) => Effect.Effect<Skill, SkillError> = internal.make

/**
 * Builds a skill from a directory tree read with the platform `FileSystem`. Every regular file
 * below `dir` becomes a static file (relative paths use `/`); `path` defaults to the directory's
 * base name; `options` as in {@link make}.
 *
 * The walk is bounded: it stops with `"too-many-files"` past 512 files and `"too-large"` past
 * 16 MiB (sizes are checked from `stat` before reading, and again on the bytes read). Entries whose
 * name starts with `.` (`.git`, `.DS_Store`) are skipped, as are dangling symlinks and symlinks
 * (files or directories) whose target lies outside `dir`; a directory reached twice through a
 * symlink is walked once. Other file types (sockets, FIFOs) are skipped.
 *
 * Fails with `SkillError` (as {@link make}) or `PlatformError` (I/O).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromDirectory: (
  dir: string,
  path?: string,
  options?: Options
) => Effect.Effect<Skill, SkillError | PlatformError, FileSystem.FileSystem | Path.Path> = internal.fromDirectory

/**
 * Builds a skill from named files next to a module, where a directory cannot be listed (bundles):
 * `Skill.fromFiles(new URL("./skills/code-review/", import.meta.url), ["SKILL.md",
 * "references/checklist.md"])`. Each name is resolved against `baseUrl` (a missing trailing `/` is
 * added) and read through the platform `FileSystem`, so `baseUrl` must be a `file:` URL. `path`
 * defaults to the last segment of `baseUrl`; `options` as in {@link make}.
 *
 * Fails with `SkillError` (names are checked like {@link make}'s file paths before anything is
 * read; over 512 names → `"too-many-files"`; over 16 MiB → `"too-large"`) or `PlatformError`
 * (a non-`file:` URL is `BadArgument`, a missing file `SystemError` `NotFound`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromFiles: (
  baseUrl: URL,
  names: ReadonlyArray<string>,
  path?: string,
  options?: Options
) => Effect.Effect<Skill, SkillError | PlatformError, FileSystem.FileSystem | Path.Path> = internal.fromFiles

// ---------------------------------------------------------------------------------------------
// URIs
// ---------------------------------------------------------------------------------------------

/**
 * The URI of the skill's `SKILL.md`: `skill://<path>/SKILL.md` (§22.3).
 *
 * @since 0.1.0
 * @category combinators
 */
export const uri: (skill: Skill) => string = internal.uri

/**
 * The skill's root directory URI: `skill://<path>`, no trailing slash (§22.3, §22.7).
 *
 * @since 0.1.0
 * @category combinators
 */
export const root: (skill: Skill) => string = internal.root

/**
 * The URI of a file given its path relative to the skill root: `skill://<path>/<relative>`, each
 * segment percent-encoded where RFC 3986 requires it (`my notes.md` → `my%20notes.md`). Whether
 * the file exists is not checked.
 *
 * @since 0.1.0
 * @category combinators
 */
export const fileUri: (skill: Skill, relative: string) => string = internal.fileUri

// ---------------------------------------------------------------------------------------------
// Serving
// ---------------------------------------------------------------------------------------------

/**
 * The skill's wire entry for `skills/list` and `skills/get` (§22.4): `{uri, frontmatter,
 * resources}`, where `resources` lists every file once (`SKILL.md` first) as `{uri, digest:
 * "sha256:<hex>", size}` (bytes; the digest covers exactly the bytes {@link read} serves, strings
 * as their UTF-8 bytes without newline normalisation), or is `"dynamic"` when any file is
 * generated. Never fails.
 *
 * @since 0.1.0
 * @category combinators
 */
export const entry: (skill: Skill) => Effect.Effect<SkillEntry> = internal.entry

/**
 * Reads one file of the skill by URI: `Option.some({uri, mimeType, bytes, text?})` (generators
 * run again on each read), `Option.none()` when `uri` is not a file of this skill (a directory
 * URI included). `text` is set for string content and for textual media types whose bytes are
 * UTF-8; otherwise serve `bytes` as a base64 `blob` (see {@link toResourceContents}). Static
 * `bytes` are shared with the skill: treat them as read-only. A failing generator is a defect.
 *
 * @since 0.1.0
 * @category combinators
 */
export const read: (skill: Skill, uri: string) => Effect.Effect<Option.Option<SkillFileContents>> = internal.read

/**
 * The `resources/read` contents of a file read by {@link read}: `{uri, mimeType, text}` when it
 * has text, else `{uri, mimeType, blob}` (base64).
 *
 * @since 0.1.0
 * @category encoding
 */
export const toResourceContents: (contents: SkillFileContents) => McpSchema.ResourceContents =
  internal.toResourceContents

/**
 * Every file as `resources/list` metadata, in {@link Skill} `files` order: `{uri, name (the file's
 * base name), mimeType, size? (bytes, static files only)}`; the `SKILL.md` also carries the front
 * matter `description`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const resources: (skill: Skill) => ReadonlyArray<McpSchema.Resource> = internal.resources

/**
 * Every directory level of the skill, as URIs for `resources/directory/read` (§22.7): the root
 * `skill://<path>` first, then each subdirectory (`skill://<path>/references`), sorted, no
 * trailing slash.
 *
 * @since 0.1.0
 * @category combinators
 */
export const directories: (skill: Skill) => ReadonlyArray<string> = internal.directories

/**
 * The direct children of a directory of the skill (§22.7), sorted by name: files as in
 * {@link resources}, subdirectories as `{uri, name, mimeType: "inode/directory"}`.
 * `Option.none()` when `dirUri` is not a directory of this skill (a file URI included).
 *
 * @since 0.1.0
 * @category combinators
 */
export const children: (skill: Skill, dirUri: string) => Option.Option<ReadonlyArray<McpSchema.Resource>> =
  internal.children

// ---------------------------------------------------------------------------------------------
// Host-side verification
// ---------------------------------------------------------------------------------------------

/**
 * Checks a fetched file of a skill against the held entry (§22.9). `content` is the raw bytes, or
 * the `text` as received (hashed as its UTF-8 bytes, exactly).
 *
 * Fails with `SkillVerificationError`: `"unlisted"` when `uri` is not in `entry.resources` (for a
 * `"dynamic"` entry: not below the skill directory), `"size"` when the byte length differs from the
 * listed `size` (for a `"dynamic"` entry: exceeds 16 MiB), `"digest"` when the SHA-256 differs.
 * For a `"dynamic"` entry there is no size or digest to compare.
 *
 * @since 0.1.0
 * @category combinators
 */
export const verifyFile: (
  entry: SkillEntry,
  uri: string,
  content: FileContent
) => Effect.Effect<void, SkillVerificationError> = internal.verifyFile

/**
 * Checks a fetched `SKILL.md` (at `entry.uri`) against the held entry and returns its text
 * (§22.9): {@link verifyFile}, then the front matter is parsed leniently (any YAML 1.2 with the
 * JSON-compatible core schema: no timestamp or `Date` coercion, no merge keys, aliases bounded — not
 * the strict subset of {@link parseFrontmatter}) and compared field by field, deeply, with
 * `entry.frontmatter`.
 *
 * Fails with `SkillVerificationError` as {@link verifyFile}, or `"frontmatter"` when the bytes are
 * not UTF-8, there is no front matter, it is longer than 65,536 characters (a bound on what an
 * untrusted server makes the client parse), it does not parse, or a field differs (the message
 * names the first one, in `entry.frontmatter` order, then fields only the file has). Splitting and
 * parsing take time linear in the size of the file.
 *
 * @since 0.1.0
 * @category combinators
 */
export const verifySkillMd: (
  entry: SkillEntry,
  content: FileContent
) => Effect.Effect<string, SkillVerificationError> = internal.verifySkillMd

/**
 * The raw bytes of `resources/read` contents, to feed to {@link verifyFile}: a `text` as its UTF-8
 * bytes, a `blob` base64-decoded; `Option.none()` when the blob is not valid base64.
 *
 * @since 0.1.0
 * @category decoding
 */
export const contentsBytes: (contents: McpSchema.ResourceContents) => Option.Option<Uint8Array> = internal.contentsBytes
