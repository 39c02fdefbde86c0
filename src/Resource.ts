/**
 * Resource and resource-template definitions: plain records with a handler.
 *
 * Spec: Server › Resources (2026-07-28: not found is -32602 with `data.uri`, SEP-2164), RFC 6570
 * for templates.
 *
 * Guide: [Servers, resources and templates](https://github.com/presa-mcp/presa-mcp/blob/main/docs/servers.md#resources-and-templates).
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type { DefinitionServices, HandlerResult } from "./Handler.js"
import type { InputRequired } from "./Input.js"
import { erase } from "./internal/erase.js"
import type * as JsonRpc from "./JsonRpc.js"
import type * as McpSchema from "./McpSchema.js"
import type { RequestContext, RequestContextShape } from "./RequestContext.js"

/**
 * What a resource handler may return:
 * - a string → one text contents `{uri, mimeType?, text}`;
 * - a `Uint8Array` → one blob contents (base64);
 * - an array of contents (or `{contents: [...]}`) → as is;
 * - `undefined` / `null` → -32602 `Resource not found` with `data.uri` (both eras).
 *
 * @since 0.1.0
 * @category models
 */
export type ResourceReturn =
  | string
  | Uint8Array
  | ReadonlyArray<McpSchema.ResourceContents>
  | { readonly contents: ReadonlyArray<McpSchema.ResourceContents> }
  | null
  | undefined

interface Metadata {
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly mimeType?: string
  readonly annotations?: McpSchema.Annotations
  readonly icons?: ReadonlyArray<McpSchema.Icon>
  readonly _meta?: JsonRpc.JsonObject
  /**
   * Per-caller visibility: when it yields `false` the definition is absent from every list and,
   * named directly, gets the same error as one that does not exist. A predicate that fails hides it.
   */
  readonly visible?: (ctx: RequestContextShape) => boolean | PromiseLike<boolean> | Effect.Effect<boolean>
}

/**
 * A static resource: `{uri, name, title?, description?, mimeType?, size?, handler(uri, ctx)}`.
 * `R`: the services its handler needs besides `RequestContext` (default none).
 *
 * @since 0.1.0
 * @category models
 */
export interface Resource<R = never> extends Metadata {
  readonly uri: string
  /** Raw size in bytes, if known. */
  readonly size?: number
  readonly handler: (
    uri: string,
    ctx: RequestContextShape
  ) => HandlerResult<ResourceReturn, JsonRpc.McpError | InputRequired, R>
}

/**
 * A completion function for one argument: gets the partial value, the other arguments already
 * chosen, and the context; returns candidate strings or `{values, total?, hasMore?}`. At most 100
 * values are sent; when cut, `hasMore: true` and `total` are set.
 *
 * @since 0.1.0
 * @category models
 */
export type Complete<R = never> = (
  value: string,
  otherArguments: Readonly<Record<string, string>>,
  ctx: RequestContextShape
) => HandlerResult<
  ReadonlyArray<string> | {
    readonly values: ReadonlyArray<string>
    readonly total?: number
    readonly hasMore?: boolean
  },
  JsonRpc.McpError,
  R
>

/**
 * A resource template: `{uriTemplate, name, ..., handler(vars, ctx), complete?}`. `uriTemplate`
 * is RFC 6570 (`{var}` one segment, `{+var}` the rest including `/`); matching is exact and the
 * variables are percent-decoded. `complete` maps variable names to completion functions.
 *
 * Precedence on `resources/read`: a static resource with the exact URI wins; otherwise the first
 * template (in registration order) that matches the URI serves it, and if its handler yields
 * nothing the answer is -32602 `Resource not found` (later templates are not tried).
 *
 * @since 0.1.0
 * @category models
 */
export interface ResourceTemplate<R = never> extends Metadata {
  readonly uriTemplate: string
  readonly handler: (
    variables: Readonly<Record<string, string>>,
    ctx: RequestContextShape & { readonly uri: string }
  ) => HandlerResult<ResourceReturn, JsonRpc.McpError | InputRequired, R>
  readonly complete?: Readonly<Record<string, Complete<R>>>
}

/**
 * Any static resource, whatever services it needs (the constraint `McpServer.make` infers against).
 *
 * @since 0.1.0
 * @category models
 */
export type AnyResource = Resource<unknown>

/**
 * Any resource template, whatever services it needs.
 *
 * @since 0.1.0
 * @category models
 */
export type AnyTemplate = ResourceTemplate<unknown>

/**
 * The services a resource's or template's handler (and completion functions) need besides
 * `RequestContext` (distributes over a union).
 *
 * @since 0.1.0
 * @category type-level
 */
export type Services<D> = DefinitionServices<D>

/**
 * Defines a static resource (identity, for inference of the handler's services `R`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <R = never>(resource: Resource<R>): Resource<Exclude<R, RequestContext>> =>
  // `R` as inferred may include `RequestContext` (always provided): the result type drops it.
  erase<Resource<Exclude<R, RequestContext>>>(resource)

/**
 * Defines a resource template (identity, for inference of the handler's services `R`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const template = <R = never>(template: ResourceTemplate<R>): ResourceTemplate<Exclude<R, RequestContext>> =>
  erase<ResourceTemplate<Exclude<R, RequestContext>>>(template)
