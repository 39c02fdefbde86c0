/**
 * Failures inside dispatch: a JSON-RPC error and the HTTP status the spec gives it.
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as JsonRpc from "../../JsonRpc.js"

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

export const invalidParamsFrom = (e: ParseResult.ParseError): McpError =>
  McpError.invalidParams(`Invalid params: ${ParseResult.TreeFormatter.formatErrorSync(e).split("\n").join(" ")}`, {
    issues: ParseResult.ArrayFormatter.formatErrorSync(e).map((i) => ({ path: i.path.map(String), message: i.message }))
  })
