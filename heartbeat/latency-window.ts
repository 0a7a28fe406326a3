/** Probes the checker's `p90_ms` is computed over (docs/reference.md §6). */
export const LATENCY_WINDOW = 20;

/**
 * The last `size` probes' times to first byte, their p90, and the figure a checker publishes
 * from them (`published`: the p90, or a faster answer to a slowdown).
 */
export class LatencyWindow {
  private readonly samples: number[] = [];

  constructor(private readonly size: number = LATENCY_WINDOW) {}

  /** Adds one probe's time to first byte, dropping the oldest beyond `size`. */
  add(ms: number): void {
    this.samples.push(ms);
    if (this.samples.length > this.size) this.samples.shift();
  }

  /** Samples held (at most `size`). */
  get count(): number {
    return this.samples.length;
  }

  /** The p90 (nearest rank) in whole ms; `null` before the first sample. */
  p90(): number | null {
    if (this.samples.length === 0) return null;
    const sorted = [...this.samples].sort((a, b) => a - b);
    const rank = Math.ceil(0.9 * sorted.length);
    return Math.round(sorted[rank - 1] ?? 0);
  }

  /**
   * The figure a checker publishes (docs/reference.md §6, "Heartbeat latency"): the p90, except
   * when the last two probes are both above it, then the lower of those two (fast attack). Over a
   * full window of 20 the nearest-rank p90 turns only at the third slow probe in a row (15 s at a
   * 5 s interval); two slow probes in a row already say more than one outlier, and one alone
   * changes nothing.
   */
  published(): number | null {
    const p90 = this.p90();
    const last = this.samples.at(-1);
    const before = this.samples.at(-2);
    if (p90 === null || last === undefined || before === undefined) return p90;
    const lower = Math.round(Math.min(last, before));
    return Math.max(lower, p90);
  }
}
