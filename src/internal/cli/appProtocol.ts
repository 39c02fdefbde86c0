/**
 * What the `presa-mcp app` page and its dev host say to each other (`app.ts` serves, `appPage.ts`
 * runs in the browser): the page's data, the relay requests (`POST /rpc`) and their replies, the
 * view's events shown on the terminal (`POST /event`).
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import * as McpSchema from "../../McpSchema.js"

const JsonRecord = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** The header that carries the page's token on `/rpc` and `/event`. @internal */
export const TOKEN_HEADER = "x-presa-app-token"

/** The element id of the page's data (a `<script type="application/json">`). @internal */
export const DATA_ID = "presa-app-data"

/** The page's data, embedded in the page as JSON. @internal */
export const PageData = Schema.Struct({
  token: Schema.String,
  tool: McpSchema.Tool,
  tools: Schema.Array(McpSchema.Tool),
  args: JsonRecord,
  /** The tool's result; absent when the call failed (then `cancelled` says why). */
  result: Schema.optional(McpSchema.CallToolResult),
  cancelled: Schema.optional(Schema.String),
  prefersBorder: Schema.optional(Schema.Boolean),
  approvedCsp: JsonRecord
})

/** @internal */
export type PageData = typeof PageData.Type

/** A request the page relays to the server for the view. @internal */
export const RpcRequest = Schema.Union(
  Schema.Struct({
    method: Schema.Literal("tools/call"),
    params: Schema.Struct({ name: Schema.String, arguments: Schema.optional(JsonRecord) })
  }),
  Schema.Struct({ method: Schema.Literal("resources/read"), params: Schema.Struct({ uri: Schema.String }) })
)

/** @internal */
export type RpcRequest = typeof RpcRequest.Type

/** The dev host's answer to `/rpc`: the server's result, or a JSON-RPC error object. @internal */
export const RpcReply = Schema.Union(
  Schema.Struct({ result: JsonRecord }),
  Schema.Struct({
    error: Schema.Struct({ code: Schema.Int, message: Schema.String, data: Schema.optional(Schema.Unknown) })
  })
)

/** @internal */
export type RpcReply = typeof RpcReply.Type

/** Something the view did that the terminal shows (`/event`). @internal */
export const ViewEvent = Schema.Struct({
  kind: Schema.Literal("log", "message", "open-link", "model-context", "teardown-request", "initialized"),
  detail: Schema.Unknown
})

/** @internal */
export type ViewEvent = typeof ViewEvent.Type
