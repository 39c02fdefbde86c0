/**
 * Serving skills: directory reads with paging, stale cursors of skills/list and directory reads,
 * live addSkill (replace at the same path) / removeSkill with a resources list change to listeners.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { InProcess, McpClient, McpServer, Skill } from "presa-mcp"
import { asArray, type Conn, connect, ERAS, get, modernMeta, type Reply } from "./support/Wire.js"

// The Skills extension's methods are not in the core revisions' JSON Schemas, so these calls are
// not cross-checked against them (the conformance suite's skills scenarios check the extension).
let nextId = 1000
const call = (conn: Conn, method: string, params: Record<string, unknown> = {}): Effect.Effect<Reply> =>
  Effect.map(
    McpServer.dispatch(conn.server, {
      jsonrpc: "2.0",
      id: nextId++,
      method,
      params: conn.session === undefined ? { ...params, _meta: modernMeta() } : params
    }, conn.session === undefined ? {} : { session: conn.session }),
    (reply) => Option.getOrThrow(reply)
  )
const resultOf = (r: Reply): Record<string, unknown> => {
  const result = get(r.message, "result")
  if (typeof result !== "object" || result === null) throw new Error(`expected a result: ${JSON.stringify(r.message)}`)
  return Object.fromEntries(Object.entries(result))
}
const errorOf = (r: Reply): { readonly code: unknown } => ({ code: get(r.message, "error", "code") })

const skillMd = (name: string, description = "d") => `---\nname: ${name}\ndescription: ${description}\n---\nbody\n`

const makeSkill = (name: string, files: number, description?: string) =>
  Skill.make(name, {
    "SKILL.md": skillMd(name, description),
    ...Object.fromEntries(Array.from({ length: files }, (_, i) => [`docs/f${i}.md`, `file ${i}\n`]))
  })

describe.each(ERAS)("skills served (%s)", (rev) => {
  it.effect("directory reads are paged; a cursor from before a change is -32602", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "s",
        version: "1",
        pageSize: 2,
        skills: [yield* makeSkill("big", 5)]
      })
      const conn = yield* connect(server, rev)
      const first = resultOf(yield* call(conn, "resources/directory/read", { uri: "skill://big/docs" }))
      expect(asArray(first.resources)).toHaveLength(2)
      const uris: Array<unknown> = asArray(first.resources).map((r) => get(r, "uri"))
      let cursor = first.nextCursor
      for (let i = 0; i < 5 && cursor !== undefined; i++) {
        const page = resultOf(yield* call(conn, "resources/directory/read", { uri: "skill://big/docs", cursor }))
        uris.push(...asArray(page.resources).map((r) => get(r, "uri")))
        cursor = page.nextCursor
      }
      expect(uris).toEqual([0, 1, 2, 3, 4].map((i) => `skill://big/docs/f${i}.md`))
      const listed = resultOf(yield* call(conn, "skills/list"))
      yield* McpServer.addSkill(server, yield* makeSkill("other", 0))
      yield* McpServer.addSkill(server, yield* makeSkill("third", 0))
      const stale = resultOf(yield* call(conn, "skills/list"))
      assert.isString(stale.nextCursor)
      const staleDir = errorOf(
        yield* call(conn, "resources/directory/read", { uri: "skill://big/docs", cursor: first.nextCursor })
      )
      assert.strictEqual(staleDir.code, -32602)
      expect(asArray(listed.skills)).toHaveLength(1)
      const oldCursor = stale.nextCursor
      yield* McpServer.removeSkill(server, "skill://third/SKILL.md")
      assert.strictEqual(errorOf(yield* call(conn, "skills/list", { cursor: oldCursor })).code, -32602)
    }))

  it.effect("addSkill replaces a skill at the same path; removeSkill takes its files away", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "s",
        version: "1",
        skills: [yield* makeSkill("live", 1, "first"), yield* makeSkill("keep", 0)]
      })
      const conn = yield* connect(server, rev)
      yield* McpServer.addSkill(server, yield* makeSkill("live", 1, "second"))
      const got = resultOf(yield* call(conn, "skills/get", { uri: "skill://live/SKILL.md" }))
      assert.strictEqual(get(got, "skill", "frontmatter", "description"), "second")
      expect(asArray(resultOf(yield* call(conn, "skills/list")).skills)).toHaveLength(2)
      yield* McpServer.removeSkill(server, "skill://live/SKILL.md")
      assert.strictEqual(errorOf(yield* call(conn, "skills/get", { uri: "skill://live/SKILL.md" })).code, -32602)
      assert.strictEqual(errorOf(yield* call(conn, "resources/read", { uri: "skill://live/docs/f0.md" })).code, -32602)
      // with no skill left the extension is no longer declared: its methods are unknown (-32601)
      yield* McpServer.removeSkill(server, "skill://keep/SKILL.md")
      assert.strictEqual(errorOf(yield* call(conn, "skills/list")).code, -32601)
    }))
})

describe("live skills and listeners", () => {
  it.scoped("a listening modern client gets a resources list change when a skill is added", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "s",
        version: "1",
        listChanged: true,
        skills: [yield* makeSkill("first", 0)]
      })
      const client = yield* McpClient.connect(yield* InProcess.client(server))
      const { acknowledged, notifications } = yield* client.listen({ resourcesListChanged: true })
      expect(acknowledged).toEqual({ resourcesListChanged: true })
      const first = yield* notifications.pipe(Stream.take(1), Stream.runCollect, Effect.fork)
      yield* McpServer.addSkill(server, yield* makeSkill("second", 0))
      const got = yield* Fiber.join(first).pipe(Effect.timeout("5 seconds"))
      expect([...got].map((n) => n.method)).toEqual(["notifications/resources/list_changed"])
      expect((yield* client.listSkills).map((s) => s.uri)).toEqual([
        "skill://first/SKILL.md",
        "skill://second/SKILL.md"
      ])
    }))
})
