/**
 * The Node side of `presa-mcp dev` (issue #40, point 3): where the server file is, and the
 * command line that runs it (`node`, with tsx's loader for TypeScript).
 *
 * @internal
 */
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const TYPESCRIPT = new Set([".ts", ".mts", ".cts", ".tsx"])

const resolveFrom = (dir: string): string | undefined => {
  try {
    return createRequire(path.join(dir, "presa-mcp-dev.js")).resolve("tsx")
  } catch {
    return undefined
  }
}

/** A server file, resolved. @internal */
export type Entry =
  | { readonly _tag: "Missing"; readonly file: string }
  | { readonly _tag: "NoTsx"; readonly file: string; readonly dir: string }
  | Ready

/** A server file that can be run. @internal */
export interface Ready {
  readonly _tag: "Ready"
  /** Absolute path. */
  readonly file: string
  /** Its folder (the default watched folder). */
  readonly dir: string
  /** The program (this Node) and the arguments before the file's own (`--import <tsx>` or none). */
  readonly command: string
  readonly loader: ReadonlyArray<string>
}

/**
 * Resolves `file` against the working directory. JavaScript runs with plain `node`; TypeScript
 * with `--import <tsx>`, tsx being looked up from the file's folder, then the working directory,
 * then presa-mcp's own location (a checkout has it as a devDependency).
 *
 * @internal
 */
export const resolve = (file: string): Entry => {
  const absolute = path.resolve(file)
  const dir = path.dirname(absolute)
  if (!existsSync(absolute)) return { _tag: "Missing", file: absolute }
  if (!TYPESCRIPT.has(path.extname(absolute))) {
    return { _tag: "Ready", file: absolute, dir, command: process.execPath, loader: [] }
  }
  const here = path.dirname(fileURLToPath(import.meta.url))
  const tsx = [dir, process.cwd(), here].map(resolveFrom).find((p) => p !== undefined)
  return tsx === undefined
    ? { _tag: "NoTsx", file: absolute, dir }
    : { _tag: "Ready", file: absolute, dir, command: process.execPath, loader: ["--import", pathToFileURL(tsx).href] }
}

/** Absolute paths of the folders to watch. @internal */
export const absolute = (dirs: ReadonlyArray<string>): ReadonlyArray<string> => dirs.map((d) => path.resolve(d))

/** The working directory. @internal */
export const cwd = (): string => process.cwd()

/** `file` relative to the working directory (for messages). @internal */
export const relative = (file: string): string => path.relative(process.cwd(), file)

/**
 * `text` with the absolute paths of `dirs` (and `file://` URLs of them) made relative to the
 * working directory, as {@link relative} shows them (for messages). @internal
 */
export const shorten = (dirs: ReadonlyArray<string>) => (text: string): string =>
  dirs.reduce((out, dir) => {
    const rel = relative(dir)
    const to = rel === "" ? "" : `${rel}${path.sep}`
    const from = `${dir.endsWith(path.sep) ? dir : `${dir}${path.sep}`}`
    return out.split(pathToFileURL(from).href).join(to).split(from).join(to)
  }, text)
