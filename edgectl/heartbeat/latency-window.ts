/** Probes the checker's `p90_ms` is computed over (docs/reference.md §6). */
export const LATENCY_WINDOW = 20;

/** The last `size` probes' times to first byte, and their p90. */
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
}
