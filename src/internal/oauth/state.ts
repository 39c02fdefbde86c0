/**
 * The record an OAuth client provider's module functions share (`provider`, `target`,
 * `registration`, `token`, `flows/*`): the application's options, the token store, the network,
 * the lock challenges take, the last target per endpoint, and the DPoP key pair once one is made.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as SynchronizedRef from "effect/SynchronizedRef"
import type * as oauth from "oauth4webapi"
import type { Options, TokenStore } from "../../OAuth.js"
import type * as Dpop from "./dpop.js"
import * as Network from "./network.js"

/** Default `Options.maxAttempts`. */
export const DEFAULT_MAX_ATTEMPTS = 3

/** What one authorization needs about the protected resource. */
export interface Target {
  readonly server: URL
  /** RFC 8707 `resource`: the PRM `resource`, else the endpoint without its fragment. */
  readonly resource: string
  readonly as: oauth.AuthorizationServer
  readonly prmScopes: ReadonlyArray<string> | undefined
}

export interface ProviderState {
  readonly options: Options
  readonly store: TokenStore["Type"]
  readonly http: Network.Http
  /** Challenges and refreshes run one at a time. */
  readonly lock: Effect.Semaphore
  /** The last target per endpoint (`URL.href`), for refreshes before a request. */
  readonly targets: Ref.Ref<HashMap.HashMap<string, Target>>
  readonly grant: NonNullable<Options["grant"]>
  readonly maxAttempts: number
  /** The DPoP key pair and nonces, made when a first token request needs them. */
  readonly dpop: SynchronizedRef.SynchronizedRef<Option.Option<Dpop.Dpop>>
}

export const make = (options: Options, store: TokenStore["Type"]): Effect.Effect<ProviderState> =>
  Effect.gen(function*() {
    return {
      options,
      store,
      http: Network.makeHttp(options),
      lock: yield* Effect.makeSemaphore(1),
      targets: yield* Ref.make(HashMap.empty<string, Target>()),
      grant: options.grant ?? "authorization_code",
      maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      dpop: yield* SynchronizedRef.make(Option.none<Dpop.Dpop>())
    }
  })
