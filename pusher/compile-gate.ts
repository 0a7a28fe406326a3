/**
 * The compile economy (docs/reference.md §5.9): at most one range read and compile per KV write slot. A
 * trigger after a quiet interval may start a read at once (no added latency for a lone change);
 * triggers inside the interval wait for its end and are served by one read there, which sees
 * every change before it (the read is the data, the trigger only says "something moved").
 * Pure bookkeeping on clock times, so its rules are tested without timers.
 */
export class CompileGate {
  /** Start of the last read that spent a slot. */
  private lastStart = Number.NEGATIVE_INFINITY;
  /** Start of the last read of any kind (for its duration). */
  private startedAt = Number.NEGATIVE_INFINITY;
  /** How long the last read and compile took: the next one starts that much before the slot. */
  private lastMs = 0;
  /** The slot the read in progress replaced, while it may still be given back ({@link refund}). */
  private refundable: number | null = null;
  /** The slot before the current one was given back: this one may not be. */
  private refunded = false;

  /** @param intervalMs the KV write slot: Workers KV allows one write per second per key. */
  constructor(private readonly intervalMs: number) {}

  /**
   * How long a trigger at `now` must wait before its read may start (0: at once). `writableAt`
   * is when the writer could next write (+∞ while a write is in flight): a read finished before
   * it would be superseded by the read that write will take, so it waits too, and starts one
   * read-and-compile duration early so that the write finds its map ready.
   */
  waitMs(now: number, writableAt = Number.NEGATIVE_INFINITY): number {
    return Math.max(0, this.lastStart + this.intervalMs - now, writableAt - this.lastMs - now);
  }

  /**
   * Records that a read started at `now`. A throttled read spends the slot; an urgent one (a
   * re-list, the resync, shutdown: rare) does not, so a change right after it is not held back.
   */
  started(now: number, spendsSlot = true): void {
    this.startedAt = now;
    if (!spendsSlot) return;
    this.refundable = this.refunded ? null : this.lastStart;
    this.refunded = false;
    this.lastStart = now;
  }

  /**
   * The read started last changed no routing (no `routes` write is due, a checker's p90 say):
   * its slot goes back, so an operator's change right after it reads at once instead of waiting
   * for the slot's end. Never twice in a row, so a stream of such changes still costs at most
   * two reads a slot.
   */
  refund(): void {
    if (this.refundable === null) return;
    this.lastStart = this.refundable;
    this.refundable = null;
    this.refunded = true;
  }

  /** Records that the read started last finished compiling at `now`. */
  finished(now: number): void {
    this.lastMs = Math.max(0, now - this.startedAt);
  }

  /** A read that failed compiled nothing: its retry waits only for the error backoff. */
  failed(): void {
    this.lastStart = Number.NEGATIVE_INFINITY;
  }
}
