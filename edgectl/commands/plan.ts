import { Command } from "commander";
import { type CommandContext, withCommonOptions } from "../cli/command-context.js";

/** `edgectl plan FILE`: the diff against etcd and its edge effect under current health. */
export function planCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("plan"))
    .description("validate a file and show what apply would change, and where traffic would move")
    .argument("<file>", "desired-state file")
    .action(async (file: string, _opts: unknown, cmd: Command) => {
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { planAction } = await import("../actions/plan-action.js");
      await planAction(ctx, file, _opts, cmd);
    });
}
