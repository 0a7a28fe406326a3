import { epochAtRead } from "../apply/apply-transaction.js";
import { type IntentPlan, planOfChanges } from "../apply/intent-plan.js";
import { validateDesiredDoc } from "../apply/load-desired-state.js";
import { diffIntent } from "../apply/plan-diff.js";
import { CliError } from "../cli/cli-error.js";
import type { CliSettings } from "../cli/cli-settings.js";
import type { EtcdMembers } from "../etcd/etcd-members.js";
import { readPrefixFromAny } from "../etcd/read-prefix.js";
import { oldestAuditEpoch, readAuditRecordsAfter } from "./audit-read.js";
import { desiredDocOf, intentAfterEpoch } from "./audit-rollback.js";

/** `rollback`'s plan: the changes back to the intent after `target`, and the epoch it read. */
export interface RollbackPlan {
  readonly plan: IntentPlan;
  readonly currentEpoch: number;
}

/**
 * Reads the prefix, then (at the same revision) the audit records after `target`, rebuilds the
 * intent after `target` ({@link intentAfterEpoch}), validates it as every file is validated and
 * diffs it against the read. `target` equal to the current epoch: no changes. Throws
 * `invalid-input` for an epoch after the current one.
 */
export async function planRollback(
  members: EtcdMembers,
  settings: CliSettings,
  target: number,
): Promise<RollbackPlan> {
  const read = await readPrefixFromAny(members, settings.prefix);
  const currentEpoch = epochAtRead(read).value;
  if (target > currentEpoch)
    throw new CliError(
      "invalid-input",
      `cannot roll back to epoch ${target}: the current epoch is ${currentEpoch}`,
    );
  if (target === currentEpoch) return { plan: planOfChanges(read, [], settings), currentEpoch };
  const [records, oldest] = await Promise.all([
    readAuditRecordsAfter(members, settings.auditPrefix, target, read.revision),
    oldestAuditEpoch(members, settings.auditPrefix, read.revision),
  ]);
  const intent = intentAfterEpoch({ read, currentEpoch, target, records, oldest });
  const desired = validateDesiredDoc(desiredDocOf(intent), `the intent after epoch ${target}`);
  return {
    plan: planOfChanges(read, diffIntent(read, desired, settings.prefix), settings),
    currentEpoch,
  };
}
