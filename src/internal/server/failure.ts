/**
 * Failures inside dispatch: a JSON-RPC error and the HTTP status the spec gives it.
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as JsonRpc from "../../JsonRpc.js"
import { MAX_QUOTE, quote } from "../quote.js"

const { McpError } = JsonRpc
type McpError = JsonRpc.McpError

/**
 * A JSON-RPC error and its HTTP status (by default the one `statusOf` gives the error code).
 * Tagged, so `Effect.catchTag("Failure", …)` tells it apart from an `McpError` or `InputRequired`.
 */
export class Failure extends Data.TaggedError("Failure")<{
  readonly error: McpError
  readonly status: number
}> {
  constructor(error: McpError, status?: number) {
    super({ error, status: status ?? statusOf(error) })
  }
}

export const fail = (error: McpError, status?: number): Effect.Effect<never, Failure> =>
  Effect.fail(new Failure(error, status))

export const statusOf = (error: McpError): number => {
  switch (error.code) {
    case JsonRpc.ErrorCode.ParseError:
    case JsonRpc.ErrorCode.InvalidRequest:
    case JsonRpc.ErrorCode.HeaderMismatch:
    case JsonRpc.ErrorCode.MissingRequiredClientCapability:
    case JsonRpc.ErrorCode.UnsupportedProtocolVersion:
      return 400
    case JsonRpc.ErrorCode.MethodNotFound:
      return 404
    default:
      return 200
  }
}

/** Issues of a params decode failure that `data.issues` lists at most. */
const MAX_ISSUES = 10

/**
 * -32602 from a params decode failure. Schema's messages quote the offending value, so the message,
 * each issue's message and each path segment are quoted only up to a bound, and at most 10 issues
 * are listed: the reply stays small whatever the request carried (issue #20, "Amplification").
 */
export const invalidParamsFrom = (e: ParseResult.ParseError): McpError =>
  McpError.invalidParams(
    `Invalid params: ${quote(ParseResult.TreeFormatter.formatErrorSync(e).split("\n").join(" "), 2 * MAX_QUOTE)}`,
    {
      issues: ParseResult.ArrayFormatter.formatErrorSync(e).slice(0, MAX_ISSUES).map((i) => ({
        path: i.path.slice(0, 16).map((p) => quote(String(p), 64)),
        message: quote(i.message)
      }))
    }
  )
