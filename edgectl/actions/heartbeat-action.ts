import type { Command } from "commander";
import { EtcdMembers } from "../../adapters/etcd-members.js";
import { parseAllowedHosts } from "../../adapters/host-allow-list.js";
import { startIdleHeapTrim } from "../../adapters/idle-heap-trim.js";
import { createLogger } from "../../adapters/logger.js";
import { serviceNotifier } from "../../adapters/systemd-notify.js";
import { isCheckerName, isPoolName, routingKeys } from "../../core/index.js";
import { heartbeatLog } from "../../heartbeat/heartbeat-log.js";
import { runHeartbeat } from "../../heartbeat/heartbeat-loop.js";
import { HeartbeatMetrics } from "../../heartbeat/heartbeat-metrics.js";
import { httpProbe } from "../../heartbeat/http-probe.js";
import { type MetricsListener, startMetricsListener } from "../../heartbeat/metrics-listener.js";
import { CliError } from "../cli/cli-error.js";
import { ExitCode } from "../cli/exit-codes.js";
import { parseListenAddress } from "../cli/listen-address.js";
import type { CommandContext } from "../output/command-context.js";
import { HeartbeatEventShape } from "../output/shapes/heartbeat-shape.js";
import { terminalJsonText } from "../output/terminal-text.js";

/** `heartbeat`'s options as commander parses them. */
export interface HeartbeatOptions {
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

/** `edgectl heartbeat`'s action (`edgectl/commands/heartbeat.ts` defines its arguments and options). */
export async function heartbeatAction(
  ctx: CommandContext,
  pool: string,
  opts: HeartbeatOptions,
  cmd: Command,
): Promise<void> {
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
  // A heartbeat's heap grows by a page at a time: a smaller step than the pusher's bursts.
  const trim = startIdleHeapTrim(logger, { minGrowthBytes: HEARTBEAT_TRIM_GROWTH_BYTES });
  const members = EtcdMembers.open(settings);
  const signal = ctx.io.signal ?? new AbortController().signal;
  // Type=notify units (deploy/edge-heartbeat@.service): ready as the loop starts; WatchdogSec
  // restarts a heartbeat whose event loop stops, well within its lease's TTL.
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
}
