/** How long a key whose answer could not be kept skips the cache, in ms. */
export const HIT_FOR_PASS_MS = 30_000;

/** The most keys remembered per isolate; past it the oldest is forgotten. */
export const HIT_FOR_PASS_MAX = 10_000;

/**
 * Keys whose last origin answer could not be kept (no lifetime, `private`, `Set-Cookie`…),
 * remembered per isolate for {@link HIT_FOR_PASS_MS} ("hit-for-pass", as Varnish and Fastly
 * call it): their requests go straight to the origins, with no lookup and no collapsing, so
 * traffic the cache cannot serve pays nothing for it and is never queued behind another viewer.
 */
export class HitForPass {
  readonly #until = new Map<string, number>();
  readonly #clock: () => number;

  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  /** True while `key` is remembered as not cacheable. */
  has(key: string): boolean {
    const until = this.#until.get(key);
    if (until === undefined) return false;
    if (until > this.#clock()) return true;
    this.#until.delete(key);
    return false;
  }

  /** Remembers `key` as not cacheable for {@link HIT_FOR_PASS_MS}. */
  mark(key: string): void {
    this.#until.delete(key);
    if (this.#until.size >= HIT_FOR_PASS_MAX) {
      const oldest = this.#until.keys().next();
      if (!oldest.done) this.#until.delete(oldest.value);
    }
    this.#until.set(key, this.#clock() + HIT_FOR_PASS_MS);
  }

  /** Forgets `key` (its answer was kept). */
  forget(key: string): void {
    this.#until.delete(key);
  }

  /** Keys remembered (expired ones not yet dropped included). */
  get size(): number {
    return this.#until.size;
  }
}
