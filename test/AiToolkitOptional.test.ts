/**
 * `@effect/ai` is an optional peer dependency: only `presa-mcp/AiToolkit` (src/AiToolkit.ts and
 * src/internal/ai/) may import it, and nothing else in src/ may import those, so every other entry
 * point loads without it. Checked on the sources: each import/export specifier of every src/ file.
 * (scripts/package-test.sh checks the same on the installed tarball: every other entry point
 * imports in a project without @effect/ai, and `presa-mcp/AiToolkit` fails there naming it.)
 */
import { describe, expect, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const SRC = Path.join(ROOT, "src")

const files = (dir: string): ReadonlyArray<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(dir, entry.name)
    return entry.isDirectory() ? files(path) : entry.name.endsWith(".ts") ? [path] : []
  })

/** The module specifiers of `import … from "x"`, `export … from "x"`, `import("x")`, `import "x"`. */
const specifiers = (source: string): ReadonlyArray<string> =>
  [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g)].map((m) => m[1] ?? "")

const isBridge = (file: string): boolean => {
  const relative = Path.relative(SRC, file).split(Path.sep).join("/")
  return relative === "AiToolkit.ts" || relative.startsWith("internal/ai/")
}

describe("@effect/ai stays optional", () => {
  it("only src/AiToolkit.ts and src/internal/ai/ import @effect/ai; nothing else imports them", () => {
    const all = files(SRC)
    expect(all.length).toBeGreaterThan(20)
    const offenders: Array<string> = []
    let bridgeImports = 0
    for (const file of all) {
      const found = specifiers(Fs.readFileSync(file, "utf8"))
      const ai = found.filter((s) => s === "@effect/ai" || s.startsWith("@effect/ai/"))
      if (isBridge(file)) {
        bridgeImports += ai.length
        // The bridge imports @effect/ai's modules one by one, never the root: the root loads its
        // McpServer and with it @effect/rpc, a peer of @effect/ai that we do not list.
        expect(ai).not.toContain("@effect/ai")
        continue
      }
      for (const s of found) {
        if (ai.includes(s) || /(?:^|\/)AiToolkit\.js$/.test(s) || /(?:^|\/)internal\/ai\/|^\.\/ai\//.test(s)) {
          offenders.push(`${Path.relative(ROOT, file)}: ${s}`)
        }
      }
    }
    expect(offenders).toEqual([])
    expect(bridgeImports).toBeGreaterThan(0)
  })

  it("package.json lists @effect/ai as an optional peer", () => {
    const pkg: unknown = JSON.parse(Fs.readFileSync(Path.join(ROOT, "package.json"), "utf8"))
    expect(pkg).toMatchObject({
      peerDependencies: { "@effect/ai": "^0.37.0" },
      peerDependenciesMeta: { "@effect/ai": { optional: true } }
    })
  })
})
