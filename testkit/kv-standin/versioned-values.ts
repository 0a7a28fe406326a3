/** Eventual consistency: how stale a read may be. */
export interface StaleReadOptions {
  /** A read may return any value the key held in the last `windowMs` (real KV: about 60 s). */
  readonly windowMs: number;
  /** Share of reads that return an older value when one exists (default 0.5). */
  readonly ratio?: number;
  /**
   * Which older value a stale read returns: any of them at random (default), or always the
   * oldest, as the location furthest behind would (for deterministic tests).
   */
  readonly pick?: "random" | "oldest";
}

interface Version {
  readonly at: number;
  /** `undefined`: the key was absent (deleted, or not yet written). */
  readonly value: string | undefined;
}

/**
 * The namespace's values (a Map, so tests read and write the truth directly) with the history
 * of every key over the staleness window, so that a read can be served as a KV location that
 * has not caught up yet would serve it.
 */
export class VersionedValues extends Map<string, string> {
  private readonly history = new Map<string, Version[]>();
  private clock: () => number = Date.now;
  private windowMs = 0;

  /** Sets the clock and the window the history must cover (0: keep none). */
  configure(clock: () => number, windowMs: number): void {
    this.clock = clock;
    this.windowMs = windowMs;
  }

  override set(key: string, value: string): this {
    this.record(key, value);
    return super.set(key, value);
  }

  override delete(key: string): boolean {
    this.record(key, undefined);
    return super.delete(key);
  }

  override clear(): void {
    for (const key of [...this.keys()]) this.delete(key);
  }

  /**
   * Every value a read at `t` may return, oldest first, the current one last: the value the key
   * held at `t - windowMs` (`undefined` if it was absent) and every value written since.
   */
  candidates(key: string, t: number): (string | undefined)[] {
    const current = super.get(key);
    const versions = this.history.get(key);
    if (!versions || this.windowMs <= 0) return [current];
    const since = t - this.windowMs;
    let before: string | undefined;
    const recent: (string | undefined)[] = [];
    for (const v of versions) {
      if (v.at <= since) before = v.value;
      else recent.push(v.value);
    }
    if (recent.length === 0) return [current];
    return [before, ...recent];
  }

  private record(key: string, value: string | undefined): void {
    if (this.windowMs <= 0) return;
    if (value === undefined && !super.has(key) && !this.history.has(key)) return;
    const t = this.clock();
    const versions = this.history.get(key) ?? [];
    if (versions.length === 0 && super.has(key)) {
      // Written before the window was configured: that value was current "forever".
      versions.push({ at: Number.NEGATIVE_INFINITY, value: super.get(key) });
    }
    versions.push({ at: t, value });
    // Keep one version at or before the window's start (what a lagging read falls back to).
    const since = t - this.windowMs;
    let drop = 0;
    while (drop + 1 < versions.length && (versions[drop + 1]?.at ?? 0) <= since) drop += 1;
    if (drop > 0) versions.splice(0, drop);
    this.history.set(key, versions);
  }
}

/** Picks what one read returns: the current value, or with probability `ratio` an older one. */
export function staleRead(
  candidates: readonly (string | undefined)[],
  rand: () => number,
  opts: StaleReadOptions,
): string | undefined {
  const current = candidates[candidates.length - 1];
  if (candidates.length < 2 || rand() >= (opts.ratio ?? 0.5)) return current;
  if (opts.pick === "oldest") return candidates[0];
  return candidates[Math.floor(rand() * (candidates.length - 1))];
}
