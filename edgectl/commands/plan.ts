import { Command } from "commander";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

/**
 * `edgectl plan FILE [--canary PERCENT [--for D] [--gate EXPR] [--min-samples N]]`: the diff
 * against etcd and its edge effect under current health; with `--canary`, both sides of each
 * changed route (docs/reference.md §13).
 */
export function planCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("plan"))
    .description("validate a file and show what apply would change, and where traffic would move")
    .argument("<file>", "desired-state file")
    .option("--canary <percent>", "show both sides of a canary of PERCENT % (as apply --canary)")
    .option("--for <duration>", "with --canary: how long the gates must hold (default 10m)")
    .option("--gate <expr>", "with --canary: errors<=+1pt,p90<=x1.25+50ms (the defaults)")
    .option("--min-samples <n>", "with --canary: requests a side needs to be judged (default 200)")
    .action(async (file: string, _opts: Record<string, string | undefined>, cmd: Command) => {
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { planAction } = await import("../actions/plan-action.js");
      await planAction(ctx, file, _opts, cmd);
    });
}
