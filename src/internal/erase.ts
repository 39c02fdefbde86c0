/**
 * The one place the library restates the services (`R`) a value's type carries: a definition
 * (tool, resource, template, prompt, part), or the Effect of a handler. The value is returned as it
 * is; only its type changes. Every use says why the new `R` holds: `RequestContext` is always
 * provided, a part's definitions need at most the union of its services, an add call's type
 * required (and captured) what a handler needs beyond the server.
 * @internal
 */

/** `value`, typed `To` (the same value with its services restated; see the module's documentation). */
export const erase = <To extends object>(value: object): To => value as To
