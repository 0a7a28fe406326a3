import type { AuditCommand } from "../audit/audit-record.js";
import { auditStamp, COMMIT_EXTRA_OPS } from "../audit/audit-write.js";
import type { CanaryRequest } from "../canary/canary-flags.js";
import { canaryPlanLines, canaryStartChange } from "../canary/canary-start.js";
import { assertNoCanary } from "../canary/running-canary.js";
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
  /** `--canary`: commit the changes as a canary in `canary/current` (docs/reference.md §13). */
  readonly canary?: CanaryRequest | null;
}

/**
 * The one way intent changes (docs/reference.md §6 `apply`): refuse while a canary runs (§13),
 * print the plan and its edge effect, refuse a
 * change set etcd would reject or one that adds problems, confirm (or `--yes`), take
 * `lock/apply`, then the one CAS transaction with the audit record
 * ({@link commitUnderLock}); with `req.canary` that commit writes `canary/current` instead of the
 * intent keys. Returns the commit, or `null` when there is nothing to change
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
  assertNoCanary(read, req.command);
  if (changes.length + COMMIT_EXTRA_OPS > settings.maxTxnOps) {
    throw new CliError(
      "too-many-ops",
      `${changes.length} changes and ${COMMIT_EXTRA_OPS} more operations (epoch, audit record, pruning) exceed etcd's ${settings.maxTxnOps} operations per transaction; raise etcd --max-txn-ops (and EDGECTL_MAX_TXN_OPS) or apply in smaller steps`,
    );
  }
  plan.assertNoNewProblems();
  const canary = req.canary ?? null;
  const stamp = auditStamp(settings, req.command, req.reason, read.revision);
  // A canary commits one key, canary/current, holding the changes; the intent keys stay.
  const committed = canary
    ? [
        canaryStartChange(
          settings.prefix,
          changes,
          canary,
          epoch.value + 1,
          stamp.by,
          req.reason,
          new Date(stamp.at),
        ),
      ]
    : changes;
  const shifts = edgeEffect(toSnapshot(read), changes, compileOptions(settings, null));
  ctx.print(
    `Plan for ${settings.prefix} at revision ${read.revision} (epoch ${epoch.value}):`,
    ...formatDiff(changes),
    ...(req.notes ?? []),
    ...formatEdgeEffect(shifts),
    ...(canary ? canaryPlanLines(canary, epoch.value + 1) : []),
  );
  if (!req.yes) {
    if (!ctx.io.isTTY) {
      throw new CliError(
        "not-confirmed",
        `refusing to ${req.command} without confirmation: stdin is not a terminal (pass --yes)`,
      );
    }
    // in JSON mode ctx.io.stdout is stderr: the question goes where the plan went
    const question = canary
      ? `Start canary c${epoch.value + 1} of ${changes.length} changes at ${canary.share} %?`
      : `Apply ${changes.length} changes?`;
    if (!(await confirm(ctx.io, question))) {
      throw new CliError("not-confirmed", "not applied: not confirmed");
    }
  }
  // `client` is edgectl's etcd client over every member (the fault suite's CAS mutant patches
  // the lock line below by its text)
  const attempt = await acquireApplyLock(client, settings.prefix, settings.lockTtlSeconds);
  const result = await commitUnderLock(client, settings, attempt, epoch, committed, stamp, (l) =>
    ctx.warn(l),
  );
  if (!result.ok) throw commitFailure(result, epoch.value);
  return { epoch: result.epoch, revision: result.revision };
}
