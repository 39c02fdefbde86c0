/**
 * The guides name the project's files as they are: every `path.ts` written in backticks in the
 * README or a guide under docs/ (architecture.md included) exists, and so does every folder or
 * other file written with its folder. A path with a folder is read from the checkout's root, from
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

/**
 * Generated or user-side locations a guide may name that a checkout does not hold: `npm run docs`'
 * output, the build, the bench's and conformance runs' output, a user's bundle.
 */
const generated = (path: string): boolean =>
  ["docs/modules/", "docs/examples/", "dist/", "bench/out/", "conformance/results/", "build/", "node_modules/"]
    .some((prefix) => path.startsWith(prefix))

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

// Folders (`internal/transport/http/session/`) and files other than `.ts` (`scripts/check-docs.mjs`,
// `examples/nginx-cluster.conf`) named with at least one folder: read from the checkout's root,
// from `src/` or from `src/internal/`.
describe("guides name folders and other files that exist", () => {
  for (const guide of guides) {
    it(guide, () => {
      const text = Fs.readFileSync(Path.join(ROOT, guide), "utf8")
      const pattern =
        /`([A-Za-z0-9_][A-Za-z0-9_.-]*\/[A-Za-z0-9_./-]*(?:\/|\.(?:mjs|cjs|js|json|md|sh|conf|yml|yaml)))`/g
      const paths = new Set(Array.from(text.matchAll(pattern), (m) => m[1] ?? ""))
      const missing = Array.from(paths).filter((path) =>
        !external(path) && !generated(path) &&
        !["", "src", "src/internal"].some((base) => Fs.existsSync(Path.join(ROOT, base, path)))
      )
      assert.deepStrictEqual(missing, [])
    })
  }
})
