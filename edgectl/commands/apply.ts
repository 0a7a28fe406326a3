import { Command } from "commander";
import type { ApplyOptions } from "../actions/apply-action.js";
import type { CommitRules } from "../apply/commit.js";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

/**
 * `edgectl apply FILE [--yes] [--reason TEXT] [--canary PERCENT [--for D] [--gate EXPR]]`: validate, read at one revision, diff, confirm,
 * take `lock/apply`, then one CAS transaction on `epoch` and the lock that also writes the audit
 * record; with `--canary`, the commit writes the change as a canary in `canary/current` instead
 * (docs/reference.md §13). 0 applied, 1 invalid, 2 conflict, 3 locked, 4 etcd unavailable (nothing written),
 * 5 outcome unknown.
 */
export function applyCommand(ctx: CommandContext, commitRules?: CommitRules): Command {
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
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { applyAction } = await import("../actions/apply-action.js");
      await applyAction(ctx, file, opts, cmd, commitRules);
    });
}
