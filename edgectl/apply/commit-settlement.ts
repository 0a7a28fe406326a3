import { setTimeout as sleep } from "node:timers/promises";
import { routingKeys } from "../../core/index.js";
import type { EtcdMembers } from "../etcd/etcd-members.js";
import { EtcdUnavailableError } from "../etcd/etcd-unavailable-error.js";
import type { ApplyLock } from "./apply-lock.js";
import type { CommitResult, EpochAtRead } from "./apply-transaction.js";
import { commitFromHistory } from "./commit-history.js";
import type { KeyChange } from "./plan-diff.js";

/**
 * Settles a commit whose reply never came (the member died, the deadline passed, the process was
 * paused), through any member that answers, without sending it again:
 *
 * - `epoch` moved past the read: etcd's history says whether the move was this commit
 *   ({@link commitFromHistory}).
 * - `epoch` did not move: the commit may still be on its way through raft. It can only pass its
 *   compare while `lock/apply` is this holder's, so the lock is made to go first (its lease is
 *   revoked, or it already went); an epoch read after that which still shows the read's epoch
 *   proves the commit never landed and never will (`not-landed`, or `lock-lost` when the lock had
 *   already lapsed by itself).
 *
 * Retried until `budgetMs` has passed; `unknown` only when etcd could not tell by then.
 */
export async function settleCommit(
  members: EtcdMembers,
  prefix: string,
  lock: Pick<ApplyLock, "holder" | "createRevision" | "lease">,
  epoch: EpochAtRead,
  changes: readonly KeyChange[],
  budgetMs: number,
): Promise<CommitResult> {
  const keys = routingKeys(prefix);
  const deadline = Date.now() + budgetMs;
  const left = () => ({ budgetMs: Math.max(0, deadline - Date.now()) });
  /** Whether the lock was still this holder's when settlement began (null: not read yet). */
  let held: boolean | null = null;
  let fenced = false;
  let epochNow: string | null = null;
  for (;;) {
    try {
      if (held === null) {
        const res = await members.any(
          "read lock/apply",
          (c, call) => c.get(keys.lock).options(call).exec(),
          left(),
        );
        const kv = res.kvs[0];
        held =
          kv !== undefined &&
          kv.value.toString("utf8") === lock.holder &&
          Number(kv.create_revision) === lock.createRevision;
        // no longer ours: from here on the commit's compare on the lock cannot pass
        if (!held) fenced = true;
      }
      if (!fenced) {
        await lock.lease.revoke(left());
        fenced = true;
      }
      const res = await members.any(
        "read epoch",
        (c, call) => c.get(keys.epoch).options(call).exec(),
        left(),
      );
      const epochKv = res.kvs[0];
      epochNow = epochKv ? epochKv.value.toString("utf8") : null;
      const unchanged =
        epoch.modRevision === null ? !epochKv : Number(epochKv?.mod_revision) === epoch.modRevision;
      if (!unchanged)
        return await commitFromHistory(members, prefix, lock, epoch, changes, epochKv);
      return { ok: false, reason: held ? "not-landed" : "lock-lost", epochNow };
    } catch (e) {
      if (!(e instanceof EtcdUnavailableError)) throw e;
    }
    if (Date.now() >= deadline) return { ok: false, reason: "unknown", epochNow };
    await sleep(Math.min(250, Math.max(0, deadline - Date.now())));
  }
}
