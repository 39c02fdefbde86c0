/**
 * The Tasks extension over real transports: Streamable HTTP (127.0.0.1, port 0) and a spawned
 * stdio server (test/fixtures/tasks-server.ts). Each: a task reports progress and is polled to
 * completion, one is cancelled mid-way, one asks a question answered through `tasks/update`
 * (`onElicit`). Every response is checked against the 2026-07-28 schema and the SEP-2663 task
 * shapes (`checkedTransport`). Over HTTP the client's `Mcp-Name: <taskId>` header is required
 * by the server, so passing calls also show the header is sent.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Content, McpClient, Task, type Transport } from "presa-mcp"
import * as Stdio from "../../src/transport/Stdio.js"
import * as StreamableHttp from "../../src/transport/StreamableHttp.js"
import { makeTasksServer } from "../fixtures/tasks-server.js"
import { checkedTransport } from "../support/Wire.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const FIXTURE = Path.join(ROOT, "test", "fixtures", "tasks-server.ts")
const WAIT: Duration.DurationInput = "20 seconds"
const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | Error, R> =>
  Effect.timeoutFail(effect, { duration: WAIT, onTimeout: () => new Error(`timed out after ${Duration.format(WAIT)}`) })

const scenario = (transport: Transport.ClientTransport) =>
  Effect.gen(function*() {
    const { checked, transport: t } = yield* checkedTransport(transport)
    const client = yield* bounded(McpClient.connect(t, {
      probeTimeout: WAIT, // a spawned server under load may take seconds to start: no legacy fallback
      tasks: true,
      onElicit: () => Effect.succeed({ action: "accept" as const, content: { name: "Wire" } })
    }))
    assert.strictEqual(client.info.era, "modern")
    assert.isTrue(client.tasks.supported)

    // progress, polled to completion
    const created = yield* bounded(client.tasks.callTool("steps", { n: 3, delayMs: 60 }))
    if (!Task.isCreateTaskResult(created)) return assert.fail("expected a task")
    const messages = new Set<string>()
    let final: Task.DetailedTask | undefined
    for (let i = 0; i < 400 && final === undefined; i++) {
      const task = yield* bounded(client.tasks.get(created.taskId))
      if (task.status === "working" && task.statusMessage !== undefined) messages.add(task.statusMessage)
      if (Task.isTerminal(task.status)) final = task
      else yield* Effect.sleep("10 millis")
    }
    assert.strictEqual(final?.status, "completed")
    assert.isAtLeast(messages.size, 2, [...messages].join(", "))
    assert.strictEqual(Content.textOf(yield* bounded(client.tasks.awaitResult(created.taskId))), "done 3 steps")

    // cancelled mid-way
    const hang = yield* bounded(client.tasks.callTool("hang"))
    if (!Task.isCreateTaskResult(hang)) return assert.fail("expected a task")
    yield* bounded(client.tasks.cancel(hang.taskId))
    const outcome = yield* bounded(Effect.flip(client.tasks.awaitResult(hang.taskId)))
    assert.strictEqual(outcome._tag === "ClientError" ? outcome.reason : outcome._tag, "Cancelled")
    assert.strictEqual((yield* bounded(client.tasks.get(hang.taskId))).status, "cancelled")

    // a question inside the task, answered by onElicit through tasks/update
    assert.strictEqual(Content.textOf(yield* bounded(client.callTool("confirm"))), "confirmed Wire")
    assert.isAtLeast(yield* Ref.get(checked), 8)
  })

describe("Tasks over transports", () => {
  it.scopedLive("Streamable HTTP", () =>
    Effect.gen(function*() {
      const finalized = yield* Ref.make(0)
      const { url } = yield* StreamableHttp.serve(yield* makeTasksServer(finalized))
      yield* scenario(yield* StreamableHttp.client({ url }))
      assert.strictEqual(yield* Ref.get(finalized), 1)
    }))

  it.scopedLive("stdio (spawned server)", (): Effect.Effect<void, unknown, Scope.Scope> =>
    Effect.gen(function*() {
      const transport = yield* Stdio.spawn({
        command: process.execPath,
        args: ["--import", "tsx", FIXTURE],
        cwd: ROOT,
        stderr: () => Effect.void
      })
      yield* scenario(transport)
    }))
})
