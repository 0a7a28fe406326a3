import { judgePool, PLAIN_CHECKER, type PoolHealth } from "./pool-health.js";
import type { Health } from "./schema.js";

/**
 * Live checkers' reports by pool, and each pool's judgement (docs/reference.md §9), kept from
 * one compile to the next. A pool with the plain `health/{pool}` alone (the common case, one per
 * pool) holds its report without a map of its own, and a pool is judged again only when one of
 * its reports or its quorum changes: at 50,000 pools a map per pool is ~7 MiB of the pusher's
 * heap, and judging every pool afresh allocates as much again at each compile.
 */
export class PoolCheckers {
  /** The plain `health/{pool}` report by pool. */
  private plain = new Map<string, Health>();
  /** Named checkers' reports (`health/{pool}/{checker}`) by pool, then by checker. */
  private named = new Map<string, Map<string, Health>>();
  /** Each pool's last judgement and the quorum it was made against. */
  private judged = new Map<
    string,
    { readonly quorum: number | undefined; readonly health: PoolHealth }
  >();

  /** Records `checker`'s report for `pool` (`undefined` or {@link PLAIN_CHECKER}: the plain key). */
  set(pool: string, checker: string | undefined, health: Health): void {
    this.judged.delete(pool);
    if (checker === undefined || checker === PLAIN_CHECKER) {
      this.plain.set(pool, health);
      return;
    }
    const byName = this.named.get(pool) ?? new Map<string, Health>();
    byName.set(checker, health);
    this.named.set(pool, byName);
  }

  /** Forgets `checker`'s report for `pool`. */
  delete(pool: string, checker: string | undefined): void {
    this.judged.delete(pool);
    if (checker === undefined || checker === PLAIN_CHECKER) {
      this.plain.delete(pool);
      return;
    }
    const byName = this.named.get(pool);
    byName?.delete(checker);
    if (byName?.size === 0) this.named.delete(pool);
  }

  clear(): void {
    this.plain = new Map();
    this.named = new Map();
    this.judged = new Map();
  }

  /** Each pool with a live checker, judged against its quorum, in pool order. */
  judge(quorumOf: (pool: string) => number | undefined): Map<string, PoolHealth> {
    const pools = new Set([...this.plain.keys(), ...this.named.keys()]);
    const out = new Map<string, PoolHealth>();
    for (const pool of [...pools].sort()) {
      const quorum = quorumOf(pool);
      const last = this.judged.get(pool);
      const health = last && last.quorum === quorum ? last.health : this.judgeAfresh(pool, quorum);
      if (health) out.set(pool, health);
    }
    return out;
  }

  private judgeAfresh(pool: string, quorum: number | undefined): PoolHealth | undefined {
    const reports = new Map(this.named.get(pool));
    const plain = this.plain.get(pool);
    if (plain) reports.set(PLAIN_CHECKER, plain);
    const health = judgePool(reports, quorum);
    if (health) this.judged.set(pool, { quorum, health });
    return health;
  }
}
