/**
 * cluster: modern (2026-07-28, stateless) `tools/call` through nginx round robin, three instances
 * of our server vs one (issue 22, "Running several instances"). Every instance is
 * `servers/ours-cluster-http.ts` (the `http` suite's server with `presa-mcp/Redis`'s layer on one
 * real `redis-server`); one nginx balances over the three, another over the first one alone, so
 * both figures include the balancer's hop. Same load as the `http` suite (autocannon, pre-built
 * body, every response checked), at 64 connections, in interleaved rounds. On this 2-core machine
 * the three instances, nginx, Redis and autocannon share the cores: the ratio shows the cost or
 * gain of spreading load over processes here, not the scaling on more cores.
 *
 * Needs the `redis-server` and `nginx` binaries (Debian packages `redis-server`, `nginx-light`);
 * without them the suite prints why and yields no rows.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import * as Net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { best, type Contender, interleave, roundsOf } from "../lib/compare.js"
import { progress, type Row, row, startHttpServer, stopChild, withTimeout } from "../lib/harness.js"
import { load, prepare } from "./http.js"

const ROUNDS = 2
const ROUND_SECONDS = 2.5
const WARMUP_SECONDS = 1
const CONNECTIONS = 64
const INSTANCES = 3

interface Round {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly bad: number
}

const installed = (command: string, args: ReadonlyArray<string>): boolean =>
  spawnSync(command, args, { stdio: "ignore" }).status === 0

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const probe = Net.createServer()
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      probe.close(() => resolve(port))
    })
  })

/** Spawns `command` and waits (at most 20 s) until its output matches `ready`. */
const startProcess = async (command: string, args: ReadonlyArray<string>, ready: RegExp): Promise<ChildProcess> => {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] })
  let seen = ""
  try {
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        const onData = (chunk: Buffer) => {
          seen = (seen + chunk.toString()).slice(-10_000)
          if (ready.test(seen)) resolve()
        }
        child.stdout?.on("data", onData)
        child.stderr?.on("data", onData)
        child.once("exit", (code) => reject(new Error(`${command} exited (${code}) before ready: ${seen}`)))
      }),
      20_000,
      `${command} ready`
    )
  } catch (error) {
    await stopChild(child)
    throw error
  }
  return child
}

/** nginx in the foreground on a free port, round robin over `ports`; its files in `dir`. */
const startNginx = async (dir: string, ports: ReadonlyArray<number>): Promise<{ child: ChildProcess; url: string }> => {
  const port = await freePort()
  const conf = [
    "worker_processes 1;",
    "daemon off;",
    `pid ${dir}/nginx-${port}.pid;`,
    "error_log stderr notice;",
    "events { worker_connections 1024; }",
    "http {",
    "  access_log off;",
    ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((t) => `  ${t}_temp_path ${dir}/${t}-${port};`),
    `  upstream mcp { ${ports.map((p) => `server 127.0.0.1:${p};`).join(" ")} keepalive 64; }`,
    "  server {",
    `    listen 127.0.0.1:${port};`,
    "    location /mcp {",
    "      proxy_pass http://mcp; proxy_http_version 1.1; proxy_set_header Connection \"\";",
    "      proxy_set_header Host 127.0.0.1; proxy_buffering off; proxy_request_buffering off;",
    "      proxy_next_upstream error;",
    "    }",
    "  }",
    "}"
  ].join("\n")
  const file = path.join(dir, `nginx-${port}.conf`)
  writeFileSync(file, conf)
  const child = await startProcess("nginx", ["-c", file], /start worker process/)
  return { child, url: `http://127.0.0.1:${port}/mcp` }
}

const contender = (name: string, url: string): Contender<Round> => ({
  name,
  open: async () => {
    const options = await prepare(name, url, "modern")
    await load(options, CONNECTIONS, WARMUP_SECONDS)
    return {
      measure: async () => {
        const l = await load(options, CONNECTIONS, ROUND_SECONDS)
        return { rps: l.rps, p50: l.p50, p99: l.p99, bad: l.bad }
      },
      close: () => Promise.resolve()
    }
  }
})

export const run = async (): Promise<Array<Row>> => {
  const missing = [
    installed("redis-server", ["--version"]) ? undefined : "redis-server",
    installed("nginx", ["-v"]) ? undefined : "nginx"
  ].filter((m) => m !== undefined)
  if (missing.length > 0) {
    progress(`cluster: skipped: ${missing.join(" and ")} not installed (Debian: redis-server, nginx-light)`)
    return []
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), "presa-bench-cluster-"))
  const children: Array<ChildProcess> = []
  try {
    const redisPort = await freePort()
    children.push(
      await startProcess(
        "redis-server",
        ["--port", String(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        /Ready to accept connections/
      )
    )
    const prefix = `presa-bench-${process.pid}`
    const ports: Array<number> = []
    for (let i = 0; i < INSTANCES; i++) {
      const started = await startHttpServer("ours-cluster-http.ts", [
        "--redis",
        `redis://127.0.0.1:${redisPort}`,
        "--prefix",
        prefix
      ])
      children.push(started.child)
      ports.push(Number(new URL(started.url).port))
    }
    const three = await startNginx(dir, ports)
    children.push(three.child)
    const one = await startNginx(dir, ports.slice(0, 1))
    children.push(one.child)
    const results = await interleave(
      "cluster",
      [contender("3 instances", three.url), contender("1 instance", one.url)],
      ROUNDS,
      (r) => `${r.rps.toFixed(0)} req/s @${CONNECTIONS}${r.bad > 0 ? ` (${r.bad} bad)` : ""}`
    )
    const o = roundsOf(results, "3 instances")
    const f = roundsOf(results, "1 instance")
    const bad = [...o, ...f].reduce((n, r) => n + r.bad, 0)
    const note =
      `2026-07-28 via nginx round robin, each instance with presa-mcp/Redis; ${os.cpus().length} cores shared` +
      ` by instances, nginx, redis and autocannon${bad > 0 ? `; ${bad} failed/mismatched responses` : ""}`
    const figures = [
      { name: "requests/s", unit: "req/s", better: "higher", get: (r: Round) => r.rps },
      { name: "p50 latency", unit: "ms", better: "lower", get: (r: Round) => r.p50 },
      { name: "p99 latency", unit: "ms", better: "lower", get: (r: Round) => r.p99 }
    ] as const
    return figures.map((fig) =>
      row({
        suite: "cluster",
        figure: `modern tools/call via nginx, ${CONNECTIONS} conn, ${fig.name}: 3 instances vs 1`,
        unit: fig.unit,
        better: fig.better,
        ours: best(o, fig.get, fig.better),
        official: best(f, fig.get, fig.better),
        officialName: "1 instance",
        note,
        oursRounds: o.map(fig.get),
        officialRounds: f.map(fig.get)
      })
    )
  } finally {
    for (const child of children.reverse()) await stopChild(child).catch(() => undefined)
    rmSync(dir, { recursive: true, force: true })
  }
}
