/**
 * The compile economy (SPEC §5.9): at most one range read and compile per KV write slot. A
 * trigger after a quiet interval may start a read at once (no added latency for a lone change);
 * triggers inside the interval wait for its end and are served by one read there, which sees
 * every change before it (the read is the data, the trigger only says "something moved").
 * Pure bookkeeping on clock times, so its rules are tested without timers.
 */
export class CompileGate {
  private lastStart = Number.NEGATIVE_INFINITY;

  /** @param intervalMs the KV write slot: Workers KV allows one write per second per key. */
  constructor(private readonly intervalMs: number) {}

  /** How long a trigger at `now` must wait before its read may start (0: at once). */
  waitMs(now: number): number {
    return Math.max(0, this.lastStart + this.intervalMs - now);
  }

  /** Records that a read started at `now` (throttled or not: every read spends the slot). */
  started(now: number): void {
    this.lastStart = now;
  }

  /** A read that failed compiled nothing: its retry waits only for the error backoff. */
  failed(): void {
    this.lastStart = Number.NEGATIVE_INFINITY;
  }
}
