import type { Command } from "commander";
import { withEtcdMembers } from "../../adapters/etcd-members.js";
import { commitFields } from "../apply/apply-document.js";
import type { CommitRules } from "../apply/commit.js";
import { commitPlan } from "../apply/commit-plan.js";
import { planRollback } from "../apply/rollback-plan.js";
import { CliError } from "../cli/cli-error.js";
import { ExitCode } from "../cli/exit-codes.js";
import type { CommandContext } from "../output/command-context.js";
import { RollbackShape } from "../output/shapes/rollback-shape.js";

/** `edgectl rollback`'s action (`edgectl/commands/rollback.ts` defines its arguments and options). */
export async function rollbackAction(
  ctx: CommandContext,
  raw: string,
  opts: { yes?: boolean; reason?: string },
  cmd: Command,
  commitRules?: CommitRules,
): Promise<void> {
  if (!/^[0-9]{1,12}$/.test(raw.trim()))
    throw new CliError("invalid-input", `rollback: "${raw}" is not an epoch (0 or more)`);
  const target = Number(raw.trim());
  const settings = ctx.settings(cmd);
  await withEtcdMembers(settings, async (client) => {
    const { plan, currentEpoch } = await planRollback(client, settings, target);
    const reason = `rollback to epoch ${target}${opts.reason ? `: ${opts.reason}` : ""}`;
    const noChanges =
      target === currentEpoch
        ? `Epoch ${target} is the current epoch: nothing to roll back. Nothing written.`
        : `No changes: the intent already equals the intent after epoch ${target}. Nothing written.`;
    const commit = await commitPlan(
      ctx,
      client,
      settings,
      plan,
      {
        command: "rollback",
        reason,
        yes: opts.yes === true,
      },
      commitRules,
    );
    ctx.emit(
      { ...commitFields(settings, plan, commit), to_epoch: target },
      {
        schema: RollbackShape,
        text: (r, paint) => [
          r.applied
            ? `${paint("green", "Applied")} ${r.changes.length} changes: epoch ${r.epoch} at revision ${r.commit_revision} (the intent after epoch ${r.to_epoch}).`
            : noChanges,
        ],
      },
    );
    ctx.exit(ExitCode.ok);
  });
}
