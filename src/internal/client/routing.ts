/**
 * Routing of one request's notifications to the caller's hooks (MCP 2026-07-28, Progress and
 * Logging): `notifications/progress` with the request's token → `onProgress` (strictly
 * increasing values only), `notifications/message` → `onLog`, everything → `onNotification`.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as JsonRpc from "../../JsonRpc.js"
import type { CallOptions, LogMessage, Progress } from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"

const levelOf = (u: unknown): McpSchema.LoggingLevel | undefined => McpSchema.LOGGING_LEVELS.find((l) => l === u)

const NO_ROUTER = Effect.succeed(undefined)

/** Does the caller pass a notification hook (`onProgress`, `onLog`, `onNotification`)? */
export const hasHooks = (options: CallOptions): boolean =>
  options.onProgress !== undefined || options.onLog !== undefined || options.onNotification !== undefined

/**
 * The `onNotification` of one round of a call, or `undefined` when the caller has no hook.
 * Progress values are tracked per round: a retried MRTR request restarts the server's work.
 */
export const makeRouter = (
  token: JsonRpc.RequestId | undefined,
  options: CallOptions
): Effect.Effect<((notification: JsonRpc.Notification) => Effect.Effect<void>) | undefined> =>
  !hasHooks(options)
    ? NO_ROUTER
    : Effect.gen(function*() {
      const { onLog, onNotification, onProgress } = options
      const last = yield* Ref.make(Number.NEGATIVE_INFINITY)

      const progress = (params: JsonRpc.JsonObject): Effect.Effect<void> =>
        Effect.gen(function*() {
          if (onProgress === undefined) return
          const got = params.progressToken
          if (token === undefined || got !== token) {
            return yield* Effect.logDebug("ignored a progress notification for an unknown token").pipe(
              Effect.annotateLogs("progressToken", String(got))
            )
          }
          const value = params.progress
          if (typeof value !== "number" || !Number.isFinite(value)) {
            return yield* Effect.logDebug("ignored a progress notification without a numeric progress")
          }
          const increasing = yield* Ref.modify(last, (prev) => value > prev ? [true, value] : [false, prev])
          if (!increasing) {
            return yield* Effect.logDebug(`ignored a progress notification whose value does not increase: ${value}`)
          }
          const update: Progress = {
            progressToken: token,
            progress: value,
            ...(typeof params.total === "number" ? { total: params.total } : {}),
            ...(typeof params.message === "string" ? { message: params.message } : {})
          }
          yield* onProgress(update)
        })

      const log = (params: JsonRpc.JsonObject): Effect.Effect<void> => {
        if (onLog === undefined) return Effect.void
        const level = levelOf(params.level)
        if (level === undefined) return Effect.logDebug(`ignored a log message with level ${String(params.level)}`)
        const message: LogMessage = {
          level,
          data: params.data,
          ...(typeof params.logger === "string" ? { logger: params.logger } : {})
        }
        return onLog(message)
      }

      return (notification) =>
        Effect.gen(function*() {
          const params = notification.params ?? {}
          if (notification.method === McpSchema.Method.progress) yield* progress(params)
          else if (notification.method === McpSchema.Method.message) yield* log(params)
          if (onNotification !== undefined) yield* onNotification(notification)
        })
    })
