/**
 * `presa-mcp app` in a real browser (issue #41, Proof): Debian's chromium driven by
 * playwright-core, headless. For each target the test spawns `node --import tsx src/bin.ts app …`
 * against an MCP Apps server (stdio command or URL), opens the printed URL, and reads the view
 * inside the sandboxed iframe. The view is built with the official view SDK
 * (`@modelcontextprotocol/ext-apps`, its `app-with-deps` bundle): it initializes against our host
 * bridge, receives the tool input and result, calls the app-only tool and shows its answer; its
 * call of a model-only tool is refused; its height reaches the iframe. With the fixture server,
 * the CSP checks: a fetch to the declared origin (a second 127.0.0.1 server) is allowed, one to an
 * undeclared origin (a third) is blocked before it leaves the browser. SIGTERM ends the dev host
 * with exit code 0.
 *
 * Targets: our fixture server (raw `_meta` on Tool and Resource) in both eras (a modern server and
 * one pinned to 2025-11-25) over stdio and HTTP, and the same view served by the official SDK v2
 * with the ext-apps server helpers. Targets share the element ids: #result (the tool result's structuredContent), #call-app and
 * #app-answer (the app-only tool), #call-model and #model-refused (the model-only tool). A target
 * is a command line for the view's server; add one to TARGETS to cover another server.
 *
 * Skipped, with a message, where /usr/bin/chromium is absent (.ci/run installs it).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, chromium } from "playwright-core"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const CHROMIUM = "/usr/bin/chromium"
const HAS_CHROMIUM = Fs.existsSync(CHROMIUM)
const WAIT_MS = 30_000
const TEST_MS = 120_000

if (!HAS_CHROMIUM) {
  console.warn(`AppHost.browser.test.ts: skipped, ${CHROMIUM} is absent (apt-get install chromium; .ci/run does)`)
}

/** A probe origin: a 127.0.0.1 server that answers `pong-<name>` to anyone (CORS) and counts requests. */
interface Probe {
  readonly origin: string
  readonly hits: () => number
  readonly close: () => Promise<void>
}

const probe = (name: string): Promise<Probe> =>
  new Promise((resolve) => {
    let hits = 0
    const server = Http.createServer((_req, res) => {
      hits++
      res.writeHead(200, { "access-control-allow-origin": "*", "content-type": "text/plain" })
      res.end(`pong-${name}`)
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        origin: `http://127.0.0.1:${port}`,
        hits: () => hits,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

/** A spawned process whose output is collected; `waitFor` polls it with a deadline. */
interface Spawned {
  readonly child: ChildProcess.ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  readonly waitFor: (pattern: RegExp, stream: "stdout" | "stderr") => Promise<RegExpExecArray>
  readonly stop: () => Promise<number | null>
}

const spawn = (args: ReadonlyArray<string>): Spawned => {
  const child = ChildProcess.spawn(process.execPath, ["--import", "tsx", ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  let err = ""
  child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
  child.stderr?.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor: async (pattern, stream) => {
      const deadline = Date.now() + WAIT_MS
      while (Date.now() < deadline) {
        const match = pattern.exec(stream === "stdout" ? out : err)
        if (match !== null) return match
        if (child.exitCode !== null) break
        await new Promise((r) => setTimeout(r, 100))
      }
      throw new Error(`no ${pattern} on ${stream} of ${args.join(" ")}\nstdout: ${out}\nstderr: ${err}`)
    },
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM")
      const timer = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 15_000))
      const code = await Promise.race([exited, timer])
      if (code === "timeout") {
        child.kill("SIGKILL")
        throw new Error(`${args.join(" ")} did not end within 15 s of SIGTERM`)
      }
      return code
    }
  }
}

interface Origins {
  readonly declared: string
  readonly undeclared: string
}

/** A server with a view: how to start it, the `app` arguments, and what its view shows. */
interface Target {
  readonly name: string
  /** Starts the server if it is an HTTP one; yields the `presa-mcp app` arguments after `app`. */
  readonly start: (origins: Origins) => Promise<{ readonly args: ReadonlyArray<string>; readonly server?: Spawned }>
  /** Substrings of `#result`'s text once the tool result arrived. */
  readonly result: ReadonlyArray<string>
  /** A substring of `#app-answer` once the app-only tool answered. */
  readonly appAnswer: string
  /**
   * Whether the view is the fixture's, with its extra probes: the CSP ones (`#fetch-declared`,
   * `#fetch-undeclared`) and `#context` (the last host-context change).
   */
  readonly fixture: boolean
  /** The view's element ids, when they are not the fixture's (#call-app, #app-answer, #call-model, #model-refused). */
  readonly ids?: {
    readonly callApp: string
    readonly appAnswer: string
    readonly callModel: string
    readonly modelRefused: string
  }
}

const FIXTURE_IDS = {
  callApp: "#call-app",
  appAnswer: "#app-answer",
  callModel: "#call-model",
  modelRefused: "#model-refused"
}

const FIXTURE = "test/fixtures/apps-view-server.ts"
const fixtureFlags = (o: Origins, legacy: boolean) => [
  "--connect",
  o.declared,
  "--probe",
  o.undeclared,
  ...(legacy ? ["--legacy"] : [])
]
const SHOW_ORDER = ["show_order", "--args", JSON.stringify({ id: "A-17" })]

const stdioFixture = (name: string, legacy: boolean): Target => ({
  name,
  start: (o) =>
    Promise.resolve({
      args: [...SHOW_ORDER, "--", process.execPath, "--import", "tsx", FIXTURE, "--stdio", ...fixtureFlags(o, legacy)]
    }),
  // uiHost: the dev host declared the MCP Apps extension to the server, in this era too
  result: ["\"id\":\"A-17\"", "\"items\":3", "\"total\":42.5", "\"uiHost\":true"],
  appAnswer: "note for A-17: deliver after 5pm",
  fixture: true
})

const httpFixture = (name: string, legacy: boolean): Target => ({
  name,
  start: async (o) => {
    const server = spawn([FIXTURE, "--port", "0", ...fixtureFlags(o, legacy)])
    const [, url] = await server.waitFor(/listening (http:\/\/\S+)/, "stderr")
    return { args: [url ?? "", ...SHOW_ORDER], server }
  },
  // uiHost: the dev host declared the MCP Apps extension to the server, in this era too
  result: ["\"id\":\"A-17\"", "\"items\":3", "\"total\":42.5", "\"uiHost\":true"],
  appAnswer: "note for A-17: deliver after 5pm",
  fixture: true
})

/** The same view served by the official SDK v2 with the ext-apps server helpers (stdio). */
const sdkV2Fixture: Target = {
  ...stdioFixture("official SDK v2 server with the ext-apps server helpers, stdio", false),
  result: ["\"id\":\"A-17\"", "\"items\":3", "\"total\":42.5"],
  start: (o) =>
    Promise.resolve({
      args: [
        ...SHOW_ORDER,
        "--",
        process.execPath,
        "--import",
        "tsx",
        "test/fixtures/apps-sdk-v2-server.ts",
        ...fixtureFlags(o, false)
      ]
    })
}

/** examples/apps.ts: its own view, ids from examples/apps-definitions.ts `Ids` (docs/apps.md). */
const EXAMPLE = "examples/apps.ts"
const COUNT = ["count_letters", "--args", JSON.stringify({ text: "Hello World" })]
const example = {
  result: ["\"text\":\"Hello World\"", "\"letters\":10", "\"vowels\":3"],
  appAnswer: "dlroW olleH",
  fixture: false,
  ids: {
    callApp: "#call-app-tool",
    appAnswer: "#app-result",
    callModel: "#call-model-tool",
    modelRefused: "#model-result"
  }
}
const exampleStdio: Target = {
  name: "examples/apps.ts, stdio",
  start: () => Promise.resolve({ args: [...COUNT, "--", process.execPath, "--import", "tsx", EXAMPLE, "--stdio"] }),
  ...example
}
const exampleHttp: Target = {
  name: "examples/apps.ts, HTTP",
  start: async () => {
    const server = spawn([EXAMPLE, "--port", "0"])
    const [, url] = await server.waitFor(/listening on (http:\/\/\S+)/, "stderr")
    return { args: [url ?? "", ...COUNT], server }
  },
  ...example
}

/** The servers whose views are shown. */
const TARGETS: ReadonlyArray<Target> = [
  stdioFixture("fixture, modern, stdio", false),
  stdioFixture("fixture, legacy (2025-11-25 only), stdio", true),
  httpFixture("fixture, modern, HTTP", false),
  httpFixture("fixture, legacy (2025-11-25 only), HTTP", true),
  sdkV2Fixture,
  exampleStdio,
  exampleHttp
]

describe.skipIf(!HAS_CHROMIUM)("presa-mcp app in headless chromium", () => {
  let browser: Browser
  let declared: Probe
  let undeclared: Probe

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      timeout: WAIT_MS,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync"
      ]
    })
    declared = await probe("declared")
    undeclared = await probe("undeclared")
  })

  afterAll(async () => {
    await browser?.close()
    await declared?.close()
    await undeclared?.close()
  })

  for (const target of TARGETS) {
    it(target.name, { timeout: TEST_MS }, async () => {
      const origins = { declared: declared.origin, undeclared: undeclared.origin }
      const { args, server } = await target.start(origins)
      const app = spawn(["src/bin.ts", "app", ...args])
      const page = await browser.newPage()
      page.setDefaultTimeout(WAIT_MS)
      const viewHeaders: Array<Record<string, string>> = []
      page.on("response", (r) => {
        if (new URL(r.url()).pathname === "/view") viewHeaders.push(r.headers())
      })
      try {
        const [url] = await app.waitFor(/^http:\/\/127\.0\.0\.1:\d+\/$/m, "stdout")
        assert.strictEqual(app.stdout(), `${url}\n`, "stdout carries the URL alone")
        await page.goto(url)
        const frameElement = page.locator("#view-container iframe")
        assert.strictEqual(await frameElement.getAttribute("sandbox"), "allow-scripts")
        const view = page.frameLocator("#view-container iframe")

        // the official SDK's App initialized against our bridge and got the input and the result
        await view.locator("#status", { hasText: "connected" }).waitFor()
        await view.locator("#result", { hasText: target.result[0] ?? "" }).waitFor()
        const result = await view.locator("#result").textContent() ?? ""
        for (const part of target.result) assert.include(result, part)

        // the app-only tool, through the bridge, the dev host and the client
        const ids = target.ids ?? FIXTURE_IDS
        await view.locator(ids.callApp).click()
        await view.locator(ids.appAnswer, { hasText: target.appAnswer }).waitFor()

        // the model-only tool is refused by the host (the server never sees the call)
        await view.locator(ids.callModel).click()
        // (any view that shows the error's message: the bridge's -32602 names the rule)
        await view.locator(ids.modelRefused, { hasText: /\S/ }).waitFor()
        const refused = await view.locator(ids.modelRefused).textContent() ?? ""
        assert.include(refused, "not callable from this view")
        assert.notInclude(refused, "audit: secret")
        assert.notInclude(app.stderr(), "tools/call audit_log: ok")

        // the view's size-changed notifications reach the iframe's height
        await page.waitForFunction(
          () => {
            const frame = document.querySelector<HTMLIFrameElement>("#view-container iframe")
            return frame !== null && /^\d+px$/.test(frame.style.height) && parseInt(frame.style.height, 10) > 80
          },
          undefined,
          { timeout: WAIT_MS }
        )

        if (target.fixture) {
          // a resize of the page is a host-context change (containerDimensions) the view receives
          await page.setViewportSize({ width: 700, height: 600 })
          await view.locator("#context", { hasText: "containerDimensions" }).waitFor()
          const context = await view.locator("#context").textContent() ?? ""
          assert.match(context, /"width":\d+/)
          assert.include(context, "\"maxHeight\":4000")

          const csp = viewHeaders[0]?.["content-security-policy"] ?? ""
          assert.include(csp, `connect-src ${declared.origin};`)
          assert.notInclude(csp, undeclared.origin)
          await view.locator("#fetch-declared").click()
          await view.locator("#declared-answer", { hasText: "fetched: pong-declared" }).waitFor()
          const before = undeclared.hits()
          await view.locator("#fetch-undeclared").click()
          await view.locator("#undeclared-answer", { hasText: "blocked" }).waitFor()
          assert.strictEqual(undeclared.hits(), before, "the undeclared origin received no request")
          assert.isAbove(declared.hits(), 0)
        }
      } finally {
        await page.close()
        const code = await app.stop()
        await server?.stop()
        assert.strictEqual(code, 0, `presa-mcp app ends cleanly on SIGTERM\nstderr: ${app.stderr()}`)
      }
    })
  }

  it(
    "docs/apps.md's copy-paste file (a view without any SDK) works as the guide says",
    { timeout: TEST_MS },
    async () => {
      // the guide's block, as a user saves it (inside the checkout, so `presa-mcp` resolves)
      const guide = Fs.readFileSync(Path.join(ROOT, "docs/apps.md"), "utf8")
      const section = guide.indexOf("### A complete file: a view without any SDK")
      const block = /```ts\n([\s\S]*?)\n```/.exec(guide.slice(section))?.[1]
      assert.isAbove(section, -1)
      assert.isString(block)
      const file = Path.join(ROOT, "test", `.docs-apps-letters-${process.pid}.ts`)
      Fs.writeFileSync(file, `${block ?? ""}\n`)
      const args = ["count_letters", "--args", "{\"text\":\"Hello World\"}"]
      const app = spawn(["src/bin.ts", "app", ...args, "--", process.execPath, "--import", "tsx", file])
      const page = await browser.newPage()
      page.setDefaultTimeout(WAIT_MS)
      try {
        const [url] = await app.waitFor(/^http:\/\/127\.0\.0\.1:\d+\/$/m, "stdout")
        await page.goto(url)
        const view = page.frameLocator("#view-container iframe")
        await view.locator("#status", { hasText: "connected" }).waitFor()
        await view.locator("#result", { hasText: "letters" }).waitFor()
        assert.strictEqual(await view.locator("#result").textContent(), "{\"text\":\"Hello World\",\"letters\":10}")
        await view.locator("#reverse").click()
        await view.locator("#reversed", { hasText: /\S/ }).waitFor()
        assert.strictEqual(await view.locator("#reversed").textContent(), "dlroW olleH")
      } finally {
        await page.close()
        const code = await app.stop()
        Fs.rmSync(file, { force: true })
        assert.strictEqual(code, 0, `presa-mcp app ends cleanly on SIGTERM\nstderr: ${app.stderr()}`)
      }
    }
  )

  it("a tool call that fails shows the view with ui/notifications/tool-cancelled", { timeout: TEST_MS }, async () => {
    const app = spawn([
      "src/bin.ts",
      "app",
      "broken_order",
      "--",
      process.execPath,
      "--import",
      "tsx",
      FIXTURE,
      "--stdio"
    ])
    const page = await browser.newPage()
    page.setDefaultTimeout(WAIT_MS)
    try {
      const [url] = await app.waitFor(/^http:\/\/127\.0\.0\.1:\d+\/$/m, "stdout")
      await page.goto(url)
      const view = page.frameLocator("#view-container iframe")
      await view.locator("#cancelled", { hasText: "cancelled:" }).waitFor()
      assert.include(await view.locator("#cancelled").textContent(), "order store offline")
      assert.strictEqual(await view.locator("#result").textContent(), "")
    } finally {
      await page.close()
      assert.strictEqual(await app.stop(), 0)
    }
  })
})

/** The dev host's page data (token included), read from its page as the page's script does. */
const pageData = async (url: string): Promise<{ readonly token: string }> => {
  const html = await (await fetch(url)).text()
  const json = /<script type="application\/json" id="presa-app-data">(.*?)<\/script>/s.exec(html)?.[1] ?? "{}"
  const data: unknown = JSON.parse(json)
  assert.isObject(data)
  const token = typeof data === "object" && data !== null && "token" in data ? data.token : undefined
  assert.isString(token)
  return { token: String(token) }
}

const rawRequest = (
  url: string,
  options: {
    readonly method: string
    readonly host?: string
    readonly headers?: Record<string, string>
    readonly body?: string
  }
): Promise<{ readonly status: number; readonly body: string }> =>
  new Promise((resolve, reject) => {
    const target = new URL(url)
    const req = Http.request({
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: options.method,
      headers: { ...options.headers, host: options.host ?? target.host }
    }, (res) => {
      let body = ""
      res.on("data", (c: Buffer) => (body += c.toString("utf8")))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on("error", reject)
    req.end(options.body)
  })

describe("presa-mcp app without a browser", () => {
  const fixtureStdio = ["--", process.execPath, "--import", "tsx", FIXTURE, "--stdio"]

  it(
    "the relay needs the page's token and its own host, and checks visibility itself",
    { timeout: TEST_MS },
    async () => {
      const app = spawn(["src/bin.ts", "app", ...SHOW_ORDER, ...fixtureStdio])
      try {
        const [url] = await app.waitFor(/^http:\/\/127\.0\.0\.1:\d+\/$/m, "stdout")
        const { token } = await pageData(url)
        const rpc = `${url}rpc`
        const call = (name: string) =>
          JSON.stringify({ method: "tools/call", params: { name, arguments: { id: "A-1" } } })
        const headers = { "content-type": "application/json", "x-presa-app-token": token }
        // no token, a wrong one, another Host (DNS rebinding): refused before anything is relayed
        assert.strictEqual((await rawRequest(rpc, { method: "POST", body: call("order_note") })).status, 403)
        assert.strictEqual(
          (await rawRequest(rpc, {
            method: "POST",
            headers: { ...headers, "x-presa-app-token": "x" },
            body: call("order_note")
          }))
            .status,
          403
        )
        const rebound = await rawRequest(rpc, {
          method: "POST",
          host: "evil.example:80",
          headers,
          body: call("order_note")
        })
        assert.strictEqual(rebound.status, 421)
        // with the token: an app tool is relayed, a model-only one refused here too
        const ok = await rawRequest(rpc, { method: "POST", headers, body: call("order_note") })
        assert.strictEqual(ok.status, 200)
        assert.include(ok.body, "note for A-1")
        const refused = await rawRequest(rpc, { method: "POST", headers, body: call("audit_log") })
        assert.include(refused.body, "\"code\":-32602")
        assert.notInclude(refused.body, "audit: secret")
        const bad = await rawRequest(rpc, { method: "POST", headers, body: "{not json" })
        assert.include(bad.body, "\"code\":-32602")
        // the view document carries the CSP, the page its own
        const view = await fetch(`${url}view`)
        assert.include(view.headers.get("content-security-policy") ?? "", "connect-src 'none'")
        const page = await fetch(url)
        assert.include(page.headers.get("content-security-policy") ?? "", "frame-ancestors 'none'")
      } finally {
        assert.strictEqual(await app.stop(), 0)
      }
    }
  )

  it("usage errors: an unknown tool, a tool without a view (exit code 3)", { timeout: TEST_MS }, async () => {
    for (const [tool, message] of [["no_such_tool", "has no tool"], ["audit_log", "links no view"]] as const) {
      const app = spawn(["src/bin.ts", "app", tool, ...fixtureStdio])
      const code = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => resolve(-1), WAIT_MS)
        app.child.on("exit", (c) => {
          clearTimeout(timer)
          resolve(c)
        })
      })
      if (code === -1) await app.stop()
      assert.strictEqual(code, 3, app.stderr())
      assert.include(app.stderr(), message)
      assert.strictEqual(app.stdout(), "")
    }
  })
})
