import type { Clock } from "./clock.js";

/** Longest single timeout Node accepts; a later expiry re-arms when this one fires. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;
/** Fires a little after the instant, so the compile's clock reads it as passed. */
const AFTER_MS = 5;

/**
 * One timer at the earliest override expiry: when it fires the pusher compiles again, and that
 * compile leaves the expired override out, so a boost ends on time even while etcd keeps its
 * lease alive. Re-armed after every compile with that compile's earliest future expiry.
 */
export class ExpiryTimer {
  private timer: NodeJS.Timeout | null = null;
  private at: number | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly onDue: () => void,
  ) {}

  /** Arms the timer for `at` (clock ms), or clears it for `null`. */
  arm(at: number | null): void {
    if (at === this.at && this.timer) return;
    this.clear();
    if (at === null) return;
    this.at = at;
    const delay = Math.min(MAX_TIMEOUT_MS, Math.max(0, at - this.clock.now()) + AFTER_MS);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.at = null;
      this.onDue();
    }, delay);
    this.timer.unref();
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.at = null;
  }
}
