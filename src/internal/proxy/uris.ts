/**
 * The proxy's URI namespace (docs/proxy.md, "Resource URIs"): each backend's resource URIs and
 * template URIs are served with the backend's prefix inserted right after the scheme, so two
 * backends serving the same URI no longer collide, and the scheme is kept (a `ui://` view is
 * still a `ui://` resource to an MCP Apps host; MCP Apps 2026-01-26, UI Resource Format).
 *
 * - hierarchical (`scheme://rest`): `scheme://<prefix>/rest` — `ui://dice/view.html` of backend
 *   `apps` is `ui://apps/dice/view.html`; `file:///etc/hosts` of `fs` is `file://fs//etc/hosts`;
 * - anything else (`scheme:rest`, `rest` not starting with `//`): `scheme:<prefix>:rest` —
 *   `urn:isbn:123` of `books` is `urn:books:isbn:123`.
 *
 * A prefix never contains `/` or `:` (1 or more of `A-Z a-z 0-9 _ . -`), so the prefix is the text
 * up to the first `/` (hierarchical) or `:` (otherwise), and the two forms cannot be confused (a
 * mapped URI of the second form never has `//` after its scheme): the mapping is injective and
 * {@link fromProxy} inverts it for every URI. A template is mapped the same way on its text, so
 * the scheme (and `//`, if any) must be literal, before the first `{`; otherwise it is left out.
 * @internal
 */

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/

/** How a backend's URIs are served: with its prefix (the default), or unchanged (`prefixUris: false`). */
export interface UriMapping {
  /** The proxy's URI for the backend's `uri`; `undefined` when it has no literal scheme. */
  readonly toProxy: (uri: string) => string | undefined
  /** The backend's URI for the proxy's `uri`; `undefined` when `uri` is not in its namespace. */
  readonly fromProxy: (uri: string) => string | undefined
}

/** The backend's `uri` as the proxy serves it (see the module docs). */
export const toProxy = (prefix: string, uri: string): string | undefined => {
  const scheme = SCHEME.exec(uri)
  if (scheme === null) return undefined
  const rest = uri.slice(scheme[0].length)
  return rest.startsWith("//") ? `${scheme[0]}//${prefix}/${rest.slice(2)}` : `${scheme[0]}${prefix}:${rest}`
}

/** The backend's URI for the proxy's `uri`, if it is in `prefix`'s namespace (inverse of {@link toProxy}). */
export const fromProxy = (prefix: string, uri: string): string | undefined => {
  const scheme = SCHEME.exec(uri)
  if (scheme === null) return undefined
  const rest = uri.slice(scheme[0].length)
  if (rest.startsWith(`//${prefix}/`)) return `${scheme[0]}//${rest.slice(prefix.length + 3)}`
  if (rest.startsWith(`${prefix}:`)) return `${scheme[0]}${rest.slice(prefix.length + 1)}`
  return undefined
}

/** The mapping of a backend: prefixed, or the identity. */
export const mapping = (prefix: string, prefixed: boolean): UriMapping =>
  prefixed
    ? { toProxy: (uri) => toProxy(prefix, uri), fromProxy: (uri) => fromProxy(prefix, uri) }
    : { toProxy: (uri) => uri, fromProxy: (uri) => uri }
