import type { Etcd3 } from "etcd3";
import { EpochSchema, routingKeys } from "../core/index.js";
import type { ApplyLock } from "./apply-lock.js";
import { isUncertainOutcome, type PrefixRead } from "./etcd-client.js";
import type { KeyChange } from "./plan-diff.js";

/** What the commit compares the epoch against: its state at the read. */
export interface EpochAtRead {
  /** Decoded value (0 when absent or invalid). */
  readonly value: number;
  /** Mod revision of the `epoch` key, or `null` when the key did not exist. */
  readonly modRevision: number | null;
}

/** Outcome of the apply transaction. */
export type CommitResult =
  | { readonly ok: true; readonly epoch: number; readonly revision: number }
  | {
      readonly ok: false;
      /** `unknown`: the outcome could not be established (history compacted, etcd gone). */
      readonly reason: "epoch-moved" | "lock-lost" | "unknown";
      readonly epochNow: string | null;
    };

/** The epoch as read with the rest of the prefix. */
export function epochAtRead(read: PrefixRead): EpochAtRead {
  const e = read.entries.find((x) => x.rel === "epoch");
  if (!e) return { value: 0, modRevision: null };
  const parsed = EpochSchema.safeParse(e.value.toString("utf8").trim());
  return { value: parsed.success ? parsed.data : 0, modRevision: e.modRevision };
}

/**
 * The one apply transaction: if `epoch` is unchanged since the read (same mod revision, or still
 * absent) and `lock/apply` is still this holder's (same value and create revision), write and
 * delete the changed keys and bump `epoch`; otherwise write nothing and say which check failed.
 */
export async function commitApply(
  client: Etcd3,
  prefix: string,
  lock: Pick<ApplyLock, "holder" | "createRevision">,
  epoch: EpochAtRead,
  changes: readonly KeyChange[],
): Promise<CommitResult> {
  const keys = routingKeys(prefix);
  const next = epoch.value + 1;
  const txn =
    epoch.modRevision === null
      ? client.if(keys.epoch, "Create", "==", 0)
      : client.if(keys.epoch, "Mod", "==", epoch.modRevision);
  txn
    .and(keys.lock, "Value", "==", lock.holder)
    .and(keys.lock, "Create", "==", lock.createRevision)
    .then(
      ...changes.map((c) =>
        c.kind === "remove" ? client.delete().key(c.key) : client.put(c.key).value(c.after ?? ""),
      ),
      client.put(keys.epoch).value(String(next)),
    )
    .else(client.get(keys.lock), client.get(keys.epoch));
  let res: Awaited<ReturnType<typeof txn.commit>>;
  try {
    res = await txn.commit();
  } catch (e) {
    if (!isUncertainOutcome(e)) throw e;
    return verifyCommit(client, prefix, lock, epoch, changes, e);
  }
  if (res.succeeded) return { ok: true, epoch: next, revision: Number(res.header.revision) };
  const lockKv = res.responses[0]?.response_range?.kvs[0];
  const epochKv = res.responses[1]?.response_range?.kvs[0];
  const ours =
    lockKv !== undefined &&
    lockKv.value.toString("utf8") === lock.holder &&
    Number(lockKv.create_revision) === lock.createRevision;
  return {
    ok: false,
    reason: ours ? "epoch-moved" : "lock-lost",
    epochNow: epochKv ? epochKv.value.toString("utf8") : null,
  };
}

/**
 * After a commit whose outcome is unknown (timed out, or the process was paused): still at the
 * read's epoch means it did not land. Otherwise find the revision where `epoch` first moved past
 * the read; the commit there was this apply's if `lock/apply` was this holder's at that revision
 * (only the holder can commit) and every changed key held what this apply wrote.
 */
export async function verifyCommit(
  client: Etcd3,
  prefix: string,
  lock: Pick<ApplyLock, "holder" | "createRevision">,
  epoch: EpochAtRead,
  changes: readonly KeyChange[],
  cause: unknown,
): Promise<CommitResult> {
  const keys = routingKeys(prefix);
  const now = await client.get(keys.epoch).exec();
  const epochKv = now.kvs[0];
  const epochNow = epochKv ? epochKv.value.toString("utf8") : null;
  const unchanged =
    epoch.modRevision === null ? !epochKv : Number(epochKv?.mod_revision) === epoch.modRevision;
  if (unchanged) throw cause;
  if (!epochKv) return { ok: false, reason: "unknown", epochNow };
  try {
    const at = await firstEpochChange(
      client,
      keys.epoch,
      epoch.modRevision ?? 0,
      Number(epochKv.mod_revision),
    );
    if (at === null) return { ok: false, reason: "unknown", epochNow };
    const [bumped, lockKv, ...values] = await Promise.all([
      client.get(keys.epoch).revision(at).string(),
      client
        .get(keys.lock)
        .revision(at)
        .exec()
        .then((r) => r.kvs[0]),
      ...changes.map((c) => client.get(c.key).revision(at).string()),
    ]);
    const ours =
      bumped === String(epoch.value + 1) &&
      lockKv?.value.toString("utf8") === lock.holder &&
      Number(lockKv.create_revision) === lock.createRevision &&
      changes.every((c, i) =>
        c.kind === "remove" ? values[i] === null : values[i] === (c.after ?? ""),
      );
    if (ours) return { ok: true, epoch: epoch.value + 1, revision: at };
    return { ok: false, reason: "epoch-moved", epochNow };
  } catch {
    // a compacted revision, or etcd gone again: the history cannot tell
    return { ok: false, reason: "unknown", epochNow };
  }
}

/**
 * The first revision in (`after`, `upTo`] at which `key` was modified after `after`: a binary
 * search over ranges at past revisions (mod revisions only grow while the key exists).
 */
async function firstEpochChange(
  client: Etcd3,
  key: string,
  after: number,
  upTo: number,
): Promise<number | null> {
  const changedAt = async (rev: number) => {
    const kv = (await client.get(key).revision(rev).exec()).kvs[0];
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
