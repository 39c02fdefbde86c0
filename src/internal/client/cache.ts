/**
 * The client's result cache (MCP 2026-07-28, Caching): `server/discover`, the four lists and
 * `resources/read`, fresh for their `ttlMs`, keyed by method + params (one client = one
 * authorization context, so `cacheScope` needs no key of its own). Change notifications drop
 * what they make stale; a request started before a drop never stores its (maybe stale) result.
 * Times come from `Clock`.
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as JsonRpc from "../../JsonRpc.js"
import * as McpSchema from "../../McpSchema.js"

const M = McpSchema.Method

/** Methods whose results are cached. */
export const CACHEABLE: ReadonlySet<string> = new Set([
  M.discover,
  M.toolsList,
  M.promptsList,
  M.resourcesList,
  M.resourcesTemplatesList,
  M.resourcesRead
])

/** Paginated list methods (a cursor error drops all their pages). */
export const LISTS: ReadonlySet<string> = new Set([
  M.toolsList,
  M.promptsList,
  M.resourcesList,
  M.resourcesTemplatesList
])

/** What a change notification makes stale: groups of entries (a list method, or one read by URI). */
const staleGroups = (notification: JsonRpc.Notification): ReadonlyArray<string> => {
  switch (notification.method) {
    case McpSchema.Method.toolsListChanged:
      return [M.toolsList, M.discover]
    case McpSchema.Method.promptsListChanged:
      return [M.promptsList, M.discover]
    case McpSchema.Method.resourcesListChanged:
      return [M.resourcesList, M.resourcesTemplatesList, M.discover]
    case McpSchema.Method.resourcesUpdated: {
      const uri = notification.params?.uri
      return typeof uri === "string" ? [readGroup(uri)] : []
    }
    default:
      return []
  }
}

const readGroup = (uri: string) => `${M.resourcesRead} ${uri}`

const groupOf = (method: string, params: JsonRpc.JsonObject | undefined): string =>
  method === M.resourcesRead && typeof params?.uri === "string" ? readGroup(params.uri) : method

/** JSON with sorted keys, so equal params give equal keys. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (JsonRpc.isObject(value)) {
    return `{${
      Object.keys(value).sort().filter((k) => value[k] !== undefined).map((k) =>
        `${JSON.stringify(k)}:${canonical(value[k])}`
      ).join(",")
    }}`
  }
  return JSON.stringify(value) ?? "null"
}

/** Params that do not change the result: the envelope and MRTR fields. */
const IGNORED: ReadonlySet<string> = new Set(["_meta", "inputResponses", "requestState"])

const keyOf = (method: string, params: JsonRpc.JsonObject | undefined): string =>
  `${method} ${canonical(Object.fromEntries(Object.entries(params ?? {}).filter(([k]) => !IGNORED.has(k))))}`

interface Entry {
  readonly group: string
  readonly result: JsonRpc.JsonObject
  readonly expiresAtMillis: number
}

interface State {
  readonly entries: HashMap.HashMap<string, Entry>
  /** Bumped per group on every drop; a store whose generation is outdated is skipped. */
  readonly generations: HashMap.HashMap<string, number>
  /** Bumped by `clear`. */
  readonly epoch: number
}

/** A generation token taken before a request goes out. */
export interface Generation {
  readonly epoch: number
  readonly group: number
}

export interface Cache {
  readonly lookup: (
    method: string,
    params: JsonRpc.JsonObject | undefined
  ) => Effect.Effect<Option.Option<JsonRpc.JsonObject>>
  readonly generation: (method: string, params: JsonRpc.JsonObject | undefined) => Effect.Effect<Generation>
  /** Stores a result fresh for `ttlMs` (nothing when `ttlMs <= 0` or the generation is outdated). */
  readonly store: (
    method: string,
    params: JsonRpc.JsonObject | undefined,
    result: JsonRpc.JsonObject,
    ttlMs: number,
    generation: Generation
  ) => Effect.Effect<void>
  /** Drops what a change notification makes stale (anything else is ignored). */
  readonly invalidate: (notification: JsonRpc.Notification) => Effect.Effect<void>
  /** Drops every page of one list. */
  readonly dropList: (method: string) => Effect.Effect<void>
  readonly clear: Effect.Effect<void>
}

/** `ttlMs` of a modern result: a non-negative integer, else 0 (MCP 2026-07-28, Caching). */
export const ttlOf = (result: JsonRpc.JsonObject): number => {
  const ttl = result.ttlMs
  return typeof ttl === "number" && Number.isFinite(ttl) && ttl > 0 ? Math.floor(ttl) : 0
}

export const make: Effect.Effect<Cache> = Effect.map(
  Ref.make<State>({ entries: HashMap.empty(), generations: HashMap.empty(), epoch: 0 }),
  (ref): Cache => {
    const drop = (groups: ReadonlyArray<string>) =>
      groups.length === 0 ? Effect.void : Ref.update(ref, (s): State => ({
        ...s,
        entries: HashMap.filter(s.entries, (e) => !groups.includes(e.group)),
        generations: groups.reduce(
          (g, group) => HashMap.set(g, group, Option.getOrElse(HashMap.get(g, group), () => 0) + 1),
          s.generations
        )
      }))
    return {
      lookup: (method, params) =>
        Effect.gen(function*() {
          const key = keyOf(method, params)
          const now = yield* Clock.currentTimeMillis
          const entry = HashMap.get((yield* Ref.get(ref)).entries, key)
          if (Option.isNone(entry)) return Option.none()
          if (now < entry.value.expiresAtMillis) return Option.some(entry.value.result)
          yield* Ref.update(ref, (s): State => {
            const current = HashMap.get(s.entries, key)
            return Option.isSome(current) && current.value === entry.value
              ? { ...s, entries: HashMap.remove(s.entries, key) }
              : s
          })
          return Option.none()
        }),
      generation: (method, params) =>
        Effect.map(Ref.get(ref), (s) => ({
          epoch: s.epoch,
          group: Option.getOrElse(HashMap.get(s.generations, groupOf(method, params)), () => 0)
        })),
      store: (method, params, result, ttlMs, generation) =>
        ttlMs <= 0 ? Effect.void : Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const group = groupOf(method, params)
          yield* Ref.update(ref, (s): State => {
            const current = Option.getOrElse(HashMap.get(s.generations, group), () => 0)
            if (s.epoch !== generation.epoch || current !== generation.group) return s
            return {
              ...s,
              entries: HashMap.set(s.entries, keyOf(method, params), { group, result, expiresAtMillis: now + ttlMs })
            }
          })
        }),
      invalidate: (notification) => drop(staleGroups(notification)),
      dropList: (method) => drop([method]),
      clear: Ref.update(
        ref,
        (s): State => ({ entries: HashMap.empty(), generations: s.generations, epoch: s.epoch + 1 })
      )
    }
  }
)
