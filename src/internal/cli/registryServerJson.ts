/**
 * Builds a `server.json` for the official MCP Registry (revision 2025-12-11) from what a server
 * says about itself (`serverInfo`: name, title, version, description, websiteUrl, icons), the
 * project's `package.json` (name, version, description, repository, homepage, mcpName) and the
 * command line (server name, environment variables, a remote URL with headers and variables).
 * Used by `presa-mcp registry init` (`registry.ts`).
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as McpSchema from "../../McpSchema.js"
import { SCHEMA_URL } from "./registrySchema.js"

/** The fields of `package.json` that `init` reads. @internal */
export const PackageJson = Schema.Struct({
  name: Schema.optional(Schema.String),
  version: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  homepage: Schema.optional(Schema.String),
  mcpName: Schema.optional(Schema.String),
  repository: Schema.optional(Schema.Union(
    Schema.String,
    Schema.Struct({ url: Schema.String, directory: Schema.optional(Schema.String) })
  ))
})

/** @internal */
export type PackageJson = typeof PackageJson.Type

/** A header, environment variable or URL variable given on the command line as `NAME[=DESCRIPTION]`. @internal */
export interface Input {
  readonly name: string
  readonly description: string | undefined
}

/** What the command line adds. @internal */
export interface Flags {
  readonly name: string | undefined
  readonly description: string | undefined
  readonly env: ReadonlyArray<Input>
  readonly secrets: ReadonlySet<string>
  /** Omit the npm package entry (a remote-only server). */
  readonly remoteOnly: boolean
  readonly remote: string | undefined
  readonly remoteHeaders: ReadonlyArray<Input>
  readonly remoteVariables: ReadonlyArray<Input>
}

/** `NAME=DESCRIPTION` or `NAME`. @internal */
export const input = (text: string): Input => {
  const at = text.indexOf("=")
  return at < 0
    ? { name: text, description: undefined }
    : { name: text.slice(0, at), description: text.slice(at + 1) }
}

/** A repository as the registry wants it: https URL without `git+`/`.git`, and its source. */
interface Repository {
  readonly url: string
  readonly source: "github" | "gitlab"
  readonly subfolder?: string
}

/**
 * `package.json`'s `repository` (`"github:owner/repo"`, `"owner/repo"`, a URL, or `{url, directory}`)
 * as the registry's `{url, source, subfolder}`; `undefined` when it is not on GitHub or GitLab.
 *
 * @internal
 */
export const repository = (value: PackageJson["repository"]): Repository | undefined => {
  if (value === undefined) return undefined
  const raw = typeof value === "string" ? value : value.url
  const directory = typeof value === "string" ? undefined : value.directory
  const shorthand = /^(github:|gitlab:)?([\w.-]+\/[\w.-]+)$/.exec(raw)
  const url = shorthand !== null
    ? `https://${shorthand[1] === "gitlab:" ? "gitlab" : "github"}.com/${shorthand[2]}`
    : raw.replace(/^git\+/, "").replace(/^git:\/\//, "https://").replace(/^ssh:\/\/git@/, "https://")
      .replace(/^git@([^:]+):/, "https://$1/").replace(/\.git$/, "").replace(/\/$/, "")
  const host = URL.canParse(url) ? new URL(url).hostname.replace(/^www\./, "") : ""
  const source = host === "github.com" ? "github" : host === "gitlab.com" ? "gitlab" : undefined
  if (source === undefined) return undefined
  return { url, source, ...(directory === undefined || directory === "" ? {} : { subfolder: directory }) }
}

/** `io.github.OWNER/NAME` for a GitHub repository, from the package (or server) name. */
const derivedName = (pkg: PackageJson, info: McpSchema.Implementation | undefined): string | undefined => {
  const repo = repository(pkg.repository)
  const base = (pkg.name ?? info?.name)?.replace(/^@[^/]+\//, "")
  if (repo?.source !== "github" || base === undefined) return undefined
  const owner = new URL(repo.url).pathname.split("/")[1]
  return owner === undefined ? undefined : `io.github.${owner}/${base}`
}

const keyValue = (inputs: ReadonlyArray<Input>, secrets: ReadonlySet<string>) =>
  inputs.map((i) => ({
    name: i.name,
    ...(i.description === undefined ? {} : { description: i.description }),
    isRequired: true,
    ...(secrets.has(i.name) ? { isSecret: true } : {})
  }))

const https = (url: string | undefined): string | undefined =>
  url !== undefined && /^https:\/\//.test(url) && URL.canParse(url) ? url : undefined

/** The server's icons from its `Implementation` (an open record), the https ones only. */
const icons = (info: McpSchema.Implementation | undefined): ReadonlyArray<McpSchema.Icon> =>
  Either.getOrElse(Schema.decodeUnknownEither(Schema.Array(McpSchema.Icon))(info?.["icons"]), () => [])
    .filter((icon) => https(icon.src) !== undefined)

/**
 * The `server.json` document, or the reason it cannot be built (no server name can be found).
 * Precedence: the command line, then the server's own info, then `package.json` (the version:
 * `package.json` first, since the npm package entry must name a published version).
 *
 * @internal
 */
export const make = (
  info: McpSchema.Implementation | undefined,
  pkg: PackageJson,
  flags: Flags
): Either.Either<Record<string, unknown>, string> => {
  const name = flags.name ?? pkg.mcpName ?? derivedName(pkg, info)
  if (name === undefined) {
    return Either.left(
      "no server name: give --name io.github.YOUR-GITHUB-NAME/NAME (or a GitHub repository or mcpName in package.json)"
    )
  }
  const version = pkg.version ?? info?.version
  if (version === undefined) return Either.left("no version: neither package.json nor the server gives one")
  const description = flags.description ?? info?.description ?? pkg.description
  if (description === undefined) {
    return Either.left("no description: give --description TEXT (at most 100 characters)")
  }
  const repo = repository(pkg.repository)
  const websiteUrl = https(info?.websiteUrl) ?? https(pkg.homepage)
  const serverIcons = icons(info)
  const packages = flags.remoteOnly || pkg.name === undefined || pkg.version === undefined ? [] : [{
    registryType: "npm",
    identifier: pkg.name,
    version: pkg.version,
    runtimeHint: "npx",
    transport: { type: "stdio" },
    ...(flags.env.length === 0 ? {} : { environmentVariables: keyValue(flags.env, flags.secrets) })
  }]
  const remotes = flags.remote === undefined ? [] : [{
    type: "streamable-http",
    url: flags.remote,
    ...(flags.remoteHeaders.length === 0 ? {} : { headers: keyValue(flags.remoteHeaders, flags.secrets) }),
    ...(flags.remoteVariables.length === 0 ? {} : {
      variables: Object.fromEntries(flags.remoteVariables.map((v) => [v.name, {
        ...(v.description === undefined ? {} : { description: v.description }),
        isRequired: true
      }]))
    })
  }]
  return Either.right({
    $schema: SCHEMA_URL,
    name,
    ...(info?.title === undefined ? {} : { title: info.title }),
    description,
    version,
    ...(repo === undefined ? {} : { repository: repo }),
    ...(websiteUrl === undefined ? {} : { websiteUrl }),
    ...(serverIcons.length === 0 ? {} : { icons: serverIcons }),
    ...(packages.length === 0 ? {} : { packages }),
    ...(remotes.length === 0 ? {} : { remotes })
  })
}
