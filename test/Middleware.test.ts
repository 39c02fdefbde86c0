/**
 * Middleware (order, short-circuit, context enrichment, rate limit with TestClock) and per-caller
 * visibility (hidden definitions absent from lists and unknown when named; paging after filtering),
 * in both eras, through `McpServer.dispatch` with every reply cross-checked against the spec.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/TestClock"
import {
  Content,
  InProcess,
  McpClient,
  McpServer,
  Middleware,
  Prompt,
  RequestContext,
  Resource,
  Task,
  Tool
} from "presa-mcp"
import { asArray, connect, ERAS, errorOf, get, KEY, resultOf, textAt } from "./support/Wire.js"

class CurrentUser extends Context.Tag("test/CurrentUser")<CurrentUser, { readonly name: string }>() {}
class Db extends Context.Tag("test/Db")<Db, { readonly get: (key: string) => string }>() {}

const names = (u: unknown): ReadonlyArray<unknown> => asArray(u).map((t) => get(t, "name"))

describe.each(ERAS)("middleware (%s)", (rev) => {
  it.effect("run in the order given (first is outermost), on list methods too", () =>
    Effect.gen(function*() {
      const trace = yield* Ref.make<ReadonlyArray<string>>([])
      const mark = (label: string): Middleware.Middleware => (req, next) =>
        Ref.update(trace, (t) => [...t, `${label}>${req.method}`]).pipe(
          Effect.zipRight(next),
          Effect.tap(() => Ref.update(trace, (t) => [...t, `<${label}`]))
        )
      const server = yield* McpServer.make({
        name: "mw",
        version: "1",
        tools: [Tool.fromJsonSchema({ name: "echo", handler: () => "hi" })],
        middleware: [mark("a"), mark("b")]
      })
      const conn = yield* connect(server, rev)
      yield* Ref.set(trace, [])
      yield* conn.call("tools/list")
      expect(yield* Ref.get(trace)).toEqual(["a>tools/list", "b>tools/list", "<b", "<a"])
      yield* Ref.set(trace, [])
      assert.strictEqual(textAt(yield* conn.call("tools/call", { name: "echo" })), "hi")
      expect(yield* Ref.get(trace)).toEqual(["a>tools/call", "b>tools/call", "<b", "<a"])
    }))

  it.effect("short-circuit with a result or an McpError; the handler does not run", () =>
    Effect.gen(function*() {
      const ran = yield* Ref.make(0)
      const server = yield* McpServer.make({
        name: "mw",
        version: "1",
        tools: [Tool.fromJsonSchema({ name: "echo", handler: () => Effect.as(Ref.update(ran, (n) => n + 1), "hi") })],
        middleware: [(req, next) =>
          req.method === "tools/call" && get(req.params, "arguments", "deny") === true
            ? Effect.fail(McpServer.McpError.invalidParams("denied by policy", { policy: "deny" }))
            : req.method === "tools/call" && get(req.params, "arguments", "cached") === true
            ? Effect.succeed({ content: [Content.text("from cache")] })
            : next]
      })
      const conn = yield* connect(server, rev)
      const denied = errorOf(yield* conn.call("tools/call", { name: "echo", arguments: { deny: true } }))
      assert.strictEqual(denied.code, -32602)
      assert.strictEqual(denied.message, "denied by policy")
      expect(denied.data).toEqual({ policy: "deny" })
      assert.strictEqual(
        textAt(yield* conn.call("tools/call", { name: "echo", arguments: { cached: true } })),
        "from cache"
      )
      assert.strictEqual(yield* Ref.get(ran), 0)
      assert.strictEqual(textAt(yield* conn.call("tools/call", { name: "echo", arguments: {} })), "hi")
      assert.strictEqual(yield* Ref.get(ran), 1)
    }))

  it.effect("enriches the context: a service it provides is seen by the handler (typed)", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "mw",
        version: "1",
        tools: [
          Tool.fromJsonSchema({ name: "whoami", handler: () => Effect.map(CurrentUser, (u) => u.name) }),
          Tool.fromJsonSchema({ name: "lookup", handler: () => Effect.map(Db, (d) => d.get("k")) })
        ],
        middleware: [
          Middleware.provide(CurrentUser, (req) => Effect.succeed({ name: `user-of-${req.ctx.era}` })),
          // The general form: `next` annotated with what the middleware provides.
          Middleware.make((req, next: Middleware.Next<Db>) =>
            Effect.provideService(next, Db, { get: (key: string) => `${req.method}:${key}` })
          )
        ]
      })
      const conn = yield* connect(server, rev)
      assert.strictEqual(
        textAt(yield* conn.call("tools/call", { name: "whoami" })),
        `user-of-${rev === "2026-07-28" ? "modern" : "legacy"}`
      )
      assert.strictEqual(textAt(yield* conn.call("tools/call", { name: "lookup" })), "tools/call:k")
    }))

  it.effect("a service from the app's Layer reaches handlers of every kind; a middleware's wins over it", () =>
    Effect.gen(function*() {
      const db = (name: string) => Layer.succeed(Db, { get: (key: string) => `${name}:${key}` })
      const serverLayer = McpServer.layer({
        name: "mw",
        version: "1",
        tools: [
          Tool.fromJsonSchema({ name: "lookup", handler: (args) => Effect.map(Db, (d) => d.get(String(args.key))) })
        ],
        resources: [Resource.make({ uri: "x://a", name: "a", handler: () => Effect.map(Db, (d) => d.get("a")) })],
        prompts: [Prompt.make({ name: "p", handler: () => Effect.map(Db, (d) => d.get("p")) })],
        middleware: [
          Middleware.provide(CurrentUser, () => Effect.map(Db, (d) => ({ name: d.get("user") })))
        ]
      })
      const server = yield* Effect.provide(McpServer.McpServer, Layer.provide(serverLayer, db("app")))
      const conn = yield* connect(server, rev)
      assert.strictEqual(textAt(yield* conn.call("tools/call", { name: "lookup", arguments: { key: "k" } })), "app:k")
      assert.strictEqual(
        get(resultOf(yield* conn.call("resources/read", { uri: "x://a" })), "contents", 0, "text"),
        "app:a"
      )
      assert.strictEqual(
        get(resultOf(yield* conn.call("prompts/get", { name: "p" })), "messages", 0, "content", "text"),
        "app:p"
      )
      // A middleware providing Db for one request wins over the captured environment.
      const overriding = yield* McpServer.make({
        name: "mw",
        version: "1",
        tools: [Tool.fromJsonSchema({ name: "lookup", handler: () => Effect.map(Db, (d) => d.get("k")) })],
        middleware: [Middleware.provide(Db, () => Effect.succeed({ get: (key: string) => `request:${key}` }))]
      }).pipe(Effect.provide(db("app")))
      const conn2 = yield* connect(overriding, rev)
      assert.strictEqual(textAt(yield* conn2.call("tools/call", { name: "lookup" })), "request:k")
    }))

  it.effect("the captured environment is a fallback: the request's span stays the handler's parent", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "mw",
        version: "1",
        tools: [Tool.fromJsonSchema({
          name: "span",
          handler: () => Effect.zipWith(Db, Effect.orDie(Effect.currentSpan), (d, span) => d.get(span.name))
        })]
      }).pipe(Effect.withSpan("startup"), Effect.provideService(Db, { get: (key: string) => `db:${key}` }))
      const conn = yield* connect(server, rev)
      assert.strictEqual(textAt(yield* conn.call("tools/call", { name: "span" })), "db:tools/call span") // the span is named `{mcp.method.name} {target}`
    }))

  it.effect("a tool added live sees the add call's environment and the middleware's services", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "mw",
        version: "1",
        tools: [Tool.fromJsonSchema({ name: "whoami", handler: () => Effect.map(CurrentUser, (u) => u.name) })],
        middleware: [Middleware.provide(CurrentUser, () => Effect.succeed({ name: "ann" }))]
      })
      yield* McpServer.addTool(
        server,
        Tool.fromJsonSchema({ name: "both", handler: () => Effect.zipWith(CurrentUser, Db, (u, d) => d.get(u.name)) })
      ).pipe(Effect.provideService(Db, { get: (key: string) => `added:${key}` }))
      const conn = yield* connect(server, rev)
      assert.strictEqual(textAt(yield* conn.call("tools/call", { name: "both" })), "added:ann")
      assert.strictEqual(textAt(yield* conn.call("tools/call", { name: "whoami" })), "ann")
    }))

  it.effect("rate limit: the bucket empties, answers retryAfterMs, and recovers as the clock moves", () =>
    Effect.gen(function*() {
      const limit = yield* Middleware.rateLimit({ capacity: 2, refillPerSecond: 1 })
      const server = yield* McpServer.make({
        name: "mw",
        version: "1",
        tools: [Tool.fromJsonSchema({ name: "echo", handler: () => "ok" })],
        middleware: [limit]
      })
      const conn = yield* connect(server, rev)
      assert.strictEqual(textAt(yield* conn.call("tools/call", { name: "echo" })), "ok")
      assert.strictEqual(textAt(yield* conn.call("tools/call", { name: "echo" })), "ok")
      const limited = errorOf(yield* conn.call("tools/call", { name: "echo" }))
      assert.strictEqual(limited.code, Middleware.RATE_LIMITED)
      expect(limited.data).toEqual({ retryAfterMs: 1000 })
      yield* TestClock.adjust("500 millis")
      expect(errorOf(yield* conn.call("tools/call", { name: "echo" })).data).toEqual({ retryAfterMs: 500 })
      yield* TestClock.adjust("500 millis")
      assert.strictEqual(textAt(yield* conn.call("tools/call", { name: "echo" })), "ok")
    }))
})

describe("middleware and tasks (2026-07-28)", () => {
  it.effect("a task's handler runs on with the captured environment and the middleware's services", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "mw",
        version: "1",
        tasks: {},
        tools: [Tool.fromJsonSchema({
          name: "report",
          task: "required",
          handler: () => Effect.zipWith(CurrentUser, Db, (u, d) => d.get(u.name))
        })],
        middleware: [Middleware.provide(CurrentUser, () => Effect.succeed({ name: "ann" }))]
      }).pipe(Effect.provideService(Db, { get: (key: string) => `db:${key}` }))
      const conn = yield* connect(server, "2026-07-28")
      const meta = { [KEY.clientCapabilities]: { extensions: { [Task.EXTENSION_ID]: {} } } }
      const created = resultOf(yield* conn.call("tools/call", { name: "report" }, { meta }))
      assert.strictEqual(created.resultType, "task")
      for (let i = 0; i < 1000; i++) {
        const task = resultOf(yield* conn.call("tasks/get", { taskId: created.taskId }, { meta }))
        if (task.status !== "working") {
          assert.strictEqual(task.status, "completed")
          assert.strictEqual(get(task, "result", "content", 0, "text"), "db:ann")
          return
        }
        yield* Effect.yieldNow()
      }
      assert.fail("the task never finished")
    }))
})

const adminOnly = (ctx: RequestContext.RequestContextShape) => ctx.clientInfo?.name === "admin"

describe.each(ERAS)("visibility (%s)", (rev) => {
  it.effect("a hidden tool, prompt, resource and template are absent from lists and unknown when named", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "vis",
        version: "1",
        tools: [
          Tool.fromJsonSchema({ name: "public", handler: () => "p" }),
          Tool.fromJsonSchema({ name: "secret", visible: adminOnly, handler: () => "s" })
        ],
        prompts: [Prompt.make({ name: "hidden", visible: () => Effect.succeed(false), handler: () => "x" })],
        resources: [Resource.make({ uri: "x://hidden", name: "hidden", visible: () => false, handler: () => "x" })],
        resourceTemplates: [
          Resource.template({ uriTemplate: "y://{id}", name: "t", visible: () => false, handler: () => "y" })
        ]
      })
      const conn = yield* connect(server, rev)
      expect(names(resultOf(yield* conn.call("tools/list")).tools)).toEqual(["public"])
      const unknown = errorOf(yield* conn.call("tools/call", { name: "secret" }))
      assert.strictEqual(unknown.code, -32602)
      assert.strictEqual(unknown.message, "Unknown tool: secret")
      expect(resultOf(yield* conn.call("prompts/list")).prompts).toEqual([])
      assert.strictEqual(errorOf(yield* conn.call("prompts/get", { name: "hidden" })).message, "Unknown prompt: hidden")
      expect(resultOf(yield* conn.call("resources/list")).resources).toEqual([])
      expect(resultOf(yield* conn.call("resources/templates/list")).resourceTemplates).toEqual([])
      assert.strictEqual(
        errorOf(yield* conn.call("resources/read", { uri: "x://hidden" })).message,
        "Resource not found"
      )
      assert.strictEqual(errorOf(yield* conn.call("resources/read", { uri: "y://1" })).message, "Resource not found")
    }))

  it.effect("an Effect predicate reads the request as the RequestContext service; a throwing one hides", () =>
    Effect.gen(function*() {
      const methodIs = (method: string) =>
        Effect.map(
          Effect.serviceOption(RequestContext.RequestContext),
          (c) => c._tag === "Some" && c.value.method === method
        )
      const server = yield* McpServer.make({
        name: "vis",
        version: "1",
        tools: [
          Tool.fromJsonSchema({ name: "listed", visible: () => methodIs("tools/list"), handler: () => "l" }),
          Tool.fromJsonSchema({ name: "called", visible: () => methodIs("tools/call"), handler: () => "c" }),
          Tool.fromJsonSchema({
            name: "throws",
            visible: () => {
              throw new Error("predicate bug")
            },
            handler: () => "t"
          })
        ]
      })
      const conn = yield* connect(server, rev)
      expect(names(resultOf(yield* conn.call("tools/list")).tools)).toEqual(["listed"])
      assert.strictEqual(textAt(yield* conn.call("tools/call", { name: "called" })), "c")
      assert.strictEqual(errorOf(yield* conn.call("tools/call", { name: "throws" })).code, -32602)
    }))

  it.effect("pages of a 25-tool list with 10 hidden are cut after filtering and stay consistent", () =>
    Effect.gen(function*() {
      const tools = Array.from(
        { length: 25 },
        (_, i) =>
          Tool.fromJsonSchema({
            name: `t${String(i).padStart(2, "0")}`,
            visible: () => i % 5 >= 2,
            handler: () => "ok"
          })
      )
      const server = yield* McpServer.make({ name: "vis", version: "1", tools, pageSize: 10 })
      const conn = yield* connect(server, rev)
      const first = resultOf(yield* conn.call("tools/list"))
      expect(asArray(first.tools)).toHaveLength(10)
      const second = resultOf(yield* conn.call("tools/list", { cursor: first.nextCursor }))
      expect(asArray(second.tools)).toHaveLength(5)
      assert.isUndefined(second.nextCursor)
      const all = [...names(first.tools), ...names(second.tools)]
      expect(all).toEqual(tools.map((t, i) => (i % 5 >= 2 ? t.name : undefined)).filter((n) => n !== undefined))
    }))
})

describe("visibility per caller, through the client", () => {
  it.scoped("the admin client sees and calls the secret tool; another client does not", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({
        name: "vis",
        version: "1",
        tools: [
          Tool.fromJsonSchema({ name: "public", handler: () => "p" }),
          Tool.fromJsonSchema({ name: "secret", visible: adminOnly, handler: () => "s" })
        ]
      })
      const admin = yield* McpClient.connect(yield* InProcess.client(server), { name: "admin" })
      const other = yield* McpClient.connect(yield* InProcess.client(server), { name: "other" })
      expect((yield* admin.listAllTools).map((t) => t.name)).toEqual(["public", "secret"])
      expect((yield* other.listAllTools).map((t) => t.name)).toEqual(["public"])
      assert.strictEqual(Content.textOf(yield* admin.callTool("secret")), "s")
      const e = yield* Effect.flip(other.callTool("secret"))
      assert.strictEqual(e._tag === "McpError" ? e.code : 0, -32602)
    }))
})
