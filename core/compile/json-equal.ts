/**
 * Whether two JSON-like values (plain objects, arrays, strings, numbers, booleans, null) hold the
 * same data: the same own keys with equal values, arrays item by item. Key order is ignored;
 * a key present with `undefined` differs from an absent one; numbers compare with `===` (-0
 * equals 0, as JSON writes both `0`). Node's `isDeepStrictEqual` answers
 * the same for such values but costs more than serializing a route, which is what this saves.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  for (const k of ka) if (!Object.hasOwn(rb, k) || !jsonEqual(ra[k], rb[k])) return false;
  return true;
}
