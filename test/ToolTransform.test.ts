/**
 * Tool transformation (issue #37, point 1): tools derived with `ToolTransform.make` in a `Part` and
 * in a server's own definition Layer (test/fixtures/transform-definitions.ts), seen through
 *
 * 1. our client in-process;
 * 2. the official SDK v2 client (`@modelcontextprotocol/client`) over stdio (the fixture spawned as
 *    a child process) and over Streamable HTTP (127.0.0.1, port 0);
 * 3. the proxy, configured with a declarative `transform` in its `mcpServers` file, in front of the
 *    same fixture spawned over stdio (seen by our client and by the SDK v2 client over HTTP), and
 *    in code (`transform` on a backend, with a computed hidden argument and a wrapper).
 *
 * Every transport runs the same checks: the listed `inputSchema` / `outputSchema` (hidden
 * arguments gone, renames applied to `properties` and `required`, defaults and narrowed schemas),
 * calls with the renamed arguments, hidden arguments filled (the original's handler reports what
 * it received), a caller that sends a hidden argument refused by name, errors naming the caller's
 * arguments, and a wrapper that rewrites the result. Every wait is bounded.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Client as V2Client, StreamableHTTPClientTransport as V2Http } from "@modelcontextprotocol/client"
import { StdioClientTransport as V2Stdio } from "@modelcontextprotocol/client/stdio"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { expectTypeOf } from "vitest"
import * as McpClient from "../src/McpClient.js"
import * as McpProxy from "../src/McpProxy.js"
import * as McpServer from "../src/McpServer.js"
import * as Part from "../src/Part.js"
import * as Tool from "../src/Tool.js"
import * as ToolTransform from "../src/ToolTransform.js"
import * as InProcess from "../src/transport/InProcess.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"
import { search, ServerLive } from "./fixtures/transform-definitions.js"
import { get } from "./support/Wire.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const FIXTURE = Path.join(ROOT, "test", "fixtures", "transform-server.ts")
const NODE_ARGS = ["--import", "tsx"]
const WAIT = "20 seconds"
const MODERN = "2026-07-28"

/** What the checks need from a client: list the tools, call one (results as JSON). */
interface Peer {
  readonly name: string
  readonly listTools: Effect.Effect<ReadonlyArray<unknown>, unknown>
  readonly call: (name: string, args: Record<string, unknown>) => Effect.Effect<unknown, unknown>
}

const bounded = <A, E>(what: string, effect: Effect.Effect<A, E>) =>
  Effect.timeoutFail(effect, { duration: WAIT, onTimeout: () => new Error(`timed out: ${what}`) })

const ours = (client: McpClient.McpClient, name = "ours"): Peer => ({
  name,
  listTools: client.listAllTools,
  call: (tool, args) => client.callTool(tool, args)
})

const v2 = (client: V2Client): Peer => ({
  name: "sdk-v2",
  listTools: Effect.map(Effect.tryPromise(() => client.listTools()), (r) => r.tools),
  call: (name, args) => Effect.tryPromise(() => client.callTool({ name, arguments: args }))
})

const text = (result: unknown): string => String(get(result, "content", 0, "text"))

const toolOf = (tools: ReadonlyArray<unknown>, name: string): unknown => {
  const found = tools.find((t) => get(t, "name") === name)
  assert.isDefined(found, `tool ${name} is listed`)
  return found
}

/** An `isError` result whose text names `mentions` and none of `absent`. */
const refused = (result: unknown, mentions: ReadonlyArray<string>, absent: ReadonlyArray<string> = []) => {
  expect(get(result, "isError")).toBe(true)
  const t = text(result)
  for (const m of mentions) expect(t).toContain(m)
  for (const a of absent) expect(t).not.toContain(a)
}

/** The checks every transport runs against the fixture server (tool names given a prefix for the proxy). */
const fixtureChecks = (peer: Peer, clientName: string) =>
  Effect.gen(function*() {
    const tools = yield* bounded("tools/list", peer.listTools)
    const find = toolOf(tools, "find")
    expect(get(find, "description")).toBe("Finds documents")
    expect(Object.keys(get(find, "inputSchema", "properties") as object).sort()).toEqual(["limit", "query"])
    expect(get(find, "inputSchema", "required")).toEqual(["query"])
    expect(get(find, "inputSchema", "properties", "query")).toEqual({ type: "string", description: "what to look for" })
    expect(get(find, "inputSchema", "properties", "limit")).toEqual({
      type: "integer",
      minimum: 1,
      maximum: 10,
      default: 5
    })
    expect(JSON.stringify(get(find, "inputSchema"))).not.toContain("tenant")

    const record = toolOf(tools, "record")
    expect(get(record, "inputSchema", "properties")).toEqual({ recordId: { type: "string", description: "record id" } })
    expect(get(record, "inputSchema", "required")).toEqual(["recordId"])

    const shout = toolOf(tools, "shout")
    expect(get(shout, "outputSchema", "required")).toEqual(["upper", "tenant"])
    expect(Object.keys(get(shout, "inputSchema", "properties") as object).sort()).toEqual(["limit", "text"])
    expect(get(toolOf(tools, "mine"), "inputSchema", "required")).toEqual(["q", "limit"])

    // renamed arguments, the hidden one filled, the default applied: what the original received
    const call = (name: string, args: Record<string, unknown>) => bounded(`call ${name}`, peer.call(name, args))
    expect(get(yield* call("find", { query: "cats" }), "structuredContent")).toEqual({
      received: { q: "cats", tenant: "acme", limit: 5 }
    })
    expect(get(yield* call("find", { query: "cats", limit: 3 }), "structuredContent", "received", "limit")).toBe(3)
    expect(get(yield* call("record", { recordId: "r1" }), "structuredContent")).toEqual({
      received: { id: "r1", verbose: true }
    })
    // computed per request: from a service and the caller's clientInfo
    expect(get(yield* call("mine", { q: "x", limit: 1 }), "structuredContent", "received", "tenant")).toBe(
      `tenant-of-${clientName}`
    )

    // the caller cannot set a hidden argument
    refused(yield* call("find", { query: "cats", tenant: "evil" }), ["/tenant"])
    refused(yield* call("record", { recordId: "r1", verbose: false }), [
      "Invalid arguments at /verbose",
      "set by the server"
    ])
    // errors name the caller's arguments
    refused(yield* call("find", { query: 42 }), ["/query"])
    refused(yield* call("find", { query: "x", limit: 11 }), ["/limit"])
    refused(yield* call("record", {}), ["recordId"], ["/id"])
    refused(yield* call("record", { id: "r1" }), ["recordId"])

    // the wrapper forwards and rewrites the result
    expect(get(yield* call("shout", { text: "hi", limit: 1 }), "structuredContent")).toEqual({
      upper: "HI",
      tenant: "acme"
    })
  })

const v2Connected = (transport: V2Stdio | V2Http) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const client = new V2Client({ name: "transform-test", version: "0.0.0" }, {
        versionNegotiation: { mode: { pin: MODERN } }
      })
      yield* bounded("connect", Effect.tryPromise(() => client.connect(transport)))
      return client
    }),
    (client) => Effect.promise(() => client.close()).pipe(Effect.ignore)
  )

const fixtureServer = Effect.map(
  Layer.build(ServerLive),
  (context) => Context.get(context, McpServer.McpServer)
)

describe("ToolTransform.inputSchema", () => {
  it("renames and hides in properties, required, dependentRequired and combinators; keeps the input", () => {
    const schema = {
      type: "object",
      properties: { a: { type: "string" }, b: { type: "number" }, c: { type: "boolean" } },
      required: ["a", "b"],
      dependentRequired: { a: ["c"], c: ["b"] },
      anyOf: [{ required: ["a"] }, { required: ["c"], properties: { c: { const: true } } }]
    }
    const copy = structuredClone(schema)
    const out = ToolTransform.inputSchema(schema, {
      a: { name: "alpha" },
      b: { hide: true, value: 1 },
      c: { name: "gamma", description: "flag" }
    })
    expect(out).toEqual({
      type: "object",
      properties: { alpha: { type: "string" }, gamma: { type: "boolean", description: "flag" } },
      required: ["alpha"],
      dependentRequired: { alpha: ["gamma"], gamma: [] },
      anyOf: [{ required: ["alpha"] }, { required: ["gamma"], properties: { gamma: { const: true } } }]
    })
    expect(schema).toEqual(copy)
  })
})

describe("ToolTransform of a Schema.Class tool (root $ref into $defs)", () => {
  it.scoped("the definition is inlined, renamed and hidden; calls decode into the class", () =>
    Effect.gen(function*() {
      class Args extends Schema.Class<Args>("Args")({ q: Schema.String, tenant: Schema.String }) {}
      const original = Tool.make({
        name: "classy",
        parameters: Args,
        handler: (args) => ({ isArgs: args instanceof Args, q: args.q, tenant: args.tenant })
      })
      const derived = ToolTransform.make(original, {
        name: "classy2",
        arguments: { q: { name: "query" }, tenant: { hide: true, value: "t1" } }
      })
      expect(get(derived.inputSchema, "properties")).toEqual({ query: { type: "string" } })
      expect(get(derived.inputSchema, "required")).toEqual(["query"])
      expect(get(derived.inputSchema, "$ref")).toBeUndefined()
      const server = yield* Part.server({ name: "classy", version: "0.0.0" }, [{ tools: [derived] }])
      const client = yield* McpClient.connect(yield* InProcess.client(server))
      expect(get(yield* client.callTool("classy2", { query: "x" }), "structuredContent")).toEqual({
        isArgs: true,
        q: "x",
        tenant: "t1"
      })
      refused(yield* client.callTool("classy2", { q: "x" }), ["query"])
    }))
})

describe("ToolTransform in a Part and a server Layer", () => {
  it.scoped("our client in-process", () =>
    Effect.gen(function*() {
      const server = yield* fixtureServer
      const client = yield* McpClient.connect(yield* InProcess.client(server), { name: "inproc" })
      yield* fixtureChecks(ours(client), "inproc")
    }))

  it.scoped("a Tool.make original's own decode errors name the caller's arguments", () =>
    Effect.gen(function*() {
      // `limit` widened to any number: the JSON Schema check passes 1.5, the original's Int decode refuses it
      const wide = ToolTransform.make(search, {
        name: "wide",
        arguments: {
          q: { name: "query" },
          limit: { name: "max", schema: { type: "number" } },
          tenant: { hide: true, value: "t" }
        }
      })
      const server = yield* Part.server({ name: "wide", version: "0.0.0" }, [{ tools: [wide] }])
      const client = yield* McpClient.connect(yield* InProcess.client(server))
      const result = yield* client.callTool("wide", { query: "x", max: 1.5 })
      refused(result, ["Invalid arguments at /max"], ["/limit"])
      expect(get(yield* client.callTool("wide", { query: "x", max: 2 }), "structuredContent")).toEqual({
        received: { q: "x", tenant: "t", limit: 2 }
      })
    }))

  it.scoped("a computed hidden argument's ToolError is the call's isError result; around may call forwardRaw", () =>
    Effect.gen(function*() {
      const denied = ToolTransform.make(search, {
        name: "denied",
        arguments: { tenant: { hide: true, compute: () => Effect.fail(new Tool.ToolError({ message: "no tenant" })) } }
      })
      const raw = ToolTransform.make(search, {
        name: "raw",
        arguments: { tenant: { hide: true, value: "unused" } },
        around: ({ arguments: args, forwardRaw }) => forwardRaw({ ...args, tenant: "raw-tenant" })
      })
      const server = yield* Part.server({ name: "c", version: "0.0.0" }, [Part.make({ tools: [denied, raw] })])
      const client = yield* McpClient.connect(yield* InProcess.client(server))
      refused(yield* client.callTool("denied", { q: "x", limit: 1 }), ["no tenant"])
      expect(get(yield* client.callTool("raw", { q: "x", limit: 1 }), "structuredContent", "received", "tenant")).toBe(
        "raw-tenant"
      )
    }))

  it.scoped("official SDK v2 client over stdio (spawned)", () =>
    Effect.gen(function*() {
      const client = yield* v2Connected(
        new V2Stdio({ command: process.execPath, args: [...NODE_ARGS, FIXTURE], cwd: ROOT, stderr: "ignore" })
      )
      yield* fixtureChecks(v2(client), "transform-test")
    }), 60_000)

  it.scoped("official SDK v2 client over Streamable HTTP (127.0.0.1, port 0)", () =>
    Effect.gen(function*() {
      const server = yield* fixtureServer
      const { url } = yield* StreamableHttp.serve(server, { port: 0 })
      const client = yield* v2Connected(new V2Http(new URL(url)))
      yield* fixtureChecks(v2(client), "transform-test")
    }), 60_000)
})

describe("ToolTransform in the proxy's mcpServers file", () => {
  const config = {
    mcpServers: {
      b: {
        command: process.execPath,
        args: [...NODE_ARGS, FIXTURE],
        cwd: ROOT,
        include: ["search", "lookup"],
        transform: {
          search: {
            name: "docs",
            description: "Searches the docs",
            arguments: {
              q: { name: "query", description: "words" },
              tenant: { hide: true, value: "from-proxy" },
              limit: { default: 2 }
            }
          },
          lookup: { arguments: { id: { name: "key" }, verbose: { hide: true, value: false } } }
        }
      }
    }
  }

  const proxyChecks = (peer: Peer) =>
    Effect.gen(function*() {
      const tools = yield* bounded("tools/list", peer.listTools)
      expect(tools.map((t) => get(t, "name")).sort()).toEqual(["b_docs", "b_lookup"])
      const docs = toolOf(tools, "b_docs")
      expect(get(docs, "description")).toBe("Searches the docs")
      expect(Object.keys(get(docs, "inputSchema", "properties") as object).sort()).toEqual(["limit", "query"])
      expect(get(docs, "inputSchema", "required")).toEqual(["query"])
      expect(get(docs, "inputSchema", "properties", "limit", "default")).toBe(2)
      expect(get(docs, "inputSchema", "properties", "query", "description")).toBe("words")
      expect(get(toolOf(tools, "b_lookup"), "inputSchema", "required")).toEqual(["key"])

      const call = (name: string, args: Record<string, unknown>) => bounded(`call ${name}`, peer.call(name, args))
      // the backend receives the original names and the hidden value
      expect(get(yield* call("b_docs", { query: "cats" }), "structuredContent")).toEqual({
        received: { q: "cats", tenant: "from-proxy", limit: 2 }
      })
      expect(get(yield* call("b_lookup", { key: "k1" }), "structuredContent")).toEqual({
        received: { id: "k1", verbose: false }
      })
      refused(yield* call("b_docs", { query: "cats", tenant: "evil" }), ["/tenant"])
      refused(yield* call("b_lookup", { key: "k1", verbose: true }), ["/verbose", "set by the server"])
      refused(yield* call("b_docs", { query: 7 }), ["/query"])
      refused(yield* call("b_lookup", {}), ["key"], ["/id"])
    })

  it.scoped(
    "a spawned stdio backend, seen by our client in-process and by the SDK v2 client over HTTP",
    () =>
      Effect.gen(function*() {
        const decoded = yield* McpProxy.decodeConfig(config)
        const proxy = yield* McpProxy.fromConfig(decoded, { name: "gateway", stderr: () => Effect.void })
        const client = yield* McpClient.connect(yield* InProcess.client(proxy))
        yield* proxyChecks(ours(client))
        const { url } = yield* StreamableHttp.serve(proxy, { port: 0 })
        yield* proxyChecks(v2(yield* v2Connected(new V2Http(new URL(url)))))
      }),
    60_000
  )

  it.scoped("in code: a backend's transform with a computed hidden argument and a wrapper", () =>
    Effect.gen(function*() {
      const backend = yield* McpClient.connect(yield* InProcess.client(yield* fixtureServer))
      const proxy = yield* McpProxy.make([{
        prefix: "c",
        client: backend,
        include: ["search"],
        transform: {
          search: {
            name: "ask",
            arguments: { tenant: { hide: true, compute: (ctx) => Effect.succeed(`via-${ctx.clientInfo?.name}`) } },
            around: ({ forward }) =>
              Effect.map(forward(), (result) => ({ ...result, content: [{ type: "text", text: "wrapped" }] }))
          }
        }
      }])
      const front = yield* McpClient.connect(yield* InProcess.client(proxy), { name: "front" })
      expect((yield* front.listAllTools).map((t) => t.name)).toEqual(["c_ask"])
      const result = yield* front.callTool("c_ask", { q: "x", limit: 1 })
      expect(text(result)).toBe("wrapped")
      expect(get(result, "structuredContent")).toEqual({ received: { q: "x", tenant: "via-front", limit: 1 } })
      refused(yield* front.callTool("c_ask", { q: "x", limit: 1, tenant: "t" }), ["/tenant"])
    }))

  it("config errors name the field", () => {
    const entry = (transform: unknown) => ({ mcpServers: { b: { command: "x", transform } } })
    const message = (u: unknown): string => {
      const decoded = McpProxy.decodeConfig(u)
      assert.isTrue(Either.isLeft(decoded))
      return Either.isLeft(decoded) ? decoded.left.message : ""
    }
    expect(message(entry({ search: { arguments: { tenant: { hide: true } } } }))).toBe(
      "mcpServers.b.transform.search.arguments.tenant: a hidden argument needs the `value` the proxy sends for it"
    )
    expect(message(entry({ search: { arguments: { tenant: { value: 1 } } } }))).toContain(
      "mcpServers.b.transform.search.arguments.tenant: `value` is for a hidden argument"
    )
    expect(message(entry({ search: { arguments: { tenant: { hide: true, value: 1, name: "t" } } } }))).toContain(
      "a hidden argument takes only `value` (remove name)"
    )
    expect(message(entry({ search: { name: "" } }))).toBe(
      "mcpServers.b.transform.search.name: expected a non-empty tool name"
    )
    expect(
      message({ mcpServers: { b: { command: "x", rename: { search: "s" }, transform: { search: { name: "t" } } } } })
    )
      .toBe("mcpServers.b.transform.search.name: the tool is also in `rename`: give its new name once")
    expect(message(entry({ search: { arguments: { q: { default: 1, required: "yes" } } } }))).toContain(
      "mcpServers.b.transform.search.arguments.q.required"
    )
  })
})

describe("ToolTransform types", () => {
  it("the services of compute and around are the derived tool's", () => {
    class Secret extends Context.Tag("test/Secret")<Secret, string>() {}
    const t = ToolTransform.make(search, { arguments: { tenant: { hide: true, compute: () => Secret } } })
    expectTypeOf(t).toEqualTypeOf<Tool.JsonTool<Secret>>()
    const wrapped = ToolTransform.make(search, { around: ({ forward }) => Effect.flatMap(Secret, () => forward()) })
    expectTypeOf(wrapped).toEqualTypeOf<Tool.JsonTool<Secret>>()
    expectTypeOf(ToolTransform.make(search, { name: "plain" })).toEqualTypeOf<Tool.JsonTool<never>>()
  })
})
