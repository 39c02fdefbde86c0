/**
 * A task record as stored in Redis: `{ deployment, owner, record }` as JSON under
 * `<prefix>:task:<taskId>`, read back with Schema within `maxMessageBytes`.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"
import type * as Task from "../../Task.js"
import * as Envelope from "./envelope.js"

const Json = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const TaskRecord = Schema.Struct({
  taskId: Schema.String,
  status: Schema.Literal("working", "input_required", "completed", "failed", "cancelled"),
  statusMessage: Schema.optional(Schema.String),
  createdAt: Schema.Number,
  lastUpdatedAt: Schema.Number,
  ttlMs: Schema.Number,
  pollIntervalMs: Schema.Number,
  expiresAt: Schema.Number,
  inputRequests: Schema.optional(Schema.Record({
    key: Schema.String,
    value: Schema.Struct({
      method: Schema.Literal(
        McpSchema.ClientMethod.elicitationCreate,
        McpSchema.ClientMethod.samplingCreateMessage,
        McpSchema.ClientMethod.rootsList
      ),
      params: Schema.optionalWith(Json, { exact: true })
    })
  })),
  answers: Json,
  result: Schema.optional(Json),
  error: Schema.optional(
    Schema.Struct({ code: Schema.Number, message: Schema.String, data: Schema.optional(Schema.Unknown) })
  ),
  subject: Schema.optional(Schema.String)
})

/** A stored task: the record and the instance that runs it. */
const StoredTask = Schema.Struct({ owner: Schema.String, record: TaskRecord })

/** A stored task, decoded. */
export interface Stored {
  readonly owner: string
  readonly record: Task.TaskRecord
}

const decodeStored = Envelope.decode(StoredTask)
const encodeStored = Envelope.encode(StoredTask)

/** What a read found: nothing (or another deployment's record: `foreign`), a record, or an unreadable value. */
export type Read =
  | { readonly _tag: "None"; readonly foreign: boolean }
  | { readonly _tag: "Some"; readonly stored: Stored }
  | { readonly _tag: "Unreadable"; readonly reason: Envelope.Reason; readonly detail: string }

/** Decodes the value of a task key (`null`: no key). */
export const read = (raw: string | null, deployment: string, maxBytes: number): Read => {
  if (raw === null) return { _tag: "None", foreign: false }
  const decoded = decodeStored(raw, deployment, maxBytes)
  if (Either.isRight(decoded)) return { _tag: "Some", stored: decoded.right }
  return decoded.left.reason === "foreign"
    ? { _tag: "None", foreign: true }
    : { _tag: "Unreadable", reason: decoded.left.reason, detail: decoded.left.detail }
}

/** The live record of a read (`None` when absent, foreign or expired at `now`). */
export const live = (found: Read, now: number): Option.Option<Stored> =>
  found._tag === "Some" && found.stored.record.expiresAt > now ? Option.some(found.stored) : Option.none()

/**
 * The record as stored JSON (members set to `undefined` are left out). A record whose JSON would
 * be over `maxBytes` (a very large result) is stored `failed` instead, with a message saying why,
 * so that it stays readable.
 */
export const write = (owner: string, record: Task.TaskRecord, deployment: string, maxBytes: number): string => {
  const text = encodeStored({ owner, record }, deployment)
  if (!Envelope.exceeds(text, maxBytes)) return text
  const message = `The task's record is over the task store's maxMessageBytes (${maxBytes} bytes)`
  return encodeStored({
    owner,
    record: {
      ...record,
      status: "failed",
      statusMessage: message,
      inputRequests: undefined,
      answers: {},
      result: undefined,
      error: { code: JsonRpc.ErrorCode.InternalError, message }
    }
  }, deployment)
}
