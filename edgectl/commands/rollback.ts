import { Command } from "commander";
import type { CommitRules } from "../apply/commit.js";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

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
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { rollbackAction } = await import("../actions/rollback-action.js");
      await rollbackAction(ctx, raw, opts, cmd, commitRules);
    });
}
