/**
 * A child process with piped stdin/stdout (and optionally stderr), as the stdio client needs it:
 * started in its own process group, its pipes handed to the caller as they are, its exit as an
 * Effect, signals sent to the whole group, and lines written to its stdin one write per tick. The
 * caller reads and writes the pipes from their callbacks, with no Stream or Sink steps per message
 * (measured with `bench/hot.ts stdio`, see bench/README.md).
 *
 * The Node-specific part of the stdio client: the only module of it that uses Node's `process`
 * (environment, platform, `kill`, `nextTick`). `node:child_process` itself is not imported here:
 * `transport/Stdio` passes its `spawn` in; the types below are the parts of Node's `ChildProcess`
 * and its streams that are used.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"
import type * as Frame from "../transport/stdio/frame.js"

type Listener = (...args: Array<unknown>) => void

/** The writable end of a pipe (the child's stdin). */
export interface PipeIn {
  readonly write: (chunk: string) => boolean
  readonly end: () => unknown
  readonly on: (event: string, listener: Listener) => unknown
  readonly off: (event: string, listener: Listener) => unknown
}

/** The part of Node's `ChildProcess` that is used. */
export interface Handle {
  readonly pid?: number | undefined
  readonly stdin: PipeIn | null
  readonly stdout: Frame.Readable | null
  readonly stderr: Frame.Readable | null
  readonly exitCode: number | null
  readonly signalCode: string | null
  readonly kill: (signal: "SIGTERM" | "SIGKILL") => boolean
  readonly on: (event: string, listener: Listener) => unknown
  readonly once: (event: string, listener: Listener) => unknown
}

/** Node's `child_process.spawn`, as far as it is used. */
export type SpawnProcess = (command: string, args: Array<string>, options: {
  readonly cwd: string | undefined
  readonly env: Readonly<Record<string, string | undefined>>
  readonly stdio: ["pipe", "pipe", "inherit" | "pipe"]
  readonly detached: boolean
}) => Handle

/** How the process ended: its exit code, or the signal that terminated it. */
export interface ExitStatus {
  readonly code: number | null
  readonly signal: string | null
}

export interface Spec {
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** Added to this process's environment. */
  readonly env: Readonly<Record<string, string>> | undefined
  readonly cwd: string | undefined
  /** `inherit`: the child writes to our stderr; `pipe`: `Child.stderr` is readable. */
  readonly stderr: "inherit" | "pipe"
}

export interface Child {
  readonly pid: number
  readonly stdin: PipeIn
  readonly stdout: Frame.Readable
  /** Set when `Spec.stderr` is `"pipe"`. */
  readonly stderr: Frame.Readable | undefined
  /** Succeeds once the process has exited. */
  readonly exited: Effect.Effect<ExitStatus>
  readonly hasExited: () => boolean
  /** Sends `signal` to the process group (falling back to the process itself). */
  readonly kill: (signal: "SIGTERM" | "SIGKILL") => Effect.Effect<void>
}

const signalGroup = (child: Handle, signal: "SIGTERM" | "SIGKILL"): void => {
  const pid = child.pid
  if (pid === undefined) return
  try {
    if (process.platform === "win32") {
      child.kill(signal)
    } else {
      process.kill(-pid, signal)
    }
  } catch {
    try {
      child.kill(signal)
    } catch {
      // already gone
    }
  }
}

/**
 * Starts the process; fails with the spawn error (`ENOENT`, bad `cwd`, …) as an `Error`. When the
 * Scope closes, a process still running gets SIGKILL on its group (a graceful stop is the
 * caller's job before that).
 */
export const spawn = (spawnProcess: SpawnProcess, spec: Spec): Effect.Effect<Child, Error, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<Child, Error>((resume) => {
      let handle: Handle
      try {
        handle = spawnProcess(spec.command, [...spec.args], {
          cwd: spec.cwd,
          env: spec.env === undefined ? process.env : { ...process.env, ...spec.env },
          stdio: ["pipe", "pipe", spec.stderr],
          detached: process.platform !== "win32"
        })
      } catch (error) {
        return resume(Effect.fail(error instanceof Error ? error : new Error(String(error))))
      }
      const exit = Deferred.unsafeMake<ExitStatus>(FiberId.none)
      let started = false
      handle.on("exit", (code, signal) => {
        Deferred.unsafeDone(
          exit,
          Exit.succeed({
            code: typeof code === "number" ? code : null,
            signal: typeof signal === "string" ? signal : null
          })
        )
      })
      handle.on("error", (error) => {
        // before 'spawn': the process never started; later: a failed kill, which `kill` covers
        if (!started) resume(Effect.fail(error instanceof Error ? error : new Error(String(error))))
      })
      handle.once("spawn", () => {
        started = true
        const { pid, stderr, stdin, stdout } = handle
        const current = handle
        if (pid === undefined || stdin === null || stdout === null) {
          return resume(Effect.fail(new Error("the process has no pid or pipes")))
        }
        resume(Effect.succeed({
          pid,
          stdin,
          stdout,
          stderr: stderr ?? undefined,
          exited: Deferred.await(exit),
          hasExited: () => current.exitCode !== null || current.signalCode !== null,
          kill: (signal) => Effect.sync(() => signalGroup(current, signal))
        }))
      })
    }),
    (child) => child.hasExited() ? Effect.void : child.kill("SIGKILL")
  )

/**
 * Lines for a child's stdin. Unbounded: callers are bounded by awaiting their replies, and a
 * cancel notification sent by an interrupted caller must never wait.
 */
export interface LineWriter {
  /**
   * Writes one line (`JSON + "\n"`). The first line of a tick is written at once (no added
   * latency when sequential); lines sent later in the same tick join one write on the next tick.
   * `false` once the writer is stopped or ended.
   */
  readonly send: (line: string) => boolean
  /** Writes what waits, then closes stdin; later lines are refused. */
  readonly end: () => void
  /** Refuses every later line and drops what waits (the process is gone or its stdin failed). */
  readonly stop: () => void
}

/** A {@link LineWriter} over `stdin`. */
export const lineWriter = (stdin: PipeIn): LineWriter => {
  let writable = true
  let batch: Array<string> | undefined
  const flushBatch = (): void => {
    const lines = batch
    batch = undefined
    if (lines !== undefined && lines.length > 0 && writable) stdin.write(lines.join(""))
  }
  return {
    send: (line) => {
      if (!writable) return false
      if (batch !== undefined) {
        batch.push(line)
        return true
      }
      batch = []
      process.nextTick(flushBatch)
      stdin.write(line)
      return true
    },
    end: () => {
      if (!writable) return
      flushBatch()
      writable = false
      stdin.end()
    },
    stop: () => {
      writable = false
    }
  }
}
