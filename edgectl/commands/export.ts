import { Command } from "commander";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

/** `edgectl export`: the current intent as a desired-state file (apply of it is a no-op). */
export function exportCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("export"))
    .description("print the current intent as a desired-state YAML file")
    .action(async (_opts: unknown, cmd: Command) => {
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { exportAction } = await import("../actions/export-action.js");
      await exportAction(ctx, _opts, cmd);
    });
}
