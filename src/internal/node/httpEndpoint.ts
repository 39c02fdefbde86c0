/**
 * The MCP endpoint of `StreamableHttp.serve` as a `node:http` request listener (MCP 2025-11-25
 * and 2026-07-28, Basic, Transports, "Streamable HTTP"). The handling is the platform path's
 * (`transport/http/server.ts` and `post.ts` over an `EndpointRequest`); what differs is the edge:
 * the body is read from the `IncomingMessage` once, and a request's messages are written to the
 * `ServerResponse` as they come (one JSON body, or an SSE stream once a message precedes the
 * reply), so a request costs one fiber and no response value, mailbox or fork of its own. The
 * platform's pipeline (`HttpApp.toHandled`: its scope, error handling and tracer middleware per
 * request) still serves every other path of the server (health, OAuth metadata, 404).
 * @internal
 */
import * as HttpServerError from "@effect/platform/HttpServerError"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import type * as NodeHttp from "node:http"
import * as Connection from "../server/connection.js"
import {
  type Answer,
  type ExchangeArgs,
  internalError,
  isSent,
  JSON_TYPE_HEADER,
  plainFraming,
  sent,
  SSE_RESPONSE_HEADERS
} from "../transport/http/responses.js"
import type { Endpoint } from "../transport/http/server.js"
import type { EndpointRequest } from "../transport/http/state.js"
import * as Http from "../transport/http/wire.js"

/** A Node request listener. */
export type Listener = (request: NodeHttp.IncomingMessage, response: NodeHttp.ServerResponse) => void

/**
 * The listener of the endpoint, running each request in the current runtime (its context and
 * fiber refs: logger, tracer). A response closed before it ended (the client went away)
 * interrupts its request's fiber, as the platform's listener does.
 */
export const makeListener = (endpoint: Endpoint): Effect.Effect<Listener> =>
  Effect.map(Effect.runtime<never>(), (runtime) => {
    const runFork = Runtime.runFork(runtime)
    return (request, response) => {
      const fiber = runFork(serveOne(endpoint, request, response))
      response.on("close", () => {
        if (!response.writableEnded) fiber.unsafeInterruptAsFork(HttpServerError.clientAbortFiberId)
      })
    }
  })

const serveOne = (
  endpoint: Endpoint,
  request: NodeHttp.IncomingMessage,
  response: NodeHttp.ServerResponse
): Effect.Effect<void> =>
  // No `Effect.scoped`: the Node exchange needs no Scope (`EndpointRequest`'s `R` is `never`);
  // a GET's SSE stream is run by `Stream.runForEach`, which scopes itself.
  Effect.flatMap(endpoint(fromNode(request, response)), (answer) => write(response, answer)).pipe(
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause) ? Effect.void : Effect.zipRight(
        Effect.logError("Streamable HTTP: the request failed with a defect", cause),
        Effect.sync(() => {
          if (!response.headersSent && isOpen(response)) response.writeHead(500)
          if (isOpen(response)) response.end()
        })
      )
    )
  )

const isOpen = (response: NodeHttp.ServerResponse): boolean => !response.writableEnded && !response.destroyed

const fromNode = (request: NodeHttp.IncomingMessage, response: NodeHttp.ServerResponse): EndpointRequest => ({
  method: request.method ?? "GET",
  headers: request.headers,
  remoteAddress: request.socket.remoteAddress,
  body: readBody(request, Number.POSITIVE_INFINITY, 0),
  bodyBounded: (maxBytes, discardBytes) => readBody(request, maxBytes, discardBytes),
  exchange: (args) => exchange(response, args)
})

/** The request body could not be read (the client went away, a malformed chunk). */
class BodyUnreadable {
  readonly _tag = "BodyUnreadable"
  constructor(readonly cause: unknown) {}
}

/**
 * The body in one piece, counted as it arrives: past `maxBytes` the chunks are dropped until the
 * end (`BodyTooLarge` then) unless more than `discardBytes` follow (`BodyTooLarge` at once, and
 * reading stops): `wire.ts` `bodyLimit`, the rule `readBounded` applies to the platform's stream.
 */
const readBody = (
  request: NodeHttp.IncomingMessage,
  maxBytes: number,
  discardBytes: number
): Effect.Effect<Uint8Array, Http.BodyTooLarge | BodyUnreadable> =>
  Effect.async((resume) => {
    let chunks: Array<Buffer> = []
    let size = 0
    const cleanup = () => {
      request.off("data", onData)
      request.off("end", onEnd)
      request.off("error", onError)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength
      switch (Http.bodyLimit(size, maxBytes, discardBytes)) {
        case "keep":
          chunks.push(chunk)
          break
        case "drop":
          chunks = []
          break
        case "stop":
          cleanup()
          request.pause()
          resume(Effect.fail(new Http.BodyTooLarge({ limitBytes: maxBytes })))
      }
    }
    const onEnd = () => {
      cleanup()
      if (size > maxBytes) return resume(Effect.fail(new Http.BodyTooLarge({ limitBytes: maxBytes })))
      const only = chunks.length === 1 ? chunks[0] : undefined
      resume(Effect.succeed(only ?? Buffer.concat(chunks, size)))
    }
    const onError = (error: unknown) => {
      cleanup()
      resume(Effect.fail(new BodyUnreadable(error)))
    }
    request.on("data", onData)
    request.on("end", onEnd)
    request.on("error", onError)
    return Effect.sync(cleanup)
  })

/** Resumes once the response can take more (or is gone). */
const drained = (response: NodeHttp.ServerResponse): Effect.Effect<void> =>
  Effect.async((resume) => {
    const go = () => {
      response.off("drain", go)
      response.off("close", go)
      resume(Effect.void)
    }
    response.on("drain", go)
    response.on("close", go)
    return Effect.sync(() => {
      response.off("drain", go)
      response.off("close", go)
    })
  })

const writeJson = (
  response: NodeHttp.ServerResponse,
  status: number,
  text: string,
  headers?: Readonly<Record<string, string>>
): void => {
  if (!isOpen(response)) return
  response.writeHead(status, { ...headers, ...JSON_TYPE_HEADER, "content-length": Buffer.byteLength(text) })
  response.end(text)
}

/**
 * One request's exchange written straight to the response (the semantics of `responses.ts`
 * `exchange`): the reply alone is one JSON body; a message before it (the client accepting
 * `text/event-stream`) opens an SSE stream that the reply ends, with a `: ping` comment every
 * `keepAlive`. A request interrupted before its reply gets `204` (or its stream ends); one that
 * failed with a defect `500` -32603. A write the client does not read waits for `drain`.
 */
const exchange = (response: NodeHttp.ServerResponse, args: ExchangeArgs): Effect.Effect<Answer> =>
  Effect.suspend(() => {
    // 0: nothing written; 1: an SSE stream is open; 2: ended
    let phase: 0 | 1 | 2 = 0
    let ping: ReturnType<typeof setInterval> | undefined
    let finished = false
    let settle: (() => void) | undefined
    const stopPing = () => {
      if (ping !== undefined) clearInterval(ping)
      ping = undefined
    }
    const end = () => {
      phase = 2
      stopPing()
    }
    const framing = args.framing ?? plainFraming
    let replied = false
    const frames = (text: string): Effect.Effect<void> => {
      if (phase === 2 || !isOpen(response)) return Effect.void
      if (phase === 0) {
        phase = 1
        response.writeHead(200, SSE_RESPONSE_HEADERS)
        ping = setInterval(() => {
          if (isOpen(response)) response.write(Http.ssePing)
        }, Math.max(1, Duration.toMillis(args.keepAlive)))
        ping.unref()
        response.once("close", stopPing)
      }
      return response.write(text) ? Effect.void : drained(response)
    }
    const last = (text: string): Effect.Effect<void> =>
      Effect.sync(() => {
        if (phase === 1 && isOpen(response)) response.end(text)
      })
    // a message was written (or recorded) before the reply: the reply goes on the SSE stream
    let streaming = false
    const outlet: Connection.Outlet = {
      reply: (reply, text) =>
        streaming
          ? Effect.zipRight(
            framing.write(reply.message, text, last),
            Effect.sync(() => {
              replied = true
              end()
            })
          )
          : Effect.sync(() => {
            if (phase === 0) writeJson(response, args.status(reply), text, reply.headers)
            end()
          }),
      send: args.sse
        ? (message) =>
          Effect.flatMap(Connection.encodeOutgoing(message), (text) => {
            if (text === undefined) return Effect.void
            streaming = true
            return framing.write(message, text, frames)
          })
        : undefined,
      done: (exit) => {
        const failed = Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause)
        const close = Effect.sync(() => {
          if (phase === 0) {
            if (failed) {
              const outcome = internalError(args.id)
              writeJson(response, outcome.status, outcome.text)
            } else if (isOpen(response)) {
              response.writeHead(204)
              response.end()
            }
          } else if (phase === 1 && isOpen(response)) {
            response.end(failed ? Http.sseEvent(internalError(args.id).text) : undefined)
          }
          end()
          finished = true
          settle?.()
        })
        const ended = Effect.suspend(() => streaming ? framing.done(replied) : Effect.void)
        return failed
          ? Effect.zipRight(Effect.logError("Streamable HTTP: request failed with a defect", exit.cause), close).pipe(
            Effect.zipRight(ended)
          )
          : Effect.zipRight(close, ended)
      },
      inline: args.runsInline
    }
    const awaitDone: Effect.Effect<Answer> = Effect.suspend(() =>
      finished ? Effect.succeed(sent) : Effect.async<Answer>((resume) => {
        settle = () => resume(Effect.succeed(sent))
        return Effect.sync(() => {
          settle = undefined
        })
      })
    )
    return Effect.zipRight(args.start(outlet), awaitDone)
  })

/** Writes an answer the handling built as a value (refusals, `202`, a GET's SSE stream). */
const write = (response: NodeHttp.ServerResponse, answer: Answer): Effect.Effect<void> => {
  if (isSent(answer) || !isOpen(response)) return Effect.void
  return writeValue(response, answer)
}

const writeValue = (
  response: NodeHttp.ServerResponse,
  value: HttpServerResponse.HttpServerResponse
): Effect.Effect<void> => {
  const body = value.body
  switch (body._tag) {
    case "Empty":
      response.writeHead(value.status, value.headers)
      response.end()
      return Effect.void
    case "Uint8Array":
      response.writeHead(value.status, value.headers)
      response.end(body.body)
      return Effect.void
    case "Stream":
      response.writeHead(value.status, value.headers)
      return Stream.runForEach(
        body.stream,
        (bytes) => isOpen(response) && !response.write(bytes) ? drained(response) : Effect.void
      ).pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.interrupt
            : Effect.logError("Streamable HTTP: a response stream failed", cause)
        ),
        Effect.ensuring(Effect.sync(() => {
          if (isOpen(response)) response.end()
        }))
      )
    default:
      // the endpoint builds no other bodies
      response.writeHead(500)
      response.end()
      return Effect.void
  }
}
