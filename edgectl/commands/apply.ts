import { Command } from "commander";
import type { CommitRules } from "../apply/commit.js";
import { type CommandContext, withCommonOptions } from "../cli/command-context.js";

/**
 * `edgectl apply FILE [--yes] [--reason TEXT]`: validate, read at one revision, diff, confirm,
 * take `lock/apply`, then one CAS transaction on `epoch` and the lock that also writes the audit
 * record. 0 applied, 1 invalid, 2 conflict, 3 locked, 4 etcd unavailable (nothing written),
 * 5 outcome unknown.
 */
export function applyCommand(ctx: CommandContext, commitRules?: CommitRules): Command {
  return withCommonOptions(new Command("apply"))
    .description("make etcd's intent (pools and country rules) exactly the file, atomically")
    .argument("<file>", "desired-state file")
    .option("-y, --yes", "apply without asking for confirmation")
    .option("--reason <text>", "why (kept in the audit record; see edgectl history)")
    .action(async (file: string, opts: { yes?: boolean; reason?: string }, cmd: Command) => {
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { applyAction } = await import("../actions/apply-action.js");
      await applyAction(ctx, file, opts, cmd, commitRules);
    });
}
