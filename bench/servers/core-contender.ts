/**
 * The `core` suite's contenders, one per process (`bench/lib/isolated.ts`):
 * `node core-contender.js <server-only|client-server> <ours|ours+tracer|ours-2025|sdk-v2|sdk-v1>`.
 *
 * - server only: ours = `McpServer.handleMessage` on a pre-built 2026-07-28 request (decoded
 *   JSON in, response object out); SDK v2 = `serveStdio(factory, {transport})` over the SDK's
 *   `InMemoryTransport` pair with pre-built requests sent on the client end (the SDK's stdio entry
 *   is what serves 2026-07-28 on a message channel; `McpServer.connect` serves 2025-era only);
 *   SDK v1 = `McpServer.connect(InMemoryTransport)` after a raw `initialize` (2025-11-25).
 * - client + server: ours = `McpClient` over `InProcess.client` (which JSON-encodes and parses
 *   every message both ways); SDK = its `Client` over `InMemoryTransport` (objects passed by
 *   reference, no serialisation).
 * - `ours-2025`, in both groups: ours speaking 2025-11-25, SDK v1's revision (server only: a
 *   session initialized once, then requests without the 2026-07-28 `_meta` envelope; client +
 *   server: `McpClient` with `versions: [2025-11-25]`, which initializes a session).
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { Client as ClientV2 } from "@modelcontextprotocol/client"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport as InMemoryV1 } from "@modelcontextprotocol/sdk/inMemory.js"
import { InMemoryTransport as InMemoryV2 } from "@modelcontextprotocol/server"
import { serveStdio } from "@modelcontextprotocol/server/stdio"
import { BatchSpanProcessor, InMemorySpanExporter } from "@opentelemetry/sdk-trace-base"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { McpClient, McpServer } from "presa-mcp"
import * as InProcess from "presa-mcp/transport/InProcess"
import type { Contender, Opened } from "../lib/compare.js"
import { effectBounded } from "../lib/effectLoop.js"
import { type Bounds, runBounded, type Throughput } from "../lib/harness.js"
import { serveRounds } from "../lib/isolated.js"
import { makeServer } from "../lib/ours.js"
import { makeServerFactory as makeV1 } from "../lib/sdkV1.js"
import { makeServerFactory as makeV2 } from "../lib/sdkV2.js"
import { ECHO_TEXT, isEcho, LEGACY, LEGACY_INITIALIZE_PARAMS, MODERN, MODERN_META } from "../lib/shared.js"

const WARMUP: Bounds = { maxMs: 1000, maxCount: 50_000 }
const ROUND: Bounds = { maxMs: 500, maxCount: 100_000 }

const modernCall = (id: number) => ({
  jsonrpc: "2.0" as const,
  id,
  method: "tools/call",
  params: { name: "echo", arguments: { text: ECHO_TEXT }, _meta: MODERN_META }
})
const legacyCall = (id: number) => ({
  jsonrpc: "2.0" as const,
  id,
  method: "tools/call",
  params: { name: "echo", arguments: { text: ECHO_TEXT } }
})

/** A promise-based session: check one call, warm up, then measured rounds of sequential calls. */
const promiseSession = async (
  name: string,
  call: () => Promise<unknown>,
  close: () => Promise<void>
): Promise<Opened<Throughput>> => {
  const first = await call()
  if (!isEcho(first)) throw new Error(`${name}: unexpected result ${JSON.stringify(first)}`)
  await runBounded(call, 1, WARMUP)
  return { measure: () => runBounded(call, 1, ROUND), close }
}

/** The same for an Effect-based call. */
const effectSession = async <E>(
  name: string,
  call: Effect.Effect<unknown, E>,
  check: (first: unknown) => boolean
): Promise<Opened<Throughput>> => {
  const first = await Effect.runPromise(call)
  if (!check(first)) throw new Error(`${name}: unexpected result ${JSON.stringify(first)}`)
  await Effect.runPromise(effectBounded(call, 1, WARMUP))
  return { measure: () => Effect.runPromise(effectBounded(call, 1, ROUND)), close: async () => undefined }
}

// -- ours --------------------------------------------------------------------------------------

/** A `McpServer.handleMessage` reply (an `Option` of the response) holding the echo tool's result. */
const isEchoReply = (reply: unknown): boolean => {
  const r = reply as Option.Option<{ readonly result?: unknown }>
  return Option.isSome(r) && isEcho(r.value.result)
}

const oursServerOnly: Contender<Throughput> = {
  name: "ours",
  open: async () => {
    const { server, session } = await Effect.runPromise(
      Effect.all({ server: makeServer(), session: McpServer.makeSession })
    )
    let id = 0
    const call = Effect.suspend(() => McpServer.handleMessage(server, modernCall(++id), { session }))
    return effectSession("ours handleMessage", call, isEchoReply)
  }
}

/**
 * The same with an exporting tracer (issue 23): the OpenTelemetry SDK through
 * `@effect/opentelemetry`'s `NodeSdk.layer`, a batching span processor and an in-memory exporter
 * (emptied after every round), so every request's SERVER span is created, ended and exported.
 */
const oursServerOnlyTraced: Contender<Throughput> = {
  name: "ours+tracer",
  open: async () => {
    const exporter = new InMemorySpanExporter()
    const runtime = ManagedRuntime.make(NodeSdk.layer(() => ({
      resource: { serviceName: "presa-bench" },
      spanProcessor: new BatchSpanProcessor(exporter, { maxQueueSize: 65_536, maxExportBatchSize: 4_096 })
    })))
    const { server, session } = await runtime.runPromise(
      Effect.all({ server: makeServer(), session: McpServer.makeSession })
    )
    let id = 0
    const call = Effect.suspend(() => McpServer.handleMessage(server, modernCall(++id), { session }))
    const first = await runtime.runPromise(call)
    if (!isEchoReply(first)) {
      throw new Error(`ours+tracer: unexpected result ${JSON.stringify(first)}`)
    }
    await runtime.runPromise(effectBounded(call, 1, WARMUP))
    return {
      measure: async () => {
        const r = await runtime.runPromise(effectBounded(call, 1, ROUND))
        exporter.reset()
        return r
      },
      close: () => runtime.dispose()
    }
  }
}

/** Ours serving 2025-11-25: `initialize` and `notifications/initialized` on the session once, then legacy calls. */
const oursServerOnly2025: Contender<Throughput> = {
  name: "ours-2025",
  open: async () => {
    const { server, session } = await Effect.runPromise(
      Effect.all({ server: makeServer(), session: McpServer.makeSession })
    )
    let id = 0
    const init = await Effect.runPromise(McpServer.handleMessage(server, {
      jsonrpc: "2.0",
      id: ++id,
      method: "initialize",
      params: LEGACY_INITIALIZE_PARAMS
    }, { session }))
    if (!(Option.isSome(init) && (init.value as { readonly result?: unknown }).result !== undefined)) {
      throw new Error(`ours-2025 initialize: ${JSON.stringify(init)}`)
    }
    await Effect.runPromise(
      McpServer.handleMessage(server, { jsonrpc: "2.0", method: "notifications/initialized" }, { session })
    )
    const call = Effect.suspend(() => McpServer.handleMessage(server, legacyCall(++id), { session }))
    return effectSession("ours-2025 handleMessage", call, isEchoReply)
  }
}

/**
 * `McpClient` over `InProcess.client`, speaking `version` (checked): with its default options for
 * 2026-07-28 (which it negotiates first), pinned with `versions` for 2025-11-25.
 */
const clientScope = Effect.runSync(Scope.make())

const oursClientServerOf = (name: string, version: typeof MODERN | typeof LEGACY): Contender<Throughput> => ({
  name,
  open: async () => {
    const client = await Effect.runPromise(
      Effect.flatMap(
        Effect.flatMap(makeServer(), InProcess.client),
        // the in-process client holds no resource: its Scope lives as long as the process
        (t) => Scope.extend(McpClient.connect(t, version === MODERN ? {} : { versions: [version] }), clientScope)
      )
    )
    if (client.info.protocolVersion !== version) {
      throw new Error(`${name} in-process client: speaks ${client.info.protocolVersion}, not ${version}`)
    }
    return effectSession(`${name} in-process client`, client.callTool("echo", { text: ECHO_TEXT }), isEcho)
  }
})

// -- SDK: a raw client end of an InMemoryTransport pair ------------------------------------------

interface RawEnd {
  onmessage?: ((message: never) => void) | undefined
  start(): Promise<void>
  send(message: never): Promise<void>
  close(): Promise<void>
}

type RawReply = { readonly result?: unknown; readonly error?: unknown }

const rawCaller = async (end: RawEnd): Promise<(message: { readonly id: number }) => Promise<RawReply>> => {
  const pending = new Map<number, (m: RawReply) => void>()
  end.onmessage = ((message: RawReply & { readonly id?: unknown }) => {
    if (typeof message.id === "number") {
      pending.get(message.id)?.(message)
      pending.delete(message.id)
    }
  }) as never
  await end.start()
  return (message) =>
    new Promise<RawReply>((resolve) => {
      pending.set(message.id, resolve)
      void end.send(message as never)
    })
}

const v2ServerOnly: Contender<Throughput> = {
  name: "sdk-v2",
  open: async () => {
    const [clientEnd, serverEnd] = InMemoryV2.createLinkedPair()
    const handle = serveStdio(makeV2(), { transport: serverEnd })
    const send = await rawCaller(clientEnd)
    let id = 0
    return promiseSession(
      "sdk-v2 in-memory server",
      async () => (await send(modernCall(++id))).result,
      () => handle.close()
    )
  }
}

const v1ServerOnly: Contender<Throughput> = {
  name: "sdk-v1",
  open: async () => {
    const [clientEnd, serverEnd] = InMemoryV1.createLinkedPair()
    await makeV1()().connect(serverEnd)
    const send = await rawCaller(clientEnd)
    let id = 0
    const init = await send({
      jsonrpc: "2.0",
      id: ++id,
      method: "initialize",
      params: LEGACY_INITIALIZE_PARAMS
    } as { readonly id: number })
    if (init.result === undefined) throw new Error(`sdk-v1 initialize: ${JSON.stringify(init)}`)
    await clientEnd.send({ jsonrpc: "2.0", method: "notifications/initialized" })
    return promiseSession(
      "sdk-v1 in-memory server",
      async () => (await send(legacyCall(++id))).result,
      () => clientEnd.close()
    )
  }
}

const v2ClientServer: Contender<Throughput> = {
  name: "sdk-v2",
  open: async () => {
    const [clientEnd, serverEnd] = InMemoryV2.createLinkedPair()
    const handle = serveStdio(makeV2(), { transport: serverEnd })
    const client = new ClientV2({ name: "presa-bench", version: "0.0.0" }, {
      versionNegotiation: { mode: { pin: MODERN } }
    })
    await client.connect(clientEnd)
    if (client.getProtocolEra() !== "modern") throw new Error("sdk-v2 in-memory client: not modern")
    return promiseSession(
      "sdk-v2 in-memory client",
      () => client.callTool({ name: "echo", arguments: { text: ECHO_TEXT } }),
      async () => {
        await client.close()
        await handle.close()
      }
    )
  }
}

const v1ClientServer: Contender<Throughput> = {
  name: "sdk-v1",
  open: async () => {
    const [clientEnd, serverEnd] = InMemoryV1.createLinkedPair()
    await makeV1()().connect(serverEnd)
    const client = new ClientV1({ name: "presa-bench", version: "0.0.0" })
    await client.connect(clientEnd)
    return promiseSession(
      "sdk-v1 in-memory client",
      () => client.callTool({ name: "echo", arguments: { text: ECHO_TEXT } }),
      () => client.close()
    )
  }
}

const CONTENDERS: Record<string, Record<string, Contender<Throughput>>> = {
  "server-only": {
    ours: oursServerOnly,
    "ours+tracer": oursServerOnlyTraced,
    "ours-2025": oursServerOnly2025,
    "sdk-v2": v2ServerOnly,
    "sdk-v1": v1ServerOnly
  },
  "client-server": {
    ours: oursClientServerOf("ours", MODERN),
    "ours-2025": oursClientServerOf("ours-2025", LEGACY),
    "sdk-v2": v2ClientServer,
    "sdk-v1": v1ClientServer
  }
}

const [group = "", name = ""] = process.argv.slice(2)
const contender = CONTENDERS[group]?.[name]
if (contender === undefined) {
  process.stdout.write(`error unknown contender ${group} ${name}\n`)
  process.exit(1)
}
await serveRounds(contender.open)
