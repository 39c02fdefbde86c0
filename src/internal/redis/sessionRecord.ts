/**
 * A legacy session's snapshot as Redis holds it: the stored record (`{ deployment, snapshot }`
 * under `<prefix>:session:<id>`) and the `State` signal carry the same schema.
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import type * as Cluster from "../../Cluster.js"
import * as McpSchema from "../../McpSchema.js"
import * as Envelope from "./envelope.js"

export const Snapshot = Schema.Struct({
  protocolVersion: Schema.Literal("2026-07-28", "2025-11-25", "2025-06-18"),
  clientInfo: Schema.optionalWith(McpSchema.Implementation, { exact: true }),
  clientCapabilities: McpSchema.ClientCapabilities,
  initialized: Schema.Boolean,
  logLevel: Schema.optionalWith(Schema.Literal(...McpSchema.LOGGING_LEVELS), { exact: true }),
  subscriptions: Schema.Array(Schema.String)
})

/** The snapshot as stored: members that are `undefined` are left out. */
export const toStored = (s: Cluster.SessionSnapshot): typeof Snapshot.Type => ({
  protocolVersion: s.protocolVersion,
  ...(s.clientInfo === undefined ? {} : { clientInfo: s.clientInfo }),
  clientCapabilities: s.clientCapabilities,
  initialized: s.initialized,
  ...(s.logLevel === undefined ? {} : { logLevel: s.logLevel }),
  subscriptions: s.subscriptions
})

export const fromStored = (s: typeof Snapshot.Type): Cluster.SessionSnapshot => ({
  protocolVersion: s.protocolVersion,
  clientInfo: s.clientInfo,
  clientCapabilities: s.clientCapabilities,
  initialized: s.initialized,
  logLevel: s.logLevel,
  subscriptions: s.subscriptions
})

const StoredSession = Schema.Struct({ snapshot: Snapshot })

/** Decodes a stored record (see `Envelope.decode`). */
export const decode = Envelope.decode(StoredSession)

/** Encodes a snapshot as a stored record of `deployment`. */
export const encode = Envelope.encode(StoredSession)
