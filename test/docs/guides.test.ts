/**
 * Every example of a guide that is also a runnable test stays identical to it: a ```ts block of
 * docs/*.md whose first line is `// test/docs/<name>.test.ts…` must equal that file, byte for byte.
 * (The test files run with the rest of the suite, so the guides' examples run in CI.)
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/** The ```ts blocks of a markdown text that name a test file on their first line, with that path. */
const runnableBlocks = (markdown: string): ReadonlyArray<{ readonly path: string; readonly code: string }> =>
  Array.from(markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm), (m) => m[1] ?? "").flatMap((code) => {
    const named = /^\/\/ (test\/docs\/[A-Za-z0-9_.-]+\.test\.ts)\b/.exec(code)
    return named?.[1] === undefined ? [] : [{ path: named[1], code }]
  })

describe("runnable guide examples", () => {
  const guides = Fs.readdirSync(Path.join(ROOT, "docs")).filter((name) => name.endsWith(".md"))
  it("docs/testing.md has its runnable example", () => {
    const blocks = runnableBlocks(Fs.readFileSync(Path.join(ROOT, "docs", "testing.md"), "utf8"))
    assert.deepStrictEqual(blocks.map((b) => b.path), ["test/docs/testing-guide.test.ts"])
  })
  for (const guide of guides) {
    const blocks = runnableBlocks(Fs.readFileSync(Path.join(ROOT, "docs", guide), "utf8"))
    for (const block of blocks) {
      it(`docs/${guide}: ${block.path} is the guide's block`, () => {
        const file = Fs.readFileSync(Path.join(ROOT, block.path), "utf8")
        assert.strictEqual(
          block.code,
          file,
          `${block.path} differs from its block in docs/${guide}: copy one onto the other`
        )
      })
    }
  }
})
