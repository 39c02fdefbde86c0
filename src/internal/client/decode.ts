/**
 * Decoding of a request's raw result into its Schema type, for every client module.
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type * as JsonRpc from "../../JsonRpc.js"
import { ClientError } from "./error.js"

/**
 * A result decoder for `method`, built once: the parser is compiled when the decoder is made and
 * runs synchronously (no fiber work per result); excess properties are kept. A result that does
 * not match fails with `ClientError` "InvalidResult" (`cause`: the `ParseError`).
 */
export const decoder = <A, I>(
  schema: Schema.Schema<A, I>,
  method: string
): (result: JsonRpc.JsonObject) => Effect.Effect<A, ClientError> => {
  const parse = Schema.decodeUnknownEither(schema, { onExcessProperty: "preserve" })
  return (result) => {
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
}
