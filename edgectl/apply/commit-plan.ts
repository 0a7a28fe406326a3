import type { EtcdMembers } from "../../adapters/etcd-members.js";
import type { AuditCommand } from "../audit/audit-record.js";
import { auditStamp, COMMIT_EXTRA_OPS } from "../audit/audit-write.js";
import { CliError } from "../cli/cli-error.js";
import type { CliSettings } from "../cli/cli-settings.js";
import { compileOptions } from "../cli/compile-options.js";
import { confirm } from "../cli/confirm.js";
import { toSnapshot } from "../etcd/read-prefix.js";
import type { CommandContext } from "../output/command-context.js";
import { acquireApplyLock } from "./apply-lock.js";
import type { CanaryRequest } from "./canary-flags.js";
import { canaryPlanLines, canaryStartChange } from "./canary-start.js";
import {
  CAS_RULES,
  type CommitResult,
  type CommitRules,
  commitUnderLock,
  epochAtRead,
} from "./commit.js";
import { edgeEffect, formatEdgeEffect } from "./edge-effect.js";
import type { IntentPlan } from "./intent-plan.js";
import { formatDiff } from "./plan-diff.js";
import { assertNoCanary } from "./running-canary.js";

/** What `apply` committed, if it committed: the new epoch and the commit's revision. */
export interface ApplyCommit {
  readonly epoch: number;
  readonly revision: number;
}

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
 * ({@link commitUnderLock}) under `rules`; with `req.canary` that commit writes `canary/current`
 * instead of the intent keys. Returns the commit, or `null` when there is nothing to change
 * (nothing printed, nothing written); the command emits its result document from it. Throws the
 * `CliError` of every failure (exit 1, 2, 3, 4, 5).
 */
export async function commitPlan(
  ctx: CommandContext,
  client: EtcdMembers,
  settings: CliSettings,
  plan: IntentPlan,
  req: CommitRequest,
  rules: CommitRules = CAS_RULES,
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
  await rules.beforeLock();
  const attempt = await acquireApplyLock(client, settings.prefix, settings.lockTtlSeconds);
  const result = await commitUnderLock(
    client,
    settings,
    attempt,
    epoch,
    committed,
    stamp,
    (l) => ctx.warn(l),
    rules,
  );
  if (!result.ok) throw commitFailure(result, epoch.value);
  return { epoch: result.epoch, revision: result.revision };
}

/**
 * The apply's message and exit code for a commit that did not apply: 2 conflict (epoch moved, lock
 * lost), 4 etcd unavailable (proven not written), 5 outcome unknown.
 */
export function commitFailure(
  result: Extract<CommitResult, { ok: false }>,
  from: number,
): CliError {
  const now = result.epochNow ?? "(deleted)";
  switch (result.reason) {
    case "epoch-moved":
      return new CliError(
        "conflict",
        `conflict: epoch moved from ${from} to ${now} since the read; nothing written (run plan again)`,
      );
    case "lock-lost":
      return new CliError(
        "conflict",
        "conflict: lock/apply is no longer ours (its lease expired); nothing written",
      );
    case "not-landed":
      return new CliError(
        "etcd-unavailable",
        `etcd unavailable: every commit's member failed before answering; each was fenced off (lock/apply revoked) and epoch is still ${now}, so nothing was written and nothing will be (run apply again)`,
      );
    case "unknown":
      return new CliError(
        "outcome-unknown",
        `outcome unknown: the commit's reply was lost and etcd could not tell whether it landed (no member answered in time, or its history was compacted; epoch is now ${now}); run plan to see what etcd holds`,
      );
  }
}
