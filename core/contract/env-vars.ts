/** A numeric var's bounds and the value it takes when missing or garbled. */
export interface VarRange {
  readonly min: number;
  readonly max: number;
  readonly fallback: number;
}

/**
 * A whole-number var (digits, blanks around them allowed) clamped to `range`; anything else
 * (missing, signed, fractional, over nine digits) takes `range.fallback`.
 */
export function intVar(raw: unknown, range: VarRange): number {
  if (typeof raw !== "string" || !/^\s*\d{1,9}\s*$/.test(raw)) return range.fallback;
  return Math.min(range.max, Math.max(range.min, Number(raw)));
}

/** A token or secret var: its text, or `null` when unset or empty. */
export function secretVar(raw: unknown): string | null {
  return typeof raw === "string" && raw.length > 0 ? raw : null;
}

/** A switch that is on unless set to `off` (any case, blanks around it allowed). */
export function onUnlessOff(raw: unknown): boolean {
  return typeof raw !== "string" || raw.trim().toLowerCase() !== "off";
}

/**
 * `parse`, memoised per env object: workerd passes one env object to all of an isolate's
 * requests, so the hot path parses nothing.
 */
export function perEnv<E extends object, S>(parse: (env: E) => S): (env: E) => S {
  const parsed = new WeakMap<E, S>();
  return (env) => {
    let s = parsed.get(env);
    if (s === undefined) {
      s = parse(env);
      parsed.set(env, s);
    }
    return s;
  };
}
