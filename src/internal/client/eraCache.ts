/**
 * The in-memory era cache (`McpClient.makeEraCache`) and the verdict of a detection, for
 * `McpClient.Options.eraCache`.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Ref from "effect/Ref"
import type { EraCache, EraVerdict, Info } from "../../McpClient.js"

export const make: Effect.Effect<EraCache> = Effect.map(
  Ref.make(HashMap.empty<string, EraVerdict>()),
  (ref): EraCache => ({
    get: (key) => Effect.map(Ref.get(ref), (m) => HashMap.get(m, key)),
    set: (key, verdict) => Ref.update(ref, (m) => HashMap.set(m, key, verdict)),
    invalidate: (key) => Ref.update(ref, (m) => HashMap.remove(m, key))
  })
)

/** What a detection found, as a verdict to store: a modern server's `Info`, or legacy. */
export const verdictOf = (info: Info): EraVerdict => info.era === "modern" ? { era: "modern", info } : { era: "legacy" }
