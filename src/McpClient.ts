/**
 * The MCP client: connects over any {@link ClientTransport}, detects the server's era
 * (protocol.md §1.2), and offers typed calls.
 *
 * Modern (2026-07-28): every request carries the protocol version, the client's capabilities and
 * info in `params._meta`. Legacy (2025-11-25 / 2025-06-18): an `initialize` handshake first.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as JsonRpc from "./JsonRpc.js"
import * as McpSchema from "./McpSchema.js"
import * as Skill from "./Skill.js"
import type { ClientTransport, RequestOptions, TransportError } from "./Transport.js"

/**
 * A local client failure: the request timed out, or the server's result could not be decoded or
 * has an unknown `resultType`, or no protocol version is shared. Never a peer's JSON-RPC error
 * (that is `McpError`).
 *
 * @since 0.1.0
 * @category errors
 */
export class ClientError extends Data.TaggedError("ClientError")<{
  readonly reason: "Timeout" | "InvalidResult" | "NoCommonVersion"
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * Everything a call may fail with: the peer's `McpError`, a `TransportError`, a `ClientError`.
 *
 * @since 0.1.0
 * @category errors
 */
export type CallError = JsonRpc.McpError | TransportError | ClientError

/**
 * Client options.
 *
 * - `name`, `version`: the client's `Implementation` (default `presa-mcp-client` / `0.1.0`);
 * - `capabilities`: the client's capabilities (default `{}`);
 * - `versions`: revisions the client will speak (default all three, newest first);
 * - `probeTimeout`: how long to wait for the `server/discover` probe before falling back to the
 *   legacy handshake, default 3 seconds;
 * - `requestTimeout`: deadline of every request, default 60 seconds (on expiry the request is
 *   cancelled on the wire and the call fails with `ClientError` "Timeout").
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly name?: string
  readonly version?: string
  readonly capabilities?: McpSchema.ClientCapabilities
  readonly versions?: ReadonlyArray<McpSchema.ProtocolVersion>
  readonly probeTimeout?: Duration.DurationInput
  readonly requestTimeout?: Duration.DurationInput
}

/**
 * What the client learned when it connected: the era, the protocol version in use, and the
 * server's info, capabilities and instructions.
 *
 * @since 0.1.0
 * @category models
 */
export interface Info {
  readonly era: "modern" | "legacy"
  readonly protocolVersion: string
  readonly serverInfo: McpSchema.Implementation | undefined
  readonly capabilities: McpSchema.ServerCapabilities
  readonly instructions: string | undefined
  /** Versions the server said it serves (`server/discover`), or the negotiated one (legacy). */
  readonly supportedVersions: ReadonlyArray<string>
}

/**
 * A completion reference: a prompt by name or a resource (template) by URI.
 *
 * @since 0.1.0
 * @category models
 */
export type CompleteRef = { readonly type: "ref/prompt"; readonly name: string } | {
  readonly type: "ref/resource"
  readonly uri: string
}

/**
 * A connected client.
 *
 * @since 0.1.0
 * @category models
 */
export interface McpClient {
  readonly info: Info
  /** Sends any request (with `_meta` added in the modern era) and yields its raw result. */
  readonly request: (
    method: string,
    params?: JsonRpc.JsonObject,
    options?: RequestOptions
  ) => Effect.Effect<JsonRpc.JsonObject, CallError>
  /** Sends a notification. */
  readonly notify: (method: string, params?: JsonRpc.JsonObject) => Effect.Effect<void, TransportError>
  /** One page of `tools/list`. */
  readonly listTools: (cursor?: string) => Effect.Effect<typeof McpSchema.ListToolsResult.Type, CallError>
  /** All pages of `tools/list` (at most 1,000 pages). */
  readonly listAllTools: Effect.Effect<ReadonlyArray<McpSchema.Tool>, CallError>
  readonly listResources: (cursor?: string) => Effect.Effect<typeof McpSchema.ListResourcesResult.Type, CallError>
  readonly listAllResources: Effect.Effect<ReadonlyArray<McpSchema.Resource>, CallError>
  readonly listResourceTemplates: (
    cursor?: string
  ) => Effect.Effect<typeof McpSchema.ListResourceTemplatesResult.Type, CallError>
  readonly listAllResourceTemplates: Effect.Effect<ReadonlyArray<McpSchema.ResourceTemplate>, CallError>
  readonly listPrompts: (cursor?: string) => Effect.Effect<typeof McpSchema.ListPromptsResult.Type, CallError>
  readonly listAllPrompts: Effect.Effect<ReadonlyArray<McpSchema.Prompt>, CallError>
  /** `tools/call`. A tool's own failure is a result with `isError: true`, not a failed Effect. */
  readonly callTool: (
    name: string,
    args?: JsonRpc.JsonObject,
    options?: RequestOptions & { readonly _meta?: JsonRpc.JsonObject }
  ) => Effect.Effect<McpSchema.CallToolResult, CallError>
  /** `resources/read`. Not found fails with `McpError` -32602 (or a legacy server's -32002). */
  readonly readResource: (uri: string) => Effect.Effect<McpSchema.ReadResourceResult, CallError>
  /** `prompts/get`. */
  readonly getPrompt: (
    name: string,
    args?: Readonly<Record<string, string>>
  ) => Effect.Effect<McpSchema.GetPromptResult, CallError>
  /** `completion/complete`. */
  readonly complete: (
    ref: CompleteRef,
    argument: string,
    value: string,
    context?: Readonly<Record<string, string>>
  ) => Effect.Effect<McpSchema.CompleteResult["completion"], CallError>
  /** Does the server declare the Skills extension (`io.modelcontextprotocol/skills`)? */
  readonly skillsSupported: boolean
  /** All pages of `skills/list` (entries as the server sent them). */
  readonly listSkills: Effect.Effect<ReadonlyArray<Skill.SkillEntry>, CallError>
  /** `skills/get`: the entry of one skill by its SKILL.md URI. */
  readonly getSkill: (uri: string) => Effect.Effect<Skill.SkillEntry, CallError>
  /**
   * Loads a skill: `skills/get`, then reads its SKILL.md and checks size, digest and front matter
   * against the entry. Any mismatch fails with `SkillVerificationError` (never returns content).
   */
  readonly readSkill: (
    uri: string
  ) => Effect.Effect<
    { readonly entry: Skill.SkillEntry; readonly text: string },
    CallError | Skill.SkillVerificationError
  >
  /**
   * Reads one file of a skill and checks it against `entry`: a file the entry does not list fails
   * with reason `unlisted`, a wrong size or digest with `size` / `digest`.
   */
  readonly readSkillFile: (
    entry: Skill.SkillEntry,
    uri: string
  ) => Effect.Effect<McpSchema.ResourceContents, CallError | Skill.SkillVerificationError>
  /** All pages of `resources/directory/read` (needs `directoryRead`). */
  readonly readDirectory: (uri: string) => Effect.Effect<ReadonlyArray<McpSchema.Resource>, CallError>
  /** Closes the transport. */
  readonly close: Effect.Effect<void>
}

const decode = <A, I>(schema: Schema.Schema<A, I>, method: string) => (result: JsonRpc.JsonObject) =>
  Schema.decodeUnknown(schema, { onExcessProperty: "preserve" })(result).pipe(
    Effect.mapError((cause) =>
      new ClientError({ reason: "InvalidResult", message: `invalid ${method} result: ${cause.message}`, cause })
    )
  )

const modernVersions = (vs: ReadonlyArray<string>) => vs.filter(McpSchema.isModernVersion)
const legacyVersions = (vs: ReadonlyArray<string>) => vs.filter((v) => !McpSchema.isModernVersion(v))

const MAX_PAGES = 1000

/**
 * Connects over `transport`: probes with `server/discover` (modern), falls back to the
 * `initialize` handshake (legacy) on any other error or silence past `probeTimeout`, and yields a
 * client. On -32022 it retries with a version from `data.supported`.
 *
 * Fails with `McpError` (the handshake was refused), `TransportError`, or `ClientError`
 * ("NoCommonVersion" when the server offers only versions this client does not allow).
 *
 * @since 0.1.0
 * @category constructors
 */
export const connect = (
  transport: ClientTransport,
  options: Options = {}
): Effect.Effect<McpClient, CallError> =>
  Effect.gen(function*() {
    const nextId = yield* Ref.make(0)
    const allowed = McpSchema.ALL_VERSIONS.filter((v) => (options.versions ?? McpSchema.ALL_VERSIONS).includes(v))
    const clientInfo: McpSchema.Implementation = {
      name: options.name ?? "presa-mcp-client",
      version: options.version ?? "0.1.0"
    }
    const capabilities = options.capabilities ?? {}
    const timeout = Duration.decode(options.requestTimeout ?? "60 seconds")

    const send = (
      method: string,
      params: JsonRpc.JsonObject | undefined,
      requestOptions?: RequestOptions,
      deadline: Duration.Duration = timeout
    ): Effect.Effect<JsonRpc.JsonObject, CallError> =>
      Effect.gen(function*() {
        const id = yield* Ref.getAndUpdate(nextId, (n) => n + 1)
        const response = yield* transport.request(JsonRpc.request(id, method, params), requestOptions).pipe(
          Effect.timeoutFail({
            duration: deadline,
            onTimeout: () => new ClientError({ reason: "Timeout", message: `${method} timed out` })
          })
        )
        if (JsonRpc.isErrorResponse(response)) {
          return yield* new JsonRpc.McpError(
            response.error.data === undefined
              ? { code: response.error.code, message: response.error.message }
              : { code: response.error.code, message: response.error.message, data: response.error.data }
          )
        }
        const resultType = response.result.resultType
        if (resultType !== undefined && resultType !== "complete") {
          return yield* new ClientError({
            reason: "InvalidResult",
            message: `${method}: unsupported resultType ${JSON.stringify(resultType)}`
          })
        }
        return response.result
      })

    const modernMeta = (version: string): JsonRpc.JsonObject => ({
      [McpSchema.MetaKey.protocolVersion]: version,
      [McpSchema.MetaKey.clientCapabilities]: capabilities,
      [McpSchema.MetaKey.clientInfo]: clientInfo
    })

    // --- era detection (protocol.md §1.2) ---
    const probe = (version: string, attempt: number): Effect.Effect<Info | undefined, CallError> =>
      send(
        McpSchema.Method.discover,
        { _meta: modernMeta(version) },
        undefined,
        Duration.decode(options.probeTimeout ?? "3 seconds")
      ).pipe(
        Effect.flatMap(decode(McpSchema.DiscoverResult, McpSchema.Method.discover)),
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

    const handshake = Effect.gen(function*() {
      const offer = legacyVersions(allowed)[0]
      if (offer === undefined) {
        return yield* new ClientError({
          reason: "NoCommonVersion",
          message: "the server does not speak a modern version this client allows"
        })
      }
      const result = yield* send(McpSchema.Method.initialize, {
        protocolVersion: offer,
        capabilities,
        clientInfo
      }).pipe(Effect.flatMap(decode(McpSchema.InitializeResult, McpSchema.Method.initialize)))
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

    const modern = modernVersions(allowed)[0]
    const probed = modern === undefined ? undefined : yield* probe(modern, 0)
    const info = probed ?? (yield* handshake)

    const withMeta = (params: JsonRpc.JsonObject | undefined): JsonRpc.JsonObject | undefined => {
      if (info.era === "legacy") return params
      const own = params !== undefined && JsonRpc.isObject(params._meta) ? params._meta : {}
      return { ...params, _meta: { ...own, ...modernMeta(info.protocolVersion) } }
    }
    const request = (method: string, params?: JsonRpc.JsonObject, requestOptions?: RequestOptions) =>
      send(method, withMeta(params), requestOptions)

    const listPage = <A, I>(method: string, schema: Schema.Schema<A, I>) => (cursor?: string) =>
      request(method, cursor === undefined ? undefined : { cursor }).pipe(Effect.flatMap(decode(schema, method)))

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

    const listTools = listPage(McpSchema.Method.toolsList, McpSchema.ListToolsResult)
    const listResources = listPage(McpSchema.Method.resourcesList, McpSchema.ListResourcesResult)
    const listResourceTemplates = listPage(
      McpSchema.Method.resourcesTemplatesList,
      McpSchema.ListResourceTemplatesResult
    )
    const listPrompts = listPage(McpSchema.Method.promptsList, McpSchema.ListPromptsResult)

    const getSkill = (uri: string) =>
      request(Skill.Method.get, { uri }).pipe(
        Effect.flatMap(decode(Skill.GetSkillResult, Skill.Method.get)),
        Effect.map((r) => r.skill)
      )
    const readOne = (uri: string) =>
      request(McpSchema.Method.resourcesRead, { uri }).pipe(
        Effect.flatMap(decode(McpSchema.ReadResourceResult, McpSchema.Method.resourcesRead)),
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
      request,
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
        request(McpSchema.Method.toolsCall, {
          name,
          arguments: args ?? {},
          ...(callOptions?._meta === undefined ? {} : { _meta: callOptions._meta })
        }, callOptions).pipe(Effect.flatMap(decode(McpSchema.CallToolResult, McpSchema.Method.toolsCall))),
      readResource: (uri) =>
        request(McpSchema.Method.resourcesRead, { uri }).pipe(
          Effect.flatMap(decode(McpSchema.ReadResourceResult, McpSchema.Method.resourcesRead))
        ),
      getPrompt: (name, args) =>
        request(McpSchema.Method.promptsGet, args === undefined ? { name } : { name, arguments: args }).pipe(
          Effect.flatMap(decode(McpSchema.GetPromptResult, McpSchema.Method.promptsGet))
        ),
      complete: (ref, argument, value, context) =>
        request(McpSchema.Method.complete, {
          ref,
          argument: { name: argument, value },
          ...(context === undefined ? {} : { context: { arguments: context } })
        }).pipe(
          Effect.flatMap(decode(McpSchema.CompleteResult, McpSchema.Method.complete)),
          Effect.map((r) => r.completion)
        ),
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
            request(Skill.Method.directoryRead, cursor === undefined ? { uri } : { uri, cursor }).pipe(
              Effect.flatMap(decode(Skill.ReadDirectoryResult, Skill.Method.directoryRead))
            ),
          "resources"
        ),
      close: transport.close
    }
    return client
  })

/**
 * Is this error a "resource not found" from any server generation (-32602 with `data.uri`, or
 * the legacy -32002)?
 *
 * @since 0.1.0
 * @category guards
 */
export const isResourceNotFound = (error: CallError): boolean =>
  error._tag === "McpError" &&
  (error.code === JsonRpc.ErrorCode.LegacyResourceNotFound ||
    (error.code === JsonRpc.ErrorCode.InvalidParams && JsonRpc.isObject(error.data) && "uri" in error.data))
