/**
 * Constants and helpers shared by the benchmark driver and the server processes. No library
 * imports here: every server process loads only its own stack (ours, SDK v2 or SDK v1).
 */

/** The revisions the benchmark speaks. */
export const MODERN = "2026-07-28"
export const LEGACY = "2025-11-25"

/** The `_meta` envelope every 2026-07-28 request carries. */
export const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "presa-bench", version: "0.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {}
} as const

/** The params of the `initialize` that opens every 2025-11-25 session the benchmark makes. */
export const LEGACY_INITIALIZE_PARAMS = {
  protocolVersion: LEGACY,
  capabilities: {},
  clientInfo: { name: "presa-bench", version: "0.0.0" }
} as const

/** The argument of every `echo` call. */
export const ECHO_TEXT = "hello"

/** The URI of the blob resource (see `--blob-bytes`). */
export const BLOB_URI = "bench://blob"
export const BLOB_MIME = "application/octet-stream"

/** Options every benchmark server accepts (`--tools N --page-size N --blob-bytes N`). */
export interface ServerArgs {
  /** Extra tools `tool_0` … `tool_{N-1}` next to `echo` (same input schema). */
  readonly tools: number
  /** Our page size (ignored by the SDK servers, which do not paginate). */
  readonly pageSize: number | undefined
  /** Size of the blob resource in bytes; 0 = no resource. */
  readonly blobBytes: number
}

export const parseServerArgs = (argv: ReadonlyArray<string>): ServerArgs => {
  const value = (name: string): number | undefined => {
    const i = argv.indexOf(name)
    if (i === -1) return undefined
    const n = Number(argv[i + 1])
    if (!Number.isInteger(n) || n < 0) throw new Error(`bad ${name} ${argv[i + 1]}`)
    return n
  }
  return { tools: value("--tools") ?? 0, pageSize: value("--page-size"), blobBytes: value("--blob-bytes") ?? 0 }
}

/** Deterministic pseudo-random bytes (xorshift32), so every server serves the same blob. */
export const makeBlob = (bytes: number): Uint8Array => {
  const out = new Uint8Array(bytes)
  let x = 0x9e3779b9
  for (let i = 0; i < bytes; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    out[i] = x & 0xff
  }
  return out
}

/** The JSON Schema of `echo` (ours) — the SDK servers use the equivalent Zod object. */
export const ECHO_INPUT_SCHEMA = {
  type: "object",
  properties: { text: { type: "string" } },
  required: ["text"]
} as const

export const toolName = (i: number): string => `tool_${i}`
export const toolDescription = (i: number): string => `Benchmark tool number ${i}: echoes the text back.`

/** Whether a `tools/call` result is the echo of {@link ECHO_TEXT} (every contender checks its first call). */
export const isEcho = (result: unknown): boolean =>
  typeof result === "object" && result !== null && "content" in result && Array.isArray(result.content) &&
  JSON.stringify(result.content) === JSON.stringify([{ type: "text", text: ECHO_TEXT }])
