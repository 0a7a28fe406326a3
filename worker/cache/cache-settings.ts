/** How the edge cache behaves (docs/reference.md §4, docs/caching.md). */
export interface CacheSettings {
  /** `false` with `CACHE="off"`: every proxied request bypasses the cache. */
  readonly on: boolean;
  /** Query parameters left out of the cache key (lower case), e.g. signed-URL tokens. */
  readonly ignoreParams: ReadonlySet<string>;
  /** Seconds a stale copy may stand in when every pool fails, unless the origin says otherwise. */
  readonly staleIfErrorS: number;
  /** `PURGE_TOKEN`; `null` when unset or empty: `/__edge/purge` is a 404. */
  readonly purgeToken: string | null;
}

/** The raw vars `parseCacheSettings` reads. */
export interface CacheVars {
  readonly CACHE?: string | undefined;
  readonly CACHE_IGNORE_PARAMS?: string | undefined;
  readonly CACHE_STALE_IF_ERROR_SECONDS?: string | undefined;
  readonly PURGE_TOKEN?: string | undefined;
}

/** `CACHE_STALE_IF_ERROR_SECONDS` bounds, in seconds (a day at most). */
export const CACHE_STALE_IF_ERROR_RANGE_S = { min: 0, max: 86_400, fallback: 0 } as const;

function staleSeconds(raw: unknown): number {
  if (typeof raw !== "string" || !/^\s*\d{1,9}\s*$/.test(raw))
    return CACHE_STALE_IF_ERROR_RANGE_S.fallback;
  const { min, max } = CACHE_STALE_IF_ERROR_RANGE_S;
  return Math.min(max, Math.max(min, Number(raw)));
}

function paramNames(raw: unknown): ReadonlySet<string> {
  if (typeof raw !== "string") return new Set();
  return new Set(
    raw
      .split(",")
      .map((p) => p.trim().toLowerCase())
      .filter((p) => p.length > 0),
  );
}

/** Parses the vars; anything missing or garbled takes its default (caching on). */
export function parseCacheSettings(vars: CacheVars): CacheSettings {
  const token = typeof vars.PURGE_TOKEN === "string" ? vars.PURGE_TOKEN : "";
  return {
    on: typeof vars.CACHE !== "string" || vars.CACHE.trim().toLowerCase() !== "off",
    ignoreParams: paramNames(vars.CACHE_IGNORE_PARAMS),
    staleIfErrorS: staleSeconds(vars.CACHE_STALE_IF_ERROR_SECONDS),
    purgeToken: token.length > 0 ? token : null,
  };
}

const parsed = new WeakMap<object, CacheSettings>();

/** `parseCacheSettings`, memoised per env object (workerd passes one to all of an isolate's requests). */
export function cacheSettings(env: CacheVars): CacheSettings {
  let s = parsed.get(env);
  if (!s) {
    s = parseCacheSettings(env);
    parsed.set(env, s);
  }
  return s;
}
