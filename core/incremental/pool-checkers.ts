import { judgePool, PLAIN_CHECKER, type PoolHealth } from "../intent/pool-health.js";
import type { Health } from "../intent/schema.js";
import { CopyOnWrite } from "./copy-on-write.js";

/**
 * Live checkers' reports by pool (docs/reference.md §9), kept from one compile to the next. A pool
 * with the plain `health/{pool}` alone (the common case, one per pool) holds its report without
 * a map of its own. {@link judge} hands out a view that judges a pool when asked, not every pool
 * at once: at 50,000 pools a judgement per pool, kept, is ~18 MiB of the pusher's heap.
 */
export class PoolCheckers {
  /** The plain `health/{pool}` report by pool. */
  private readonly plain = new CopyOnWrite<string, Health>();
  /** Named checkers' reports (`health/{pool}/{checker}`) by pool, then by checker; never empty. */
  private readonly named = new CopyOnWrite<string, ReadonlyMap<string, Health>>();

  /** Records `checker`'s report for `pool` (`undefined` or {@link PLAIN_CHECKER}: the plain key). */
  set(pool: string, checker: string | undefined, health: Health): void {
    if (checker === undefined || checker === PLAIN_CHECKER) {
      this.plain.write.set(pool, health);
      return;
    }
    // A fresh map: views handed out keep the one they saw.
    const byName = new Map(this.named.read.get(pool));
    byName.set(checker, health);
    this.named.write.set(pool, byName);
  }

  /** Forgets `checker`'s report for `pool`. */
  delete(pool: string, checker: string | undefined): void {
    if (checker === undefined || checker === PLAIN_CHECKER) {
      if (this.plain.read.has(pool)) this.plain.write.delete(pool);
      return;
    }
    const old = this.named.read.get(pool);
    if (!old?.has(checker)) return;
    const byName = new Map(old);
    byName.delete(checker);
    if (byName.size === 0) this.named.write.delete(pool);
    else this.named.write.set(pool, byName);
  }

  clear(): void {
    this.plain.clear();
    this.named.clear();
  }

  /**
   * Each pool with a live checker, judged against its quorum, in pool order: a read-only view of
   * the reports as they are now, which later changes leave alone. `quorumOf` must answer as
   * steadily (a snapshot of the pools).
   */
  judge(quorumOf: (pool: string) => number | undefined): ReadonlyMap<string, PoolHealth> {
    return new JudgedPools(this.plain.share(), this.named.share(), quorumOf);
  }
}

/**
 * True when `a` and `b` are views {@link PoolCheckers.judge} handed out over the same reports:
 * with the same pools (and so quorums), they judge every pool alike. False whenever unsure.
 */
export function sameReports(
  a: ReadonlyMap<string, PoolHealth>,
  b: ReadonlyMap<string, PoolHealth>,
): boolean {
  return (
    a instanceof JudgedPools &&
    b instanceof JudgedPools &&
    a.plain === b.plain &&
    a.named === b.named
  );
}

/** Pools judged when first asked, once each (a compile asks per route); iteration is in pool order. */
class JudgedPools implements ReadonlyMap<string, PoolHealth> {
  private sortedPools: string[] | null = null;
  private readonly judged = new Map<string, PoolHealth | undefined>();

  constructor(
    readonly plain: ReadonlyMap<string, Health>,
    readonly named: ReadonlyMap<string, ReadonlyMap<string, Health>>,
    private readonly quorumOf: (pool: string) => number | undefined,
  ) {}

  get(pool: string): PoolHealth | undefined {
    if (this.judged.has(pool)) return this.judged.get(pool);
    const plain = this.plain.get(pool);
    const named = this.named.get(pool);
    let health: PoolHealth | undefined;
    if (plain || named) {
      const reports = new Map(named);
      if (plain) reports.set(PLAIN_CHECKER, plain);
      health = judgePool(reports, this.quorumOf(pool));
    }
    this.judged.set(pool, health);
    return health;
  }

  has(pool: string): boolean {
    return this.plain.has(pool) || this.named.has(pool);
  }

  get size(): number {
    return this.pools().length;
  }

  private pools(): string[] {
    if (!this.sortedPools) {
      const all = [...this.plain.keys()];
      for (const pool of this.named.keys()) if (!this.plain.has(pool)) all.push(pool);
      this.sortedPools = all.sort();
    }
    return this.sortedPools;
  }

  *entries(): MapIterator<[string, PoolHealth]> {
    for (const pool of this.pools()) {
      const health = this.get(pool);
      if (health) yield [pool, health];
    }
  }

  keys(): MapIterator<string> {
    return this.pools().values();
  }

  *values(): MapIterator<PoolHealth> {
    for (const [, health] of this.entries()) yield health;
  }

  [Symbol.iterator](): MapIterator<[string, PoolHealth]> {
    return this.entries();
  }

  forEach(
    fn: (value: PoolHealth, key: string, map: ReadonlyMap<string, PoolHealth>) => void,
    thisArg?: unknown,
  ): void {
    for (const [pool, health] of this.entries()) fn.call(thisArg, health, pool, this);
  }
}
