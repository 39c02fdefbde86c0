/**
 * `McpServer` is a branded service (issue 33, point 5): only `McpServer.make` / `McpServer.layer`
 * build one. A hand-made value does not type-check; one that copies the brand (a spread of a real
 * server) dies with a clear defect as soon as the library reaches for the server behind it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { McpServer, Tool } from "presa-mcp"
import * as InProcess from "presa-mcp/transport/InProcess"

const NOT_A_SERVER = /not built by McpServer\.make or McpServer\.layer/

const ping = { jsonrpc: "2.0", id: 1, method: "ping" }

/** The defect's message, or a failure of the test when the Effect did not die. */
const defectOf = (exit: Exit.Exit<unknown, unknown>): string => {
  assert.isTrue(Exit.isFailure(exit), "expected the Effect to die")
  if (Exit.isSuccess(exit)) return ""
  const defect = Cause.dieOption(exit.cause)
  assert.isTrue(Option.isSome(defect), `expected a defect, got ${Cause.pretty(exit.cause)}`)
  return Option.isSome(defect) && defect.value instanceof Error ? defect.value.message : String(defect)
}

describe("McpServer is branded", () => {
  it.effect("a value without the brand does not type-check as the service", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "brand", version: "1" })
      const { [McpServer.TypeId]: _brand, ...unbranded } = server
      // @ts-expect-error: a hand-made McpServer lacks the brand that only McpServer.make sets
      const fake: McpServer.McpServer = unbranded
      assert.isDefined(fake)
      // @ts-expect-error: the same for the Tag
      const layer = Layer.succeed(McpServer.McpServer, unbranded)
      assert.isDefined(layer)
    }))

  it.effect("a server made by McpServer.make works where a copy of it dies", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "brand", version: "1" })
      const real = yield* McpServer.dispatch(server, ping)
      assert.isTrue(Option.isSome(real))
      // the spread copies the brand (so it type-checks) but not the server behind it
      const copy: McpServer.McpServer = { ...server }
      const exit = yield* Effect.exit(McpServer.dispatch(copy, ping))
      assert.match(defectOf(exit), NOT_A_SERVER)
      const handled = yield* Effect.exit(McpServer.handleMessage(copy, ping))
      assert.match(defectOf(handled), NOT_A_SERVER)
    }))

  it.effect("a transport or a definition Layer over a fake dies at once, naming the problem", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "brand", version: "1" })
      const copy: McpServer.McpServer = { ...server }
      const client = yield* Effect.exit(InProcess.client(copy))
      assert.match(defectOf(client), NOT_A_SERVER)
      const tool = Tool.fromJsonSchema({ name: "t", handler: () => "t" })
      const built = yield* Effect.exit(
        Effect.scoped(Layer.build(McpServer.tool(tool).pipe(Layer.provide(Layer.succeed(McpServer.McpServer, copy)))))
      )
      assert.match(defectOf(built), NOT_A_SERVER)
    }))
})
