import { Command } from "commander";
import { CliError } from "../cli/cli-error.js";
import { type CommandContext, withCommonOptions } from "../cli/command-context.js";
import { ExitCode } from "../cli/exit-codes.js";
import type { HeartbeatMetrics } from "../heartbeat/heartbeat-metrics.js";
import type { MetricsListener } from "../heartbeat/metrics-listener.js";
import { terminalJsonText } from "../output/terminal-text.js";

interface HeartbeatOptions {
  readonly ttl: string;
  readonly interval: string;
  readonly checker?: string;
  readonly checkUrl?: string;
  readonly checkTimeout?: string;
  readonly listen?: string;
  readonly allowedHosts?: string;
}

/** RSS growth after which a quiet heartbeat runs its idle heap trim again. */
const HEARTBEAT_TRIM_GROWTH_BYTES = 1024 * 1024;

function seconds(flag: string, raw: string, min: number): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min)
    throw new CliError("usage", `${flag}: "${raw}" must be a number ≥ ${min}`);
  return n;
}

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
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      const { isCheckerName, isPoolName, routingKeys } = await import("../../core/index.js");
      const { EtcdMembers } = await import("../etcd/etcd-members.js");
      const { runHeartbeat } = await import("../heartbeat/heartbeat-loop.js");
      const { httpProbe } = await import("../heartbeat/http-probe.js");
      const { createLogger } = await import("../../adapters/logger.js");
      const { heartbeatLog } = await import("../heartbeat/heartbeat-log.js");
      const { parseListenAddress } = await import("../heartbeat/listen-address.js");
      const { HeartbeatEventShape } = await import("../output/shapes/heartbeat-shape.js");
      if (!isPoolName(pool))
        throw new CliError("invalid-input", `"${pool}" is not a pool name (a DNS label)`);
      const checker = opts.checker;
      if (checker !== undefined && !isCheckerName(checker))
        throw new CliError(
          "invalid-input",
          `--checker: ${JSON.stringify(checker)} is not a checker name (a DNS label: a-z, 0-9 and "-", at most 63)`,
        );
      const ttl = seconds("--ttl", opts.ttl, 1);
      if (!Number.isInteger(ttl))
        throw new CliError("usage", `--ttl: "${opts.ttl}" must be whole seconds`);
      const interval = seconds("--interval", opts.interval, 0.05);
      if (opts.checkUrl !== undefined && !URL.canParse(opts.checkUrl))
        throw new CliError("usage", `--check-url: "${opts.checkUrl}" is not a URL`);
      const timeout = opts.checkTimeout
        ? seconds("--check-timeout", opts.checkTimeout, 0.05)
        : Math.min(interval, 2);
      const listen = opts.listen ? parseListenAddress("--listen", opts.listen) : null;
      const { parseAllowedHosts } = await import("../../adapters/host-allow-list.js");
      let allowedHosts: string[];
      try {
        allowedHosts = parseAllowedHosts("--allowed-hosts", opts.allowedHosts);
      } catch (e) {
        throw new CliError("usage", e instanceof Error ? e.message : String(e));
      }
      const settings = ctx.settings(cmd);
      const logger = createLogger({
        service: "edge-heartbeat",
        level: ctx.io.env.LOG_LEVEL || "info",
        destination: { write: (line: string) => ctx.io.stdout.write(terminalJsonText(line)) },
      });
      const writeLog = heartbeatLog(logger);
      let metrics: HeartbeatMetrics | undefined;
      let listener: MetricsListener | undefined;
      if (listen) {
        const { HeartbeatMetrics } = await import("../heartbeat/heartbeat-metrics.js");
        const { startMetricsListener } = await import("../heartbeat/metrics-listener.js");
        metrics = new HeartbeatMetrics(pool);
        try {
          listener = await startMetricsListener({
            ...listen,
            registry: metrics.registry,
            allowedHosts,
          });
        } catch (e) {
          throw new CliError(
            "usage",
            `--listen: cannot listen on ${opts.listen}: ${e instanceof Error ? e.message : String(e)}`,
          );
        }
        logger.info({ pool, listen: `${listen.host}:${listener.port}` }, "serving /metrics");
      }
      const { startIdleHeapTrim } = await import("../../adapters/idle-heap-trim.js");
      // A heartbeat's heap grows by a page at a time: a smaller step than the pusher's bursts.
      const trim = startIdleHeapTrim(logger, { minGrowthBytes: HEARTBEAT_TRIM_GROWTH_BYTES });
      const members = EtcdMembers.open(settings);
      const signal = ctx.io.signal ?? new AbortController().signal;
      // Type=notify units (deploy/edge-heartbeat@.service): ready as the loop starts; WatchdogSec
      // restarts a heartbeat whose event loop stops, well within its lease's TTL.
      const { serviceNotifier } = await import("../../adapters/systemd-notify.js");
      const notifier = serviceNotifier(ctx.io.env, { pid: process.pid });
      signal.addEventListener("abort", () => notifier.stopping(), { once: true });
      notifier.ready(`heartbeat for ${pool}`);
      try {
        await runHeartbeat({
          members,
          key: routingKeys(settings.prefix).health(pool, checker),
          pool,
          ...(checker !== undefined ? { checker } : {}),
          ttlSeconds: ttl,
          intervalMs: interval * 1000,
          ...(opts.checkUrl ? { probe: httpProbe(opts.checkUrl, timeout * 1000) } : {}),
          // Text mode: log lines (shared schema) on stdout. JSON mode: the documented event
          // lines on stdout, and the log lines on stderr (ctx.io.stdout is stderr there).
          log: (e) => {
            writeLog(e);
            if (ctx.mode === "json")
              ctx.emitLine(
                { time: new Date().toISOString(), ...e },
                { schema: HeartbeatEventShape, text: () => [] },
              );
          },
          ...(metrics ? { observer: metrics } : {}),
          signal,
        });
      } finally {
        trim?.stop();
        members.close();
        await listener?.close();
      }
      ctx.exit(ExitCode.ok);
    });
}
