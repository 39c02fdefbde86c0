/**
 * A stdio server never writes logs to stdout (issue #33, "Also"): spawned servers
 * (test/fixtures/logging-stdio-server.ts) whose definition Layer logs while it is built (before
 * serving) and whose tool handler logs while serving, under `NodeRuntime.runMain` (whose pretty
 * logger writes to stdout): `Stdio.runLayer`, `Stdio.layerServer` under `Layer.launch`, and
 * `Stdio.run`. Every stdout line must be a JSON-RPC 2.0 message and the log text must be on
 * stderr.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const RUN_MS = 60_000

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

interface Session {
  readonly stdoutLines: () => ReadonlyArray<string>
  readonly stderr: () => string
  /** Sends a request and waits for the line answering it (bounded). */
  readonly request: (id: number, method: string, params: unknown) => Promise<Record<string, unknown>>
  readonly notify: (method: string) => void
  /** Ends stdin; kills the process if it has not exited within a few seconds; yields its exit. */
  readonly end: (waitForExit: boolean) => Promise<number | null>
}

const start = (mode: string): Session => {
  const child = ChildProcess.spawn(
    process.execPath,
    ["--import", "tsx", "test/fixtures/logging-stdio-server.ts", mode],
    { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] }
  )
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
  const closed = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)))
  const lines = () => stdout.split("\n").filter((line) => line !== "")
  const write = (message: unknown) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...Object(message) })}\n`)
  const request = async (id: number, method: string, params: unknown) => {
    write({ id, method, params })
    const deadline = Date.now() + RUN_MS
    for (;;) {
      for (const line of lines()) {
        try {
          const message: unknown = JSON.parse(line)
          if (isRecord(message) && message.id === id) return message
        } catch {
          // not JSON: the assertion on every line reports it
        }
      }
      if (Date.now() > deadline) assert.fail(`no answer to ${method} within ${RUN_MS} ms\n${stdout}\n${stderr}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }
  const end = async (waitForExit: boolean) => {
    child.stdin.end()
    const timer = setTimeout(() => child.kill("SIGKILL"), waitForExit ? RUN_MS : 2_000)
    const code = await closed
    clearTimeout(timer)
    return code
  }
  return { stdoutLines: lines, stderr: () => stderr, request, notify: (method) => write({ method }), end }
}

const INITIALIZE = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "logging-test", version: "1.0.0" }
}

/** Calls `chatty` (retrying while the tool is not registered yet, at most 40 times). */
const callChatty = async (session: Session, firstId: number) => {
  for (let id = firstId; id < firstId + 40; id++) {
    const reply = await session.request(id, "tools/call", { name: "chatty", arguments: {} })
    if (isRecord(reply.result)) return reply.result
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return assert.fail(`chatty was never callable\n${session.stderr()}`)
}

const assertOnlyJsonRpc = (session: Session) => {
  const lines = session.stdoutLines()
  assert.isAbove(lines.length, 0)
  for (const line of lines) {
    let message: unknown
    try {
      message = JSON.parse(line)
    } catch {
      return assert.fail(`stdout line is not JSON: ${line}\nstderr: ${session.stderr()}`)
    }
    assert.isTrue(isRecord(message) && message.jsonrpc === "2.0", `not a JSON-RPC message: ${line}`)
  }
}

describe.concurrent("stdio servers log on stderr, never on stdout", () => {
  for (
    const [mode, exits, definitionLogs] of [
      ["run-layer", true, true],
      ["layer-server", false, true],
      ["run", true, false]
    ] as const
  ) {
    it(`${mode}: definition Layer logs before serving, handler logs while serving`, { timeout: 120_000 }, async () => {
      const session = start(mode)
      const init = await session.request(1, "initialize", INITIALIZE)
      assert.isTrue(isRecord(init.result), JSON.stringify(init))
      session.notify("notifications/initialized")
      const result = await callChatty(session, 2)
      assert.deepStrictEqual(result.content, [{ type: "text", text: "chatted" }])
      const code = await session.end(exits)
      if (exits) assert.strictEqual(code, 0, session.stderr())
      assertOnlyJsonRpc(session)
      const stderr = session.stderr()
      assert.match(stderr, /handler info 1/)
      assert.match(stderr, /handler warning 1/)
      if (definitionLogs) {
        assert.match(stderr, /definition layer built/)
        assert.match(stderr, /definition layer warning/)
      }
    })
  }
})
