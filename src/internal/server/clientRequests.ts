/**
 * Server→client requests of a legacy session (`elicitation/create`, `sampling/createMessage`,
 * `roots/list`; MCP 2025-11-25, Client Features): a table of pending requests keyed by
 * server-generated string ids, settled by the client's responses. Owned by the connection
 * (`connection.ts`), one per legacy session.
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"

/** Default bound on the wait for the client's answer. */
export const DEFAULT_TIMEOUT: Duration.DurationInput = "60 seconds"

/** The pending table of one session. */
export interface Pending {
  next: number
  /** Put before the counter in each id. */
  readonly prefix: string
  readonly table: Map<string, Deferred.Deferred<JsonRpc.JsonObject, JsonRpc.McpError>>
}

/** A new, empty table. */
export const makeUnsafe = (prefix = ""): Pending => ({ next: 0, prefix, table: new Map() })

/**
 * Sends a request with `write` and waits for the answer at most `timeout`. The id is `s2c-<prefix><n>`. An
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
    Effect.map(Deferred.make<JsonRpc.JsonObject, JsonRpc.McpError>(), (answer) => {
      const id = `s2c-${pending.prefix}${pending.next++}`
      pending.table.set(id, answer)
      return { id, answer }
    }),
    ({ answer, id }) =>
      write(JsonRpc.request(id, method, params)).pipe(
        Effect.zipRight(Effect.timeoutOption(Deferred.await(answer), timeout)),
        Effect.flatMap(Option.match({
          onSome: Effect.succeed,
          onNone: () =>
            write(JsonRpc.notification(McpSchema.Method.cancelled, { requestId: id, reason: "timeout" })).pipe(
              Effect.zipRight(
                new JsonRpc.McpError({
                  code: JsonRpc.ErrorCode.InternalError,
                  message: `The client did not answer ${method} within ${Duration.format(Duration.decode(timeout))}`
                })
              )
            )
        }))
      ),
    ({ id }) =>
      Effect.sync(() => {
        pending.table.delete(id)
      })
  )

/** Settles the request a response answers; `false` when none with that id is pending. */
export const resolve = (pending: Pending, response: JsonRpc.Response): Effect.Effect<boolean> =>
  Effect.suspend(() => {
    if (typeof response.id !== "string") return Effect.succeed(false)
    const answer = pending.table.get(response.id)
    if (answer === undefined) return Effect.succeed(false)
    pending.table.delete(response.id)
    return JsonRpc.isErrorResponse(response)
      ? Deferred.fail(answer, JsonRpc.McpError.fromErrorObject(response.error))
      : Deferred.succeed(answer, response.result)
  })
