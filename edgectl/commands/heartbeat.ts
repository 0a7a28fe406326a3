import { Command } from "commander";
import { CliError } from "../cli-error.js";
import { type CommandContext, withCommonOptions } from "../command-context.js";
import { ExitCode } from "../exit-codes.js";

interface HeartbeatOptions {
  readonly ttl: string;
  readonly interval: string;
  readonly checkUrl?: string;
  readonly checkTimeout?: string;
}

function seconds(flag: string, raw: string, min: number): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min)
    throw new CliError("usage", `${flag}: "${raw}" must be a number ≥ ${min}`);
  return n;
}

/** `edgectl heartbeat POOL [--ttl 15] [--check-url URL] [--interval 5]`: long-running. */
export function heartbeatCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("heartbeat"))
    .description("publish health/POOL under a lease until SIGTERM (then revoke: the pool drains)")
    .argument("<pool>", "pool name")
    .option("--ttl <seconds>", "lease TTL in seconds (etcd's minimum is about 2)", "15")
    .option("--interval <seconds>", "check interval; renewals run at least every ttl/3", "5")
    .option(
      "--check-url <url>",
      "HTTP check: unhealthy after 3 failures, healthy after 2 successes",
    )
    .option("--check-timeout <seconds>", "timeout of one check (default: min(interval, 2))")
    .action(async (pool: string, opts: HeartbeatOptions, cmd: Command) => {
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      const { isPoolName, routingKeys } = await import("../../core/index.js");
      const { EtcdMembers } = await import("../etcd-members.js");
      const { runHeartbeat } = await import("../heartbeat-loop.js");
      const { httpProbe } = await import("../http-probe.js");
      const { HeartbeatEventShape } = await import("../output/shapes/heartbeat-shape.js");
      if (!isPoolName(pool))
        throw new CliError("invalid-input", `"${pool}" is not a pool name (a DNS label)`);
      const ttl = seconds("--ttl", opts.ttl, 1);
      if (!Number.isInteger(ttl))
        throw new CliError("usage", `--ttl: "${opts.ttl}" must be whole seconds`);
      const interval = seconds("--interval", opts.interval, 0.05);
      if (opts.checkUrl !== undefined && !URL.canParse(opts.checkUrl))
        throw new CliError("usage", `--check-url: "${opts.checkUrl}" is not a URL`);
      const timeout = opts.checkTimeout
        ? seconds("--check-timeout", opts.checkTimeout, 0.05)
        : Math.min(interval, 2);
      const settings = ctx.settings(cmd);
      const members = EtcdMembers.open(settings);
      const signal = ctx.io.signal ?? new AbortController().signal;
      try {
        await runHeartbeat({
          members,
          key: routingKeys(settings.prefix).health(pool),
          pool,
          ttlSeconds: ttl,
          intervalMs: interval * 1000,
          ...(opts.checkUrl ? { probe: httpProbe(opts.checkUrl, timeout * 1000) } : {}),
          log: (e) =>
            ctx.emitLine(
              { time: new Date().toISOString(), ...e },
              { schema: HeartbeatEventShape, text: (x) => [JSON.stringify(x)] },
            ),
          signal,
        });
      } finally {
        members.close();
      }
      ctx.exit(ExitCode.ok);
    });
}
