/**
 * Request collapsing per isolate: while one request fetches a key from the origins and stores
 * it, the others for that key wait for it (`wait`) instead of asking the origins themselves.
 */
export class Collapser {
  readonly #inflight = new Map<string, Promise<void>>();

  /**
   * Claims `key` for the caller; returns `null` when another request already holds it, else the
   * function that releases it (whoever waits then looks in the cache again).
   */
  lead(key: string): (() => void) | null {
    if (this.#inflight.has(key)) return null;
    let release!: () => void;
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.#inflight.set(key, done);
    return () => {
      if (this.#inflight.get(key) === done) this.#inflight.delete(key);
      release();
    };
  }

  /** Waits until the key's leader releases it or `ms` pass, whichever is first; at once when no one leads. */
  async wait(key: string, ms: number): Promise<void> {
    const done = this.#inflight.get(key);
    if (done === undefined) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    });
    await Promise.race([done, timeout]);
    if (timer !== undefined) clearTimeout(timer);
  }

  /** Keys being fetched now. */
  get size(): number {
    return this.#inflight.size;
  }
}
