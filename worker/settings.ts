import {
  DEFAULT_ISOLATE_CACHE_SECONDS,
  DEFAULT_KV_CACHE_TTL,
} from "../core/contract/edge-propagation.js";
import { intVar, perEnv, secretVar } from "../core/contract/env-vars.js";
import { isPoolName } from "../core/contract/pool-name.js";
import { DEFAULT_FLOOR_POOL, DEFAULT_ORIGIN_TEMPLATE } from "../core/contract/route-settings.js";
import { originTemplateProblem } from "../core/contract/settings-check.js";
import type { EjectionSettings } from "./outlier-ejection.js";

/** The Worker's parsed configuration. */
export interface WorkerSettings extends EjectionSettings {
  readonly originTemplate: string;
  readonly floorPool: string;
  /** `cacheTtl` for `ROUTING.get`, in seconds (at least KV's minimum of 30). */
  readonly kvCacheTtl: number;
  /** How long a parsed map stays fresh in the isolate; 0 re-reads on every request. */
  readonly isolateCacheMs: number;
  /** Origins tried in total for a GET/HEAD (at least 1). */
  readonly maxAttempts: number;
  /** Milliseconds one GET/HEAD attempt may take to send its response headers. */
  readonly originTimeoutMs: number;
  /**
   * Milliseconds a GET/HEAD waits for response headers before the next pool of the chain is
   * asked as well (the first answer wins).
   */
  readonly hedgeMs: number;
  /**
   * Milliseconds a request sent only once (any other method) may wait for its response headers,
   * counted from the end of its body.
   */
  readonly onceTimeoutMs: number;
  /** `null` when unset or empty: debug features off. */
  readonly debugToken: string | null;
  /** Secrets that sign origin requests, current first; empty when `ORIGIN_SIGNING_KEY` is unset. */
  readonly signingSecrets: readonly string[];
}

/** The raw string vars `settingsFromEnv` reads. */
export interface SettingsVars {
  readonly ORIGIN_TEMPLATE?: string | undefined;
  readonly FLOOR_POOL?: string | undefined;
  readonly KV_CACHE_TTL?: string | undefined;
  readonly ISOLATE_CACHE_SECONDS?: string | undefined;
  readonly MAX_ATTEMPTS?: string | undefined;
  readonly ORIGIN_TIMEOUT_MS?: string | undefined;
  readonly ORIGIN_HEDGE_MS?: string | undefined;
  readonly ORIGIN_ONCE_TIMEOUT_MS?: string | undefined;
  readonly EDGE_EJECT_AFTER?: string | undefined;
  readonly EDGE_EJECT_SECONDS?: string | undefined;
  readonly DEBUG_TOKEN?: string | undefined;
  readonly ORIGIN_SIGNING_KEY?: string | undefined;
  readonly ORIGIN_SIGNING_KEY_PREVIOUS?: string | undefined;
}

/** KV rejects a `cacheTtl` below 30 seconds. */
export const KV_MIN_CACHE_TTL = 30;

/** `KV_CACHE_TTL` bounds, in seconds: KV's minimum to a year. */
export const KV_CACHE_TTL_RANGE_S = {
  min: KV_MIN_CACHE_TTL,
  max: 365 * 86_400,
  fallback: DEFAULT_KV_CACHE_TTL,
} as const;

/** `ISOLATE_CACHE_SECONDS` bounds; 0 re-reads on every request. */
export const ISOLATE_CACHE_RANGE_S = {
  min: 0,
  max: 86_400,
  fallback: DEFAULT_ISOLATE_CACHE_SECONDS,
} as const;

/** `MAX_ATTEMPTS` bounds: origins tried in total for a GET/HEAD. */
export const MAX_ATTEMPTS_RANGE = { min: 1, max: 17, fallback: 2 } as const;

/** `EDGE_EJECT_AFTER` bounds; 0 never passes an origin over. */
export const EJECT_AFTER_RANGE = { min: 0, max: 1000, fallback: 2 } as const;

/** `EDGE_EJECT_SECONDS` bounds. */
export const EJECT_SECONDS_RANGE = { min: 1, max: 3600, fallback: 10 } as const;

/** `ORIGIN_TIMEOUT_MS` bounds: below 100 ms no real origin answers; Cloudflare gives up at 100 s. */
export const ORIGIN_TIMEOUT_RANGE_MS = { min: 100, max: 100_000, fallback: 4000 } as const;

/**
 * `ORIGIN_HEDGE_MS` bounds: the same range; a second past a video segment's usual answer. At or
 * above `ORIGIN_TIMEOUT_MS` it never hedges (the attempt times out first).
 */
export const ORIGIN_HEDGE_RANGE_MS = { min: 100, max: 100_000, fallback: 1000 } as const;

/** `ORIGIN_ONCE_TIMEOUT_MS` bounds: the same range; a slow commit gets 30 s by default. */
export const ORIGIN_ONCE_TIMEOUT_RANGE_MS = { min: 100, max: 100_000, fallback: 30_000 } as const;

function usableTemplate(raw: unknown): string {
  if (typeof raw !== "string" || raw.length === 0) return DEFAULT_ORIGIN_TEMPLATE;
  return originTemplateProblem(raw) === null ? raw : DEFAULT_ORIGIN_TEMPLATE;
}

/** The current signing secret, then the previous one while a rotation is under way. */
function signingSecrets(vars: SettingsVars): readonly string[] {
  const current = secretVar(vars.ORIGIN_SIGNING_KEY);
  if (current === null) return [];
  const previous = secretVar(vars.ORIGIN_SIGNING_KEY_PREVIOUS);
  return previous === null || previous === current ? [current] : [current, previous];
}

/** Parses the vars; anything missing or garbled takes its default. */
export function parseSettings(vars: SettingsVars): WorkerSettings {
  return {
    originTemplate: usableTemplate(vars.ORIGIN_TEMPLATE),
    floorPool:
      typeof vars.FLOOR_POOL === "string" && isPoolName(vars.FLOOR_POOL)
        ? vars.FLOOR_POOL
        : DEFAULT_FLOOR_POOL,
    kvCacheTtl: intVar(vars.KV_CACHE_TTL, KV_CACHE_TTL_RANGE_S),
    isolateCacheMs: intVar(vars.ISOLATE_CACHE_SECONDS, ISOLATE_CACHE_RANGE_S) * 1000,
    maxAttempts: intVar(vars.MAX_ATTEMPTS, MAX_ATTEMPTS_RANGE),
    originTimeoutMs: intVar(vars.ORIGIN_TIMEOUT_MS, ORIGIN_TIMEOUT_RANGE_MS),
    hedgeMs: intVar(vars.ORIGIN_HEDGE_MS, ORIGIN_HEDGE_RANGE_MS),
    onceTimeoutMs: intVar(vars.ORIGIN_ONCE_TIMEOUT_MS, ORIGIN_ONCE_TIMEOUT_RANGE_MS),
    ejectAfter: intVar(vars.EDGE_EJECT_AFTER, EJECT_AFTER_RANGE),
    ejectMs: intVar(vars.EDGE_EJECT_SECONDS, EJECT_SECONDS_RANGE) * 1000,
    debugToken: secretVar(vars.DEBUG_TOKEN),
    signingSecrets: signingSecrets(vars),
  };
}

const parsed = perEnv(parseSettings);
/** workerd passes one env object to all of an isolate's requests: the last one is kept at hand. */
let last: { env: SettingsVars; settings: WorkerSettings } | null = null;

/** `parseSettings`, memoised per env object so the hot path parses nothing. */
export function settingsFromEnv(env: SettingsVars): WorkerSettings {
  if (last?.env === env) return last.settings;
  const settings = parsed(env);
  last = { env, settings };
  return settings;
}
