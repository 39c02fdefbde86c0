/**
 * The health endpoint of a server instance (`healthPath`): `200 {"status":"ok"}` when every
 * `Cluster.Health` check of the context is up (or there is none), else `503
 * {"status":"degraded", "<name>":"down", …}`; each check is named with `"up"` or `"down"`
 * (docs/architecture.md: instances behind a balancer report a degraded shared state).
 * @internal
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Cluster from "../../../Cluster.js"

/** Builds the `GET` handler from the checks in the current context. */
export const makeHealthHandler: Effect.Effect<Effect.Effect<HttpServerResponse.HttpServerResponse>> = Effect.map(
  Effect.serviceOption(Cluster.Health),
  (checks) => {
    const all = Option.getOrElse(checks, (): ReadonlyArray<Cluster.HealthCheck> => [])
    return Effect.map(
      Effect.forEach(all, (check) => Effect.map(check.up, (up) => [check.name, up ? "up" : "down"] as const)),
      (states) => {
        const ok = states.every(([, state]) => state === "up")
        return HttpServerResponse.unsafeJson(
          { status: ok ? "ok" : "degraded", ...Object.fromEntries(states) },
          { status: ok ? 200 : 503, headers: { "cache-control": "no-store" } }
        )
      }
    )
  }
)
