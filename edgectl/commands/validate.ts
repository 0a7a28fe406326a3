import { Command } from "commander";
import type { CommandContext } from "../command-context.js";
import { withCommonOptions } from "../command-context.js";
import { ExitCode } from "../exit-codes.js";
import { loadDesiredState } from "../load-desired-state.js";

/** `edgectl validate FILE`: 0 valid, 1 invalid (each problem printed with its key). */
export function validateCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("validate"))
    .description("validate a desired-state file (YAML or JSON)")
    .argument("<file>", "desired-state file")
    .action(async (file: string) => {
      const state = await loadDesiredState(file);
      ctx.print(
        `${file} is valid: ${Object.keys(state.pools).length} pools, ${Object.keys(state.countries).length} country rules`,
      );
      ctx.exit(ExitCode.ok);
    });
}
