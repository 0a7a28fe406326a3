import { acquireApplyLock } from "./apply-lock.js";
import { epochAtRead } from "./apply-transaction.js";
import type { AuditCommand } from "./audit-record.js";
import { auditValueOf } from "./audit-record.js";
import { auditStamp, COMMIT_EXTRA_OPS } from "./audit-write.js";
import { CliError } from "./cli-error.js";
import type { CliSettings } from "./cli-settings.js";
import type { CommandContext } from "./command-context.js";
import { commitFailure } from "./commit-failure.js";
import { commitUnderLock } from "./commit-under-lock.js";
import { compileOptions } from "./compile-options.js";
import { confirm } from "./confirm.js";
import { edgeEffect, formatEdgeEffect, type RouteShift } from "./edge-effect.js";
import { toSnapshot } from "./etcd-client.js";
import type { EtcdMembers } from "./etcd-members.js";
import type { IntentPlan } from "./intent-plan.js";
import { type IntentChangeResult, IntentChangeShape } from "./output/shapes/intent-change-shape.js";
import { formatDiff, type KeyChange } from "./plan-diff.js";

/** How one intent-changing command (`apply`, `move`, `rollback`) commits its plan. */
export interface CommitRequest {
  readonly command: AuditCommand;
  /** `--reason`, kept in the audit record. */
  readonly reason: string | undefined;
  /** `--yes`: commit without asking. */
  readonly yes: boolean;
  /** Printed instead of the plan when there is nothing to change (exit 0, nothing written). */
  readonly noChanges: string;
  /** Lines printed after the diff, before the edge effect (e.g. what `move` did to weights). */
  readonly notes?: readonly string[];
  /** `rollback`: the epoch restored (reported in the result). */
  readonly rolledBackTo?: number;
}

/** The command's result: the one document of `-o json`, and the last text line. */
function emitOutcome(
  ctx: CommandContext,
  req: CommitRequest,
  result: IntentChangeResult,
): IntentChangeResult {
  ctx.emit(result, {
    schema: IntentChangeShape,
    text: (r) => [
      r.applied
        ? `Applied ${r.changes.length} changes: epoch ${r.epoch} at revision ${r.revision}.`
        : req.noChanges,
    ],
  });
  return result;
}

const changeOf = (c: KeyChange) => ({
  key: c.rel,
  kind: c.kind,
  before: auditValueOf(c.kind === "add" ? undefined : c.before),
  after: auditValueOf(c.kind === "remove" ? undefined : c.after),
});

const shiftOf = (s: RouteShift) => ({
  route: s.country,
  before: { pool: s.before.pool, source: s.before.source },
  after: { pool: s.after.pool, source: s.after.source },
});

/**
 * The one way intent changes (SPEC §6 `apply`): print the plan and its edge effect, refuse a
 * change set etcd would reject or one that adds problems, confirm (or `--yes`), take
 * `lock/apply`, then the one CAS transaction with the audit record
 * ({@link commitUnderLock}); then emit the result ({@link IntentChangeShape}). Throws the
 * `CliError` of every failure (exit 1, 2, 3, 4, 5).
 */
export async function commitPlan(
  ctx: CommandContext,
  client: EtcdMembers,
  settings: CliSettings,
  plan: IntentPlan,
  req: CommitRequest,
): Promise<IntentChangeResult> {
  const { read, changes } = plan;
  const epoch = epochAtRead(read);
  const base = {
    command: req.command,
    readRevision: read.revision,
    ...(req.rolledBackTo !== undefined ? { rolledBackTo: req.rolledBackTo } : {}),
    changes: changes.map(changeOf),
    notes: [...(req.notes ?? [])],
  };
  if (changes.length === 0) {
    const result = { ...base, applied: false, epoch: epoch.value, revision: read.revision };
    return emitOutcome(ctx, req, { ...result, effect: [] });
  }
  if (changes.length + COMMIT_EXTRA_OPS > settings.maxTxnOps) {
    throw new CliError(
      "too-many-ops",
      `${changes.length} changes and ${COMMIT_EXTRA_OPS} more operations (epoch, audit record, pruning) exceed etcd's ${settings.maxTxnOps} operations per transaction; raise etcd --max-txn-ops (and EDGECTL_MAX_TXN_OPS) or apply in smaller steps`,
    );
  }
  plan.assertNoNewProblems();
  const shifts = edgeEffect(toSnapshot(read), changes, compileOptions(settings));
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
    // in JSON mode stdout holds only the result: the question goes where the plan went
    const io = ctx.mode === "json" ? { ...ctx.io, stdout: ctx.io.stderr } : ctx.io;
    if (!(await confirm(io, `Apply ${changes.length} changes?`))) {
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
  return emitOutcome(ctx, req, {
    ...base,
    applied: true,
    epoch: result.epoch,
    revision: result.revision,
    effect: shifts.map(shiftOf),
  });
}
