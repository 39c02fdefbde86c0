import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import { fileURLToPath } from "node:url"
import * as Skill from "../src/Skill.js"

const sha256 = (content: string | Uint8Array): string =>
  `sha256:${
    createHash("sha256").update(typeof content === "string" ? Buffer.from(content, "utf8") : content).digest("hex")
  }`

const SKILL_MD = "---\nname: code-review\ndescription: Review a change for correctness and style\n---\n" +
  "# Reviewing a change\n\nSee [the checklist](references/checklist.md).\n"
const CHECKLIST = "- tests cover the change\n"

const reviewFiles = { "SKILL.md": SKILL_MD, "references/checklist.md": CHECKLIST }

const fixtureDir = new URL("./fixtures/skills/code-review/", import.meta.url)

const skillMd = (name: string, extra = "") => `---\nname: ${name}\ndescription: Does things\n${extra}---\nBody\n`

const reasonOf = <A>(effect: Effect.Effect<A, Skill.SkillError>) => Effect.map(Effect.flip(effect), (e) => e.reason)

const frontmatterOf = (yaml: string) => Skill.parseFrontmatter(`---\n${yaml}---\nbody\n`)

const refused = (yaml: string): string => {
  const result = frontmatterOf(yaml)
  if (Either.isRight(result)) return assert.fail(`accepted ${JSON.stringify(yaml)}: ${JSON.stringify(result.right)}`)
  assert.strictEqual(result.left.reason, "frontmatter", yaml)
  return result.left.message
}

const accepted = (yaml: string): Record<string, unknown> => {
  const result = frontmatterOf(yaml)
  if (Either.isLeft(result)) return assert.fail(`refused ${JSON.stringify(yaml)}: ${result.left.message}`)
  return result.right
}

describe("Skill URIs", () => {
  it.effect("a skill at code-review", () =>
    Effect.gen(function*() {
      const skill = yield* Skill.make("code-review", reviewFiles)
      assert.strictEqual(Skill.uri(skill), "skill://code-review/SKILL.md")
      assert.strictEqual(Skill.root(skill), "skill://code-review")
      assert.strictEqual(Skill.fileUri(skill, "references/checklist.md"), "skill://code-review/references/checklist.md")
      assert.strictEqual(Skill.fileUri(skill, "my notes#1.md"), "skill://code-review/my%20notes%231.md")
      assert.strictEqual(skill.name, "code-review")
      assert.strictEqual(skill.path, "code-review")
      assert.deepStrictEqual(skill.frontmatter, {
        name: "code-review",
        description: "Review a change for correctness and style"
      })
      assert.isFalse(skill.dynamic)
      assert.isFalse(skill.unlisted)
      assert.deepStrictEqual(skill.requiredScopes, [])
    }))

  it.effect("a prefixed path keeps the prefix in the URI and the last segment as the name", () =>
    Effect.gen(function*() {
      const skill = yield* Skill.make("acme/billing/refunds", {
        "SKILL.md": skillMd("refunds"),
        "references/GUIDE.md": "guide"
      })
      assert.strictEqual(Skill.uri(skill), "skill://acme/billing/refunds/SKILL.md")
      assert.strictEqual(Skill.root(skill), "skill://acme/billing/refunds")
      assert.strictEqual(skill.name, "refunds")
      assert.deepStrictEqual(skill.files.map((f) => f.uri), [
        "skill://acme/billing/refunds/SKILL.md",
        "skill://acme/billing/refunds/references/GUIDE.md"
      ])
    }))
})

describe("Skill.entry", () => {
  it.effect("lists every file once with an independent sha256 digest and byte size", () =>
    Effect.gen(function*() {
      const binary = new Uint8Array([0, 1, 2, 255, 254])
      const crlf = "line one\r\nline two\r\n"
      const unicode = "café ☕ 😀\n"
      const skill = yield* Skill.make("code-review", {
        "scripts/run.sh": crlf,
        ...reviewFiles,
        "assets/logo.bin": binary,
        "notes/unicode.txt": unicode
      })
      const entry = yield* Skill.entry(skill)
      assert.strictEqual(entry.uri, "skill://code-review/SKILL.md")
      assert.deepStrictEqual(entry.frontmatter, {
        name: "code-review",
        description: "Review a change for correctness and style"
      })
      assert.deepStrictEqual(entry.resources, [
        { uri: "skill://code-review/SKILL.md", digest: sha256(SKILL_MD), size: Buffer.byteLength(SKILL_MD) },
        { uri: "skill://code-review/assets/logo.bin", digest: sha256(binary), size: 5 },
        { uri: "skill://code-review/notes/unicode.txt", digest: sha256(unicode), size: Buffer.byteLength(unicode) },
        {
          uri: "skill://code-review/references/checklist.md",
          digest: sha256(CHECKLIST),
          size: Buffer.byteLength(CHECKLIST)
        },
        { uri: "skill://code-review/scripts/run.sh", digest: sha256(crlf), size: Buffer.byteLength(crlf) }
      ])
      if (entry.resources === "dynamic") return assert.fail("expected static resources")
      for (const r of entry.resources) expect(r.digest).toMatch(/^sha256:[0-9a-f]{64}$/)
      // The entry is valid under the wire schema.
      const decoded = yield* Skill.decodeSkillEntry(entry)
      assert.deepStrictEqual(decoded, entry)
    }))

  it.effect("a skill with a generated file is dynamic and its generator runs on each read", () =>
    Effect.gen(function*() {
      let calls = 0
      const skill = yield* Skill.make("code-review", {
        ...reviewFiles,
        "live/status.txt": () => {
          calls += 1
          return `call ${calls}\n`
        },
        "live/effect.json": Effect.sync(() => "{\"ok\":true}"),
        "live/promise.md": () => Promise.resolve(new TextEncoder().encode("# from a promise\n"))
      })
      assert.isTrue(skill.dynamic)
      const entry = yield* Skill.entry(skill)
      assert.strictEqual(entry.resources, Skill.DYNAMIC_RESOURCES)
      assert.strictEqual(entry.resources, "dynamic")
      const uri = Skill.fileUri(skill, "live/status.txt")
      const first = yield* Skill.read(skill, uri)
      const second = yield* Skill.read(skill, uri)
      assert.strictEqual(Option.getOrThrow(first).text, "call 1\n")
      assert.strictEqual(Option.getOrThrow(second).text, "call 2\n")
      assert.strictEqual(calls, 2)
      const json = Option.getOrThrow(yield* Skill.read(skill, Skill.fileUri(skill, "live/effect.json")))
      assert.strictEqual(json.mimeType, "application/json")
      assert.strictEqual(json.text, "{\"ok\":true}")
      const md = Option.getOrThrow(yield* Skill.read(skill, Skill.fileUri(skill, "live/promise.md")))
      assert.strictEqual(md.mimeType, "text/markdown")
      assert.strictEqual(md.text, "# from a promise\n")
    }))

  it.effect("a generated SKILL.md takes its front matter from options", () =>
    Effect.gen(function*() {
      const frontmatter = { name: "live", description: "Generated", metadata: { version: "2" } }
      const skill = yield* Skill.make("live", { "SKILL.md": () => skillMd("live") }, { frontmatter })
      const entry = yield* Skill.entry(skill)
      assert.deepStrictEqual(entry.frontmatter, frontmatter)
      assert.strictEqual(entry.resources, "dynamic")
    }))

  it.effect("unlisted and requiredScopes are kept on the model", () =>
    Effect.gen(function*() {
      const skill = yield* Skill.make("code-review", reviewFiles, { unlisted: true, requiredScopes: ["skills:read"] })
      assert.isTrue(skill.unlisted)
      assert.deepStrictEqual(skill.requiredScopes, ["skills:read"])
    }))
})

describe("SkillError reasons", () => {
  it.effect("missing-skill-md", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* reasonOf(Skill.make("code-review", { "README.md": "hi" })), "missing-skill-md")
    }))

  it.effect("frontmatter", () =>
    Effect.gen(function*() {
      const noDescription = "---\nname: code-review\n---\nbody\n"
      assert.strictEqual(yield* reasonOf(Skill.make("code-review", { "SKILL.md": noDescription })), "frontmatter")
      const noName = "---\ndescription: x\n---\nbody\n"
      assert.strictEqual(yield* reasonOf(Skill.make("code-review", { "SKILL.md": noName })), "frontmatter")
      const numericName = "---\nname: 42\ndescription: x\n---\n"
      assert.strictEqual(yield* reasonOf(Skill.make("code-review", { "SKILL.md": numericName })), "frontmatter")
      assert.strictEqual(
        yield* reasonOf(Skill.make("code-review", { "SKILL.md": "# no front matter\n" })),
        "frontmatter"
      )
      assert.strictEqual(
        yield* reasonOf(Skill.make("code-review", { "SKILL.md": "---\nname: code-review\n" })),
        "frontmatter"
      )
      assert.strictEqual(
        yield* reasonOf(Skill.make("code-review", { "SKILL.md": skillMd("code-review", "tags: [a, b]\n") })),
        "frontmatter"
      )
      assert.strictEqual(
        yield* reasonOf(Skill.make("code-review", { "SKILL.md": new Uint8Array([0x2d, 0x2d, 0x2d, 0x0a, 0xff]) })),
        "frontmatter"
      )
      // A generated SKILL.md without options.frontmatter.
      assert.strictEqual(
        yield* reasonOf(Skill.make("code-review", { "SKILL.md": () => skillMd("code-review") })),
        "frontmatter"
      )
      // options.frontmatter that is not JSON.
      assert.strictEqual(
        yield* reasonOf(
          Skill.make("live", { "SKILL.md": () => "x" }, {
            frontmatter: { name: "live", description: "d", at: new Date(0) }
          })
        ),
        "frontmatter"
      )
    }))

  it.effect("name-mismatch", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Skill.make("code-review", { "SKILL.md": skillMd("x") }))
      assert.strictEqual(error.reason, "name-mismatch")
      assert.strictEqual(error._tag, "SkillError")
      assert.strictEqual(
        yield* reasonOf(Skill.make("acme/refunds", { "SKILL.md": skillMd("acme") })),
        "name-mismatch"
      )
    }))

  it.effect("too-many-files: 513 files", () =>
    Effect.gen(function*() {
      const files: Record<string, string> = { "SKILL.md": skillMd("big") }
      for (let i = 0; i < 511; i++) files[`f/${i}.txt`] = "x"
      const ok = yield* Skill.make("big", files)
      assert.strictEqual(ok.files.length, 512)
      files["f/511.txt"] = "x"
      assert.strictEqual(yield* reasonOf(Skill.make("big", files)), "too-many-files")
    }))

  it.effect("too-large: over 16 MiB of static content", () =>
    Effect.gen(function*() {
      const half = new Uint8Array(Skill.MAX_TOTAL_SIZE_PER_SKILL / 2)
      const md = skillMd("big")
      const exact = new Uint8Array(Skill.MAX_TOTAL_SIZE_PER_SKILL - Buffer.byteLength(md))
      const ok = yield* Skill.make("big", { "SKILL.md": md, "blob.bin": exact })
      assert.strictEqual(ok.files.length, 2)
      assert.strictEqual(
        yield* reasonOf(Skill.make("big", { "SKILL.md": md, "a.bin": half, "b.bin": half })),
        "too-large"
      )
      // Generated content does not count.
      const dynamic = yield* Skill.make("big", { "SKILL.md": md, "a.bin": half, "b.bin": () => half })
      assert.isTrue(dynamic.dynamic)
    }))

  it.effect("invalid-path", () =>
    Effect.gen(function*() {
      const md = { "SKILL.md": skillMd("code-review") }
      for (const path of ["", "a//code-review", "/code-review", "code-review/", "../code-review", "a b/code-review"]) {
        assert.strictEqual(yield* reasonOf(Skill.make(path, md)), "invalid-path", path)
      }
      for (const name of ["Code-Review", "-review", "review-", "code--review", "code_review", "a".repeat(65)]) {
        assert.strictEqual(yield* reasonOf(Skill.make(name, { "SKILL.md": skillMd(name) })), "invalid-path", name)
      }
      const longest = "a".repeat(64)
      assert.strictEqual((yield* Skill.make(longest, { "SKILL.md": skillMd(longest) })).name, longest)
      for (const file of ["../escape.md", "/abs.md", "a//b.md", "a/./b.md", "a/../b.md", "a\\b.md", "dir/"]) {
        assert.strictEqual(yield* reasonOf(Skill.make("code-review", { ...md, [file]: "x" })), "invalid-path", file)
      }
      assert.strictEqual(
        yield* reasonOf(Skill.make("code-review", { ...md, "references": "x", "references/a.md": "y" })),
        "invalid-path"
      )
      assert.strictEqual(
        yield* reasonOf(Skill.make("code-review", md, { mimeTypes: { "missing.md": "text/markdown" } })),
        "invalid-path"
      )
    }))
})

describe("Skill.parseFrontmatter", () => {
  it("reads the reference example", () => {
    const result = Skill.parseFrontmatter(
      "---\nname: pdf\ndescription: Fill forms\nmetadata:\n  version: \"2.1\"\n---\n"
    )
    assert.deepStrictEqual(
      result,
      Either.right({ name: "pdf", description: "Fill forms", metadata: { version: "2.1" } })
    )
  })

  it("splits front matter from the body, with \\r\\n line ends and a BOM", () => {
    assert.deepStrictEqual(
      Skill.splitFrontmatter("---\r\nname: a\r\n---\r\n# Body\r\n"),
      Either.right({ yaml: "name: a\r\n", body: "# Body\r\n" })
    )
    assert.deepStrictEqual(
      Skill.splitFrontmatter("\uFEFF---\nname: a\n---"),
      Either.right({ yaml: "name: a\n", body: "" })
    )
    assert.deepStrictEqual(
      Skill.parseFrontmatter("---\r\nname: a\r\ndescription: b\r\n---\r\n"),
      Either.right({ name: "a", description: "b" })
    )
    assert.isTrue(Either.isLeft(Skill.splitFrontmatter("name: a\n---\n")))
    assert.isTrue(Either.isLeft(Skill.splitFrontmatter("---\nname: a\n")))
    assert.isTrue(Either.isLeft(Skill.splitFrontmatter(" ---\nname: a\n---\n")))
  })

  it("accepts | and > block scalars", () => {
    assert.deepStrictEqual(
      accepted("literal: |\n  line one\n  line two\nfolded: >\n  folded\n  text\nkeep: |-\n  x\n"),
      {
        literal: "line one\nline two\n",
        folded: "folded text\n",
        keep: "x"
      }
    )
  })

  it("accepts nested maps and lists of scalars", () => {
    assert.deepStrictEqual(
      accepted(
        "metadata:\n  author: acme\n  nested:\n    deep: value\nallowed-tools:\n  - Read\n  - \"Bash(git:*)\"\n  - 'it''s'\n"
      ),
      {
        metadata: { author: "acme", nested: { deep: "value" } },
        "allowed-tools": ["Read", "Bash(git:*)", "it's"]
      }
    )
  })

  it("reads true/false as booleans and plain decimal numbers as numbers", () => {
    assert.deepStrictEqual(
      accepted("a: true\nb: false\nc: 42\nd: -7\ne: 1.5\nf: 0\ng: 1.2.3\nh: v1\ni: hello world # comment\n"),
      { a: true, b: false, c: 42, d: -7, e: 1.5, f: 0, g: "1.2.3", h: "v1", i: "hello world" }
    )
  })

  const ambiguous = [
    "yes",
    "no",
    "on",
    "off",
    "y",
    "n",
    "Yes",
    "NO",
    "On",
    "True",
    "FALSE",
    "null",
    "Null",
    "~",
    "1e3",
    "012",
    "0x1F",
    "0o17",
    "0b101",
    ".5",
    "1.",
    "+1",
    "1_000",
    ".inf",
    "-.inf",
    ".nan",
    "2024-01-01",
    "2024-01-01T10:00:00Z",
    "12:30",
    "<<",
    "=",
    "99999999999999999999"
  ]

  it("refuses plain scalars YAML readers disagree on, and accepts them quoted", () => {
    for (const value of ambiguous) {
      refused(`key: ${value}\n`)
      refused(`list:\n  - ${value}\n`)
      assert.deepStrictEqual(accepted(`key: "${value}"\n`), { key: value })
      assert.deepStrictEqual(accepted(`key: '${value}'\n`), { key: value })
    }
  })

  it("refuses flow collections, anchors, aliases, tags, multi-line plain values and other constructs", () => {
    expect(refused("tags: [a, b]\n")).toContain("flow")
    expect(refused("meta: {a: 1}\n")).toContain("flow")
    expect(refused("a: &x v\nb: *x\n")).toContain("anchor")
    expect(refused("b: *x\n")).toMatch(/alias/)
    expect(refused("a: !!str 5\n")).toContain("tag")
    expect(refused("a: !custom v\n")).toContain("tag")
    expect(refused("a: first line\n  second line\n")).toContain("multi-line")
    expect(refused("a: 1\na: 2\n")).toMatch(/unique|duplicate/)
    expect(refused("42: v\n")).toContain("not a string")
    expect(refused("true: v\n")).toContain("not a string")
    expect(refused("yes: v\n")).toContain("disagree")
    expect(refused("? complex\n: v\n")).toContain("explicit")
    expect(refused("a:\n")).toContain("empty")
    expect(refused("list:\n  - - nested\n")).toContain("scalars")
    expect(refused("list:\n  - k: v\n")).toContain("scalars")
    expect(refused("- a\n- b\n")).toContain("mapping")
    expect(refused("just a string\n")).toContain("mapping")
    expect(refused("")).toContain("mapping")
    expect(refused("a: b\n...\n")).toContain("end")
  })

  it("accepts quoted equivalents of refused constructs", () => {
    assert.deepStrictEqual(
      accepted("tags: \"[a, b]\"\nmeta: '{a: 1}'\nanchor: \"&x v\"\nalias: '*x'\ntag: \"!!str 5\"\n"),
      {
        tags: "[a, b]",
        meta: "{a: 1}",
        anchor: "&x v",
        alias: "*x",
        tag: "!!str 5"
      }
    )
    assert.deepStrictEqual(accepted("\"42\": v\n'true': w\nempty: \"\"\n"), { "42": "v", "true": "w", empty: "" })
    assert.deepStrictEqual(accepted("multi: \"first line\n  second line\"\n"), { multi: "first line second line" })
  })
})

describe("front matter given as a record", () => {
  it.effect("equal to the SKILL.md front matter: accepted (deep equality, any key order)", () =>
    Effect.gen(function*() {
      const md = skillMd("code-review", "metadata:\n  version: \"2.1\"\n  tags:\n    - a\n    - b\n")
      const skill = yield* Skill.make("code-review", { "SKILL.md": md }, {
        frontmatter: { metadata: { tags: ["a", "b"], version: "2.1" }, description: "Does things", name: "code-review" }
      })
      assert.deepStrictEqual(skill.frontmatter.metadata, { version: "2.1", tags: ["a", "b"] })
    }))

  it.effect("different from the SKILL.md front matter: frontmatter", () =>
    Effect.gen(function*() {
      const md = skillMd("code-review", "version: \"2024-01-01\"\n")
      const error = yield* Effect.flip(
        Skill.make("code-review", { "SKILL.md": md }, {
          frontmatter: { name: "code-review", description: "Does things", version: "2024-01-02" }
        })
      )
      assert.strictEqual(error.reason, "frontmatter")
      expect(error.message).toContain("version")
      assert.strictEqual(
        yield* reasonOf(
          Skill.make("code-review", { "SKILL.md": md }, {
            frontmatter: { name: "code-review", description: "Does things" }
          })
        ),
        "frontmatter"
      )
    }))
})

describe("Skill.read, directories and children", () => {
  it.effect("reads text, bytes and unknown URIs", () =>
    Effect.gen(function*() {
      const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1])
      const skill = yield* Skill.make("code-review", {
        ...reviewFiles,
        "assets/logo.png": png,
        "assets/data": new Uint8Array([0, 159, 146, 150]),
        "assets/notes": new TextEncoder().encode("plain words\n"),
        "scripts/check.py": new TextEncoder().encode("print('ok')\n")
      })
      const md = Option.getOrThrow(yield* Skill.read(skill, Skill.uri(skill)))
      assert.strictEqual(md.mimeType, "text/markdown")
      assert.strictEqual(md.text, SKILL_MD)
      assert.deepStrictEqual(md.bytes, new TextEncoder().encode(SKILL_MD))
      const logo = Option.getOrThrow(yield* Skill.read(skill, Skill.fileUri(skill, "assets/logo.png")))
      assert.strictEqual(logo.mimeType, "image/png")
      assert.isUndefined(logo.text)
      assert.deepStrictEqual(Skill.toResourceContents(logo), {
        uri: "skill://code-review/assets/logo.png",
        mimeType: "image/png",
        blob: Buffer.from(png).toString("base64")
      })
      const data = Option.getOrThrow(yield* Skill.read(skill, Skill.fileUri(skill, "assets/data")))
      assert.strictEqual(data.mimeType, "application/octet-stream")
      const notes = Option.getOrThrow(yield* Skill.read(skill, Skill.fileUri(skill, "assets/notes")))
      assert.strictEqual(notes.mimeType, "text/plain")
      assert.strictEqual(notes.text, "plain words\n")
      const py = Option.getOrThrow(yield* Skill.read(skill, Skill.fileUri(skill, "scripts/check.py")))
      assert.strictEqual(py.mimeType, "text/plain")
      assert.deepStrictEqual(Skill.toResourceContents(py), {
        uri: "skill://code-review/scripts/check.py",
        mimeType: "text/plain",
        text: "print('ok')\n"
      })
      assert.isTrue(Option.isNone(yield* Skill.read(skill, "skill://code-review/missing.md")))
      assert.isTrue(Option.isNone(yield* Skill.read(skill, "skill://code-review/references")))
      assert.isTrue(Option.isNone(yield* Skill.read(skill, "skill://other/SKILL.md")))
    }))

  it.effect("mimeTypes override the guess", () =>
    Effect.gen(function*() {
      const skill = yield* Skill.make("code-review", { ...reviewFiles, "data.txt": "{}" }, {
        mimeTypes: { "data.txt": "application/json" }
      })
      assert.deepStrictEqual(
        skill.files.map((f) => [f.path, f.mimeType]),
        [["SKILL.md", "text/markdown"], ["data.txt", "application/json"], [
          "references/checklist.md",
          "text/markdown"
        ]]
      )
    }))

  it.effect("lists every directory level and the direct children of each", () =>
    Effect.gen(function*() {
      const skill = yield* Skill.make("acme/refunds", {
        "SKILL.md": skillMd("refunds"),
        "references/checklist.md": CHECKLIST,
        "references/deep/more.txt": "more",
        "templates/form.json": () => "{}"
      })
      assert.deepStrictEqual(Skill.directories(skill), [
        "skill://acme/refunds",
        "skill://acme/refunds/references",
        "skill://acme/refunds/references/deep",
        "skill://acme/refunds/templates"
      ])
      const top = Option.getOrThrow(Skill.children(skill, "skill://acme/refunds"))
      assert.deepStrictEqual(top.map((r) => [r.name, r.mimeType]), [
        ["SKILL.md", "text/markdown"],
        ["references", "inode/directory"],
        ["templates", "inode/directory"]
      ])
      assert.deepStrictEqual(top[0], {
        uri: "skill://acme/refunds/SKILL.md",
        name: "SKILL.md",
        mimeType: "text/markdown",
        size: Buffer.byteLength(skillMd("refunds")),
        description: "Does things"
      })
      assert.deepStrictEqual(top[1], {
        uri: "skill://acme/refunds/references",
        name: "references",
        mimeType: "inode/directory"
      })
      const refs = Option.getOrThrow(Skill.children(skill, "skill://acme/refunds/references"))
      assert.deepStrictEqual(refs, [
        {
          uri: "skill://acme/refunds/references/checklist.md",
          name: "checklist.md",
          mimeType: "text/markdown",
          size: Buffer.byteLength(CHECKLIST)
        },
        { uri: "skill://acme/refunds/references/deep", name: "deep", mimeType: "inode/directory" }
      ])
      // Generated files have no size.
      assert.deepStrictEqual(Option.getOrThrow(Skill.children(skill, "skill://acme/refunds/templates")), [
        { uri: "skill://acme/refunds/templates/form.json", name: "form.json", mimeType: "application/json" }
      ])
      assert.isTrue(Option.isNone(Skill.children(skill, "skill://acme/refunds/SKILL.md")))
      assert.isTrue(Option.isNone(Skill.children(skill, "skill://acme/refunds/")))
      assert.isTrue(Option.isNone(Skill.children(skill, "skill://acme")))
      assert.deepStrictEqual(Skill.resources(skill).map((r) => r.uri), skill.files.map((f) => f.uri))
    }))
})

describe("Skill.fromDirectory and Skill.fromFiles", () => {
  it.effect("reads the code-review fixture tree", () =>
    Effect.gen(function*() {
      const dir = fileURLToPath(fixtureDir)
      const skill = yield* Skill.fromDirectory(dir)
      assert.strictEqual(Skill.uri(skill), "skill://code-review/SKILL.md")
      assert.deepStrictEqual(skill.frontmatter, {
        name: "code-review",
        description: "Review a change for correctness and style"
      })
      assert.deepStrictEqual(skill.files.map((f) => f.path), ["SKILL.md", "references/checklist.md"])
      const entry = yield* Skill.entry(skill)
      const mdBytes = fs.readFileSync(new URL("SKILL.md", fixtureDir))
      assert.deepStrictEqual(entry.resources, [
        { uri: "skill://code-review/SKILL.md", digest: sha256(mdBytes), size: mdBytes.length },
        { uri: "skill://code-review/references/checklist.md", digest: sha256(CHECKLIST), size: 25 }
      ])
      const md = Option.getOrThrow(yield* Skill.read(skill, Skill.uri(skill)))
      expect(md.text).toContain("# Reviewing a change")
      expect(md.text).toContain("references/checklist.md")
      const checklist = Option.getOrThrow(yield* Skill.read(skill, Skill.fileUri(skill, "references/checklist.md")))
      assert.strictEqual(checklist.text, "- tests cover the change\n")
      assert.deepStrictEqual(
        Option.getOrThrow(Skill.children(skill, "skill://code-review")).map((r) => [r.name, r.mimeType]),
        [["SKILL.md", "text/markdown"], ["references", "inode/directory"]]
      )
      const prefixed = yield* Skill.fromDirectory(dir, "team/code-review", { unlisted: true })
      assert.strictEqual(Skill.uri(prefixed), "skill://team/code-review/SKILL.md")
      assert.isTrue(prefixed.unlisted)
      const mismatch = yield* Effect.flip(Skill.fromDirectory(dir, "other"))
      assert.strictEqual(mismatch._tag === "SkillError" && mismatch.reason, "name-mismatch")
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("skips dotfiles and symlinks that escape the directory, follows those inside", () =>
    Effect.gen(function*() {
      const tmp = fs.mkdtempSync(nodePath.join(os.tmpdir(), "presa-skill-"))
      try {
        const dir = nodePath.join(tmp, "linked")
        fs.mkdirSync(nodePath.join(dir, "references"), { recursive: true })
        fs.writeFileSync(nodePath.join(dir, "SKILL.md"), skillMd("linked"))
        fs.writeFileSync(nodePath.join(dir, "references", "a.md"), "a")
        fs.writeFileSync(nodePath.join(dir, ".hidden"), "secret")
        fs.mkdirSync(nodePath.join(dir, ".git"))
        fs.writeFileSync(nodePath.join(dir, ".git", "HEAD"), "ref")
        fs.writeFileSync(nodePath.join(tmp, "outside.txt"), "outside")
        fs.mkdirSync(nodePath.join(tmp, "outside-dir"))
        fs.writeFileSync(nodePath.join(tmp, "outside-dir", "x.txt"), "x")
        fs.symlinkSync(nodePath.join(tmp, "outside.txt"), nodePath.join(dir, "escape.txt"))
        fs.symlinkSync(nodePath.join(tmp, "outside-dir"), nodePath.join(dir, "escape-dir"))
        fs.symlinkSync(nodePath.join(dir, "references", "a.md"), nodePath.join(dir, "alias.md"))
        fs.symlinkSync(dir, nodePath.join(dir, "references", "loop"))
        fs.symlinkSync(nodePath.join(tmp, "missing"), nodePath.join(dir, "dangling.md"))
        const skill = yield* Skill.fromDirectory(dir)
        assert.deepStrictEqual(skill.files.map((f) => f.path), ["SKILL.md", "alias.md", "references/a.md"])
      } finally {
        fs.rmSync(tmp, { recursive: true, force: true })
      }
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("stops a directory walk past the file limit", () =>
    Effect.gen(function*() {
      const tmp = fs.mkdtempSync(nodePath.join(os.tmpdir(), "presa-skill-"))
      try {
        const dir = nodePath.join(tmp, "many")
        fs.mkdirSync(nodePath.join(dir, "f"), { recursive: true })
        fs.writeFileSync(nodePath.join(dir, "SKILL.md"), skillMd("many"))
        for (let i = 0; i < 512; i++) fs.writeFileSync(nodePath.join(dir, "f", `${i}.txt`), "x")
        assert.strictEqual(
          yield* Effect.flip(Skill.fromDirectory(dir)).pipe(Effect.map((e) => e._tag === "SkillError" && e.reason)),
          "too-many-files"
        )
      } finally {
        fs.rmSync(tmp, { recursive: true, force: true })
      }
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("reads named files next to a module", () =>
    Effect.gen(function*() {
      const skill = yield* Skill.fromFiles(fixtureDir, ["SKILL.md", "references/checklist.md"])
      assert.strictEqual(Skill.uri(skill), "skill://code-review/SKILL.md")
      assert.deepStrictEqual(skill.files.map((f) => f.uri), [
        "skill://code-review/SKILL.md",
        "skill://code-review/references/checklist.md"
      ])
      // Without a trailing slash the base still names the directory.
      const noSlash = new URL("./fixtures/skills/code-review", import.meta.url)
      const again = yield* Skill.fromFiles(noSlash, ["SKILL.md"])
      assert.strictEqual(again.files.length, 1)
      const error = yield* Effect.flip(Skill.fromFiles(fixtureDir, ["SKILL.md", "../code-review/SKILL.md"]))
      assert.strictEqual(error._tag === "SkillError" && error.reason, "invalid-path")
      const missing = yield* Effect.flip(Skill.fromFiles(fixtureDir, ["SKILL.md", "nope.md"]))
      assert.strictEqual(missing._tag, "SystemError")
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("host-side verification", () => {
  const served = Effect.gen(function*() {
    const skill = yield* Skill.make("code-review", reviewFiles)
    return { skill, entry: yield* Skill.entry(skill) }
  })
  const checklistUri = "skill://code-review/references/checklist.md"

  it.effect("accepts the served bytes and text", () =>
    Effect.gen(function*() {
      const { entry } = yield* served
      yield* Skill.verifyFile(entry, checklistUri, new TextEncoder().encode(CHECKLIST))
      yield* Skill.verifyFile(entry, checklistUri, CHECKLIST)
      const text = yield* Skill.verifySkillMd(entry, new TextEncoder().encode(SKILL_MD))
      assert.strictEqual(text, SKILL_MD)
      const fromContents = Option.getOrThrow(
        Skill.contentsBytes({ uri: checklistUri, blob: Buffer.from(CHECKLIST).toString("base64") })
      )
      yield* Skill.verifyFile(entry, checklistUri, fromContents)
      assert.isTrue(Option.isNone(Skill.contentsBytes({ uri: checklistUri, blob: "not base64!" })))
    }))

  it.effect("unlisted", () =>
    Effect.gen(function*() {
      const { entry } = yield* served
      const error = yield* Effect.flip(Skill.verifyFile(entry, "skill://code-review/extra.md", "x"))
      assert.strictEqual(error._tag, "SkillVerificationError")
      assert.strictEqual(error.reason, "unlisted")
      assert.strictEqual(error.uri, "skill://code-review/extra.md")
    }))

  it.effect("size", () =>
    Effect.gen(function*() {
      const { entry } = yield* served
      const error = yield* Effect.flip(Skill.verifyFile(entry, checklistUri, `${CHECKLIST}\n`))
      assert.strictEqual(error.reason, "size")
      // A newline normalisation changes the size too.
      const crlf = yield* Effect.flip(Skill.verifySkillMd(entry, SKILL_MD.replace(/\n/g, "\r\n")))
      assert.strictEqual(crlf.reason, "size")
    }))

  it.effect("digest", () =>
    Effect.gen(function*() {
      const { entry } = yield* served
      const tampered = CHECKLIST.replace("tests", "TESTS")
      const error = yield* Effect.flip(Skill.verifyFile(entry, checklistUri, tampered))
      assert.strictEqual(error.reason, "digest")
      expect(error.message).toContain(sha256(tampered))
    }))

  it.effect("frontmatter: a field of the file differs from the entry", () =>
    Effect.gen(function*() {
      const { entry } = yield* served
      const other = SKILL_MD.replace("correctness and style", "correctness and speed")
      const tamperedEntry: Skill.SkillEntry = {
        uri: entry.uri,
        frontmatter: entry.frontmatter,
        resources: [{ uri: entry.uri, digest: sha256(other), size: Buffer.byteLength(other) }]
      }
      const error = yield* Effect.flip(Skill.verifySkillMd(tamperedEntry, other))
      assert.strictEqual(error.reason, "frontmatter")
      expect(error.message).toContain("\"description\"")
      // An extra field only the file has.
      const extra = SKILL_MD.replace("---\n#", "license: MIT\n---\n#")
      const extraEntry: Skill.SkillEntry = {
        ...tamperedEntry,
        resources: [{ uri: entry.uri, digest: sha256(extra), size: Buffer.byteLength(extra) }]
      }
      const extraError = yield* Effect.flip(Skill.verifySkillMd(extraEntry, extra))
      assert.strictEqual(extraError.reason, "frontmatter")
      expect(extraError.message).toContain("\"license\"")
      // No front matter at all.
      const bare = "# just a body\n"
      const bareEntry: Skill.SkillEntry = {
        ...tamperedEntry,
        resources: [{ uri: entry.uri, digest: sha256(bare), size: Buffer.byteLength(bare) }]
      }
      assert.strictEqual((yield* Effect.flip(Skill.verifySkillMd(bareEntry, bare))).reason, "frontmatter")
    }))

  it.effect("every front matter the strict subset accepts verifies against the entry built from it", () =>
    Effect.gen(function*() {
      const md = "---\r\nname: round-trip\r\ndescription: >\r\n  Folded\r\n  text\r\nlicense: 'MIT'\r\n" +
        "metadata:\r\n  version: \"2.1\"\r\n  count: 42\r\n  ratio: -1.5\r\n  enabled: true\r\n" +
        "  released: \"2024-01-01\"\r\nallowed-tools:\r\n  - Read\r\n  - \"yes\"\r\nnotes: |\r\n  a\r\n\r\n  b\r\n" +
        "---\r\nBody\r\n"
      const skill = yield* Skill.make("round-trip", { "SKILL.md": md })
      const entry = yield* Skill.entry(skill)
      assert.deepStrictEqual(entry.frontmatter, {
        name: "round-trip",
        description: "Folded text\n",
        license: "MIT",
        metadata: { version: "2.1", count: 42, ratio: -1.5, enabled: true, released: "2024-01-01" },
        "allowed-tools": ["Read", "yes"],
        notes: "a\n\nb\n"
      })
      assert.strictEqual(yield* Skill.verifySkillMd(entry, md), md)
      assert.strictEqual(yield* Skill.verifySkillMd(entry, new TextEncoder().encode(md)), md)
    }))

  it.effect("the host reads front matter leniently, with a JSON-compatible schema", () =>
    Effect.gen(function*() {
      const md = "---\nname: legacy\ndescription: Old\nversion: 1e3\nreleased: 2024-01-01\nflag: yes\n" +
        "tags: [a, b]\n---\nbody\n"
      const entry: Skill.SkillEntry = {
        uri: "skill://legacy/SKILL.md",
        frontmatter: {
          name: "legacy",
          description: "Old",
          version: 1000,
          released: "2024-01-01",
          flag: "yes",
          tags: ["a", "b"]
        },
        resources: [{ uri: "skill://legacy/SKILL.md", digest: sha256(md), size: Buffer.byteLength(md) }]
      }
      assert.strictEqual(yield* Skill.verifySkillMd(entry, md), md)
    }))

  it.effect("dynamic entries: no digest, but the directory and the 16 MiB cap apply", () =>
    Effect.gen(function*() {
      const skill = yield* Skill.make("live", { "SKILL.md": () => skillMd("live") }, {
        frontmatter: { name: "live", description: "Does things" }
      })
      const entry = yield* Skill.entry(skill)
      assert.strictEqual(entry.resources, "dynamic")
      yield* Skill.verifyFile(entry, "skill://live/anything.md", "whatever")
      assert.strictEqual(yield* Skill.verifySkillMd(entry, skillMd("live")), skillMd("live"))
      const outside = yield* Effect.flip(Skill.verifyFile(entry, "skill://livelier/SKILL.md", "x"))
      assert.strictEqual(outside.reason, "unlisted")
      const big = yield* Effect.flip(
        Skill.verifyFile(entry, "skill://live/big.bin", new Uint8Array(Skill.MAX_TOTAL_SIZE_PER_SKILL + 1))
      )
      assert.strictEqual(big.reason, "size")
      const differs = yield* Effect.flip(Skill.verifySkillMd(entry, skillMd("live", "extra: 1\n")))
      assert.strictEqual(differs.reason, "frontmatter")
    }))
})

describe("wire schemas", () => {
  const digest = sha256("x")
  const valid = {
    uri: "skill://acme/refunds/SKILL.md",
    frontmatter: { name: "refunds", description: "Refunds", metadata: { "io.modelcontextprotocol/x": 1 } },
    resources: [{ uri: "skill://acme/refunds/SKILL.md", digest, size: 1 }],
    extra: "kept"
  }

  it.effect("decodes a valid entry and keeps unknown fields", () =>
    Effect.gen(function*() {
      const entry = yield* Skill.decodeSkillEntry(valid)
      assert.deepStrictEqual(entry, valid)
    }))

  it.effect("invalid entries fail to decode", () =>
    Effect.gen(function*() {
      const { resources: _resources, ...missing } = valid
      const invalid: ReadonlyArray<unknown> = [
        missing,
        { ...valid, resources: "static" },
        { ...valid, resources: null },
        { ...valid, resources: {} },
        { ...valid, resources: [{ uri: valid.uri, digest: "sha256:XYZ", size: 1 }] },
        { ...valid, resources: [{ uri: valid.uri, digest: digest.toUpperCase(), size: 1 }] },
        { ...valid, resources: [{ uri: valid.uri, digest, size: -1 }] },
        { ...valid, resources: [{ uri: valid.uri, digest }] },
        { ...valid, resources: [{ uri: "skill://acme/refunds/a.md", digest, size: 1 }] },
        { ...valid, resources: [...valid.resources, ...valid.resources] },
        { ...valid, resources: [...valid.resources, { uri: "skill://acme/other/a.md", digest, size: 1 }] },
        { ...valid, uri: "skill://acme/chargebacks/SKILL.md" },
        { ...valid, uri: "skill://acme/refunds/README.md" },
        { ...valid, frontmatter: { name: "refunds" } },
        { ...valid, frontmatter: { name: "refunds", description: 1 } }
      ]
      for (const input of invalid) {
        const result = yield* Effect.either(Skill.decodeSkillEntry(input))
        assert.isTrue(Either.isLeft(result), JSON.stringify(input))
      }
      const dynamic = yield* Skill.decodeSkillEntry({ ...valid, resources: "dynamic" })
      assert.strictEqual(dynamic.resources, "dynamic")
    }))

  it.effect("list and get results", () =>
    Effect.gen(function*() {
      const list = yield* Skill.decodeListSkillsResult({
        resultType: "complete",
        skills: [valid],
        nextCursor: "2",
        ttlMs: 0,
        cacheScope: "private"
      })
      assert.strictEqual(list.skills.length, 1)
      assert.strictEqual(list.nextCursor, "2")
      const legacy = yield* Skill.decodeListSkillsResult({ skills: [] })
      assert.deepStrictEqual(legacy, { skills: [] })
      const get = yield* Skill.decodeGetSkillResult({
        resultType: "complete",
        skill: valid,
        ttlMs: 0,
        cacheScope: "private"
      })
      assert.deepStrictEqual(get.skill, valid)
      const bad = yield* Effect.either(Skill.decodeListSkillsResult({ skills: [{ ...valid, resources: undefined }] }))
      assert.isTrue(Either.isLeft(bad))
      assert.strictEqual(Skill.EXTENSION_ID, "io.modelcontextprotocol/skills")
      assert.strictEqual(Skill.MAX_RESOURCES_PER_SKILL, 512)
      assert.strictEqual(Skill.MAX_TOTAL_SIZE_PER_SKILL, 16_777_216)
    }))
})
