/**
 * The OAuth redirect for CLIs and desktop apps on Node: an `OAuth.Interaction` whose
 * `redirect_uri` is a loopback listener (`http://127.0.0.1:<port>/callback`, RFC 8252 §7.3, OAuth
 * 2.1 §8.4.2). The application shows the user the authorization URL (opens a browser, prints it);
 * the browser's redirect lands on the listener, which answers with a short page and hands the URL
 * to the provider.
 *
 * Guide: [OAuth client](https://github.com/presa-mcp/presa-mcp/blob/main/docs/oauth.md).
 *
 * @example
 * ```ts
 * import * as Console from "effect/Console"
 * import * as Effect from "effect/Effect"
 * import { OAuth } from "presa-mcp"
 * import * as OAuthLoopback from "presa-mcp/transport/OAuthLoopback"
 *
 * const provider = Effect.gen(function*() {
 *   const interaction = yield* OAuthLoopback.interaction({
 *     open: (url) => Console.error(`Open this URL to authorize: ${url.href}`)
 *   })
 *   return yield* OAuth.make({ interaction })
 * })
 * ```
 *
 * @since 0.2.0
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import * as NodeHttp from "node:http"
import type * as Net from "node:net"
import * as OAuth from "../OAuth.js"

/**
 * Options of {@link interaction}: `open` shows the authorization URL to the user (never given
 * secrets: the URL carries only public request parameters); `port` of the listener on
 * `127.0.0.1` (default 0: any free port, chosen once when the listener starts); `path` of the
 * redirect (default `/callback`); `timeout` for the user (`DurationInput`, default 5 minutes).
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  readonly open: (authorizationUrl: URL) => Effect.Effect<void>
  readonly port?: number | undefined
  readonly path?: string | undefined
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * What may reach `open` (a browser): `https:`, or `http:` to a loopback host. A `javascript:`,
 * `data:` or `file:` URL (or plain `http:` elsewhere) from a hostile authorization server's
 * metadata never does.
 */
const openable = (url: URL): boolean =>
  url.protocol === "https:" ||
  (url.protocol === "http:" &&
    (url.hostname === "localhost" || url.hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(url.hostname)))

const PAGE = "<!doctype html><meta charset=utf-8><title>Authorized</title>" +
  "<p>Authorization finished. You can close this window.</p>"

/**
 * Starts the loopback listener (closed with the `Scope`) and returns the interaction. Each
 * `authorize` waits for one redirect to `path`; other paths answer 404. Only an `https:` URL, or
 * `http:` to a loopback host, reaches `open`; any other authorization URL fails with `OAuthError`
 * `"UnsafeUrl"` and `open` is not called. Fails with `OAuthError` `"Interaction"` when the
 * listener cannot start or the user does not finish within `timeout`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const interaction = (options: Options): Effect.Effect<OAuth.Interaction, OAuth.OAuthError, Scope.Scope> =>
  Effect.gen(function*() {
    const path = options.path ?? "/callback"
    // The redirect arrives in a Node callback: the pending authorization is one cell it can read.
    const current: { deferred: Deferred.Deferred<URL> | undefined } = { deferred: undefined }
    const server = yield* Effect.acquireRelease(
      Effect.async<NodeHttp.Server, OAuth.OAuthError>((resume) => {
        const s = NodeHttp.createServer((req, res) => {
          const url = new URL(req.url ?? "/", "http://127.0.0.1")
          const deferred = current.deferred
          if (req.method !== "GET" || url.pathname !== path || deferred === undefined) {
            res.writeHead(404, { "content-type": "text/plain" })
            res.end("not found")
            return
          }
          res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
          res.end(PAGE)
          Deferred.unsafeDone(deferred, Exit.succeed(url))
        })
        s.once("error", (e) =>
          resume(Effect.fail(
            new OAuth.OAuthError({ reason: "Interaction", message: `the loopback listener failed: ${e.message}` })
          )))
        s.listen(options.port ?? 0, "127.0.0.1", () => resume(Effect.succeed(s)))
      }),
      (s) =>
        Effect.async<void>((resume) => {
          s.closeAllConnections()
          s.close(() => resume(Effect.void))
        })
    )
    const address = server.address()
    const port = typeof address === "object" && address !== null ? (address as Net.AddressInfo).port : 0
    const redirectUri = `http://127.0.0.1:${port}${path}`
    const timeout = options.timeout ?? Duration.minutes(5)
    return {
      redirectUri,
      authorize: (authorizationUrl) =>
        Effect.gen(function*() {
          if (!openable(authorizationUrl)) {
            return yield* new OAuth.OAuthError({
              reason: "UnsafeUrl",
              message: `the authorization URL has the scheme ${
                authorizationUrl.protocol.slice(0, 16)
              } or is plain http: outside loopback; it is not opened`
            })
          }
          const deferred = yield* Deferred.make<URL>()
          current.deferred = deferred
          yield* options.open(authorizationUrl)
          const redirect = yield* Deferred.await(deferred).pipe(
            Effect.timeoutFail({
              duration: timeout,
              onTimeout: () =>
                new OAuth.OAuthError({ reason: "Interaction", message: "the authorization was not finished in time" })
            }),
            Effect.ensuring(Effect.sync(() => {
              current.deferred = undefined
            }))
          )
          return new URL(`${redirect.pathname}${redirect.search}`, redirectUri)
        })
    }
  })
