import type { Tally } from "./tally.js";

/**
 * One tally as it travels from an isolate to the aggregator and back: `minute` is whole minutes
 * since the Unix epoch (UTC).
 */
export interface TallyRow {
  readonly minute: number;
  readonly country: string;
  readonly pool: string;
  /** `{id}:canary` or `{id}:stable` for a route a canary changes (`X-Edge-Canary`); absent: none. */
  readonly side?: string;
  readonly tally: Tally;
}

/** A tally row's `side`: what `X-Edge-Canary` says. */
export const CANARY_SIDE = /^c[0-9]{1,15}:(canary|stable)$/;

/** The minute `ms` (Unix milliseconds) falls in. */
export function minuteOf(ms: number): number {
  return Math.floor(ms / 60_000);
}
