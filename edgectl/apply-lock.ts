import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Etcd3, Lease } from "etcd3";
import { routingKeys } from "../core/index.js";
import { isUncertainOutcome } from "./etcd-client.js";

/** `lock/apply`, held: the lease keeps it alive (etcd3 keepalive) until `release()`. */
export interface ApplyLock {
  readonly key: string;
  readonly holder: string;
  readonly leaseId: string;
  /** The lock key's create revision: identifies this incarnation of the lock. */
  readonly createRevision: number;
  readonly lease: Lease;
  /** Revokes the lease (deleting the lock key if it is still ours). */
  release(): Promise<void>;
}

/** Result of trying to take the lock. */
export type LockAttempt =
  | { readonly ok: true; readonly lock: ApplyLock }
  | { readonly ok: false; readonly heldBy: string }
  /** The lock could not be confirmed (timed out, or its lease expired while paused). */
  | { readonly ok: false; readonly unconfirmed: true };

/** A holder id that names the machine and process, unique per attempt. */
export function newHolderId(): string {
  return `${hostname()}:${process.pid}:${randomUUID()}`;
}

/**
 * Takes `lock/apply` with a create-only transaction (create revision == 0) on a fresh lease of
 * `ttlSeconds`. When another holder has it, the lease is revoked and the holder is returned.
 */
export async function acquireApplyLock(
  client: Etcd3,
  prefix: string,
  ttlSeconds: number,
  holder: string = newHolderId(),
): Promise<LockAttempt> {
  const key = routingKeys(prefix).lock;
  const lease = client.lease(ttlSeconds);
  lease.on("lost", () => {
    // Losing the lease is caught by the commit's compare on the lock key; nothing to do here.
  });
  let leaseId: string;
  try {
    leaseId = await lease.grant();
  } catch (e) {
    if (isUncertainOutcome(e)) return { ok: false, unconfirmed: true };
    throw e;
  }
  try {
    const res = await client
      .if(key, "Create", "==", 0)
      .then(client.put(key).value(holder).lease(leaseId))
      .else(client.get(key))
      .commit();
    if (!res.succeeded) {
      const held = res.responses[0]?.response_range?.kvs[0]?.value.toString("utf8") ?? "(unknown)";
      await lease.revoke().catch(() => undefined);
      return { ok: false, heldBy: held };
    }
    const lock: ApplyLock = {
      key,
      holder,
      leaseId,
      createRevision: Number(res.header.revision),
      lease,
      release: () => lease.revoke(),
    };
    return { ok: true, lock };
  } catch (e) {
    await lease.revoke().catch(() => undefined);
    if (isUncertainOutcome(e)) return { ok: false, unconfirmed: true };
    throw e;
  }
}
