/**
 * The stdio client: spawns a server process and speaks newline-delimited JSON-RPC over its
 * stdin/stdout (MCP 2025-11-25 and 2026-07-28, Transports › stdio). Documented on
 * `Stdio.spawn`. The parts, over one state record (`client/state`): the request table and
 * writing (`client/requests`), reading stdout and stderr (`client/reading`), the process
 * lifecycle with restart and shutdown (`client/lifecycle`); the Node-specific process handling
 * is in `childProcess`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { TransportError } from "../../../Transport.js"
import type { SpawnOptions, StdioClientTransport } from "../../../transport/Stdio.js"
import type * as ChildProcess from "../../node/childProcess.js"
import * as Lifecycle from "./client/lifecycle.js"
import * as Reading from "./client/reading.js"
import * as Requests from "./client/requests.js"
import * as State from "./client/state.js"

/** A spawned server is reached over pipes (semantic-conventions-genai, docs/gen-ai/mcp.md, "Recording MCP transport"). */
const PIPE = { transport: "pipe" } as const

export const spawn = (
  options: SpawnOptions,
  spawnProcess: ChildProcess.SpawnProcess
): Effect.Effect<StdioClientTransport, TransportError, Scope.Scope> =>
  Effect.gen(function*() {
    const client = yield* State.make(options, spawnProcess)
    yield* Lifecycle.startFirst(client)
    const close = yield* Effect.cached(Lifecycle.close(client))
    // Registered last, so it runs first when the scope closes: the fibers above are still alive.
    yield* Effect.addFinalizer(() => close)
    return {
      request: (message, requestOptions) => Requests.request(client, message, requestOptions),
      notify: (message) => Requests.notify(client, message),
      get pid() {
        return client.pid
      },
      setRequestHandler: client.handlers.set,
      sessionNotifications: Reading.sessionNotifications(client),
      peer: PIPE
    }
  })
