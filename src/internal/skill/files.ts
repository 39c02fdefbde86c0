/**
 * Skill files: path rules, `skill://` URIs, media types, UTF-8 handling and SHA-256 digests.
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/** RFC 3986 `unreserved` characters: valid in a reg-name and in a path segment without escaping. */
const SKILL_PATH_SEGMENT = /^[A-Za-z0-9._~-]+$/

/** Agent Skills `name`: lowercase letters, digits and single inner hyphens. */
const SKILL_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

/** @internal */
export const MAX_NAME_LENGTH = 64

/**
 * Checks a skill path (`code-review`, `acme/billing/refunds`): non-empty `/`-separated segments of
 * RFC 3986 unreserved characters, none `.` or `..`; the last one is an Agent Skills name.
 *
 * @internal
 */
export const checkSkillPath = (path: string): Option.Option<string> => {
  if (path === "") return Option.some("the skill path is empty")
  const segments = path.split("/")
  for (const segment of segments) {
    if (segment === "") return Option.some(`skill path ${JSON.stringify(path)} has an empty segment`)
    if (segment === "." || segment === "..") {
      return Option.some(`skill path ${JSON.stringify(path)} has a '${segment}' segment`)
    }
    if (!SKILL_PATH_SEGMENT.test(segment)) {
      return Option.some(
        `skill path segment ${JSON.stringify(segment)} may only use letters, digits and - . _ ~`
      )
    }
  }
  const name = segments[segments.length - 1] ?? ""
  return checkName(name)
}

/**
 * Checks an Agent Skills name: 1–64 characters, lowercase letters, digits and hyphens, no leading,
 * trailing or doubled hyphen.
 *
 * @internal
 */
export const checkName = (name: string): Option.Option<string> =>
  name.length > MAX_NAME_LENGTH
    ? Option.some(`skill name ${JSON.stringify(name)} is longer than ${MAX_NAME_LENGTH} characters`)
    : SKILL_NAME.test(name)
    ? Option.none()
    : Option.some(
      `skill name ${
        JSON.stringify(name)
      } must be lowercase letters, digits and single hyphens, not starting or ending with one`
    )

const CONTROL = /[\u0000-\u001f\u007f]/

/**
 * Checks a file path relative to the skill root: no leading `/`, no empty, `.` or `..` segment, no
 * `\`, no control characters.
 *
 * @internal
 */
export const checkFilePath = (path: string): Option.Option<string> => {
  const quoted = JSON.stringify(path)
  if (path === "") return Option.some("a file path is empty")
  if (path.startsWith("/")) return Option.some(`file path ${quoted} must be relative (no leading '/')`)
  if (path.includes("\\")) return Option.some(`file path ${quoted} must use '/' as separator, not '\\'`)
  if (CONTROL.test(path)) return Option.some(`file path ${quoted} contains a control character`)
  for (const segment of path.split("/")) {
    if (segment === "") return Option.some(`file path ${quoted} has an empty segment`)
    if (segment === "." || segment === "..") return Option.some(`file path ${quoted} has a '${segment}' segment`)
  }
  return Option.none()
}

/**
 * Finds a file path that is also used as a directory (`a` and `a/b`).
 *
 * @internal
 */
export const findFileDirectoryClash = (paths: ReadonlyArray<string>): Option.Option<string> => {
  const files = new Set(paths)
  for (const path of paths) {
    const segments = path.split("/")
    for (let i = 1; i < segments.length; i++) {
      const dir = segments.slice(0, i).join("/")
      if (files.has(dir)) return Option.some(`${JSON.stringify(dir)} is both a file and a directory`)
    }
  }
  return Option.none()
}

/**
 * Percent-encodes one path segment for a URI, keeping RFC 3986 `pchar` characters as they are
 * (`unreserved`, `sub-delims`, `:` and `@`).
 *
 * @internal
 */
export const encodeSegment = (segment: string): string =>
  encodeURIComponent(segment).replace(/%(?:24|26|2B|2C|3B|3D|3A|40)/g, (m) => decodeURIComponent(m))

/**
 * Encodes a `/`-separated relative path segment by segment.
 *
 * @internal
 */
export const encodePath = (path: string): string => path.split("/").map(encodeSegment).join("/")

// ---------------------------------------------------------------------------------------------
// Media types
// ---------------------------------------------------------------------------------------------

const TEXT_PLAIN = "text/plain"

/** @internal */
export const OCTET_STREAM = "application/octet-stream"

/** @internal */
export const DIRECTORY_MIME_TYPE = "inode/directory"

const BY_EXTENSION: Readonly<Record<string, string>> = {
  md: "text/markdown",
  markdown: "text/markdown",
  txt: TEXT_PLAIN,
  text: TEXT_PLAIN,
  json: "application/json",
  yaml: "application/yaml",
  yml: "application/yaml",
  toml: "application/toml",
  xml: "application/xml",
  html: "text/html",
  htm: "text/html",
  css: "text/css",
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  ico: "image/x-icon",
  pdf: "application/pdf",
  zip: "application/zip",
  gz: "application/gzip",
  tar: "application/x-tar",
  wasm: "application/wasm",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  mp4: "video/mp4",
  // Source code and scripts: served as plain text so every host shows them.
  py: TEXT_PLAIN,
  sh: TEXT_PLAIN,
  bash: TEXT_PLAIN,
  zsh: TEXT_PLAIN,
  ps1: TEXT_PLAIN,
  bat: TEXT_PLAIN,
  js: TEXT_PLAIN,
  mjs: TEXT_PLAIN,
  cjs: TEXT_PLAIN,
  ts: TEXT_PLAIN,
  mts: TEXT_PLAIN,
  cts: TEXT_PLAIN,
  jsx: TEXT_PLAIN,
  tsx: TEXT_PLAIN,
  rb: TEXT_PLAIN,
  go: TEXT_PLAIN,
  rs: TEXT_PLAIN,
  java: TEXT_PLAIN,
  kt: TEXT_PLAIN,
  swift: TEXT_PLAIN,
  c: TEXT_PLAIN,
  h: TEXT_PLAIN,
  cc: TEXT_PLAIN,
  cpp: TEXT_PLAIN,
  hpp: TEXT_PLAIN,
  cs: TEXT_PLAIN,
  php: TEXT_PLAIN,
  pl: TEXT_PLAIN,
  lua: TEXT_PLAIN,
  r: TEXT_PLAIN,
  sql: TEXT_PLAIN,
  clj: TEXT_PLAIN,
  cljs: TEXT_PLAIN,
  edn: TEXT_PLAIN,
  ini: TEXT_PLAIN,
  cfg: TEXT_PLAIN,
  conf: TEXT_PLAIN,
  env: TEXT_PLAIN,
  log: TEXT_PLAIN,
  diff: TEXT_PLAIN,
  patch: TEXT_PLAIN
}

/**
 * The media type for a file: by extension (case-insensitive); for an unknown extension
 * `text/plain` when the content is known to be text, else `application/octet-stream`.
 *
 * @internal
 */
export const mimeTypeFor = (path: string, isText: boolean): string => {
  const base = path.slice(path.lastIndexOf("/") + 1)
  const dot = base.lastIndexOf(".")
  const known = dot > 0 ? BY_EXTENSION[base.slice(dot + 1).toLowerCase()] : undefined
  return known ?? (isText ? TEXT_PLAIN : OCTET_STREAM)
}

/**
 * Is content of this media type served as `text` (when it decodes as UTF-8)?
 *
 * @internal
 */
export const isTextMimeType = (mimeType: string): boolean => {
  const m = (mimeType.split(";")[0] ?? "").trim().toLowerCase()
  return m.startsWith("text/") || m.endsWith("+json") || m.endsWith("+xml") ||
    m === "application/json" || m === "application/yaml" || m === "application/xml" ||
    m === "application/toml" || m === "application/javascript"
}

// ---------------------------------------------------------------------------------------------
// Bytes
// ---------------------------------------------------------------------------------------------

const encoder = new TextEncoder()

/** UTF-8 bytes of a string, exactly (no normalisation). @internal */
export const utf8 = (text: string): Uint8Array => encoder.encode(text)

/**
 * Decodes bytes as UTF-8 when they are valid UTF-8 and re-encode to the very same bytes (a BOM is
 * kept), so a `text` reply hashes to the digest of the bytes.
 *
 * @internal
 */
export const decodeUtf8 = (bytes: Uint8Array): Option.Option<string> => {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
  return Option.liftThrowable(() => decoder.decode(bytes))().pipe(
    Option.filter((text) => sameBytes(utf8(text), bytes))
  )
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** Text that contains NUL is treated as binary when guessing a media type. @internal */
export const looksLikeText = (bytes: Uint8Array): Option.Option<string> =>
  decodeUtf8(bytes).pipe(Option.filter((text) => !text.includes("\u0000")))

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"))

/**
 * `"sha256:" + 64 lowercase hex` over the bytes, with Web Crypto (`crypto.subtle`).
 *
 * @internal
 */
export const digest = (bytes: Uint8Array): Effect.Effect<string> =>
  Effect.promise(() => crypto.subtle.digest("SHA-256", new Uint8Array(bytes))).pipe(
    Effect.map((buffer) => {
      let hex = "sha256:"
      for (const byte of new Uint8Array(buffer)) hex += HEX[byte] ?? ""
      return hex
    })
  )
