/**
 * The client: era detection, calls with MRTR rounds, progress/log routing, listen streams and
 * the result cache. Documented on `McpClient`.
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as HashMap from "effect/HashMap"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as JsonRpc from "../../JsonRpc.js"
import type { CallError, CallOptions, Info, ListenFilter, McpClient, Options, Subscription } from "../../McpClient.js"
import * as McpSchema from "../../McpSchema.js"
import * as Skill from "../../Skill.js"
import * as Task from "../../Task.js"
import { type ClientTransport, type RequestOptions, TransportError } from "../../Transport.js"
import * as Headers from "../server/headerAgreement.js"
import * as Cache from "./cache.js"
import { ClientError } from "./error.js"
import * as ClientInput from "./input.js"
import { makeRouter } from "./routing.js"
import * as TaskClient from "./tasks.js"

/**
 * A result decoder for `method`, built once: the parser is compiled when the decoder is made and
 * runs synchronously (no fiber work per result); excess properties are kept.
 */
const decoder = <A, I>(schema: Schema.Schema<A, I>, method: string) => {
  const parse = Schema.decodeUnknownEither(schema, { onExcessProperty: "preserve" })
  return (result: JsonRpc.JsonObject): Effect.Effect<A, ClientError> => {
    const decoded = parse(result)
    return Either.isRight(decoded)
      ? Effect.succeed(decoded.right)
      : Effect.fail(
        new ClientError({
          reason: "InvalidResult",
          message: `invalid ${method} result: ${decoded.left.message}`,
          cause: decoded.left
        })
      )
  }
}

const decodeCallToolResult = decoder(McpSchema.CallToolResult, McpSchema.Method.toolsCall)
const decodeCreateTaskResult = decoder(Task.CreateTaskResult, McpSchema.Method.toolsCall)
const decodeReadResourceResult = decoder(McpSchema.ReadResourceResult, McpSchema.Method.resourcesRead)
const decodeGetPromptResult = decoder(McpSchema.GetPromptResult, McpSchema.Method.promptsGet)
const decodeCompleteResult = decoder(McpSchema.CompleteResult, McpSchema.Method.complete)
const decodeDiscoverResult = decoder(McpSchema.DiscoverResult, McpSchema.Method.discover)
const decodeInitializeResult = decoder(McpSchema.InitializeResult, McpSchema.Method.initialize)
const decodeGetSkillResult = decoder(Skill.GetSkillResult, Skill.Method.get)
const decodeReadDirectoryResult = decoder(Skill.ReadDirectoryResult, Skill.Method.directoryRead)

const modernVersions = (vs: ReadonlyArray<string>) => vs.filter(McpSchema.isModernVersion)
const legacyVersions = (vs: ReadonlyArray<string>) => vs.filter((v) => !McpSchema.isModernVersion(v))

const MAX_PAGES = 1000
const DEFAULT_MAX_INPUT_ROUNDS = 10

const ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
const LIST_CHANGED = {
  tools: "notifications/tools/list_changed",
  prompts: "notifications/prompts/list_changed",
  resources: "notifications/resources/list_changed"
} as const
const RESOURCE_UPDATED = "notifications/resources/updated"

/** The wire form of a filter: only the keys asked for. */
const filterToWire = (filter: ListenFilter): JsonRpc.JsonObject => ({
  ...(filter.toolsListChanged === true ? { toolsListChanged: true } : {}),
  ...(filter.promptsListChanged === true ? { promptsListChanged: true } : {}),
  ...(filter.resourcesListChanged === true ? { resourcesListChanged: true } : {}),
  ...(filter.resourceSubscriptions === undefined ? {} : { resourceSubscriptions: filter.resourceSubscriptions })
})

/** Reads an acknowledged filter leniently (unknown keys and wrong types are dropped). */
const filterFromWire = (u: unknown): ListenFilter => {
  if (!JsonRpc.isObject(u)) return {}
  const uris = Array.isArray(u.resourceSubscriptions)
    ? u.resourceSubscriptions.filter((x): x is string => typeof x === "string")
    : undefined
  return {
    ...(u.toolsListChanged === true ? { toolsListChanged: true } : {}),
    ...(u.promptsListChanged === true ? { promptsListChanged: true } : {}),
    ...(u.resourcesListChanged === true ? { resourcesListChanged: true } : {}),
    ...(uris === undefined ? {} : { resourceSubscriptions: uris })
  }
}

/** Does a change notification match a filter? */
const wanted = (filter: ListenFilter, n: JsonRpc.Notification): boolean => {
  switch (n.method) {
    case LIST_CHANGED.tools:
      return filter.toolsListChanged === true
    case LIST_CHANGED.prompts:
      return filter.promptsListChanged === true
    case LIST_CHANGED.resources:
      return filter.resourcesListChanged === true
    case RESOURCE_UPDATED: {
      const uri = n.params?.uri
      return typeof uri === "string" && (filter.resourceSubscriptions ?? []).includes(uri)
    }
    default:
      return false
  }
}

/** What a re-established listen announces: every change its acknowledged filter covers. */
const missedChanges = (filter: ListenFilter, meta: JsonRpc.JsonObject): ReadonlyArray<JsonRpc.Notification> => [
  ...(filter.toolsListChanged === true ? [JsonRpc.notification(LIST_CHANGED.tools, { _meta: meta })] : []),
  ...(filter.promptsListChanged === true ? [JsonRpc.notification(LIST_CHANGED.prompts, { _meta: meta })] : []),
  ...(filter.resourcesListChanged === true ? [JsonRpc.notification(LIST_CHANGED.resources, { _meta: meta })] : []),
  ...Array.from(
    new Set(filter.resourceSubscriptions ?? []),
    (uri) => JsonRpc.notification(RESOURCE_UPDATED, { uri, _meta: meta })
  )
]

const NO_RESULT: JsonRpc.JsonObject = {}

/** A lost connection is worth listening again; a peer's refusal or a bad answer is not. */
const retriable = (e: CallError): boolean =>
  e._tag === "TransportError" ? e.reason !== "Unauthorized" : e._tag === "ClientError" && e.reason === "Timeout"

/** `_meta` key of the notifications a re-established listen emits (documented on `McpClient.RESUBSCRIBED`). */
export const RESUBSCRIBED = "presa-mcp/resubscribed" as const

/** Default `Options.relisten`: 100 ms doubling, at most 8 tries in a row (about 25 s). */
export const DEFAULT_RELISTEN: Schedule.Schedule<unknown, CallError> = Schedule.exponential("100 millis").pipe(
  Schedule.intersect(Schedule.recurs(8))
)

const subscriptionIdOf = (n: JsonRpc.Notification): unknown => {
  const meta = n.params?._meta
  return JsonRpc.isObject(meta) ? meta[McpSchema.MetaKey.subscriptionId] : undefined
}

export const connect = (
  transport: ClientTransport,
  options: Options = {}
): Effect.Effect<McpClient, CallError> =>
  Effect.gen(function*() {
    // Counters of this client: read and bumped in one synchronous step.
    let nextId = 0
    let nextToken = 0
    const allowed = McpSchema.ALL_VERSIONS.filter((v) => (options.versions ?? McpSchema.ALL_VERSIONS).includes(v))
    const clientInfo: McpSchema.Implementation = {
      name: options.name ?? "presa-mcp-client",
      version: options.version ?? "0.1.0"
    }
    const handlers: ClientInput.Handlers = options
    const declared = options.capabilities ?? {}
    const capabilities = ClientInput.capabilities(
      handlers,
      options.tasks === true
        ? { ...declared, extensions: { ...declared.extensions, [Task.EXTENSION_ID]: {} } }
        : declared
    )
    const declaresTasks = JsonRpc.isObject(capabilities.extensions?.[Task.EXTENSION_ID])
    const timeout = Duration.decode(options.requestTimeout ?? "60 seconds")
    const maxInputRounds = Math.max(0, Math.floor(options.maxInputRounds ?? DEFAULT_MAX_INPUT_ROUNDS))
    const cache = options.cache === true ? yield* Cache.make : undefined
    const answerServer = ClientInput.requestHandler(handlers)
    if (transport.setRequestHandler !== undefined) yield* transport.setRequestHandler(answerServer)

    const newId = Effect.sync(() => nextId++)

    /**
     * One request on the wire: its raw result (any `resultType`), or the peer's error as
     * `McpError`. The transport bounds the wait (`RequestOptions.timeout`): no fiber per request.
     */
    const exchange = (
      id: JsonRpc.RequestId,
      method: string,
      params: JsonRpc.JsonObject | undefined,
      requestOptions: RequestOptions | undefined,
      deadline: Duration.Duration
    ): Effect.Effect<JsonRpc.JsonObject, CallError> =>
      transport.request(JsonRpc.request(id, method, params), {
        onNotification: requestOptions?.onNotification,
        onRequest: requestOptions?.onRequest ?? answerServer,
        timeout: deadline
      }).pipe(
        Effect.mapError((e): CallError =>
          e.reason === "Timeout" ? new ClientError({ reason: "Timeout", message: `${method} timed out` }) : e
        ),
        Effect.flatMap((response) =>
          JsonRpc.isErrorResponse(response)
            ? Effect.fail(JsonRpc.McpError.fromErrorObject(response.error))
            : Effect.succeed(response.result)
        )
      )

    const checkComplete = (method: string) => (result: JsonRpc.JsonObject) => {
      const resultType = result.resultType
      return resultType === undefined || resultType === "complete"
        ? Effect.succeed(result)
        : Effect.fail(
          new ClientError({
            reason: "InvalidResult",
            message: `${method}: unsupported resultType ${JSON.stringify(resultType)}`
          })
        )
    }

    /** A single request whose result must be final (the probe, the handshake). */
    const send = (
      method: string,
      params: JsonRpc.JsonObject | undefined,
      deadline: Duration.Duration = timeout
    ): Effect.Effect<JsonRpc.JsonObject, CallError> =>
      Effect.flatMap(newId, (id) => exchange(id, method, params, undefined, deadline)).pipe(
        Effect.flatMap(checkComplete(method))
      )

    const modernMeta = (version: string): JsonRpc.JsonObject => ({
      [McpSchema.MetaKey.protocolVersion]: version,
      [McpSchema.MetaKey.clientCapabilities]: capabilities,
      [McpSchema.MetaKey.clientInfo]: clientInfo
    })

    // --- era detection (protocol.md §1.2) ---
    // The probe waits as long as any request (`timeout`): past `probeTimeout` the handshake starts
    // beside it (see `detect`), and a modern answer that still comes first wins.
    const probe = (version: string, attempt: number): Effect.Effect<Info | undefined, CallError> =>
      send(McpSchema.Method.discover, { _meta: modernMeta(version) }).pipe(
        Effect.flatMap(decodeDiscoverResult),
        Effect.flatMap((result) => {
          const shared = modernVersions(allowed).find((v) => result.supportedVersions.includes(v))
          if (shared === undefined) {
            return legacyVersions(result.supportedVersions).some((v) =>
                allowed.includes(v as McpSchema.ProtocolVersion)
              )
              ? Effect.succeed(undefined)
              : Effect.fail(
                new ClientError({
                  reason: "NoCommonVersion",
                  message: `server supports ${result.supportedVersions.join(", ")}`
                })
              )
          }
          const serverInfo = result._meta !== undefined && JsonRpc.isObject(result._meta)
            ? Schema.decodeUnknownOption(McpSchema.Implementation)(result._meta[McpSchema.MetaKey.serverInfo])
            : undefined
          const info: Info = {
            era: "modern",
            protocolVersion: shared,
            serverInfo: serverInfo !== undefined && serverInfo._tag === "Some" ? serverInfo.value : undefined,
            capabilities: result.capabilities,
            instructions: result.instructions,
            supportedVersions: result.supportedVersions
          }
          return shared === version ? Effect.succeed(info) : attempt > 0 ? Effect.succeed(info) : probe(shared, 1)
        }),
        Effect.catchAll((e): Effect.Effect<Info | undefined, CallError> => {
          if (e._tag === "McpError" && e.code === JsonRpc.ErrorCode.UnsupportedProtocolVersion && attempt === 0) {
            const supported = JsonRpc.isObject(e.data) && Array.isArray(e.data.supported) ? e.data.supported : []
            const next = modernVersions(allowed).find((v) => supported.includes(v))
            if (next !== undefined) return probe(next, 1)
            return Effect.succeed(undefined)
          }
          if (e._tag === "ClientError" && e.reason === "NoCommonVersion") return Effect.fail(e)
          return Effect.succeed(undefined)
        })
      )

    /** The `initialize` request of the legacy handshake (its answer, decoded). */
    const initialize = Effect.suspend(() => {
      const offer = legacyVersions(allowed)[0]
      return offer === undefined
        ? Effect.fail(
          new ClientError({
            reason: "NoCommonVersion",
            message: "the server does not speak a modern version this client allows"
          })
        )
        : send(McpSchema.Method.initialize, { protocolVersion: offer, capabilities, clientInfo }).pipe(
          Effect.flatMap(decodeInitializeResult)
        )
    })

    /** The rest of the legacy handshake once `initialize` is answered. */
    const completeHandshake = (result: typeof McpSchema.InitializeResult.Type) =>
      Effect.gen(function*() {
        if (!allowed.some((v) => v === result.protocolVersion)) {
          return yield* new ClientError({
            reason: "NoCommonVersion",
            message: `server offered protocol version ${result.protocolVersion}`
          })
        }
        yield* transport.notify(JsonRpc.notification(McpSchema.Method.initialized))
        const info: Info = {
          era: "legacy",
          protocolVersion: result.protocolVersion,
          serverInfo: result.serverInfo,
          capabilities: result.capabilities,
          instructions: result.instructions,
          supportedVersions: [result.protocolVersion]
        }
        return info
      })

    const handshake = Effect.flatMap(initialize, completeHandshake)

    /**
     * Era detection (protocol.md §1.2): a modern answer to the probe → modern; any other error →
     * the legacy handshake. Silence for `probeTimeout` (default 10 s: a server started through `npx`
     * may take seconds to answer anything) sends `initialize` too, and the probe keeps waiting:
     * whichever is answered first decides, except that a failed `initialize` still waits for the
     * probe. When the late probe wins, the `initialize` is left to finish on its own, bounded by
     * `timeout`, and its answer is dropped: a client MUST NOT cancel it (2025-11-25, Basic ›
     * Utilities › Cancellation) and sends no `notifications/initialized`.
     */
    const detect = (modern: string): Effect.Effect<Info, CallError> =>
      Effect.gen(function*() {
        // with no legacy version to fall back to, silence is just a slow server
        if (legacyVersions(allowed).length === 0) return (yield* probe(modern, 0)) ?? (yield* handshake)
        const probing = yield* Effect.fork(probe(modern, 0))
        const early = yield* Fiber.join(probing).pipe(
          Effect.timeoutOption(Duration.decode(options.probeTimeout ?? "10 seconds"))
        )
        if (Option.isSome(early)) return early.value ?? (yield* handshake)
        const initializing = yield* Effect.forkDaemon(initialize)
        return yield* Effect.raceWith(Fiber.join(probing), Fiber.join(initializing), {
          onSelfDone: (probed, initJoin) =>
            Exit.isSuccess(probed) && probed.value !== undefined
              ? Effect.as(Fiber.interrupt(initJoin), probed.value)
              : Exit.isFailure(probed)
              ? Effect.zipRight(Fiber.interrupt(initJoin), Effect.failCause(probed.cause))
              : Effect.flatMap(Fiber.join(initializing), completeHandshake),
          onOtherDone: (initialized, _probeJoin) =>
            Exit.isSuccess(initialized)
              ? Effect.zipRight(Fiber.interrupt(probing), completeHandshake(initialized.value))
              : Effect.flatMap(
                Fiber.join(probing),
                (probed): Effect.Effect<Info, CallError> =>
                  probed === undefined ? Effect.failCause(initialized.cause) : Effect.succeed(probed)
              )
        })
      })

    const modern = modernVersions(allowed)[0]
    const info = modern === undefined ? yield* handshake : yield* detect(modern)
    const isModern = info.era === "modern"

    // --- calls: _meta, progress/log hooks, MRTR rounds (protocol.md §15), cache (§13) ---

    // The modern `_meta` keys of every request: built once.
    const ownModernMeta = isModern ? modernMeta(info.protocolVersion) : undefined

    /**
     * The first round's params: the caller's, plus `_meta` (modern keys, progress token, log
     * level). Synchronous: call it inside the Effect that sends (it may take a progress token).
     */
    const firstParams = (
      params: JsonRpc.JsonObject | undefined,
      callOptions: CallOptions
    ): { readonly params: JsonRpc.JsonObject | undefined; readonly token: JsonRpc.RequestId | undefined } => {
      const own = params !== undefined && JsonRpc.isObject(params._meta) ? params._meta : undefined
      const ownToken = own?.[McpSchema.MetaKey.progressToken]
      const token = callOptions.onProgress === undefined
        ? (JsonRpc.isRequestId(ownToken) ? ownToken : undefined)
        : callOptions.progressToken ?? (JsonRpc.isRequestId(ownToken) ? ownToken : nextToken++)
      const logLevel = isModern && callOptions.onLog !== undefined ? callOptions.logLevel : undefined
      if (own === undefined && token === undefined && logLevel === undefined) {
        return { params: ownModernMeta === undefined ? params : { ...params, _meta: ownModernMeta }, token }
      }
      const meta: JsonRpc.JsonObject = {
        ...own,
        ...(token === undefined ? {} : { [McpSchema.MetaKey.progressToken]: token }),
        ...(logLevel === undefined ? {} : { [McpSchema.MetaKey.logLevel]: logLevel }),
        ...ownModernMeta
      }
      return {
        params: Object.keys(meta).length === 0 ? params : { ...params, _meta: meta },
        token
      }
    }

    type Outcome = { readonly result: JsonRpc.JsonObject; readonly usedInput: boolean }

    /** Sends `method` until its result is final, answering `input_required` rounds. */
    const rounds = (
      method: string,
      params: JsonRpc.JsonObject | undefined,
      token: JsonRpc.RequestId | undefined,
      callOptions: CallOptions
    ): Effect.Effect<Outcome, CallError> => {
      const round = (n: number, retry: JsonRpc.JsonObject | undefined): Effect.Effect<Outcome, CallError> =>
        makeRouter(token, callOptions).pipe(
          Effect.flatMap((onNotification) =>
            exchange(nextId++, method, retry, { onNotification, onRequest: callOptions.onRequest }, timeout)
          ),
          Effect.flatMap((result): Effect.Effect<Outcome, CallError> => {
            const resultType = result.resultType
            if (resultType === undefined || resultType === "complete") {
              return Effect.succeed({ result, usedInput: n > 0 })
            }
            // Tasks extension: a CreateTaskResult answers only tools/call, and only a declaring client.
            if (resultType === "task" && method === McpSchema.Method.toolsCall && declaresTasks && isModern) {
              return Effect.succeed({ result, usedInput: true })
            }
            return Effect.flatMap(inputRound(n, result), (next) => round(n + 1, next))
          })
        )

      /** The params of the next round, after an `input_required` result. */
      const inputRound = (
        n: number,
        result: JsonRpc.JsonObject
      ): Effect.Effect<JsonRpc.JsonObject, CallError> =>
        Effect.gen(function*() {
          const resultType = result.resultType
          if (resultType !== "input_required") {
            return yield* new ClientError({
              reason: "InvalidResult",
              message: `${method}: unsupported resultType ${JSON.stringify(resultType)}`
            })
          }
          const asked = ClientInput.parseInputRequired(result)
          if (asked === undefined) {
            return yield* new ClientError({
              reason: "InvalidResult",
              message: `${method}: an input_required result needs inputRequests or requestState`
            })
          }
          if (n + 1 > maxInputRounds) {
            return yield* new ClientError({
              reason: "InputRounds",
              message: `${method}: the server asked for input more than ${maxInputRounds} times`
            })
          }
          const inputResponses = asked.inputRequests === undefined
            ? undefined
            : yield* ClientInput.fulfil(handlers, asked.inputRequests).pipe(
              Effect.mapError((problem) =>
                new ClientError({ reason: "Input", message: `${method}: ${problem.message}`, cause: problem.cause })
              )
            )
          const requestState = asked.requestState
          return {
            ...params,
            ...(inputResponses === undefined ? {} : { inputResponses }),
            ...(requestState === undefined ? {} : { requestState })
          }
        })

      return round(0, params)
    }

    const call = (
      method: string,
      params: JsonRpc.JsonObject | undefined,
      callOptions: CallOptions = {}
    ): Effect.Effect<JsonRpc.JsonObject, CallError> => {
      const cached = cache !== undefined && Cache.CACHEABLE.has(method) ? cache : undefined
      if (cached === undefined) {
        // the common path: no cache, no Effect.gen
        return Effect.suspend(() => {
          const first = firstParams(params, callOptions)
          return Effect.map(rounds(method, first.params, first.token, callOptions), (outcome) => outcome.result)
        })
      }
      return Effect.gen(function*() {
        const first = firstParams(params, callOptions)
        const hit = yield* cached.lookup(method, first.params)
        if (Option.isSome(hit)) return hit.value
        const generation = yield* cached.generation(method, first.params)
        const outcome = yield* rounds(method, first.params, first.token, callOptions).pipe(
          Effect.tapError((e) =>
            e._tag === "McpError" && e.code === JsonRpc.ErrorCode.InvalidParams &&
              Cache.LISTS.has(method) && typeof params?.cursor === "string"
              ? cached.dropList(method)
              : Effect.void
          )
        )
        if (!outcome.usedInput) {
          const ttl = isModern ? Cache.ttlOf(outcome.result) : Math.max(0, options.legacyTtlMs ?? 0)
          yield* cached.store(method, first.params, outcome.result, ttl, generation)
        }
        return outcome.result
      })
    }

    const tasks = TaskClient.make({
      supported: isModern && JsonRpc.isObject(info.capabilities.extensions?.[Task.EXTENSION_ID]),
      call: (method, params) => call(method, params),
      handlers
    })

    const listPage = <A, I>(method: string, schema: Schema.Schema<A, I>) => {
      const decode = decoder(schema, method)
      return (cursor?: string) =>
        call(method, cursor === undefined ? undefined : { cursor }).pipe(Effect.flatMap(decode))
    }

    const listAll = <
      K extends string,
      T,
      A extends { readonly nextCursor?: string | undefined } & Record<K, ReadonlyArray<T>>
    >(
      one: (cursor?: string) => Effect.Effect<A, CallError>,
      key: K
    ): Effect.Effect<ReadonlyArray<T>, CallError> =>
      Effect.gen(function*() {
        const out: Array<T> = []
        let cursor: string | undefined = undefined
        for (let i = 0; i < MAX_PAGES; i++) {
          const page: A = yield* one(cursor)
          out.push(...page[key])
          if (page.nextCursor === undefined) return out
          cursor = page.nextCursor
        }
        return out
      })

    // protocol.md §19.5: a tool whose `x-mcp-header` annotations are invalid is left out (with a
    // warning naming it); the other tools are unaffected.
    const listTools = (cursor?: string) =>
      listPage(McpSchema.Method.toolsList, McpSchema.ListToolsResult)(cursor).pipe(
        Effect.flatMap((page) =>
          Effect.gen(function*() {
            const kept: Array<McpSchema.Tool> = []
            for (const tool of page.tools) {
              const bad = Headers.invalidHeaderAnnotation(tool.inputSchema)
              if (Option.isSome(bad)) yield* Effect.logWarning(`tool ${tool.name} left out: ${bad.value}`)
              else kept.push(tool)
            }
            return kept.length === page.tools.length ? page : { ...page, tools: kept }
          })
        )
      )
    const listResources = listPage(McpSchema.Method.resourcesList, McpSchema.ListResourcesResult)
    const listResourceTemplates = listPage(
      McpSchema.Method.resourcesTemplatesList,
      McpSchema.ListResourceTemplatesResult
    )
    const listPrompts = listPage(McpSchema.Method.promptsList, McpSchema.ListPromptsResult)

    // --- listen (protocol.md §14; legacy §24.5) ---

    const invalidate = (n: JsonRpc.Notification): Effect.Effect<void> =>
      cache === undefined ? Effect.void : cache.invalidate(n)

    // A listen is not re-established once the client was closed (its transport is gone for good).
    const closed = yield* Ref.make(false)
    const relisten = (options.relisten ?? DEFAULT_RELISTEN).pipe(
      Schedule.checkEffect(() => Effect.map(Ref.get(closed), (c) => !c))
    )

    /** After a re-established listen: everything may have changed in the gap. */
    const resubscribed = (
      acknowledged: ListenFilter,
      subscriptionId: JsonRpc.RequestId | undefined,
      offer: (n: JsonRpc.Notification) => Effect.Effect<unknown>
    ): Effect.Effect<void> =>
      Effect.gen(function*() {
        if (cache !== undefined) yield* cache.clear
        const meta: JsonRpc.JsonObject = {
          ...(subscriptionId === undefined ? {} : { [McpSchema.MetaKey.subscriptionId]: subscriptionId }),
          [RESUBSCRIBED]: true
        }
        for (const n of missedChanges(acknowledged, meta)) yield* offer(n)
      })

    const listenModern = (filter: ListenFilter): Effect.Effect<Subscription, CallError, Scope.Scope> =>
      Effect.gen(function*() {
        const mailbox = yield* Mailbox.make<JsonRpc.Notification, CallError>()
        // closing the Scope also ends the stream for a consumer running elsewhere
        yield* Effect.addFinalizer(() => mailbox.end)
        const firstAck = yield* Deferred.make<ListenFilter, CallError>()
        const params: JsonRpc.JsonObject = {
          notifications: filterToWire(filter),
          _meta: modernMeta(info.protocolVersion)
        }

        /** One `subscriptions/listen` request, until its graceful end (success) or a failure. */
        const once = (onAck: (ack: ListenFilter, id: JsonRpc.RequestId) => Effect.Effect<void>) =>
          Effect.gen(function*() {
            const id = yield* newId
            const sid = String(id)
            const acked = yield* Deferred.make<void>()
            const cancelledByServer = yield* Deferred.make<void>()
            const onNotification = (n: JsonRpc.Notification): Effect.Effect<void> =>
              Effect.gen(function*() {
                if (n.method === McpSchema.Method.cancelled) {
                  // The server tore the subscription down (protocol.md §14 [tension]): a clean end.
                  const requestId = n.params?.requestId
                  if (requestId !== undefined && String(requestId) === sid) {
                    yield* Deferred.succeed(cancelledByServer, undefined)
                  }
                  return
                }
                const tag = subscriptionIdOf(n)
                if (tag === undefined || String(tag) !== sid) {
                  return yield* Effect.logDebug(
                    `ignored ${n.method} on listen ${sid}: not tagged with its subscriptionId`
                  )
                }
                if (n.method === ACKNOWLEDGED) {
                  if (yield* Deferred.succeed(acked, undefined)) {
                    yield* onAck(filterFromWire(n.params?.notifications), id)
                  }
                  return
                }
                yield* invalidate(n)
                yield* mailbox.offer(n)
              })
            const unacknowledged = Deferred.await(acked).pipe(
              Effect.timeoutFail({
                duration: timeout,
                onTimeout: () =>
                  new ClientError({ reason: "Timeout", message: "subscriptions/listen was not acknowledged" })
              }),
              Effect.zipRight(Effect.never)
            )
            const result = yield* exchange(
              id,
              McpSchema.Method.subscriptionsListen,
              params,
              { onNotification },
              Duration.infinity
            )
              .pipe(
                Effect.raceFirst(Effect.as(Deferred.await(cancelledByServer), NO_RESULT)),
                Effect.raceFirst(unacknowledged)
              )
            const resultType = result.resultType
            if (resultType !== undefined && resultType !== "complete") {
              return yield* new ClientError({
                reason: "InvalidResult",
                message: `subscriptions/listen: unsupported resultType ${JSON.stringify(resultType)}`
              })
            }
          })

        // The first listen answers `listen`; later ones re-establish it after the connection
        // dropped (protocol.md §14: "a bare disconnect MAY trigger reconnect"), per `relisten`.
        const run = Effect.gen(function*() {
          const driver = yield* Schedule.driver(relisten)
          let established = false
          for (;;) {
            const exit = yield* Effect.exit(once((ack, id) =>
              Effect.gen(function*() {
                if (established) yield* resubscribed(ack, id, (n) => mailbox.offer(n))
                else yield* Deferred.succeed(firstAck, ack)
                established = true
                yield* driver.reset
              })
            ))
            if (Exit.isSuccess(exit)) {
              // a graceful end (the listen result, or its notifications/cancelled): not a drop
              yield* Deferred.fail(
                firstAck,
                new ClientError({
                  reason: "InvalidResult",
                  message: "subscriptions/listen ended before it was acknowledged"
                })
              )
              return yield* mailbox.end
            }
            const error = Cause.failureOption(exit.cause)
            const again = established && Option.isSome(error) && retriable(error.value) &&
              (yield* Effect.isSuccess(driver.next(error.value)))
            if (!again) {
              yield* Deferred.failCause(firstAck, exit.cause)
              return yield* mailbox.failCause(exit.cause)
            }
            yield* Effect.logInfo(`subscriptions/listen dropped (${Option.getOrThrow(error).message}); listening again`)
          }
        })
        yield* run.pipe(Effect.interruptible, Effect.forkScoped)
        const acknowledged = yield* Deferred.await(firstAck)
        return { acknowledged, notifications: Mailbox.toStream(mailbox) }
      })

    // Legacy `resources/subscribe` is per session: count the listens that name each URI.
    const subscribedUris = yield* Ref.make(HashMap.empty<string, number>())
    const uriLock = yield* Effect.makeSemaphore(1)
    const subscribeUri = (uri: string): Effect.Effect<void, CallError, Scope.Scope> =>
      Effect.acquireRelease(
        uriLock.withPermits(1)(Effect.gen(function*() {
          const n = Option.getOrElse(HashMap.get(yield* Ref.get(subscribedUris), uri), () => 0)
          if (n === 0) yield* call(McpSchema.Method.resourcesSubscribe, { uri })
          yield* Ref.update(subscribedUris, (m) => HashMap.set(m, uri, n + 1))
        })),
        () =>
          uriLock.withPermits(1)(Effect.gen(function*() {
            const n = Option.getOrElse(HashMap.get(yield* Ref.get(subscribedUris), uri), () => 1)
            yield* Ref.update(subscribedUris, (m) => n <= 1 ? HashMap.remove(m, uri) : HashMap.set(m, uri, n - 1))
            if (n <= 1) {
              yield* call(McpSchema.Method.resourcesUnsubscribe, { uri }).pipe(
                Effect.catchAll((e) => Effect.logDebug(`resources/unsubscribe ${uri} failed: ${e.message}`))
              )
            }
          }))
      )

    const listenLegacy = (filter: ListenFilter): Effect.Effect<Subscription, CallError, Scope.Scope> =>
      Effect.gen(function*() {
        const sessionNotifications = transport.sessionNotifications
        if (sessionNotifications === undefined) {
          return yield* new ClientError({
            reason: "Unsupported",
            message: "this transport does not carry a legacy session's notifications"
          })
        }
        const caps = info.capabilities
        const acknowledged: ListenFilter = {
          ...(filter.toolsListChanged === true && caps.tools?.listChanged === true ? { toolsListChanged: true } : {}),
          ...(filter.promptsListChanged === true && caps.prompts?.listChanged === true
            ? { promptsListChanged: true }
            : {}),
          ...(filter.resourcesListChanged === true && caps.resources?.listChanged === true
            ? { resourcesListChanged: true }
            : {}),
          ...(filter.resourceSubscriptions !== undefined && caps.resources?.subscribe === true
            ? { resourceSubscriptions: filter.resourceSubscriptions }
            : {})
        }
        const uris = new Set(acknowledged.resourceSubscriptions ?? [])
        const first = yield* sessionNotifications
        for (const uri of uris) yield* subscribeUri(uri)
        const mailbox = yield* Mailbox.make<JsonRpc.Notification, CallError>()
        yield* Effect.addFinalizer(() => mailbox.end)
        const drain = (source: Stream.Stream<JsonRpc.Notification, CallError>) =>
          source.pipe(
            Stream.filter((n) => wanted(acknowledged, n)),
            Stream.runForEach((n) => Effect.zipRight(invalidate(n), mailbox.offer(n)))
          )
        // The session's channel may drop (stdio: the process restarted; HTTP: the GET stream
        // ended or the session expired): open it again, subscribe the URIs again (a new session
        // has none), then tell the consumer that anything may have changed.
        const run = Effect.gen(function*() {
          const driver = yield* Schedule.driver(relisten)
          let exit = yield* Effect.exit(drain(first))
          for (;;) {
            const error: CallError = Exit.isSuccess(exit)
              ? new TransportError({ reason: "Closed", message: "the session's notification stream ended" })
              : Option.getOrElse(
                Cause.failureOption(exit.cause),
                () => new TransportError({ reason: "Closed", message: "the session's notification stream broke" })
              )
            if (Exit.isFailure(exit) && !retriable(error)) return yield* mailbox.failCause(exit.cause)
            if (!(yield* Effect.isSuccess(driver.next(error)))) return yield* mailbox.fail(error)
            yield* Effect.logInfo(`the legacy session's notifications dropped (${error.message}); listening again`)
            exit = yield* Effect.exit(Effect.scoped(Effect.gen(function*() {
              const source = yield* sessionNotifications
              for (const uri of uris) yield* call(McpSchema.Method.resourcesSubscribe, { uri })
              yield* resubscribed(acknowledged, undefined, (n) => mailbox.offer(n))
              yield* driver.reset
              return yield* drain(source)
            })))
          }
        })
        yield* run.pipe(Effect.interruptible, Effect.forkScoped)
        return { acknowledged, notifications: Mailbox.toStream(mailbox) }
      })

    // --- skills ---

    const getSkill = (uri: string) =>
      call(Skill.Method.get, { uri }).pipe(
        Effect.flatMap(decodeGetSkillResult),
        Effect.map((r) => r.skill)
      )
    const readOne = (uri: string) =>
      call(McpSchema.Method.resourcesRead, { uri }).pipe(
        Effect.flatMap(decodeReadResourceResult),
        Effect.flatMap((r) =>
          r.contents.length === 1 && r.contents[0] !== undefined
            ? Effect.succeed(r.contents[0])
            : Effect.fail(new ClientError({ reason: "InvalidResult", message: `${uri}: expected one contents item` }))
        )
      )
    const contentOf = (uri: string, contents: McpSchema.ResourceContents) =>
      Option.match(Skill.contentsBytes(contents), {
        onNone: () =>
          Effect.fail(new ClientError({ reason: "InvalidResult", message: `${uri}: contents are not valid base64` })),
        onSome: (bytes) => Effect.succeed(bytes)
      })

    const client: McpClient = {
      info,
      request: (method, params, callOptions) => call(method, params, callOptions),
      notify: (method, params) => transport.notify(JsonRpc.notification(method, params)),
      listTools,
      listAllTools: listAll(listTools, "tools"),
      listResources,
      listAllResources: listAll(listResources, "resources"),
      listResourceTemplates,
      listAllResourceTemplates: listAll(listResourceTemplates, "resourceTemplates"),
      listPrompts,
      listAllPrompts: listAll(listPrompts, "prompts"),
      callTool: (name, args, callOptions) =>
        call(McpSchema.Method.toolsCall, {
          name,
          arguments: args ?? {},
          ...(callOptions?._meta === undefined ? {} : { _meta: callOptions._meta })
        }, callOptions).pipe(
          Effect.flatMap((result) =>
            TaskClient.isTaskResult(result)
              ? Effect.flatMap(
                decodeCreateTaskResult(result),
                (created) => tasks.awaitResult(created.taskId)
              )
              : decodeCallToolResult(result)
          )
        ),
      readResource: (uri, callOptions) =>
        call(McpSchema.Method.resourcesRead, { uri }, callOptions).pipe(
          Effect.flatMap(decodeReadResourceResult)
        ),
      getPrompt: (name, args, callOptions) =>
        call(McpSchema.Method.promptsGet, args === undefined ? { name } : { name, arguments: args }, callOptions).pipe(
          Effect.flatMap(decodeGetPromptResult)
        ),
      complete: (ref, argument, value, context) =>
        call(McpSchema.Method.complete, {
          ref,
          argument: { name: argument, value },
          ...(context === undefined ? {} : { context: { arguments: context } })
        }).pipe(
          Effect.flatMap(decodeCompleteResult),
          Effect.map((r) => r.completion)
        ),
      listen: (filter) => isModern ? listenModern(filter) : listenLegacy(filter),
      clearCache: cache === undefined ? Effect.void : cache.clear,
      skillsSupported: info.capabilities.extensions !== undefined &&
        JsonRpc.isObject(info.capabilities.extensions[Skill.EXTENSION_ID]),
      listSkills: listAll(listPage(Skill.Method.list, Skill.ListSkillsResult), "skills"),
      getSkill,
      readSkill: (uri) =>
        Effect.gen(function*() {
          const entry = yield* getSkill(uri)
          const contents = yield* readOne(uri)
          const text = yield* Skill.verifySkillMd(entry, yield* contentOf(uri, contents))
          return { entry, text }
        }),
      readSkillFile: (entry, uri) =>
        Effect.gen(function*() {
          if (entry.resources !== Skill.DYNAMIC_RESOURCES && !entry.resources.some((r) => r.uri === uri)) {
            return yield* new Skill.SkillVerificationError({
              reason: "unlisted",
              uri,
              message: `${uri} is not listed in the skill's entry`
            })
          }
          const contents = yield* readOne(uri)
          yield* Skill.verifyFile(entry, uri, yield* contentOf(uri, contents))
          return contents
        }),
      readDirectory: (uri) =>
        listAll(
          (cursor?: string) =>
            call(Skill.Method.directoryRead, cursor === undefined ? { uri } : { uri, cursor }).pipe(
              Effect.flatMap(decodeReadDirectoryResult)
            ),
          "resources"
        ),
      tasks,
      close: Effect.zipRight(Ref.set(closed, true), transport.close)
    }
    return client
  })
