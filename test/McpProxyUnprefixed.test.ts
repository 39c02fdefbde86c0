/**
 * `McpProxy` with the empty prefix: a proxy's only backend may have `prefix: ""`, and then its
 * tools, prompts, resources and templates are served under their own names and URIs (what
 * `presa-mcp dev` serves). The empty prefix next to another backend is refused (ProxyError
 * "Prefix"). In process; every wait is bounded.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { InProcess, Input, JsonRpc, McpClient, McpServer, Prompt, Resource, Tool } from "presa-mcp"
import * as McpProxy from "../src/McpProxy.js"
import type * as McpSchema from "../src/McpSchema.js"

const NAME_SCHEMA = { type: "object", properties: { name: { type: "string" } }, required: ["name"] }

const backend = Effect.gen(function*() {
  const server = yield* McpServer.make({
    name: "own",
    version: "1",
    instructions: "Use echo.",
    tools: [
      Tool.fromJsonSchema({
        name: "echo",
        inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
        handler: ({ text }) => `echo ${String(text)}`
      }),
      Tool.fromJsonSchema({
        name: "ask",
        handler: () =>
          Effect.map(
            Input.elicit("Your name?", NAME_SCHEMA),
            (r) => r.action === "accept" ? `hello ${String(r.content?.name)}` : r.action
          )
      })
    ],
    prompts: [
      Prompt.make({
        name: "hello",
        arguments: [{ name: "who", required: true }],
        handler: ({ who }) => `Hello, ${who}!`,
        complete: { who: (value) => ["ada", "alan"].filter((p) => p.startsWith(value)) }
      })
    ],
    resources: [Resource.make({ uri: "mem://note", name: "note", mimeType: "text/plain", handler: () => "a note" })],
    resourceTemplates: [
      Resource.template({
        uriTemplate: "ui://items/{id}",
        name: "item",
        mimeType: "text/plain",
        handler: ({ id }) => (id === "1" ? "item one" : undefined)
      })
    ]
  })
  return yield* McpClient.connect(yield* InProcess.client(server), McpProxy.inputHandlers)
})

const text = (result: McpSchema.CallToolResult): string =>
  result.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("")

const contentText = (contents: ReadonlyArray<McpSchema.ResourceContents>): string | undefined => {
  const first = contents[0]
  return first !== undefined && "text" in first ? first.text : undefined
}

describe("McpProxy with the empty prefix", () => {
  it.live("the only backend's names and URIs are served unchanged, and calls reach it under them", () =>
    Effect.gen(function*() {
      const questions = yield* Ref.make<ReadonlyArray<JsonRpc.JsonObject>>([])
      const proxy = yield* McpProxy.make([{ prefix: "", client: yield* backend }])
      const front = yield* McpClient.connect(yield* InProcess.client(proxy), {
        onElicit: (params) =>
          Effect.as(Ref.update(questions, (qs) => [...qs, params]), {
            action: "accept" as const,
            content: { name: "Ada" }
          })
      })
      expect((yield* front.listAllTools).map((t) => t.name).sort()).toEqual(["ask", "echo"])
      expect((yield* front.listAllPrompts).map((p) => p.name)).toEqual(["hello"])
      expect((yield* front.listAllResources).map((r) => r.uri)).toEqual(["mem://note"])
      expect((yield* front.listAllResourceTemplates).map((t) => t.uriTemplate)).toEqual(["ui://items/{id}"])
      assert.strictEqual(front.info.instructions, "Use echo.")

      const echoed = yield* front.callTool("echo", { text: "hi" })
      assert.strictEqual(echoed.isError, undefined)
      assert.strictEqual(text(echoed), "echo hi")
      const greeting = yield* front.getPrompt("hello", { who: "Ada" })
      const first = greeting.messages[0]?.content
      assert.strictEqual(first?.type === "text" ? first.text : undefined, "Hello, Ada!")
      expect((yield* front.complete({ type: "ref/prompt", name: "hello" }, "who", "a")).values).toEqual(["ada", "alan"])
      assert.strictEqual(contentText((yield* front.readResource("mem://note")).contents), "a note")
      const item = yield* front.readResource("ui://items/1")
      assert.strictEqual(contentText(item.contents), "item one")
      assert.strictEqual(item.contents[0]?.uri, "ui://items/1")

      // a relayed question keeps its message (no other backend to pass for) and names the backend ""
      assert.strictEqual(text(yield* front.callTool("ask", {})), "hello Ada")
      const [question] = yield* Ref.get(questions)
      assert.strictEqual(question?.message, "Your name?")
      expect(question?._meta).toEqual({ "presa-mcp/backend": "" })

      // the prefixed names are not served
      const unknown = yield* Effect.flip(front.callTool("_echo", { text: "hi" }))
      assert.strictEqual(unknown._tag, "McpError")
      assert.strictEqual(unknown._tag === "McpError" ? unknown.code : undefined, -32602)
    }).pipe(Effect.scoped, Effect.timeout("15 seconds")))

  it.live("the empty prefix next to another backend → ProxyError Prefix naming the rule", () =>
    Effect.gen(function*() {
      const a = yield* backend
      const b = yield* backend
      const error = yield* Effect.flip(McpProxy.make([{ prefix: "", client: a }, { prefix: "b", client: b }]))
      assert.strictEqual(error._tag, "ProxyError")
      assert.strictEqual(error.reason, "Prefix")
      expect(error.message).toContain(`""`)
      expect(error.message).toContain("the empty prefix only for a proxy's one backend")
      const connector = yield* Effect.flip(
        McpProxy.make([{ prefix: "b", client: b }, { prefix: "", connect: () => Effect.orDie(backend) }])
      )
      assert.strictEqual(connector.reason, "Prefix")
    }).pipe(Effect.scoped, Effect.timeout("15 seconds")))
})
