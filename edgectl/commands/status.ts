import { Command } from "commander";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

/** `edgectl status [--pusher URL]`: is the edge on the current config? 0 in sync, 1 behind. */
export function statusCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("status"))
    .description(
      "compare etcd with the pusher's /status and KV meta: is the edge on the current config?",
    )
    .option("--pusher <url>", "the pusher's HTTP address (default: from PUSHER_LISTEN)")
    .option("--no-pusher", "do not ask the pusher (judge by KV alone)")
    .action(async (opts: { pusher?: string | boolean }, cmd: Command) => {
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { statusAction } = await import("../actions/status-action.js");
      await statusAction(ctx, opts, cmd);
    });
}
