/**
 * The isolate's budget of steering requests (docs/reference.md §15): a token bucket that holds
 * one second of `STEER_RATE` and refills continuously. A storm of steering requests is refused
 * (429) past it, so it never takes the isolate's CPU from viewers' segment requests.
 */
export class SteerLimiter {
  #tokens = -1;
  #at = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Takes one token; `false` when the bucket is empty. `ratePerS` 0 always admits. */
  admit(ratePerS: number): boolean {
    if (ratePerS === 0) return true;
    const t = this.now();
    if (this.#tokens < 0) this.#tokens = ratePerS;
    else this.#tokens = Math.min(ratePerS, this.#tokens + ((t - this.#at) / 1000) * ratePerS);
    this.#at = t;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
