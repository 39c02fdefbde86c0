/**
 * What other instances signal about a shared legacy session (`Cluster.SessionStore` `signals`):
 * `State` (a request there changed the session's state), `Message` (a client's response or
 * `notifications/cancelled` that reached another instance: the request it concerns may run here),
 * `Closed` (the session was terminated).
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import type * as Cluster from "../../../../Cluster.js"
import type * as JsonRpc from "../../../../JsonRpc.js"
import * as Connection from "../../../server/connection.js"
import type { HttpSession, StoreState } from "./model.js"
import { adopt } from "./replica.js"
import { closeLocal } from "./sweep.js"

/** Handles one signal for `s`, whose own (unwrapped) connection is `base`. */
export const onSignal = (
  state: StoreState,
  s: HttpSession,
  base: Connection.Connection,
  signal: Cluster.SessionSignal
): Effect.Effect<void> => {
  switch (signal._tag) {
    case "State":
      return adopt(s, signal.state)
    case "Message": {
      const message = signal.message
      const classified: JsonRpc.Classified = "method" in message
        ? { _tag: "Notification", message }
        : { _tag: "Response", message }
      return base.receive({ message: classified }, Connection.noOutlet)
    }
    case "Closed":
      // not in the session's own scope: closing it interrupts this fiber
      return Effect.asVoid(Effect.forkIn(closeLocal(state, s.id), state.scope))
  }
}

/** Subscribes to the session's signals and handles them one by one, in the session's scope. */
export const listen = (
  state: StoreState,
  shared: Cluster.SessionStoreShape,
  session: HttpSession,
  base: Connection.Connection
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const signals = yield* shared.signals(session.id).pipe(Scope.extend(session.scope))
    yield* Effect.forkIn(
      Effect.forever(Effect.flatMap(Queue.take(signals), (signal) => onSignal(state, session, base, signal))),
      session.scope
    )
  })
