import { Command } from "commander";
import type { CanaryFlags } from "../canary/canary-flags.js";
import { type CommandContext, withCommonOptions } from "../cli/command-context.js";
import { ExitCode } from "../cli/exit-codes.js";

interface ApplyOptions extends CanaryFlags {
  readonly yes?: boolean;
  readonly reason?: string;
}

/**
 * `edgectl apply FILE [--yes] [--reason TEXT] [--canary PERCENT [--for D] [--gate EXPR]]`: validate, read at one revision, diff, confirm,
 * take `lock/apply`, then one CAS transaction on `epoch` and the lock that also writes the audit
 * record; with `--canary`, the commit writes the change as a canary in `canary/current` instead
 * (docs/reference.md §13). 0 applied, 1 invalid, 2 conflict, 3 locked, 4 etcd unavailable (nothing written),
 * 5 outcome unknown.
 */
export function applyCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("apply"))
    .description("make etcd's intent (pools and country rules) exactly the file, atomically")
    .argument("<file>", "desired-state file")
    .option("-y, --yes", "apply without asking for confirmation")
    .option("--reason <text>", "why (kept in the audit record; see edgectl history)")
    .option("--canary <percent>", "roll out to PERCENT % of each changed route's viewers first")
    .option("--for <duration>", "with --canary: how long the gates must hold (default 10m)")
    .option("--gate <expr>", "with --canary: errors<=+1pt,p90<=x1.25+50ms (the defaults)")
    .option("--min-samples <n>", "with --canary: requests a side needs to be judged (default 200)")
    .action(async (file: string, opts: ApplyOptions, cmd: Command) => {
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      const { commitPlan } = await import("../apply/commit-plan.js");
      const { withEtcdMembers } = await import("../etcd/etcd-members.js");
      const { planIntent } = await import("../apply/intent-plan.js");
      const { loadDesiredState } = await import("../apply/load-desired-state.js");
      const { ApplyShape, applyDocument, applyText } = await import("../output/apply-document.js");
      const { canaryRequestOf } = await import("../canary/canary-flags.js");
      const settings = ctx.settings(cmd);
      const canary = canaryRequestOf(opts);
      const desired = await loadDesiredState(file);
      await withEtcdMembers(settings, async (client) => {
        const plan = await planIntent(client, settings, desired);
        const commit = await commitPlan(ctx, client, settings, plan, {
          command: "apply",
          reason: opts.reason,
          yes: opts.yes === true,
          canary,
        });
        ctx.emit(applyDocument(file, settings, plan, commit), {
          schema: ApplyShape,
          text: applyText,
        });
        ctx.exit(ExitCode.ok);
      });
    });
}
