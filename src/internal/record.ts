/**
 * A record without its `undefined` values: what a Schema-first definition's optional per-key map
 * (`complete` of `Prompt.make` and `Resource.template`) becomes on the definition record.
 * @internal
 */
export const defined = <V>(record: { readonly [key: string]: V | undefined }): Readonly<Record<string, V>> => {
  const out: Record<string, V> = {}
  for (const [key, value] of Object.entries(record)) if (value !== undefined) out[key] = value
  return out
}
