import { Command } from "commander";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

/** `history`'s default `--limit`. */
export const DEFAULT_HISTORY_LIMIT = 20;

/**
 * `edgectl history [--limit N]`: the audit records, newest first: epoch, time, who, command,
 * reason and changed keys (`+` added, `~` changed, `-` removed). Exit 0.
 */
export function historyCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("history"))
    .description("list the audit records of intent changes, newest first")
    .option("--limit <n>", `how many records (default ${DEFAULT_HISTORY_LIMIT})`)
    .action(async (opts: { limit?: string }, cmd: Command) => {
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { historyAction } = await import("../actions/history-action.js");
      await historyAction(ctx, { limit: opts.limit ?? String(DEFAULT_HISTORY_LIMIT) }, cmd);
    });
}
