/**
 * The view iframe's Content-Security-Policy from a UI resource's `_meta.ui.csp` (MCP Apps
 * 2026-01-26, "UI Resource Format" › Host Behavior, and "Security Implications" › Content Security
 * Policy Enforcement). Pure: the value is wire data from the server, so every declared entry is
 * checked and the ones that are not a plain origin are dropped (and reported), never copied.
 *
 * @internal
 */
import { quote } from "../quote.js"

/** The four declared lists of `McpUiResourceCsp`, each an array of origins. @internal */
export const CSP_FIELDS = ["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"] as const

/** @internal */
export type CspField = typeof CSP_FIELDS[number]

/** A declared entry that was not used, and why. @internal */
export interface Rejected {
  readonly field: CspField
  /** The entry, quoted up to 256 characters; a non-string entry is shown as its type. */
  readonly value: string
  readonly reason: string
}

/** @internal */
export interface Policy {
  /** The header value: directives separated by `; `, on one line. */
  readonly policy: string
  /** The accepted origins of each field (what the host approves: `hostCapabilities.sandbox.csp`). */
  readonly approved: { readonly [K in CspField]: ReadonlyArray<string> }
  /** Declared entries left out (not an origin, a wildcard host, a keyword, …). */
  readonly rejected: ReadonlyArray<Rejected>
  /** Whether `_meta.ui.csp` was declared at all (an object). */
  readonly declared: boolean
}

const MAX_ENTRIES = 64
const MAX_ENTRY = 512

// scheme://host[:port][/path]: network schemes only; the host a DNS name (an optional leading
// "*." wildcard label, as the spec allows for subdomains), an IPv4 address or a bracketed IPv6
// one; the port digits or "*"; the path made of URL path characters only (no quote, semicolon,
// comma or white space, so the entry cannot end its directive or add a keyword).
const ORIGIN = new RegExp(
  "^(https?|wss?)://" +
    "(\\*\\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*" +
    "(:([0-9]{1,5}|\\*))?" +
    "(/[a-z0-9._~!$&()*+=:@%/-]*)?$",
  "i"
)
const IPV6_ORIGIN = /^(https?|wss?):\/\/\[[0-9a-f:.]+\](:([0-9]{1,5}|\*))?(\/[a-z0-9._~!$&()*+=:@%/-]*)?$/i

const check = (entry: unknown): string | undefined => {
  if (typeof entry !== "string") return `not a string (${entry === null ? "null" : typeof entry})`
  if (entry.length > MAX_ENTRY) return "longer than 512 characters"
  if (!ORIGIN.test(entry) && !IPV6_ORIGIN.test(entry)) {
    return "not an http(s) or ws(s) origin (scheme://host[:port][/path])"
  }
  const port = /:(\d+)(\/|$)/.exec(entry.replace(/^[a-z]+:\/\//i, ""))
  if (port !== null && (Number(port[1]) < 1 || Number(port[1]) > 65535)) return "port out of range"
  return undefined
}

const shown = (entry: unknown): string =>
  typeof entry === "string" ? quote(entry) : entry === null ? "null" : `(${typeof entry})`

const isRecord = (u: unknown): u is { readonly [key: string]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Builds the policy from `csp` (the `_meta.ui.csp` value, any JSON). Without a declaration (not an
 * object) the result is the spec's restrictive default, plus `object-src 'none'`, `frame-src
 * 'none'` and `base-uri 'self'` from the sandbox requirements. With one, each list extends only the
 * directives the spec maps it to; `connect-src` allows exactly the declared origins (no `'self'`:
 * the view has no same-origin server here), and every other fetch falls back to `default-src
 * 'none'`. Entries that are not origins are rejected, so the policy is never looser than declared.
 *
 * @internal
 */
export const build = (csp: unknown): Policy => {
  const declared = isRecord(csp)
  const rejected: Array<Rejected> = []
  const approved = {} as { [K in CspField]: ReadonlyArray<string> }
  for (const field of CSP_FIELDS) {
    const value = declared ? csp[field] : undefined
    const accepted: Array<string> = []
    if (value !== undefined && !Array.isArray(value)) {
      rejected.push({ field, value: shown(value), reason: "not an array" })
    }
    const entries: ReadonlyArray<unknown> = Array.isArray(value) ? value : []
    entries.forEach((entry, i) => {
      if (i >= MAX_ENTRIES) {
        if (i === MAX_ENTRIES) rejected.push({ field, value: shown(entry), reason: "more than 64 entries" })
        return
      }
      const reason = check(entry)
      if (reason !== undefined || typeof entry !== "string") {
        rejected.push({ field, value: shown(entry), reason: reason ?? "not a string" })
      } else if (!accepted.includes(entry)) {
        accepted.push(entry)
      }
    })
    approved[field] = accepted
  }
  const list = (base: string, extra: ReadonlyArray<string>) => [base, ...extra].join(" ").trim()
  const resources = approved.resourceDomains
  const directives = [
    "default-src 'none'",
    `script-src ${list("'self' 'unsafe-inline'", resources)}`,
    `style-src ${list("'self' 'unsafe-inline'", resources)}`,
    `img-src ${list("'self' data:", resources)}`,
    `media-src ${list("'self' data:", resources)}`,
    ...(resources.length === 0 ? [] : [`font-src ${list("'self'", resources)}`]),
    `connect-src ${approved.connectDomains.length === 0 ? "'none'" : approved.connectDomains.join(" ")}`,
    `frame-src ${approved.frameDomains.length === 0 ? "'none'" : approved.frameDomains.join(" ")}`,
    "object-src 'none'",
    `base-uri ${approved.baseUriDomains.length === 0 ? "'self'" : approved.baseUriDomains.join(" ")}`
  ]
  return { policy: directives.join("; "), approved, rejected, declared }
}
