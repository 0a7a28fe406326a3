import { intVar, onUnlessOff, perEnv, secretVar } from "../../core/contract/env-vars.js";

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
  return {
    on: onUnlessOff(vars.CACHE),
    ignoreParams: paramNames(vars.CACHE_IGNORE_PARAMS),
    staleIfErrorS: intVar(vars.CACHE_STALE_IF_ERROR_SECONDS, CACHE_STALE_IF_ERROR_RANGE_S),
    purgeToken: secretVar(vars.PURGE_TOKEN),
  };
}

/** `parseCacheSettings`, memoised per env object. */
export const cacheSettings: (env: CacheVars) => CacheSettings = perEnv(parseCacheSettings);
