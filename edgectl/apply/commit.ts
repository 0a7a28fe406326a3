import { setTimeout as sleep } from "node:timers/promises";
import {
  type ComparatorBuilder,
  type Etcd3,
  EtcdLeaseInvalidError,
  GRPCNotFoundError,
  type IKeyValue,
  Range,
} from "etcd3";
import { isMemberFailure } from "../../adapters/etcd-fault-handling.js";
import type { EtcdMembers } from "../../adapters/etcd-members.js";
import { EtcdUnavailableError } from "../../adapters/etcd-unavailable-error.js";
import type { PrefixRead } from "../../adapters/prefix-read.js";
import { EpochSchema, routingKeys, safeText } from "../../core/index.js";
import { type AuditStamp, auditWrites } from "../audit/audit-write.js";
import { CliError } from "../cli/cli-error.js";
import type { CliSettings } from "../cli/cli-settings.js";
import { type ApplyLock, acquireApplyLock, type LockAttempt } from "./apply-lock.js";
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
       * established (no member answered in time, or etcd's history compacted).
       */
      readonly reason: "epoch-moved" | "lock-lost" | "not-landed" | "unknown";
      readonly epochNow: string | null;
    };

/**
 * The two rules that keep concurrent applies from losing each other's changes: the commit's
 * compare that `epoch` is as read, and taking `lock/apply` only once the plan is final.
 * edgectl runs {@link CAS_RULES}; the fault suite's CAS mutant
 * (test/faults/support/cas-mutant.ts) runs edgectl with rules that break them, to prove its
 * checker catches a broken CAS.
 */
export interface CommitRules {
  /** The transaction's first compare: `epoch` (the key `epochKey`) is still as read. */
  epochCompare(client: Etcd3, epochKey: string, epoch: EpochAtRead): ComparatorBuilder;
  /** Runs between the confirmed plan and taking `lock/apply`. */
  beforeLock(): Promise<void>;
}

/** The commit's rules: same mod revision (or still absent) as at the read; lock right away. */
export const CAS_RULES: CommitRules = {
  epochCompare: (client, epochKey, epoch) =>
    epoch.modRevision === null
      ? client.if(epochKey, "Create", "==", 0)
      : client.if(epochKey, "Mod", "==", epoch.modRevision),
  beforeLock: () => Promise.resolve(),
};

/** Commits tried in all when the member serving one fails before answering. */
export const COMMIT_ATTEMPTS = 3;

/**
 * How long a lost commit reply is settled before the outcome counts as unknown: long enough for
 * a leader election and a member's reconnects, a few request deadlines.
 */
export function settleBudgetMs(etcdTimeoutMs: number): number {
  return Math.max(3 * etcdTimeoutMs, 3000);
}

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

/**
 * Given the first attempt at `lock/apply`, sends the one commit (the changes, the epoch bump and
 * the audit record of `stamp`) and releases the lock through any live member whatever happened
 * (a failed apply never blocks the next one for the lock's TTL). When the commit's member failed
 * and settlement proved the commit did not and cannot land (`not-landed`: its lock was revoked
 * first), a new lock and a new commit of the same read are tried, up to {@link COMMIT_ATTEMPTS}
 * in all: nothing is ever sent twice on the same lock. Throws a `locked` CliError when another
 * holder has the lock, `conflict` when its lease ran out before the lock was confirmed.
 */
export async function commitUnderLock(
  members: EtcdMembers,
  settings: CliSettings,
  first: LockAttempt,
  epoch: EpochAtRead,
  changes: readonly KeyChange[],
  stamp: AuditStamp,
  warn: (line: string) => void,
  rules: CommitRules = CAS_RULES,
): Promise<CommitResult> {
  let attempt = first;
  for (let n = 1; ; n++) {
    if (!attempt.ok) {
      if ("lapsed" in attempt) {
        throw new CliError(
          "conflict",
          "conflict: lock/apply's lease expired before the lock was confirmed (was this process paused?); nothing written",
        );
      }
      // The holder is whatever text lock/apply holds: anyone with write access put it there.
      throw new CliError(
        "locked",
        `locked: lock/apply is held by ${safeText(attempt.heldBy)}; nothing written`,
      );
    }
    let result: CommitResult;
    try {
      result = await commitApply(
        members,
        settings.prefix,
        attempt.lock,
        epoch,
        changes,
        stamp,
        settleBudgetMs(settings.etcdTimeoutMs),
        rules,
      );
    } finally {
      await attempt.lock.release().catch(() => undefined);
    }
    if (result.ok || result.reason !== "not-landed" || n >= COMMIT_ATTEMPTS) return result;
    warn(
      `edgectl: the commit's etcd member failed before answering; it was fenced off and did not land (epoch still ${result.epochNow ?? "absent"}); committing again through ${members.current} (${n + 1}/${COMMIT_ATTEMPTS})`,
    );
    attempt = await acquireApplyLock(members, settings.prefix, settings.lockTtlSeconds);
  }
}

function commitTxn(
  client: Etcd3,
  prefix: string,
  lock: Pick<ApplyLock, "holder" | "createRevision">,
  epoch: EpochAtRead,
  changes: readonly KeyChange[],
  stamp: AuditStamp,
  rules: CommitRules,
) {
  const keys = routingKeys(prefix);
  const audit = auditWrites(stamp, epoch.value + 1, changes);
  return rules
    .epochCompare(client, keys.epoch, epoch)
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
  rules: CommitRules = CAS_RULES,
): Promise<CommitResult> {
  let res: Awaited<ReturnType<ReturnType<typeof commitTxn>["commit"]>>;
  try {
    res = await members.once((c) =>
      commitTxn(c, prefix, lock, epoch, changes, stamp, rules).commit(),
    );
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

/**
 * Settles a commit whose reply never came (the member died, the deadline passed, the process was
 * paused), through any member that answers, without sending it again:
 *
 * - `epoch` moved past the read: etcd's history says whether the move was this commit
 *   ({@link attributeEpochMove}).
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
        return await attributeEpochMove(members, prefix, lock, epoch, changes, epochKv);
      return { ok: false, reason: held ? "not-landed" : "lock-lost", epochNow };
    } catch (e) {
      if (!(e instanceof EtcdUnavailableError)) throw e;
    }
    if (Date.now() >= deadline) return { ok: false, reason: "unknown", epochNow };
    await sleep(Math.min(250, Math.max(0, deadline - Date.now())));
  }
}

/**
 * The first revision in (`after`, `upTo`] at which `key` was modified after `after`: a binary
 * search over ranges at past revisions (mod revisions only grow while the key exists).
 */
async function firstModificationAfter(
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
async function attributeEpochMove(
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
    const rev = await firstModificationAfter(
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
    // a compacted revision: etcd's history cannot tell
    return { ok: false, reason: "unknown", epochNow };
  }
}
