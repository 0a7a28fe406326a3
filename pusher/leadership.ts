import { EventEmitter } from "node:events";
import { type Etcd3, EtcdLeaseInvalidError, type Lease } from "etcd3";
import type { Logger } from "pino";
import { type Clock, sleep } from "./clock.js";

/** Settings of the election. */
export interface LeadershipOptions {
  readonly client: Etcd3;
  /** Election key; candidates live under `${key}/<lease id in hex>` like etcd's Go client. */
  readonly key: string;
  readonly ttlSeconds: number;
  /** The value campaigned with (the pusher id). */
  readonly id: string;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * Events: `elected`; `waiting` (a campaign found an earlier candidate leading, once per
 * campaign); `demoted` (lease lost or resigned).
 */
export interface LeadershipEvents {
  elected: [];
  waiting: [];
  demoted: [reason: string];
}

/**
 * Leader election on an etcd lease, with the same key layout and ordering as etcd's Go
 * `concurrency.Election` (lowest create revision under the key wins). It does not use etcd3's
 * `Election` because that hides its lease: the leader must know when its last keepalive
 * succeeded, and etcd3 only reports `lost` after 2×TTL, long after a standby could take over.
 *
 * `canWrite()` is true only while this candidate is the leader and its lease was renewed within
 * two thirds of the TTL; a standby can be elected only after a full TTL without renewal, so the
 * old leader stops writing at least TTL/3 before a new one can start.
 */
export class Leadership extends EventEmitter<LeadershipEvents> {
  private leader = false;
  private stopped = false;
  private lease: Lease | null = null;
  private leaseId: string | null = null;
  /**
   * Leases of earlier campaigns that etcd3 gave up on (no renewal for 2×TTL, e.g. while etcd had
   * no quorum). etcd does not expire a lease without a leader and extends every lease when a new
   * leader takes over, so such a lease, and the candidate key on it, may outlive the outage by a
   * whole TTL and hold this pusher's next campaign behind its own old key. Revoked first.
   */
  private stale: string[] = [];
  private lastKeepalive = Number.NEGATIVE_INFINITY;
  private fired: number[] = [];
  private campaignAbort = new AbortController();
  private loop: Promise<void> | null = null;

  constructor(private readonly o: LeadershipOptions) {
    super();
  }

  get isLeader(): boolean {
    return this.leader;
  }

  /** Leader with a lease renewed recently enough to be sure nobody else can be leader. */
  canWrite(): boolean {
    return this.leader && this.leaseFresh();
  }

  /**
   * Until when (clock ms) a write may still be in flight: the end of the write window. A standby
   * can only win a whole TTL after the last renewal, so writes aborted by then cannot overlap it.
   */
  writeDeadline(): number {
    return this.leader ? this.lastKeepalive + (this.o.ttlSeconds * 1000 * 2) / 3 : 0;
  }

  /** Whether the lease was renewed within the write window (2/3 of the TTL). */
  leaseFresh(): boolean {
    return this.o.clock.now() - this.lastKeepalive < (this.o.ttlSeconds * 1000 * 2) / 3;
  }

  /** Campaigns until stopped; re-campaigns after a lost lease. */
  start(): void {
    this.loop ??= this.run();
  }

  /** Gives up leadership (revokes the lease, so a standby takes over at once) and stops. */
  async resign(): Promise<void> {
    this.stopped = true;
    this.campaignAbort.abort();
    const lease = this.lease;
    this.lease = null;
    this.demote("resigned");
    if (lease) await lease.revoke().catch(() => {});
    await this.loop;
  }

  /** Stops without revoking: the lease lapses by itself (used to simulate a crash). */
  async abandon(): Promise<void> {
    this.stopped = true;
    this.campaignAbort.abort();
    this.lease?.release();
    this.lease = null;
    this.demote("abandoned");
    await this.loop;
  }

  private demote(reason: string): void {
    if (!this.leader) return;
    this.leader = false;
    this.emit("demoted", reason);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.campaignAbort = new AbortController();
      try {
        await this.campaign(this.campaignAbort.signal);
      } catch (e) {
        if (!this.stopped) this.o.logger.warn({ err: e }, "election campaign failed; retrying");
      }
      if (this.stopped) break;
      this.demote("lease lost");
      const lease = this.lease;
      this.lease = null;
      lease?.release();
      if (this.leaseId) this.stale.push(this.leaseId);
      this.leaseId = null;
      await sleep(500);
    }
  }

  /** Revokes the leases of earlier campaigns; throws (to retry) while etcd cannot answer. */
  private async revokeStale(): Promise<void> {
    while (this.stale.length > 0) {
      const id = this.stale[0] as string;
      try {
        await this.o.client.leaseClient.leaseRevoke({ ID: id });
      } catch (e) {
        if (!(e instanceof EtcdLeaseInvalidError)) throw e;
      }
      this.stale.shift();
    }
  }

  /** One campaign on a fresh lease; returns when the lease is lost or the pusher stops. */
  private async campaign(signal: AbortSignal): Promise<void> {
    const { client, ttlSeconds, clock } = this.o;
    await this.revokeStale();
    if (signal.aborted) return;
    const grantStartedAt = clock.now();
    const lease = client.lease(ttlSeconds);
    this.lease = lease;
    this.fired = [];
    const lost = new Promise<void>((resolve) => {
      lease.on("lost", (err) => {
        this.o.logger.warn({ err }, "election lease lost");
        resolve();
      });
    });
    lease.on("keepaliveEstablished", () => {
      this.fired = [];
    });
    lease.on("keepaliveFired", () => {
      this.fired.push(clock.now());
    });
    // Conservative: a renewal counts from when it was sent, not when its answer arrived.
    lease.on("keepaliveSucceeded", () => {
      this.lastKeepalive = this.fired.shift() ?? clock.now();
      if (this.fired.length > 8) this.fired = [];
    });
    const leaseId = await Promise.race([lease.grant(), lost.then(() => null)]);
    if (leaseId === null || signal.aborted) return;
    this.leaseId = leaseId;
    this.lastKeepalive = grantStartedAt;
    const key = `${this.o.key}/${BigInt(leaseId).toString(16)}`;
    const txn = await client
      .if(key, "Create", "==", 0)
      .then(client.put(key).value(this.o.id).lease(leaseId))
      .else(client.get(key))
      .commit();
    const myRevision = txn.succeeded
      ? Number(txn.header.revision)
      : Number(txn.responses[0]?.response_range?.kvs[0]?.create_revision ?? txn.header.revision);

    const stop = new AbortController();
    const stopOn = () => stop.abort();
    signal.addEventListener("abort", stopOn, { once: true });
    // A stop during the grant or the create transaction fired before the listener existed.
    if (signal.aborted) stopOn();
    void lost.then(stopOn);
    try {
      if (!(await this.waitForTurn(myRevision, stop.signal))) return;
      this.leader = true;
      this.o.logger.info({ key, pusher: this.o.id }, "elected leader");
      this.emit("elected");
      await new Promise<void>((resolve) => {
        if (stop.signal.aborted) resolve();
        else stop.signal.addEventListener("abort", () => resolve(), { once: true });
      });
    } finally {
      signal.removeEventListener("abort", stopOn);
    }
  }

  /** Waits until no candidate created before `myRevision` is left; false when aborted. */
  private async waitForTurn(myRevision: number, signal: AbortSignal): Promise<boolean> {
    const { client } = this.o;
    let told = false;
    while (!signal.aborted) {
      let older: { key: string; revision: number } | null = null;
      try {
        const res = await client
          .getAll()
          .prefix(`${this.o.key}/`)
          .maxCreateRevision(String(myRevision - 1))
          .sort("Create", "Descend")
          .limit(1)
          .exec();
        const kv = res.kvs[0];
        if (!kv) return true;
        older = { key: kv.key.toString("utf8"), revision: Number(res.header.revision) };
        if (!told) {
          told = true;
          this.o.logger.info({ leader_key: older.key, pusher: this.o.id }, "standing by");
          this.emit("waiting");
        }
      } catch (e) {
        this.o.logger.debug({ err: e }, "election read failed; retrying");
        await sleep(500, signal);
        continue;
      }
      await this.waitForDelete(older.key, older.revision, signal);
    }
    return false;
  }

  /** Resolves when `key` is deleted, on any watch trouble, or after a bounded wait (re-check). */
  private async waitForDelete(key: string, revision: number, signal: AbortSignal): Promise<void> {
    const watcher = this.o.client
      .watch()
      .key(key)
      .startRevision(String(revision + 1))
      .watcher();
    const done = new AbortController();
    const finish = () => done.abort();
    watcher.on("delete", finish);
    watcher.on("error", finish);
    watcher.on("disconnected", finish);
    signal.addEventListener("abort", finish, { once: true });
    await sleep(Math.max(1_000, this.o.ttlSeconds * 500), done.signal);
    signal.removeEventListener("abort", finish);
    watcher.removeAllListeners();
    watcher.on("error", () => {});
    void watcher.cancel().catch(() => {});
  }
}
