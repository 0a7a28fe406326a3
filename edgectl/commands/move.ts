import { Command } from "commander";
import type { MoveOptions } from "../actions/move-action.js";
import type { CommitRules } from "../apply/commit.js";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

/**
 * `edgectl move CC[,CC…] --to POOL [--fallbacks a,b] [--reason TEXT] [--yes]`: the seeds'
 * rebalance. Each country's (or continent's) own rule gets primary POOL, the old primary first
 * among the fallbacks unless `--fallbacks`; committed exactly as `apply` commits (exit codes and
 * `--canary` too).
 */
export function moveCommand(ctx: CommandContext, commitRules?: CommitRules): Command {
  return withCommonOptions(new Command("move"))
    .description("move countries (or continents) to a pool: the old primary becomes a fallback")
    .argument("<targets>", "comma-separated country codes or continents: DE,FR or EU")
    .requiredOption("--to <pool>", "the new primary pool (must have a pool/ definition)")
    .option("--fallbacks <pools>", "comma-separated fallbacks instead of the old primary and chain")
    .option("--reason <text>", "why (kept in the audit record; see edgectl history)")
    .option("-y, --yes", "apply without asking for confirmation")
    .option("--canary <percent>", "roll out to PERCENT % of each moved route's viewers first")
    .option("--for <duration>", "with --canary: how long the gates must hold (default 10m)")
    .option("--gate <expr>", "with --canary: errors<=+1pt,p90<=x1.25+50ms (the defaults)")
    .option("--min-samples <n>", "with --canary: requests a side needs to be judged (default 200)")
    .action(async (raw: string, opts: MoveOptions, cmd: Command) => {
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { moveAction } = await import("../actions/move-action.js");
      await moveAction(ctx, raw, opts, cmd, commitRules);
    });
}
