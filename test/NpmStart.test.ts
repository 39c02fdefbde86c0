/**
 * `npm start` (the README's first command) serves the example library over HTTP, and stops on
 * SIGTERM or SIGINT sent to the `npm` process alone, as a process manager or a container runtime
 * sends it: the script `exec`s node in place of the shell, so npm's own signal forwarding reaches
 * the server. Each run is its own process group; afterwards the group must be empty and the port
 * free, within a bounded time.
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
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start: no URL within ${START_MS} ms:\n${output}`)), START_MS)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match?.[1] !== undefined) {
        clearTimeout(timer)
        resolve(match[1])
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`npm start exited (${code ?? signal}) before listening:\n${output}`))
    })
  })
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
})
