/**
 * An agent loop over an MCP server's tools, with @effect/ai and the `presa-mcp/AiToolkit` bridge.
 *
 *   npx tsx examples/agent.ts ["What is 2 + 3 + 4?"]
 *
 * It spawns the reference library (`examples/library.ts --stdio`), turns its tools into an
 * `@effect/ai` toolkit (`AiToolkit.layer`), and runs `LanguageModel.generateText` turn by turn until
 * the model answers without calling a tool. The model is scripted (no network): on the first turn it
 * asks for the `add` tool with the numbers of the question, on the next it answers with the tool's
 * `structuredContent.sum`. The answer goes to stdout, one line; each tool result to stderr.
 * docs/ai.md shows the same loop with a real provider.
 */
import * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Prompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { fileURLToPath } from "node:url"
import { McpClient, McpSchema } from "presa-mcp"
import * as AiToolkit from "presa-mcp/AiToolkit"
import * as Stdio from "presa-mcp/transport/Stdio"

const LIBRARY = fileURLToPath(new URL("./library.ts", import.meta.url))
const MAX_TURNS = 5

/** Asks the model, lets it call the server's tools, until it answers with text alone. */
const agent = (question: string) =>
  Effect.gen(function*() {
    const mcp = yield* AiToolkit.McpToolkit
    let prompt = Prompt.make(question)
    for (let turn = 1; turn <= MAX_TURNS; turn++) {
      const response = yield* LanguageModel.generateText({ prompt, toolkit: mcp.toolkit })
      for (const result of response.toolResults) {
        yield* Console.error(
          `tool ${result.name}${result.isFailure ? " failed" : ""}: ${JSON.stringify(result.encodedResult)}`
        )
      }
      if (response.toolCalls.length === 0) return response.text
      prompt = Prompt.merge(prompt, Prompt.fromResponseParts(response.content))
    }
    return yield* new AiError.MalformedOutput({
      module: "agent",
      method: "loop",
      description: `no answer after ${MAX_TURNS} turns`
    })
  })

// ---------------------------------------------------------------------------------------------
// The scripted model: a LanguageModel built with LanguageModel.make, as a provider layer is.
// ---------------------------------------------------------------------------------------------

const Sum = Schema.Struct({ sum: Schema.Number })
const decodeResult = Schema.decodeUnknownOption(McpSchema.CallToolResult)
const decodeSum = Schema.decodeUnknownOption(Sum)

const finish = (reason: "tool-calls" | "stop"): Response.PartEncoded => ({
  type: "finish",
  reason,
  usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, reasoningTokens: undefined, cachedInputTokens: undefined }
})

const text = (value: string): Array<Response.PartEncoded> => [{ type: "text", text: value }, finish("stop")]

/** One turn: a tool call when the conversation has no tool result yet, else the answer. */
const script = (options: LanguageModel.ProviderOptions): Array<Response.PartEncoded> => {
  const results = options.prompt.content.flatMap((message) => message.role === "tool" ? message.content : [])
  const last = results.at(-1)
  if (last === undefined) {
    const question = options.prompt.content.flatMap((message) =>
      message.role === "user" ? message.content.flatMap((part) => part.type === "text" ? [part.text] : []) : []
    ).join(" ")
    const numbers = (question.match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number)
    if (!options.tools.some((tool) => tool.name === "add")) return text("I have no calculator.")
    return [{ type: "tool-call", id: "call-1", name: "add", params: { numbers } }, finish("tool-calls")]
  }
  const sum = decodeResult(last.result).pipe(
    Option.filter((result) => !last.isFailure && result.isError !== true),
    Option.flatMap((result) => decodeSum(result.structuredContent))
  )
  return text(Option.match(sum, {
    onNone: () => `The calculator failed: ${JSON.stringify(last.result)}`,
    onSome: ({ sum }) => `The sum is ${sum}.`
  }))
}

const ScriptedModel = Layer.effect(
  LanguageModel.LanguageModel,
  LanguageModel.make({
    generateText: (options) => Effect.sync(() => script(options)),
    streamText: () =>
      Stream.fail(
        new AiError.MalformedOutput({ module: "ScriptedModel", method: "streamText", description: "not scripted" })
      )
  })
)

// ---------------------------------------------------------------------------------------------
// The server's tools over stdio, as a toolkit.
// ---------------------------------------------------------------------------------------------

const LibraryTools = AiToolkit.layer().pipe(
  Layer.provide(McpClient.layer({ name: "agent-example", version: "1.0.0" })),
  Layer.provide(Stdio.layerClient({ command: process.execPath, args: ["--import", "tsx", LIBRARY, "--stdio"] }))
)

const question = process.argv[2] ?? "What is 2 + 3?"
const main = agent(question).pipe(
  Effect.flatMap((answer) => Console.log(answer)),
  Effect.provide(Layer.merge(LibraryTools, ScriptedModel))
)

NodeRuntime.runMain(main, { disablePrettyLogger: true })
