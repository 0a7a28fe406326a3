import { EtcdLeaseInvalidError } from "etcd3";
import type { Observed } from "../core/index.js";
import { ClusterLease } from "../edgectl/etcd/cluster-lease.js";
import type { EtcdMembers } from "../edgectl/etcd/etcd-members.js";
import { needsObservedRewrite } from "./observed-value.js";

/** One observation of a (country, pool) pair, as it is to be written. */
export interface PairObservation {
  readonly country: string;
  readonly pool: string;
  readonly value: Observed;
}

/** What {@link ObservedKeys} reports as it writes. */
export interface ObservedKeysEvents {
  registered(leaseHex: string): void;
  written(o: PairObservation, isNew: boolean): void;
  removed(country: string, pool: string): void;
  leaseLost(): void;
}

/**
 * The observer's `observed/{CC}/{pool}` keys, all under one lease of its own
 * (docs/reference.md §12). {@link sync} makes etcd hold exactly the given observations, writing
 * a key only when it is new, its p90 moved or its error ratio crossed a watermark, and deleting
 * the keys of pairs that fell below the minimum of samples; a steady edge costs etcd nothing.
 * The lease is renewed in the background and checked on every sync; a lost one is granted again
 * and every key rewritten. {@link release} stops renewing (the keys go when the lease runs out,
 * without a write); {@link revoke} deletes them at once.
 */
export class ObservedKeys {
  private lease: ClusterLease | null = null;
  private readonly written = new Map<string, PairObservation>();

  constructor(
    private readonly members: EtcdMembers,
    private readonly keyOf: (country: string, pool: string) => string,
    private readonly ttlSeconds: number,
    private readonly events: ObservedKeysEvents,
  ) {}

  /** How many keys the observer holds now. */
  get count(): number {
    return this.written.size;
  }

  /** The lease in hex, while one is held. */
  get leaseHex(): string | null {
    return this.lease?.hex ?? null;
  }

  /**
   * Makes etcd's `observed/` keys exactly `wanted` (by `country/pool`). Throws what etcd threw
   * (an unavailable cluster, a denied permission); the next sync goes on from what was written.
   */
  async sync(wanted: ReadonlyMap<string, PairObservation>): Promise<void> {
    if (this.lease) {
      try {
        const budgetMs = Math.max(500, (this.ttlSeconds * 1000) / 2);
        await this.lease.keepaliveOnce(Math.max(300, budgetMs / 2), { budgetMs });
      } catch (e) {
        if (!(e instanceof EtcdLeaseInvalidError)) throw e;
        this.lost();
      }
    }
    for (const [key, o] of this.written) {
      if (wanted.has(key)) continue;
      await this.members.any(`delete ${this.keyOf(o.country, o.pool)}`, (c, call) =>
        c.delete().key(this.keyOf(o.country, o.pool)).options(call).exec(),
      );
      this.written.delete(key);
      this.events.removed(o.country, o.pool);
    }
    for (const [key, o] of wanted) {
      const before = this.written.get(key);
      if (!needsObservedRewrite(before?.value, o.value)) continue;
      const lease = this.lease ?? (await this.register());
      try {
        await this.put(lease, o);
      } catch (e) {
        if (!(e instanceof EtcdLeaseInvalidError)) throw e;
        this.lost();
        return this.sync(wanted);
      }
      this.written.set(key, o);
      this.events.written(o, before === undefined);
    }
  }

  private async register(): Promise<ClusterLease> {
    const lease = await ClusterLease.grant(this.members, this.ttlSeconds);
    lease.keepAlive();
    this.lease = lease;
    this.events.registered(lease.hex);
    return lease;
  }

  private async put(lease: ClusterLease, o: PairObservation): Promise<void> {
    const key = this.keyOf(o.country, o.pool);
    const value = JSON.stringify({
      p90_ms: o.value.p90_ms,
      samples: o.value.samples,
      error_ratio: o.value.error_ratio,
      ...(o.value.hit_ratio === undefined ? {} : { hit_ratio: o.value.hit_ratio }),
    });
    await this.members.any(`write ${key}`, (c, call) =>
      c.put(key).value(value).lease(lease.id).options(call).exec(),
    );
  }

  private lost(): void {
    this.lease?.stop();
    this.lease = null;
    this.written.clear();
    this.events.leaseLost();
  }

  /** Stops renewing: the keys go when the lease runs out, and nothing is written to etcd. */
  release(): void {
    this.lease?.stop();
    this.lease = null;
    this.written.clear();
  }

  /** Revokes the lease: every key goes at once. */
  async revoke(): Promise<void> {
    const lease = this.lease;
    this.lease = null;
    this.written.clear();
    await lease?.revoke({ budgetMs: 3000 });
  }
}
