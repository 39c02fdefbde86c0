/**
 * A Toolkit's handlers that call the MCP server serving it (`AiToolkit.serve` on the other side):
 * arguments encoded with the parameters Schema, results decoded with the success and failure
 * Schemas. Public surface: src/AiToolkit.ts.
 * @internal
 */
import * as AiTool from "@effect/ai/Tool"
import type * as Toolkit from "@effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { Options } from "../../AiToolkit.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpClient from "../../McpClient.js"
import type * as McpSchema from "../../McpSchema.js"
import * as Tool from "../../Tool.js"
import { erase } from "../erase.js"
import { outputOf } from "./server.js"

export type CallOptions = Pick<Options, "timeout" | "onProgress">

/** An `isError` result without a failure the tool's Schema reads: the call's defect. */
const untyped = (result: McpSchema.CallToolResult): Tool.ToolError =>
  new Tool.ToolError({
    message: result.content.map((block) => block.type === "text" ? block.text : `[${block.type}]`).join("\n"),
    content: result.content
  })

const remote = (client: McpClient.McpClient, tool: AiTool.Any, options: CallOptions) => {
  // The schemas' ASTs, as the serving side derives and encodes them.
  const encodeParams = Schema.encodeUnknown(Schema.make(tool.parametersSchema.ast))
  const decodeSuccess = Schema.decodeUnknown(Schema.make(tool.successSchema.ast))
  const decodeFailure = Schema.decodeUnknownOption(Schema.make(tool.failureSchema.ast))
  const output = outputOf(tool.successSchema.ast)
  const { onProgress, timeout } = options
  const callOptions: McpClient.CallOptions = {
    ...(timeout === undefined ? {} : { timeout }),
    ...(onProgress === undefined ? {} : { onProgress: (progress) => onProgress(tool.name, progress) })
  }
  return (params: unknown): Effect.Effect<unknown, unknown> =>
    Effect.gen(function*() {
      const args = yield* Effect.orDie(encodeParams(params))
      const result = yield* Effect.orDie(client.callTool(tool.name, JsonRpc.isObject(args) ? args : {}, callOptions))
      if (result.isError === true) {
        const failure = decodeFailure(result.structuredContent)
        return yield* failure._tag === "Some" ? Effect.fail(failure.value) : Effect.die(untyped(result))
      }
      const structured = result.structuredContent
      const value = output?.wrap === true ? (JsonRpc.isObject(structured) ? structured.value : undefined) : structured
      return yield* Effect.orDie(decodeSuccess(value))
    })
}

export const handlers = <Tools extends Record<string, AiTool.Any>>(
  toolkit: Toolkit.Toolkit<Tools>,
  options: CallOptions = {}
): Layer.Layer<AiTool.HandlersFor<Tools>, never, McpClient.McpClient> =>
  Layer.scopedContext(Effect.gen(function*() {
    const client = yield* McpClient.McpClient
    const built: Record<string, (params: unknown) => Effect.Effect<unknown, unknown>> = {}
    for (const tool of Object.values(toolkit.tools)) {
      if (AiTool.isUserDefined(tool)) built[tool.name] = remote(client, tool, options)
    }
    // One handler per user-defined tool, typed by the tool's own Schemas (which decode its results).
    return yield* toolkit.toContext(erase<Toolkit.HandlersFrom<Tools>>(built))
  }))
