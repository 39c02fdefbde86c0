/**
 * Per-caller visibility: a definition with `visible(ctx)` false is filtered out of the caller's
 * view of the snapshot, so it is absent from every list and unknown when named directly.
 * @internal
 */
import * as Effect from "effect/Effect"
import { RequestContext as RequestContextTag, type RequestContextShape } from "../../RequestContext.js"
import { liftIn } from "./requestContext.js"
import * as Defs from "./snapshot.js"

/** A visibility predicate: a boolean, a Promise of one, or an Effect of one. */
export type Visible = (ctx: RequestContextShape) => boolean | PromiseLike<boolean> | Effect.Effect<boolean>

const allowed = (visible: Visible | undefined, ctx: RequestContextShape): Effect.Effect<boolean> =>
  visible === undefined
    ? Effect.succeed(true)
    : liftIn(ctx, () => visible(ctx)).pipe(
      // A predicate that fails hides the definition (fail closed) and is logged (with the
      // request context, as the predicate ran).
      Effect.catchAllCause((cause) =>
        Effect.logError("a visibility predicate failed; the definition is hidden", cause).pipe(
          Effect.as(false),
          Effect.provideService(RequestContextTag, ctx)
        )
      )
    )

const hasScopes = (required: ReadonlyArray<string>, ctx: RequestContextShape): boolean =>
  required.every((s) => ctx.auth?.scopes.includes(s) === true)

const keep = <A>(items: ReadonlyArray<A>, visible: (a: A) => Visible | undefined, ctx: RequestContextShape) =>
  Effect.filter(items, (a) => allowed(visible(a), ctx))

/** The caller's view of a snapshot (the snapshot itself when nothing declares visibility). */
export const view = (snapshot: Defs.Snapshot, ctx: RequestContextShape): Effect.Effect<Defs.Snapshot> => {
  if (!snapshot.hasVisibility) return Effect.succeed(snapshot)
  return Effect.all({
    tools: keep(snapshot.tools, (t) => t.def.visible, ctx),
    resources: keep(snapshot.resources, (r) => r.def.visible, ctx),
    templates: keep(snapshot.templates, (t) => t.def.visible, ctx),
    prompts: keep(snapshot.prompts, (p) => p.def.visible, ctx),
    skills: Effect.succeed(snapshot.skills.filter((s) => hasScopes(s.skill.requiredScopes, ctx)))
  }).pipe(Effect.map((parts) => ({ ...snapshot, ...parts, ...Defs.indexes(parts) })))
}

/**
 * Is this definition (found in the whole snapshot) in the caller's view? What {@link view} would
 * decide for it alone; `false` for none.
 */
export const visible = (
  definition: { readonly def: { readonly visible?: Visible | undefined } } | undefined,
  ctx: RequestContextShape
): Effect.Effect<boolean> => definition === undefined ? Effect.succeed(false) : allowed(definition.def.visible, ctx)

/**
 * A visibility predicate that requires the caller's token to carry every scope in `scopes`
 * (`ctx.auth.scopes`): the authorization rule is one use of visibility, not a second mechanism.
 */
export const requireScopes = (scopes: ReadonlyArray<string>): Visible => (ctx) => hasScopes(scopes, ctx)
