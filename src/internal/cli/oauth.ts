/**
 * OAuth for the command line's HTTP targets (`--oauth`, `login`) and the proxy's HTTP backends
 * (issue #21, item 4): `OAuth.make` over a file token store (`OAuth.fileStore`, mode 0600) and
 * the loopback redirect listener (`OAuthLoopback`), which prints the authorization URL on stderr
 * for the user to open (MCP 2025-11-25, Authorization; RFC 8252 §7.3).
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as OAuth from "../../OAuth.js"
import * as OAuthLoopback from "../../transport/OAuthLoopback.js"

/** What the user chose about OAuth for one HTTP server. @internal */
export interface Settings {
  readonly clientId: string | undefined
  readonly clientSecret: string | undefined
  /** The token file; `undefined`: {@link defaultStore}. */
  readonly store: string | undefined
  /** Default `"authorization_code"` (with the loopback interaction). */
  readonly grant?: "authorization_code" | "client_credentials" | undefined
  readonly scopes?: ReadonlyArray<string> | undefined
}

/**
 * The token file when none is given: `$PRESA_MCP_TOKEN_STORE`, else `$HOME/.presa-mcp-tokens.json`;
 * `None` when neither variable is set.
 *
 * @internal
 */
export const defaultStore: Effect.Effect<Option.Option<string>> = Config.string("PRESA_MCP_TOKEN_STORE").pipe(
  Config.orElse(() =>
    Config.map(Config.string("HOME"), (home) => `${home.replace(/\/+$/, "")}/.presa-mcp-tokens.json`)
  ),
  Config.option,
  Effect.orElseSucceed(() => Option.none<string>())
)

/**
 * An `OAuth.Provider` for `settings`: tokens in the file, a pre-registered client when
 * `clientId` is given (else dynamic registration), and the loopback interaction whose URL goes to
 * `show` (with its redirect listener open for the Scope). Fails with `OAuthError` (`"Store"`
 * when there is no file to use, `"Interaction"` when the listener cannot start).
 *
 * @internal
 */
export const provider = (
  settings: Settings,
  show: (line: string) => Effect.Effect<void>
): Effect.Effect<OAuth.Provider, OAuth.OAuthError, Scope.Scope | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const path = settings.store ?? Option.getOrUndefined(yield* defaultStore)
    if (path === undefined) {
      return yield* new OAuth.OAuthError({
        reason: "Store",
        message: "no token file: give --oauth-store PATH or set PRESA_MCP_TOKEN_STORE or HOME"
      })
    }
    const store = yield* OAuth.fileStore(path)
    const interaction = yield* OAuthLoopback.interaction({
      open: (url) => show(`to authorize, open this URL in a browser:\n${url.href}\n`)
    })
    return yield* OAuth.make({
      interaction,
      clientName: "presa-mcp",
      ...(settings.grant === undefined ? {} : { grant: settings.grant }),
      ...(settings.scopes === undefined ? {} : { scopes: settings.scopes }),
      ...(settings.clientId === undefined ? {} : {
        client: {
          clientId: settings.clientId,
          ...(settings.clientSecret === undefined ? {} : { clientSecret: settings.clientSecret })
        }
      })
    }).pipe(Effect.provideService(OAuth.TokenStore, store))
  })
