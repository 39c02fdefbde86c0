/**
 * Processes for cluster tests: a real `redis-server` (the Debian package) on a free loopback
 * port, and instances of `examples/cluster.ts` (each its own Node process, `--port 0`, announcing
 * its URL on stderr). Everything started here is killed when the Scope closes.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const START_MS = 60_000

/** A free TCP port on 127.0.0.1 (bound, read and released). */
export const freePort: Effect.Effect<number> = Effect.async<number>((resume) => {
  const probe = Net.createServer()
  probe.listen(0, "127.0.0.1", () => {
    const address = probe.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    probe.close(() => resume(Effect.succeed(port)))
  })
})

export interface Proc {
  readonly child: ChildProcess.ChildProcess
  /** Everything it wrote to stdout and stderr so far. */
  readonly output: () => string
  /** Sends `signal` and waits (at most 10 s) for the exit. */
  readonly kill: (signal?: NodeJS.Signals) => Effect.Effect<void>
}

/**
 * Spawns `command` and waits (at most 60 s) until its output matches `ready`; yields the match.
 * The Scope's end sends `stopSignal` (default SIGKILL; nginx gets SIGTERM, so that its master
 * stops its workers instead of leaving them behind).
 */
const spawn = (
  command: string,
  args: ReadonlyArray<string>,
  ready: RegExp,
  stopSignal: NodeJS.Signals = "SIGKILL"
): Effect.Effect<{ readonly proc: Proc; readonly match: RegExpExecArray }, Error, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<{ readonly proc: Proc; readonly match: RegExpExecArray }, Error>((resume) => {
      const child = ChildProcess.spawn(command, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] })
      let output = ""
      let done = false
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
      const kill = (signal: NodeJS.Signals = "SIGTERM") =>
        Effect.promise(() => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal)
          return Promise.race([exited, new Promise<void>((resolve) => setTimeout(resolve, 10_000))])
        })
      const proc: Proc = { child, output: () => output, kill }
      const timer = setTimeout(() => {
        if (done) return
        done = true
        child.kill("SIGKILL")
        resume(Effect.fail(new Error(`${command}: not ready within ${START_MS} ms:\n${output}`)))
      }, START_MS)
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        const match = ready.exec(output)
        if (match !== null && !done) {
          done = true
          clearTimeout(timer)
          resume(Effect.succeed({ proc, match }))
        }
      }
      child.stdout?.on("data", onData)
      child.stderr?.on("data", onData)
      child.once("exit", (code, signal) => {
        if (done) return
        done = true
        clearTimeout(timer)
        resume(Effect.fail(new Error(`${command} exited (${code ?? signal}) before ready:\n${output}`)))
      })
    }),
    ({ proc }) => proc.kill(stopSignal)
  )

export interface RedisServer extends Proc {
  readonly port: number
  readonly url: string
}

/** `redis-server` on `port` (a free one by default), in memory only (no RDB, no AOF). */
export const redisServer = (port?: number): Effect.Effect<RedisServer, Error, Scope.Scope> =>
  Effect.gen(function*() {
    const p = port ?? (yield* freePort)
    const { proc } = yield* spawn(
      "redis-server",
      ["--port", String(p), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      /Ready to accept connections/
    )
    return { ...proc, port: p, url: `redis://127.0.0.1:${p}` }
  })

export interface Instance extends Proc {
  readonly port: number
  readonly instanceId: string
}

/** One `examples/cluster.ts` process on a free port (or on `port`, e.g. to restart one in place). */
export const instance = (options: {
  readonly redisUrl: string
  readonly prefix: string
  readonly stateKeys?: string | undefined
  readonly port?: number | undefined
}): Effect.Effect<Instance, Error, Scope.Scope> =>
  Effect.gen(function*() {
    const { match, proc } = yield* spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "examples/cluster.ts",
        "--port",
        String(options.port ?? 0),
        "--redis",
        options.redisUrl,
        "--prefix",
        options.prefix,
        ...(options.stateKeys === undefined ? [] : ["--state-keys", options.stateKeys])
      ],
      /instance (\S+) listening on http:\/\/127\.0\.0\.1:(\d+)\//
    )
    return { ...proc, instanceId: match[1] ?? "", port: Number(match[2]) }
  })

/** Whether the `nginx` binary is installed (Debian package `nginx` or `nginx-light`). */
export const hasNginx = (): boolean => ChildProcess.spawnSync("nginx", ["-v"], { stdio: "ignore" }).status === 0

export interface Nginx extends Proc {
  /** The balancer's MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string
}

/**
 * nginx in the foreground on a free port: round robin over `ports` with the settings of
 * examples/nginx-cluster.conf (no buffering, HTTP/1.1 keep-alive upstreams, `proxy_next_upstream
 * error`), its files in a fresh temporary directory.
 */
export const nginx = (ports: ReadonlyArray<number>): Effect.Effect<Nginx, Error, Scope.Scope> =>
  Effect.gen(function*() {
    const port = yield* freePort
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "presa-nginx-"))),
      (d) => Effect.sync(() => Fs.rmSync(d, { recursive: true, force: true }))
    )
    const conf = [
      "worker_processes 1;",
      "daemon off;",
      `pid ${dir}/nginx.pid;`,
      "error_log stderr notice;",
      "events { worker_connections 1024; }",
      "http {",
      "  access_log off;",
      ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((t) => `  ${t}_temp_path ${dir}/${t};`),
      `  upstream mcp { ${ports.map((p) => `server 127.0.0.1:${p};`).join(" ")} keepalive 32; }`,
      "  server {",
      `    listen 127.0.0.1:${port};`,
      "    location /mcp {",
      "      proxy_pass http://mcp; proxy_http_version 1.1; proxy_set_header Connection \"\";",
      "      proxy_set_header Host 127.0.0.1; proxy_buffering off; proxy_request_buffering off;",
      "      proxy_read_timeout 1h; proxy_next_upstream error;",
      "    }",
      "  }",
      "}"
    ].join("\n")
    Fs.writeFileSync(Path.join(dir, "nginx.conf"), conf)
    // "start worker process" is logged (notice) once nginx listens
    const { proc } = yield* spawn(
      "nginx",
      ["-c", Path.join(dir, "nginx.conf")],
      /start worker process/,
      "SIGTERM"
    )
    return { ...proc, url: `http://127.0.0.1:${port}/mcp` }
  })
