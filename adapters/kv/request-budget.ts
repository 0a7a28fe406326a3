import { setTimeout as delay } from "node:timers/promises";
import { KvError } from "./kv-sink.js";

/** Time source for the budget; tests inject a fake one. */
export interface BudgetClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** Sliding-window settings: at most `limit` requests in any `windowMs`. */
export interface RequestBudgetOptions {
  readonly limit: number;
  readonly windowMs: number;
  /** Longest `acquire()` waits for a slot before throwing `rate-limited` (default 2 s). */
  readonly maxWaitMs?: number;
  readonly clock?: BudgetClock;
}

/**
 * Cloudflare's API allows 1,200 requests per 5 minutes per user, counted across the dashboard,
 * every token and every tool, and blocks all calls for 5 minutes once exceeded.
 */
export const CLOUDFLARE_ACCOUNT_LIMIT = { limit: 1_200, windowMs: 5 * 60_000 } as const;

/**
 * One process's default share of that (`CF_API_BUDGET`): 900, leaving 300 for edgectl, wrangler
 * and the dashboard. The pusher needs about 310 at most (one write per second, its reads).
 */
export const DEFAULT_API_BUDGET = 900;

/** The default budget of one process: {@link DEFAULT_API_BUDGET} per 5 minutes. */
export const CLOUDFLARE_BUDGET: RequestBudgetOptions = {
  limit: DEFAULT_API_BUDGET,
  windowMs: CLOUDFLARE_ACCOUNT_LIMIT.windowMs,
};

const systemClock: BudgetClock = { now: () => Date.now(), sleep: (ms) => delay(ms) };

/** A sliding-window request limiter consulted before every API call. */
export class RequestBudget {
  readonly limit: number;
  readonly windowMs: number;
  readonly #maxWaitMs: number;
  readonly #clock: BudgetClock;
  /** Start times of requests still inside the window, oldest first. */
  readonly #stamps: number[] = [];

  constructor(opts: RequestBudgetOptions) {
    if (!(opts.limit >= 1) || !(opts.windowMs > 0)) throw new RangeError("invalid request budget");
    this.limit = opts.limit;
    this.windowMs = opts.windowMs;
    this.#maxWaitMs = opts.maxWaitMs ?? 2_000;
    this.#clock = opts.clock ?? systemClock;
  }

  #prune(now: number): void {
    while (this.#stamps.length > 0 && (this.#stamps[0] ?? 0) <= now - this.windowMs) {
      this.#stamps.shift();
    }
  }

  /** Requests counted in the current window. */
  used(): number {
    this.#prune(this.#clock.now());
    return this.#stamps.length;
  }

  /** Takes a slot now and returns 0, or returns the ms until one frees (taking nothing). */
  tryAcquire(): number {
    const now = this.#clock.now();
    this.#prune(now);
    if (this.#stamps.length < this.limit) {
      this.#stamps.push(now);
      return 0;
    }
    return Math.max(1, (this.#stamps[0] ?? now) + this.windowMs - now);
  }

  /**
   * Waits for a slot (at most `maxWaitMs`); beyond that throws `KvError("rate-limited")` with
   * `retryAfterMs`, so the caller's backoff takes over instead of blocking a push indefinitely.
   */
  async acquire(): Promise<void> {
    let waited = 0;
    for (;;) {
      const wait = this.tryAcquire();
      if (wait === 0) return;
      if (waited + wait > this.#maxWaitMs) {
        throw new KvError(
          "rate-limited",
          `local request budget of ${this.limit} per ${this.windowMs / 1000}s is spent`,
          wait,
        );
      }
      await this.#clock.sleep(wait);
      waited += wait;
    }
  }
}
