/**
 * The guides name the project's files as they are: every `path.ts` written in backticks in the
 * README or a guide under docs/ exists. A path with a folder is read from the checkout's root, from
 * `src/` or from `src/internal/`; a bare file name (`make.ts`, written inside a sentence about its
 * folder) must name some file under `src/`, `test/`, `examples/` or `bench/`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("..", import.meta.url))

const guides = [
  "README.md",
  ...Fs.readdirSync(Path.join(ROOT, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)
]

/** Files under the folders a bare name may live in, by base name. */
const baseNames = (): ReadonlySet<string> => {
  const names = new Set<string>()
  const walk = (dir: string): void => {
    for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules") continue
      const path = Path.join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else names.add(entry.name)
    }
  }
  for (const dir of ["src", "test", "examples", "bench"]) walk(Path.join(ROOT, dir))
  return names
}

// `shared/…` is the steering folder beside the checkout; `docs/gen-ai/…` is the OpenTelemetry
// semantic-conventions repository's path.
const external = (path: string): boolean => path.startsWith("shared/") || path.startsWith("docs/gen-ai/")

describe("guides name files that exist", () => {
  const names = baseNames()
  for (const guide of guides) {
    it(guide, () => {
      const text = Fs.readFileSync(Path.join(ROOT, guide), "utf8")
      const paths = new Set(Array.from(text.matchAll(/`([A-Za-z0-9_][A-Za-z0-9_./-]*\.ts)`/g), (m) => m[1] ?? ""))
      const missing = Array.from(paths).filter((path) => {
        if (external(path)) return false
        if (!path.includes("/")) return !names.has(path)
        return !["", "src", "src/internal"].some((base) => Fs.existsSync(Path.join(ROOT, base, path)))
      })
      assert.deepStrictEqual(missing, [])
    })
  }
})
