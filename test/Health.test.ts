/**
 * The health endpoint (`healthPath` of `StreamableHttp.serve`): the `Cluster.Health` checks of
 * the context decide `200 {"status":"ok",…}` or `503 {"status":"degraded",…}`; without checks it
 * is `200 {"status":"ok"}`; without `healthPath` there is no such endpoint. Served on 127.0.0.1,
 * port 0.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Cluster from "../src/Cluster.js"
import * as McpServer from "../src/McpServer.js"
import * as StreamableHttp from "../src/transport/StreamableHttp.js"

const get = (url: string, method = "GET") =>
  Effect.promise(async () => {
    const response = await fetch(url, { method })
    const text = await response.text()
    const body: unknown = text === "" ? undefined : JSON.parse(text)
    return { status: response.status, body }
  })

const origin = (url: string) => new URL(url).origin

describe("GET healthPath", () => {
  it.scopedLive("reports each check: ok while up, degraded (503) while one is down", () =>
    Effect.gen(function*() {
      const redisUp = yield* Ref.make(true)
      const checks: ReadonlyArray<Cluster.HealthCheck> = [
        { name: "redis", up: Ref.get(redisUp) },
        { name: "disk", up: Effect.succeed(true) }
      ]
      const server = yield* McpServer.make({ name: "health", version: "0.0.0" })
      const { url } = yield* StreamableHttp.serve(server, { port: 0, healthPath: "/health" }).pipe(
        Effect.provideService(Cluster.Health, checks)
      )
      const health = `${origin(url)}/health`
      expect(yield* get(health)).toEqual({ status: 200, body: { status: "ok", redis: "up", disk: "up" } })
      yield* Ref.set(redisUp, false)
      expect(yield* get(health)).toEqual({ status: 503, body: { status: "degraded", redis: "down", disk: "up" } })
      yield* Ref.set(redisUp, true)
      expect(yield* get(health)).toEqual({ status: 200, body: { status: "ok", redis: "up", disk: "up" } })
      // GET only
      expect((yield* get(health, "POST")).status).toBe(404)
    }))

  it.scopedLive("without checks: ok; without healthPath: no endpoint", () =>
    Effect.gen(function*() {
      const server = yield* McpServer.make({ name: "health", version: "0.0.0" })
      const withPath = yield* StreamableHttp.serve(server, { port: 0, healthPath: "/healthz" })
      expect(yield* get(`${origin(withPath.url)}/healthz`)).toEqual({ status: 200, body: { status: "ok" } })
      const without = yield* StreamableHttp.serve(server, { port: 0 })
      expect((yield* get(`${origin(without.url)}/health`)).status).toBe(404)
    }))
})
