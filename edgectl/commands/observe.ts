import { Command } from "commander";
import type { ObserveOptions } from "../actions/observe-action.js";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

/**
 * `edgectl observe --edge URL [--interval 10] [--min-samples 50] [--ttl 15] [--token-file FILE]
 * [--state FILE] [--listen HOST:PORT] [--allowed-hosts NAMES]`: long-running; logs JSON lines
 * (the shared schema) to stdout. The token comes from `--token-file` or `OBSERVE_TOKEN`. It also
 * judges the running canary and ends it through the apply commit (docs/reference.md §13).
 */
export function observeCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("observe"))
    .description(
      "poll the edge's /__edge/observations, serve what viewers get on /metrics, write observed/CC/POOL under a lease and judge the running canary until SIGTERM",
    )
    .option("--edge <url>", "the edge's URL (default: EDGE_URL)")
    .option("--interval <seconds>", "poll interval", "10")
    .option(
      "--min-samples <n>",
      "requests a (country, pool) needs in the window before observed/CC/POOL is written",
      "50",
    )
    .option("--ttl <seconds>", "lease TTL of the observed/ keys", "15")
    .option(
      "--stale-after <seconds>",
      "how long observed/ outlives a failing edge before its lease is let go (default: 60, or 3 intervals when longer)",
    )
    .option("--token-file <path>", "read the edge's OBSERVE_TOKEN from this file")
    .option(
      "--state <file>",
      "keep the counters and what was counted of each minute here, so a restart neither resets nor double-counts them",
    )
    .option("--listen <host:port>", "serve /metrics and the observer's /status")
    .option(
      "--allowed-hosts <names>",
      "comma-separated host names --listen also answers to; other Host headers get 421",
    )
    .action(async (opts: ObserveOptions, cmd: Command) => {
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { observeAction } = await import("../actions/observe-action.js");
      await observeAction(ctx, opts, cmd);
    });
}
