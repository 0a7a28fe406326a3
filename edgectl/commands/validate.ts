import { Command } from "commander";
import type { CommandContext } from "../output/command-context.js";
import { withCommonOptions } from "../output/command-context.js";

/** `edgectl validate FILE`: 0 valid, 1 invalid (each problem printed with its key). */
export function validateCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("validate"))
    .description("validate a desired-state file (YAML or JSON)")
    .argument("<file>", "desired-state file")
    .action(async (file: string, _opts: unknown, cmd: Command) => {
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { validateAction } = await import("../actions/validate-action.js");
      await validateAction(ctx, file, _opts, cmd);
    });
}
