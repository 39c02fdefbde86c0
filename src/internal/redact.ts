/**
 * Naming things that may hold credentials in messages and logs without their secrets.
 * @internal
 */

/**
 * A URL as messages name it: no user name, password, query or fragment (they may hold
 * credentials: `https://user:token@host/`, `…/mcp?api_key=…`), e.g. `https://search.example/mcp?…`.
 */
export const redactUrl = (u: string): string => {
  if (!URL.canParse(u)) return "(an invalid URL)"
  const url = new URL(u)
  return `${url.origin}${url.pathname}${url.search.length > 0 ? "?…" : ""}`
}
