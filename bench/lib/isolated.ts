/**
 * Contenders that run in a process of their own. The `core` suite measures libraries that run
 * whole in one process (server only, and client + server in-process); in the driver they shared
 * one heap: one library's garbage, retained objects and major GCs landed in another's rounds, and
 * the driver carried every earlier suite's heap too. Here each contender is a child process (a
 * script of `bench/servers/`, run by `serverCommand` as the servers are: compiled JavaScript, no
 * loader), opened once and measured round by round, so `interleave` still alternates the
 * contenders round by round.
 *
 * The protocol, one line each way: the child writes `ready` once it has set up (checked one call,
 * warmed up), then answers each `measure` line with one JSON line (the round); the end of its
 * stdin (`stopChild`) makes it close and exit. A failure is one line `error <message>` and exit
 * code 1.
 */
import { spawn } from "node:child_process"
import * as readline from "node:readline"
import type { Contender, Opened } from "./compare.js"
import { serverCommand, stopChild, withTimeout } from "./harness.js"

/** How long a child may take to set up (spawn, load, connect, warm up), and to run one round. */
const OPEN_TIMEOUT = 60_000
const ROUND_TIMEOUT = 60_000

/**
 * The driver's side: a `Contender` named `name` whose rounds run in `node <script> ...args`.
 * Rejects (the suite fails) when the child fails, exits or stays silent past the timeouts.
 */
export const isolated = <M>(name: string, script: string, args: ReadonlyArray<string>): Contender<M> => ({
  name,
  open: async (): Promise<Opened<M>> => {
    const { args: argv, command } = serverCommand(script, args, `${script.replace(/\.ts$/, "")}-${args.join("-")}`)
    const child = spawn(command, argv, { stdio: ["pipe", "pipe", "inherit"] })
    const lines = readline.createInterface({ input: child.stdout })
    const waiting: Array<(line: string | undefined) => void> = []
    const queued: Array<string> = []
    lines.on("line", (line) => {
      const w = waiting.shift()
      if (w === undefined) queued.push(line)
      else w(line)
    })
    lines.on("close", () => {
      for (const w of waiting.splice(0)) w(undefined)
    })
    const next = async (what: string, ms: number): Promise<string> => {
      const line = queued.shift() ??
        await withTimeout(new Promise<string | undefined>((resolve) => waiting.push(resolve)), ms, `${name}: ${what}`)
      if (line === undefined) throw new Error(`${name}: the contender process exited (${what})`)
      if (line.startsWith("error ")) throw new Error(`${name}: ${line.slice(6)}`)
      return line
    }
    try {
      const first = await next("setting up", OPEN_TIMEOUT)
      if (first !== "ready") throw new Error(`${name}: unexpected line ${first}`)
    } catch (e) {
      await stopChild(child)
      throw e
    }
    return {
      measure: async () => {
        child.stdin.write("measure\n")
        return JSON.parse(await next("a round", ROUND_TIMEOUT)) as M
      },
      close: () => stopChild(child)
    }
  }
})

/**
 * The child's side: opens the contender, writes `ready`, then one JSON line per `measure` line
 * until the end of stdin.
 */
export const serveRounds = async (open: () => Promise<Opened<unknown>>): Promise<void> => {
  const fail = (e: unknown): never => {
    process.stdout.write(`error ${e instanceof Error ? e.message : String(e)}\n`)
    process.exit(1)
  }
  const session = await open().catch(fail)
  process.stdout.write("ready\n")
  const lines = readline.createInterface({ input: process.stdin })
  for await (const line of lines) {
    if (line !== "measure") continue
    const round = await session.measure().catch(fail)
    process.stdout.write(`${JSON.stringify(round)}\n`)
  }
  await session.close().catch(() => undefined)
  process.exit(0)
}
