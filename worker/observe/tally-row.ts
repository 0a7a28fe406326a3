import type { Tally } from "./tally.js";

/**
 * One tally as it travels from an isolate to the aggregator and back: `minute` is whole minutes
 * since the Unix epoch (UTC).
 */
export interface TallyRow {
  readonly minute: number;
  readonly country: string;
  readonly pool: string;
  readonly tally: Tally;
}

/** The minute `ms` (Unix milliseconds) falls in. */
export function minuteOf(ms: number): number {
  return Math.floor(ms / 60_000);
}
