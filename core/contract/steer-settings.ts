import { intVar, perEnv } from "./env-vars.js";

/** How the edge steers players (docs/reference.md §15). */
export interface SteerSettings {
  /** `STEER="on"`: multivariant playlists and MPDs gain steering tags as they pass through. */
  readonly rewrite: boolean;
  /** The query parameter that pins a request to a pool (`STEER_PARAM`). */
  readonly param: string;
  /** The steering manifest's `TTL`, in seconds (`STEER_TTL_SECONDS`). */
  readonly ttlS: number;
  /** Steering requests one isolate answers per second before it says 429; 0: no limit. */
  readonly ratePerS: number;
}

/** The raw vars `parseSteerSettings` reads. */
export interface SteerVars {
  readonly STEER?: string | undefined;
  readonly STEER_PARAM?: string | undefined;
  readonly STEER_TTL_SECONDS?: string | undefined;
  readonly STEER_RATE?: string | undefined;
}

/** `STEER_PARAM` when unset or unusable. */
export const DEFAULT_STEER_PARAM = "edge_pathway";

/** `STEER_TTL_SECONDS` bounds: players reload at most every 10 s, and at least hourly. */
export const STEER_TTL_RANGE_S = { min: 10, max: 3600, fallback: 30 } as const;

/** `STEER_RATE` bounds: steering requests per second per isolate; 0 never refuses. */
export const STEER_RATE_RANGE = { min: 0, max: 100_000, fallback: 200 } as const;

/** A query parameter name the edge can own: URL-safe, never percent-encoded. */
const PARAM_NAME = /^[A-Za-z0-9_.~-]{1,64}$/;

/** Parses the vars; anything missing or garbled takes its default. */
export function parseSteerSettings(vars: SteerVars): SteerSettings {
  const param = typeof vars.STEER_PARAM === "string" ? vars.STEER_PARAM.trim() : "";
  return {
    rewrite: typeof vars.STEER === "string" && vars.STEER.trim().toLowerCase() === "on",
    param: PARAM_NAME.test(param) ? param : DEFAULT_STEER_PARAM,
    ttlS: intVar(vars.STEER_TTL_SECONDS, STEER_TTL_RANGE_S),
    ratePerS: intVar(vars.STEER_RATE, STEER_RATE_RANGE),
  };
}

/** `parseSteerSettings`, memoised per env object. */
export const steerSettings: (env: SteerVars) => SteerSettings = perEnv(parseSteerSettings);
