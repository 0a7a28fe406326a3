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
      readonly reason: "epoch-moved" | "lock-lost";
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
    return verifyCommit(client, prefix, epoch, changes, e);
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
 * After a commit whose outcome is unknown (timed out, or the process was paused): it landed if
 * `epoch` is exactly one past the read and every changed key holds what this apply wrote.
 */
async function verifyCommit(
  client: Etcd3,
  prefix: string,
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
  if (epochNow === String(epoch.value + 1)) {
    const values = await Promise.all(changes.map((c) => client.get(c.key).string()));
    const ours = changes.every((c, i) =>
      c.kind === "remove" ? values[i] === null : values[i] === (c.after ?? ""),
    );
    if (ours) return { ok: true, epoch: epoch.value + 1, revision: Number(epochKv?.mod_revision) };
  }
  return { ok: false, reason: "epoch-moved", epochNow };
}
