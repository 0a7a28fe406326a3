import type { IKeyValue } from "etcd3";
import { routingKeys } from "../../core/index.js";
import type { EtcdMembers } from "../etcd/etcd-members.js";
import { EtcdUnavailableError } from "../etcd/etcd-unavailable-error.js";
import type { ApplyLock } from "./apply-lock.js";
import type { CommitResult, EpochAtRead } from "./apply-transaction.js";
import type { KeyChange } from "./plan-diff.js";

/**
 * The first revision in (`after`, `upTo`] at which `key` was modified after `after`: a binary
 * search over ranges at past revisions (mod revisions only grow while the key exists).
 */
async function firstEpochChange(
  members: EtcdMembers,
  key: string,
  after: number,
  upTo: number,
): Promise<number | null> {
  const changedAt = async (rev: number) => {
    const res = await members.any("read epoch history", (c, call) =>
      c.get(key).revision(rev).options(call).exec(),
    );
    const kv = res.kvs[0];
    return kv !== undefined && Number(kv.mod_revision) > after;
  };
  let lo = after + 1;
  let hi = upTo;
  if (hi < lo || !(await changedAt(hi))) return null;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (await changedAt(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Whose commit moved `epoch` past the read: find the revision where it first moved; the commit
 * there was this apply's if `lock/apply` was this holder's at that revision (only the holder can
 * commit) and every changed key held what this apply wrote. `unknown` when etcd's history no
 * longer reaches back (compacted) or the epoch key is gone. Throws `EtcdUnavailableError` when
 * no member answers (the caller tries again).
 */
export async function commitFromHistory(
  members: EtcdMembers,
  prefix: string,
  lock: Pick<ApplyLock, "holder" | "createRevision">,
  epoch: EpochAtRead,
  changes: readonly KeyChange[],
  epochKv: IKeyValue | undefined,
): Promise<CommitResult> {
  const keys = routingKeys(prefix);
  const epochNow = epochKv ? epochKv.value.toString("utf8") : null;
  if (!epochKv) return { ok: false, reason: "unknown", epochNow };
  const at = (rev: number, key: string) =>
    members
      .any("read history", (c, call) => c.get(key).revision(rev).options(call).exec())
      .then((r) => r.kvs[0]);
  try {
    const rev = await firstEpochChange(
      members,
      keys.epoch,
      epoch.modRevision ?? 0,
      Number(epochKv.mod_revision),
    );
    if (rev === null) return { ok: false, reason: "unknown", epochNow };
    const [bumped, lockKv, ...values] = await Promise.all([
      at(rev, keys.epoch),
      at(rev, keys.lock),
      ...changes.map((c) => at(rev, c.key)),
    ]);
    const text = (kv: IKeyValue | undefined) => (kv ? kv.value.toString("utf8") : null);
    const ours =
      text(bumped) === String(epoch.value + 1) &&
      text(lockKv) === lock.holder &&
      Number(lockKv?.create_revision) === lock.createRevision &&
      changes.every((c, i) =>
        c.kind === "remove" ? values[i] === undefined : text(values[i]) === (c.after ?? ""),
      );
    if (ours) return { ok: true, epoch: epoch.value + 1, revision: rev };
    return { ok: false, reason: "epoch-moved", epochNow };
  } catch (e) {
    if (e instanceof EtcdUnavailableError) throw e;
    // a compacted revision: the history cannot tell
    return { ok: false, reason: "unknown", epochNow };
  }
}
