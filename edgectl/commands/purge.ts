import { Command } from "commander";
import type { PurgeOptions } from "../actions/purge-action.js";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

/**
 * `edgectl purge URL… [--edge URL] [--token-file FILE]`: removes the URLs' cached copies
 * through the edge's `POST /__edge/purge` (bearer `PURGE_TOKEN`). The Cache API is per
 * location: only the location that answers drops its copies (docs/caching.md).
 */
export function purgeCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("purge"))
    .description(
      "remove cached copies of public URLs at the edge location that answers (the cache is per location)",
    )
    .argument("<url...>", "public URLs as viewers request them")
    .option(
      "--edge <url>",
      "send the purge here (default: each URL's own scheme and host; EDGE_URL)",
    )
    .option("--token-file <path>", "read the edge's PURGE_TOKEN from this file")
    .option("--timeout <seconds>", "how long the edge may take to answer", "10")
    .action(async (raw: string[], opts: PurgeOptions) => {
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { purgeAction } = await import("../actions/purge-action.js");
      await purgeAction(ctx, raw, opts);
    });
}
