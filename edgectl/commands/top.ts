import { Command } from "commander";
import type { TopOptions } from "../actions/top-action.js";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

/**
 * `edgectl top [CC…] --edge URL [--window S]`: what viewers get now per country and pool (the
 * edge's `GET /__edge/observations`), the pool's checkers' p90 from etcd beside the viewers'.
 * The token comes from `OBSERVE_TOKEN` and is never printed.
 */
export function topCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("top"))
    .description(
      "show what viewers get per country and pool now: requests/s, errors, time to first byte, starvation, beside the checkers' p90",
    )
    .argument("[cc...]", "only these countries (ISO 3166-1 alpha-2, XX, T1; commas work too)")
    .option("--edge <url>", "the edge's URL (default: EDGE_URL)")
    .option("--window <seconds>", "the window the edge sums, in whole seconds (1–900)", "60")
    .action(async (raw: string[], opts: TopOptions, cmd: Command) => {
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { topAction } = await import("../actions/top-action.js");
      await topAction(ctx, raw, opts, cmd);
    });
}
