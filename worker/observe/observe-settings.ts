import { intVar, onUnlessOff, perEnv, secretVar } from "../../core/contract/env-vars.js";

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

/** Parses the vars; anything missing or garbled takes its default. */
export function parseObserveSettings(vars: ObserveVars): ObserveSettings {
  return {
    on: onUnlessOff(vars.OBSERVE),
    token: secretVar(vars.OBSERVE_TOKEN),
    flushMs: intVar(vars.OBSERVE_FLUSH_SECONDS, OBSERVE_FLUSH_RANGE_S) * 1000,
  };
}

/** `parseObserveSettings`, memoised per env object. */
export const observeSettings: (env: ObserveVars) => ObserveSettings = perEnv(parseObserveSettings);
