/**
 * Decoding of a request's raw result into its Schema type, for every client module.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import type * as JsonRpc from "../../JsonRpc.js"
import { ClientError } from "./error.js"

/** Options of {@link decoder}. */
export interface DecoderOptions {
  /**
   * The raw results are the call's own (parsed for it, never cached or shared): a valid one is
   * returned as it is instead of a decoded copy. Applies only to a schema without transformations
   * or refinements (its type and encoded sides are one AST), where validity and decoding agree.
   */
  readonly fresh?: boolean | undefined
}

/**
 * A result decoder for `method`, built once: the parser is compiled when the decoder is made and
 * runs synchronously (no fiber work per result); excess properties are kept. A result that does
 * not match fails with `ClientError` "InvalidResult" (`cause`: the `ParseError`).
 */
export const decoder = <A, I>(
  schema: Schema.Schema<A, I>,
  method: string,
  options: DecoderOptions = {}
): (result: JsonRpc.JsonObject) => Effect.Effect<A, ClientError> => {
  const parse = Schema.decodeUnknownEither(schema, { onExcessProperty: "preserve" })
  const decodeCopy = (result: JsonRpc.JsonObject): Effect.Effect<A, ClientError> => {
    const decoded = parse(result)
    return Either.isRight(decoded)
      ? Effect.succeed(decoded.right)
      : Effect.fail(
        new ClientError({
          reason: "InvalidResult",
          message: `invalid ${method} result: ${decoded.left.message}`,
          cause: decoded.left
        })
      )
  }
  const ast = schema.ast
  if (options.fresh !== true || AST.typeAST(ast) !== ast || AST.encodedAST(ast) !== ast) return decodeCopy
  // One AST for both sides: a value the Schema accepts as its type decodes to an equal value, so a
  // fresh one is returned itself, validated without building a copy (bench/README.md, "Issue #24:
  // client"). Anything else takes the decoder, for the same result or error as before.
  const is = Schema.is(schema)
  return (result) => is(result) ? Effect.succeed(result) : decodeCopy(result)
}
