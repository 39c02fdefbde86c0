/**
 * Issue #20, "Quadratic parsing": front matter parsing is linear in its size on both sides (the
 * strict subset a server reads, the lenient YAML a client reads from an untrusted server), and a
 * client refuses front matter over 64 KiB before parsing it.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import { Skill } from "presa-mcp"

const sha256 = (text: string): string => `sha256:${createHash("sha256").update(text).digest("hex")}`

/** `lines` distinct keys: the shape the `yaml` package's own unique-key check is quadratic on. */
const manyKeys = (lines: number): string =>
  `---\nname: s\ndescription: d\n${Array.from({ length: lines }, (_, i) => `k${i}: v${i}\n`).join("")}---\n# body\n`

/** Median wall time of `runs` calls, in milliseconds. */
const median = (runs: number, f: () => void): number => {
  const times: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    f()
    times.push(performance.now() - t0)
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(runs / 2)] ?? 0
}

const entryFor = (text: string): Skill.SkillEntry => ({
  uri: "skill://s/SKILL.md",
  frontmatter: { name: "s", description: "d" },
  resources: [{ uri: "skill://s/SKILL.md", digest: sha256(text), size: Buffer.byteLength(text) }]
})

describe("front matter: linear time, bounded on the client", () => {
  it("strict parsing of 8× the keys takes well under 64× the time (linear, not quadratic)", () => {
    const small = manyKeys(1_500)
    const large = manyKeys(12_000)
    Skill.parseFrontmatter(small) // warm-up
    const t1 = median(3, () => assert.isTrue(Skill.parseFrontmatter(small)._tag === "Right"))
    const t8 = median(3, () => assert.isTrue(Skill.parseFrontmatter(large)._tag === "Right"))
    // Linear is ~8×, quadratic ~64× (the `yaml` package's own unique-key check measured 16,000
    // keys in 8 s, 32,000 in 25 s); 24× leaves room for a loaded machine.
    assert.isBelow(t8 / Math.max(t1, 1), 24, `1,500 keys: ${t1.toFixed(1)} ms, 12,000 keys: ${t8.toFixed(1)} ms`)
  })

  it.effect("duplicate keys are still refused, strict and lenient", () =>
    Effect.gen(function*() {
      expect(Skill.parseFrontmatter("---\nname: a\ndescription: b\nname: c\n---\n")).toMatchObject({
        _tag: "Left"
      })
      const dup = "---\nname: s\ndescription: d\nx: 1\nx: 2\n---\n"
      const error = yield* Effect.flip(Skill.verifySkillMd(entryFor(dup), dup))
      assert.strictEqual(error.reason, "frontmatter")
      expect(error.message).toMatch(/unique.*"x"/)
    }))

  it.effect("a client refuses front matter over 65,536 characters before parsing it", () =>
    Effect.gen(function*() {
      const big = `---\nname: s\ndescription: d\npad: "${"x".repeat(65_536)}"\n---\n`
      const t0 = performance.now()
      const error = yield* Effect.flip(Skill.verifySkillMd(entryFor(big), big))
      assert.strictEqual(error.reason, "frontmatter")
      expect(error.message).toMatch(/exceeds the client's limit of 65536/)
      assert.isBelow(performance.now() - t0, 500)
      // Just under the bound is parsed (and found to differ from the entry by its extra field).
      const fits = `---\nname: s\ndescription: d\npad: "${"x".repeat(65_000)}"\n---\n`
      const parsed = yield* Effect.flip(Skill.verifySkillMd(entryFor(fits), fits))
      expect(parsed.message).toContain("\"pad\"")
    }))
})
