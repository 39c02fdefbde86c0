/**
 * How a backend's prefix names what the proxy serves: a tool or prompt `name` of backend `fs` is
 * `fs_name`; the empty prefix (allowed only for a proxy's one backend, make.ts) serves names
 * unchanged and owns every name.
 *
 * @internal
 */

/** The name the proxy serves for the backend's `name`: `<prefix>_<name>`, or `name` when `prefix` is "". */
export const served = (prefix: string, name: string): string => prefix === "" ? name : `${prefix}_${name}`

/** Is the served `name` in `prefix`'s namespace (starts with `<prefix>_`; every name for "")? */
export const inNamespace = (prefix: string, name: string): boolean => prefix === "" || name.startsWith(`${prefix}_`)

/** The backend as an error message names it: `Backend <prefix>`, or `The backend` for "". */
export const backend = (prefix: string): string => prefix === "" ? "The backend" : `Backend ${prefix}`

/** The backend as a log line names it: `backend <prefix>`, or `backend` for "". */
export const logged = (prefix: string): string => prefix === "" ? "backend" : `backend ${prefix}`
