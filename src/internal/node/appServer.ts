/**
 * The Node edge of `presa-mcp app` (`internal/cli/app.ts`): the page's HTTP listener and the
 * browser script of the page (the host bridge bundled for the browser).
 *
 * @internal
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServer from "@effect/platform/HttpServer"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { readFile } from "node:fs/promises"
import * as NodeHttp from "node:http"
import { fileURLToPath } from "node:url"

/**
 * Serves `app` on `host:port` (port 0: a free one) until the Scope closes; yields the bound port.
 *
 * @internal
 */
export const listen = (
  app: HttpApp.Default<never, never>,
  options: { readonly host: string; readonly port: number }
): Effect.Effect<number, HttpServerError.ServeError, Scope.Scope> =>
  Effect.gen(function*() {
    const node = NodeHttp.createServer()
    const server = yield* NodeHttpServer.make(() => node, { host: options.host, port: options.port })
    yield* Effect.addFinalizer(() => Effect.sync(() => node.closeAllConnections()))
    yield* HttpServer.serveEffect()(app).pipe(Effect.provideService(HttpServer.HttpServer, server))
    return server.address._tag === "TcpAddress" ? server.address.port : options.port
  })

/**
 * The page's script: `app-page.js` beside the bundled bin (`dist/`), else bundled now from
 * `internal/cli/appPage.ts` with esbuild (a checkout, where esbuild is a dev dependency).
 *
 * @internal
 */
export const pageScript: Effect.Effect<string, Error> = Effect.tryPromise({
  try: async () => {
    for (const candidate of ["./app-page.js", "../../app-page.js"]) {
      const text = await readFile(new URL(candidate, import.meta.url), "utf8").catch(() => undefined)
      if (text !== undefined) return text
    }
    const esbuild = await import("esbuild")
    const out = await esbuild.build({
      entryPoints: [fileURLToPath(new URL("../cli/appPage.ts", import.meta.url))],
      bundle: true,
      write: false,
      platform: "browser",
      format: "iife",
      target: "es2022",
      minify: true,
      legalComments: "none",
      logLevel: "silent"
    })
    const [file] = out.outputFiles
    if (file === undefined) throw new Error("esbuild wrote no file")
    return file.text
  },
  catch: (cause) => new Error(`cannot load the page script: ${cause instanceof Error ? cause.message : String(cause)}`)
})
