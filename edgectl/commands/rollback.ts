import { Command } from "commander";
import type { CommitRules } from "../apply/commit.js";
import { type CommandContext, withCommonOptions } from "../cli/command-context.js";
import { ExitCode } from "../cli/exit-codes.js";

/**
 * `edgectl rollback EPOCH [--yes] [--reason TEXT]`: restores the intent as it was right after
 * EPOCH, rebuilt from the audit records (so etcd's compaction does not matter), as a new apply
 * with its own plan, lock, CAS and record (command `rollback`). The current epoch: exit 0.
 */
export function rollbackCommand(ctx: CommandContext, commitRules?: CommitRules): Command {
  return withCommonOptions(new Command("rollback"))
    .description("restore the intent as it was right after an epoch (from the audit records)")
    .argument("<epoch>", "the epoch to go back to (see edgectl history)")
    .option("-y, --yes", "apply without asking for confirmation")
    .option("--reason <text>", "why (kept in the audit record after 'rollback to epoch N: ')")
    .action(async (raw: string, opts: { yes?: boolean; reason?: string }, cmd: Command) => {
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      const { CliError } = await import("../cli/cli-error.js");
      const { commitPlan } = await import("../apply/commit-plan.js");
      const { withEtcdMembers } = await import("../etcd/etcd-members.js");
      const { commitFields } = await import("../output/apply-document.js");
      const { RollbackShape } = await import("../output/shapes/rollback-shape.js");
      const { planRollback } = await import("../apply/rollback-plan.js");
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
    });
}
