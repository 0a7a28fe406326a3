/** Market attributes (docs/reference.md §11): what a rule tells the origin besides the pool. */

/** Most attributes one rule (and one route) may carry. */
export const MAX_ATTRS = 8;
/** Longest attribute value, in characters. */
export const MAX_ATTR_VALUE = 128;
/** An attribute name: it becomes the header `X-Edge-Attr-{name}`. */
export const ATTR_NAME = /^[a-z][a-z0-9-]{0,31}$/;
/** Printable ASCII, space included: safe in a header value as it is. */
const ATTR_VALUE = /^[\x20-\x7e]*$/;

/** A rule's or route's attributes: name → value. */
export type Attrs = Readonly<Record<string, string>>;

/** Why `attrs` is not acceptable (never echoing a name or value), or `null`. */
export function attrsProblem(attrs: Readonly<Record<string, unknown>>): string | null {
  const names = Object.keys(attrs);
  if (names.length > MAX_ATTRS) return `at most ${MAX_ATTRS} attributes`;
  for (const name of names) {
    if (!ATTR_NAME.test(name)) return "attribute names must match [a-z][a-z0-9-]{0,31}";
    const value = attrs[name];
    if (typeof value !== "string") return "attribute values must be strings";
    if (value.length > MAX_ATTR_VALUE || !ATTR_VALUE.test(value)) {
      return `attribute values must be at most ${MAX_ATTR_VALUE} printable ASCII characters`;
    }
  }
  return null;
}

/**
 * Attribute sets overlaid in order, later winning (continent < country < override), with the
 * names sorted; `undefined` when none has any.
 */
export function mergeAttrs(...layers: ReadonlyArray<Attrs | undefined>): Attrs | undefined {
  let merged: Record<string, string> | undefined;
  for (const layer of layers) if (layer) merged = Object.assign(merged ?? {}, layer);
  if (!merged) return undefined;
  const names = Object.keys(merged).sort();
  if (names.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const name of names) out[name] = merged[name] as string;
  return out;
}
