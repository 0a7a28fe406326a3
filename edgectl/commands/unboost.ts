import { Command } from "commander";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

/** `edgectl unboost CC`: revokes the override's lease (or deletes a lease-less override). */
export function unboostCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("unboost"))
    .description("end a boost now: revoke the lease of override/CC")
    .argument("<cc>", "country code or _default")
    .action(async (raw: string, _opts: unknown, cmd: Command) => {
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { unboostAction } = await import("../actions/unboost-action.js");
      await unboostAction(ctx, raw, _opts, cmd);
    });
}
