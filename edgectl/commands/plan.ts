import { Command } from "commander";
import { type CommandContext, withCommonOptions } from "../command-context.js";
import { ExitCode } from "../exit-codes.js";

/** `edgectl plan FILE`: the diff against etcd and its edge effect under current health. */
export function planCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("plan"))
    .description("validate a file and show what apply would change, and where traffic would move")
    .argument("<file>", "desired-state file")
    .action(async (file: string, _opts: unknown, cmd: Command) => {
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      const { withEtcdMembers } = await import("../etcd-members.js");
      const { planIntent } = await import("../intent-plan.js");
      const { loadDesiredState } = await import("../load-desired-state.js");
      const { formatDiff } = await import("../plan-diff.js");
      const settings = ctx.settings(cmd);
      const desired = await loadDesiredState(file);
      await withEtcdMembers(settings, async (members) => {
        const plan = await planIntent(members, settings, desired);
        ctx.print(
          `Plan for ${settings.prefix} at revision ${plan.read.revision}:`,
          ...formatDiff(plan.changes),
        );
        if (plan.changes.length > 0) {
          ctx.print(...plan.effectLines());
          plan.assertNoNewProblems();
        }
      });
      ctx.exit(ExitCode.ok);
    });
}
