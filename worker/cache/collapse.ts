/** One key being fetched: since when, for how long at most, and who waits for it. */
interface Claim {
  readonly until: number;
  readonly waiters: Set<() => void>;
}

/**
 * Request collapsing per isolate: while one request fetches a key from the origins and stores
 * it, the others for that key wait for it (`wait`) instead of asking the origins themselves.
 *
 * Each waiter waits on a promise of its own, which the leader's release resolves: workerd
 * settles a promise only in the request that made it, and a promise of a request that has
 * ended can never settle, so no request ever awaits another's. A claim lapses after its hold
 * time, so a leader that never releases (its store hangs) holds up no one for longer.
 */
export class Collapser {
  readonly #claims = new Map<string, Claim>();
  readonly #clock: () => number;

  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  /**
   * Claims `key` for the caller for at most `holdMs`; returns `null` when another request holds
   * it, else the function that releases it (whoever waits then looks in the cache again).
   */
  lead(key: string, holdMs: number): (() => void) | null {
    const now = this.#clock();
    const held = this.#claims.get(key);
    if (held !== undefined && held.until > now) return null;
    if (held !== undefined) wakeAll(held);
    const claim: Claim = { until: now + holdMs, waiters: new Set() };
    this.#claims.set(key, claim);
    return () => {
      if (this.#claims.get(key) === claim) this.#claims.delete(key);
      wakeAll(claim);
    };
  }

  /** Waits until the key's leader releases it or its claim lapses; at once when no one leads. */
  async wait(key: string): Promise<void> {
    const claim = this.#claims.get(key);
    const left = claim === undefined ? 0 : claim.until - this.#clock();
    if (claim === undefined || left <= 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let wake!: () => void;
    await new Promise<void>((resolve) => {
      wake = resolve;
      claim.waiters.add(wake);
      timer = setTimeout(resolve, left);
    });
    claim.waiters.delete(wake);
    if (timer !== undefined) clearTimeout(timer);
  }

  /** Keys being fetched now (claims not yet released, lapsed ones included). */
  get size(): number {
    return this.#claims.size;
  }
}

function wakeAll(claim: Claim): void {
  for (const wake of claim.waiters) wake();
  claim.waiters.clear();
}
