/**
 * `presa-mcp registry init|validate` (issue #40, point 1), run as a process (`node --import tsx
 * src/bin.ts`): `init` against the reference library over stdio (`examples/library.ts --stdio`)
 * and against a server of this test over Streamable HTTP on 127.0.0.1 (port 0); the files it
 * writes pass `validate` and, cross-checked, the registry's published schema under ajv (the
 * schema is draft-07, ajv's default dialect). Then each registry rule's violation is rejected
 * with its field, problem and fix (exit code 5), and `--json` gives `{file, valid, issues}`.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Ajv } from "ajv"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { McpServer } from "presa-mcp"
import * as StreamableHttp from "presa-mcp/transport/StreamableHttp"
import * as Rules from "../src/internal/cli/registryRules.js"
import { schema, SCHEMA_URL } from "../src/internal/cli/registrySchema.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const RUN_MS = 90_000
const TEST_MS = 180_000

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href
const BIN = Path.join(ROOT, "src", "bin.ts")

/** Runs the CLI in `cwd` to its end (killed after {@link RUN_MS}). */
const cliIn = (cwd: string, ...args: ReadonlyArray<string>): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = ChildProcess.spawn(process.execPath, ["--import", TSX, BIN, ...args], {
      cwd,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
      reject(new Error(`presa-mcp ${args.join(" ")}: no exit within ${RUN_MS} ms\n${stderr}`))
    }, RUN_MS)
    child.once("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

/** Runs the CLI in the repository's root (see {@link cliIn}). */
const cli = (...args: ReadonlyArray<string>): Promise<Run> => cliIn(ROOT, ...args)

const expectCode = (run: Run, code: number) =>
  assert.strictEqual(run.code, code, `exit ${run.code} (want ${code})\nstdout: ${run.stdout}\nstderr: ${run.stderr}`)

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const readJson = (path: string): Record<string, unknown> => {
  const value: unknown = JSON.parse(Fs.readFileSync(path, "utf8"))
  assert.isTrue(isRecord(value), path)
  return isRecord(value) ? value : {}
}

const ajv = new Ajv({ strict: false, allErrors: true })
// the one format the schema uses (ajv-formats is not a dependency of ours)
ajv.addFormat("uri", (s: string) => /^[a-z][a-z0-9+.-]*:/i.test(s) && URL.canParse(s))
const ajvValidate = ajv.compile(schema)
/** The published schema's verdict (ajv), with its errors for the assertion message. */
const ajvCheck = (doc: unknown): { readonly valid: boolean; readonly errors: string } => {
  const valid = ajvValidate(doc)
  return { valid, errors: JSON.stringify(ajvValidate.errors ?? []) }
}

let dir = ""
let empty = ""
const tmp = (name: string) => Path.join(dir, name)

let scope: Scope.CloseableScope | undefined
let url = ""

beforeAll(async () => {
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "presa-registry-"))
  empty = Path.join(dir, "empty")
  Fs.mkdirSync(empty)
  scope = await Effect.runPromise(Scope.make())
  const server = await Effect.runPromise(McpServer.make({
    name: "acme-weather",
    version: "2.4.0",
    title: "Acme Weather",
    description: "Forecasts and alerts for any city",
    websiteUrl: "https://weather.acme.example/docs",
    icons: [{ src: "https://weather.acme.example/icon.png", mimeType: "image/png", sizes: ["64x64"] }]
  }))
  const address = await Effect.runPromise(
    Scope.extend(StreamableHttp.serve(server, { port: 0, host: "127.0.0.1" }), scope)
  )
  url = address.url
})

afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  if (dir !== "") Fs.rmSync(dir, { recursive: true, force: true })
})

const LIBRARY_STDIO = ["--", process.execPath, "--import", "tsx", "examples/library.ts", "--stdio"]

const writePackageJson = (path: string, extra: Record<string, unknown> = {}) =>
  Fs.writeFileSync(
    path,
    `${
      JSON.stringify(
        {
          name: "@acme/library-mcp",
          version: "1.4.2",
          description: "A small reference library over MCP",
          repository: { type: "git", url: "git+https://github.com/acme/library-mcp.git" },
          ...extra
        },
        null,
        2
      )
    }\n`
  )

describe("presa-mcp registry init", () => {
  it(
    "stdio: from examples/library.ts and package.json; writes mcpName; the file validates",
    { timeout: TEST_MS },
    async () => {
      const pkg = tmp("stdio-package.json")
      const out = tmp("stdio-server.json")
      writePackageJson(pkg)
      const run = await cli(
        "registry",
        "init",
        "--package-json",
        pkg,
        "--out",
        out,
        "--write-package-json",
        "--env",
        "LIBRARY_TOKEN=Token of the library",
        "--secret",
        "LIBRARY_TOKEN",
        ...LIBRARY_STDIO
      )
      expectCode(run, 0)
      assert.include(run.stderr, `added "mcpName": "io.github.acme/library-mcp"`)
      const doc = readJson(out)
      assert.deepStrictEqual(doc, {
        $schema: SCHEMA_URL,
        name: "io.github.acme/library-mcp",
        description: "A small reference library over MCP",
        version: "1.4.2",
        repository: { url: "https://github.com/acme/library-mcp", source: "github" },
        packages: [{
          registryType: "npm",
          identifier: "@acme/library-mcp",
          version: "1.4.2",
          runtimeHint: "npx",
          transport: { type: "stdio" },
          environmentVariables: [{
            name: "LIBRARY_TOKEN",
            description: "Token of the library",
            isRequired: true,
            isSecret: true
          }]
        }]
      })
      assert.strictEqual(readJson(pkg).mcpName, "io.github.acme/library-mcp")
      assert.strictEqual(readJson(pkg).name, "@acme/library-mcp")
      const check = ajvCheck(doc)
      assert.isTrue(check.valid, check.errors)
      const validate = await cli("registry", "validate", out, "--package-json", pkg)
      expectCode(validate, 0)
      assert.include(validate.stdout, "valid")

      // a second init does not overwrite without --force
      const again = await cli("registry", "init", "--package-json", pkg, "--out", out, ...LIBRARY_STDIO)
      expectCode(again, 3)
      assert.include(again.stderr, "--force")
    }
  )

  it("without --write-package-json: prints the mcpName line, leaves package.json, exit 5", {
    timeout: TEST_MS
  }, async () => {
    const pkg = tmp("nowrite-package.json")
    const out = tmp("nowrite-server.json")
    writePackageJson(pkg)
    const before = Fs.readFileSync(pkg, "utf8")
    const run = await cli("registry", "init", "--package-json", pkg, "--out", out, ...LIBRARY_STDIO)
    expectCode(run, 5)
    assert.include(run.stderr, `needs "mcpName": "io.github.acme/library-mcp"`)
    assert.include(run.stderr, "package.json#/mcpName: the npm package \"@acme/library-mcp\" has no mcpName")
    assert.strictEqual(Fs.readFileSync(pkg, "utf8"), before)
  })

  it("HTTP: serverInfo title, description, websiteUrl, icons; a remote with a variable and a secret header", {
    timeout: TEST_MS
  }, async () => {
    // in a folder without package.json: everything comes from the server and the options
    const ok = await cliIn(
      empty,
      "registry",
      "init",
      "--url",
      url,
      "--name",
      "io.github.acme/weather",
      "--remote-only",
      "--remote",
      "https://{tenant}.weather.acme.example/mcp",
      "--remote-variable",
      "tenant=Your tenant id",
      "--remote-header",
      "Authorization=Bearer token",
      "--secret",
      "Authorization",
      "--stdout"
    )
    expectCode(ok, 0)
    const doc: unknown = JSON.parse(ok.stdout)
    assert.deepStrictEqual(doc, {
      $schema: SCHEMA_URL,
      name: "io.github.acme/weather",
      title: "Acme Weather",
      description: "Forecasts and alerts for any city",
      version: "2.4.0",
      websiteUrl: "https://weather.acme.example/docs",
      icons: [{ src: "https://weather.acme.example/icon.png", mimeType: "image/png", sizes: ["64x64"] }],
      remotes: [{
        type: "streamable-http",
        url: "https://{tenant}.weather.acme.example/mcp",
        headers: [{ name: "Authorization", description: "Bearer token", isRequired: true, isSecret: true }],
        variables: { tenant: { description: "Your tenant id", isRequired: true } }
      }]
    })
    assert.deepStrictEqual(Rules.validate(doc), [])
    const check = ajvCheck(doc)
    assert.isTrue(check.valid, check.errors)
    const file = tmp("http-server.json")
    Fs.writeFileSync(file, ok.stdout)
    expectCode(await cli("registry", "validate", file), 0)
  })

  it("the server's URL without --url, as for every command; --remote's URL is not taken for it", {
    timeout: TEST_MS
  }, async () => {
    const options = [
      "--name",
      "io.github.acme/weather",
      "--remote-only",
      "--remote",
      "https://weather.acme.example/mcp"
    ]
    const [flagged, positional] = await Promise.all([
      cliIn(empty, "registry", "init", "--url", url, ...options, "--stdout"),
      cliIn(empty, "registry", "init", ...options, url, "--stdout")
    ])
    expectCode(flagged, 0)
    expectCode(positional, 0)
    assert.strictEqual(positional.stdout, flagged.stdout)
    // read from the server (its serverInfo), not from the options
    assert.include(positional.stdout, "\"title\": \"Acme Weather\"")
  })

  it("no server name to be found: usage error naming --name, exit 3", { timeout: TEST_MS }, async () => {
    const run = await cliIn(empty, "registry", "init", "--url", url, "--remote-only", "--stdout")
    expectCode(run, 3)
    assert.include(run.stderr, "--name io.github.")
  })

  it("a server that cannot be reached: exit 4, nothing written", { timeout: TEST_MS }, async () => {
    const out = Path.join(empty, "unreached.json")
    const run = await cliIn(
      empty,
      "registry",
      "init",
      "--url",
      "http://127.0.0.1:1/mcp",
      "--name",
      "io.github.acme/x",
      "--description",
      "x",
      "--out",
      out
    )
    expectCode(run, 4)
    assert.include(run.stderr, "cannot read the server's info")
    assert.isFalse(Fs.existsSync(out))
  })
})

// ---------------------------------------------------------------------------------------------
// The rules, one violation at a time

const valid = {
  $schema: SCHEMA_URL,
  name: "io.github.acme/weather",
  description: "Forecasts and alerts for any city",
  version: "1.0.0",
  packages: [{
    registryType: "npm",
    identifier: "@acme/weather",
    version: "1.0.0",
    transport: { type: "stdio" },
    environmentVariables: [{ name: "API_KEY", isRequired: true, isSecret: true }]
  }],
  remotes: [{ type: "streamable-http", url: "https://weather.acme.example/mcp", headers: [{ name: "Authorization" }] }]
}

type Doc = Record<string, unknown>
const pkg0 = (patch: Record<string, unknown>): Doc => ({ ...valid, packages: [{ ...valid.packages[0], ...patch }] })
const remote0 = (patch: Record<string, unknown>): Doc => ({ ...valid, remotes: [{ ...valid.remotes[0], ...patch }] })

/** [case, document, field, words of the problem, whether the published schema alone rejects it too]. */
const violations: ReadonlyArray<readonly [string, Doc, string, string, boolean]> = [
  ["description > 100", { ...valid, description: "x".repeat(101) }, "/description", "101 characters", true],
  ["version range ^1.0.0", { ...valid, version: "^1.0.0" }, "/version", "is a version range", false],
  ["version latest", { ...valid, version: "latest" }, "/version", "\"latest\" is reserved", false],
  ["package version range", pkg0({ version: "~1.2" }), "/packages/0/version", "is a version range", false],
  ["package version 1.x", pkg0({ version: "1.x" }), "/packages/0/version", "is a version range", false],
  ["package version latest", pkg0({ version: "latest" }), "/packages/0/version", "\"latest\" is reserved", true],
  ["name without namespace", { ...valid, name: "weather" }, "/name", "not a reverse-DNS server name", true],
  ["name with two slashes", { ...valid, name: "io.github.acme/a/b" }, "/name", "not a reverse-DNS server name", true],
  ["name ending in a dot", { ...valid, name: "io.github.acme./w" }, "/name", "not a reverse-DNS server name", false],
  [
    "wrong package transport",
    pkg0({ transport: { type: "websocket" } }),
    "/packages/0/transport/type",
    "transport type \"websocket\" is not supported",
    true
  ],
  [
    "stdio transport with url",
    pkg0({ transport: { type: "stdio", url: "https://x.example" } }),
    "/packages/0/transport/url",
    "has no url",
    false
  ],
  [
    "unknown registryType",
    pkg0({ registryType: "cargo" }),
    "/packages/0/registryType",
    "unknown registryType \"cargo\"",
    false
  ],
  [
    "npm package without version",
    pkg0({ version: undefined }),
    "/packages/0/version",
    "needs its exact version",
    false
  ],
  [
    "mcpb without fileSha256",
    pkg0({ registryType: "mcpb", identifier: "https://x.example/a.mcpb" }),
    "/packages/0/fileSha256",
    "SHA-256",
    false
  ],
  [
    "environment variable without name",
    pkg0({ environmentVariables: [{ description: "key" }] }),
    "/packages/0/environmentVariables/0/name",
    "environment variable without a name",
    true
  ],
  ["remote without url", remote0({ url: undefined }), "/remotes/0/url", "needs a url", true],
  ["remote stdio", remote0({ type: "stdio" }), "/remotes/0/type", "not supported for a remote", true],
  [
    "remote on localhost",
    remote0({ url: "https://localhost:3000/mcp" }),
    "/remotes/0/url",
    "public https:// URL",
    false
  ],
  [
    "remote over http",
    remote0({ url: "http://weather.acme.example/mcp" }),
    "/remotes/0/url",
    "public https:// URL",
    false
  ],
  [
    "remote url variable undefined",
    remote0({ url: "https://{tenant}.acme.example/mcp" }),
    "/remotes/0/url",
    "undefined template variables {tenant}",
    false
  ],
  [
    "header without name",
    remote0({ headers: [{ description: "token" }] }),
    "/remotes/0/headers/0/name",
    "header without a name",
    true
  ],
  [
    "websiteUrl over http",
    { ...valid, websiteUrl: "http://acme.example" },
    "/websiteUrl",
    "not an absolute https:// URL",
    false
  ],
  ["missing $schema", { ...valid, $schema: undefined }, "/$schema", "missing", false],
  ["missing description", { ...valid, description: undefined }, "/description", "missing", true],
  [
    "repository URL not GitHub's shape",
    { ...valid, repository: { url: "https://github.com/acme", source: "github" } },
    "/repository/url",
    "not a github repository URL",
    false
  ]
]

/** `doc` as JSON (fields set to `undefined` are left out, as in a file). */
const asJson = (doc: Doc): unknown => JSON.parse(JSON.stringify(doc))

describe("presa-mcp registry validate: the rules", () => {
  it("the valid document passes (rules and ajv)", () => {
    assert.deepStrictEqual(Rules.validate(asJson(valid)), [])
    const check = ajvCheck(asJson(valid))
    assert.isTrue(check.valid, check.errors)
  })

  for (const [label, doc, field, problem, schemaRejects] of violations) {
    it(`rejects: ${label}`, () => {
      const issues = Rules.validate(asJson(doc))
      const hit = issues.find((i) => i.field === field)
      assert.isDefined(hit, `no issue at ${field}: ${JSON.stringify(issues)}`)
      assert.include(hit?.problem ?? "", problem)
      assert.isAbove((hit?.fix ?? "").length, 0)
      assert.isFalse(issues.some((i) => i.field === "" && i.problem.includes("anyOf")), JSON.stringify(issues))
      if (schemaRejects) assert.isFalse(ajvCheck(asJson(doc)).valid, `ajv accepted ${label}`)
    })
  }

  it("npm package named like package.json: mcpName missing, different, version differs", () => {
    const doc = asJson(valid)
    const missing = Rules.validate(doc, { name: "@acme/weather", version: "1.0.0" })
    assert.deepStrictEqual(missing.map((i) => i.field), ["package.json#/mcpName"])
    assert.include(missing[0]?.fix ?? "", "\"mcpName\": \"io.github.acme/weather\"")
    const other = Rules.validate(doc, { name: "@acme/weather", version: "1.0.0", mcpName: "io.github.acme/other" })
    assert.include(other[0]?.problem ?? "", "differs from the server name")
    const version = Rules.validate(doc, { name: "@acme/weather", version: "1.1.0", mcpName: "io.github.acme/weather" })
    assert.deepStrictEqual(version.map((i) => i.field), ["/packages/0/version"])
    assert.deepStrictEqual(
      Rules.validate(doc, { name: "@acme/weather", version: "1.0.0", mcpName: "io.github.acme/weather" }),
      []
    )
    // another package's package.json says nothing about this one
    assert.deepStrictEqual(Rules.validate(doc, { name: "unrelated", version: "9.9.9" }), [])
  })

  it("exact versions stay accepted: 1.0.0, 2.1.0-alpha.1, v1.2.3, 2024.10.01", () => {
    for (const version of ["1.0.0", "2.1.0-alpha.1", "v1.2.3", "2024.10.01"]) {
      assert.deepStrictEqual(Rules.validate(asJson({ ...valid, version })), [], version)
    }
  })
})

describe("presa-mcp registry validate (the command)", () => {
  it("prints every violation as field: problem (fix), exit 5; --json gives {file, valid, issues}", {
    timeout: TEST_MS
  }, async () => {
    const file = tmp("bad-server.json")
    Fs.writeFileSync(
      file,
      JSON.stringify({ ...valid, name: "weather", description: "d".repeat(120), version: "^1.0.0" })
    )
    const run = await cli("registry", "validate", file)
    expectCode(run, 5)
    const lines = run.stdout.trim().split("\n")
    assert.strictEqual(lines.length, 3, run.stdout)
    for (const line of lines) assert.match(line, /^\/[\w$/]+: .+ \(.+\)$/)
    assert.include(run.stdout, "/description: 120 characters, the registry allows at most 100 (shorten it")
    assert.include(run.stdout, "/version: \"^1.0.0\" is a version range")
    assert.include(run.stdout, "/name: \"weather\" is not a reverse-DNS server name")

    const json = await cli("registry", "validate", "--json", file)
    expectCode(json, 5)
    const report: unknown = JSON.parse(json.stdout)
    assert.isTrue(isRecord(report))
    if (!isRecord(report)) return
    assert.strictEqual(report.valid, false)
    assert.strictEqual(report.file, file)
    assert.isTrue(Array.isArray(report.issues) && report.issues.length === 3, json.stdout)

    expectCode(await cli("registry", "validate", tmp("nothing-here.json")), 3)
    const notJson = tmp("not-json.json")
    Fs.writeFileSync(notJson, "{ name: ")
    expectCode(await cli("registry", "validate", notJson), 5)
  })
})
