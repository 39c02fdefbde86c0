/**
 * The client's local failure type (documented on `McpClient.ClientError`).
 * @internal
 */
import * as Data from "effect/Data"

export class ClientError extends Data.TaggedError("ClientError")<{
  readonly reason:
    | "Timeout"
    | "InvalidResult"
    | "NoCommonVersion"
    | "Input"
    | "InputRounds"
    | "Unsupported"
    | "Cancelled"
  readonly message: string
  readonly cause?: unknown
}> {}
