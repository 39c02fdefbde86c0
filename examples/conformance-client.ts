/**
 * The client program for the official MCP conformance suite (conformance/FIXTURES.md §8), written
 * with the library's `McpClient` over `StreamableHttp.client`. The suite starts it as
 *
 *   npx tsx examples/conformance-client.ts <server url>
 *
 * (conformance/run.sh runs the same file bundled with esbuild, which starts faster),
 * with `MCP_CONFORMANCE_SCENARIO` (what to do), `MCP_CONFORMANCE_PROTOCOL_VERSION` (the wire
 * version: `2026-07-28` ⇒ modern, a legacy version or unset ⇒ that legacy handshake, default
 * `2025-11-25`) and, for some scenarios, `MCP_CONFORMANCE_CONTEXT` (JSON).
 *
 * The client plays an unattended host: it accepts every elicitation (filling each field from the
 * schema's `default`, else a sample value), answers sampling with a canned message and lists one
 * root. Each scenario does what the library supports; where a scenario needs a client feature the
 * library does not have (the DPoP, JWT-bearer and enterprise-managed
 * authorization extensions), the program still performs the plain calls and the scenario is
 * listed in `conformance/expected-failures-client-*.yaml`. `auth/*` scenarios connect through an
 * `OAuth` provider (see `authProvider`).
 *
 * Exit status: 0 when every step succeeded, 1 otherwise (errors are printed to stderr). The process
 * exits explicitly once the program is done (the suite waits for the process, so nothing left
 * behind may keep it alive).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as jose from "jose"
import { JsonRpc, McpClient, McpSchema, OAuth, Skill } from "presa-mcp"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"

type JsonObject = JsonRpc.JsonObject

const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ""
const wireVersion = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? "2025-11-25"
const url = process.argv[process.argv.length - 1] ?? ""

const parseContext = (): JsonObject => {
  const raw = process.env.MCP_CONFORMANCE_CONTEXT
  if (raw === undefined || raw === "") return {}
  try {
    const value: unknown = JSON.parse(raw)
    return JsonRpc.isObject(value) ? value : {}
  } catch {
    return {}
  }
}
const context = parseContext()

const log = (line: string): void => {
  process.stderr.write(`[conformance-client ${scenario}] ${line}\n`)
}

const isVersion = (v: string): v is McpSchema.ProtocolVersion =>
  v === "2026-07-28" || v === "2025-11-25" || v === "2025-06-18"

/** A value for one elicitation field: its `default`, else the first enum member, else by type. */
const fieldValue = (schema: unknown): string | number | boolean | ReadonlyArray<string> => {
  if (!JsonRpc.isObject(schema)) return "test"
  const fallback = schema.default
  if (
    typeof fallback === "string" || typeof fallback === "number" || typeof fallback === "boolean" ||
    (Array.isArray(fallback) && fallback.every((v) => typeof v === "string"))
  ) return fallback
  if (Array.isArray(schema.enum) && typeof schema.enum[0] === "string") return schema.enum[0]
  if (Array.isArray(schema.oneOf) && JsonRpc.isObject(schema.oneOf[0]) && typeof schema.oneOf[0].const === "string") {
    return schema.oneOf[0].const
  }
  switch (schema.type) {
    case "boolean":
      return true
    case "integer":
    case "number":
      return 1
    case "array":
      return []
    default:
      return "test"
  }
}

/** The unattended host's answers to the server's questions. */
const handlers: McpClient.InputHandlers = {
  onElicit: (params) =>
    Effect.sync(() => {
      const schema = JsonRpc.isObject(params.requestedSchema) ? params.requestedSchema : {}
      const properties = JsonRpc.isObject(schema.properties) ? schema.properties : {}
      const content = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, fieldValue(v)]))
      log(`elicitation/create answered: ${JSON.stringify(content)}`)
      return { action: "accept" as const, content }
    }),
  onSample: () =>
    Effect.succeed({
      role: "assistant" as const,
      content: { type: "text", text: "This is a response from the conformance client" },
      model: "conformance-client-model",
      stopReason: "endTurn"
    }),
  onRoots: () => Effect.succeed({ roots: [{ uri: "file:///tmp/conformance", name: "Conformance root" }] })
}

/** The Client ID Metadata Document URL the suite's CIMD scenarios expect (it is never fetched). */
const CIMD_URL = "https://conformance-test.local/client-metadata.json"

const contextString = (key: string): string | undefined => {
  const v = context[key]
  return typeof v === "string" ? v : undefined
}

/**
 * The OAuth provider for `auth/*` scenarios: the headless interaction (follows the authorization
 * endpoint's redirect), a CIMD URL, and what `MCP_CONFORMANCE_CONTEXT` gives: pre-registered
 * credentials, the client credentials grant with a secret or a private key, the JWT bearer grant
 * with a workload JWT (`valid_jwt`) or with an ID-JAG exchanged at the IdP (`idp_*`). DPoP is
 * used when the authorization server lists ES256 (`OAuth.Options.dpop` default).
 */
const authProvider = Effect.gen(function*() {
  if (!scenario.startsWith("auth/")) return undefined
  const clientId = contextString("client_id")
  const clientSecret = contextString("client_secret")
  const pem = contextString("private_key_pem")
  if (scenario.startsWith("auth/client-credentials") && clientId !== undefined) {
    const privateKey = pem === undefined ?
      undefined :
      yield* Effect.promise(() => jose.importPKCS8(pem, contextString("signing_algorithm") ?? "ES256"))
    return yield* OAuth.make({
      grant: "client_credentials",
      client: {
        clientId,
        ...(clientSecret === undefined ? {} : { clientSecret }),
        tokenEndpointAuthMethod: privateKey === undefined ? "client_secret_basic" : "private_key_jwt"
      },
      ...(privateKey === undefined ? {} : { privateKey })
    })
  }
  // Workload identity federation (SEP-1933): the platform's workload JWT is the assertion.
  const workloadJwt = contextString("valid_jwt")
  if (scenario === "auth/wif-jwt-bearer" && clientId !== undefined && workloadJwt !== undefined) {
    return yield* OAuth.make({
      grant: "jwt_bearer",
      client: { clientId, tokenEndpointAuthMethod: "none" },
      assertion: () => Effect.succeed(workloadJwt)
    })
  }
  // Enterprise-managed authorization (SEP-990): an ID-JAG from the IdP, then the JWT bearer grant.
  const idpTokenEndpoint = contextString("idp_token_endpoint")
  const idpClientId = contextString("idp_client_id")
  const idToken = contextString("idp_id_token")
  if (
    clientId !== undefined && idpTokenEndpoint !== undefined && idpClientId !== undefined && idToken !== undefined
  ) {
    return yield* OAuth.make({
      grant: "jwt_bearer",
      client: { clientId, ...(clientSecret === undefined ? {} : { clientSecret }) },
      assertion: OAuth.idJagAssertion({ tokenEndpoint: idpTokenEndpoint, clientId: idpClientId, idToken })
    })
  }
  return yield* OAuth.make({
    interaction: OAuth.headless(),
    clientName: "presa-mcp-conformance-client",
    clientMetadataUrl: CIMD_URL,
    ...(clientId === undefined ? {} : {
      client: { clientId, ...(clientSecret === undefined ? {} : { clientSecret }) }
    })
  })
}).pipe(Effect.provide(OAuth.layerMemory))

/**
 * The versions the client allows for the suite's wire version: exactly the modern one; for a
 * legacy one, it and the older legacy revisions the library speaks (`initialize` asks for the
 * wire version, and a server answering an older one, such as sse-retry's 2025-03-26, is spoken
 * to at that one, as the library's default does).
 */
const allowedVersions = (version: McpSchema.ProtocolVersion): ReadonlyArray<McpSchema.ClientProtocolVersion> =>
  McpSchema.isModernVersion(version)
    ? [version]
    : McpSchema.CLIENT_VERSIONS.filter((v) => !McpSchema.isModernVersion(v) && v <= version)

/** Connects speaking the version the suite asked for (see `allowedVersions`). */
const connect = (
  options: { readonly capabilities?: McpSchema.ClientCapabilities; readonly noInput?: boolean } = {}
) =>
  Effect.gen(function*() {
    const version = isVersion(wireVersion) ? wireVersion : "2025-11-25"
    const auth = yield* authProvider
    const transport = yield* StreamableHttp.client({ url, ...(auth === undefined ? {} : { auth }) })
    const client = yield* McpClient.connect(transport, {
      name: "presa-mcp-conformance-client",
      version: "0.1.0",
      versions: allowedVersions(version),
      // The suite starts dozens of clients at once on a small machine: be patient (conformance/run.sh
      // gives each scenario 120 s).
      probeTimeout: "60 seconds",
      requestTimeout: "60 seconds",
      ...(options.noInput === true ? {} : handlers),
      ...(options.capabilities === undefined ? {} : { capabilities: options.capabilities })
    })
    log(`connected: ${client.info.era} ${client.info.protocolVersion}`)
    return client
  })

/** Runs a step; a failure is logged and recorded, the scenario goes on. */
let failures = 0
const step = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A | undefined, never, R> =>
  effect.pipe(
    Effect.tap(() => Effect.sync(() => log(`${name}: ok`))),
    Effect.catchAll((e) =>
      Effect.sync(() => {
        failures++
        log(`${name}: failed: ${e instanceof Error ? `${e.name}: ${e.message}` : JSON.stringify(e)}`)
        return undefined
      })
    )
  )

/** A sample value for each property of a tool's input schema (strings "test", numbers 1, ...). */
const sampleArguments = (schema: JsonObject): JsonObject => {
  const properties = JsonRpc.isObject(schema.properties) ? schema.properties : {}
  const out: Record<string, unknown> = {}
  for (const [key, sub] of Object.entries(properties)) {
    const type = JsonRpc.isObject(sub) ? sub.type : undefined
    out[key] = type === "integer" || type === "number" ? 1 : type === "boolean" ? true : "test"
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// scenarios
// ---------------------------------------------------------------------------------------------

const listAndCallEveryTool = (client: McpClient.McpClient) =>
  Effect.gen(function*() {
    const tools = (yield* step("tools/list", client.listAllTools)) ?? []
    for (const tool of tools) {
      yield* step(`tools/call ${tool.name}`, client.callTool(tool.name, sampleArguments(tool.inputSchema)))
    }
  })

const scenarios: Record<string, Effect.Effect<void, unknown, Scope.Scope>> = {
  initialize: Effect.gen(function*() {
    const client = yield* connect()
    yield* step("tools/list", client.listAllTools)
  }),

  tools_call: Effect.gen(function*() {
    const client = yield* connect()
    yield* step("tools/list", client.listAllTools)
    yield* step("tools/call add_numbers", client.callTool("add_numbers", { a: 2, b: 3 }))
  }),

  // The server's elicitation/create is answered by `onElicit` with every field taken from the
  // schema's `default`. This server (official SDK v1) sends it on the session's standalone GET
  // stream, not on the tools/call response: the HTTP transport opens that stream after
  // `notifications/initialized` because the client declares elicitation.
  "elicitation-sep1034-client-defaults": Effect.gen(function*() {
    const client = yield* connect()
    yield* step("tools/list", client.listAllTools)
    yield* step("tools/call test_client_elicitation_defaults", client.callTool("test_client_elicitation_defaults", {}))
  }),

  // The tools/call POST stream sends `id` + `retry: 500` and closes before the result: the
  // transport waits the 500 ms and resumes with a GET carrying Last-Event-ID, where the result is.
  "sse-retry": Effect.gen(function*() {
    // No input handlers: a client declaring elicitation opens the session's GET stream right after
    // initialized, which the scenario would count as its reconnection (before the retry delay).
    const client = yield* connect({ noInput: true })
    yield* step("tools/list", client.listAllTools)
    yield* step("tools/call test_reconnection", client.callTool("test_reconnection", {}))
  }),

  // The first request is refused with -32022; `connect` retries with a version from data.supported.
  "request-metadata": Effect.gen(function*() {
    const client = yield* connect()
    yield* step("tools/list", client.listAllTools)
  }),

  // MRTR: McpClient answers `input_required` rounds with the input handlers and retries.
  "sep-2322-client-request-state": Effect.gen(function*() {
    const client = yield* connect()
    yield* step("tools/list", client.listAllTools)
    for (
      const name of ["test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"]
    ) {
      yield* step(`tools/call ${name}`, client.callTool(name, {}))
    }
  }),

  "http-standard-headers": Effect.gen(function*() {
    const client = yield* connect()
    yield* listAndCallEveryTool(client)
    const resources = (yield* step("resources/list", client.listAllResources)) ?? []
    for (const resource of resources) {
      yield* step(`resources/read ${resource.uri}`, client.readResource(resource.uri))
    }
    const prompts = (yield* step("prompts/list", client.listAllPrompts)) ?? []
    for (const prompt of prompts) {
      const args = Object.fromEntries((prompt.arguments ?? []).map((a) => [a.name, "test"]))
      yield* step(`prompts/get ${prompt.name}`, client.getPrompt(prompt.name, args))
    }
  }),

  // Mcp-Param-* headers come from the tools/list schemas the transport saw.
  "http-custom-headers": Effect.gen(function*() {
    const client = yield* connect()
    yield* step("tools/list", client.listAllTools)
    const calls = Array.isArray(context.toolCalls) ? context.toolCalls : []
    for (const call of calls) {
      if (!JsonRpc.isObject(call) || typeof call.name !== "string") continue
      const args = JsonRpc.isObject(call.arguments) ? call.arguments : {}
      yield* step(`tools/call ${call.name}`, client.callTool(call.name, args))
    }
  }),

  // McpClient leaves out tools whose x-mcp-header annotation is invalid (protocol.md §19.5).
  "http-invalid-tool-headers": Effect.gen(function*() {
    const client = yield* connect()
    yield* listAndCallEveryTool(client)
  }),

  "json-schema-ref-no-deref": Effect.gen(function*() {
    const client = yield* connect()
    yield* step("tools/list", client.listAllTools)
  }),

  "json-schema-2020-12-preservation": Effect.gen(function*() {
    const client = yield* connect()
    const tools = (yield* step("tools/list", client.listAllTools)) ?? []
    const source = tools.find((t) => t.name === "json_schema_2020_12_tool")
    if (source === undefined) {
      failures++
      log("json_schema_2020_12_tool is not listed")
      return
    }
    yield* step("tools/call json_schema_echo", client.callTool("json_schema_echo", { schema: source.inputSchema }))
  }),

  "sep-2640-client-no-prefetch": Effect.gen(function*() {
    const client = yield* connect()
    yield* step("skills/list", client.listSkills)
  }),

  "sep-2640-client-verify-digest": Effect.suspend(() => verifySkills),
  "sep-2640-client-verify-size": Effect.suspend(() => verifySkills),
  "sep-2640-client-verify-frontmatter": Effect.suspend(() => verifySkills)
}

/**
 * Lists the skills and loads each from its listed entry (a listed entry is a complete manifest,
 * protocol.md §22.5): reads SKILL.md and verifies size, digest and front matter, then reads the
 * other files (each verified) only when SKILL.md verified.
 */
const verifySkills = Effect.gen(function*() {
  const client = yield* connect()
  const skills = (yield* step("skills/list", client.listSkills)) ?? []
  for (const entry of skills) {
    const loaded = yield* step(
      `load ${entry.uri}`,
      client.readSkillFile(entry, entry.uri).pipe(
        Effect.flatMap((contents) =>
          Option.match(Skill.contentsBytes(contents), {
            onNone: () => Effect.fail(new Error(`${entry.uri}: contents are not valid base64`)),
            onSome: (bytes) => Skill.verifySkillMd(entry, bytes)
          })
        )
      )
    )
    if (loaded === undefined || entry.resources === "dynamic") continue
    for (const file of entry.resources) {
      if (file.uri === entry.uri) continue
      yield* step(`read ${file.uri}`, client.readSkillFile(entry, file.uri))
    }
  }
})

/** Anything else (auth/* and future scenarios): connect, list and call what is there. */
const fallback = Effect.gen(function*() {
  const client = yield* connect()
  yield* listAndCallEveryTool(client)
})

const program = Effect.scoped(
  Effect.gen(function*() {
    log(`url ${url}, wire ${wireVersion}`)
    const run = scenarios[scenario] ?? fallback
    yield* run
  })
).pipe(
  Effect.catchAll((e) =>
    Effect.sync(() => {
      failures++
      log(`failed: ${e instanceof Error ? `${e.name}: ${e.message}` : JSON.stringify(e)}`)
    })
  )
)

Effect.runPromise(program).then(
  () => {
    log(`finished with ${failures} failed step(s)`)
    process.exit(failures === 0 ? 0 : 1)
  },
  (e: unknown) => {
    log(`defect: ${String(e)}`)
    process.exit(1)
  }
)
