/**
 * Checks a `server.json` the way the official MCP Registry does before it accepts a publish
 * (issue #40, point 1): the published schema of revision 2025-12-11 (`registrySchema.ts`, run
 * through `presa-mcp/JsonSchemaFull`), then the registry's own rules that the schema only
 * describes (its `internal/validators` package): the `NAMESPACE/NAME` name format, exact versions
 * (no `latest`, no ranges), the package registry types, transports and URLs, required header and
 * environment variable names, HTTPS for the website and icons, repository URLs, and, when the
 * project's `package.json` is given, the `mcpName` ownership field npm packages need.
 *
 * Every problem is an {@link Issue}: the field as a JSON Pointer into the document (`/packages/0/version`;
 * `package.json#/mcpName` for the package file), what is wrong, and how to fix it.
 *
 * @internal
 */
import type * as JsonSchema from "../../JsonSchema.js"
import * as JsonSchemaFull from "../../JsonSchemaFull.js"
import { schema, SCHEMA_URL } from "./registrySchema.js"

/** One violation: `field: problem (fix)`. @internal */
export interface Issue {
  /** JSON Pointer into `server.json` (`""` is the document), or `package.json#/…`. */
  readonly field: string
  readonly problem: string
  readonly fix: string
}

/** The fields of `package.json` the rules compare with. @internal */
export interface PackageJson {
  readonly name?: string | undefined
  readonly version?: string | undefined
  readonly mcpName?: string | undefined
}

/** The registry types the official registry accepts in `packages[].registryType`. @internal */
export const REGISTRY_TYPES: ReadonlyArray<string> = ["npm", "pypi", "oci", "nuget", "mcpb"]

/** Registry types whose packages are named by `identifier` and pinned by `version`. */
const VERSIONED: ReadonlySet<string> = new Set(["npm", "pypi", "nuget"])

const NAMESPACE = "[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?"
const NAME_PART = "[a-zA-Z0-9](?:[a-zA-Z0-9._-]*[a-zA-Z0-9])?"
const SERVER_NAME = new RegExp(`^${NAMESPACE}/${NAME_PART}$`)

const NUMERIC = "v?\\d+(?:\\.\\d+){0,3}(?:-[0-9A-Za-z.-]+)?"
/** `^1.2.3`, `~1.2`, `>=1.0.0`, `<2`, `=1.0.0`. */
const COMPARATOR = new RegExp(`^(?:\\^|~|>=|<=|>|<|=)\\s*${NUMERIC}$`)
/** `1.2.3 - 2.0.0`. */
const HYPHEN = new RegExp(`^${NUMERIC}\\s+-\\s+${NUMERIC}$`)
/** `1.2 || 1.3`. */
const OR = /\|\|/
/** `1.x`, `1.2.*`, `*`. */
const WILDCARD = /^(?:v?\d+|[xX*])(?:\.(?:\d+|[xX*])){0,2}(?:-[0-9A-Za-z.-]+)?$/

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const arrayAt = (o: Readonly<Record<string, unknown>>, key: string): ReadonlyArray<unknown> => {
  const value = o[key]
  return Array.isArray(value) ? value : []
}

const stringAt = (o: Readonly<Record<string, unknown>>, key: string): string | undefined => {
  const value = o[key]
  return typeof value === "string" ? value : undefined
}

/** A JSON Pointer segment (RFC 6901: `~` → `~0`, `/` → `~1`). */
const segment = (key: string | number): string => String(key).replaceAll("~", "~0").replaceAll("/", "~1")

/** Whether `version` is a range or a wildcard rather than one version. @internal */
export const isRange = (version: string): boolean => {
  const v = version.trim()
  return COMPARATOR.test(v) || HYPHEN.test(v) || OR.test(v) || (WILDCARD.test(v) && /[xX*]/.test(v))
}

const checkVersion = (field: string, version: string | undefined, what: string): ReadonlyArray<Issue> => {
  if (version === undefined) return []
  if (version.trim() === "latest") {
    return [{
      field,
      problem: `"latest" is reserved, ${what} must be one exact version`,
      fix: "give the released version, e.g. \"1.2.3\""
    }]
  }
  if (isRange(version)) {
    return [{
      field,
      problem: `"${version}" is a version range, ${what} must be one exact version`,
      fix: `give the released version, e.g. "${version.replace(/^[\^~>=<\s]+/, "").replace(/[xX*]/g, "0")}"`
    }]
  }
  return []
}

/** `server.json`'s `name`: `NAMESPACE/NAME`, reverse-DNS namespace. @internal */
export const checkName = (name: string | undefined): ReadonlyArray<Issue> => {
  if (name === undefined || SERVER_NAME.test(name)) return []
  const base = (name.split("/").pop() ?? name).replace(/[^a-zA-Z0-9._-]/g, "-").replace(
    /^[^a-zA-Z0-9]+|[^a-zA-Z0-9]+$/g,
    ""
  )
  const example = base === "" ? "my-server" : base
  return [{
    field: "/name",
    problem: `"${name}" is not a reverse-DNS server name NAMESPACE/NAME (exactly one "/", each part starting ` +
      "and ending with a letter or digit)",
    fix: `use io.github.YOUR-GITHUB-NAME/${example} (published with GitHub login) or com.example/${example} ` +
      "(a domain you verify)"
  }]
}

const HTTPS = /^https:\/\//

const isUrl = (url: string): boolean => URL.canParse(url.replace(/\{[^}]+\}/g, "placeholder"))

const checkHttps = (field: string, url: string | undefined, what: string): ReadonlyArray<Issue> =>
  url === undefined || (HTTPS.test(url) && URL.canParse(url))
    ? []
    : [{ field, problem: `${what} "${url}" is not an absolute https:// URL`, fix: "use an https:// URL" }]

/** Names of `KeyValueInput`s (headers, environment variables) must be given. */
const checkNamed = (field: string, list: ReadonlyArray<unknown>, what: string): ReadonlyArray<Issue> =>
  list.flatMap((item, i) => {
    const name = isRecord(item) ? stringAt(item, "name") : undefined
    return name === undefined || name.trim() === ""
      ? [{
        field: `${field}/${i}/name`,
        problem: `${what} without a name`,
        fix: `add "name" (e.g. ${what === "header" ? "\"Authorization\"" : "\"API_KEY\""})`
      }]
      : []
  })

/** Template variables `{x}` of `url` that are not in `known`. */
const undefinedVariables = (url: string, known: ReadonlySet<string>): ReadonlyArray<string> =>
  [...url.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? "").filter((v) => !known.has(v))

const checkTransport = (
  field: string,
  transport: unknown,
  remote: boolean,
  variables: ReadonlySet<string>
): ReadonlyArray<Issue> => {
  if (!isRecord(transport)) return []
  const type = stringAt(transport, "type")
  const url = stringAt(transport, "url")
  const allowed = remote ? ["streamable-http", "sse"] : ["stdio", "streamable-http", "sse"]
  if (type === undefined || !allowed.includes(type)) {
    return [{
      field: `${field}/type`,
      problem: type === undefined
        ? "transport type missing"
        : `transport type "${type}" is not supported ${remote ? "for a remote" : "for a package"}`,
      fix: `use one of ${allowed.map((t) => `"${t}"`).join(", ")}`
    }]
  }
  const issues: Array<Issue> = []
  if (type === "stdio") {
    if (url !== undefined) {
      issues.push({ field: `${field}/url`, problem: "a stdio transport has no url", fix: "remove \"url\"" })
    }
    return issues
  }
  if (url === undefined || url === "") {
    issues.push({
      field: `${field}/url`,
      problem: `a ${type} ${remote ? "remote" : "transport"} needs a url`,
      fix: "add \"url\": \"https://…/mcp\""
    })
  } else {
    const missing = undefinedVariables(url, variables)
    if (missing.length > 0) {
      issues.push({
        field: `${field}/url`,
        problem: `the url uses undefined template variables ${missing.map((v) => `{${v}}`).join(", ")}`,
        fix: remote
          ? `define them in "variables" (e.g. "variables": {"${missing[0]}": {"isRequired": true}})`
          : "name them after an environment variable or an argument of the package"
      })
    } else if (!/^https?:\/\//.test(url) || !isUrl(url)) {
      issues.push({ field: `${field}/url`, problem: `"${url}" is not an http(s) URL`, fix: "use an https:// URL" })
    } else if (remote) {
      const host = new URL(url.replace(/\{[^}]+\}/g, "placeholder")).hostname
      if (!HTTPS.test(url) || host === "localhost" || host === "127.0.0.1" || host.endsWith(".localhost")) {
        issues.push({
          field: `${field}/url`,
          problem: `a remote must be a public https:// URL, not "${url}"`,
          fix: "give the URL clients reach the deployed server at"
        })
      }
    }
  }
  issues.push(...checkNamed(`${field}/headers`, arrayAt(transport, "headers"), "header"))
  return issues
}

/** Variables a package transport's url may use: its environment variables' and arguments' names. */
const packageVariables = (pkg: Readonly<Record<string, unknown>>): ReadonlySet<string> => {
  const names = new Set<string>()
  for (const key of ["environmentVariables", "runtimeArguments", "packageArguments"]) {
    for (const item of arrayAt(pkg, key)) {
      if (!isRecord(item)) continue
      for (const k of ["name", "valueHint"]) {
        const v = stringAt(item, k)
        if (v !== undefined) names.add(v)
      }
    }
  }
  return names
}

const checkPackage = (
  field: string,
  pkg: Readonly<Record<string, unknown>>,
  serverName: string | undefined,
  packageJson: PackageJson | undefined
): ReadonlyArray<Issue> => {
  const issues: Array<Issue> = []
  const registryType = stringAt(pkg, "registryType")
  const identifier = stringAt(pkg, "identifier")
  const version = stringAt(pkg, "version")
  if (registryType !== undefined && !REGISTRY_TYPES.includes(registryType)) {
    issues.push({
      field: `${field}/registryType`,
      problem: `unknown registryType "${registryType}"`,
      fix: `use one of ${REGISTRY_TYPES.map((t) => `"${t}"`).join(", ")}`
    })
  }
  if (identifier !== undefined && identifier.includes(" ")) {
    issues.push({
      field: `${field}/identifier`,
      problem: "a package identifier has no spaces",
      fix: "give the package's name as its registry spells it"
    })
  }
  if (registryType !== undefined && VERSIONED.has(registryType) && version === undefined) {
    issues.push({
      field: `${field}/version`,
      problem: `a ${registryType} package needs its exact version`,
      fix: "add \"version\": \"1.2.3\" (the published version)"
    })
  }
  issues.push(...checkVersion(`${field}/version`, version, "a package version"))
  if (registryType === "mcpb" && stringAt(pkg, "fileSha256") === undefined) {
    issues.push({
      field: `${field}/fileSha256`,
      problem: "an mcpb package needs the SHA-256 of its file",
      fix: "add \"fileSha256\" (sha256sum of the .mcpb file, 64 lowercase hex digits)"
    })
  }
  issues.push(
    ...checkNamed(`${field}/environmentVariables`, arrayAt(pkg, "environmentVariables"), "environment variable")
  )
  issues.push(...checkTransport(`${field}/transport`, pkg["transport"], false, packageVariables(pkg)))
  if (registryType === "npm" && packageJson !== undefined && identifier === packageJson.name) {
    if (packageJson.mcpName === undefined) {
      issues.push({
        field: "package.json#/mcpName",
        problem: `the npm package "${identifier}" has no mcpName, so the registry cannot verify you own it`,
        fix: `add "mcpName": "${serverName ?? "NAMESPACE/NAME"}" to package.json and publish that version to npm`
      })
    } else if (serverName !== undefined && packageJson.mcpName !== serverName) {
      issues.push({
        field: "package.json#/mcpName",
        problem: `mcpName "${packageJson.mcpName}" differs from the server name "${serverName}"`,
        fix: `make both the same: "mcpName": "${serverName}", or "name": "${packageJson.mcpName}"`
      })
    }
    if (version !== undefined && packageJson.version !== undefined && version !== packageJson.version) {
      issues.push({
        field: `${field}/version`,
        problem: `version "${version}" differs from package.json's "${packageJson.version}"`,
        fix: "publish the package.json version to npm and name that version here"
      })
    }
  }
  return issues
}

const checkRemote = (field: string, remote: Readonly<Record<string, unknown>>): ReadonlyArray<Issue> => {
  const variables = remote["variables"]
  return checkTransport(field, remote, true, new Set(isRecord(variables) ? Object.keys(variables) : []))
}

const checkRepository = (repository: unknown): ReadonlyArray<Issue> => {
  if (!isRecord(repository)) return []
  const url = stringAt(repository, "url")
  const source = stringAt(repository, "source")
  if (url === undefined || source === undefined) return []
  const patterns: Readonly<Record<string, RegExp>> = {
    github: /^https?:\/\/(?:www\.)?github\.com\/[\w.-]+\/[\w.-]+\/?$/,
    gitlab: /^https?:\/\/(?:www\.)?gitlab\.com\/[\w.-]+(?:\/[\w.-]+)+\/?$/
  }
  const pattern = patterns[source]
  if (pattern === undefined) {
    return [{
      field: "/repository/source",
      problem: `unknown repository source "${source}"`,
      fix: "use \"github\" or \"gitlab\""
    }]
  }
  return pattern.test(url) ? [] : [{
    field: "/repository/url",
    problem: `"${url}" is not a ${source} repository URL`,
    fix: `use https://${source}.com/OWNER/REPO (no .git, no git+ prefix)`
  }]
}

/** The registry's rules beyond the schema. */
const rules = (doc: Readonly<Record<string, unknown>>, packageJson: PackageJson | undefined): ReadonlyArray<Issue> => {
  const issues: Array<Issue> = []
  const $schema = stringAt(doc, "$schema")
  if ($schema !== SCHEMA_URL) {
    issues.push({
      field: "/$schema",
      problem: $schema === undefined ? "missing" : `"${$schema}" is not the revision this check knows (2025-12-11)`,
      fix: `set "$schema": "${SCHEMA_URL}"`
    })
  }
  const name = stringAt(doc, "name")
  issues.push(...checkName(name))
  const description = stringAt(doc, "description")
  if (description !== undefined && description.length > 100) {
    issues.push({
      field: "/description",
      problem: `${description.length} characters, the registry allows at most 100`,
      fix: "shorten it to 100 characters; keep the details in your README"
    })
  }
  issues.push(...checkVersion("/version", stringAt(doc, "version"), "the server version"))
  const title = stringAt(doc, "title")
  if (title !== undefined && title.trim() === "" && title !== "") {
    issues.push({ field: "/title", problem: "only whitespace", fix: "give a display name or remove \"title\"" })
  }
  issues.push(...checkHttps("/websiteUrl", stringAt(doc, "websiteUrl"), "websiteUrl"))
  arrayAt(doc, "icons").forEach((icon, i) => {
    if (isRecord(icon)) issues.push(...checkHttps(`/icons/${i}/src`, stringAt(icon, "src"), "icon src"))
  })
  issues.push(...checkRepository(doc["repository"]))
  arrayAt(doc, "packages").forEach((pkg, i) => {
    if (isRecord(pkg)) issues.push(...checkPackage(`/packages/${i}`, pkg, name, packageJson))
  })
  arrayAt(doc, "remotes").forEach((remote, i) => {
    if (isRecord(remote)) issues.push(...checkRemote(`/remotes/${i}`, remote))
  })
  const meta = doc["_meta"]
  const provided = isRecord(meta) ? meta["io.modelcontextprotocol.registry/publisher-provided"] : undefined
  if (provided !== undefined && new TextEncoder().encode(JSON.stringify(provided)).length > 4096) {
    issues.push({
      field: `/_meta/${segment("io.modelcontextprotocol.registry/publisher-provided")}`,
      problem: "larger than 4 KB",
      fix: "keep publisher-provided metadata under 4096 bytes of JSON"
    })
  }
  return issues
}

/** A schema issue (cfworker's message) as `field: problem (fix)`. */
const fromSchema = (issue: JsonSchema.Issue): Issue => {
  const required = /required property "([^"]+)"/.exec(issue.message)
  if (required !== null) {
    const property = required[1] ?? ""
    return { field: `${issue.path}/${segment(property)}`, problem: "missing", fix: `add "${property}"` }
  }
  const long = /too long \((\d+) > (\d+)\)/.exec(issue.message)
  if (long !== null) {
    return {
      field: issue.path,
      problem: `${long[1]} characters, at most ${long[2]} allowed`,
      fix: `shorten it to ${long[2]} characters`
    }
  }
  const short = /too short \((\d+) < (\d+)\)/.exec(issue.message)
  if (short !== null) {
    return { field: issue.path, problem: "empty or too short", fix: `give at least ${short[2]} characters` }
  }
  const type = /Instance type "([^"]+)" is invalid\. Expected "([^"]+)"/.exec(issue.message)
  if (type !== null) return { field: issue.path, problem: `a ${type[1]}`, fix: `give a ${type[2]}` }
  if (issue.message.includes("format \"uri\"")) {
    return {
      field: issue.path,
      problem: "not an absolute URI",
      fix: "give an absolute URL such as https://example.com"
    }
  }
  const pattern = /does not match pattern "([^"]+)"/.exec(issue.message)
  if (pattern !== null) return { field: issue.path, problem: "bad format", fix: `match the pattern ${pattern[1]}` }
  return { field: issue.path, problem: issue.message.replace(/\.$/, ""), fix: `see ${SCHEMA_URL}` }
}

const isWithin = (inner: string, outer: string): boolean => inner === outer || inner.startsWith(`${outer}/`)

/**
 * Every problem of `doc` (parsed `server.json`): the schema's, then the registry's rules. A schema
 * issue is left out when a rule names the same field or one inside it (the rule says more). With
 * `packageJson`, npm packages named like it are checked for `mcpName` and their version.
 *
 * @internal
 */
export const validate = (doc: unknown, packageJson?: PackageJson): ReadonlyArray<Issue> => {
  if (!isRecord(doc)) {
    return [{
      field: "",
      problem: "not a JSON object",
      fix: "a server.json is one object with name, description, version"
    }]
  }
  const byRules = rules(doc, packageJson)
  const bySchema = JsonSchemaFull.validate(schema, doc).map(fromSchema)
    .filter((s) => !byRules.some((r) => isWithin(r.field, s.field)))
  return [...bySchema, ...byRules]
}

/** One issue as the CLI prints it: `field: problem (fix)`. @internal */
export const format = (issue: Issue): string =>
  `${issue.field === "" ? "/" : issue.field}: ${issue.problem} (${issue.fix})`
