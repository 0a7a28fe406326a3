/** One-minute buckets kept: the current minute and the 15 before it (a 900 s window rounds out). */
export const KEPT_MINUTES = 16;

/**
 * When the rows of `oldestMinute` (minutes since the epoch) leave the kept window, a second past
 * the minute's turn: the moment the aggregator's next prune has work.
 */
export function pruneAt(oldestMinute: number): number {
  return (oldestMinute + KEPT_MINUTES) * 60_000 + 1_000;
}
