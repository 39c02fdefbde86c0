/**
 * The reference library as one instance of a cluster: run several behind a round-robin load
 * balancer (see examples/nginx-cluster.conf) and they act as one MCP server, sharing change
 * events, tasks and the `requestState` keys through Redis.
 *
 *   REDIS_URL=redis://127.0.0.1:6379 STATE_KEYS=secret1 npx tsx examples/cluster.ts --port 3001
 *   npx tsx examples/cluster.ts --redis redis://127.0.0.1:6379 --state-keys secret1,old --port 3002
 *
 * Besides the library's definitions:
 * - `learn` ({name}) adds a tool named `name` on every instance (announced as a tools list change;
 *   learned while Redis is away, it reaches the other instances when Redis is back);
 * - `touch` ({uri?}) sends `notifications/resources/updated` for `uri` (default
 *   `file:///readme.txt`) to subscribers on every instance;
 * - `slow` ({seconds?}) runs for `seconds` (default 30) unless cancelled; with a client that
 *   declares the Tasks extension it runs as a task, which any instance can poll or cancel;
 * - `confirm` ({what}) asks the user twice (two multi round-trip rounds; the second retry carries
 *   a `requestState` signed by whichever instance answered the first); as a task (a client that
 *   declares the extension) its questions are answered with `tasks/update` on any instance.
 *
 * Legacy (2025-11-25) sessions live in Redis too: their requests may land on any instance. `GET
 * /health` answers `200 {"status":"ok","redis":"up"}`, or `503 {"status":"degraded","redis":"down"}`
 * while Redis is unreachable.
 *
 * One line `... listening on <url>` goes to stderr; SIGINT/SIGTERM stop the instance. Without
 * `STATE_KEYS` an instance signs with a random key, and a retry that lands on another instance is
 * refused (-32602 "Invalid requestState").
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as HashSet from "effect/HashSet"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { parseArgs } from "node:util"
import { Input, McpServer, Tool } from "presa-mcp"
import * as Redis from "presa-mcp/Redis"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import { codeReview, libraryOptions } from "./library-definitions.js"

const { values } = parseArgs({
  options: {
    redis: { type: "string" },
    "state-keys": { type: "string" },
    prefix: { type: "string" },
    deployment: { type: "string" },
    port: { type: "string" },
    host: { type: "string" },
    help: { type: "boolean", short: "h" }
  }
})

if (values.help === true) {
  console.log(
    "usage: npx tsx examples/cluster.ts [--redis URL] [--state-keys k1,k2] [--prefix P] [--deployment D] [--port N] [--host H]\n" +
      "  --redis       Redis URL (or REDIS_URL; default redis://127.0.0.1:6379)\n" +
      "  --state-keys  requestState signing keys, the same on every instance (or STATE_KEYS)\n" +
      "  --prefix      Redis key and channel prefix (default presa-library)\n" +
      "  --deployment  the deployment's name, stamped into every Redis message (default the prefix)\n" +
      "  --port/--host where to listen (or PORT/HOST; default 3000, 127.0.0.1)"
  )
  process.exit(0)
}

const redisUrl = values.redis ?? process.env.REDIS_URL ?? "redis://127.0.0.1:6379"
const stateKeys = (values["state-keys"] ?? process.env.STATE_KEYS ?? "").split(",").filter((k) => k.length > 0)
const port = Number(values.port ?? process.env.PORT ?? 3000)
const host = values.host ?? process.env.HOST ?? "127.0.0.1"

/** A learned tool: it answers with its own name. */
/**
 * A learned tool's name as read back from Redis (the `learned` set and channel carry bare names):
 * what does not match is ignored, so a stray value never becomes a tool.
 */
const LearnedName = Schema.String.pipe(Schema.pattern(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/))
const decodeLearnedName = Schema.decodeUnknownOption(LearnedName)

const learned = (name: string) =>
  Tool.fromJsonSchema({ name, description: `A tool learned at run time.`, handler: () => `I am ${name}` })

const CONFIRM = { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] } as const

const main = Effect.gen(function*() {
  const redis = yield* Redis.RedisConnection
  const self = yield* Deferred.make<McpServer.McpServer>()
  /** Adds a learned tool here unless this instance has it (a duplicate name is a `DefinitionError`). */
  const addLearned = (server: McpServer.McpServer, raw: string) =>
    Option.match(decodeLearnedName(raw), {
      onNone: () => Effect.logWarning("learn: ignored a name read from Redis that is not a tool name"),
      onSome: (name) =>
        McpServer.addTool(server, learned(name)).pipe(Effect.catchTag("DefinitionError", () => Effect.void))
    })
  /** Names learned here that Redis does not hold yet (it was away). */
  const unshared = yield* Ref.make(HashSet.empty<string>())
  const share = (tool: string) =>
    redis.run("learn", (c) => c.sadd(redis.key("learned"), tool).then(() => c.publish(redis.key("learned"), tool)))
  const learn = Tool.fromJsonSchema({
    name: "learn",
    description: "Adds a tool named `name` on every instance.",
    inputSchema: {
      type: "object",
      properties: { name: { type: "string", pattern: "^[A-Za-z][A-Za-z0-9_-]{0,63}$" } },
      required: ["name"]
    },
    handler: ({ name }) =>
      Effect.gen(function*() {
        const tool = String(name)
        const server = yield* Deferred.await(self)
        yield* addLearned(server, tool)
        // stored for instances that start later, announced to those running now; while Redis is
        // away it waits here and is shared when Redis is back (see reconcile)
        yield* share(tool).pipe(Effect.catchTag("RedisError", (e) =>
          Effect.zipRight(
            Ref.update(unshared, HashSet.add(tool)),
            Effect.logWarning("learn: not shared yet, retried when Redis is back", e.message)
          )))
        return `learned ${tool}`
      })
  })
  const touch = Tool.fromJsonSchema({
    name: "touch",
    description: "Announces that `uri` (default file:///readme.txt) changed.",
    inputSchema: { type: "object", properties: { uri: { type: "string" } } },
    handler: ({ uri }) => {
      const changed = typeof uri === "string" ? uri : "file:///readme.txt"
      return Effect.flatMap(Deferred.await(self), (server) => McpServer.resourceUpdated(server, changed)).pipe(
        Effect.as(`touched ${changed}`)
      )
    }
  })
  const slow = Tool.fromJsonSchema({
    name: "slow",
    description: "Runs for `seconds` (default 30) unless cancelled.",
    inputSchema: { type: "object", properties: { seconds: { type: "number", minimum: 0, maximum: 30 } } },
    task: "optional",
    handler: ({ seconds }) =>
      Effect.sleep(`${typeof seconds === "number" ? seconds : 30} seconds`).pipe(
        Effect.onInterrupt(() => Effect.logInfo("slow: interrupted")),
        Effect.as("slept")
      )
  })
  const confirm = Tool.fromJsonSchema({
    name: "confirm",
    description: "Asks twice whether to do `what`.",
    inputSchema: { type: "object", properties: { what: { type: "string" } }, required: ["what"] },
    task: "optional",
    handler: ({ what }) =>
      Effect.gen(function*() {
        const first = yield* Input.elicit(`Do ${String(what)}?`, CONFIRM)
        if (first.action !== "accept" || first.content?.ok !== true) return `not done`
        const second = yield* Input.elicit(`Really do ${String(what)}?`, CONFIRM)
        return second.action === "accept" && second.content?.ok === true ? `done ${String(what)}` : `not done`
      })
  })
  const server = yield* McpServer.make({
    ...libraryOptions,
    tools: [...(libraryOptions.tools ?? []), learn, touch, slow, confirm],
    skills: [yield* codeReview],
    listChanged: true,
    subscribe: true,
    tasks: { pollInterval: "200 millis" },
    ...(stateKeys.length > 0 ? { inputState: { keys: stateKeys } } : {})
  })
  yield* Deferred.succeed(self, server)
  // Tools learned on other instances: as they are announced, and reconciled from the set Redis
  // holds (at start, each time Redis is back, and every 2 s for announcements missed around an
  // outage): what this instance learned while Redis was away is shared first. Every instance
  // converges to the same tools within one reconciliation after Redis is back.
  const announced = yield* redis.channel("learned")
  yield* Queue.take(announced).pipe(
    Effect.flatMap((name) => addLearned(server, name)),
    Effect.forever,
    Effect.forkScoped
  )
  const reconcile = Effect.gen(function*() {
    for (const name of yield* Ref.get(unshared)) {
      yield* share(name)
      yield* Ref.update(unshared, HashSet.remove(name))
    }
    const known = yield* redis.run("learned", (c) => c.smembers(redis.key("learned")))
    yield* Effect.forEach(HashSet.fromIterable(known), (name) => addLearned(server, name), { discard: true })
  }).pipe(Effect.catchTag("RedisError", () => Effect.void))
  yield* reconcile
  yield* redis.changes.pipe(
    Stream.filter((ready) => ready),
    Stream.merge(Stream.tick("2 seconds")),
    Stream.runForEach(() => reconcile),
    Effect.forkScoped
  )
  // GET /health: 200 {"status":"ok","redis":"up"}, or 503 {"status":"degraded","redis":"down"}
  const address = yield* StreamableHttp.serve(server, { port, host, healthPath: "/health" })
  yield* Console.error(`presa-cluster instance ${redis.instanceId} listening on ${address.url}`)
  return yield* Effect.never
}).pipe(
  Effect.scoped,
  Effect.provide(Redis.layer({
    url: redisUrl,
    prefix: values.prefix ?? "presa-library",
    ...(values.deployment === undefined ? {} : { deployment: values.deployment })
  })),
  Effect.catchTag("ServeError", (e) =>
    Console.error(`cannot listen on ${host}:${port}: ${String(e.cause)}`).pipe(
      Effect.zipRight(Effect.sync(() => {
        process.exitCode = 1
      }))
    ))
)

NodeRuntime.runMain(main)
