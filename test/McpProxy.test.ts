/**
 * `McpProxy`: one server in front of several backends (protocol.md §25; reference-features A.24, C.3).
 *
 * The shared fixture fronts four backends, reached by a client connected to the proxy in process:
 *
 * - `mem`: our server in process (modern), with `listChanged`, logging, progress, an elicitation,
 *   completions, a static and a dynamic skill;
 * - `v1`: the official SDK v1 server over stdio (legacy), spawned with `node --import tsx`;
 * - `web`: our server over Streamable HTTP (modern), without `listChanged`, with a slow tool;
 * - `liar`: an in-process server behind a client whose `skills/list` lies about one skill's digest.
 *
 * Then: collisions at start, a backend killed mid-run (stdio closed; a backend whose calls fail;
 * health checks). Live clock; every wait is bounded.
 */
import { assert, describe, expect, it, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Content, InProcess, Input, JsonRpc, McpClient, McpServer, Prompt, Resource, Skill, Tool } from "presa-mcp"
import * as McpProxy from "../src/McpProxy.js"
import type * as McpSchema from "../src/McpSchema.js"
import * as Stdio from "../src/transport/Stdio.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import { mortal } from "./support/Mortal.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const SDK_V1_SERVER = Path.join(ROOT, "test", "fixtures", "sdk-v1-server.ts")
const WAIT: Duration.DurationInput = "15 seconds"

const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | Error, R> =>
  Effect.timeoutFail(effect, { duration: WAIT, onTimeout: () => new Error(`timed out after ${Duration.format(WAIT)}`) })

/** Retries `check` every 50 ms until it succeeds (bounded). */
const eventually = <A, E, R>(check: Effect.Effect<A, E, R>): Effect.Effect<A, E | Error, R> =>
  bounded(Effect.retry(check, Schedule.spaced("50 millis")))

const texts = (result: McpSchema.CallToolResult): ReadonlyArray<string> =>
  result.content.flatMap((b) => (b.type === "text" ? [b.text] : []))

const contentText = (contents: ReadonlyArray<McpSchema.ResourceContents>): string | undefined => {
  const first = contents[0]
  return first !== undefined && "text" in first ? first.text : undefined
}

const promptText = (result: McpSchema.GetPromptResult): string | undefined => {
  const content = result.messages[0]?.content
  return content !== undefined && content.type === "text" ? content.text : undefined
}

const spawnV1 = Stdio.spawn({
  command: process.execPath,
  args: ["--import", "tsx", SDK_V1_SERVER],
  cwd: ROOT,
  stderr: () => Effect.void
})

// ---------------------------------------------------------------------------------------------
// backends
// ---------------------------------------------------------------------------------------------

const ARGS_SCHEMA = { type: "object", properties: { a: { type: "number" } } }
const NAME_SCHEMA = { type: "object", properties: { name: { type: "string" } }, required: ["name"] }
const people = ["ada", "alan", "grace"]

const memTools = [
  Tool.fromJsonSchema({
    name: "echo",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    handler: ({ text }) => String(text)
  }),
  Tool.fromJsonSchema({
    name: "args",
    description: "Returns its arguments as JSON",
    inputSchema: ARGS_SCHEMA,
    handler: (args) => Content.blocks([Content.text(JSON.stringify(args))])
  }),
  Tool.fromJsonSchema({
    name: "work",
    inputSchema: { type: "object", properties: { item: { type: "string" } } },
    handler: ({ item }, ctx) =>
      Effect.gen(function*() {
        yield* ctx.log("info", `working on ${String(item)}`)
        yield* ctx.progress(1, { total: 2 })
        yield* ctx.progress(2, { total: 2, message: "done" })
        return "worked"
      })
  }),
  Tool.fromJsonSchema({
    name: "fail",
    handler: () => Effect.fail(McpServer.McpError.invalidParams("no such thing", { why: "test" }))
  }),
  Tool.fromJsonSchema({ name: "oops", handler: () => Effect.fail(new Tool.ToolError({ message: "tool broke" })) }),
  Tool.fromJsonSchema({
    name: "ask",
    handler: () =>
      Effect.map(
        Input.elicit("Your name?", NAME_SCHEMA),
        (r) => r.action === "accept" ? `hello ${String(r.content?.name)}` : r.action
      )
  })
]

const hello = Prompt.make({
  name: "hello",
  arguments: [{ name: "who", required: true }],
  handler: ({ who }) => `Hello, ${who}!`,
  complete: { who: (value) => people.filter((p) => p.startsWith(value)) }
})

const note = Resource.make({ uri: "mem://note", name: "note", mimeType: "text/plain", handler: () => "a note" })

const items = Resource.template({
  uriTemplate: "mem://items/{id}",
  name: "item",
  mimeType: "text/plain",
  handler: ({ id }) => (id === "1" ? "item one" : undefined),
  complete: { id: (value) => ["1", "2"].filter((v) => v.startsWith(value)) }
})

const codeReview = Skill.make("code-review", {
  "SKILL.md": "---\nname: code-review\ndescription: Review a change\n---\n# Review\n\nSee references/checklist.md.\n",
  "references/checklist.md": "- tests cover the change\n"
})

const makeMem = Effect.gen(function*() {
  const reads = yield* Ref.make(0)
  const liveNotes = yield* Skill.make("live-notes", {
    "SKILL.md": () =>
      Effect.map(
        Ref.updateAndGet(reads, (n) => n + 1),
        (n) => `---\nname: live-notes\ndescription: Notes generated on each read\n---\nread ${n}\n`
      )
  }, { frontmatter: { name: "live-notes", description: "Notes generated on each read" } })
  return yield* McpServer.make({
    name: "mem",
    version: "1.0.0",
    instructions: "In-memory notes.",
    listChanged: true,
    logging: true,
    tools: memTools,
    prompts: [hello],
    resources: [note],
    resourceTemplates: [items],
    skills: [yield* codeReview, liveNotes]
  })
})

const makeWeb = (interrupted: Deferred.Deferred<void>) =>
  Effect.gen(function*() {
    const deploy = yield* Skill.make("ops/deploy", {
      "SKILL.md": "---\nname: deploy\ndescription: Deploy the app\n---\nRun the deploy.\n"
    })
    return yield* McpServer.make({
      name: "web",
      version: "1.0.0",
      logging: true,
      tools: [
        Tool.fromJsonSchema({
          name: "slow",
          handler: () => Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
        }),
        Tool.fromJsonSchema({
          name: "report",
          handler: (_args, ctx) =>
            Effect.gen(function*() {
              yield* ctx.log("warning", "reporting over http")
              yield* ctx.progress(5, { total: 10 })
              return "reported"
            })
        })
      ],
      resources: [Resource.make({ uri: "web://status", name: "status", handler: () => "green" })],
      skills: [deploy]
    })
  })

const skillMd = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill\n---\n# ${name}\n`
const BAD_DIGEST = `sha256:${"0".repeat(64)}`

/**
 * A client that lies about `bad-skill`'s SKILL.md digest in `skills/list` and `skills/get` (the
 * proxy reads `skills/list` page by page with `request`, so the raw pages lie too).
 */
const lying = (real: McpClient.McpClient): McpClient.McpClient => {
  const tamper = (entry: Skill.SkillEntry): Skill.SkillEntry =>
    entry.uri.includes("bad-skill") && entry.resources !== Skill.DYNAMIC_RESOURCES
      ? {
        ...entry,
        resources: entry.resources.map((r) => (r.uri === entry.uri ? { ...r, digest: BAD_DIGEST } : r))
      }
      : entry
  const tamperPage = (page: JsonRpc.JsonObject): JsonRpc.JsonObject => {
    const skills = page.skills
    if (!Array.isArray(skills)) return page
    return {
      ...page,
      skills: skills.map((u) => {
        const entry = Schema.decodeUnknownEither(Skill.SkillEntry)(u)
        return Either.isRight(entry) ? Schema.encodeSync(Skill.SkillEntry)(tamper(entry.right)) : u
      })
    }
  }
  return {
    ...real,
    request: (method, params, options) =>
      method === Skill.Method.list
        ? Effect.map(real.request(method, params, options), tamperPage)
        : real.request(method, params, options),
    listSkills: Effect.map(real.listSkills, (entries) => entries.map(tamper)),
    getSkill: (uri) => Effect.map(real.getSkill(uri), tamper)
  }
}

const makeLiar = Effect.gen(function*() {
  return yield* McpServer.make({
    name: "liar",
    version: "1.0.0",
    tools: [Tool.fromJsonSchema({ name: "status", handler: () => "fine" })],
    skills: [
      yield* Skill.make("good-skill", { "SKILL.md": skillMd("good-skill") }),
      yield* Skill.make("bad-skill", { "SKILL.md": skillMd("bad-skill"), "notes.md": "notes\n" })
    ]
  })
})

// ---------------------------------------------------------------------------------------------
// the shared fixture
// ---------------------------------------------------------------------------------------------

interface FixtureShape {
  readonly proxy: McpServer.McpServer
  readonly front: McpClient.McpClient
  readonly mem: McpServer.McpServer
  readonly memClient: McpClient.McpClient
  readonly v1Client: McpClient.McpClient
  readonly webInterrupted: Deferred.Deferred<void>
  /** Log lines of the proxy's background work and startup: `LEVEL: message`. */
  readonly logs: () => ReadonlyArray<string>
}

class Fixture extends Context.Tag("test/McpProxy/Fixture")<Fixture, FixtureShape>() {}

const onElicit = () => Effect.succeed({ action: "accept" as const, content: { name: "Ada" } })

const logLines: Array<string> = []
const captureLogger = Logger.make(({ logLevel, message }) => {
  logLines.push(`${logLevel.label}: ${Array.isArray(message) ? message.map(String).join(" ") : String(message)}`)
})

const FixtureLive = Layer.scoped(
  Fixture,
  Effect.gen(function*() {
    const mem = yield* makeMem
    const memClient = yield* McpClient.connect(yield* InProcess.client(mem), McpProxy.inputHandlers)
    const v1Client = yield* McpClient.connect(yield* spawnV1, { ...McpProxy.inputHandlers, requestTimeout: WAIT })
    const webInterrupted = yield* Deferred.make<void>()
    const { url } = yield* StreamableHttp.serve(yield* makeWeb(webInterrupted))
    const webClient = yield* McpClient.connect(yield* StreamableHttp.client({ url }), McpProxy.inputHandlers)
    const liarClient = lying(yield* McpClient.connect(yield* InProcess.client(yield* makeLiar)))
    // URIs unprefixed (`prefixUris: false`): these tests are about the first-served rule for URIs;
    // the prefixed namespace is tested in McpProxyNamespaces.test.ts.
    const proxy = yield* McpProxy.make([
      { prefix: "mem", client: memClient, prefixUris: false },
      { prefix: "v1", client: v1Client, prefixUris: false },
      { prefix: "web", client: webClient, prefixUris: false },
      { prefix: "liar", client: liarClient, prefixUris: false }
    ], { name: "proxy-test", version: "1.0.0" })
    const front = yield* McpClient.connect(yield* InProcess.client(proxy), { onElicit })
    return { proxy, front, mem, memClient, v1Client, webInterrupted, logs: () => [...logLines] }
  }).pipe(bounded)
).pipe(Layer.provide(Logger.replace(Logger.defaultLogger, captureLogger)), Layer.orDie)

layer(FixtureLive, { excludeTestServices: true, timeout: "60 seconds" })("McpProxy over mem, v1, web, liar", (it) => {
  it.effect("lists the union: prefixed tools and prompts, resources, templates and skills under their URIs", () =>
    Effect.gen(function*() {
      const { front, v1Client } = yield* Fixture
      const tools = yield* front.listAllTools
      const names = tools.map((t) => t.name)
      for (const name of ["mem_echo", "mem_work", "mem_ask", "v1_echo", "v1_add", "web_slow", "liar_status"]) {
        expect(names).toContain(name)
      }
      // schemas, annotations and description unchanged
      const [v1Add] = (yield* v1Client.listAllTools).filter((t) => t.name === "add")
      const proxied = tools.find((t) => t.name === "v1_add")
      assert.deepStrictEqual(proxied?.inputSchema, v1Add?.inputSchema)
      assert.deepStrictEqual(proxied?.outputSchema, v1Add?.outputSchema)
      assert.strictEqual(proxied?.description, "Adds two numbers")

      expect((yield* front.listAllPrompts).map((p) => p.name).sort()).toEqual(["mem_hello", "v1_greet"])
      const uris = (yield* front.listAllResources).map((r) => r.uri)
      for (const uri of ["mem://note", "test://greeting", "web://status", "skill://code-review/SKILL.md"]) {
        expect(uris).toContain(uri)
      }
      expect(uris).not.toContain("skill://bad-skill/SKILL.md")
      expect((yield* front.listAllResourceTemplates).map((t) => t.uriTemplate)).toEqual(["mem://items/{id}"])
      assert.strictEqual(front.info.era, "modern")
      expect(front.info.instructions).toContain("mem: In-memory notes.")
    }))

  it.effect("calls, reads, gets and completes through the owning backend", () =>
    Effect.gen(function*() {
      const { front } = yield* Fixture
      expect(texts(yield* front.callTool("mem_echo", { text: "hi" }))).toEqual(["hi"])
      const sum = yield* front.callTool("v1_add", { a: 2, b: 3 })
      assert.deepStrictEqual(sum.structuredContent, { sum: 5 })
      // arguments are forwarded unchanged: an unknown property is not stripped
      expect(texts(yield* front.callTool("mem_args", { a: 1, extra: "kept" }))).toEqual([
        "{\"a\":1,\"extra\":\"kept\"}"
      ])
      assert.strictEqual(contentText((yield* front.readResource("test://greeting")).contents), "hello from v1")
      assert.strictEqual(contentText((yield* front.readResource("mem://items/1")).contents), "item one")
      assert.strictEqual(contentText((yield* front.readResource("web://status")).contents), "green")
      assert.strictEqual(promptText(yield* front.getPrompt("v1_greet", { name: "Ada" })), "Hello, Ada!")
      assert.strictEqual(promptText(yield* front.getPrompt("mem_hello", { who: "Alan" })), "Hello, Alan!")
      expect((yield* front.complete({ type: "ref/prompt", name: "mem_hello" }, "who", "a")).values).toEqual([
        "ada",
        "alan"
      ])
      expect((yield* front.complete({ type: "ref/resource", uri: "mem://items/{id}" }, "id", "")).values).toEqual([
        "1",
        "2"
      ])
    }))

  it.effect("the proxy is an ordinary server: served over Streamable HTTP to a legacy and a modern client", () =>
    Effect.gen(function*() {
      // its own proxy: closing an HTTP listener shuts its server's listen streams down for good
      const { memClient, v1Client } = yield* Fixture
      const proxy = yield* McpProxy.make([{ prefix: "mem", client: memClient, prefixUris: false }, {
        prefix: "v1",
        client: v1Client,
        prefixUris: false
      }])
      const { url } = yield* StreamableHttp.serve(proxy)
      const modern = yield* McpClient.connect(yield* StreamableHttp.client({ url }))
      assert.strictEqual(modern.info.era, "modern")
      expect(texts(yield* modern.callTool("v1_echo", { text: "over http" }))).toEqual(["over http"])
      const legacy = yield* McpClient.connect(yield* StreamableHttp.client({ url }), { versions: ["2025-11-25"] })
      assert.strictEqual(legacy.info.era, "legacy")
      expect(texts(yield* legacy.callTool("mem_echo", { text: "legacy" }))).toEqual(["legacy"])
      assert.strictEqual(contentText((yield* legacy.readResource("mem://note")).contents), "a note")
    }).pipe(Effect.scoped))

  it.effect("forwards progress and log messages at the caller's level (in process and over HTTP)", () =>
    Effect.gen(function*() {
      const { front } = yield* Fixture
      const progress = yield* Ref.make<ReadonlyArray<number>>([])
      const logs = yield* Ref.make<ReadonlyArray<string>>([])
      const options = (logLevel?: McpSchema.LoggingLevel): McpClient.CallOptions => ({
        onProgress: (p) => Ref.update(progress, (a) => [...a, p.progress]),
        onLog: (m) => Ref.update(logs, (a) => [...a, `${m.level} ${String(m.data)}`]),
        ...(logLevel === undefined ? {} : { logLevel })
      })
      expect(texts(yield* front.callTool("mem_work", { item: "milk" }, options("info")))).toEqual(["worked"])
      expect(yield* Ref.get(progress)).toEqual([1, 2])
      expect(yield* Ref.get(logs)).toEqual(["info working on milk"])

      // no level asked ⇒ no log messages; a higher level ⇒ none either
      yield* Ref.set(logs, [])
      yield* front.callTool("mem_work", { item: "eggs" }, options())
      yield* front.callTool("mem_work", { item: "eggs" }, options("error"))
      expect(yield* Ref.get(logs)).toEqual([])

      yield* Ref.set(progress, [])
      expect(texts(yield* front.callTool("web_report", {}, options("info")))).toEqual(["reported"])
      expect(yield* Ref.get(progress)).toEqual([5])
      expect(yield* Ref.get(logs)).toEqual(["warning reporting over http"])
    }))

  it.effect("keeps a backend's error code and data; isError results pass through", () =>
    Effect.gen(function*() {
      const { front, v1Client } = yield* Fixture
      const failed = yield* Effect.flip(front.callTool("mem_fail", {}))
      assert(failed._tag === "McpError")
      assert.strictEqual(failed.code, -32602)
      assert.strictEqual(failed.message, "no such thing")
      assert.deepStrictEqual(failed.data, { why: "test" })

      const oops = yield* front.callTool("mem_oops", {})
      assert.strictEqual(oops.isError, true)
      expect(texts(oops)).toEqual(["tool broke"])

      const missing = yield* Effect.flip(front.readResource("mem://items/9"))
      assert(missing._tag === "McpError")
      assert.strictEqual(missing.code, -32602)
      assert.deepStrictEqual(missing.data, { uri: "mem://items/9" })

      // the legacy SDK server: the proxy answers exactly what the backend answers
      const direct = yield* Effect.either(v1Client.callTool("add", { a: "x", b: 1 }))
      const viaProxy = yield* Effect.either(front.callTool("v1_add", { a: "x", b: 1 }))
      if (Either.isLeft(direct)) {
        assert(Either.isLeft(viaProxy) && viaProxy.left._tag === "McpError" && direct.left._tag === "McpError")
        assert.strictEqual(viaProxy.left.code, direct.left.code)
        assert.strictEqual(viaProxy.left.message, direct.left.message)
        assert.deepStrictEqual(viaProxy.left.data, direct.left.data)
      } else {
        assert(Either.isRight(viaProxy))
        assert.strictEqual(viaProxy.right.isError, direct.right.isError)
        assert.deepStrictEqual(viaProxy.right.content, direct.right.content)
      }
    }))

  it.effect("input_required from a modern backend reaches the caller, and the answer goes back (both eras)", () =>
    Effect.gen(function*() {
      const { front, proxy } = yield* Fixture
      expect(texts(yield* front.callTool("mem_ask", {}))).toEqual(["hello Ada"])

      const legacy = yield* McpClient.connect(yield* InProcess.client(proxy), { versions: ["2025-11-25"], onElicit })
      assert.strictEqual(legacy.info.era, "legacy")
      expect(texts(yield* legacy.callTool("mem_ask", {}))).toEqual(["hello Ada"])

      // a caller without the elicitation capability gets the proxy's -32021
      const plain = yield* McpClient.connect(yield* InProcess.client(proxy))
      const refused = yield* Effect.flip(plain.callTool("mem_ask", {}))
      assert(refused._tag === "McpError")
      assert.strictEqual(refused.code, -32021)
    }).pipe(Effect.scoped))

  it.effect("cancelling a proxied call interrupts the backend's handler (HTTP backend)", () =>
    Effect.gen(function*() {
      const { front, webInterrupted } = yield* Fixture
      const outcome = yield* front.callTool("web_slow", {}).pipe(Effect.timeout("300 millis"), Effect.either)
      assert(Either.isLeft(outcome))
      yield* bounded(Deferred.await(webInterrupted))
    }))

  it.effect("skills: served with the backend's digests; a lying skill is left out (logged), dynamic stays dynamic", () =>
    Effect.gen(function*() {
      const { front, logs, memClient } = yield* Fixture
      const entries = yield* front.listSkills
      expect(entries.map((e) => e.uri).sort()).toEqual([
        "skill://code-review/SKILL.md",
        "skill://good-skill/SKILL.md",
        "skill://live-notes/SKILL.md",
        "skill://ops/deploy/SKILL.md"
      ])
      const backendEntry = (yield* memClient.listSkills).find((e) => e.uri === "skill://code-review/SKILL.md")
      const proxiedEntry = entries.find((e) => e.uri === "skill://code-review/SKILL.md")
      assert.deepStrictEqual(proxiedEntry?.resources, backendEntry?.resources)
      assert.deepStrictEqual(proxiedEntry?.frontmatter, backendEntry?.frontmatter)

      const loaded = yield* front.readSkill("skill://code-review/SKILL.md")
      expect(loaded.text).toContain("# Review")
      const checklist = yield* front.readSkillFile(loaded.entry, "skill://code-review/references/checklist.md")
      assert.strictEqual(contentText([checklist]), "- tests cover the change\n")

      // the lying skill and its files are not served; the rest of that backend is
      const bad = yield* Effect.flip(front.readResource("skill://bad-skill/notes.md"))
      assert(bad._tag === "McpError")
      assert.strictEqual(bad.code, -32602)
      expect(texts(yield* front.callTool("liar_status", {}))).toEqual(["fine"])
      expect(logs().some((l) => l.includes("skill://bad-skill/SKILL.md left out") && l.includes("digest"))).toBe(true)

      // dynamic: each read goes to the backend
      const live = entries.find((e) => e.uri === "skill://live-notes/SKILL.md")
      assert.strictEqual(live?.resources, Skill.DYNAMIC_RESOURCES)
      const first = contentText((yield* front.readResource("skill://live-notes/SKILL.md")).contents)
      const second = contentText((yield* front.readResource("skill://live-notes/SKILL.md")).contents)
      expect(first).toMatch(/^---\nname: live-notes\n/)
      assert.notStrictEqual(first, second)
    }))

  it.effect("a backend's list change reaches a listener on the proxy; a colliding change is left out", () =>
    Effect.gen(function*() {
      const { front, logs, mem } = yield* Fixture
      const subscription = yield* front.listen({ toolsListChanged: true })
      assert.deepStrictEqual(subscription.acknowledged, { toolsListChanged: true })
      yield* McpServer.addTool(mem, Tool.fromJsonSchema({ name: "added", handler: () => "new" }))
      const first = yield* bounded(Stream.runHead(subscription.notifications))
      assert.strictEqual(
        Option.map(first, (n) => n.method).pipe(Option.getOrUndefined),
        "notifications/tools/list_changed"
      )
      yield* eventually(
        Effect.filterOrFail(front.listAllTools, (tools) => tools.some((t) => t.name === "mem_added"))
      )
      expect(texts(yield* front.callTool("mem_added", {}))).toEqual(["new"])

      yield* McpServer.removeTool(mem, "added")
      yield* eventually(
        Effect.filterOrFail(front.listAllTools, (tools) => !tools.some((t) => t.name === "mem_added"))
      )

      // a URI another backend already serves: left out and logged; the first one keeps serving it
      yield* McpServer.addResource(
        mem,
        Resource.make({ uri: "web://status", name: "shadow", handler: () => "shadowed" })
      )
      yield* eventually(
        Effect.filterOrFail(
          Effect.sync(logs),
          (lines) => lines.some((l) => l.includes("resource web://status left out"))
        )
      )
      assert.strictEqual(contentText((yield* front.readResource("web://status")).contents), "green")
    }).pipe(Effect.scoped))
})

// ---------------------------------------------------------------------------------------------
// collisions at start
// ---------------------------------------------------------------------------------------------

describe("McpProxy collisions and prefixes", () => {
  const clientOf = (options: McpServer.Options) =>
    Effect.gen(function*() {
      const server = yield* McpServer.make(options)
      return yield* McpClient.connect(yield* InProcess.client(server))
    })

  it.live("two backends serving the same identities → ProxyError naming all of them", () =>
    Effect.gen(function*() {
      const shared = Resource.make({ uri: "x://same", name: "same", handler: () => "x" })
      const a = yield* clientOf({
        name: "a",
        version: "1",
        tools: [Tool.fromJsonSchema({ name: "b_c", handler: () => "a" })],
        resources: [shared],
        skills: [yield* codeReview]
      })
      const b = yield* clientOf({
        name: "b",
        version: "1",
        tools: [Tool.fromJsonSchema({ name: "c", handler: () => "b" })],
        resources: [shared],
        skills: [yield* codeReview]
      })
      const error = yield* Effect.flip(McpProxy.make([{ prefix: "a", client: a, prefixUris: false }, {
        prefix: "a_b",
        client: b,
        prefixUris: false
      }]))
      assert.strictEqual(error._tag, "ProxyError")
      assert.strictEqual(error.reason, "Collision")
      const named = error.collisions.map((c) => `${c.kind} ${c.name} ${c.backends.join("+")}`)
      expect(named).toContain("tool a_b_c a+a_b")
      expect(named).toContain("resource x://same a+a_b")
      expect(named).toContain("skill skill://code-review/SKILL.md a+a_b")
      expect(error.message).toContain("a_b_c")
    }).pipe(Effect.scoped))

  it.live("invalid or repeated prefixes → ProxyError Prefix", () =>
    Effect.gen(function*() {
      const a = yield* clientOf({
        name: "a",
        version: "1",
        tools: [Tool.fromJsonSchema({ name: "t", handler: () => "a" })]
      })
      const twice = yield* Effect.flip(McpProxy.make([{ prefix: "p", client: a }, { prefix: "p", client: a }]))
      assert.strictEqual(twice.reason, "Prefix")
      const bad = yield* Effect.flip(McpProxy.make([{ prefix: "no spaces", client: a }]))
      assert.strictEqual(bad.reason, "Prefix")
      // the empty prefix is refused next to another backend (alone it serves names unchanged:
      // McpProxyUnprefixed.test.ts)
      const empty = yield* Effect.flip(McpProxy.make([{ prefix: "", client: a }, { prefix: "q", client: a }]))
      assert.strictEqual(empty.reason, "Prefix")
    }).pipe(Effect.scoped))
})

// ---------------------------------------------------------------------------------------------
// dead backends
// ---------------------------------------------------------------------------------------------

describe("McpProxy with a backend that dies", () => {
  it.live("a stdio backend closed mid-run: its entries go, calls to it fail with a JSON-RPC error, the rest serves", () =>
    Effect.gen(function*() {
      const mem = yield* makeMem
      const memClient = yield* McpClient.connect(yield* InProcess.client(mem))
      const v1Scope = yield* Scope.make()
      const v1Client = yield* Scope.extend(
        Effect.flatMap(spawnV1, (transport) => McpClient.connect(transport, { requestTimeout: WAIT })),
        v1Scope
      )
      const proxy = yield* McpProxy.make([{ prefix: "mem", client: memClient, prefixUris: false }, {
        prefix: "v1",
        client: v1Client,
        prefixUris: false
      }])
      const front = yield* McpClient.connect(yield* InProcess.client(proxy))
      expect(texts(yield* front.callTool("v1_echo", { text: "alive" }))).toEqual(["alive"])

      yield* Scope.close(v1Scope, Exit.void)
      const racing = yield* Effect.flip(front.callTool("v1_echo", { text: "dead?" }))
      assert(racing._tag === "McpError")
      if (racing.code === -32603) expect(racing.message).toBe("Backend v1 is unavailable")
      else assert.strictEqual(racing.code, -32602)

      yield* eventually(
        Effect.filterOrFail(front.listAllTools, (tools) => !tools.some((t) => t.name.startsWith("v1_")))
      )
      const after = yield* Effect.flip(front.callTool("v1_echo", { text: "gone" }))
      assert(after._tag === "McpError")
      assert.strictEqual(after.code, -32602)
      expect((yield* front.listAllResources).map((r) => r.uri)).not.toContain("test://greeting")
      expect(texts(yield* front.callTool("mem_echo", { text: "still here" }))).toEqual(["still here"])
    }).pipe(Effect.scoped))

  it.live("a call that finds the backend gone → -32603 naming it; its entries are removed", () =>
    Effect.gen(function*() {
      const alive = yield* Ref.make(true)
      const mem = yield* makeMem
      const real = yield* McpClient.connect(yield* InProcess.client(mem))
      const other = yield* McpClient.connect(yield* InProcess.client(yield* makeLiar))
      const proxy = yield* McpProxy.make([{ prefix: "dead", client: mortal(real, alive) }, {
        prefix: "ok",
        client: other
      }])
      const front = yield* McpClient.connect(yield* InProcess.client(proxy))
      yield* Ref.set(alive, false)
      const failed = yield* Effect.flip(front.callTool("dead_echo", { text: "x" }))
      assert(failed._tag === "McpError")
      assert.strictEqual(failed.code, -32603)
      assert.strictEqual(failed.message, "Backend dead is unavailable")
      const names = (yield* front.listAllTools).map((t) => t.name)
      expect(names.filter((n) => n.startsWith("dead_"))).toEqual([])
      expect(names).toContain("ok_status")
    }).pipe(Effect.scoped))

  it.live("a backend that does not answer in time → -32603 naming it; it keeps serving", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "slowpoke",
        version: "1",
        tools: [
          Tool.fromJsonSchema({ name: "slow", handler: () => Effect.as(Effect.sleep("5 seconds"), "late") }),
          Tool.fromJsonSchema({ name: "quick", handler: () => "quick" })
        ]
      })
      const client = yield* McpClient.connect(yield* InProcess.client(server), { requestTimeout: "200 millis" })
      const proxy = yield* McpProxy.make([{ prefix: "slowpoke", client }])
      const front = yield* McpClient.connect(yield* InProcess.client(proxy))
      const failed = yield* Effect.flip(front.callTool("slowpoke_slow", {}))
      assert(failed._tag === "McpError")
      assert.strictEqual(failed.code, -32603)
      assert.strictEqual(failed.message, "Backend slowpoke did not answer in time")
      expect(texts(yield* front.callTool("slowpoke_quick", {}))).toEqual(["quick"])
    }).pipe(Effect.scoped))

  it.live("pingInterval: a backend that stops answering is removed without any call", () =>
    Effect.gen(function*() {
      const alive = yield* Ref.make(true)
      const real = yield* McpClient.connect(yield* InProcess.client(yield* makeLiar))
      const proxy = yield* McpProxy.make([{ prefix: "p", client: mortal(real, alive) }], {
        pingInterval: "50 millis"
      })
      const front = yield* McpClient.connect(yield* InProcess.client(proxy))
      expect((yield* front.listAllTools).map((t) => t.name)).toEqual(["p_status"])
      yield* Ref.set(alive, false)
      yield* eventually(Effect.filterOrFail(McpServer.capabilities(proxy), (caps) => caps.tools === undefined))
    }).pipe(Effect.scoped))
})
