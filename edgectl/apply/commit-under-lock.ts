import { safeText } from "../../core/index.js";
import type { AuditStamp } from "../audit/audit-write.js";
import { CliError } from "../cli/cli-error.js";
import type { CliSettings } from "../cli/cli-settings.js";
import type { EtcdMembers } from "../etcd/etcd-members.js";
import { acquireApplyLock, type LockAttempt } from "./apply-lock.js";
import { type CommitResult, commitApply, type EpochAtRead } from "./apply-transaction.js";
import type { KeyChange } from "./plan-diff.js";

/** Commits tried in all when the member serving one fails before answering. */
export const COMMIT_ATTEMPTS = 3;

/**
 * How long a lost commit reply is settled before the outcome counts as unknown: long enough for
 * a leader election and a member's reconnects, a few request deadlines.
 */
export function settleBudgetMs(etcdTimeoutMs: number): number {
  return Math.max(3 * etcdTimeoutMs, 3000);
}

/**
 * Given the first attempt at `lock/apply`, sends the one commit (the changes, the epoch bump and
 * the audit record of `stamp`) and releases the lock through
 * any live member whatever happened (a failed apply never blocks the next one for the lock's
 * TTL). When the
 * commit's member failed and settlement proved the commit did not and cannot land
 * (`not-landed`: its lock was revoked first), a new lock and a new commit of the same read are
 * tried, up to {@link COMMIT_ATTEMPTS} in all: nothing is ever sent twice on the same lock.
 * Throws a `locked` CliError when another holder has the lock, `conflict` when its lease ran out
 * before the lock was confirmed.
 */
export async function commitUnderLock(
  members: EtcdMembers,
  settings: CliSettings,
  first: LockAttempt,
  epoch: EpochAtRead,
  changes: readonly KeyChange[],
  stamp: AuditStamp,
  warn: (line: string) => void,
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
