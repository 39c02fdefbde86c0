/**
 * The stdio client: spawns a server process and speaks newline-delimited JSON-RPC over its
 * stdin/stdout (MCP 2025-11-25 and 2026-07-28, Transports › stdio). Documented on
 * `Stdio.spawn`. The parts, over one state record (`client/state`) and the client connection
 * core (`internal/client/connection`: requests in flight, routing, server→client requests): the
 * message-level protocol that frames messages as lines (`client/protocol`), reading stdout and
 * stderr (`client/reading`), the process lifecycle with restart and shutdown
 * (`client/lifecycle`); the Node-specific process handling is in `childProcess`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { TransportError } from "../../../Transport.js"
import type { SpawnOptions, StdioClientTransport } from "../../../transport/Stdio.js"
import * as Core from "../../client/connection.js"
import type * as ChildProcess from "../../node/childProcess.js"
import * as Lifecycle from "./client/lifecycle.js"
import * as Protocol from "./client/protocol.js"
import * as State from "./client/state.js"

/** A spawned server is reached over pipes (semantic-conventions-genai, docs/gen-ai/mcp.md, "Recording MCP transport"). */
const PIPE = { transport: "pipe" } as const

export const spawn = (
  options: SpawnOptions,
  spawnProcess: ChildProcess.SpawnProcess
): Effect.Effect<StdioClientTransport, TransportError, Scope.Scope> =>
  Effect.gen(function*() {
    const base = yield* State.make(options, spawnProcess)
    const connection = yield* Core.make(
      { onNotification: options.onNotification, onRequest: options.onRequest },
      () => Protocol.make(base)
    )
    const client: State.Client = Object.assign(base, { connection })
    yield* Lifecycle.startFirst(client)
    const close = yield* Effect.cached(Lifecycle.close(client))
    // Registered last, so it runs first when the scope closes: the fibers above are still alive.
    yield* Effect.addFinalizer(() => close)
    return {
      request: (message, requestOptions) => Protocol.request(client, message, requestOptions),
      notify: (message) => Protocol.notify(client, message),
      get pid() {
        return client.pid
      },
      setRequestHandler: connection.handlers.set,
      sessionNotifications: Core.sessionNotifications(connection),
      peer: PIPE
    }
  })
