import type { AuditCommand } from "../audit/audit-record.js";
import { auditStamp, COMMIT_EXTRA_OPS } from "../audit/audit-write.js";
import { CliError } from "../cli/cli-error.js";
import type { CliSettings } from "../cli/cli-settings.js";
import type { CommandContext } from "../cli/command-context.js";
import { compileOptions } from "../cli/compile-options.js";
import { confirm } from "../cli/confirm.js";
import type { EtcdMembers } from "../etcd/etcd-members.js";
import { toSnapshot } from "../etcd/read-prefix.js";
import type { ApplyCommit } from "../output/apply-document.js";
import { acquireApplyLock } from "./apply-lock.js";
import { epochAtRead } from "./apply-transaction.js";
import { commitFailure } from "./commit-failure.js";
import { commitUnderLock } from "./commit-under-lock.js";
import { edgeEffect, formatEdgeEffect } from "./edge-effect.js";
import type { IntentPlan } from "./intent-plan.js";
import { formatDiff } from "./plan-diff.js";

/** How one intent-changing command (`apply`, `move`, `rollback`) commits its plan. */
export interface CommitRequest {
  readonly command: AuditCommand;
  /** `--reason`, kept in the audit record. */
  readonly reason: string | undefined;
  /** `--yes`: commit without asking. */
  readonly yes: boolean;
  /** Lines printed after the diff, before the edge effect (e.g. what `move` did to weights). */
  readonly notes?: readonly string[];
}

/**
 * The one way intent changes (docs/reference.md §6 `apply`): print the plan and its edge effect, refuse a
 * change set etcd would reject or one that adds problems, confirm (or `--yes`), take
 * `lock/apply`, then the one CAS transaction with the audit record
 * ({@link commitUnderLock}). Returns the commit, or `null` when there is nothing to change
 * (nothing printed, nothing written); the command emits its result document from it. Throws the
 * `CliError` of every failure (exit 1, 2, 3, 4, 5).
 */
export async function commitPlan(
  ctx: CommandContext,
  client: EtcdMembers,
  settings: CliSettings,
  plan: IntentPlan,
  req: CommitRequest,
): Promise<ApplyCommit | null> {
  const { read, changes } = plan;
  const epoch = epochAtRead(read);
  if (changes.length === 0) return null;
  if (changes.length + COMMIT_EXTRA_OPS > settings.maxTxnOps) {
    throw new CliError(
      "too-many-ops",
      `${changes.length} changes and ${COMMIT_EXTRA_OPS} more operations (epoch, audit record, pruning) exceed etcd's ${settings.maxTxnOps} operations per transaction; raise etcd --max-txn-ops (and EDGECTL_MAX_TXN_OPS) or apply in smaller steps`,
    );
  }
  plan.assertNoNewProblems();
  const shifts = edgeEffect(toSnapshot(read), changes, compileOptions(settings, null));
  ctx.print(
    `Plan for ${settings.prefix} at revision ${read.revision} (epoch ${epoch.value}):`,
    ...formatDiff(changes),
    ...(req.notes ?? []),
    ...formatEdgeEffect(shifts),
  );
  if (!req.yes) {
    if (!ctx.io.isTTY) {
      throw new CliError(
        "not-confirmed",
        `refusing to ${req.command} without confirmation: stdin is not a terminal (pass --yes)`,
      );
    }
    // in JSON mode ctx.io.stdout is stderr: the question goes where the plan went
    if (!(await confirm(ctx.io, `Apply ${changes.length} changes?`))) {
      throw new CliError("not-confirmed", "not applied: not confirmed");
    }
  }
  // `client` is edgectl's etcd client over every member (the fault suite's CAS mutant patches
  // the lock line below by its text)
  const attempt = await acquireApplyLock(client, settings.prefix, settings.lockTtlSeconds);
  const stamp = auditStamp(settings, req.command, req.reason, read.revision);
  const result = await commitUnderLock(client, settings, attempt, epoch, changes, stamp, (l) =>
    ctx.warn(l),
  );
  if (!result.ok) throw commitFailure(result, epoch.value);
  return { epoch: result.epoch, revision: result.revision };
}
