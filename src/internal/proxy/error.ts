/**
 * The proxy's error (documented on `McpProxy.ProxyError`).
 * @internal
 */
import * as Data from "effect/Data"

/** What a proxied definition is identified by: tools and prompts by name, the rest by URI. */
export type Kind = "tool" | "prompt" | "resource" | "resourceTemplate" | "skill"

/** Two or more backends serve the same identity. */
export interface Collision {
  readonly kind: Kind
  readonly name: string
  readonly backends: ReadonlyArray<string>
}

/** The proxy could not be built. */
export class ProxyError extends Data.TaggedError("ProxyError")<{
  readonly reason: "Prefix" | "Collision" | "Backend"
  readonly message: string
  readonly collisions: ReadonlyArray<Collision>
  readonly backend?: string
  readonly cause?: unknown
}> {}

/** A configuration file could not be read, parsed or decoded. */
export class ConfigError extends Data.TaggedError("ConfigError")<{
  readonly reason: "Read" | "Json" | "Invalid"
  readonly message: string
  /** The offending field, e.g. `mcpServers.files.args[0]` (`""`: the whole file). */
  readonly path: string
  readonly file?: string
  readonly cause?: unknown
}> {}
