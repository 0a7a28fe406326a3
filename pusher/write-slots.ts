/**
 * The spacing of writes to one KV key: Workers KV takes one write per second per key, counted
 * where the write arrives. A write started here exactly 1 s after the last may arrive 999 ms
 * after it (the last one's request took a few ms longer) and be refused with a 429, which costs
 * a whole retry; 50 ms of margin absorbs that jitter.
 */
export const KV_WRITE_SPACING_MS = 1_050;

/**
 * Workers KV allows one write per second to each key, so `routes` and `meta` have a slot each: a
 * change is not held back by a `meta` heartbeat written a moment before (it goes out alone, and
 * `meta` follows at its own slot).
 */
export class WriteSlots {
  private routesAt = Number.NEGATIVE_INFINITY;
  private metaAt = Number.NEGATIVE_INFINITY;

  /** @param intervalMs the spacing of writes to one key (1 s for Workers KV). */
  constructor(private readonly intervalMs: number) {}

  /** Clock time from which `routes` may be written again. */
  routesFreeAt(): number {
    return this.routesAt + this.intervalMs;
  }

  /** Clock time from which `meta` may be written again. */
  metaFreeAt(): number {
    return this.metaAt + this.intervalMs;
  }

  /**
   * For a write due at `now` (of `routes`, or of `meta` alone): how long to wait for its slot,
   * and whether `meta` rides along with `routes` (its own slot is free) or follows at its slot.
   */
  plan(now: number, routes: boolean): { readonly waitMs: number; readonly withMeta: boolean } {
    const metaFree = now >= this.metaFreeAt();
    if (!routes) return { waitMs: Math.max(0, this.metaFreeAt() - now), withMeta: true };
    return { waitMs: Math.max(0, this.routesFreeAt() - now), withMeta: metaFree };
  }

  /** Records a write started at `now` (whether it succeeds or not: KV may have taken it). */
  took(now: number, keys: { readonly routes: boolean; readonly meta: boolean }): void {
    if (keys.routes) this.routesAt = now;
    if (keys.meta) this.metaAt = now;
  }
}
