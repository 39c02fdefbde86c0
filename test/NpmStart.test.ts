/**
 * `npm start` (the README's first command) serves the example library over HTTP, and stops on
 * SIGTERM or SIGINT sent to the `npm` process alone, as a process manager or a container runtime
 * sends it: the script `exec`s node in place of the shell, so npm's own signal forwarding reaches
 * the server. Each run is its own process group; afterwards the group must be empty and the port
 * free, within a bounded time. Where it listens is one line on stderr.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Net from "node:net"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const START_MS = 60_000
const STOP_MS = 15_000

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Whether any process of the group `pgid` is alive. */
const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

/** Whether `port` on 127.0.0.1 can be bound again (the server released it). */
const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = Net.createServer()
    probe.once("error", () => resolve(false))
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)))
  })

/** Starts `npm start` with PORT=0 in a process group of its own; yields it and the URL it announced. */
const start = async () => {
  const child = ChildProcess.spawn("npm", ["start"], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  let stderr = ""
  let stdout = ""
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start: no URL within ${START_MS} ms:\n${output}`)), START_MS)
    // the one line saying where it listens is on stderr (stdout has npm's banner only)
    const onData = (stream: "stdout" | "stderr") => (chunk: Buffer) => {
      output += chunk.toString()
      if (stream === "stdout") stdout += chunk.toString()
      else stderr += chunk.toString()
      const match = /^.*listening on (http:\/\/\S+)$/m.exec(stderr)
      if (match?.[1] !== undefined) {
        clearTimeout(timer)
        resolve(match[1])
      }
    }
    child.stdout.on("data", onData("stdout"))
    child.stderr.on("data", onData("stderr"))
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`npm start exited (${code ?? signal}) before listening:\n${output}`))
    })
  })
  assert.notInclude(stdout, "listening on", "npm start: the URL line must be on stderr")
  return { child, url, pgid: child.pid ?? 0 }
}

/** A modern `tools/list` over HTTP, as in the README's curl example. */
const toolsList = async (url: string) => {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": "2026-07-28",
      "Mcp-Method": "tools/list"
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }
    })
  })
  return { status: response.status, body: await response.text() }
}

/** A legacy (2025-11-25) session: `initialize` then `notifications/initialized`; its session id. */
const legacySession = async (url: string): Promise<string> => {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" }
  const init = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "npm-start-test", version: "0" } }
    })
  })
  const sessionId = init.headers.get("mcp-session-id") ?? ""
  await init.text()
  const initialized = await fetch(url, {
    method: "POST",
    headers: { ...headers, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })
  })
  await initialized.text()
  return sessionId
}

/**
 * Keeps the session's GET stream open as a listening client does: reads it, and opens it again
 * (at most 100 times, 50 ms apart) whenever it ends or fails, until `signal` aborts. Resolves the
 * number of GETs that got a 200 once stopped.
 */
const keepGetOpen = async (url: string, sessionId: string, signal: AbortSignal): Promise<number> => {
  let opened = 0
  for (let i = 0; i < 100 && !signal.aborted; i++) {
    try {
      const response = await fetch(url, {
        headers: { accept: "text/event-stream", "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
        signal
      })
      if (response.status === 200) opened++
      await response.text()
    } catch {
      // refused, reset or aborted: try again unless stopped
    }
    await sleep(50)
  }
  return opened
}

describe("npm start", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(
      `serves the library, and ${signal} sent to the npm process alone stops the server and frees the port`,
      async () => {
        const { child, pgid, url } = await start()
        try {
          assert.isAbove(pgid, 0)
          const port = Number(new URL(url).port)
          assert.isAbove(port, 0)
          const listed = await toolsList(url)
          assert.strictEqual(listed.status, 200)
          assert.include(listed.body, "\"add\"")
          assert.isFalse(await portFree(port))

          const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
          process.kill(pgid, signal) // the npm process only, not its group
          const deadline = Date.now() + STOP_MS
          await Promise.race([exited, sleep(STOP_MS)])
          while (groupAlive(pgid) && Date.now() < deadline) await sleep(100)
          assert.isFalse(groupAlive(pgid), `processes of npm start are still running ${STOP_MS} ms after ${signal}`)
          assert.isNotNull(child.exitCode ?? child.signalCode, "npm did not exit")
          assert.isTrue(await portFree(port), `port ${port} is still bound after ${signal}`)
        } finally {
          if (groupAlive(pgid)) process.kill(-pgid, "SIGKILL")
        }
      },
      START_MS + STOP_MS + 30_000
    )
  }

  it(
    "SIGTERM stops the server while a legacy session's GET stream is open and its client keeps reopening it",
    async () => {
      const { child, pgid, url } = await start()
      const stop = new AbortController()
      try {
        const port = Number(new URL(url).port)
        const sessionId = await legacySession(url)
        assert.isNotEmpty(sessionId)
        const gets = keepGetOpen(url, sessionId, stop.signal)
        await sleep(500) // the GET stream is open
        const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
        process.kill(pgid, "SIGTERM")
        const deadline = Date.now() + STOP_MS
        await Promise.race([exited, sleep(STOP_MS)])
        while (groupAlive(pgid) && Date.now() < deadline) await sleep(100)
        assert.isFalse(groupAlive(pgid), `the server is still running ${STOP_MS} ms after SIGTERM`)
        assert.isTrue(await portFree(port), `port ${port} is still bound after SIGTERM`)
        stop.abort()
        assert.isAtLeast(await gets, 1, "the GET stream never opened")
      } finally {
        stop.abort()
        if (groupAlive(pgid)) process.kill(-pgid, "SIGKILL")
      }
    },
    START_MS + STOP_MS + 30_000
  )
})
