/** A test backend that can die: a client wrapper for the proxy tests. */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { type McpClient, Transport } from "presa-mcp"

/** A client whose calls and requests fail with `TransportError` "Closed" once `alive` is false. */
export const mortal = (real: McpClient.McpClient, alive: Ref.Ref<boolean>): McpClient.McpClient => {
  const gone = new Transport.TransportError({ reason: "Closed", message: "the backend went away" })
  const guarded = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E | Transport.TransportError> =>
    Effect.flatMap(
      Ref.get(alive),
      (ok): Effect.Effect<A, E | Transport.TransportError> => (ok ? effect : Effect.fail(gone))
    )
  return {
    ...real,
    request: (method, params, options) => guarded(real.request(method, params, options)),
    callTool: (name, args, options) => guarded(real.callTool(name, args, options))
  }
}
