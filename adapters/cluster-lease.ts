import {
  castGrpcError,
  type Etcd3,
  EtcdLeaseInvalidError,
  GRPCCancelledError,
  type ILeaseKeepAliveResponse,
} from "etcd3";
import type { EtcdMembers, MemberCallOptions } from "./etcd-members.js";

/** One keepalive on one member's stream; resolves with etcd's answer. */
async function keepaliveOn(
  client: Etcd3,
  id: string,
  timeoutMs: number,
): Promise<ILeaseKeepAliveResponse> {
  const stream = await client.leaseClient.leaseKeepAlive({ deadline: Date.now() + timeoutMs });
  return new Promise((resolve, reject) => {
    stream.on("data", (res) => {
      // ending first keeps etcd3 from treating the stream's close as a failed member
      stream.end();
      resolve(res);
    });
    stream.on("error", (e) => reject(castGrpcError(e)));
    stream.on("end", () => reject(new GRPCCancelledError("keepalive stream ended unanswered")));
    stream.write({ ID: id });
  });
}

/**
 * An etcd lease that lives in the cluster, not on one member: it is granted, renewed and revoked
 * through whichever member answers (etcd3's `Lease` keeps its keepalive stream on the one member
 * it picked, and only reports `lost` after 2×TTL).
 */
export class ClusterLease {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;

  private constructor(
    private readonly members: EtcdMembers,
    /** The lease id (decimal string). */
    readonly id: string,
    /** The TTL etcd granted, in seconds. */
    readonly ttlSeconds: number,
    /** When the grant was answered (ms since the epoch): the lease ends TTL after about then. */
    readonly grantedAt: number,
  ) {}

  /** Grants a lease of `ttlSeconds` through any member (a re-sent grant only leaves an unused lease). */
  static async grant(
    members: EtcdMembers,
    ttlSeconds: number,
    opts: MemberCallOptions = {},
  ): Promise<ClusterLease> {
    const res = await members.any(
      `grant a ${ttlSeconds}s lease`,
      (c, call) => c.leaseClient.leaseGrant({ TTL: ttlSeconds }, call),
      opts,
    );
    return new ClusterLease(members, res.ID, Number(res.TTL) || ttlSeconds, Date.now());
  }

  /**
   * Renews the lease once through any member (each try waits at most `timeoutMs`) and returns
   * the TTL etcd restarted. Throws `EtcdLeaseInvalidError` when etcd no longer has the lease.
   */
  async keepaliveOnce(timeoutMs: number, opts: MemberCallOptions = {}): Promise<number> {
    const res = await this.members.any(
      `renew lease ${this.hex}`,
      (c) => keepaliveOn(c, this.id, timeoutMs),
      opts,
    );
    const ttl = Number(res.TTL);
    if (!(ttl > 0)) throw new EtcdLeaseInvalidError(this.id);
    return ttl;
  }

  /**
   * Whether etcd still has the lease, asked through any member: etcd answers TTL -1 for a lease
   * it no longer has, and the whole seconds left (0 in the last one) for one it has.
   */
  async alive(opts: MemberCallOptions = {}): Promise<boolean> {
    const res = await this.members.any(
      `look up lease ${this.hex}`,
      (c, call) => c.leaseClient.leaseTimeToLive({ ID: this.id }, call),
      opts,
    );
    return Number(res.TTL) >= 0;
  }

  /**
   * Renews every TTL/3 in the background until {@link stop} or {@link revoke}; a failed round is
   * simply tried again at the next (whoever relies on the lease checks it by other means).
   */
  keepAlive(): void {
    const everyMs = (this.ttlSeconds * 1000) / 3;
    const round = () => {
      this.timer = setTimeout(() => {
        this.keepaliveOnce(Math.max(500, everyMs), { budgetMs: everyMs }).then(
          () => !this.stopped && round(),
          (e) => !this.stopped && !(e instanceof EtcdLeaseInvalidError) && round(),
        );
      }, everyMs);
      this.timer.unref?.();
    };
    if (!this.stopped && this.timer === null) round();
  }

  /** Stops background renewals; the lease then ends TTL after its last renewal. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /**
   * Revokes the lease through any member, deleting every key attached to it. A lease etcd no
   * longer has (expired, or a re-sent revoke) counts as revoked.
   */
  async revoke(opts: MemberCallOptions = {}): Promise<void> {
    this.stop();
    await this.members.any(
      `revoke lease ${this.hex}`,
      async (c, call) => {
        try {
          await c.leaseClient.leaseRevoke({ ID: this.id }, call);
        } catch (e) {
          if (!(e instanceof EtcdLeaseInvalidError)) throw e;
        }
      },
      opts,
    );
  }

  /** The id as etcdctl prints it. */
  get hex(): string {
    return leaseHex(this.id);
  }
}

/** Renders an etcd lease id (decimal string) the way etcdctl shows it. */
export function leaseHex(id: string): string {
  return BigInt(id).toString(16);
}
