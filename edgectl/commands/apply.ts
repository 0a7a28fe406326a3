import { Command } from "commander";
import { type CommandContext, withCommonOptions } from "../cli/command-context.js";
import { ExitCode } from "../cli/exit-codes.js";

/**
 * `edgectl apply FILE [--yes] [--reason TEXT]`: validate, read at one revision, diff, confirm,
 * take `lock/apply`, then one CAS transaction on `epoch` and the lock that also writes the audit
 * record. 0 applied, 1 invalid, 2 conflict, 3 locked, 4 etcd unavailable (nothing written),
 * 5 outcome unknown.
 */
export function applyCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("apply"))
    .description("make etcd's intent (pools and country rules) exactly the file, atomically")
    .argument("<file>", "desired-state file")
    .option("-y, --yes", "apply without asking for confirmation")
    .option("--reason <text>", "why (kept in the audit record; see edgectl history)")
    .action(async (file: string, opts: { yes?: boolean; reason?: string }, cmd: Command) => {
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      const { commitPlan } = await import("../apply/commit-plan.js");
      const { withEtcdMembers } = await import("../etcd/etcd-members.js");
      const { planIntent } = await import("../apply/intent-plan.js");
      const { loadDesiredState } = await import("../apply/load-desired-state.js");
      const { originWarnings } = await import("../apply/origin-warnings.js");
      const { ApplyShape, applyDocument, applyText } = await import("../output/apply-document.js");
      const settings = ctx.settings(cmd);
      const desired = await loadDesiredState(file);
      ctx.warn(...originWarnings(desired));
      await withEtcdMembers(settings, async (client) => {
        const plan = await planIntent(client, settings, desired);
        const commit = await commitPlan(ctx, client, settings, plan, {
          command: "apply",
          reason: opts.reason,
          yes: opts.yes === true,
        });
        ctx.emit(applyDocument(file, settings, plan, commit), {
          schema: ApplyShape,
          text: applyText,
        });
        ctx.exit(ExitCode.ok);
      });
    });
}
