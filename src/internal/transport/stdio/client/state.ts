/**
 * The stdio client's state record: everything `spawn` sets up once, passed explicitly to the
 * plain functions of the protocol over the connection core (`protocol`), the reader (`reading`)
 * and the process lifecycle (`lifecycle`). Documented on `Stdio.spawn`.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as MutableRef from "effect/MutableRef"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import type * as JsonRpc from "../../../../JsonRpc.js"
import { TransportError } from "../../../../Transport.js"
import type { SpawnOptions } from "../../../../transport/Stdio.js"
import type * as Core from "../../../client/connection.js"
import type * as ChildProcess from "../../../node/childProcess.js"

/** Default bound of one line read from the server: 64 MiB. */
export const DEFAULT_CLIENT_MAX_LINE_BYTES = 64 * 1024 * 1024
/** Bound of one stderr line handed to `SpawnOptions.stderr`: 1 MiB. */
export const STDERR_MAX_LINE_BYTES = 1024 * 1024
/** Default `SpawnOptions.closeTimeout`. */
export const DEFAULT_CLOSE_TIMEOUT: Duration.DurationInput = "2 seconds"
/** How long to keep reading stdout after the process exited, for replies still in the pipe. */
export const EXIT_GRACE: Duration.DurationInput = "1 second"
/** How long a replayed `initialize` (after a restart) may take. */
export const REPLAY_TIMEOUT: Duration.DurationInput = "10 seconds"

/** One server process and the fibers that read and write it. */
export interface Connection {
  readonly pid: number
  /** Owns the process and its fibers; closed when the process is gone. */
  readonly scope: Scope.CloseableScope
  /**
   * Writes one line to the process's stdin (lines sent in the same tick go out in one write);
   * `false` once the process is gone or its stdin is closed.
   */
  readonly send: (line: string) => boolean
  /** Fails (with why) when this process's stdout ended or the process exited. */
  readonly ended: Deferred.Deferred<never, TransportError>
  /** Closes stdin, then SIGTERM, then SIGKILL; waits for the exit. */
  readonly shutdown: Effect.Effect<void>
}

/** Whether the transport is open, and its process. */
export interface Lifecycle {
  /** Set once the transport is closed for good; every later call fails with it. */
  readonly closed: TransportError | undefined
  /** The current process, or the next one while the transport restarts it. */
  readonly connection: Deferred.Deferred<Connection, TransportError>
  /**
   * The value of `connection` once it is done with a process, `undefined` while one starts or
   * restarts: the request path reads it in the step that writes (no wait on `connection`).
   */
  readonly running: Connection | undefined
}

/** The legacy handshake seen so far, replayed on a restarted process. */
export interface Handshake {
  readonly init: JsonRpc.Request | undefined
  readonly initialized: boolean
}

/** The state record of one stdio client transport, but its connection core. */
export interface Base {
  readonly options: SpawnOptions
  readonly spawnProcess: ChildProcess.SpawnProcess
  readonly spec: ChildProcess.Spec
  readonly closeTimeout: Duration.DurationInput
  /** Bytes; `SpawnOptions.maxLineBytes`, at least 1. */
  readonly maxLineBytes: number
  /** `SpawnOptions.stderr` when it is a function (the child's stderr is then piped). */
  readonly onStderr: ((line: string) => Effect.Effect<void>) | undefined
  /** The transport's scope: restarts run in it. */
  readonly scope: Scope.Scope
  /**
   * The parent of each process's scope, made before `close` is registered, so `close` (the
   * graceful stdin → SIGTERM → SIGKILL sequence) runs before any process scope closes.
   */
  readonly processes: Scope.Scope
  /**
   * A `MutableRef`: every read and update is one synchronous step (single-threaded), so the
   * request path reads it where it writes the request (bench/README.md, "Issue #24: client,
   * session 8").
   */
  readonly lifecycle: MutableRef.MutableRef<Lifecycle>
  readonly handshake: Ref.Ref<Handshake>
  /** The pid of the current process (`-1` before the first starts); mutable, read by `pid`. */
  pid: number
}

/** The state record with the connection core the transport speaks through (`client/protocol`). */
export interface Client extends Base {
  readonly connection: Core.Connection
}

export const closedError = (message: string): TransportError => new TransportError({ reason: "Closed", message })

/** The state record, in the transport's scope; no process is started yet. */
export const make = (
  options: SpawnOptions,
  spawnProcess: ChildProcess.SpawnProcess
): Effect.Effect<Base, never, Scope.Scope> =>
  Effect.gen(function*() {
    const onStderr = options.stderr === undefined || options.stderr === "inherit" ? undefined : options.stderr
    const scope = yield* Effect.scope
    const processes = yield* Scope.fork(scope, ExecutionStrategy.sequential)
    const lifecycle = MutableRef.make<Lifecycle>({
      closed: undefined,
      connection: yield* Deferred.make<Connection, TransportError>(),
      running: undefined
    })
    return {
      options,
      spawnProcess,
      spec: {
        command: options.command,
        args: options.args ?? [],
        env: options.env,
        cwd: options.cwd,
        stderr: onStderr === undefined ? "inherit" : "pipe"
      },
      closeTimeout: options.closeTimeout ?? DEFAULT_CLOSE_TIMEOUT,
      maxLineBytes: Math.max(1, Math.floor(options.maxLineBytes ?? DEFAULT_CLIENT_MAX_LINE_BYTES)),
      onStderr,
      scope,
      processes,
      lifecycle,
      handshake: yield* Ref.make<Handshake>({ init: undefined, initialized: false }),
      pid: -1
    }
  })
