/**
 * Bounded echoes of what a peer sent: error messages and error `data` quote request values (a
 * method, a tool name, a URI, a header) only up to a small bound, so an error reply is never
 * several times the size of the request that caused it (issue #20, "Amplification").
 * @internal
 */

/** Characters of a request value that an error message or `data` field quotes at most. */
export const MAX_QUOTE = 256

/**
 * `value` as it is when it has at most `max` UTF-16 code units, else its first `max` (one fewer
 * when that would split a surrogate pair) followed by `…`.
 */
export const quote = (value: string, max: number = MAX_QUOTE): string => {
  if (value.length <= max) return value
  const last = value.charCodeAt(max - 1)
  const cut = last >= 0xd800 && last <= 0xdbff ? max - 1 : max
  return `${value.slice(0, cut)}…`
}
