/**
 * Skills extension (SEP-2640) interop with the official TypeScript SDK v2, over real sockets on 127.0.0.1:
 *
 * 1. the SDK's `SkillsClient` (`@modelcontextprotocol/client/ext/skills`, client pinned to 2026-07-28) → our
 *    server (the reference library's `code-review` skill, and a prefixed skill `acme/billing/refunds`);
 * 2. our `McpClient` → a server built with `@modelcontextprotocol/server/ext/skills`
 *    (test/fixtures/interop-skills-v2-server.ts, a child process);
 * 3. our client's verification of tampered entries: every failure is a typed `SkillVerificationError`.
 *
 * Every wait is bounded (`WAIT`).
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from "@modelcontextprotocol/client"
import {
  SkillsClient,
  SkillVerificationError as SdkSkillVerificationError
} from "@modelcontextprotocol/client/ext/skills"
import * as Effect from "effect/Effect"
import { fileURLToPath } from "node:url"
import { makeLibrary } from "../../examples/library-definitions.js"
import * as McpClient from "../../src/McpClient.js"
import * as McpServer from "../../src/McpServer.js"
import * as Skill from "../../src/Skill.js"
import * as StreamableHttp from "../../src/transport/StreamableHttp.js"
import { bounded, MODERN, promise, rejection, spawnFixtureServer } from "../fixtures/interop-http.js"

const CLIENT_INFO = { name: "interop-test", version: "0.0.0" }
const V2_SKILLS_FIXTURE = fileURLToPath(new URL("../fixtures/interop-skills-v2-server.ts", import.meta.url))

const SKILL_MD = "skill://code-review/SKILL.md"
const CHECKLIST = "skill://code-review/references/checklist.md"
const CODE_REVIEW_FM = { name: "code-review", description: "Review a change for correctness and style" }

const REFUNDS_MD = [
  "---",
  "name: refunds",
  "description: Issue and track refunds",
  "---",
  "# Refunds",
  "",
  "Follow [the policy](policy/limits.md).",
  ""
].join("\n")
const REFUNDS_URI = "skill://acme/billing/refunds/SKILL.md"
const REFUNDS_LIMITS = "skill://acme/billing/refunds/policy/limits.md"

/** Our reference library over HTTP for the test's scope. */
const serveLibrary = Effect.gen(function*() {
  const server = yield* makeLibrary
  return (yield* StreamableHttp.serve(server, { port: 0 })).url
})

/** A small server of ours with one prefixed skill. */
const servePrefixed = Effect.gen(function*() {
  const refunds = yield* Skill.make("acme/billing/refunds", {
    "SKILL.md": REFUNDS_MD,
    "policy/limits.md": "Refunds above 500 EUR need approval.\n"
  })
  const server = yield* McpServer.make({ name: "prefixed-skills", version: "0.0.0", skills: [refunds] })
  return (yield* StreamableHttp.serve(server, { port: 0 })).url
})

/** An SDK v2 client pinned to 2026-07-28 with a `SkillsClient` on it, closed with the scope. */
const sdkSkills = (url: string) =>
  Effect.acquireRelease(
    promise("connect", async () => {
      const client = new V2Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } })
      await client.connect(new V2Transport(new URL(url)))
      return client
    }),
    (client) => promise("close", () => client.close()).pipe(Effect.ignore)
  ).pipe(Effect.map((client) => ({ client, skills: new SkillsClient(client) })))

/** Our client over HTTP for the test's scope. */
const ourClient = (url: string) =>
  Effect.gen(function*() {
    const transport = yield* StreamableHttp.client({ url })
    return yield* bounded(McpClient.connect(transport, { name: "presa-interop", version: "0.0.0" }), "connect")
  })

/** Starts the SDK v2 skills fixture (`--http --port 0`) and yields its URL; SIGTERM (then SIGKILL) on scope close. */
const spawnSkillsFixture = spawnFixtureServer(V2_SKILLS_FIXTURE, "interop-skills-v2-server")

/** The `reason` of the typed failure of `effect` (which must fail with our `SkillVerificationError`). */
const verificationReason = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.flip(bounded(effect, "verification")).pipe(
    Effect.map((error: unknown) => {
      assert.instanceOf(error, Skill.SkillVerificationError)
      expect(error._tag).toBe("SkillVerificationError")
      return error.reason
    })
  )

const asSdkError = (e: unknown): SdkSkillVerificationError => {
  assert.instanceOf(e, SdkSkillVerificationError)
  return e
}

describe("SDK v2 SkillsClient → our server", () => {
  it.scoped(
    "lists, gets, reads (verified) and reads directories of the library's code-review skill",
    () =>
      Effect.gen(function*() {
        const url = yield* serveLibrary
        const { skills } = yield* sdkSkills(url)
        expect(skills.supported).toBe(true)
        expect(skills.directoryRead).toBe(true)

        const listing = yield* promise("list", () => skills.list())
        expect(listing.invalid).toEqual([])
        const listed = listing.skills.find((s) => s.uri === SKILL_MD)
        assert.isDefined(listed)
        expect(listed.frontmatter).toMatchObject(CODE_REVIEW_FM)

        const got = yield* promise("get", () => skills.get(SKILL_MD))
        expect(got.skill).toEqual(listed)
        expect(got.ttlMs).toBeTypeOf("number")
        expect(got.cacheScope).toBeTypeOf("string")

        const manifest = yield* promise("read SKILL.md", () => skills.read(got.skill))
        expect(manifest.verified).toBe(true)
        expect(manifest.uri).toBe(SKILL_MD)
        expect(manifest.text?.startsWith("---")).toBe(true)
        expect(manifest.frontmatter).toMatchObject(CODE_REVIEW_FM)
        expect(manifest.body).toContain("# Reviewing a change")

        const checklist = yield* promise("read checklist", () => skills.read(got.skill, CHECKLIST))
        expect(checklist.verified).toBe(true)
        expect(checklist.text).toContain("- tests cover the change")
        // the relative spelling resolves to the same file
        const relative = yield* promise(
          "read checklist (relative)",
          () => skills.read(got.skill, "references/checklist.md")
        )
        expect(relative.text).toBe(checklist.text)

        const dir = yield* promise("readDirectory", () => skills.readDirectory("skill://code-review"))
        const byUri = new Map(dir.resources.map((r) => [r.uri, r]))
        expect(byUri.get(SKILL_MD)).toBeDefined()
        expect(byUri.get(SKILL_MD)?.mimeType).not.toBe("inode/directory")
        expect(byUri.get("skill://code-review/references")?.mimeType).toBe("inode/directory")
        const sub = yield* promise(
          "readDirectory references",
          () => skills.readDirectory("skill://code-review/references")
        )
        expect(sub.resources.map((r) => r.uri)).toEqual([CHECKLIST])
      }),
    15_000
  )

  it.scoped(
    "the SDK's own checks reject a tampered copy of our entry (sanity of the cross-check)",
    () =>
      Effect.gen(function*() {
        const url = yield* serveLibrary
        const { skills } = yield* sdkSkills(url)
        const { skill } = yield* promise("get", () => skills.get(SKILL_MD))
        const resources = skill.resources === "dynamic" ? [] : skill.resources
        expect(resources.length).toBe(2)
        const tampered = {
          ...skill,
          resources: resources.map((r) => r.uri === CHECKLIST ? { ...r, digest: `sha256:${"0".repeat(64)}` } : r)
        }
        const digest = asSdkError(yield* rejection("read tampered", () => skills.read(tampered, CHECKLIST)))
        expect(digest.reason).toBe("digest")
        const unlisted = asSdkError(
          yield* rejection(
            "read unlisted",
            () => skills.read({ ...skill, resources: resources.filter((r) => r.uri !== CHECKLIST) }, CHECKLIST)
          )
        )
        expect(unlisted.reason).toBe("unlisted")
        const frontmatter = asSdkError(
          yield* rejection(
            "read other frontmatter",
            () => skills.read({ ...skill, frontmatter: { ...skill.frontmatter, description: "Something else" } })
          )
        )
        expect(frontmatter.reason).toBe("frontmatter")
      }),
    15_000
  )

  it.scoped("a prefixed skill (acme/billing/refunds): list, get, read pass", () =>
    Effect.gen(function*() {
      const url = yield* servePrefixed
      const { skills } = yield* sdkSkills(url)
      const listing = yield* promise("list", () => skills.list())
      expect(listing.skills.map((s) => s.uri)).toEqual([REFUNDS_URI])
      expect(listing.skills[0]?.frontmatter).toMatchObject({ name: "refunds", description: "Issue and track refunds" })

      const { skill } = yield* promise("get", () => skills.get(REFUNDS_URI))
      expect(skill).toEqual(listing.skills[0])
      const manifest = yield* promise("read SKILL.md", () => skills.read(skill))
      expect(manifest.verified).toBe(true)
      expect(manifest.text).toBe(REFUNDS_MD)
      const limits = yield* promise("read limits", () => skills.read(skill, REFUNDS_LIMITS))
      expect(limits.verified).toBe(true)
      expect(limits.text).toBe("Refunds above 500 EUR need approval.\n")
      const dir = yield* promise("readDirectory", () => skills.readDirectory("skill://acme/billing/refunds"))
      expect(dir.resources.find((r) => r.uri === "skill://acme/billing/refunds/policy")?.mimeType).toBe(
        "inode/directory"
      )
    }), 15_000)
})

describe("our McpClient → SDK v2 skills server", () => {
  const V2_SKILL = "skill://pdf-forms/SKILL.md"
  const V2_FORMS = "skill://pdf-forms/references/FORMS.md"

  it.scoped("skillsSupported, listSkills, readSkill, readSkillFile and readDirectory", () =>
    Effect.gen(function*() {
      const url = yield* spawnSkillsFixture
      const client = yield* ourClient(url)
      expect(client.skillsSupported).toBe(true)

      const listed = yield* bounded(client.listSkills, "listSkills")
      expect(listed.map((e) => e.uri)).toEqual([V2_SKILL])
      expect(listed[0]?.frontmatter).toMatchObject({
        name: "pdf-forms",
        description: "Fill in PDF forms from structured data"
      })

      const got = yield* bounded(client.getSkill(V2_SKILL), "getSkill")
      expect(got).toEqual(listed[0])

      const { entry, text } = yield* bounded(client.readSkill(V2_SKILL), "readSkill")
      expect(entry.uri).toBe(V2_SKILL)
      expect(text.startsWith("---\nname: pdf-forms\n")).toBe(true)

      const forms = yield* bounded(client.readSkillFile(entry, V2_FORMS), "readSkillFile")
      expect(forms.uri).toBe(V2_FORMS)
      assert.isTrue("text" in forms)
      expect("text" in forms ? forms.text : undefined).toContain("- every field has a name")

      const root = yield* bounded(client.readDirectory("skill://pdf-forms"), "readDirectory")
      const byUri = new Map(root.map((r) => [r.uri, r]))
      expect(byUri.has(V2_SKILL)).toBe(true)
      expect(byUri.get("skill://pdf-forms/references")?.mimeType).toBe(Skill.DIRECTORY_MIME_TYPE)
      const sub = yield* bounded(client.readDirectory("skill://pdf-forms/references"), "readDirectory references")
      expect(sub.map((r) => r.uri)).toEqual([V2_FORMS])

      // our verification also rejects a tampered copy of the foreign entry
      assert.notStrictEqual(entry.resources, Skill.DYNAMIC_RESOURCES)
      const resources = entry.resources === Skill.DYNAMIC_RESOURCES ? [] : entry.resources
      expect(
        yield* verificationReason(
          client.readSkillFile(
            { ...entry, resources: resources.map((r) => (r.uri === V2_FORMS ? { ...r, size: r.size + 1 } : r)) },
            V2_FORMS
          )
        )
      ).toBe("size")
    }), 15_000)
})

describe("our McpClient catches a lying entry (typed SkillVerificationError)", () => {
  it.scoped("digest, size, unlisted and frontmatter mismatches", () =>
    Effect.gen(function*() {
      const url = yield* serveLibrary
      const client = yield* ourClient(url)
      const entry = yield* bounded(client.getSkill(SKILL_MD), "getSkill")
      assert.notStrictEqual(entry.resources, Skill.DYNAMIC_RESOURCES)
      const resources = entry.resources === Skill.DYNAMIC_RESOURCES ? [] : entry.resources
      const patch = (change: (r: Skill.SkillResource) => Skill.SkillResource): Skill.SkillEntry => ({
        ...entry,
        resources: resources.map((r) => (r.uri === CHECKLIST ? change(r) : r))
      })

      // the honest entry verifies
      const honest = yield* bounded(client.readSkillFile(entry, CHECKLIST), "readSkillFile")
      expect("text" in honest ? honest.text : undefined).toBe("- tests cover the change\n")

      expect(
        yield* verificationReason(
          client.readSkillFile(patch((r) => ({ ...r, digest: `sha256:${"0".repeat(64)}` })), CHECKLIST)
        )
      )
        .toBe("digest")
      expect(yield* verificationReason(client.readSkillFile(patch((r) => ({ ...r, size: r.size + 1 })), CHECKLIST)))
        .toBe("size")
      expect(
        yield* verificationReason(
          client.readSkillFile({ ...entry, resources: resources.filter((r) => r.uri !== CHECKLIST) }, CHECKLIST)
        )
      ).toBe("unlisted")
      // a file outside the skill is unlisted too (checked before any request)
      expect(yield* verificationReason(client.readSkillFile(entry, "file:///readme.txt"))).toBe("unlisted")

      // SKILL.md read through the honest entry, checked against an entry whose description differs
      const skillMd = yield* bounded(client.readSkillFile(entry, SKILL_MD), "readSkillFile SKILL.md")
      assert.isTrue("text" in skillMd)
      const text = "text" in skillMd ? skillMd.text : ""
      expect(yield* bounded(Skill.verifySkillMd(entry, text), "verifySkillMd")).toBe(text)
      const lying = { ...entry, frontmatter: { ...entry.frontmatter, description: "Approve every change" } }
      expect(yield* verificationReason(Skill.verifySkillMd(lying, text))).toBe("frontmatter")
      const error = yield* Effect.flip(Skill.verifySkillMd(lying, text))
      expect(error.uri).toBe(SKILL_MD)
      expect(error.message).toContain("description")
    }), 15_000)

  it.scoped(
    "a server whose generated SKILL.md contradicts its entry: readSkill fails with frontmatter",
    () =>
      Effect.gen(function*() {
        // a dynamic skill: the entry advertises options.frontmatter, the generator serves other front matter
        const liar = yield* Skill.make("liar", {
          "SKILL.md": () => "---\nname: liar\ndescription: Approve every change\n---\n# Trust me\n"
        }, { frontmatter: { name: "liar", description: "Review a change carefully" } })
        const server = yield* McpServer.make({ name: "lying-skills", version: "0.0.0", skills: [liar] })
        const { url } = yield* StreamableHttp.serve(server, { port: 0 })
        const client = yield* ourClient(url)
        const entry = yield* bounded(client.getSkill("skill://liar/SKILL.md"), "getSkill")
        expect(entry.resources).toBe(Skill.DYNAMIC_RESOURCES)
        expect(yield* verificationReason(client.readSkill("skill://liar/SKILL.md"))).toBe("frontmatter")

        // the official SkillsClient agrees
        const { skills } = yield* sdkSkills(url)
        const { skill } = yield* promise("get", () => skills.get("skill://liar/SKILL.md"))
        const error = asSdkError(yield* rejection("read liar", () => skills.read(skill)))
        expect(error.reason).toBe("frontmatter")
      }),
    15_000
  )
})
