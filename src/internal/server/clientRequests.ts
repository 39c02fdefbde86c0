/**
 * Server→client requests of a legacy session (`elicitation/create`, `sampling/createMessage`,
 * `roots/list`): a table of pending requests keyed by server-generated string ids, settled by the
 * client's responses. Shared by the stdio and HTTP server transports.
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as JsonRpc from "../../JsonRpc.js"

/** Default bound on the wait for the client's answer. */
export const DEFAULT_TIMEOUT: Duration.DurationInput = "60 seconds"

/** The pending table of one session. */
export interface Pending {
  readonly next: Ref.Ref<number>
  readonly table: Ref.Ref<HashMap.HashMap<string, Deferred.Deferred<JsonRpc.JsonObject, JsonRpc.McpError>>>
}

export const make: Effect.Effect<Pending> = Effect.map(
  Effect.all([Ref.make(0), Ref.make(HashMap.empty<string, Deferred.Deferred<JsonRpc.JsonObject, JsonRpc.McpError>>())]),
  ([next, table]) => ({ next, table })
)

/**
 * Sends a request with `write` and waits for the answer at most `timeout`. The id is `s2c-<n>`. An
 * error response fails with its `McpError`; no answer in time fails with -32603 (after sending
 * `notifications/cancelled` for it). Interruption, completion and timeout remove the entry.
 */
export const send = (
  pending: Pending,
  write: (message: JsonRpc.Request | JsonRpc.Notification) => Effect.Effect<void>,
  timeout: Duration.DurationInput = DEFAULT_TIMEOUT
) =>
(method: string, params: JsonRpc.JsonObject | undefined): Effect.Effect<JsonRpc.JsonObject, JsonRpc.McpError> =>
  Effect.acquireUseRelease(
    Effect.gen(function*() {
      const id = `s2c-${yield* Ref.getAndUpdate(pending.next, (i) => i + 1)}`
      const answer = yield* Deferred.make<JsonRpc.JsonObject, JsonRpc.McpError>()
      yield* Ref.update(pending.table, HashMap.set(id, answer))
      return { id, answer }
    }),
    ({ answer, id }) =>
      write(JsonRpc.request(id, method, params)).pipe(
        Effect.zipRight(Effect.timeoutOption(Deferred.await(answer), timeout)),
        Effect.flatMap(Option.match({
          onSome: Effect.succeed,
          onNone: () =>
            write(JsonRpc.notification("notifications/cancelled", { requestId: id, reason: "timeout" })).pipe(
              Effect.zipRight(
                new JsonRpc.McpError({
                  code: JsonRpc.ErrorCode.InternalError,
                  message: `The client did not answer ${method} within ${Duration.format(Duration.decode(timeout))}`
                })
              )
            )
        }))
      ),
    ({ id }) => Ref.update(pending.table, HashMap.remove(id))
  )

/** Settles the request a response answers; `false` when none with that id is pending. */
export const resolve = (pending: Pending, response: JsonRpc.Response): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    if (typeof response.id !== "string") return false
    const id = response.id
    const answer = yield* Ref.modify(pending.table, (m) => [HashMap.get(m, id), HashMap.remove(m, id)] as const)
    if (Option.isNone(answer)) return false
    if (JsonRpc.isErrorResponse(response)) {
      const { code, data, message } = response.error
      return yield* Deferred.fail(
        answer.value,
        new JsonRpc.McpError(data === undefined ? { code, message } : { code, message, data })
      )
    }
    return yield* Deferred.succeed(answer.value, response.result)
  })
