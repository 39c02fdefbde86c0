/** The part of autocannon 8's programmatic API the benchmark uses (the package ships no types). */
declare module "autocannon" {
  import type { EventEmitter } from "node:events"

  interface Options {
    readonly url: string
    readonly method?: string
    readonly headers?: Readonly<Record<string, string>>
    readonly body?: string
    readonly connections?: number
    readonly pipelining?: number
    /** Seconds. */
    readonly duration?: number
    /** Requests cycled through; `setupRequest` may rewrite each one before it is sent. */
    readonly requests?: ReadonlyArray<Request>
    /** Count responses whose body differs from this. */
    readonly expectBody?: string
    /** Seconds. */
    readonly timeout?: number
  }

  interface Request {
    readonly method?: string
    readonly headers?: Readonly<Record<string, string>>
    readonly body?: string
    readonly setupRequest?: (request: Request) => Request
  }

  interface Stats {
    readonly average: number
    readonly mean: number
    readonly total: number
    readonly p50: number
    readonly p99: number
  }

  interface Result {
    readonly requests: Stats
    readonly latency: Stats
    readonly errors: number
    readonly timeouts: number
    readonly mismatches: number
    readonly non2xx: number
    readonly duration: number
  }

  interface Instance extends EventEmitter, PromiseLike<Result> {
    stop(): void
  }

  function autocannon(options: Options): Instance
  export default autocannon
}
