import { Command } from "commander";
import type { HeartbeatOptions } from "../actions/heartbeat-action.js";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

/**
 * `edgectl heartbeat POOL [--checker NAME] [--ttl 15] [--check-url URL] [--interval 5]
 * [--listen HOST:PORT] [--allowed-hosts NAMES]`: long-running; logs JSON lines (the shared
 * schema) to stdout.
 */
export function heartbeatCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("heartbeat"))
    .description(
      "publish health/POOL (or health/POOL/CHECKER) under a lease until SIGTERM (then revoke)",
    )
    .argument("<pool>", "pool name")
    .option(
      "--checker <name>",
      "one of several checkers of the pool: writes health/POOL/NAME under its own lease",
    )
    .option("--ttl <seconds>", "lease TTL in seconds (etcd's minimum is about 2)", "15")
    .option("--interval <seconds>", "check interval; renewals run at least every ttl/3", "5")
    .option(
      "--check-url <url>",
      "HTTP check: unhealthy after 3 failures, healthy after 2 successes; publishes p90_ms (TTFB of the last 20 probes, or the URL's own JSON p90_ms)",
    )
    .option("--check-timeout <seconds>", "timeout of one check (default: min(interval, 2))")
    .option("--listen <host:port>", "serve the heartbeat's Prometheus metrics on GET /metrics")
    .option(
      "--allowed-hosts <names>",
      "comma-separated host names --listen also answers to (e.g. the name Prometheus scrapes); other Host headers get 421",
    )
    .action(async (pool: string, opts: HeartbeatOptions, cmd: Command) => {
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { heartbeatAction } = await import("../actions/heartbeat-action.js");
      await heartbeatAction(ctx, pool, opts, cmd);
    });
}
