/**
 * The state a client's functions share, as explicit records instead of one closure: `Setup`
 * holds what the options fix before the client has talked to the server (identity, capabilities,
 * deadlines, input handlers, the request counters); `State` adds what the era detection found and
 * the resources of a connected client (cache, listen bookkeeping). `connect` builds both;
 * `call`, `lists`, `listen` and `skills` are plain functions over them.
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as MutableRef from "effect/MutableRef"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as App from "../../App.js"
import * as JsonRpc from "../../JsonRpc.js"
import * as JsonSchema from "../../JsonSchema.js"
import type { CallError, Info, Options } from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import * as Task from "../../Task.js"
import type { ClientTransport, RequestHandler } from "../../Transport.js"
import * as Cache from "./cache.js"
import * as ClientInput from "./input.js"
import * as ProgressDeadline from "./progressDeadline.js"

/** Default `Options.maxInputRounds`. */
const DEFAULT_MAX_INPUT_ROUNDS = 10

/**
 * The request ids and progress tokens of one client (0, 1, …). Mutable on purpose: each is read
 * and bumped in one synchronous step, inside the Effect that sends, so no `Ref` is needed.
 */
export interface Counters {
  nextId: number
  nextToken: number
}

/** What the client knows before it has talked to the server: derived from `Options` once. */
export interface Setup {
  readonly transport: ClientTransport
  readonly options: Options
  /** The revisions this client speaks, in `McpSchema.CLIENT_VERSIONS` order (newest first). */
  readonly allowed: ReadonlyArray<McpSchema.ClientProtocolVersion>
  readonly clientInfo: McpSchema.Implementation
  readonly handlers: ClientInput.Handlers
  /** The declared capabilities: those the input handlers imply, `Options.capabilities` on top. */
  readonly capabilities: McpSchema.ClientCapabilities
  /** Does the client declare the Tasks extension (`Options.tasks` or `Options.capabilities`)? */
  readonly declaresTasks: boolean
  /** `Options.requestTimeout`: the deadline of every request (each MRTR round on its own). */
  readonly timeout: Duration.Duration
  /** `Options.resetTimeoutOnProgress` (default `true`): progress extends a `tools/call`'s deadline. */
  readonly resetTimeoutOnProgress: boolean
  /** `Options.maxTotalTimeout` (default 10 minutes): the cap of a progress-extended deadline. */
  readonly maxTotalTimeout: Duration.Duration
  /** `Options.maxInputRounds`, a non-negative integer. */
  readonly maxInputRounds: number
  /** The client's answer to server→client requests: `ping` and the input handlers. */
  readonly answerServer: RequestHandler
  /** The legacy session's revision once `initialize` was answered (`answerServer` reads it). */
  readonly negotiated: MutableRef.MutableRef<string | undefined>
  readonly counters: Counters
  /** The negotiated revision once connected (`mcp.protocol.version` of the client's spans). */
  readonly protocolVersion?: string | undefined
}

/** A connected client's state: its setup, what the era detection found, its resources. */
export interface State extends Setup {
  readonly info: Info
  readonly isModern: boolean
  /** The modern `_meta` keys every request carries, built once; `undefined` in the legacy era. */
  readonly ownModernMeta: JsonRpc.JsonObject | undefined
  /** The result cache (`Options.cache`), else `undefined`. */
  readonly cache: Cache.Cache | undefined
  /** Set when the client's Scope closes: a listen is not re-established after it. */
  readonly closed: Ref.Ref<boolean>
  /** `Options.relisten` (default `DEFAULT_RELISTEN`), stopping once `closed` is set. */
  readonly relisten: Schedule.Schedule<unknown, CallError>
  /** Legacy `resources/subscribe` is per session: how many open listens name each URI. */
  readonly subscribedUris: Ref.Ref<HashMap.HashMap<string, number>>
  /** Serializes the counting in `subscribedUris` with the (un)subscribe requests it triggers. */
  readonly uriLock: Effect.Semaphore
  /** The `outputSchema` of each tool by name, as the last `tools/list` listed it (`output.ts`). */
  readonly outputSchemas: MutableRef.MutableRef<HashMap.HashMap<string, JsonRpc.JsonObject>>
  /** `Options.validator`, default `JsonSchema.validate`. */
  readonly validator: JsonSchema.Validator
}

/** The revisions among `versions` that are modern (2026-07-28 and later). */
export const modernVersions = <V extends string>(vs: ReadonlyArray<V>): Array<V> => vs.filter(McpSchema.isModernVersion)

/** The revisions among `versions` that are legacy (2025-11-25, 2025-06-18, 2025-03-26). */
export const legacyVersions = <V extends string>(vs: ReadonlyArray<V>): Array<V> =>
  vs.filter((v) => !McpSchema.isModernVersion(v))

/** Derives the setup from the options (pure: no request is sent). */
export const makeSetup = (transport: ClientTransport, options: Options): Setup => {
  const handlers: ClientInput.Handlers = options
  const declared = options.capabilities ?? {}
  // `apps` yields to a declared entry; `tasks` wins over one (as it always did).
  const capabilities = ClientInput.capabilities(
    handlers,
    options.tasks === true || options.apps === true
      ? {
        ...declared,
        extensions: {
          ...(options.apps === true ? { [App.EXTENSION_ID]: App.HOST_CAPABILITY } : {}),
          ...declared.extensions,
          ...(options.tasks === true ? { [Task.EXTENSION_ID]: {} } : {})
        }
      }
      : declared
  )
  const negotiated = MutableRef.make<string | undefined>(undefined)
  return {
    transport,
    options,
    allowed: McpSchema.CLIENT_VERSIONS.filter((v) => (options.versions ?? McpSchema.CLIENT_VERSIONS).includes(v)),
    clientInfo: {
      name: options.name ?? "presa-mcp-client",
      version: options.version ?? "0.1.0"
    },
    handlers,
    capabilities,
    declaresTasks: JsonRpc.isObject(capabilities.extensions?.[Task.EXTENSION_ID]),
    timeout: Duration.decode(options.requestTimeout ?? "60 seconds"),
    resetTimeoutOnProgress: options.resetTimeoutOnProgress ?? true,
    maxTotalTimeout: options.maxTotalTimeout === undefined
      ? ProgressDeadline.DEFAULT_MAX_TOTAL
      : Duration.decode(options.maxTotalTimeout),
    maxInputRounds: Math.max(0, Math.floor(options.maxInputRounds ?? DEFAULT_MAX_INPUT_ROUNDS)),
    answerServer: ClientInput.requestHandler(handlers, () => MutableRef.get(negotiated)),
    negotiated,
    counters: { nextId: 0, nextToken: 0 }
  }
}

/**
 * The modern `_meta` of a request at `version`: the protocol version, the client's capabilities
 * and info, which every request carries (MCP 2026-07-28, Overview › Statelessness).
 */
export const modernMeta = (setup: Setup, version: string): JsonRpc.JsonObject => ({
  [McpSchema.MetaKey.protocolVersion]: version,
  [McpSchema.MetaKey.clientCapabilities]: setup.capabilities,
  [McpSchema.MetaKey.clientInfo]: setup.clientInfo
})

/** The state of a client connected with `info`: its cache and listen bookkeeping. */
export const makeState = (
  setup: Setup,
  info: Info,
  defaultRelisten: Schedule.Schedule<unknown, CallError>
): Effect.Effect<State> =>
  Effect.gen(function*() {
    const isModern = info.era === "modern"
    const cache = setup.options.cache === true ? yield* Cache.make : undefined
    const closed = yield* Ref.make(false)
    return {
      ...setup,
      info,
      protocolVersion: info.protocolVersion,
      isModern,
      ownModernMeta: isModern ? modernMeta(setup, info.protocolVersion) : undefined,
      cache,
      closed,
      relisten: (setup.options.relisten ?? defaultRelisten).pipe(
        Schedule.checkEffect(() => Effect.map(Ref.get(closed), (c) => !c))
      ),
      subscribedUris: yield* Ref.make(HashMap.empty<string, number>()),
      uriLock: yield* Effect.makeSemaphore(1),
      outputSchemas: MutableRef.make(HashMap.empty<string, JsonRpc.JsonObject>()),
      validator: setup.options.validator ?? JsonSchema.validate
    }
  })
