/**
 * What the stdio server writes, as the client reads it: each stdout line is decoded once; a
 * response whose caller waits is settled right in the read callback (no fiber), anything else
 * (notifications, server→client requests, stray lines) is handled by an Effect that runs before
 * the next line. Also the child's stderr lines and `sessionNotifications`. Framing: MCP
 * 2025-11-25, Transports › stdio (one JSON-RPC message per line; stderr is free-form logging).
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberMap from "effect/FiberMap"
import { identity } from "effect/Function"
import * as MutableRef from "effect/MutableRef"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../../../JsonRpc.js"
import * as McpSchema from "../../../../McpSchema.js"
import type { StdioClientTransport } from "../../../../transport/Stdio.js"
import * as Frame from "../frame.js"
import { current, sendOn, unsafeTake } from "./requests.js"
import { type Client, type Connection, type Pending, STDERR_MAX_LINE_BYTES } from "./state.js"

/** A line from the server, parsed once. */
type Incoming =
  | JsonRpc.Classified
  | { readonly _tag: "Oversized"; readonly bytes: number }
  | { readonly _tag: "NotJson"; readonly text: string }

type RunFork = (effect: Effect.Effect<void>) => Fiber.RuntimeFiber<void>

const decode = (frame: Frame.Frame): Incoming => {
  if (frame._tag === "Oversized") return frame
  const value = Frame.parseJson(frame.text)
  if (Option.isNone(value)) return { _tag: "NotJson", text: frame.text }
  return JsonRpc.classify(value.value)
}

/** A response whose caller waits, settled synchronously from the read callback. */
const settle = (client: Client, incoming: Incoming): boolean => {
  if (incoming._tag !== "Response") return false
  const id = incoming.message.id
  if (id === undefined || id === null) return false
  const entry = unsafeTake(client, id)
  if (entry === undefined) return false
  entry.settle(Exit.succeed(incoming.message))
  return true
}

const preview = (text: string): string => text.length > 200 ? `${text.slice(0, 200)}…` : text

/** A user handler (`onNotification`, `stderr`): its defect is logged, never fatal. */
const safely = (handler: Effect.Effect<void>): Effect.Effect<void> =>
  handler.pipe(Effect.catchAllDefect((defect) => Effect.logWarning("an onNotification handler died", defect)))

/** A notification no request in flight takes: to `sessionNotifications` and `onNotification`. */
const unrouted = (client: Client, notification: JsonRpc.Notification): Effect.Effect<void> =>
  Effect.zipRight(
    PubSub.publish(client.unsolicited, notification),
    client.options.onNotification === undefined
      ? Effect.logDebug(`dropped a server notification: ${notification.method}`)
      : safely(client.options.onNotification(notification))
  )

/** Delivers a notification to the requests in flight it belongs to, else to {@link unrouted}. */
const route = (client: Client, notification: JsonRpc.Notification): Effect.Effect<void> =>
  Effect.gen(function*() {
    const params = notification.params ?? {}
    const meta = JsonRpc.isObject(params._meta) ? params._meta : {}
    const subscriptionId = meta[McpSchema.MetaKey.subscriptionId]
    let targets: Array<Pending> = []
    if (JsonRpc.isRequestId(subscriptionId)) {
      // a subscriptions/listen stream, whose subscriptionId is the listen request's id (MCP
      // 2026-07-28, Subscriptions); compared leniently, as some servers stringify numeric ids
      for (const [id, entry] of client.pending) {
        if (String(id) === String(subscriptionId)) targets.push(entry)
      }
    } else if (notification.method === McpSchema.Method.progress) {
      const token = params.progressToken
      for (const entry of client.pending.values()) {
        if (entry.progressToken !== undefined && entry.progressToken === token) targets.push(entry)
      }
      if (targets.length === 0) {
        return yield* Effect.logDebug("dropped a progress notification for an unknown token").pipe(
          Effect.annotateLogs("progressToken", String(token))
        )
      }
    } else if (notification.method === McpSchema.Method.cancelled) {
      const requestId = params.requestId
      // the server gave up one of its own requests (legacy): stop answering it
      if (JsonRpc.isRequestId(requestId) && (yield* FiberMap.has(client.serverRequests, requestId))) {
        yield* FiberMap.remove(client.serverRequests, requestId)
      }
      const entry = JsonRpc.isRequestId(requestId) ? client.pending.get(requestId) : undefined
      if (entry === undefined) return yield* Effect.logDebug("ignored notifications/cancelled from the server")
      targets = [entry]
    } else if (notification.method === McpSchema.Method.message) {
      // stdio has no correlation field for log messages: every request in flight gets them
      targets = Array.from(client.pending.values())
    }
    const handlers = targets.flatMap((t) => t.onNotification === undefined ? [] : [t.onNotification])
    if (handlers.length === 0) return yield* unrouted(client, notification)
    for (const handler of handlers) yield* safely(handler(notification))
  })

/** Everything but a response whose caller waits (that one {@link settle} took). */
const handle = (client: Client, send: Connection["send"], incoming: Incoming): Effect.Effect<void> => {
  switch (incoming._tag) {
    case "Oversized":
      return Effect.logWarning(
        `dropped a line of ${incoming.bytes} bytes from the server (limit ${client.maxLineBytes})`
      )
    case "NotJson":
      return Effect.logWarning(`skipped a line from the server that is not JSON: ${preview(incoming.text)}`)
    case "Response": {
      // not settled (onStdout tried first): no caller waits for it
      const response = incoming.message
      if (response.id === undefined || response.id === null) {
        return Effect.logWarning("the server sent an error not tied to a request").pipe(
          Effect.annotateLogs("error", JsonRpc.encode(response))
        )
      }
      return Effect.logDebug("a response for a request that is not pending (unknown, or cancelled)").pipe(
        Effect.annotateLogs("requestId", response.id)
      )
    }
    case "Notification":
      return route(client, incoming.message)
    case "Request": {
      const request = incoming.message
      return FiberMap.run(
        client.serverRequests,
        request.id,
        Effect.flatMap(client.handlers.answer(request), (response) => sendOn(send, response)),
        { onlyIfMissing: true }
      ).pipe(Effect.asVoid)
    }
    case "Invalid":
      return Effect.logWarning(`skipped an invalid message from the server: ${incoming.error.message}`)
  }
}

/**
 * Reads the process's stdout until it ends: a response whose caller waits is settled right in
 * the read callback; anything else runs in a fiber (`runFork`) before the next line is handled.
 * Answers to server→client requests are written with `send`.
 */
export const readStdout = (
  client: Client,
  stdout: Frame.Readable,
  send: Connection["send"],
  runFork: RunFork
): Effect.Effect<void, unknown> => {
  const onStdout = (frame: Frame.Frame): Effect.Effect<void> | undefined => {
    const incoming = decode(frame)
    return settle(client, incoming) ? undefined : handle(client, send, incoming)
  }
  return Frame.readFrom(stdout, client.maxLineBytes, onStdout, runFork, identity)
}

/** Hands each stderr line to `onStderr` (lines over 1 MiB are dropped and logged). */
export const readStderr = (
  stderr: Frame.Readable,
  onStderr: (line: string) => Effect.Effect<void>,
  runFork: RunFork
): Effect.Effect<void, unknown> => {
  const onStderrLine = (frame: Frame.Frame): Effect.Effect<void> =>
    frame._tag === "Line"
      ? safely(onStderr(frame.text))
      : Effect.logDebug(`dropped a stderr line of ${frame.bytes} bytes`)
  return Frame.readFrom(stderr, STDERR_MAX_LINE_BYTES, onStderrLine, runFork, identity)
}

/** The transport's `sessionNotifications`: the unrouted notifications of the current process. */
export const sessionNotifications = (client: Client): StdioClientTransport["sessionNotifications"] =>
  Effect.gen(function*() {
    const connection = yield* current(client)
    const subscription = yield* PubSub.subscribe(client.unsolicited)
    const { closed } = MutableRef.get(client.lifecycle)
    if (closed !== undefined) return yield* closed
    return Stream.fromQueue(subscription).pipe(Stream.interruptWhen(Deferred.await(connection.ended)))
  })
