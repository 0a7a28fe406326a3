import { Command } from "commander";
import type { CommandContext } from "../command-context.js";
import { withCommonOptions } from "../command-context.js";
import { ExitCode } from "../exit-codes.js";

/** `edgectl validate FILE`: 0 valid, 1 invalid (each problem printed with its key). */
export function validateCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("validate"))
    .description("validate a desired-state file (YAML or JSON)")
    .argument("<file>", "desired-state file")
    .action(async (file: string) => {
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      const { loadDesiredState } = await import("../load-desired-state.js");
      const state = await loadDesiredState(file);
      ctx.print(
        `${file} is valid: ${Object.keys(state.pools).length} pools, ${Object.keys(state.countries).length} country rules`,
      );
      ctx.exit(ExitCode.ok);
    });
}
