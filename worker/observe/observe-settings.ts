/** How the edge records and serves observations (docs/reference.md §12). */
export interface ObserveSettings {
  /** `false` with `OBSERVE="off"`: nothing is recorded. */
  readonly on: boolean;
  /** `OBSERVE_TOKEN`; `null` when unset or empty: `/__edge/observations` is a 404. */
  readonly token: string | null;
  /** An isolate flushes its sums at most this often; 0 after every request. */
  readonly flushMs: number;
}

/** The raw vars `parseObserveSettings` reads. */
export interface ObserveVars {
  readonly OBSERVE?: string | undefined;
  readonly OBSERVE_TOKEN?: string | undefined;
  readonly OBSERVE_FLUSH_SECONDS?: string | undefined;
}

/** `OBSERVE_FLUSH_SECONDS` bounds, in seconds. */
export const OBSERVE_FLUSH_RANGE_S = { min: 0, max: 300, fallback: 10 } as const;

function flushSeconds(raw: unknown): number {
  if (typeof raw !== "string" || !/^\s*\d{1,9}\s*$/.test(raw))
    return OBSERVE_FLUSH_RANGE_S.fallback;
  return Math.min(OBSERVE_FLUSH_RANGE_S.max, Math.max(OBSERVE_FLUSH_RANGE_S.min, Number(raw)));
}

/** Parses the vars; anything missing or garbled takes its default. */
export function parseObserveSettings(vars: ObserveVars): ObserveSettings {
  const token = typeof vars.OBSERVE_TOKEN === "string" ? vars.OBSERVE_TOKEN : "";
  return {
    on: typeof vars.OBSERVE !== "string" || vars.OBSERVE.trim().toLowerCase() !== "off",
    token: token.length > 0 ? token : null,
    flushMs: flushSeconds(vars.OBSERVE_FLUSH_SECONDS) * 1000,
  };
}

const parsed = new WeakMap<object, ObserveSettings>();

/** `parseObserveSettings`, memoised per env object (workerd passes one to all of an isolate's requests). */
export function observeSettings(env: ObserveVars): ObserveSettings {
  let s = parsed.get(env);
  if (!s) {
    s = parseObserveSettings(env);
    parsed.set(env, s);
  }
  return s;
}
