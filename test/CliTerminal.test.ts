/**
 * The command line's terminal-safety rule (issue #34, point 4): against a hostile stdio server
 * (test/fixtures/hostile-stdio-server.ts) whose server name, instructions, tool names,
 * descriptions, results, log and progress messages, elicitation question, error message and a
 * line on its own stderr all carry escape sequences (clear screen, window title, OSC 52
 * clipboard, BEL, a lone CR, U+202E, C1 CSI, DEL), `presa-mcp` runs on a pseudo-terminal (`script` from util-linux) and what reaches
 * the terminal holds none of those characters raw, only their visible `\u001b`-style form; the
 * CLI's own sequences (the progress line's `\r ESC[2K`, `@effect/cli`'s prompt drawing) are the
 * only escapes. `--json` output on a terminal is exact JSON that parses to the server's strings.
 * Off a terminal (a pipe) output is passed on as it is.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"
import { HOSTILE } from "./fixtures/hostile-stdio-server.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const RUN_MS = 90_000
const TEST_MS = 240_000
const SCRIPT = "/usr/bin/script"
const hasScript = Fs.existsSync(SCRIPT)

/** `HOSTILE` as the terminal must show it: every control character as its JSON escape. */
const SHOWN = "A\\u001b[2J\\u001b]0;pwned-title\\u0007\\u001b]52;c;cHduZWQ=\\u0007B\\u000dC\\u202eD\\u009b31mE\\u007fF"

const SERVER = ["--era", "legacy", "--", process.execPath, "--import", "tsx", "test/fixtures/hostile-stdio-server.ts"]
const shellQuote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`
const cliLine = (args: ReadonlyArray<string>) =>
  [process.execPath, "--import", "tsx", "src/bin.ts", ...args, ...SERVER].map(shellQuote).join(" ")

interface Run {
  readonly code: number | null
  readonly output: string
}

/**
 * Runs the CLI on a pseudo-terminal; `redirect` is appended to its shell line (`< /dev/null`:
 * stdin is not a terminal; `2>/dev/null`: only stdout is shown). `interact` gets the output so far
 * and the child's stdin (the terminal's keyboard).
 */
const onTty = (
  args: ReadonlyArray<string>,
  redirect: string,
  interact?: (seen: () => string, type: (keys: string) => void) => Promise<void>
): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = ChildProcess.spawn(SCRIPT, ["-qec", `${cliLine(args)} ${redirect}`, "/dev/null"], {
      cwd: ROOT,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
      reject(new Error(`presa-mcp ${args.join(" ")}: no exit within ${RUN_MS} ms\n${output}`))
    }, RUN_MS)
    child.once("close", (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
    if (interact === undefined) child.stdin.end()
    else {
      interact(() => output, (keys) => child.stdin.write(keys)).then(() => child.stdin.end(), reject)
    }
  })

/** Polls until `what` holds (bounded by {@link RUN_MS}). */
const waitFor = async (seen: () => string, what: string) => {
  const deadline = Date.now() + RUN_MS
  while (!seen().includes(what)) {
    if (Date.now() > deadline) assert.fail(`${JSON.stringify(what)} not seen within ${RUN_MS} ms\n${seen()}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Characters a terminal acts on: C0 but \n, DEL, C1, bidirectional controls. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u

/** The output with the terminal's `\r\n` and the CLI's own progress-line sequence taken out. */
const withoutOwnSequences = (output: string) => output.replaceAll("\r\x1b[2K", "").replaceAll("\r\n", "\n")

const assertNoRawControl = (output: string) => {
  const match = RAW_CONTROL.exec(withoutOwnSequences(output))
  assert.isNull(match, `raw U+${match?.[0].codePointAt(0)?.toString(16)} in ${JSON.stringify(output)}`)
}

/** The pieces of HOSTILE a terminal acts on, none of which may reach it raw. */
const assertNoHostileSequence = (output: string) => {
  for (const raw of ["\x1b[2J", "\x1b]0;", "\x1b]52;", "\x07", "\u202e", "\u009b", "\u007f"]) {
    assert.notInclude(output, raw, `raw ${JSON.stringify(raw)} reached the terminal`)
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const field = (o: unknown, key: string): unknown => (isRecord(o) ? o[key] : undefined)
const at = (o: unknown, index: number): unknown => (Array.isArray(o) ? o[index] : undefined)

/** A test that needs `script`; skipped where util-linux is missing. */
const onTerminal = it.skipIf(!hasScript)

describe.concurrent("presa-mcp on a terminal against a hostile stdio server", () => {
  onTerminal(
    "info and tools show the server's strings with their control characters visible",
    { timeout: TEST_MS },
    async () => {
      const [info, tools] = await Promise.all([onTty(["info"], "< /dev/null"), onTty(["tools"], "< /dev/null")])
      assert.strictEqual(info.code, 0, info.output)
      assertNoRawControl(info.output)
      assert.include(info.output, `server:       srv${SHOWN} 1.0.0`)
      assert.include(withoutOwnSequences(info.output), `instructions:\n  ${SHOWN}`)
      assert.include(withoutOwnSequences(info.output), `hostile stderr ${SHOWN}\n`) // the server's own stderr
      assert.strictEqual(tools.code, 0, tools.output)
      assertNoRawControl(tools.output)
      assert.include(tools.output, `evil${SHOWN} — ${SHOWN}`)
      assert.include(withoutOwnSequences(tools.output), `\n  arguments: x${SHOWN}: string?`)
    }
  )

  onTerminal("call: result, progress, elicitation question and log lines are shown, not obeyed", {
    timeout: TEST_MS
  }, async () => {
    const run = await onTty(["call", "evil"], "< /dev/null")
    assert.strictEqual(run.code, 0, run.output)
    assertNoRawControl(run.output)
    const text = withoutOwnSequences(run.output)
    assert.include(text, `${SHOWN}\nanswer: decline`) // the result (elicitation declined: stdin is no terminal)
    assert.include(text, `elicitation declined (not a terminal): ${SHOWN}`) // the question
    assert.match(text, /\[#{15}-{15}\]\s+50% A\\u001b\[2J/) // the progress message
    assert.include(text, "skipped a line from the server that is not JSON") // a log line with server text
    assert.include(run.output, "\r\x1b[2K") // the CLI's own progress-line control is still drawn
  })

  onTerminal("a JSON-RPC error's message is shown visibly on stderr", { timeout: TEST_MS }, async () => {
    const run = await onTty(["call", "fail"], "< /dev/null")
    assert.strictEqual(run.code, 2, run.output)
    assertNoRawControl(run.output)
    assert.include(run.output, `presa-mcp: the server answered with error -32000: ${SHOWN}`)
  })

  onTerminal(
    "interactive elicitation: the question and the field's prompt are visible",
    { timeout: TEST_MS },
    async () => {
      const run = await onTty(["call", "evil"], "", async (seen, type) => {
        await waitFor(seen, `The server asks: ${SHOWN}`)
        await waitFor(seen, `${SHOWN} (${SHOWN}) [optional]`)
        type("yes\r")
        await waitFor(seen, "Send these answers?")
        type("\r")
        await waitFor(seen, "answer: accept")
      })
      assert.strictEqual(run.code, 0, run.output)
      assertNoHostileSequence(run.output)
      assert.include(withoutOwnSequences(run.output), `${SHOWN}\nanswer: accept`)
    }
  )

  onTerminal(
    "--json on a terminal is exact JSON: it parses to the server's strings",
    { timeout: TEST_MS },
    async () => {
      const [info, tools, call] = await Promise.all([
        onTty(["info", "--json"], "< /dev/null 2>/dev/null"),
        onTty(["tools", "--json"], "< /dev/null 2>/dev/null"),
        onTty(["call", "evil", "--json"], "< /dev/null 2>/dev/null")
      ])
      for (const run of [info, tools, call]) {
        assert.strictEqual(run.code, 0, run.output)
        assertNoRawControl(run.output)
      }
      const parse = (run: Run): unknown => JSON.parse(run.output.replaceAll("\r\n", "\n"))
      const infoJson = parse(info)
      assert.strictEqual(field(field(infoJson, "serverInfo"), "name"), `srv${HOSTILE}`)
      assert.strictEqual(field(infoJson, "instructions"), HOSTILE)
      const tool = at(field(parse(tools), "tools"), 0)
      assert.strictEqual(field(tool, "name"), `evil${HOSTILE}`)
      assert.strictEqual(field(tool, "description"), HOSTILE)
      assert.deepStrictEqual(Object.keys(field(field(tool, "inputSchema"), "properties") ?? {}), [`x${HOSTILE}`])
      const content = field(parse(call), "content")
      assert.deepStrictEqual(content, [{ type: "text", text: HOSTILE }, { type: "text", text: "answer: decline" }])
    }
  )
})

describe("presa-mcp off a terminal", () => {
  it("a pipe gets the server's strings as they are", { timeout: TEST_MS }, async () => {
    const child = ChildProcess.spawn(
      process.execPath,
      ["--import", "tsx", "src/bin.ts", "tools", ...SERVER],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] }
    )
    let stdout = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), RUN_MS)
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve))
    clearTimeout(timer)
    assert.strictEqual(code, 0, stdout)
    assert.include(stdout, `evil${HOSTILE} — ${HOSTILE}`)
  })
})
