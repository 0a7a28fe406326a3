/**
 * Cloudflare's API limit: 1,200 requests per 5 minutes per user, counted across the dashboard,
 * every API token and every tool; once it is exceeded every call is blocked for the rest of the
 * window (429 `971` with `Retry-After`). One instance counts one user.
 */
export class AccountBudget {
  private readonly stamps: number[] = [];
  private blockedUntil = 0;
  /** Requests counted, by token (tests check that every client's share lands here). */
  readonly byToken = new Map<string, number>();

  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  /** Counts one request at `t`; returns 0 when allowed, else the seconds until the block ends. */
  take(t: number, token: string): number {
    while (this.stamps.length > 0 && (this.stamps[0] ?? 0) <= t - this.windowMs)
      this.stamps.shift();
    if (t < this.blockedUntil || this.stamps.length >= this.limit) {
      if (t >= this.blockedUntil) this.blockedUntil = t + this.windowMs;
      return Math.max(1, Math.ceil((this.blockedUntil - t) / 1000));
    }
    this.stamps.push(t);
    this.byToken.set(token, (this.byToken.get(token) ?? 0) + 1);
    return 0;
  }

  /** Requests inside the window ending at `t`. */
  used(t: number): number {
    return this.stamps.filter((s) => s > t - this.windowMs).length;
  }
}
