import { type Etcd3, EtcdLeaseInvalidError, GRPCNotFoundError, Range } from "etcd3";
import { isMemberFailure } from "../../adapters/etcd-fault-handling.js";
import { EpochSchema, routingKeys } from "../../core/index.js";
import { type AuditStamp, auditWrites } from "../audit/audit-write.js";
import type { EtcdMembers } from "../etcd/etcd-members.js";
import type { PrefixRead } from "../etcd/read-prefix.js";
import type { ApplyLock } from "./apply-lock.js";
import { settleCommit } from "./commit-settlement.js";
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
      /**
       * `epoch-moved`: another apply committed since the read. `lock-lost`: the lock lapsed
       * (e.g. the process was paused past its TTL). `not-landed`: the reply was lost, and
       * settlement proved the commit did not and cannot land. `unknown`: the outcome could not be
       * established (no member answered in time, or history compacted).
       */
      readonly reason: "epoch-moved" | "lock-lost" | "not-landed" | "unknown";
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
 * True when a commit may or may not have taken effect (the member failed or timed out, the
 * connection dropped) or its lease vanished meanwhile (the process was paused past the TTL).
 */
export function isUncertainOutcome(e: unknown): boolean {
  return isMemberFailure(e) || e instanceof GRPCNotFoundError || e instanceof EtcdLeaseInvalidError;
}

function commitTxn(
  client: Etcd3,
  prefix: string,
  lock: Pick<ApplyLock, "holder" | "createRevision">,
  epoch: EpochAtRead,
  changes: readonly KeyChange[],
  stamp: AuditStamp,
) {
  const keys = routingKeys(prefix);
  const audit = auditWrites(stamp, epoch.value + 1, changes);
  const txn =
    epoch.modRevision === null
      ? client.if(keys.epoch, "Create", "==", 0)
      : client.if(keys.epoch, "Mod", "==", epoch.modRevision);
  return txn
    .and(keys.lock, "Value", "==", lock.holder)
    .and(keys.lock, "Create", "==", lock.createRevision)
    .then(
      ...changes.map((c) =>
        c.kind === "remove" ? client.delete().key(c.key) : client.put(c.key).value(c.after ?? ""),
      ),
      client.put(keys.epoch).value(String(epoch.value + 1)),
      client.put(audit.key).value(audit.value),
      ...(audit.prune
        ? [client.delete().range(new Range(audit.prune.start, audit.prune.end))]
        : []),
    )
    .else(client.get(keys.lock), client.get(keys.epoch));
}

/**
 * The one apply transaction: if `epoch` is unchanged since the read (same mod revision, or still
 * absent) and `lock/apply` is still this holder's (same value and create revision), write and
 * delete the changed keys, bump `epoch`, write the epoch's audit record (`stamp`) and prune the
 * records past retention; otherwise write nothing and say which check failed.
 * It is sent once, to the member that answered last; a lost reply is settled through any member
 * within `settleBudgetMs` ({@link settleCommit}), never by sending it again.
 */
export async function commitApply(
  members: EtcdMembers,
  prefix: string,
  lock: Pick<ApplyLock, "holder" | "createRevision" | "lease">,
  epoch: EpochAtRead,
  changes: readonly KeyChange[],
  stamp: AuditStamp,
  settleBudgetMs: number,
): Promise<CommitResult> {
  let res: Awaited<ReturnType<ReturnType<typeof commitTxn>["commit"]>>;
  try {
    res = await members.once((c) => commitTxn(c, prefix, lock, epoch, changes, stamp).commit());
  } catch (e) {
    if (!isUncertainOutcome(e)) throw e;
    return settleCommit(members, prefix, lock, epoch, changes, settleBudgetMs);
  }
  const next = epoch.value + 1;
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
