import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { EtcdLeaseInvalidError } from "etcd3";
import { ClusterLease } from "../../adapters/cluster-lease.js";
import type { EtcdMembers } from "../../adapters/etcd-members.js";
import { routingKeys } from "../../core/index.js";

/** `lock/apply`, held: its lease is renewed through any member until `release()`. */
export interface ApplyLock {
  readonly key: string;
  readonly holder: string;
  readonly leaseId: string;
  /** The lock key's create revision: identifies this incarnation of the lock. */
  readonly createRevision: number;
  readonly lease: ClusterLease;
  /** Revokes the lease through any live member (deleting the lock key if it is still ours). */
  release(): Promise<void>;
}

/** Result of trying to take the lock. */
export type LockAttempt =
  | { readonly ok: true; readonly lock: ApplyLock }
  | { readonly ok: false; readonly heldBy: string }
  /** The lease ran out before the lock was confirmed (the process was paused past its TTL). */
  | { readonly ok: false; readonly lapsed: true };

/** A holder id that names the machine and process, unique per attempt. */
export function newHolderId(): string {
  return `${hostname()}:${process.pid}:${randomUUID()}`;
}

/**
 * Takes `lock/apply` with a create-only transaction (create revision == 0) on a fresh lease of
 * `ttlSeconds`. The transaction reads the lock when it fails, so it may be sent again to another
 * member: a lock already holding this attempt's unique holder id was taken by an earlier send.
 * When another holder has it, the lease is revoked and the holder is returned; when the lease
 * ran out first (a send re-tried after a pause longer than the TTL, whether it then finds the
 * lease unknown or the lock taken by the next holder), `lapsed`. When no member
 * answers, the lease is revoked (taking the lock with it, should it have been written) and
 * `EtcdUnavailableError` is thrown.
 */
export async function acquireApplyLock(
  members: EtcdMembers,
  prefix: string,
  ttlSeconds: number,
  holder: string = newHolderId(),
): Promise<LockAttempt> {
  const key = routingKeys(prefix).lock;
  const lease = await ClusterLease.grant(members, ttlSeconds);
  try {
    const res = await members.any("take lock/apply", (c, call) =>
      c
        .if(key, "Create", "==", 0)
        .then(c.put(key).value(holder).lease(lease.id))
        .else(c.get(key))
        .options(call)
        .commit(),
    );
    let createRevision = Number(res.header.revision);
    if (!res.succeeded) {
      const kv = res.responses[0]?.response_range?.kvs[0];
      const held = kv?.value.toString("utf8");
      if (kv === undefined || held !== holder) {
        // While this lease lives, a lock taken by an earlier send would still be ours. Gone this
        // soon, it outlived a pause: an earlier send may have taken the lock, which then lapsed
        // and went to the holder seen now.
        const lapsed = !(await lease.alive());
        await lease.revoke().catch(() => undefined);
        return lapsed ? { ok: false, lapsed: true } : { ok: false, heldBy: held ?? "(unknown)" };
      }
      createRevision = Number(kv.create_revision);
    }
    lease.keepAlive();
    const lock: ApplyLock = {
      key,
      holder,
      leaseId: lease.id,
      createRevision,
      lease,
      release: () => lease.revoke(),
    };
    return { ok: true, lock };
  } catch (e) {
    await lease.revoke().catch(() => undefined);
    if (e instanceof EtcdLeaseInvalidError) return { ok: false, lapsed: true };
    throw e;
  }
}
